/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The proxy engine's internal interface: what its files offer one another, and the connection
 * they share. No other module includes it; proxy.h is the engine's public surface.
 *
 *   proxy.c       the loop: listeners, accept, timers, dispatch on a connection's state; its
 *                 lifetime (watch, refuse, close) and its "net" and "limit" events
 *   front.c       what a client sends first: the HTTP proxy's head, SOCKS5, a captured
 *                 connection's destination and first bytes (sniff.h)
 *   dial.c        the decision (rules, methods, limits), the address (literal, pinned, or looked
 *                 up by a thread and checked by the SSRF guard), the connect, the answer to the
 *                 client, and a tunnel's first bytes held until they agree with its host
 *   relay.c       the bytes both ways (copied, or spliced once bulk), the byte budgets, and
 *                 plain HTTP's one request read to its end
 *   http_check.c  a request against the [http] rules; the one HTTP refusal path
 *   cred_check.c  credentials put in on the way up, real values scrubbed on the way down
 *   intercept.c   TLS to both sides of a connection the [http] rules cover; exchange.c, the HTTP
 *                 requests and responses in between (they share intercept_conn.h); or, when
 *                 both sides chose h2, h2_session.c and h2_stream.c (h2_conn.h), each stream
 *                 through exchange.c's checks (h2_fields.h, h2_wire.h: pure)
 *   dns_stub.c    the transparent capture's DNS stub
 *   ask.c         in a session, a connection the rules refused held while its harness is asked
 * The protocols are read by pure parsers with headers of their own: http_proxy.h, socks5.h,
 * sniff.h, http_stream.h, dns.h; per-host limits are hostlimits.h, a session's attribution
 * sock_owner.h, the clients that refused the run's certificate ca_refusals.h. docs/architecture.md
 * walks one connection through all of it. */
#ifndef AGENTBOX_PROXY_CONN_H
#define AGENTBOX_PROXY_CONN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "audit.h"
#include "ca_refusals.h"
#include "dns.h"
#include "egress.h"
#include "hostlimits.h"
#include "http_stream.h"
#include "sniff.h"

/* One read's worth of relayed bytes, in a buffer the whole loop shares (proxy.c makes it,
 * relay.c and intercept.c read into it): what the other side takes at once is never copied into
 * the connection, so an idle or keeping-up tunnel holds no buffer of its own (1,000 open
 * tunnels cost the supervisor a few MiB). Flows that are not spliced move in steps this large. */
#define RELAY_CHUNK (256 * 1024)

enum side { CLIENT, UPSTREAM };

/* How the connection came, as its events name it (conn_proto_name). The HTTP proxy's
 * connections are PROTO_HTTP until their request line says CONNECT. */
enum conn_proto {
	PROTO_HTTP,    /* "http": the HTTP proxy, a request in absolute form */
	PROTO_CONNECT, /* "connect": the HTTP proxy, a CONNECT tunnel */
	PROTO_SOCKS,   /* "socks": the SOCKS5 listener */
	PROTO_CAPTURE  /* "capture": made to anywhere, redirected by the transparent capture */
};

/* Where a connection is in its life; proxy.c's on_conn_event dispatches on it.
 *
 *   ST_HTTP_HEAD ───────────────────────────┐
 *   ST_SOCKS_GREETING ─→ ST_SOCKS_REQUEST ──┼─ dial_decide ─→ [ST_RESOLVE] ─→ ST_CONNECT
 *   ST_SNIFF ───────────────────────────────┘      ─→ dial_on_connected ─→ ST_RELAY ─→ closed
 *
 * (ST_RESOLVE only for a host name without a resolve entry.) In a session with an ask hook,
 * dial_decide may hold a connection the rules refused in ST_ASK until its harness answers
 * (ask.c); then dial_go goes on from the decision, or it is refused. Any state can end in a
 * refusal: its answer is queued with close_after_flush, which then overrides the state until the
 * answer is sent and the connection closes. ST_RELAY moves bytes in one of three ways:
 *   late_sniff  the client's first bytes are held in head until they agree with the host
 *               (dial_read_late); then one of the other two
 *   tls         intercepted: TLS ended on both sides (intercept_pump)
 *   otherwise   relayed as they come (relay_pump); plain HTTP's one request is read through
 *               request to its end, and nothing after it goes up */
enum conn_state {
	ST_HTTP_HEAD,	   /* the HTTP proxy: reading the request head */
	ST_SOCKS_GREETING, /* SOCKS5: reading the greeting (methods) */
	ST_SOCKS_REQUEST,  /* SOCKS5: reading the request (host and port) */
	ST_SNIFF,	   /* captured: waiting for the first bytes, which may name the host */
	ST_ASK,		   /* refused by the rules but grantable: held for the harness's answer */
	ST_RESOLVE,	   /* allowed: a resolver thread holds the connection */
	ST_CONNECT,	   /* allowed, with its address: the upstream connect is under way */
	ST_RELAY	   /* connected: bytes move (see above) */
};

struct proxy;
struct conn;
struct http_stream;
struct intercept;
struct ssl_ctx_st;
struct creds;
struct creds_stream;
struct proxy_question;

/* What epoll hands back: which connection, which side (or a proxy-level fd). */
struct endpoint {
	struct conn *c;
	enum side side;
	int fd;
	uint32_t events; /* what it is registered for; 0: not in the epoll set at all */
};

/* Bytes on their way from one side to the other that it has not taken yet: copied ones malloc'd
 * to fit and freed once sent, spliced ones in the flow's pipe; never both at once (a pipe is
 * filled only when the buffer is empty, so the bytes keep their order). */
struct flow {
	char *buf;
	size_t len, off;
	int pipe[2];  /* bulk flows: bytes spliced from the source wait here; else -1 */
	size_t piped; /* bytes in the pipe */
	bool no_pipe; /* copies to the end (no pipe was to be had) */
	bool eof;     /* the source has no more */
	bool shut;    /* the sink was told (shutdown SHUT_WR) */
};

/* One client's connection, from its accept to its close (conn_close) and its burial at the end
 * of that dispatch round (conn_bury). */
struct conn {
	/* its place in the loop */
	struct proxy *px;
	struct conn *prev, *next;
	struct endpoint cl, up;
	enum conn_state st;
	enum conn_proto proto;
	long exec; /* in a session, the exec that made it (audit_kv_exec); else -2 */
	struct timespec t0;
	uint64_t deadline_ms; /* head and connect timeouts; 0 once relaying */
	/* what the client asked for */
	char *head; /* EGRESS_MAX_HEAD bytes until relaying starts, then NULL */
	size_t head_len;
	char method[16];
	char url[2048];
	char host[256]; /* as the client wrote it */
	unsigned port;
	char name[256]; /* as the rules see it: the key of the per-host limits */
	/* what its first bytes said (a captured connection's, a tunnel's) */
	char sni[256];	   /* the name they gave: a TLS server name, an HTTP Host */
	bool sniff_http;   /* captured: plain HTTP, so a refusal can be a 403 */
	size_t sniff_head; /* captured plain HTTP: its request head's length */
	bool mapped;	   /* captured: host is the name the DNS stub gave its address to */
	bool unmapped;	   /* captured: an address of the stub's range that no name was given */
	/* the decision and the address */
	const char *rule;
	unsigned ask_id; /* ST_ASK: the question it waits for the answer to; 0 once settled */
	/* under [http] rules (http_check_request), for the request being decided: */
	const char *http_rule; /* the rule that allowed it (NULL: none decided) */
	char *target;	       /* its canonical target, as it goes up */
	const char *pin;       /* the resolve entry that chose the address, if any */
	char addr[INET6_ADDRSTRLEN + 8];
	struct sockaddr_storage sa;
	socklen_t salen;
	bool counted;		     /* holds one of the run's max-connections */
	struct host_entry *per_host; /* holds one of its host's connections, when limited */
	/* relaying (ST_RELAY) */
	struct flow to_up, to_client;
	uint64_t bytes_out, bytes_in;
	bool late_sniff; /* the client's first bytes are held (in head) until they show they go
			    where the connection was allowed to */
	bool late_eof;	 /* the client ended while they were held */
	struct intercept *tls; /* HTTPS interception (intercept.c), else NULL */
	/* plain HTTP: the client's one request read to its end (relay_http_start) */
	struct http_stream *request;	/* NULL before the request's body is done */
	bool request_done;		/* its end was reached: any further request is refused */
	const char *refused;		/* why the rest of the client's bytes were refused, audited
					   at close */
	struct creds_stream *cred_body; /* with credentials: its body's leak scans (2) */
	/* its end */
	bool close_after_flush; /* a refusal is being sent: then closed, whatever st says */
	bool lingering;		/* sent and half-closed: the client's last bytes are dropped
				   (conn_linger) */
	uint64_t lingered;	/* bytes dropped so far */
	bool lookup_pending;	/* a resolver thread still holds this connection */
	bool dead;		/* closed; freed when the lookup returns */
	bool audited;
	struct conn *next_dead; /* closed, freed at the end of the dispatch round */
};

struct proxy {
	int epfd, tfd;
	int listeners[EGRESS_SOCKETS]; /* egress.h's order; -1 where there is none */
	struct endpoint lep[EGRESS_SOCKETS], timer_ep, resolved_ep;
	bool fast_timer;      /* ticking every SNIFF_MS while a capture sniffs */
	struct dns_map names; /* the stub's names and the reserved addresses they were given */
	uint64_t dns_queries;
	int resolved[2];		  /* resolver threads write finished lookups here */
	const struct egress_rules *rules; /* the policy's, parsed once (policy.h) */
	struct audit *a;
	struct conn *conns;
	size_t n_conns;
	size_t n_lingering; /* of n_conns: only read, to be closed (evict_lingering) */
	size_t lookups;	    /* resolver threads still running */
	long (*attrib)(void *ctx, int pid); /* a session's: proxy_attribute */
	void *attrib_ctx;
	pid_t attrib_pid1;
	unsigned attrib_left; /* lookups this dispatch round may still make */
	struct conn *graveyard;
	char *chunk;		 /* RELAY_CHUNK bytes: see there */
	size_t pipes, max_pipes; /* open, and at most: see RELAY_MAX_PIPES (proxy.c) */
	/* [network] limits for the whole run */
	const struct policy *p;
	struct tls_ca *ca; /* [http] rules: the run's interception CA (not owned), else NULL */
	const struct creds *creds; /* [credential] sections (not owned), else NULL */
	struct ssl_ctx_st *tls_server, *tls_client; /* interception's, made at its first use */
	size_t upstreams;			    /* allowed connections open now */
	double tokens;				    /* rate: a token bucket of new connections */
	uint64_t refilled_ms;
	uint64_t bytes_out, bytes_in;
	bool bytes_out_hit, bytes_in_hit;
	bool cap_hit;		 /* PROXY_MAX_CONNECTIONS was reached at least once */
	bool listeners_paused;	 /* out of fds: the listeners wait for a close or a tick */
	struct hostlimits hosts; /* [network] *-per-host; no table without them */
	bool hosts_full_hit;
	struct ca_refusals ca_refusals; /* whose clients refused the run's certificate */
	/* a session's ask hook (ask.c, proxy.h's struct proxy_ask_hook): none (NULL) unless a
	 * harness listens */
	bool (*ask)(void *ctx, const struct proxy_question *q);
	void (*ask_settled)(void *ctx, unsigned id, const char *outcome);
	void *ask_ctx;
	uint64_t ask_timeout_ms;
	unsigned ask_last; /* the last question's number */
	size_t ask_held;   /* connections in ST_ASK waiting for an answer */
	int audit_failed;
	struct ab_err audit_err;
};

/* ---------- proxy.c: the events, a connection's lifetime ---------- */

/* Milliseconds on CLOCK_MONOTONIC: the clock of the deadlines and the rate limits. */
uint64_t proxy_now_ms(void);
/* Milliseconds since t0 (CLOCK_MONOTONIC), for an event's duration_ms. */
uint64_t proxy_ms_since(const struct timespec *t0);
/* An audit write failed: the first failure ends the run after this dispatch round. */
void proxy_audit_note(struct proxy *px, struct ab_err *e);
/* The connection's protocol as its events and messages name it ("http", "connect", ...). */
const char *conn_proto_name(enum conn_proto proto);
/* The connection's "net" event; a failed write stops the run at the end of the round. */
void conn_audit(struct conn *c, const char *decision, const char *reason);
/* A "limit" event; host: the host a per-host limit counts, else NULL. */
void proxy_audit_limit(struct proxy *px, const char *limit, const char *host);
/* What the endpoint waits for in the loop's epoll set; 0 takes it out. */
void proxy_watch(struct proxy *px, struct endpoint *ep, uint32_t events);
void proxy_close_endpoint(struct proxy *px, struct endpoint *ep);
/* Frees the connection once the dispatch round is over. */
void conn_bury(struct conn *c);
/* Gives back the run's and its host's connection slots it holds (once). */
void conn_release_limits(struct conn *c);
/* The connection's "net" event at its end, unless it has one: its refusal, else reason. */
void conn_audit_end(struct conn *c, const char *reason);
/* Closes both sides and audits the connection (unless it was); freed after the round. */
void conn_close(struct conn *c, const char *reason);
/* Queues bytes for the client and, with close_after, ends the connection once they are sent. */
void conn_to_client(struct conn *c, const void *data, size_t n, bool close_after);
/* Tells the client no, as its protocol can (a 403, a SOCKS5 reply), and audits the denial. */
void conn_refuse(struct conn *c, const char *why);
/* An HTTP refusal the client reads as the answer to its request (inside a tunnel too): status
 * 403 or 400, X-Agentbox-Denied: denied (none when NULL), the text body; the connection ends
 * once it is sent. denied is cut at 1,000 bytes; body is at most 1 KiB. */
void conn_http_refusal(struct conn *c, int status, const char *denied, const char *body);
/* What the connection's sides wait for, from its state and what its flows hold. */
void conn_update_interest(struct conn *c);

/* ---------- front.c: what a client sends first ---------- */

/* The client's side is readable while its request (or first bytes) is still coming. */
void front_read_head(struct conn *c);
/* A captured connection's redirected destination into its host and port; false for one made to
 * the capture listener itself. */
bool front_original_destination(struct conn *c, int family);
/* A captured connection decided on its destination and first bytes (s), or on its destination
 * alone (s NULL: none came in time). */
void front_capture_decide(struct conn *c, const struct sniff *s);
/* Whether the name in a client's first bytes is the host the connection was allowed for: NULL
 * when they agree, else why not (in why). */
const char *front_flight_mismatch(struct conn *c, const struct sniff *s, char *why, size_t size);

/* ---------- dial.c: decide, resolve, connect ---------- */

/* AF_INET or AF_INET6 with its bytes in raw when host is an address literal, else 0. */
int dial_host_literal(const char *host, uint8_t raw[16]);
/* The request's host and port are known: refused, held for the harness's answer (ask.c), or
 * on its way to the upstream. */
void dial_decide(struct conn *c);
/* The connection rules allowed it (or the harness did): the rest of the decision (methods,
 * [http] rules, limits), then the address and the connect; or refused. */
void dial_go(struct conn *c);
/* A tunnel's held first bytes came (or the client ended). */
void dial_read_late(struct conn *c);
/* The upstream connect finished: answer the client and start relaying. */
void dial_on_connected(struct conn *c);
/* Finished lookups from the resolver threads. */
void dial_on_lookups(struct proxy *px);
/* [network] methods: whether a request's method may go. */
bool dial_method_allowed(const struct policy *p, const char *method);

/* ---------- relay.c: the bytes, both ways ---------- */

/* Bytes the flow holds for its sink: buffered, or in its pipe. */
size_t flow_held(const struct flow *f);
/* Appends n bytes to what the flow holds; false when out of memory. */
bool flow_put(struct flow *f, const void *data, size_t n);
void flow_close_pipe(struct proxy *px, struct flow *f);
/* Counts n relayed bytes against the run's and the host's budgets; past one, the connection
 * is closed (false). */
bool relay_over_budget(struct conn *c, bool outbound, uint64_t n);
/* Plain HTTP: buf[0, n), the client's bytes so far, begins with a request head the rules allowed,
 * and head[0, head_n) is that head as it goes upstream. The head goes up; after it only that
 * request's body (read to its exact end, Content-Length or chunked): a second request on the
 * connection, or a body that breaks its framing, is refused and ends the connection. false when
 * the connection was closed. */
bool relay_http_start(struct conn *c, const char *head, size_t head_n, const char *buf, size_t n);
/* Sends what the flow holds; false when the connection was closed. */
bool relay_flush(struct conn *c, struct endpoint *dst, struct flow *f);
/* The connection's last answer is sent: audited now, then closed once the client has stopped
 * sending (see relay.c). */
void conn_linger(struct conn *c, const char *reason);
/* A lingering connection's client is readable: what it sent is dropped. */
void conn_linger_read(struct conn *c);
/* One read from src into the loop's shared chunk, within the byte budgets: its length, 0 at its
 * end (f, the flow src feeds, is marked ended, as on an error), -1 when nothing is there yet. */
ssize_t relay_read_chunk(struct conn *c, struct endpoint *src, struct flow *f);
/* Moves what it can along one flow; false when the connection was closed. */
bool relay_pump(struct conn *c, struct endpoint *src, struct endpoint *dst, struct flow *f,
		uint64_t *counter);

/* ---------- http_check.c: the [http] rules on a request ---------- */

/* The [http] rules on a plain-HTTP request whose head is head[0, head_len) (origin-form, or the
 * HTTP proxy's absolute form), once c->name and c->method are known: true when it may go up,
 * with c->target its canonical target when rules cover the host; false when it was refused (a
 * 403 naming the rule, or a 400 for a target that cannot be compared; audited; closing). */
bool http_check_request(struct conn *c, const char *head, size_t head_len);
/* A connection whose bytes the proxy cannot read (TLS it does not intercept, another protocol:
 * what) to a host the [http] rules cover would carry requests no rule sees: refused. true when
 * no rule covers the host. */
bool http_check_opaque(struct conn *c, const char *what);
/* Refuses the request being read: an HTTP answer (status 403 or 400, X-Agentbox-Denied: denied
 * when not NULL) ending the connection, and its audit (the connection's "net" deny, or on an
 * intercepted connection the request's "http" event). */
void http_check_refuse(struct conn *c, int status, const char *denied, const char *why);

/* ---------- intercept.c, exchange.c: HTTPS interception ---------- */

/* Whether TLS on this connection is intercepted: the run has a CA and [http] rules cover its
 * host. */
bool intercept_covers(const struct conn *c);
/* An allowed, connected connection to a covered host whose client's first bytes (its
 * ClientHello, checked against the host) are held in c->head: TLS is terminated on both sides
 * from here on. false when it was refused (audited, closed). */
bool intercept_start(struct conn *c);
/* Moves an intercepted connection's bytes (in place of relay_pump); false when it closed. */
bool intercept_pump(struct conn *c);
/* Whether an intercepted connection's client (client) or upstream side is read now. */
bool intercept_reads(const struct conn *c, bool client);
/* An HTTP refusal as the answer to the request, under TLS: over HTTP/1.1 conn_http_refusal's
 * bytes (data), after which the connection ends; over h2 the stream's own answer (status,
 * denied, body), and the connection goes on. */
void intercept_refusal(struct conn *c, int status, const char *denied, const char *body,
		       const char *data, size_t n);
/* Why an intercepted connection ended, for its event: "closed", or INTERCEPT_SILENT_CLIENT
 * when the client finished the handshake and hung up without sending anything (then noted in
 * px->ca_refusals, for the end of the run). */
#define INTERCEPT_SILENT_CLIENT                                                                    \
	"the client hung up after the TLS handshake without a request: it likely refused the "     \
	"run's certificate (a pinned key, or a CA list of its own); fix: point it at "             \
	"/run/agentbox/ca.crt, or leave the host out of the [http] rules and credentials"
const char *intercept_end_reason(struct conn *c);
/* The request being read was refused (http_check_refuse): its "http" event. */
void exchange_refused(struct conn *c, const char *why);
void intercept_free(struct conn *c);
/* Frees the TLS contexts (at the engine's end). */
void intercept_stop(struct proxy *px);

/* ---------- cred_check.c: credentials ---------- */

/* An intercepted request the rules allowed, its head as it goes up in *head (malloc'd): the
 * bound credentials put in (*head replaced), or refused for a placeholder where it may not go
 * (403, audited; false). */
bool cred_check_request(struct conn *c, char **head, size_t *n);
/* A piece of that request's body (its payload and its chunked framing are scanned apart, each
 * across pieces): false when it carried a placeholder (refused). */
bool cred_check_body(struct conn *c, const char *buf, size_t n, enum http_part part);
/* A plain-HTTP request head: false when it carried a placeholder (refused). */
bool cred_check_plain(struct conn *c, const char *head, size_t n);
/* A piece of a plain-HTTP request's body: false when it carried a placeholder (the connection
 * is closed: the head went up already). */
bool cred_check_plain_body(struct conn *c, const char *buf, size_t n, enum http_part part);
/* What the connection's checks hold. */
void cred_conn_free(struct conn *c);
/* The requested host (and a captured connection's server name): false when it held a
 * placeholder (refused). */
bool cred_check_name(struct conn *c);
/* A DNS query's name: false when it held a placeholder (audited; the caller refuses). */
bool cred_check_dns(struct proxy *px, const char *name);
/* Whether the responses of this connection's host are scrubbed of real values as they come:
 * a credential is bound to it (no other host is ever sent one). */
bool cred_scrubs(const struct conn *c);
/* A head from the upstream (where: "the response head", "an interim response head", "the
 * trailers") with every form of a real value overwritten (a credential event for each one
 * found): malloc'd, or NULL when it holds none. */
char *cred_redact_response(struct conn *c, const char *head, size_t n, size_t *out_n,
			   const char *where);
/* A piece of a response body, scrubbed in place without a change of length: 0 with *out,
 * *out_n what may go to the client now (in buf, or held by the exchange until the next call);
 * final: the body ended. -1: out of memory (the connection was closed). */
int cred_scrub_body(struct conn *c, char *buf, size_t n, bool final, char **out, size_t *out_n);

/* ---------- ask.c: a session's harness asked ---------- */

/* A connection the rules refused, without a deny rule, to a host a grantable rule covers (grant,
 * its text): held in ST_ASK while the harness is asked (a question of its own, or that of a
 * connection held for the same host and port) and NULL; else why it was not held ("" when
 * nobody is asked), and the caller refuses it. */
const char *ask_hold(struct conn *c, const char *grant);
/* The timer: questions past their time are settled, their connections refused. */
void ask_tick(struct proxy *px, uint64_t now);
/* A connection held is closed: it waits no more. */
void ask_release(struct conn *c);
/* Whether the DNS stub gives name an address though the rules do not allow it: a grantable rule
 * covers it (its text in *rule) and a harness is asked about its connections. */
bool ask_name(struct proxy *px, const char *name, const char **rule);

/* ---------- dns_stub.c: the capture's DNS stub ---------- */

/* Answers the queries waiting on one of the stub's sockets (a bounded number per round). */
void dns_stub_read(struct proxy *px, int fd);

#endif

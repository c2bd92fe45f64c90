/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* TLS interception's own header, internal to intercept.c (the TLS on both sides of a connection)
 * and exchange.c (the HTTP requests and responses in between); included by no other module. The
 * rest of the proxy engine reaches interception through proxy_conn.h. */
#ifndef AGENTBOX_INTERCEPT_CONN_H
#define AGENTBOX_INTERCEPT_CONN_H

#include <openssl/ssl.h>

#include "credential.h"
#include "http_stream.h"
#include "proxy_conn.h"

/* Plaintext bytes waiting for their side's TLS (a handshake still going) */
struct plain {
	char *buf;
	size_t len;
};

/* One request and its response, as its event tells them, with the scans its bodies go
 * through. An HTTP/1.1 connection has one at a time; an h2 one has one per stream. */
struct xreq {
	char method[16];
	char *path;	  /* the request's canonical target, for its event */
	const char *rule; /* the [http] rule that decided it */
	int status;
	uint64_t req_bytes, resp_bytes;
	struct timespec t0;
	struct creds_stream body[2]; /* the request body's leak scans (cred_check.c) */
	struct creds_scrub scrub;    /* the response body's scrub of real values (ditto) */
	uint32_t stream;	     /* h2: the client's stream id; 0 for HTTP/1.1 */
};

struct h2;

struct intercept {
	SSL *cl, *up;		  /* the TLS the client speaks to us, and ours to the real host */
	bool cl_ready, up_ready;  /* their handshakes are done */
	bool cl_eof, up_eof;	  /* a socket's end was told to the exchange */
	bool offer_read;	  /* the client's ALPN offer was read (intercept.c) */
	bool offer_h2, offer_h11; /* ... it offered h2, http/1.1 */
	struct plain to_up, to_cl;
	char why[320]; /* what a TLS callback refused, for the audit */
	/* the HTTP exchanges (exchange.c), or h2's streams (h2_session.c) */
	struct http_stream *req, *resp;
	struct xreq h1;	       /* HTTP/1.1's request */
	struct xreq *cur;      /* the request the checks and events are about now */
	struct h2 *h2;	       /* the client and the upstream speak h2 */
	struct plain trailers; /* a response's trailer section, scrubbed whole at its end */
	bool scrubs;	       /* the host is a credential's: its responses are scrubbed */
	bool rechunk;	       /* ... a chunked one is sent in chunks of our own */
	struct plain held; /* the client's bytes after a complete request, before its response */
	bool in_request;   /* a request is being read or answered */
	bool req_done;	   /* its body has ended */
	bool answered;	   /* its final response has ended */
	bool closing;	   /* the connection ends once what is queued for the client is sent */
	bool client_ended; /* the client closed: no request follows */
	bool client_spoke; /* the client sent application data (any byte, after its handshake) */
	bool interim;	   /* the response being read is a 1xx: the final one follows */
	bool until_close;  /* ... it runs until the upstream closes */
	unsigned requests; /* answered so far */
};

/* ---------- intercept.c ---------- */

/* Appends n bytes; false when out of memory. */
bool plain_put(struct plain *p, const char *data, size_t n);
/* Plaintext for the client (a response, a refusal) or for the upstream (a request): encrypted
 * as soon as that side's handshake is done. false when the connection was closed. */
bool intercept_send(struct conn *c, bool to_client, const char *data, size_t n);
/* The exchange is over: the client gets what is queued (and a TLS close), then the connection
 * ends. */
void intercept_finish(struct conn *c);

/* ---------- exchange.c ---------- */

struct intercept *exchange_new(void);
void exchange_free(struct intercept *x);
void xreq_free(struct xreq *r);
/* A request's head (ev, a HEAD event) and its checks: its Host against the connection's
 * host, [network] methods, the [http] rules, credentials inserted (the head rewritten, a
 * credential's host asked for identity). true with *head (malloc'd, zeroed and freed by the
 * caller: it may hold a real value) and *n, what goes up; false when the request was refused
 * (the refusal sent, its event written) or the connection closed. */
bool exchange_check_request(struct conn *c, const struct http_event *ev, char **head, size_t *n);
/* A response's head (ev, a HEAD event of a response stream): refused (502, the refusal sent)
 * when a credential's host compressed it or sent part of it; else its status noted, and
 * *redacted (malloc'd, or NULL when nothing was redacted) what goes to the client. */
bool exchange_check_response(struct conn *c, const struct http_event *ev, char **redacted,
			     size_t *n);
/* The "http" event of r. */
void exchange_event(struct conn *c, const struct xreq *r, const char *decision, const char *reason);
/* The client's plaintext: cut into requests, each checked before it goes up. false when the
 * connection was closed. */
bool exchange_from_client(struct conn *c, const char *buf, size_t n);
/* Whether the client's plaintext is read now: not while a complete request waits for its
 * response (the next one is held until then). */
bool exchange_accepts_client(const struct conn *c);
/* The upstream's plaintext: cut into responses, each one ending its request's event (a bound
 * host's scrubbed in buf). */
bool exchange_from_upstream(struct conn *c, char *buf, size_t n);
/* The upstream (or the client) will send nothing more: false when the connection was closed. */
bool exchange_upstream_ended(struct conn *c);
bool exchange_client_ended(struct conn *c);

/* ---------- h2_session.c, h2_stream.c ---------- */

/* The client and the upstream chose h2: both sessions, their SETTINGS sent. false when the
 * connection was closed. */
bool h2_start(struct conn *c);
void h2_free(struct h2 *h);
/* Either side's plaintext into its session; false when the connection was closed. */
bool h2_from_client(struct conn *c, const char *buf, size_t n);
bool h2_from_upstream(struct conn *c, const char *buf, size_t n);
/* What the sessions have to send, while each side's socket keeps up. */
bool h2_flush(struct conn *c);
/* A session has more to send and its side's socket has room for it now. */
bool h2_more(const struct conn *c);
bool h2_client_ended(struct conn *c);
bool h2_upstream_ended(struct conn *c);
/* conn_http_refusal on an h2 connection: the current stream is answered (or cut, when its
 * response had begun); the connection goes on. */
void h2_refusal(struct conn *c, int status, const char *denied, const char *body);
/* exchange_refused on an h2 connection: the current stream's event is written. */
void h2_refused(struct conn *c);

#endif

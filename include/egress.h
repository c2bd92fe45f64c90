/* The egress filter: domain/address rules, and (in proxy mode) the proxy that enforces them. */
#ifndef AGENTBOX_EGRESS_H
#define AGENTBOX_EGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "capture.h"
#include "egress_rule.h"
#include "error.h"
#include "policy.h"

/* ---------- decisions (pure) ---------- */

struct egress_rules {
	struct egress_rule *allow, *deny;
	struct egress_pin *pins;
	size_t n_allow, n_deny, n_pins;
	struct strv allow_text, deny_text, pin_text;
};

int egress_rules_build(const struct policy *p, struct egress_rules *out, struct ab_err *e);
void egress_rules_free(struct egress_rules *r);

/* A name (or address literal) and port against the rules: deny first, then allow, no match
 * denies. Returns true when allowed; *rule is the text of the deciding rule, or NULL. */
bool egress_decide(const struct egress_rules *r, const char *host, unsigned port,
		   const char **rule);

/* Whether a name (in egress_host_name's form) is allowed at some port: what the DNS stub asks
 * before it gives the name an address. A deny rule with a port does not deny the name (it may be
 * allowed at another port); an address literal is never a name. */
bool egress_name_allowed(const struct egress_rules *r, const char *name, const char **rule);

/* The pin for a name at a port, or NULL (DNS decides). *text is the pin as written. */
const struct egress_pin *egress_pinned(const struct egress_rules *r, const char *host,
				       unsigned port, const char **text);

/* An address a name resolved to, against the address and CIDR deny rules (a name must not
 * reach what its address is denied by). Returns the deny rule's text, or NULL. */
const char *egress_address_denied(const struct egress_rules *r, int family, const void *addr,
				  unsigned port);

/* The SSRF guard for an address a name resolved to: loopback, link-local, multicast,
 * unspecified, cloud metadata, private and shared ranges (and their IPv4-mapped forms) are
 * refused unless an address or CIDR allow rule covers them. Returns NULL when the address may
 * be dialled, else why not. */
const char *egress_address_refused(const struct egress_rules *r, int family, const void *addr,
				   unsigned port);

/* ---------- protocols (pure) ---------- */

enum parse_result { PARSE_MORE, PARSE_DONE, PARSE_BAD };

#define EGRESS_MAX_HEAD 16384

struct http_request {
	bool is_connect;
	char method[16];
	char host[256];
	unsigned port;
	char url[2048];  /* plain HTTP: the absolute URL, for the audit (redacted there) */
	size_t head_len; /* bytes of the request head, CRLF CRLF included */
	const char *why; /* PARSE_BAD: what is wrong */
};

/* Why a plain HTTP request head is refused for its framing, or NULL: a bare LF, obs-fold,
 * several or non-numeric Content-Length, Content-Length with Transfer-Encoding, or a
 * Transfer-Encoding other than one "chunked" (the ways to smuggle a second request past a
 * proxy that reads the body's length one way and a server another). */
const char *http_framing_refusal(const char *head, size_t head_len);

/* Parses a proxy request head (CONNECT host:port, or METHOD http://host[:port]/path). */
enum parse_result http_parse_request(const char *buf, size_t len, struct http_request *req);

/* The head to send upstream for a plain HTTP request: origin-form target, Host set to the URL's
 * host (the one the rules allowed), Proxy-* and connection headers dropped, "Connection: close"
 * added. malloc'd, NULL when out of memory. */
char *http_upstream_head(const char *buf, const struct http_request *req, size_t *out_len);

/* The same for an origin-form request (a captured client's): its request line kept, hop-by-hop
 * headers dropped, "Connection: close" added, so the server answers this one request and every
 * later one comes on a new connection, where it is checked again. */
char *http_closing_head(const char *buf, size_t head_len, size_t *out_len);

struct socks_request {
	char host[256];
	unsigned port;
	size_t len;      /* bytes consumed */
	int reply;       /* PARSE_BAD: the SOCKS reply code to send */
};

/* Greeting: VER NMETHODS METHODS. *len is set to the bytes consumed on PARSE_DONE; *no_auth
 * to whether method 0 (no authentication) was offered. */
enum parse_result socks_parse_greeting(const unsigned char *buf, size_t len, size_t *used,
				       bool *no_auth);
/* Request: VER CMD RSV ATYP ADDR PORT; CONNECT only. */
enum parse_result socks_parse_request(const unsigned char *buf, size_t len,
				      struct socks_request *req);

/* What the first bytes of a captured connection name: a TLS ClientHello's server name, or a
 * plain HTTP request's Host (without its port) and method. DONE once they tell, or once they
 * cannot (another protocol, a ClientHello split over records, a head past EGRESS_MAX_HEAD). */
struct sniff {
	const char *proto; /* "tls", "http", "other" */
	char name[256];    /* "" when none was sent (or it was unreadable: then odd is true) */
	char method[16];
	size_t head_len; /* plain HTTP: the request head, CRLF CRLF included */
	bool odd;
};
enum parse_result egress_sniff(const unsigned char *buf, size_t len, struct sniff *s);

/* ---------- the sandbox side ---------- */

/* In the supervisor, before the sandbox starts: refuses what this build cannot enforce. */
int egress_prepare(const struct policy *p, struct ab_err *e);

/* In the sandbox's new network namespace (pid 1): loopback up; in proxy mode also the two
 * listeners (HTTP on 127.0.0.1:EGRESS_HTTP_PORT, SOCKS5 on EGRESS_SOCKS_PORT) and, unless
 * [network] capture = off, the transparent capture's sockets (capture.h), all of whose fds go to
 * the supervisor. Unused slots are -1. With capture = auto a kernel that cannot capture leaves
 * the capture slots at -1; with capture = on it is an error. */
#define EGRESS_HTTP_PORT 3128
#define EGRESS_SOCKS_PORT 1080
enum egress_socket {
	EGRESS_HTTP,
	EGRESS_SOCKS,
	EGRESS_CAPTURE, /* the first of CAPTURE_SOCKETS, in capture.h's order */
	EGRESS_SOCKETS = EGRESS_CAPTURE + CAPTURE_SOCKETS
};
int egress_setup_namespace(const struct policy *p, int fds[EGRESS_SOCKETS], struct ab_err *e);

/* The proxy variables real tools read (HTTP_PROXY, ALL_PROXY, npm, pip, yarn, Java, ...). */
int egress_proxy_env(int (*set)(void *ctx, const char *name, const char *value), void *ctx);

#endif

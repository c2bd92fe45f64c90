/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The HTTP proxy's requests (pure): a client's request head (CONNECT host:port, or an absolute
 * http:// URL), the framing checks that keep a second request from hiding in its body, and the
 * heads sent upstream. The proxy (front.c, dial.c) and the sniffer (sniff.c) use them. */
#ifndef AGENTBOX_HTTP_PROXY_H
#define AGENTBOX_HTTP_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#include "parse_result.h"

#define EGRESS_MAX_HEAD 16384

struct http_request {
	bool is_connect;
	char method[16];
	char host[256];
	unsigned port;
	char url[2048];	 /* plain HTTP: the absolute URL, for the audit (redacted there) */
	size_t head_len; /* bytes of the request head, CRLF CRLF included */
	const char *why; /* PARSE_BAD: what is wrong */
};

/* A byte of an RFC 9110 token (a method, a header name). */
bool http_token_byte(unsigned char c);

/* Where the head in buf ends (just past its CRLF CRLF), or NULL when len bytes hold none. */
const char *http_find_head_end(const char *buf, size_t len);

/* An authority (host, [v6], host:port) of n bytes into host; *port is defport without a port.
 * False when it is malformed or the host does not fit hsize. */
bool http_split_authority(const char *a, size_t n, unsigned defport, char *host, size_t hsize,
			  unsigned *port);

/* Why a plain HTTP request head is refused for its framing, or NULL: a bare LF or CR, obs-fold,
 * a control byte, a header name that is not a token right before its ':', several or
 * non-numeric Content-Length, Content-Length with Transfer-Encoding, a Transfer-Encoding other
 * than one "chunked" or in an HTTP/1.0 request (the ways to smuggle a second request past a
 * proxy that reads the body's length one way and a server another). The first request of a
 * connection (http_parse_request, egress_sniff) and every later one (http_stream) are held to
 * this one check. */
const char *http_framing_refusal(const char *head, size_t head_len);

/* Parses a proxy request head (CONNECT host:port, or METHOD http://host[:port]/path). */
enum parse_result http_parse_request(const char *buf, size_t len, struct http_request *req);

/* The head to send upstream for a plain HTTP request: origin-form target (target, the canonical
 * one the [http] rules matched, or the URL's path when NULL), Host set to the URL's host (the one
 * the rules allowed), Proxy-*, connection and upgrade headers dropped, "Connection: close" added.
 * malloc'd, NULL when out of memory. */
char *http_upstream_head(const char *buf, const struct http_request *req, const char *target,
			 size_t *out_len);

/* The same for an origin-form request (a captured client's): its request line kept, hop-by-hop
 * headers dropped, "Connection: close" added, so the server answers this one request and every
 * later one comes on a new connection, where it is checked again. */
char *http_closing_head(const char *buf, size_t head_len, const char *target, size_t *out_len);

/* The same without "Connection: close": for a connection whose every request is read and
 * checked (intercepted HTTPS), which may stay open for the next one. */
char *http_kept_head(const char *buf, size_t head_len, const char *target, size_t *out_len);

#endif

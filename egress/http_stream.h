/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The request side of an HTTP/1.1 connection cut into its messages (http_stream.c), so that a
 * proxy checks every request on a connection, not only the first: pipelined and kept-alive
 * requests each come out as their own head, and a body's end is found exactly (Content-Length,
 * or chunked with its size lines, extensions and trailers). Pure: no sockets, no policy.
 *
 * How a proxy uses it. One struct http_stream per client connection (it holds the head being
 * read, so heap-allocate it). Read from the client into buf, then call http_stream_feed on the
 * bytes not yet consumed, off += its return, until it says HTTP_STREAM_MORE:
 *  - MORE: all of buf is consumed; read more.
 *  - HEAD: check ev.method, ev.target, ev.host against the rules. Refused: answer 403 and
 *    close. Allowed: send the head upstream (rewritten from ev.head, ev.head_len).
 *  - BODY: send the ev.n bytes just consumed (those before buf + off) upstream as they are;
 *    they include any chunked framing. ev.part says what they are: payload, chunked framing
 *    (size lines, extensions, CRLFs) or the trailer section; one event holds one kind.
 *  - END: the request is complete, nothing consumed; what follows is the next request, not yet
 *    checked. The proxy may stop here, keep the rest of buf and feed it later.
 *  - BAD: answer 400 (ev.why) and close; nothing consumed, and nothing more is ever reported.
 *    A body found malformed part-way has its well-formed start reported as BODY first.
 *
 * No byte of a request reaches a HEAD or BODY event before its whole head is read and parsed,
 * so nothing goes upstream unchecked. Empty lines (CRLF) before a request line are consumed and
 * reported by no event (RFC 9112 2.2): the proxy does not forward them. A CONNECT, or a request
 * the server answers with 101 Switching Protocols, ends HTTP on the connection: after its END
 * the caller must stop feeding (the proxy drops Connection/Upgrade, so a server does not switch).
 */
#ifndef AGENTBOX_HTTP_STREAM_H
#define AGENTBOX_HTTP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest request head, CRLF CRLF included (the same as EGRESS_MAX_HEAD). */
#define HTTP_STREAM_MAX_HEAD 16384
/* The longest chunk-size line (extensions included) and trailer line. */
#define HTTP_STREAM_MAX_LINE 4096

enum http_stream_event {
	HTTP_STREAM_MORE, /* all the bytes given are consumed: feed more */
	HTTP_STREAM_HEAD, /* a request's head is read and parsed */
	HTTP_STREAM_BODY, /* the ev.n bytes consumed are the current request's body */
	HTTP_STREAM_END,  /* the current request is complete (nothing consumed) */
	HTTP_STREAM_BAD,  /* not a request to forward (nothing consumed); for good */
};

enum http_framing {
	HTTP_FRAMING_NONE,    /* no body */
	HTTP_FRAMING_LENGTH,  /* Content-Length: ev.length bytes */
	HTTP_FRAMING_CHUNKED, /* Transfer-Encoding: chunked */
	HTTP_FRAMING_CLOSE,   /* responses: the body runs until the server closes (no END) */
};

/* What a BODY event's bytes are. */
enum http_part {
	HTTP_PART_DATA,	   /* the message's payload (chunk data, or the whole body) */
	HTTP_PART_FRAMING, /* chunk-size lines with their extensions, and the CRLFs after data */
	HTTP_PART_TRAILER, /* after the last chunk: the trailer lines and the final CRLF */
};

struct http_event {
	enum http_stream_event type;
	/* HEAD: the head, request line to the blank line; it and the spans into it stay valid
	 * until the next call. host is NULL when the request has no Host header. */
	const char *head;
	size_t head_len;
	const char *method, *target, *host;
	size_t method_len, target_len, host_len;
	bool http10; /* the request (status) line says HTTP/1.0 (else HTTP/1.1) */
	int status;  /* responses: the status code (100-999) */
	enum http_framing framing;
	uint64_t length;     /* HTTP_FRAMING_LENGTH: the body's length */
	size_t n;	     /* BODY: bytes consumed, all of them body */
	enum http_part part; /* BODY: what they are */
	const char *why;     /* BAD: what is wrong (a static string) */
};

/* Private to http_stream.c (a HEAD event's head points into it). */
struct http_stream {
	int state;
	bool response; /* cuts responses (http_stream_init_response) */
	bool no_body;  /* responses: the one being read answers a HEAD */
	const char *why;
	uint64_t left;	 /* bytes left of the body or of the chunk's data */
	size_t line;	 /* bytes so far of the chunk-size or trailer line */
	size_t trailers; /* bytes so far of the trailer section */
	size_t head_len; /* bytes of the head read so far */
	char head[HTTP_STREAM_MAX_HEAD];
};

void http_stream_init(struct http_stream *s);

/* The response side (a server's stream, the one an intercepting proxy reads): heads start with
 * a status line (ev.status); a response to a HEAD (head_request), an interim one (1xx) and 204 /
 * 304 have no body; one without Content-Length or chunked runs until the server closes
 * (HTTP_FRAMING_CLOSE: BODY events, never END). After a 1xx's END another head follows for the
 * same request: the caller counts final responses (status >= 200). */
void http_stream_init_response(struct http_stream *s, bool head_request);
/* Responses: whether the next response answers a HEAD (set before its head is fed). */
void http_stream_expect_head(struct http_stream *s, bool head_request);

/* Consumes at most len bytes of buf (len may be 0) and reports one event in *ev; returns the
 * bytes consumed. Call it again, on the bytes after those consumed, until HTTP_STREAM_MORE. */
size_t http_stream_feed(struct http_stream *s, const char *buf, size_t len, struct http_event *ev);

/* A HEAD event's request carries a body its method has none of by custom (GET, HEAD, OPTIONS,
 * TRACE, TRACK): an origin that ignores it would read it as a second request that no rule saw
 * (CL.0), so the proxy refuses it (HTTP_BODY_UNEXPECTED says why). */
bool http_body_unexpected(const struct http_event *ev);
/* The method is one of those (a body on it is refused, however it is framed). */
bool http_method_bodiless(const char *method, size_t len);
#define HTTP_BODY_UNEXPECTED                                                                       \
	"a body on a GET, HEAD, OPTIONS or TRACE request is refused: an origin that does not "     \
	"read it would take it for a second request"

#endif

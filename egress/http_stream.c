/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A client's HTTP/1.1 request stream cut into messages: heads, bodies and their exact ends. */
#include "http_stream.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "http_proxy.h"

_Static_assert(HTTP_STREAM_MAX_HEAD == EGRESS_MAX_HEAD,
	       "a later request's head is bounded as the first one's is");

enum {
	S_START,    /* before a request line: empty lines are skipped */
	S_START_LF, /* after an empty line's CR */
	S_HEAD,	    /* reading the head into s->head */
	S_BODY,	    /* Content-Length: s->left bytes to go */
	S_SIZE,	    /* chunked: the chunk-size's hex digits */
	S_SIZE_WS,  /* whitespace after them, before a ';' */
	S_EXT,	    /* chunk extensions, up to CR */
	S_SIZE_LF,
	S_DATA, /* s->left bytes of chunk data to go */
	S_DATA_CR,
	S_DATA_LF,
	S_TRAILER, /* the start of a trailer line, or of the final CRLF */
	S_TRAILER_NAME,
	S_TRAILER_VALUE,
	S_TRAILER_LF,
	S_LAST_LF,
	S_CLOSE, /* a response read until the server closes: every byte is body */
	S_END,	 /* the message is complete: END is reported next */
	S_BAD,
};

/* What a field value or a chunk extension may hold: visible bytes, space, tab, obs-text. */
static bool field_byte(unsigned char c)
{
	return c == '\t' || (c >= ' ' && c != 0x7f);
}

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static size_t report(struct http_event *ev, enum http_stream_event type, size_t used)
{
	ev->type = type;
	return used;
}

static size_t refuse(struct http_stream *s, struct http_event *ev, const char *why)
{
	s->state = S_BAD;
	s->why = ev->why = why;
	return report(ev, HTTP_STREAM_BAD, 0);
}

/* ---------- the head ---------- */

/* METHOD SP request-target SP HTTP/1.x, the line ending at eol (its CR). */
static const char *request_line(const char *h, const char *eol, struct http_event *ev)
{
	const char *p = h, *sp;

	while (p < eol && http_token_byte((unsigned char)*p))
		p++;
	if (p == h || p == eol || *p != ' ')
		return "a malformed request line (method)";
	ev->method = h;
	ev->method_len = (size_t)(p - h);
	ev->target = ++p;
	sp = memchr(p, ' ', (size_t)(eol - p));
	if (!sp || sp == p)
		return "a malformed request line (request-target)";
	ev->target_len = (size_t)(sp - p);
	if (eol - sp - 1 != 8 || memcmp(sp + 1, "HTTP/1.", 7) || (sp[8] != '0' && sp[8] != '1'))
		return "not an HTTP/1.0 or HTTP/1.1 request line";
	ev->http10 = sp[8] == '0';
	return NULL;
}

/* HTTP/1.x SP 3DIGIT [SP reason-phrase], the line ending at eol. */
static const char *status_line(const char *h, const char *eol, struct http_event *ev)
{
	if (eol - h < 12 || memcmp(h, "HTTP/1.", 7) || (h[7] != '0' && h[7] != '1') || h[8] != ' ')
		return "not an HTTP/1.0 or HTTP/1.1 status line";
	ev->status = 0;
	for (int i = 9; i < 12; i++) {
		if (h[i] < '0' || h[i] > '9')
			return "a malformed status code";
		ev->status = ev->status * 10 + (h[i] - '0');
	}
	if (ev->status < 100 || (eol - h > 12 && h[12] != ' '))
		return "a malformed status line";
	ev->http10 = h[7] == '0';
	return NULL;
}

static bool named(const char *name, size_t n, const char *want)
{
	return n == strlen(want) && !strncasecmp(name, want, n);
}

/* Content-Length's digits (http_framing_refusal has seen they are only digits). */
static const char *content_length(const char *v, size_t n, uint64_t *out)
{
	uint64_t len = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(v[i] - '0');
		if (len > ((uint64_t)INT64_MAX - d) / 10)
			return "a Content-Length too large";
		len = len * 10 + d;
	}
	*out = len;
	return NULL;
}

/* One header line [p, eol): a token name right before its ':' (a space there is a smuggling
 * shape RFC 9112 5.1 makes servers refuse), the value trimmed of whitespace. */
static const char *header_line(const char *p, const char *eol, struct http_event *ev,
			       unsigned *hosts)
{
	const char *name = p, *v;
	size_t nlen;

	while (p < eol && http_token_byte((unsigned char)*p))
		p++;
	if (p == name || p == eol || *p != ':')
		return "a malformed header line";
	nlen = (size_t)(p - name);
	for (v = p + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
		;
	while (eol > v && (eol[-1] == ' ' || eol[-1] == '\t'))
		eol--;
	if (named(name, nlen, "host")) {
		if (++*hosts > 1)
			return "more than one Host header";
		ev->host = v;
		ev->host_len = (size_t)(eol - v);
	} else if (named(name, nlen, "content-length")) {
		ev->framing = HTTP_FRAMING_LENGTH;
		return content_length(v, (size_t)(eol - v), &ev->length);
	} else if (named(name, nlen, "transfer-encoding")) {
		ev->framing = HTTP_FRAMING_CHUNKED;
	}
	return NULL;
}

/* The complete head h[0, len), CRLF CRLF included, into ev. */
static const char *parse_head(const struct http_stream *s, const char *h, size_t len,
			      struct http_event *ev)
{
	const char *end = h + len - 2, *eol, *why;
	unsigned hosts = 0;

	if ((why = http_framing_refusal(h, len)))
		return why;
	eol = memchr(h, '\r', len);
	if ((why = s->response ? status_line(h, eol, ev) : request_line(h, eol, ev)))
		return why;
	for (const char *p = eol + 2; p < end; p = eol + 2) {
		eol = memchr(p, '\r', (size_t)(end + 2 - p));
		if ((why = header_line(p, eol, ev, &hosts)))
			return why;
	}
	return NULL;
}

/* The state after a head: where its body, if any, starts. A response has none when it answers
 * a HEAD, is interim (1xx) or says so by its status (204, 304: RFC 9112 6.3); without a length it
 * runs until the server closes. */
static void begin_body(struct http_stream *s, struct http_event *ev)
{
	s->left = 0;
	s->line = s->trailers = 0;
	if (s->response &&
	    (s->no_body || ev->status < 200 || ev->status == 204 || ev->status == 304)) {
		ev->framing = HTTP_FRAMING_NONE;
		s->state = S_END;
	} else if (s->response && ev->framing == HTTP_FRAMING_NONE) {
		ev->framing = HTTP_FRAMING_CLOSE;
		s->state = S_CLOSE;
	} else if (ev->framing == HTTP_FRAMING_CHUNKED)
		s->state = S_SIZE;
	else if (ev->framing == HTTP_FRAMING_LENGTH && ev->length > 0)
		s->state = S_BODY, s->left = ev->length;
	else
		s->state = S_END;
}

/* Appends to the head until its CRLF CRLF, searching only where the new bytes could end it. */
static size_t take_head(struct http_stream *s, const char *buf, size_t len, struct http_event *ev)
{
	size_t old = s->head_len, room = HTTP_STREAM_MAX_HEAD - old, n = len < room ? len : room;
	size_t from = old > 3 ? old - 3 : 0;
	const char *end, *why;

	if (n)
		memcpy(s->head + old, buf, n);
	end = memmem(s->head + from, old + n - from, "\r\n\r\n", 4);
	if (!end) {
		s->head_len = old + n;
		if (s->head_len == HTTP_STREAM_MAX_HEAD)
			return refuse(s, ev,
				      s->response ? "response head too large"
						  : "request head too large");
		return report(ev, HTTP_STREAM_MORE, n);
	}
	s->head_len = (size_t)(end + 4 - s->head);
	ev->head = s->head;
	ev->head_len = s->head_len;
	if ((why = parse_head(s, s->head, s->head_len, ev)))
		return refuse(s, ev, why);
	begin_body(s, ev);
	return report(ev, HTTP_STREAM_HEAD, s->head_len - old);
}

/* Between requests: empty lines skipped, then the head. */
static size_t start(struct http_stream *s, const char *buf, size_t len, struct http_event *ev)
{
	size_t i = 0, used;

	for (; s->state != S_HEAD; i++) {
		unsigned char c;
		if (i == len)
			return report(ev, HTTP_STREAM_MORE, i);
		c = (unsigned char)buf[i];
		if (s->state == S_START_LF) {
			if (c != '\n')
				return refuse(s, ev, "a CR not followed by LF before a request");
			s->state = S_START;
		} else if (c == '\r') {
			s->state = S_START_LF;
		} else if (!http_token_byte(c)) {
			return refuse(s, ev,
				      s->response ? "not an HTTP status line"
						  : "not an HTTP request line");
		} else {
			s->state = S_HEAD;
			s->head_len = 0;
			break;
		}
	}
	used = take_head(s, buf + i, len - i, ev);
	return ev->type == HTTP_STREAM_BAD ? 0 : i + used;
}

/* ---------- the body ---------- */

static const char *chunk_size_byte(struct http_stream *s, unsigned char c)
{
	int d = hex_value(c);

	if (s->state == S_SIZE && d >= 0) {
		/* within int64_t, as servers hold it: a size one of them wraps would make it
		 * read this request's data as the next request */
		if (s->left > (uint64_t)INT64_MAX >> 4)
			return "a chunk size too large";
		s->left = s->left << 4 | (uint64_t)d;
		return NULL;
	}
	if (s->state == S_SIZE && s->line == 1)
		return "a chunk-size line without a size";
	if (s->state == S_EXT && c != '\r')
		return field_byte(c) ? NULL : "a control character in a chunk extension";
	if (c == ';')
		s->state = S_EXT;
	else if (c == ' ' || c == '\t')
		s->state = S_SIZE_WS;
	else if (c == '\r' && s->state != S_SIZE_WS)
		s->state = S_SIZE_LF;
	else
		return "a malformed chunk-size line";
	return NULL;
}

static const char *trailer_byte(struct http_stream *s, unsigned char c)
{
	if (++s->trailers > HTTP_STREAM_MAX_HEAD)
		return "a trailer section too large";
	switch (s->state) {
	case S_TRAILER:
		if (c == '\r')
			return s->state = S_LAST_LF, NULL;
		/* anything but a name starts a folded or malformed line */
		return http_token_byte(c) ? (s->state = S_TRAILER_NAME, NULL)
					  : "a malformed trailer line";
	case S_TRAILER_NAME:
		if (c == ':')
			return s->state = S_TRAILER_VALUE, NULL;
		return http_token_byte(c) ? NULL : "a malformed trailer line";
	default: /* S_TRAILER_VALUE */
		if (c == '\r')
			return s->state = S_TRAILER_LF, NULL;
		return field_byte(c) ? NULL : "a control character in a trailer line";
	}
}

/* One byte of the chunked framing outside chunk data. */
static const char *chunked_byte(struct http_stream *s, unsigned char c)
{
	if (++s->line > HTTP_STREAM_MAX_LINE)
		return "a chunk-size or trailer line too long";
	switch (s->state) {
	case S_SIZE:
	case S_SIZE_WS:
	case S_EXT:
		return chunk_size_byte(s, c);
	case S_SIZE_LF:
		if (c != '\n')
			return "a chunk-size line not ended by CRLF";
		s->state = s->left ? S_DATA : S_TRAILER;
		s->line = 0;
		return NULL;
	case S_DATA_CR:
	case S_DATA_LF:
		if (c != (s->state == S_DATA_CR ? '\r' : '\n'))
			return "chunk data not followed by CRLF";
		if (s->state == S_DATA_LF)
			s->left = 0, s->line = 0;
		s->state = s->state == S_DATA_CR ? S_DATA_LF : S_SIZE;
		return NULL;
	case S_TRAILER_LF:
	case S_LAST_LF:
		if (c != '\n')
			return "a trailer line not ended by CRLF";
		s->state = s->state == S_LAST_LF ? S_END : S_TRAILER;
		s->line = 0;
		return NULL;
	default:
		return trailer_byte(s, c);
	}
}

static enum http_part part_of(int state)
{
	switch (state) {
	case S_DATA:
		return HTTP_PART_DATA;
	case S_TRAILER:
	case S_TRAILER_NAME:
	case S_TRAILER_VALUE:
	case S_TRAILER_LF:
	case S_LAST_LF:
		return HTTP_PART_TRAILER;
	default:
		return HTTP_PART_FRAMING;
	}
}

/* Walks the chunked framing over buf up to the message's end or the end of one kind of bytes
 * (*part); a refused byte is not consumed (the bytes before it are reported as body first,
 * then BAD). */
static size_t chunked(struct http_stream *s, const char *buf, size_t len, enum http_part *part)
{
	size_t i = 0;

	*part = part_of(s->state);
	while (i < len && s->state != S_END && part_of(s->state) == *part) {
		const char *why;
		if (s->state == S_DATA) {
			size_t n = s->left < len - i ? (size_t)s->left : len - i;
			i += n;
			if ((s->left -= n) == 0)
				s->state = S_DATA_CR;
			continue;
		}
		if ((why = chunked_byte(s, (unsigned char)buf[i]))) {
			s->state = S_BAD;
			s->why = why;
			break;
		}
		i++;
	}
	return i;
}

static size_t body(struct http_stream *s, const char *buf, size_t len, struct http_event *ev)
{
	size_t n;

	ev->part = HTTP_PART_DATA;
	if (s->state == S_CLOSE) {
		n = len;
	} else if (s->state == S_BODY) {
		n = s->left < len ? (size_t)s->left : len;
		if ((s->left -= n) == 0)
			s->state = S_END;
	} else {
		n = chunked(s, buf, len, &ev->part);
	}
	if (n == 0 && s->state == S_BAD)
		return refuse(s, ev, s->why);
	ev->n = n;
	return report(ev, n ? HTTP_STREAM_BODY : HTTP_STREAM_MORE, n);
}

void http_stream_init(struct http_stream *s)
{
	s->response = s->no_body = false;
	s->state = S_START;
	s->why = NULL;
	s->left = 0;
	s->line = s->trailers = s->head_len = 0;
}

void http_stream_init_response(struct http_stream *s, bool head_request)
{
	http_stream_init(s);
	s->response = true;
	s->no_body = head_request;
}

void http_stream_expect_head(struct http_stream *s, bool head_request)
{
	s->no_body = head_request;
}

size_t http_stream_feed(struct http_stream *s, const char *buf, size_t len, struct http_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	switch (s->state) {
	case S_BAD:
		return refuse(s, ev, s->why);
	case S_END:
		s->state = S_START;
		return report(ev, HTTP_STREAM_END, 0);
	case S_START:
	case S_START_LF:
	case S_HEAD:
		return start(s, buf, len, ev);
	default:
		return body(s, buf, len, ev);
	}
}

bool http_method_bodiless(const char *method, size_t len)
{
	static const char *const none[] = {"GET", "HEAD", "OPTIONS", "TRACE", "TRACK"};

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		if (len == strlen(none[i]) && !memcmp(method, none[i], len))
			return true;
	return false;
}

bool http_body_unexpected(const struct http_event *ev)
{
	bool body = ev->framing == HTTP_FRAMING_CHUNKED ||
		    (ev->framing == HTTP_FRAMING_LENGTH && ev->length > 0);

	return body && http_method_bodiless(ev->method, ev->method_len);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the request stream (http_stream.c): pipelined requests each come out as their
 * own head, whatever the reads' boundaries; Content-Length and chunked bodies end exactly; the
 * smuggling shapes and malformed framing are refused, and nothing after a refusal is reported.
 * And for its response mode (an intercepted server's stream): status lines, bodies delimited by
 * length, chunks or the server's close, none for a HEAD's answer, 1xx, 204 and 304. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_stream.h"

/* What the stream reported, as text: H(METHOD TARGET HOST FRAMING) for a request's head,
 * R(STATUS [1.0] FRAMING) for a response's, B(bytes) for the body (consecutive BODY events
 * merged), E for an end, X(why) for a refusal. */
struct transcript {
	char text[65536];
	size_t len;
	bool in_body;
};

static void put(struct transcript *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct transcript *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	t->len += (size_t)vsnprintf(t->text + t->len, sizeof(t->text) - t->len, fmt, ap);
	va_end(ap);
	assert_true(t->len < sizeof(t->text));
}

/* Which stream is fed: a client's, or a server's (answering GETs, or HEADs). */
enum side { REQUESTS, RESPONSES, HEAD_RESPONSES };

static void put_response_head(struct transcript *t, const struct http_event *ev)
{
	static const char *const framing[] = {"", " cl=", " chunked", " close"};

	assert_null(ev->method);
	assert_null(ev->target);
	put(t, "R(%d%s%s", ev->status, ev->http10 ? " 1.0" : "", framing[ev->framing]);
	if (ev->framing == HTTP_FRAMING_LENGTH)
		put(t, "%llu", (unsigned long long)ev->length);
	put(t, ")");
}

static void put_head(struct transcript *t, const struct http_event *ev)
{
	if (!ev->method) {
		put_response_head(t, ev);
		return;
	}
	assert_int_equal(ev->status, 0);
	put(t, "H(%.*s %.*s ", (int)ev->method_len, ev->method, (int)ev->target_len, ev->target);
	if (ev->host)
		put(t, "%.*s", (int)ev->host_len, ev->host);
	else
		put(t, "-");
	if (ev->framing == HTTP_FRAMING_LENGTH)
		put(t, " cl=%llu)", (unsigned long long)ev->length);
	else
		put(t, ev->framing == HTTP_FRAMING_CHUNKED ? " chunked)" : ")");
}

/* One event into the transcript; checks what every event promises about the bytes. */
static void record(struct transcript *t, const struct http_event *ev, const char *in, size_t pos,
		   size_t used, size_t given)
{
	assert_true(used <= given);
	if (t->in_body && ev->type != HTTP_STREAM_BODY && ev->type != HTTP_STREAM_MORE) {
		put(t, ")");
		t->in_body = false;
	}
	switch (ev->type) {
	case HTTP_STREAM_MORE:
		assert_int_equal(used, given);
		break;
	case HTTP_STREAM_HEAD:
		/* the head is the bytes just before those consumed next */
		assert_true(ev->head_len <= pos + used);
		assert_memory_equal(ev->head, in + pos + used - ev->head_len, ev->head_len);
		put(t, "%s", t->len ? " " : "");
		put_head(t, ev);
		break;
	case HTTP_STREAM_BODY:
		assert_true(used > 0);
		assert_int_equal(ev->n, used);
		if (!t->in_body)
			put(t, "%sB(", t->len ? " " : "");
		t->in_body = true;
		put(t, "%.*s", (int)used, in + pos);
		break;
	case HTTP_STREAM_END:
		assert_int_equal(used, 0);
		put(t, "%sE", t->len ? " " : "");
		break;
	case HTTP_STREAM_BAD:
		assert_int_equal(used, 0);
		assert_non_null(ev->why);
		put(t, "%sX(%s)", t->len ? " " : "", ev->why);
		break;
	}
}

/* Feeds in[0, len) in pieces of step bytes (0: all at once) as a proxy would, and then once
 * more after the end; returns the transcript. */
static const char *run_side(enum side side, const char *in, size_t len, size_t step)
{
	static struct transcript t;
	static struct http_stream s;
	struct http_event ev;
	size_t pos = 0;

	memset(&t, 0, sizeof(t));
	if (side == REQUESTS)
		http_stream_init(&s);
	else
		http_stream_init_response(&s, side == HEAD_RESPONSES);
	for (size_t got = 0; got < len || pos < len;) {
		got = step && len - got > step ? got + step : len;
		for (;;) {
			size_t used = http_stream_feed(&s, in + pos, got - pos, &ev);
			record(&t, &ev, in, pos, used, got - pos);
			pos += used;
			if (ev.type == HTTP_STREAM_MORE)
				break;
			if (ev.type == HTTP_STREAM_BAD) {
				/* for good: even more input is never reported */
				assert_int_equal(
				    http_stream_feed(&s, "GET / HTTP/1.1\r\n\r\n", 18, &ev), 0);
				assert_int_equal(ev.type, HTTP_STREAM_BAD);
				return t.text;
			}
		}
	}
	if (t.in_body)
		put(&t, ")");
	return t.text;
}

/* in gives want whole, one byte at a time, and in a few other splits. */
static void expect_side(enum side side, const char *in, size_t len, const char *want)
{
	static const size_t steps[] = {0, 1, 2, 3, 7, 64};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const char *got = run_side(side, in, len, steps[i]);
		if (strcmp(got, want)) {
			print_error("fed in steps of %zu:\n  got  %s\n  want %s\n", steps[i], got,
				    want);
			fail();
		}
	}
}

static void expect(const char *in, size_t len, const char *want)
{
	expect_side(REQUESTS, in, len, want);
}

#define EXPECT(in, want) expect(in, sizeof(in) - 1, want)
#define EXPECT_RESPONSES(in, want) expect_side(RESPONSES, in, sizeof(in) - 1, want)
#define EXPECT_HEAD_RESPONSES(in, want) expect_side(HEAD_RESPONSES, in, sizeof(in) - 1, want)

/* A refusal whose reason holds phrase, with nothing reported before it but what pre says. */
static void expect_bad_side(enum side side, const char *in, size_t len, const char *pre,
			    const char *phrase)
{
	const char *got = run_side(side, in, len, 0);
	size_t n = strlen(pre);

	if (strncmp(got, pre, n) || strncmp(got + n, "X(", 2) || !strstr(got + n, phrase)) {
		print_error("'%.*s':\n  got %s\n  want %sX(...%s...)\n", (int)len, in, got, pre,
			    phrase);
		fail();
	}
	expect_side(side, in, len, got);
}

static void expect_bad(const char *in, size_t len, const char *pre, const char *phrase)
{
	expect_bad_side(REQUESTS, in, len, pre, phrase);
}

#define EXPECT_BAD(in, phrase) expect_bad(in, sizeof(in) - 1, "", phrase)
#define EXPECT_BAD_RESPONSE(in, phrase) expect_bad_side(RESPONSES, in, sizeof(in) - 1, "", phrase)

static void test_pipelined(void **state)
{
	static const char two[] = "GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n"
				  "GET /b?x=1 HTTP/1.1\r\nHost: b.test:8080\r\nAccept: */*\r\n\r\n";
	struct http_stream *s = malloc(sizeof(*s));
	struct http_event ev;
	size_t first = strlen("GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n"), used;

	(void)state;
	assert_non_null(s);
	http_stream_init(s);
	used = http_stream_feed(s, two, sizeof(two) - 1, &ev);
	assert_int_equal(ev.type, HTTP_STREAM_HEAD);
	assert_int_equal(used, first);
	assert_ptr_not_equal(ev.head, two); /* the stream's copy: the caller's buffer may go */
	assert_int_equal(ev.head_len, first);
	assert_memory_equal(ev.head, two, first);
	assert_int_equal(ev.framing, HTTP_FRAMING_NONE);
	assert_false(ev.http10);

	assert_int_equal(http_stream_feed(s, two + used, sizeof(two) - 1 - used, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_END);

	used += http_stream_feed(s, two + used, sizeof(two) - 1 - used, &ev);
	assert_int_equal(ev.type, HTTP_STREAM_HEAD);
	assert_int_equal(used, sizeof(two) - 1);
	assert_int_equal(ev.head_len, sizeof(two) - 1 - first);
	assert_memory_equal(ev.head, two + first, ev.head_len);
	assert_int_equal(ev.method_len, 3);
	assert_memory_equal(ev.method, "GET", 3);
	assert_int_equal(ev.target_len, 6);
	assert_memory_equal(ev.target, "/b?x=1", 6);
	assert_int_equal(ev.host_len, 11);
	assert_memory_equal(ev.host, "b.test:8080", 11);

	assert_int_equal(http_stream_feed(s, NULL, 0, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_END);
	assert_int_equal(http_stream_feed(s, NULL, 0, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_MORE);
	free(s);

	/* the same, whole and fed one byte (and other sizes) at a time */
	EXPECT(two, "H(GET /a a.test) E H(GET /b?x=1 b.test:8080) E");
}

static void test_head_fields(void **state)
{
	(void)state;
	/* no Host; HTTP/1.0; a method other than GET; an absolute-form target as sent */
	EXPECT("OPTIONS * HTTP/1.0\r\n\r\n", "H(OPTIONS * -) E");
	EXPECT("GET http://x.test/p HTTP/1.1\r\nhOsT:  \t x.test \r\n\r\n",
	       "H(GET http://x.test/p x.test) E");
	EXPECT("M-SEARCH / HTTP/1.1\r\nHost:\r\n\r\n", "H(M-SEARCH / ) E");
	/* empty lines before a request are consumed, not part of its head */
	EXPECT("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET /2 HTTP/1.1\r\n\r\n",
	       "H(GET / a) E H(GET /2 -) E");

	struct http_stream *s = malloc(sizeof(*s));
	struct http_event ev;
	static const char r[] = "\r\nPUT /x HTTP/1.0\r\nContent-Length: 007\r\n\r\n";
	assert_non_null(s);
	http_stream_init(s);
	assert_int_equal(http_stream_feed(s, r, sizeof(r) - 1, &ev), sizeof(r) - 1);
	assert_int_equal(ev.type, HTTP_STREAM_HEAD);
	assert_int_equal(ev.head_len, sizeof(r) - 3);
	assert_memory_equal(ev.head, "PUT /x", 6);
	assert_true(ev.http10);
	assert_null(ev.host);
	assert_int_equal(ev.framing, HTTP_FRAMING_LENGTH);
	assert_int_equal(ev.length, 7);
	free(s);
}

static void test_content_length(void **state)
{
	static const char in[] = "POST /u HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n"
				 "hello worldGET /n HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
	struct http_stream *s = malloc(sizeof(*s));
	struct http_event ev;
	size_t head = strlen(in) - strlen(strstr(in, "hello")), used;

	(void)state;
	EXPECT(in, "H(POST /u a cl=11) B(hello world) E H(GET /n - cl=0) E");

	/* the body split across reads: each read's share is body, no more */
	assert_non_null(s);
	http_stream_init(s);
	used = http_stream_feed(s, in, head + 3, &ev);
	assert_int_equal(ev.type, HTTP_STREAM_HEAD);
	assert_int_equal(used, head);
	assert_int_equal(http_stream_feed(s, in + head, 3, &ev), 3);
	assert_int_equal(ev.type, HTTP_STREAM_BODY);
	assert_int_equal(http_stream_feed(s, in + head + 3, 0, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_MORE);
	assert_int_equal(http_stream_feed(s, in + head + 3, 5, &ev), 5);
	assert_int_equal(ev.type, HTTP_STREAM_BODY);
	/* the rest of the body and the next request in one read: the body's end stops it */
	assert_int_equal(http_stream_feed(s, in + head + 8, 20, &ev), 3);
	assert_int_equal(ev.type, HTTP_STREAM_BODY);
	assert_int_equal(ev.n, 3);
	assert_int_equal(http_stream_feed(s, in + head + 11, 17, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_END);
	free(s);
}

static void test_chunked(void **state)
{
	(void)state;
	/* extensions (a quoted value with ';' and spaces, BWS before ';'), upper- and lower-case
	 * hex with leading zeros, trailers, the last chunk with an extension, then the next
	 * request right after the final CRLF */
	EXPECT("POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"
	       "5;a=b;q=\"x; y\"\r\nhello\r\n"
	       "00A \t;e\r\n0123456789\r\n"
	       "19\r\n\r\n\r\n0\r\nGET / HTTP/1.1\r\n\r\n\r\n"
	       "0;end\r\nX-Sum: abc\r\nY:\r\n\r\n"
	       "GET /next HTTP/1.1\r\nHost: h\r\n\r\n",
	       "H(POST /c h chunked) B(5;a=b;q=\"x; y\"\r\nhello\r\n00A \t;e\r\n0123456789\r\n"
	       "19\r\n\r\n\r\n0\r\nGET / HTTP/1.1\r\n\r\n\r\n0;end\r\nX-Sum: abc\r\nY:\r\n\r\n) "
	       "E H(GET /next h) E");
	/* the shortest chunked body */
	EXPECT("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	       "H(POST / - chunked) B(0\r\n\r\n) E");
	/* the largest chunk size there is room for: the body simply goes on */
	EXPECT("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nab",
	       "H(POST / - chunked) B(7fffffffffffffff\r\nab)");
}

static void test_refused_heads(void **state)
{
	char *huge;

	(void)state;
	EXPECT_BAD("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		   "both Content-Length and Transfer-Encoding");
	EXPECT_BAD("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
		   "more than one Content-Length");
	EXPECT_BAD("POST / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "obs-fold");
	EXPECT_BAD("GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", "bare LF");
	EXPECT_BAD("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "not a number");
	EXPECT_BAD("POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", "not a number");
	EXPECT_BAD("POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", "not a number");
	EXPECT_BAD("POST / HTTP/1.1\r\nContent-Length: 9223372036854775808\r\n\r\n", "too large");
	EXPECT_BAD("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		   "other than one 'chunked'");
	EXPECT_BAD("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0");
	/* what http_framing_refusal does not read: a space before the colon, a bare CR, NUL */
	EXPECT_BAD("POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n", "malformed header");
	EXPECT_BAD("POST / HTTP/1.1\r\nX: a\rContent-Length: 5\r\n\r\n", "CR not followed by LF");
	expect_bad("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 26, "", "control character");
	EXPECT_BAD("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "more than one Host");
	EXPECT_BAD("GET / HTTP/2.0\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
	EXPECT_BAD("GET /  HTTP/1.1\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
	EXPECT_BAD("GET  / HTTP/1.1\r\n\r\n", "request-target");
	EXPECT_BAD("\x16\x03\x01\x02\x00", "not an HTTP request line");
	EXPECT_BAD("\r\rGET / HTTP/1.1\r\n\r\n", "CR not followed by LF");

	/* a head of exactly the limit is read; one byte more is refused */
	huge = malloc(HTTP_STREAM_MAX_HEAD + 2);
	assert_non_null(huge);
	memset(huge, 'a', HTTP_STREAM_MAX_HEAD + 1);
	memcpy(huge, "GET / HTTP/1.1\r\nX: ", 19);
	memcpy(huge + HTTP_STREAM_MAX_HEAD - 4, "\r\n\r\n", 4);
	expect(huge, HTTP_STREAM_MAX_HEAD, "H(GET / -) E");
	memcpy(huge + HTTP_STREAM_MAX_HEAD - 4, "a\r\n\r\n", 5);
	expect_bad(huge, HTTP_STREAM_MAX_HEAD + 1, "", "request head too large");
	free(huge);
}

#define CHUNKED_HEAD "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"

/* A chunked body refused at its first byte past pre's. */
static void expect_bad_chunked(const char *chunks, const char *valid, const char *phrase)
{
	char in[8192], pre[8192];

	snprintf(in, sizeof(in), CHUNKED_HEAD "%s", chunks);
	if (*valid)
		snprintf(pre, sizeof(pre), "H(POST / - chunked) B(%s) ", valid);
	else
		snprintf(pre, sizeof(pre), "H(POST / - chunked) ");
	expect_bad(in, strlen(in), pre, phrase);
}

static void test_refused_chunks(void **state)
{
	char line[HTTP_STREAM_MAX_LINE + 16];

	(void)state;
	expect_bad_chunked("8000000000000000\r\n", "800000000000000", "chunk size too large");
	expect_bad_chunked("fffffffffffffffff1\r\n", "fffffffffffffff", "chunk size too large");
	expect_bad_chunked("-5\r\nhello\r\n0\r\n\r\n", "", "without a size");
	expect_bad_chunked("0x5\r\nhello\r\n0\r\n\r\n", "0", "malformed chunk-size");
	expect_bad_chunked(" 5\r\nhello\r\n0\r\n\r\n", "", "without a size");
	expect_bad_chunked("5 \r\nhello\r\n0\r\n\r\n", "5 ", "malformed chunk-size");
	expect_bad_chunked("5\nhello\r\n0\r\n\r\n", "5", "malformed chunk-size");
	expect_bad_chunked("5\r\rhello\r\n0\r\n\r\n", "5\r", "not ended by CRLF");
	expect_bad_chunked("5;a\x01\r\nhello\r\n0\r\n\r\n", "5;a", "control character");
	expect_bad_chunked("5\r\nhelloX\r\n0\r\n\r\n", "5\r\nhello", "not followed by CRLF");
	expect_bad_chunked("5\r\nhello\r0\r\n\r\n", "5\r\nhello\r", "not followed by CRLF");
	expect_bad_chunked("0\r\nX: a\r\n b\r\n\r\n", "0\r\nX: a\r\n", "malformed trailer");
	expect_bad_chunked("0\r\nX : a\r\n\r\n", "0\r\nX", "malformed trailer");
	expect_bad_chunked("0\r\nX: a\nY: b\r\n\r\n", "0\r\nX: a", "control character");
	expect_bad_chunked("0\r\n\rGET / HTTP/1.1\r\n\r\n", "0\r\n\r", "not ended by CRLF");
	/* a chunk-size line past the limit */
	memset(line, 'x', sizeof(line));
	memcpy(line, "1;", 2);
	line[HTTP_STREAM_MAX_LINE + 1] = '\0';
	{
		char valid[HTTP_STREAM_MAX_LINE + 1];
		memcpy(valid, line, HTTP_STREAM_MAX_LINE);
		valid[HTTP_STREAM_MAX_LINE] = '\0';
		expect_bad_chunked(line, valid, "line too long");
	}
}

/* A refused request ends the stream: the request after it, in the same buffer, never comes out
 * as a head; and the same second request after an acceptable first one does. */
static void test_nothing_after_bad(void **state)
{
	(void)state;
	EXPECT_BAD("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 30\r\n\r\n"
		   "GET /evil HTTP/1.1\r\nHost: b\r\n\r\n",
		   "more than one Content-Length");
	EXPECT("POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\n"
	       "xGET /evil HTTP/1.1\r\nHost: b\r\n\r\n",
	       "H(POST / - cl=1) B(x) E H(GET /evil b) E");
	/* a body refused mid-way: its valid start was body, nothing after it is anything */
	expect_bad_chunked("5\r\nhelloXGET /evil HTTP/1.1\r\nHost: b\r\n\r\n", "5\r\nhello",
			   "not followed by CRLF");
}

/* ---------- responses ---------- */

static void test_status_line(void **state)
{
	(void)state;
	EXPECT_RESPONSES("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "R(200 cl=0) E");
	EXPECT_RESPONSES("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n",
			 "R(404 1.0 cl=0) E");
	/* the reason phrase may be empty, or left out with its space (RFC 9112 4) */
	EXPECT_RESPONSES("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n", "R(200 cl=0) E");
	EXPECT_RESPONSES("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", "R(200 cl=0) E");
	EXPECT_RESPONSES("HTTP/1.1 599 any thing: at all\t\r\nContent-Length: 0\r\n\r\n",
			 "R(599 cl=0) E");
	/* empty lines before a status line are skipped, as before a request line */
	EXPECT_RESPONSES("\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "R(200 cl=0) E");

	EXPECT_BAD_RESPONSE("HTTP/1.1 20 OK\r\n\r\n", "status");
	EXPECT_BAD_RESPONSE("HTTP/1.1 2000 OK\r\n\r\n", "status line");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200OK\r\n\r\n", "status line");
	EXPECT_BAD_RESPONSE("HTTP/1.1 099 Low\r\n\r\n", "status line");
	EXPECT_BAD_RESPONSE("HTTP/1.1 +20 OK\r\n\r\n", "status");
	EXPECT_BAD_RESPONSE("HTTP/2 200\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
	EXPECT_BAD_RESPONSE("HTTP/1.2 200 OK\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
	EXPECT_BAD_RESPONSE("HTTP/1.1  200 OK\r\n\r\n", "status");
	EXPECT_BAD_RESPONSE("http/1.1 200 OK\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
	EXPECT_BAD_RESPONSE("HTTP/1.1\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
	/* a request where a response should be */
	EXPECT_BAD_RESPONSE("GET / HTTP/1.1\r\n\r\n", "HTTP/1.0 or HTTP/1.1");
	/* an h2 server's SETTINGS frame, or TLS, is no status line */
	expect_bad_side(RESPONSES, "\0\0\x12\x04\0\0\0\0\0", 9, "", "not an HTTP");
	EXPECT_BAD_RESPONSE("\x16\x03\x03\x00\x02", "not an HTTP");
}

static void test_response_bodies(void **state)
{
	(void)state;
	/* Content-Length, then the next response on the same connection */
	EXPECT_RESPONSES("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
			 "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!",
			 "R(200 cl=5) B(hello) E R(404 cl=3) B(no!) E");
	/* chunked, with an extension and a trailer; then a second response */
	EXPECT_RESPONSES("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			 "3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"
			 "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz",
			 "R(200 chunked) B(3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n) E "
			 "R(200 cl=1) B(z) E");
	/* neither: the body runs until the server closes, whatever it holds; no END ever */
	EXPECT_RESPONSES("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
			 "all of this\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
			 "R(200 close) B(all of this\r\n\r\nHTTP/1.1 200 OK\r\n"
			 "Content-Length: 0\r\n\r\n)");
	EXPECT_RESPONSES("HTTP/1.0 200 OK\r\n\r\nold", "R(200 1.0 close) B(old)");
	EXPECT_RESPONSES("HTTP/1.1 500 Oops\r\n\r\n", "R(500 close)");
	/* a Content-Length of 0 is a body of none, not one until close */
	EXPECT_RESPONSES("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "R(200 cl=0) E");
}

/* RFC 9112 6.3: no body after 1xx, 204 and 304, whatever their headers say; a 100 Continue and
 * the final response come one after the other on the same stream. */
static void test_no_body_statuses(void **state)
{
	(void)state;
	EXPECT_RESPONSES("HTTP/1.1 100 Continue\r\n\r\n"
			 "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
			 "R(100) E R(201 cl=2) B(ok) E");
	EXPECT_RESPONSES("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
			 "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
			 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			 "R(100) E R(102) E R(103) E R(200 chunked) B(0\r\n\r\n) E");
	/* an interim response with a length has no body all the same */
	EXPECT_RESPONSES("HTTP/1.1 100 Continue\r\nContent-Length: 4\r\n\r\n"
			 "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
			 "R(100) E R(200 cl=0) E");
	EXPECT_RESPONSES("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"
			 "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
			 "R(204) E R(200 cl=1) B(x) E");
	EXPECT_RESPONSES("HTTP/1.1 304 Not Modified\r\nContent-Length: 512\r\nETag: \"a\"\r\n\r\n"
			 "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"
			 "HTTP/1.1 204 No Content\r\n\r\n",
			 "R(304) E R(304) E R(204) E");
	/* 205 is not among them: it has a body when it says so (RFC 9110 15.3.6) */
	EXPECT_RESPONSES("HTTP/1.1 205 Reset Content\r\nContent-Length: 0\r\n\r\n",
			 "R(205 cl=0) E");
}

/* The answer to a HEAD has no body, whatever its Content-Length or Transfer-Encoding says. */
static void test_head_response(void **state)
{
	struct http_stream *s = malloc(sizeof(*s));
	struct http_event ev;
	static const char get_answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
	static const char head_answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n";
	size_t used;

	(void)state;
	EXPECT_HEAD_RESPONSES("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"
			      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			      "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
			      "R(200) E R(200) E R(200) E");
	/* a 100 Continue to a HEAD, then its final answer: neither has a body */
	EXPECT_HEAD_RESPONSES("HTTP/1.1 100 Continue\r\n\r\n"
			      "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n",
			      "R(100) E R(200) E");

	/* GET, HEAD, GET on one connection: expect_head set before each response's head */
	assert_non_null(s);
	http_stream_init_response(s, false);
	assert_int_equal(http_stream_feed(s, get_answer, sizeof(get_answer) - 1, &ev),
			 sizeof(head_answer) - 1);
	assert_int_equal(ev.type, HTTP_STREAM_HEAD);
	assert_int_equal(ev.status, 200);
	assert_int_equal(ev.framing, HTTP_FRAMING_LENGTH);
	assert_int_equal(ev.length, 3);
	used = http_stream_feed(s, get_answer + sizeof(head_answer) - 1, 3, &ev);
	assert_int_equal(used, 3);
	assert_int_equal(ev.type, HTTP_STREAM_BODY);
	assert_int_equal(http_stream_feed(s, NULL, 0, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_END);

	http_stream_expect_head(s, true);
	assert_int_equal(http_stream_feed(s, get_answer, sizeof(get_answer) - 1, &ev),
			 sizeof(head_answer) - 1);
	assert_int_equal(ev.type, HTTP_STREAM_HEAD);
	assert_int_equal(ev.framing, HTTP_FRAMING_NONE);
	assert_int_equal(http_stream_feed(s, "abc", 3, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_END);
	/* "abc" is where the next status line should start: not one */
	http_stream_expect_head(s, false);
	assert_int_equal(http_stream_feed(s, "abc", 3, &ev), 3);
	assert_int_equal(ev.type, HTTP_STREAM_MORE);
	assert_int_equal(http_stream_feed(s, "\r\n\r\n", 4, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_BAD);

	/* the HEAD flag is the answer's, not the stream's: the next GET's answer has its body */
	http_stream_init_response(s, true);
	assert_int_equal(http_stream_feed(s, head_answer, sizeof(head_answer) - 1, &ev),
			 sizeof(head_answer) - 1);
	assert_int_equal(ev.framing, HTTP_FRAMING_NONE);
	assert_int_equal(http_stream_feed(s, NULL, 0, &ev), 0);
	assert_int_equal(ev.type, HTTP_STREAM_END);
	http_stream_expect_head(s, false);
	assert_int_equal(http_stream_feed(s, get_answer, sizeof(get_answer) - 1, &ev),
			 sizeof(head_answer) - 1);
	assert_int_equal(ev.framing, HTTP_FRAMING_LENGTH);
	assert_int_equal(http_stream_feed(s, "abc", 3, &ev), 3);
	assert_int_equal(ev.type, HTTP_STREAM_BODY);
	free(s);
}

/* A response whose length a client could read otherwise than the proxy is refused, as a
 * request would be: the next response would be read from the middle of this one. */
static void test_refused_responses(void **state)
{
	char *huge;

	(void)state;
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
			    "Transfer-Encoding: chunked\r\n\r\n",
			    "both Content-Length and Transfer-Encoding");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
			    "more than one Content-Length");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", "not a number");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
			    "Transfer-Encoding: chunked\r\n\r\n",
			    "other than one 'chunked'");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
			    "other than one 'chunked'");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\n\r\n",
			    "malformed header");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", "obs-fold");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n", "bare LF");
	EXPECT_BAD_RESPONSE("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n",
			    "too large");
	/* the smuggling shapes in the headers even where no body is read: refused all the same */
	EXPECT_BAD_RESPONSE("HTTP/1.1 204 No Content\r\nContent-Length: 1\r\n"
			    "Content-Length: 2\r\n\r\n",
			    "more than one Content-Length");
	/* a chunked body that breaks part-way: its good start was body */
	expect_bad_side(RESPONSES, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX",
			53, "R(200 chunked) B(2\r\nok) ", "not followed by CRLF");

	/* a head of exactly the limit is read; one byte more is refused */
	huge = malloc(HTTP_STREAM_MAX_HEAD + 2);
	assert_non_null(huge);
	memset(huge, 'a', HTTP_STREAM_MAX_HEAD + 1);
	memcpy(huge, "HTTP/1.1 200 OK\r\nX: ", 20);
	memcpy(huge + HTTP_STREAM_MAX_HEAD - 4, "\r\n\r\n", 4);
	expect_side(HEAD_RESPONSES, huge, HTTP_STREAM_MAX_HEAD, "R(200) E");
	memcpy(huge + HTTP_STREAM_MAX_HEAD - 4, "a\r\n\r\n", 5);
	expect_bad_side(RESPONSES, huge, HTTP_STREAM_MAX_HEAD + 1, "", "response head too large");
	free(huge);
}

/* RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing; requests are
 * refused for it, and a response is no different (a 1.0 client reads it until the close). The
 * check must read the version where a status line has it, not where a request line does. */
static void test_response_http10_chunked(void **state)
{
	(void)state;
	EXPECT_BAD_RESPONSE("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			    "HTTP/1.0");
	/* a reason phrase that happens to end in HTTP/1.0 says nothing of the version */
	EXPECT_RESPONSES("HTTP/1.1 200 HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			 "R(200 chunked) B(0\r\n\r\n) E");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pipelined),
	    cmocka_unit_test(test_head_fields),
	    cmocka_unit_test(test_content_length),
	    cmocka_unit_test(test_chunked),
	    cmocka_unit_test(test_refused_heads),
	    cmocka_unit_test(test_refused_chunks),
	    cmocka_unit_test(test_nothing_after_bad),
	    cmocka_unit_test(test_status_line),
	    cmocka_unit_test(test_response_bodies),
	    cmocka_unit_test(test_no_body_statuses),
	    cmocka_unit_test(test_head_response),
	    cmocka_unit_test(test_refused_responses),
	    cmocka_unit_test(test_response_http10_chunked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: a client's byte stream to the request stream (http_stream_feed).
 *
 * The input is fed three ways, as a proxy would read it: in one piece, one byte at a time, and
 * in pieces of random sizes (empty ones included; the sizes drawn from a hash of the input, so
 * a crash replays). Checks beyond "no crash":
 *  - all three give the same events: the same heads (bytes and parsed fields), the same body
 *    bytes between them, the same ends, the same refusal;
 *  - each event keeps its promise: MORE consumes all, END and BAD nothing, BODY something;
 *    a head is the bytes just consumed, ends in CRLF CRLF, is within the limit, passes
 *    http_framing_refusal, and its fields lie within it; nothing comes after BAD;
 *  - the events follow (HEAD BODY* END)*: a Content-Length body is exactly that long, a chunked
 *    body ends in CRLF; bodies are the input's bytes right after their head, and the only bytes
 *    no event reports are empty lines before a request;
 *  - a head, fed again on its own, is read the same way. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_proxy.h"
#include "http_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_http_stream: check failed: %s (%s:%d)\n", #cond,     \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* What the events said, as bytes, for comparing one way of feeding with another. */
struct transcript {
	unsigned char *b;
	size_t len, cap;
	bool in_body; /* consecutive BODY events are one run of bytes */
};

static void put(struct transcript *t, const void *p, size_t n)
{
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2 + 64;
		t->b = realloc(t->b, t->cap);
		CHECK(t->b != NULL);
	}
	memcpy(t->b + t->len, p, n);
	t->len += n;
}

static void put_size(struct transcript *t, size_t v)
{
	put(t, &v, sizeof(v));
}

/* A span of the head as its offset and length; a missing one as all ones. */
static void put_span(struct transcript *t, const struct http_event *ev, const char *p, size_t n)
{
	if (!p) {
		put_size(t, SIZE_MAX);
		return;
	}
	CHECK(p >= ev->head && n <= ev->head_len && (size_t)(p - ev->head) <= ev->head_len - n);
	put_size(t, (size_t)(p - ev->head));
	put_size(t, n);
}

static void put_head(struct transcript *t, const struct http_event *ev)
{
	unsigned char tag[3] = {'H', ev->http10, (unsigned char)ev->framing};

	put(t, tag, sizeof(tag));
	put(t, &ev->length, sizeof(ev->length));
	put_size(t, ev->head_len);
	put(t, ev->head, ev->head_len);
	put_span(t, ev, ev->method, ev->method_len);
	put_span(t, ev, ev->target, ev->target_len);
	put_span(t, ev, ev->host, ev->host_len);
}

static void check_head(const struct http_event *ev)
{
	CHECK(ev->head_len >= 4 && ev->head_len <= HTTP_STREAM_MAX_HEAD);
	CHECK(!memcmp(ev->head + ev->head_len - 4, "\r\n\r\n", 4));
	CHECK(!http_framing_refusal(ev->head, ev->head_len));
	CHECK(ev->method && ev->method_len > 0 && ev->method == ev->head);
	CHECK(ev->target && ev->target_len > 0);
	CHECK(ev->framing != HTTP_FRAMING_CHUNKED || !ev->http10);
	CHECK(ev->length <= INT64_MAX);
	CHECK(ev->framing == HTTP_FRAMING_LENGTH || ev->length == 0);
}

static bool same(const struct transcript *a, const struct transcript *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->b, b->b, a->len));
}

/* A head on its own, in a new stream: the same head. */
static void check_reread(const struct http_event *ev)
{
	static struct http_stream again;
	struct http_event ev2;
	struct transcript a = {0}, b = {0};

	http_stream_init(&again);
	CHECK(http_stream_feed(&again, ev->head, ev->head_len, &ev2) == ev->head_len);
	CHECK(ev2.type == HTTP_STREAM_HEAD);
	put_head(&a, ev);
	put_head(&b, &ev2);
	CHECK(same(&a, &b));
	free(a.b);
	free(b.b);
}

/* The caller's view of one run: where the message stands, and what is accounted for. */
struct walk {
	const uint8_t *in;
	size_t pos;  /* bytes consumed */
	size_t mark; /* bytes reported as head or body, or skipped before a head */
	bool in_message, body_done, bad;
	enum http_framing framing;
	uint64_t length, body;
	unsigned char last[2]; /* the body's last two bytes */
};

static void on_head(struct walk *w, const struct http_event *ev, size_t used)
{
	size_t start;

	CHECK(!w->in_message);
	CHECK(ev->head_len <= w->pos + used);
	start = w->pos + used - ev->head_len;
	CHECK(start >= w->mark && !memcmp(ev->head, w->in + start, ev->head_len));
	/* what went unreported since the last message is empty lines */
	CHECK((start - w->mark) % 2 == 0);
	for (size_t i = w->mark; i < start; i += 2)
		CHECK(w->in[i] == '\r' && w->in[i + 1] == '\n');
	check_head(ev);
	check_reread(ev);
	w->mark = w->pos + used;
	w->in_message = true;
	w->framing = ev->framing;
	w->length = ev->length;
	w->body = 0;
}

static void on_body(struct walk *w, size_t used)
{
	CHECK(w->in_message && w->framing != HTTP_FRAMING_NONE);
	CHECK(w->pos == w->mark);
	w->mark += used;
	w->body += used;
	if (used >= 2)
		memcpy(w->last, w->in + w->pos + used - 2, 2);
	else
		w->last[0] = w->last[1], w->last[1] = w->in[w->pos];
}

static void on_end(struct walk *w)
{
	CHECK(w->in_message);
	if (w->framing == HTTP_FRAMING_LENGTH)
		CHECK(w->body == w->length);
	if (w->framing == HTTP_FRAMING_NONE)
		CHECK(w->body == 0);
	if (w->framing == HTTP_FRAMING_CHUNKED)
		CHECK(w->body >= 5 && w->last[0] == '\r' && w->last[1] == '\n');
	w->in_message = false;
}

static void record(struct walk *w, struct transcript *t, const struct http_event *ev, size_t used,
		   size_t given)
{
	CHECK(used <= given);
	if (t->in_body && ev->type != HTTP_STREAM_BODY && ev->type != HTTP_STREAM_MORE)
		put(t, "b", 1), t->in_body = false;
	switch (ev->type) {
	case HTTP_STREAM_MORE:
		CHECK(used == given);
		return;
	case HTTP_STREAM_HEAD:
		on_head(w, ev, used);
		put_head(t, ev);
		return;
	case HTTP_STREAM_BODY:
		CHECK(used > 0 && ev->n == used);
		on_body(w, used);
		if (!t->in_body)
			put(t, "B", 1), t->in_body = true;
		put(t, w->in + w->pos, used);
		return;
	case HTTP_STREAM_END:
		CHECK(used == 0);
		on_end(w);
		put(t, "E", 1);
		return;
	case HTTP_STREAM_BAD:
		CHECK(used == 0 && ev->why && ev->why[0]);
		w->bad = true;
		put(t, "X", 1);
		put(t, ev->why, strlen(ev->why) + 1);
		return;
	}
	CHECK(!"an event of no known type");
}

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Feeds the input in pieces: step bytes each, or random sizes when step is 0. */
static void run(const uint8_t *data, size_t size, size_t step, uint64_t seed, struct transcript *t)
{
	static struct http_stream s;
	struct walk w = {.in = data};
	struct http_event ev;
	size_t calls = 0;

	http_stream_init(&s);
	for (size_t got = 0; !w.bad && (got < size || w.pos < size);) {
		size_t piece = step ? step : (size_t)(next_random(&seed) % 24);
		got = size - got > piece ? got + piece : size;
		while (!w.bad) {
			const char *at = (const char *)data + w.pos;
			size_t used = http_stream_feed(&s, at, got - w.pos, &ev);
			/* every call moves on: bytes consumed, or an END (never two in a row) */
			CHECK(++calls <= 4 * size + 16);
			record(&w, t, &ev, used, got - w.pos);
			w.pos += used;
			if (ev.type == HTTP_STREAM_MORE)
				break;
		}
	}
	if (w.bad) {
		CHECK(http_stream_feed(&s, "GET / HTTP/1.1\r\n\r\n", 18, &ev) == 0);
		CHECK(ev.type == HTTP_STREAM_BAD);
	} else {
		CHECK(w.pos == size);
	}
	if (t->in_body)
		put(t, "b", 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct transcript whole = {0}, bytes = {0}, random = {0};
	uint64_t seed = 0xcbf29ce484222325u;

	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * 0x100000001b3u;
	run(data, size, SIZE_MAX, 0, &whole);
	run(data, size, 1, 0, &bytes);
	run(data, size, 0, seed | 1, &random);
	CHECK(same(&whole, &bytes) && same(&whole, &random));
	free(whole.b);
	free(bytes.b);
	free(random.b);
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the two plaintext streams of an intercepted HTTPS connection, driven as
 * exchange.c drives them, without the TLS and the sockets.
 *
 * Input: the client's bytes, the line "~~~", then the server's bytes (no such line: all of it
 * is the client's). The connection is to api.example.com:443, under a fixed set of [http]
 * rules. Checks beyond "no crash":
 *  - request side (http_stream_feed): each head is checked as exchange.c checks it (origin-form
 *    target, Host naming the connection's host, http_target_canon, http_rules_decide), and
 *    rewritten with http_kept_head around the canonical target (http_target_format). The head
 *    sent up is well formed, passes http_framing_refusal, and is read back by a new stream as
 *    ONE head, consuming all of it, with the same method, version, Host and body framing; its
 *    target is exactly the canonical one, which canonicalises to the same path and query and is
 *    decided the same way under the same rule (what goes up is what was decided); it keeps
 *    every header of the client's but the hop-by-hop ones, in order, and holds none of those.
 *    Every head is rewritten and checked, refused ones too; but as in exchange.c, the requests
 *    that go up (and get responses) are the allowed ones before the first refusal;
 *  - response side (http_stream_init_response): response k answers request k (expect_head
 *    when that was a HEAD); a final response (status >= 200) ends the request, interim ones do
 *    not; bytes after the last request's response, or a 101, end the exchange as exchange.c
 *    ends it. Fed whole, byte by byte and in random pieces: the same heads, body bytes, ends
 *    and refusal. A head is the bytes consumed, passes http_framing_refusal, has no body when
 *    it answers a HEAD or is 1xx/204/304, is not HTTP/1.0 and chunked, and is read the same on
 *    its own; a Content-Length body is exactly that long, a chunked one ends in CRLF, a
 *    close-delimited one never ends. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress_rule.h"
#include "http_proxy.h"
#include "http_rules.h"
#include "http_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_intercept: check failed: %s (%s:%d)\n", #cond,       \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#define HOST "api.example.com"
#define PORT 443
#define SEPARATOR "~~~\n"
/* requests that go up per input: more than any seed, few enough to stay fast */
#define MAX_REQUESTS 64

static const char *const allow_rules[] = {
    "GET " HOST "/repos/acme/**", "HEAD " HOST "/**",		"POST " HOST "/v1/chat/completions",
    "PUT " HOST "/upload/*",	  "* " HOST "/public/*?page=*", "OPTIONS " HOST "/**",
};
static const char *const deny_rules[] = {
    "* */admin/**",
    "DELETE " HOST "/**",
    "* " HOST "/repos/acme/secret*",
};

static struct http_rules rules;

static void rules_once(void)
{
	struct ab_err e = {0};

	if (rules.n)
		return;
	for (size_t i = 0; i < sizeof(deny_rules) / sizeof(deny_rules[0]); i++)
		CHECK(http_rules_add(&rules, true, deny_rules[i], &e) == 0);
	for (size_t i = 0; i < sizeof(allow_rules) / sizeof(allow_rules[0]); i++)
		CHECK(http_rules_add(&rules, false, allow_rules[i], &e) == 0);
	CHECK(http_rules_cover(&rules, HOST));
}

/* ---------- heads as a reader independent of http_stream sees them ---------- */

/* The header lines of a head (after its request line), one at a time: [*line, *line + *n),
 * CRLF excluded. false past the last one. */
static bool next_header(const char *head, size_t len, const char **pos, const char **line,
			size_t *n)
{
	const char *end = head + len - 2, *eol; /* the blank line's CRLF */

	if (!*pos)
		*pos = (const char *)memchr(head, '\n', len) + 1;
	if (*pos >= end)
		return false;
	eol = memchr(*pos, '\r', (size_t)(end - *pos));
	CHECK(eol && eol[1] == '\n');
	*line = *pos;
	*n = (size_t)(eol - *pos);
	*pos = eol + 2;
	return true;
}

static bool name_is(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name);

	return n > k && line[k] == ':' && !strncasecmp(line, name, k);
}

/* RFC 9110 7.6.1 and the proxy's own: what is about this hop only. */
static bool hop_by_hop(const char *line, size_t n)
{
	return name_is(line, n, "connection") || name_is(line, n, "keep-alive") ||
	       name_is(line, n, "upgrade") || name_is(line, n, "http2-settings") ||
	       (n >= 6 && !strncasecmp(line, "proxy-", 6));
}

/* ---------- the request side ---------- */

struct request_side {
	char methods[MAX_REQUESTS][16]; /* the requests that went up, in order */
	size_t n;
	bool refused; /* exchange.c ends the connection at the first refusal */
};

/* exchange.c's host_matches: the Host header names the connection's host and port. */
static bool host_matches(const struct http_event *ev)
{
	char host[256], name[256];
	const char *bad;
	unsigned port;

	if (!ev->host)
		return ev->http10;
	return http_split_authority(ev->host, ev->host_len, PORT, host, sizeof(host), &port) &&
	       egress_host_name(host, name, &bad) && !strcmp(name, HOST) && port == PORT;
}

static bool same_span(const char *a, size_t an, const char *b, size_t bn)
{
	if (!a || !b)
		return !a && !b;
	return an == bn && !memcmp(a, b, an);
}

/* The head sent up, read back: one head, the decided target (the client's when NULL), the
 * client's framing. */
static void check_reread(const struct http_event *ev, const char *up, size_t up_len,
			 const char *target)
{
	static struct http_stream s;
	struct http_event ev2;
	size_t tl = target ? strlen(target) : ev->target_len;

	if (!target)
		target = ev->target;
	http_stream_init(&s);
	CHECK(http_stream_feed(&s, up, up_len, &ev2) == up_len);
	CHECK(ev2.type == HTTP_STREAM_HEAD);
	CHECK(ev2.head_len == up_len);
	CHECK(same_span(ev2.method, ev2.method_len, ev->method, ev->method_len));
	CHECK(same_span(ev2.target, ev2.target_len, target, tl));
	CHECK(same_span(ev2.host, ev2.host_len, ev->host, ev->host_len));
	CHECK(ev2.http10 == ev->http10);
	CHECK(ev2.framing == ev->framing && ev2.length == ev->length);
}

/* The request line sent up: the client's method and version around target. */
static void check_request_line(const struct http_event *ev, const char *up, size_t up_len,
			       const char *target, size_t tl)
{
	size_t m = ev->method_len;

	CHECK(up_len >= m + 1 + tl + 11);
	CHECK(!memcmp(up, ev->method, m) && up[m] == ' ');
	CHECK(!memcmp(up + m + 1, target, tl));
	CHECK(!memcmp(up + m + 1 + tl, ev->http10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n", 11));
}

/* The head as sent up keeps the client's headers but the hop-by-hop ones, in order. */
static void check_headers(const struct http_event *ev, const char *up, size_t up_len)
{
	const char *p1 = NULL, *p2 = NULL, *l1, *l2;
	size_t n1, n2;

	for (;;) {
		bool more1;
		while ((more1 = next_header(ev->head, ev->head_len, &p1, &l1, &n1)) &&
		       hop_by_hop(l1, n1))
			;
		if (!more1) {
			CHECK(!next_header(up, up_len, &p2, &l2, &n2));
			return;
		}
		CHECK(next_header(up, up_len, &p2, &l2, &n2));
		CHECK(!hop_by_hop(l2, n2));
		CHECK(same_span(l1, n1, l2, n2));
	}
}

/* What went up is what was decided: the target as sent canonicalises to the same path and
 * query, and the rules decide it the same way, naming the same rule. */
static void check_decided(const char *method, const struct http_target *t, const char *target,
			  enum http_verdict v, const char *rule)
{
	struct http_target t2;
	const char *why = NULL, *rule2;
	char *again;

	CHECK(http_target_canon(target, strlen(target), &t2, &why) == 0);
	CHECK(!strcmp(t->path, t2.path));
	CHECK(t->query ? t2.query && !strcmp(t->query, t2.query) : !t2.query);
	CHECK(http_rules_decide(&rules, method, HOST, &t2, &rule2) == v && rule2 == rule);
	again = http_target_format(&t2);
	CHECK(again && !strcmp(again, target));
	free(again);
	http_target_free(&t2);
}

/* A head rewritten around its canonical target as exchange.c rewrites it (http_check.c's
 * http_check_request and http_kept_head), and checked. */
static void on_request_head(struct request_side *rq, const struct http_event *ev)
{
	char method[16];
	struct http_target t;
	const char *why = NULL, *rule = NULL;
	enum http_verdict v;
	char *target, *up;
	size_t up_len = 0;
	bool allowed;

	CHECK(ev->method && ev->target && ev->status == 0);
	if (ev->method_len >= sizeof(method) || !ev->target_len || ev->target[0] != '/' ||
	    !host_matches(ev)) {
		rq->refused = true;
		return;
	}
	memcpy(method, ev->method, ev->method_len);
	method[ev->method_len] = '\0';
	if (http_target_canon(ev->target, ev->target_len, &t, &why) < 0) {
		CHECK(why && why[0]);
		rq->refused = true;
		return;
	}
	v = http_rules_decide(&rules, method, HOST, &t, &rule);
	CHECK(v != HTTP_PASS && rule); /* the host has allow rules: a request is one or other */
	allowed = v == HTTP_ALLOW;
	target = http_target_format(&t);
	CHECK(target);
	up = http_kept_head(ev->head, ev->head_len, target, &up_len);
	CHECK(up);
	/* the request line grows by the target's growth at most, the headers only shrink */
	CHECK(up_len <= ev->head_len - ev->target_len + strlen(target));
	CHECK(up_len >= 4 && !memcmp(up + up_len - 4, "\r\n\r\n", 4));
	CHECK(!http_framing_refusal(up, up_len));
	check_request_line(ev, up, up_len, target, strlen(target));
	/* a canonical target may be longer than the client's (each byte it escapes is three), so
	 * the head sent up may pass the limit a head is read with */
	if (up_len <= HTTP_STREAM_MAX_HEAD)
		check_reread(ev, up, up_len, target);
	check_headers(ev, up, up_len);
	check_decided(method, &t, target, v, rule);
	free(up);
	/* a host no rule covers: the client's target kept (exchange.c passes no target) */
	up = http_kept_head(ev->head, ev->head_len, NULL, &up_len);
	CHECK(up && up_len <= ev->head_len);
	check_request_line(ev, up, up_len, ev->target, ev->target_len);
	check_reread(ev, up, up_len, NULL);
	check_headers(ev, up, up_len);
	free(up);
	free(target);
	http_target_free(&t);
	if (!allowed)
		rq->refused = true;
	else if (!rq->refused && rq->n < MAX_REQUESTS)
		memcpy(rq->methods[rq->n++], method, sizeof(method));
}

/* The client's stream, in pieces of random sizes (fuzz_http_stream checks that splits do not
 * matter to it): every head rewritten and checked. */
static void client_side(const uint8_t *in, size_t size, uint64_t seed, struct request_side *rq)
{
	static struct http_stream s;
	struct http_event ev;
	size_t pos = 0;

	http_stream_init(&s);
	for (size_t got = 0; got < size || pos < size;) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		got = size - got > seed % 64 ? got + seed % 64 : size;
		for (;;) {
			size_t used = http_stream_feed(&s, (const char *)in + pos, got - pos, &ev);
			pos += used;
			if (ev.type == HTTP_STREAM_MORE)
				break;
			if (ev.type == HTTP_STREAM_BAD) {
				rq->refused = true;
				return;
			}
			if (ev.type == HTTP_STREAM_HEAD)
				on_request_head(rq, &ev);
		}
	}
}

/* ---------- the response side ---------- */

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

static void put_head(struct transcript *t, const struct http_event *ev)
{
	unsigned char tag[3] = {'R', ev->http10, (unsigned char)ev->framing};

	put(t, tag, sizeof(tag));
	put(t, &ev->status, sizeof(ev->status));
	put(t, &ev->length, sizeof(ev->length));
	put(t, &ev->head_len, sizeof(ev->head_len));
	put(t, ev->head, ev->head_len);
}

static bool same(const struct transcript *a, const struct transcript *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->b, b->b, a->len));
}

/* Where the exchange stands, in one way of feeding the server's bytes. */
struct walk {
	const uint8_t *in;
	const struct request_side *rq;
	size_t pos;  /* bytes consumed */
	size_t mark; /* bytes reported as head or body, or skipped before a head */
	size_t k;    /* the request being answered */
	bool in_message, over, head_request;
	enum http_framing framing;
	uint64_t length, body;
	unsigned char last[2]; /* the body's last two bytes */
};

static bool no_body_status(int status)
{
	return status < 200 || status == 204 || status == 304;
}

static void check_response_head(const struct walk *w, const struct http_event *ev)
{
	static struct http_stream again;
	struct http_event ev2;

	CHECK(!ev->method && !ev->target);
	CHECK(ev->status >= 100 && ev->status <= 999);
	CHECK(ev->head_len >= 4 && ev->head_len <= HTTP_STREAM_MAX_HEAD);
	CHECK(!memcmp(ev->head, "HTTP/1.", 7));
	CHECK(!memcmp(ev->head + ev->head_len - 4, "\r\n\r\n", 4));
	CHECK(!http_framing_refusal(ev->head, ev->head_len));
	/* (a 204 or a HEAD's answer keeps its Content-Length in ev->length, its framing NONE) */
	CHECK(ev->length <= INT64_MAX);
	/* RFC 9112 6.1: chunked in an HTTP/1.0 message is faulty framing (refused) */
	CHECK(ev->framing != HTTP_FRAMING_CHUNKED || !ev->http10);
	if (w->head_request || no_body_status(ev->status))
		CHECK(ev->framing == HTTP_FRAMING_NONE);
	else
		CHECK(ev->framing != HTTP_FRAMING_NONE);
	/* on its own, in a new stream answering the same request: the same head */
	http_stream_init_response(&again, w->head_request);
	CHECK(http_stream_feed(&again, ev->head, ev->head_len, &ev2) == ev->head_len);
	CHECK(ev2.type == HTTP_STREAM_HEAD && ev2.status == ev->status);
	CHECK(ev2.http10 == ev->http10 && ev2.framing == ev->framing && ev2.length == ev->length);
}

static void on_head(struct walk *w, const struct http_event *ev, size_t used)
{
	size_t start;

	CHECK(!w->in_message);
	CHECK(ev->head_len <= w->pos + used);
	start = w->pos + used - ev->head_len;
	CHECK(start >= w->mark && !memcmp(ev->head, w->in + start, ev->head_len));
	CHECK((start - w->mark) % 2 == 0); /* what went unreported is empty lines */
	for (size_t i = w->mark; i < start; i += 2)
		CHECK(w->in[i] == '\r' && w->in[i + 1] == '\n');
	check_response_head(w, ev);
	w->mark = w->pos + used;
	w->in_message = true;
	w->framing = ev->framing;
	w->length = ev->length;
	w->body = 0;
	/* exchange.c never sent an Upgrade: a server that switches anyway breaks the exchange */
	if (ev->status == 101)
		w->over = true;
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

/* The response is over; a final one ends its request, and the next response answers the next
 * request (exchange.c sends it only now), or nothing may follow. */
static void on_end(struct http_stream *s, struct walk *w, int status)
{
	CHECK(w->in_message);
	CHECK(w->framing != HTTP_FRAMING_CLOSE);
	if (w->framing == HTTP_FRAMING_LENGTH)
		CHECK(w->body == w->length);
	if (w->framing == HTTP_FRAMING_NONE)
		CHECK(w->body == 0);
	if (w->framing == HTTP_FRAMING_CHUNKED)
		CHECK(w->body >= 5 && w->last[0] == '\r' && w->last[1] == '\n');
	w->in_message = false;
	if (status < 200)
		return;
	if (++w->k == w->rq->n) {
		w->over = true;
		return;
	}
	w->head_request = !strcmp(w->rq->methods[w->k], "HEAD");
	http_stream_expect_head(s, w->head_request);
}

static void record(struct http_stream *s, struct walk *w, struct transcript *t,
		   const struct http_event *ev, size_t used, size_t given, int *status)
{
	CHECK(used <= given);
	if (t->in_body && ev->type != HTTP_STREAM_BODY && ev->type != HTTP_STREAM_MORE)
		put(t, "b", 1), t->in_body = false;
	switch (ev->type) {
	case HTTP_STREAM_MORE:
		CHECK(used == given);
		return;
	case HTTP_STREAM_HEAD:
		*status = ev->status;
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
		on_end(s, w, *status);
		put(t, "E", 1);
		return;
	case HTTP_STREAM_BAD:
		CHECK(used == 0 && ev->why && ev->why[0]);
		w->over = true;
		put(t, "X", 1);
		put(t, ev->why, strlen(ev->why) + 1);
		return;
	}
	CHECK(!"an event of no known type");
}

/* Feeds the server's bytes in pieces: step bytes each, or random sizes when step is 0. */
static void server_side(const uint8_t *in, size_t size, const struct request_side *rq, size_t step,
			uint64_t seed, struct transcript *t)
{
	static struct http_stream s;
	struct walk w = {.in = in, .rq = rq};
	struct http_event ev;
	size_t calls = 0;
	int status = 0;

	if (!rq->n)
		return; /* no request went up: any byte from the server is one none asked for */
	w.head_request = !strcmp(rq->methods[0], "HEAD");
	http_stream_init_response(&s, w.head_request);
	for (size_t got = 0; !w.over && (got < size || w.pos < size);) {
		size_t piece = step;
		if (!piece) {
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			piece = (size_t)(seed % 24);
		}
		got = size - got > piece ? got + piece : size;
		while (!w.over) {
			size_t used =
			    http_stream_feed(&s, (const char *)in + w.pos, got - w.pos, &ev);
			CHECK(++calls <= 4 * size + 16);
			record(&s, &w, t, &ev, used, got - w.pos, &status);
			w.pos += used;
			if (ev.type == HTTP_STREAM_MORE)
				break;
		}
	}
	if (t->in_body)
		put(t, "b", 1);
	/* where the exchange ended, and why: the same whatever the pieces (a head refused has
	 * its bytes consumed as they came, but never reported) */
	put(t, w.over ? "O" : "M", 1);
	put(t, &w.mark, sizeof(w.mark));
	put(t, &w.k, sizeof(w.k));
	if (!w.over)
		CHECK(w.pos == size);
	/* a body delimited by the close is all the bytes after its head */
	if (w.in_message && w.framing == HTTP_FRAMING_CLOSE)
		CHECK(!w.over && w.mark == size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memmem(data, size, SEPARATOR, strlen(SEPARATOR));
	size_t client = sep ? (size_t)(sep - data) : size;
	const uint8_t *server = sep ? sep + strlen(SEPARATOR) : data + size;
	size_t server_len = (size_t)(data + size - server);
	static struct request_side rq;
	struct transcript whole = {0}, bytes = {0}, random = {0};
	uint64_t seed = 0xcbf29ce484222325u;

	rules_once();
	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * 0x100000001b3u;
	memset(&rq, 0, sizeof(rq));
	client_side(data, client, seed | 1, &rq);
	server_side(server, server_len, &rq, SIZE_MAX, 0, &whole);
	server_side(server, server_len, &rq, 1, 0, &bytes);
	server_side(server, server_len, &rq, 0, seed | 1, &random);
	CHECK(same(&whole, &bytes) && same(&whole, &random));
	free(whole.b);
	free(bytes.b);
	free(random.b);
	return 0;
}

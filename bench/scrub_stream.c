/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* bench/scrub_stream.c: the response scrubber (egress/cred_scrub.c) alone, on a body read in
 * pieces as the proxy reads it: creds_scrub_stream over MIB MiB in PIECE-byte pieces, each
 * copied in first (the proxy scrubs its read buffer in place). Built by bench/scrub against a
 * build tree's libagentbox_core.a and that tree's headers.
 *
 *   scrub_stream KIND MIB PIECE
 *
 * KIND: random (every byte as likely as any: forms start anywhere), text (lines of words and
 * base64 blobs wrapped at 76 characters, none of them the value: the matcher's work on
 * text-like data) or values (the value's hex form over and over: a hit everywhere and bytes
 * held at every piece's end). Prints the wall time in ms; exits 1 if a value came through. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cred_encode.h"
#include "credential.h"
#include "cred_fixture.h"

#define VALUE "Zq9-SECRET-same-length!"
#define PLACEHOLDER "ph-0123456789abcdefghij"

static uint64_t seed = 88172645463325252ull;

static uint64_t next(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static void text(struct cbuf *o, size_t n)
{
	static const char *const words[] = {
	    "the",	"proxy", "reads",	 "a",	  "body", "in", "pieces",
	    "{\"id\":", "42,",	 "\"ok\":true}", "data:", "GET"};
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	while (o->n < n && !o->oom) {
		if (next() % 4 == 0) {
			for (int i = 0; i < 76; i++)
				cbuf_put(o, &b64[next() % 64], 1);
		} else {
			for (int i = 0; i < 12; i++) {
				cbuf_put_str(o, words[next() % 12]);
				cbuf_put(o, " ", 1);
			}
		}
		cbuf_put(o, "\n", 1);
	}
}

static void body(struct cbuf *o, const char *kind, size_t n)
{
	if (!strcmp(kind, "random")) {
		while (o->n < n && !o->oom) {
			uint64_t r = next();
			cbuf_put(o, (const char *)&r, sizeof(r));
		}
	} else if (!strcmp(kind, "text")) {
		text(o, n);
	} else {
		char hex[2 * sizeof(VALUE)];
		for (size_t i = 0; i < sizeof(VALUE) - 1; i++)
			snprintf(hex + 2 * i, 3, "%02x", (unsigned char)VALUE[i]);
		while (o->n < n && !o->oom)
			cbuf_put(o, hex, 2 * (sizeof(VALUE) - 1));
	}
}

static struct creds *creds(void)
{
	struct policy_vars v = {"/h", "/", "u", "1", "/tmp"};
	struct ab_err e = {0};
	struct policy *p = policy_new(&v);
	struct creds *cs;

	if (!p || !(p->creds = calloc(1, sizeof(*p->creds))))
		exit(2);
	p->n_creds = 1;
	cred_fixture_bearer(&p->creds[0], "api", 30);
	if (creds_new(p, &cs, &e) < 0 || creds_set_placeholder(&cs->v[0], PLACEHOLDER) < 0 ||
	    creds_set_value(&cs->v[0], VALUE, strlen(VALUE)) < 0)
		exit(2);
	return cs;
}

int main(int argc, char **argv)
{
	struct creds_scrub st = {0};
	struct cbuf in = {0};
	struct timespec t0, t1;
	size_t piece, leaked = 0;
	char *buf, *out;
	size_t m;
	struct creds *cs;

	if (argc != 4 || !(piece = strtoul(argv[3], NULL, 10)) || !(buf = malloc(piece))) {
		fprintf(stderr, "usage: scrub_stream random|text|values MIB PIECE\n");
		return 2;
	}
	cs = creds();
	body(&in, argv[1], strtoul(argv[2], NULL, 10) << 20);
	if (in.oom)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t off = 0; off < in.n; off += piece) {
		size_t k = in.n - off < piece ? in.n - off : piece;
		memcpy(buf, in.s + off, k);
		if (creds_scrub_stream(cs, &st, buf, k, false, &out, &m) < 0)
			return 2;
		leaked += m && memmem(out, m, VALUE, strlen(VALUE)) != NULL;
	}
	if (creds_scrub_stream(cs, &st, NULL, 0, true, &out, &m) < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.1f\n",
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	creds_scrub_free(&st);
	return leaked ? 1 : 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the response side of credential brokering (cred_scrub.c) on arbitrary bodies
 * with a real value planted in them in one of its forms, read in pieces the input cuts.
 *
 * Byte 0 picks the form the value is planted in (as written, in other case, percent-encoded
 * once or twice, base64 in either alphabet after 0-2 bytes and maybe wrapped by a line break,
 * hex in either case, or none), byte 1 where in the body, byte 2 the size of the pieces; the
 * rest is the body. Checks: the body keeps its length; the pieces give the same bytes as the
 * whole (but before a line break: see check_same); the value as written, in any case, is not
 * in what either gives; where it was planted, decoded as it was encoded (%XX once or twice,
 * base64), it holds no value; scrubbing the output again finds nothing; a head keeps no value
 * as written. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cred_encode.h"
#include "credential.h"
#include "../unit/cred_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_cred_scrub: check failed: %s (%s:%d)\n", #cond,      \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#define PH "sk-PLACEHOLDER0123456789"
#define REAL "Real/Secret+Va%4alue=42&x%"

static struct creds *cs;
static struct policy *p;

static void setup(void)
{
	struct policy_vars v = {"/h", "/", "u", "1", "/tmp"};
	struct ab_err e = {0};

	p = policy_new(&v);
	p->n_creds = 1;
	p->creds = calloc(1, sizeof(*p->creds));
	cred_fixture_bearer(&p->creds[0], "api", 30);
	CHECK(creds_new(p, &cs, &e) == 0);
	CHECK(creds_set_placeholder(&cs->v[0], PH) == 0);
	CHECK(creds_set_value(&cs->v[0], REAL, strlen(REAL)) == 0);
}

/* The value in form `form` into o. */
static void plant(struct cbuf *o, unsigned form)
{
	static const char pre[] = "ab";
	struct cbuf raw = {0}, once = {0};

	switch (form % 10) {
	case 0:
		cbuf_put_str(o, REAL);
		break;
	case 1:
		for (const char *s = REAL; *s; s++) {
			char c = (*s >= 'a' && *s <= 'z') ? (char)(*s - 32) : *s;
			cbuf_put(o, &c, 1);
		}
		break;
	case 2:
	case 3:
		cenc_pct_encode(&once, REAL, strlen(REAL));
		if (form % 10 == 2)
			cbuf_put(o, once.s, once.n);
		else
			cenc_pct_encode(o, once.s, once.n);
		break;
	case 4:
	case 5:
	case 6:
	case 7:
		cbuf_put(&raw, pre, (form / 10) % 3);
		cbuf_put_str(&raw, REAL);
		cbuf_put_str(&raw, "zz");
		cenc_b64_encode(&once, (unsigned char *)raw.s, raw.n,
				form % 10 < 6 ? cenc_b64std : cenc_b64url);
		/* wrapped: a line break somewhere in it */
		cbuf_put(o, once.s, form & 64 ? (form >> 3) % once.n : once.n);
		if (form & 64) {
			cbuf_put_str(o, form & 128 ? "\r\n" : "\n");
			cbuf_put(o, once.s + (form >> 3) % once.n, once.n - (form >> 3) % once.n);
		}
		break;
	case 8:
		for (const char *s = REAL; *s; s++) {
			char q[3];
			snprintf(q, sizeof(q), form & 16 ? "%02X" : "%02x", (unsigned char)*s);
			cbuf_put(o, q, 2);
		}
		break;
	default:
		break;
	}
	cbuf_free(&raw);
	cbuf_free(&once);
}

static char *scrub(const char *in, size_t n, size_t step, uint32_t *found)
{
	struct creds_scrub st = {0};
	struct cbuf all = {0};
	size_t off = 0, m;
	char *out;

	while (off < n) {
		size_t k = n - off > step ? step : n - off;
		char *piece = malloc(k);
		CHECK(piece);
		memcpy(piece, in + off, k); /* scrubbed in place */
		CHECK(creds_scrub_stream(cs, &st, piece, k, false, &out, &m) == 0);
		cbuf_put(&all, out, m);
		free(piece);
		off += k;
	}
	CHECK(creds_scrub_stream(cs, &st, NULL, 0, true, &out, &m) == 0);
	cbuf_put(&all, out, m);
	CHECK(!all.oom && all.n == n && st.len == 0);
	*found = st.found;
	creds_scrub_free(&st);
	cbuf_put(&all, "", 0);
	return all.s;
}

static bool has_value(const char *s, size_t n)
{
	size_t m = strlen(REAL);

	for (size_t i = 0; i + m <= n; i++)
		if (!strncasecmp(s + i, REAL, m) && !memchr(s + i, '\0', m))
			return true;
	return false;
}

static void check_clean(const char *out, size_t n)
{
	uint32_t again;
	char *twice;

	CHECK(!has_value(out, n));
	twice = scrub(out, n, n ? n : 1, &again);
	CHECK(again == 0 && !memcmp(twice, out, n));
	free(twice);
}

/* Where the value was planted, decoded as it was encoded, no value is left. */
static void check_planted(const char *out, size_t at, size_t len, unsigned form)
{
	struct cbuf a = {0}, b = {0};

	if (form % 10 >= 4 && form % 10 <= 7) {
		for (size_t i = 0; i < len; i++)
			if (out[at + i] != '\r' && out[at + i] != '\n')
				cbuf_put(&b, &out[at + i], 1);
		if (cenc_b64_decode(&a, b.s ? b.s : "", b.n))
			CHECK(!memmem(a.s, a.n, REAL, strlen(REAL)));
		cbuf_free(&a);
		cbuf_free(&b);
	}
	if ((form % 10 == 2 || form % 10 == 3) && cenc_pct_decode(&a, out + at, len)) {
		CHECK(!has_value(a.s, a.n));
		if (cenc_pct_decode(&b, a.s, a.n))
			CHECK(!has_value(b.s, b.n));
	}
	cbuf_free(&a);
	cbuf_free(&b);
}

/* The pieces give the whole's bytes, but where docs/security.md says they may not: a base64
 * character that ends a short line at a piece's end is sent before the next piece can show a
 * form it shares bits with (up to four of the value's first byte; both outputs are checked
 * clean besides). */
static void check_same(const char *whole, const char *cut, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (whole[i] != cut[i])
			CHECK(i + 1 < n && (cut[i + 1] == '\n' || cut[i + 1] == '\r'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cbuf body = {0}, form = {0};
	uint32_t found;
	size_t at, step, n;
	char *whole, *cut, *head;
	bool oom;

	if (size < 3)
		return 0;
	if (!cs)
		setup();
	plant(&form, data[0]);
	at = size > 3 ? data[1] % (size - 3 + 1) : 0;
	step = data[2] % 64 + 1;
	cbuf_put(&body, data + 3, at);
	cbuf_put(&body, form.s, form.n);
	cbuf_put(&body, data + 3 + at, size - 3 - at);
	CHECK(!body.oom);
	whole = scrub(body.s, body.n, body.n ? body.n : 1, &found);
	cut = scrub(body.s, body.n, step, &found);
	check_same(whole, cut, body.n);
	check_clean(whole, body.n);
	check_planted(whole, at, form.n, data[0]);
	check_clean(cut, body.n);
	check_planted(cut, at, form.n, data[0]);
	head = creds_redact(cs, body.s, body.n, &n, &found, &oom);
	if (head)
		CHECK(!has_value(head, n));
	free(head);
	free(whole);
	free(cut);
	cbuf_free(&body);
	cbuf_free(&form);
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The response side of credential brokering (cred_scrub.c): a real value is overwritten in every
 * form the request side recognises a placeholder in (as written in any case, percent-encoded once
 * or twice, base64 in both alphabets at every alignment, hex in either case), in heads and in
 * bodies read in pieces cut anywhere, without changing a body's length; the bytes around it
 * stay as they were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "cred_encode.h"
#include "credential.h"
#include "cred_fixture.h"

#define PH "sk-PLACEHOLDERabcdefghij0123456789"
#define REAL "real-secret-VALUE/+=&42"
/* the same length as its placeholder: an echo shows the placeholder exactly */
#define PH_EQ "ph-0123456789abcdefghij"
#define REAL_EQ "Zq9-SECRET-same-length!"

static struct policy *pol(void)
{
	struct policy_vars v = {"/home/u", "/", "u", "1000", "/tmp"};
	struct policy *p = policy_new(&v);

	assert_non_null(p);
	p->n_creds = 2;
	p->creds = calloc(2, sizeof(*p->creds));
	for (int i = 0; i < 2; i++) {
		cred_fixture_bearer(&p->creds[i], i ? "eq" : "api", 40);
	}
	return p;
}

static struct creds *mk(struct policy *p)
{
	struct creds *cs;
	struct ab_err e = {0};

	assert_int_equal(creds_new(p, &cs, &e), 0);
	assert_int_equal(creds_set_placeholder(&cs->v[0], PH), 0);
	assert_int_equal(creds_set_placeholder(&cs->v[1], PH_EQ), 0);
	assert_int_equal(creds_set_value(&cs->v[0], REAL, strlen(REAL)), 0);
	assert_int_equal(creds_set_value(&cs->v[1], REAL_EQ, strlen(REAL_EQ)), 0);
	return cs;
}

/* The body as the client gets it, fed in pieces of `step` bytes (0: whole). */
static char *scrub_pieces(const struct creds *cs, const char *in, size_t n, size_t step,
			  uint32_t *found)
{
	struct creds_scrub st = {0};
	struct cbuf all = {0};
	size_t off = 0;

	do {
		size_t k = step && n - off > step ? step : n - off, m;
		char *piece = malloc(k + 1), *out;
		memcpy(piece, in + off, k); /* scrubbed in place */
		assert_int_equal(creds_scrub_stream(cs, &st, piece, k, false, &out, &m), 0);
		cbuf_put(&all, out, m);
		free(piece);
		off += k;
	} while (off < n);
	{
		char *out;
		size_t m;
		assert_int_equal(creds_scrub_stream(cs, &st, NULL, 0, true, &out, &m), 0);
		cbuf_put(&all, out, m);
	}
	assert_int_equal(st.len, 0);
	*found = st.found;
	creds_scrub_free(&st);
	assert_false(all.oom);
	assert_int_equal(all.n, n); /* a body keeps its length */
	if (!all.s)
		cbuf_put(&all, "", 0);
	return all.s;
}

/* The bytes, scrubbed again, hold nothing to find. */
static void assert_clean(const struct creds *cs, const char *s, size_t n)
{
	uint32_t again;
	char *twice = scrub_pieces(cs, s, n, 0, &again);

	assert_int_equal(again, 0);
	assert_memory_equal(twice, s, n);
	free(twice);
	assert_null(memmem(s, n, REAL, strlen(REAL)));
}

static void check_body(const struct creds *cs, const char *in, size_t n, uint32_t want)
{
	uint32_t found;
	char *whole = scrub_pieces(cs, in, n, 0, &found);

	assert_int_equal(found, want);
	assert_clean(cs, whole, n);
	/* cut anywhere, and a byte at a time: the same bytes come out */
	for (size_t step = 1; step < n; step += step < 8 ? 1 : 7) {
		char *cut = scrub_pieces(cs, in, n, step, &found);
		assert_int_equal(found, want);
		assert_memory_equal(cut, whole, n);
		free(cut);
	}
	free(whole);
}

static void test_as_written(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	const char *in = "{\"headers\":{\"Authorization\":\"Bearer " REAL "\"}}\n";
	uint32_t found;
	char *out;

	check_body(cs, in, strlen(in), 1);
	out = scrub_pieces(cs, in, strlen(in), 0, &found);
	/* the placeholder, cut to the value's length */
	assert_non_null(strstr(out, "Bearer sk-PLACEHOLDERabcdefghi\"}"));
	free(out);
	creds_free(cs);
}

static void test_other_case(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	char in[] = "x: REAL-SECRET-value/+=&42 y";

	check_body(cs, in, strlen(in), 1);
	creds_free(cs);
}

static void test_same_length_placeholder(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	const char *in = "echo=" REAL_EQ ";";
	uint32_t found;
	char *out = scrub_pieces(cs, in, strlen(in), 0, &found);

	(void)state;
	assert_int_equal(found, 2);
	assert_string_equal(out, "echo=" PH_EQ ";");
	free(out);
	creds_free(cs);
}

static void test_percent_encoded(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	const char *forms[] = {
	    "Location: /dir/?api_key=real-secret-VALUE%2F%2B%3D%2642&x=1",
	    "q=real-secret-VALUE%2f%2b%3d%2642",
	    "q=%72%65al-secret-VALUE%2F%2B%3D%2642",
	    "q=real-secret-VALUE%252F%252B%253D%252642",
	    "q=%2572eal-secret-VALUE%252f%2B=%2642",
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		check_body(cs, forms[i], strlen(forms[i]), 1);
	creds_free(cs);
}

/* base64 of pre + REAL + post, in the alphabet: the value's bits are gone, the bytes around it
 * decode as they were. */
static void b64_case(const struct creds *cs, const char *alpha, size_t pre)
{
	struct cbuf raw = {0}, enc = {0}, dec = {0};
	uint32_t found;
	char *out;

	cbuf_put(&raw, "<<", pre);
	cbuf_put_str(&raw, REAL);
	cbuf_put_str(&raw, ">>!");
	cenc_b64_encode(&enc, (unsigned char *)raw.s, raw.n, alpha);
	check_body(cs, enc.s, enc.n, 1);
	out = scrub_pieces(cs, enc.s, enc.n, 0, &found);
	assert_true(cenc_b64_decode(&dec, out, enc.n));
	assert_int_equal(dec.n, raw.n);
	assert_memory_equal(dec.s, "<<", pre);
	assert_memory_equal(dec.s + pre, "sk-PLACEHOLDERabcdefghij", strlen(REAL));
	assert_memory_equal(dec.s + pre + strlen(REAL), ">>!", 3);
	free(out);
	cbuf_free(&raw);
	cbuf_free(&enc);
	cbuf_free(&dec);
}

static void test_base64(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);

	for (size_t pre = 0; pre < 3; pre++) {
		b64_case(cs, cenc_b64std, pre);
		b64_case(cs, cenc_b64url, pre);
	}
	creds_free(cs);
}

/* Base64 wrapped in lines (MIME, PEM, an API's file contents): a line break anywhere in the
 * value's characters, or right before or after them, hides nothing. */
static void test_base64_wrapped(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	struct cbuf raw = {0}, enc = {0};

	cbuf_put_str(&raw, "a");
	cbuf_put_str(&raw, REAL);
	cbuf_put_str(&raw, "!");
	cenc_b64_encode(&enc, (unsigned char *)raw.s, raw.n, cenc_b64std);
	for (size_t cut = 1; cut < enc.n; cut++) {
		for (int crlf = 0; crlf < 2; crlf++) {
			struct cbuf in = {0}, flat = {0}, dec = {0};
			uint32_t found;
			char *out;
			cbuf_put(&in, enc.s, cut);
			cbuf_put_str(&in, crlf ? "\r\n" : "\n");
			cbuf_put(&in, enc.s + cut, enc.n - cut);
			check_body(cs, in.s, in.n, 1);
			out = scrub_pieces(cs, in.s, in.n, 0, &found);
			for (size_t i = 0; i < in.n; i++)
				if (out[i] != '\r' && out[i] != '\n')
					cbuf_put(&flat, &out[i], 1);
			assert_true(cenc_b64_decode(&dec, flat.s, flat.n));
			assert_memory_equal(dec.s, "a", 1);
			assert_memory_equal(dec.s + 1, "sk-PLACEHOLDERabcdefghi", strlen(REAL));
			assert_memory_equal(dec.s + 1 + strlen(REAL), "!", 1);
			free(out);
			cbuf_free(&in);
			cbuf_free(&flat);
			cbuf_free(&dec);
		}
	}
	cbuf_free(&raw);
	cbuf_free(&enc);
	creds_free(cs);
}

static void test_hex(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	char lower[128] = "id=", upper[128] = "id=";

	for (size_t i = 0; i < strlen(REAL); i++) {
		snprintf(lower + strlen(lower), 3, "%02x", (unsigned char)REAL[i]);
		snprintf(upper + strlen(upper), 3, "%02X", (unsigned char)REAL[i]);
	}
	check_body(cs, lower, strlen(lower), 1);
	check_body(cs, upper, strlen(upper), 1);
	creds_free(cs);
}

/* A long body goes through the 16- and 32-byte first pass: the value at each offset of a block,
 * and across blocks, is found all the same. */
static void test_long_body(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	static const size_t at[] = {0, 1, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 200, 276};
	char body[300];

	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		for (size_t i = 0; i < sizeof(body); i++)
			body[i] = "lorem ipsum dolor sit amet, {\"k\": [1, 2]}\n"[i % 41];
		memcpy(body + at[k], REAL, strlen(REAL));
		check_body(cs, body, sizeof(body), 1);
	}
	creds_free(cs);
}

/* Bytes that cannot start a form go out at once: a stream of events is not held up. */
static void test_nothing_held(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	struct creds_scrub st = {0};
	char ev[] = "data: {\"delta\":\"hello\"}\n\n", a[] = "x real-sec",
	     b[] = "ret-VALUE/+=&42\n";
	char *out;
	size_t m;

	assert_int_equal(creds_scrub_stream(cs, &st, ev, strlen(ev), false, &out, &m), 0);
	assert_int_equal(m, strlen(ev));
	assert_string_equal(ev, "data: {\"delta\":\"hello\"}\n\n");
	/* a piece that ends where the value might start is held back */
	assert_int_equal(creds_scrub_stream(cs, &st, a, 10, false, &out, &m), 0);
	assert_true(m < 10);
	assert_int_equal(creds_scrub_stream(cs, &st, b, 16, false, &out, &m), 0);
	assert_int_equal(st.found, 1);
	creds_scrub_free(&st);
	creds_free(cs);
}

/* How much of a piece goes out at once: the same whether its last bytes begin a value (in any
 * form) or not, so that an origin echoing the command's guesses tells it nothing (a guess held
 * back whole exactly when it was right gave the value away a character at a time). */
static size_t sent_of(struct creds *cs, const char *filler, size_t nf, const char *tail, size_t k)
{
	struct creds_scrub st = {0};
	char *piece = malloc(nf + k), *out;
	size_t m;

	assert_non_null(piece);
	memcpy(piece, filler, nf);
	memcpy(piece + nf, tail, k);
	assert_int_equal(creds_scrub_stream(cs, &st, piece, nf + k, false, &out, &m), 0);
	creds_scrub_free(&st);
	free(piece);
	return m;
}

static void test_hold_tells_nothing(void **state)
{
	struct creds *cs = mk(*state);
	struct cbuf forms[4] = {{0}};
	char filler[1500];

	for (size_t i = 0; i < sizeof(filler); i++)
		filler[i] = "lorem ipsum, {\"k\": [1, 2]} "[i % 27];
	cbuf_put(&forms[0], REAL, strlen(REAL));
	for (const char *v = REAL; *v; v++) {
		char q[8];
		snprintf(q, sizeof(q), "%02x", (unsigned char)*v);
		cbuf_put(&forms[1], q, 2);
		snprintf(q, sizeof(q), "%%%02X", (unsigned char)*v);
		cbuf_put(&forms[2], q, 3);
	}
	cenc_b64_encode(&forms[3], (const unsigned char *)REAL, strlen(REAL), cenc_b64std);
	for (size_t f = 0; f < 4; f++) {
		assert_false(forms[f].oom);
		for (size_t k = 1; k < forms[f].n; k++) {
			char wrong[512];
			memcpy(wrong, forms[f].s, k);
			/* the last byte changed within its own kind: a guess one character off */
			wrong[k - 1] = wrong[k - 1] == '0'   ? '1'
				       : wrong[k - 1] == 'A' ? 'B'
				       : wrong[k - 1] == 'a' ? 'b'
							     : '0';
			assert_int_equal(sent_of(cs, filler, sizeof(filler), forms[f].s, k),
					 sent_of(cs, filler, sizeof(filler), wrong, k));
		}
		cbuf_free(&forms[f]);
	}
	creds_free(cs);
}

static void test_head(void **state)
{
	struct creds *cs = mk(state ? *state : NULL);
	const char *h =
	    "HTTP/1.1 301 Moved\r\nLocation: /d/?api_key=real-secret-VALUE%2F%2B%3D%2642"
	    "\r\nX-Echo: " REAL "\r\nX-Eq: " REAL_EQ "\r\n\r\n";
	uint32_t found;
	size_t n;
	bool oom;
	char *out = creds_redact(cs, h, strlen(h), &n, &found, &oom);

	assert_non_null(out);
	assert_int_equal(found, 3);
	/* as written, the placeholder itself: a client that follows or echoes it gets it back */
	assert_string_equal(out, "HTTP/1.1 301 Moved\r\nLocation: /d/?api_key=" PH "\r\nX-Echo: " PH
				 "\r\nX-Eq: " PH_EQ "\r\n\r\n");
	free(out);
	assert_null(creds_redact(cs, "HTTP/1.1 200 OK\r\n\r\n", 19, &n, &found, &oom));
	assert_false(oom);
	creds_free(cs);
}

/* Credentials with the given values (and the file's placeholders). */
static struct creds *mk_values(struct policy *p, const char *v0, const char *v1)
{
	struct creds *cs;
	struct ab_err e = {0};

	assert_int_equal(creds_new(p, &cs, &e), 0);
	assert_int_equal(creds_set_placeholder(&cs->v[0], PH), 0);
	assert_int_equal(creds_set_placeholder(&cs->v[1], PH_EQ), 0);
	assert_int_equal(creds_set_value(&cs->v[0], v0, strlen(v0)), 0);
	assert_int_equal(creds_set_value(&cs->v[1], v1, strlen(v1)), 0);
	return cs;
}

/* A value holding '%' and hex digits, percent-encoded once: "%25" is its own '%', not the
 * start of "%25XX". */
static void test_percent_in_value(void **state)
{
	struct creds *cs = mk_values(*state, "pass%abcdXY12", "other-value-0123");
	const char *forms[] = {"x=pass%25abcdXY12&", "x=pass%abcdXY12&", "x=pass%2525abcdXY12&",
			       "x=pass%25ab%63dXY12&"};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		check_body(cs, forms[i], strlen(forms[i]), 1);
	creds_free(cs);
}

/* A value ending in '%', then an escape that spells the first character of its base64 ("%55",
 * 'U'), then the rest of that base64: the base64 read through the escape starts inside the value.
 * Cut inside the base64, the value must not be overwritten before the base64 is read again whole
 * (it would no longer start with the escape, and all but its first character would come out). */
static void test_form_starting_inside_value(void **state)
{
	static const char value[] = "Real/Secret+Va%4alue=42&x%";
	struct creds *cs = mk_values(*state, value, "other-value-0123");
	struct cbuf b64 = {0}, body = {0};
	char esc[3];

	cenc_b64_encode(&b64, (const unsigned char *)value, strlen(value), cenc_b64std);
	snprintf(esc, sizeof(esc), "%02X", (unsigned char)b64.s[0]);
	cbuf_put_str(&body, "<");
	cbuf_put_str(&body, value);
	cbuf_put_str(&body, esc);
	cbuf_put(&body, b64.s + 1, b64.n - 1);
	cbuf_put_str(&body, ">");
	assert_false(body.oom || b64.oom);
	check_body(cs, body.s, body.n, 1);
	for (size_t step = 1; step < body.n; step++) {
		uint32_t found;
		char *out = scrub_pieces(cs, body.s, body.n, step, &found);
		assert_null(memmem(out, body.n, b64.s + 1, 16));
		free(out);
	}
	cbuf_free(&b64);
	cbuf_free(&body);
	creds_free(cs);
}

/* A form that may start inside a hit found whole ("Fh", the base64 of "aa" one byte in, and
 * "h", which may start it two bytes in): cut there, the hit's lead character (the 'W' before it,
 * which holds four of its bits) is overwritten all the same, as whole. */
static void test_hit_before_held_form(void **state)
{
	struct creds *cs = mk_values(*state, "aa", "other-value-0123");

	check_body(cs, "0WFhUxg=", 8, 1);
	creds_free(cs);
}

/* An origin that sends a value's hex form over and over, nothing between: the scrubber holds
 * back no more than a form may take, piece after piece, and lets nothing through. */
static void test_held_bytes_bounded(void **state)
{
	static const char value[] = "Zq9-SECRET-same-length!";
	struct creds *cs = mk_values(*state, value, "other-value-0123");
	struct creds_scrub st = {0};
	struct cbuf hex = {0}, body = {0}, all = {0};
	char *out;
	size_t m;

	for (const char *v = value; *v; v++) {
		char q[3];
		snprintf(q, sizeof(q), "%02x", (unsigned char)*v);
		cbuf_put(&hex, q, 2);
	}
	for (int i = 0; i < 2000; i++)
		cbuf_put(&body, hex.s, hex.n);
	assert_false(hex.oom || body.oom);
	for (size_t off = 0; off < body.n; off += 4096) {
		size_t k = body.n - off < 4096 ? body.n - off : 4096;
		char *piece = malloc(k);
		assert_non_null(piece);
		memcpy(piece, body.s + off, k);
		assert_int_equal(creds_scrub_stream(cs, &st, piece, k, false, &out, &m), 0);
		cbuf_put(&all, out, m);
		free(piece);
		/* the bound: the longest form (hex) read at its widest, and one character more */
		assert_true(st.len <= 7 * hex.n + 3);
	}
	assert_int_equal(creds_scrub_stream(cs, &st, NULL, 0, true, &out, &m), 0);
	cbuf_put(&all, out, m);
	assert_int_equal(all.n, body.n);
	assert_null(memmem(all.s, all.n, hex.s, hex.n));
	creds_scrub_free(&st);
	cbuf_free(&hex);
	cbuf_free(&body);
	cbuf_free(&all);
	creds_free(cs);
}

/* One value the start of another: the longer one is overwritten whole, whole or in pieces. */
static void test_prefix_values(void **state)
{
	struct creds *cs =
	    mk_values(*state, "tok_1234567890abcd", "tok_1234567890abcdSECRETSUFFIX99");
	const char *in = "v=tok_1234567890abcdSECRETSUFFIX99; w=tok_1234567890abcd;";
	uint32_t found;
	char *out;

	check_body(cs, in, strlen(in), 3);
	out = scrub_pieces(cs, in, strlen(in), 0, &found);
	assert_null(strstr(out, "SUFFIX"));
	free(out);
	creds_free(cs);
}

/* base64 of raw, scrubbed whole and in pieces, decodes to want. */
static void b64_decodes_to(const struct creds *cs, const char *raw, size_t n, const char *alpha,
			   const char *want)
{
	struct cbuf enc = {0}, dec = {0};
	uint32_t found;
	char *out;

	cenc_b64_encode(&enc, (const unsigned char *)raw, n, alpha);
	check_body(cs, enc.s, enc.n, 1);
	out = scrub_pieces(cs, enc.s, enc.n, 0, &found);
	assert_true(cenc_b64_decode(&dec, out, enc.n));
	assert_int_equal(dec.n, n);
	assert_memory_equal(dec.s, want, n);
	free(out);
	cbuf_free(&enc);
	cbuf_free(&dec);
}

/* The value twice back to back in base64 (the character between them holds bits of both), and
 * a URL-safe '_' next to characters both alphabets share: every boundary character is
 * rewritten, the bytes around stay. */
static void test_base64_boundaries(void **state)
{
	struct creds *cs = mk(*state);
	const char *stand_in = "sk-PLACEHOLDERabcdefghi";

	{
		char raw[64], want[64];
		snprintf(raw, sizeof(raw), "%s%s~?", REAL, REAL);
		snprintf(want, sizeof(want), "%s%s~?", stand_in, stand_in);
		b64_decodes_to(cs, raw, strlen(raw), cenc_b64std, want);
	}
	creds_free(cs);
	cs = mk_values(*state, "secret-valu-0123456789?", "other-value-0123");
	b64_decodes_to(cs, "secret-valu-0123456789?\xff\xfe", 25, cenc_b64url,
		       "sk-PLACEHOLDERabcdefghi\xff\xfe");
	creds_free(cs);
}

/* JSON may write '/' as \/ (PHP does by default). */
static void test_json_slash(void **state)
{
	struct creds *cs = mk(*state);
	const char *in = "{\"k\":\"real-secret-VALUE\\/+=&42\"}";

	check_body(cs, in, strlen(in), 1);
	creds_free(cs);
}

static int setup(void **state)
{
	*state = pol();
	return 0;
}

static int teardown(void **state)
{
	policy_free(*state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_as_written),
	    cmocka_unit_test(test_other_case),
	    cmocka_unit_test(test_same_length_placeholder),
	    cmocka_unit_test(test_percent_encoded),
	    cmocka_unit_test(test_base64),
	    cmocka_unit_test(test_base64_wrapped),
	    cmocka_unit_test(test_hex),
	    cmocka_unit_test(test_long_body),
	    cmocka_unit_test(test_nothing_held),
	    cmocka_unit_test(test_hold_tells_nothing),
	    cmocka_unit_test(test_head),
	    cmocka_unit_test(test_percent_in_value),
	    cmocka_unit_test(test_form_starting_inside_value),
	    cmocka_unit_test(test_hit_before_held_form),
	    cmocka_unit_test(test_held_bytes_bounded),
	    cmocka_unit_test(test_prefix_values),
	    cmocka_unit_test(test_base64_boundaries),
	    cmocka_unit_test(test_json_slash),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

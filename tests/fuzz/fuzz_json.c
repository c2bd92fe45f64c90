/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the JSON string escaper (json_key, json_strn).
 *
 * Writes {"KEY":"VALUE"} where KEY is the input up to its first NUL and VALUE is every input
 * byte. Checks that the text is pure printable ASCII, then decodes both strings with a small
 * independent JSON string decoder and compares them with what json.h promises: valid UTF-8
 * comes back unchanged, and each byte that does not start a valid UTF-8 sequence becomes U+FFFD.
 * The reference UTF-8 validator is table-driven (Unicode 15, table 3-7), unlike json.c's. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_json: check failed: %s (%s:%d)\n", #cond, __FILE__,  \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct bytes {
	uint8_t *b;
	size_t n, cap;
};

static void add(struct bytes *o, const uint8_t *s, size_t n)
{
	if (o->n + n > o->cap) {
		size_t cap = (o->n + n) * 2 + 16;
		uint8_t *nb = realloc(o->b, cap);
		CHECK(nb != NULL);
		o->b = nb;
		o->cap = cap;
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
}

static void add_cp(struct bytes *o, uint32_t cp)
{
	uint8_t u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (uint8_t)cp, n = 1;
	} else if (cp < 0x800) {
		u[0] = (uint8_t)(0xc0 | cp >> 6), u[1] = (uint8_t)(0x80 | (cp & 0x3f)), n = 2;
	} else if (cp < 0x10000) {
		u[0] = (uint8_t)(0xe0 | cp >> 12), u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (uint8_t)(0x80 | (cp & 0x3f)), n = 3;
	} else {
		u[0] = (uint8_t)(0xf0 | cp >> 18), u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 4;
	}
	add(o, u, n);
}

/* Length of the well-formed UTF-8 sequence at s (n > 0 bytes left), or 0. */
static size_t ref_utf8_len(const uint8_t *s, size_t n)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c == 0xe0)
		len = 3, lo = 0xa0;
	else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
		len = 3;
	else if (c == 0xed)
		len = 3, hi = 0x9f;
	else if (c == 0xf0)
		len = 4, lo = 0x90;
	else if (c >= 0xf1 && c <= 0xf3)
		len = 4;
	else if (c == 0xf4)
		len = 4, hi = 0x8f;
	else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* What the escaper promises to preserve: s with each byte that does not start a well-formed
 * sequence replaced by U+FFFD. Sets *valid when s is entirely valid UTF-8. */
static void reference(const uint8_t *s, size_t n, struct bytes *o, bool *valid)
{
	static const uint8_t fffd[] = {0xef, 0xbf, 0xbd};

	*valid = true;
	for (size_t i = 0; i < n;) {
		size_t len = ref_utf8_len(s + i, n - i);
		if (len) {
			add(o, s + i, len);
			i += len;
		} else {
			add(o, fffd, sizeof(fffd));
			*valid = false;
			i++;
		}
	}
}

static int hex4(const char *p, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/* Decodes the JSON string starting at *pp (at its opening quote) into o; advances *pp past the
 * closing quote. Strict: a lone surrogate or an unknown escape fails the check. */
static void decode_string(const char **pp, struct bytes *o)
{
	const char *p = *pp;

	CHECK(*p == '"');
	p++;
	while (*p != '"') {
		CHECK(*p != '\0');
		if (*p != '\\') {
			add(o, (const uint8_t *)p, 1);
			p++;
			continue;
		}
		p++;
		switch (*p) {
		case '"':
			add(o, (const uint8_t *)"\"", 1);
			p++;
			break;
		case '\\':
			add(o, (const uint8_t *)"\\", 1);
			p++;
			break;
		case '/':
			add(o, (const uint8_t *)"/", 1);
			p++;
			break;
		case 'b':
			add(o, (const uint8_t *)"\b", 1);
			p++;
			break;
		case 'f':
			add(o, (const uint8_t *)"\f", 1);
			p++;
			break;
		case 'n':
			add(o, (const uint8_t *)"\n", 1);
			p++;
			break;
		case 'r':
			add(o, (const uint8_t *)"\r", 1);
			p++;
			break;
		case 't':
			add(o, (const uint8_t *)"\t", 1);
			p++;
			break;
		case 'u': {
			uint32_t cp, lo;
			CHECK(hex4(p + 1, &cp) == 0);
			p += 5;
			CHECK(cp < 0xdc00 || cp > 0xdfff); /* no lone low surrogate */
			if (cp >= 0xd800 && cp <= 0xdbff) {
				CHECK(p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0);
				CHECK(lo >= 0xdc00 && lo <= 0xdfff);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			add_cp(o, cp);
			break;
		}
		default:
			CHECK(!"unknown escape");
		}
	}
	*pp = p + 1;
}

static void check_same(const struct bytes *got, const struct bytes *want)
{
	CHECK(got->n == want->n);
	CHECK(got->n == 0 || !memcmp(got->b, want->b, got->n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json j;
	struct bytes key = {0}, val = {0}, want_key = {0}, want_val = {0};
	size_t key_len = strnlen((const char *)data, size);
	char *key_str = malloc(key_len + 1);
	const char *t, *p;
	bool valid;

	CHECK(key_str != NULL);
	memcpy(key_str, data, key_len);
	key_str[key_len] = '\0';

	json_init(&j);
	json_obj_begin(&j);
	json_key(&j, key_str);
	json_strn(&j, (const char *)data, size);
	json_obj_end(&j);
	t = json_text(&j);
	CHECK(t != NULL);
	for (p = t; *p; p++)
		CHECK(*p >= 0x20 && *p < 0x7f); /* pure printable ASCII */
	CHECK((size_t)(p - t) == j.len);

	p = t;
	CHECK(*p++ == '{');
	decode_string(&p, &key);
	CHECK(*p++ == ':');
	decode_string(&p, &val);
	CHECK(*p++ == '}');
	CHECK(*p == '\0');

	reference((const uint8_t *)key_str, key_len, &want_key, &valid);
	check_same(&key, &want_key);
	reference(data, size, &want_val, &valid);
	check_same(&val, &want_val);
	if (valid) /* valid UTF-8 round-trips byte for byte */
		CHECK(val.n == size && (size == 0 || !memcmp(val.b, data, size)));

	json_free(&j);
	free(key_str);
	free(key.b);
	free(val.b);
	free(want_key.b);
	free(want_val.b);
	return 0;
}

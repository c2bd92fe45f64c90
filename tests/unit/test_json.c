/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for json.c: escaping (quotes, backslashes, control characters, DEL, UTF-8 and
 * invalid UTF-8), nesting and separators, and the unbalanced/overflow cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_check.h"

/* The JSON text json_strn produces for s[0..n) as a top-level value (malloc'd). */
static char *encode_n(const char *s, size_t n)
{
	struct json j;
	char *out;

	json_init(&j);
	json_strn(&j, s, n);
	assert_non_null(json_text(&j));
	out = strdup(json_text(&j));
	json_free(&j);
	assert_non_null(out);
	return out;
}

static void expect_encoding_n(const char *s, size_t n, const char *want)
{
	char *got = encode_n(s, n);

	if (strcmp(got, want)) {
		print_error("encoded as %s\nexpected   %s\n", got, want);
		free(got);
		fail();
	}
	assert_true(json_valid(got));
	assert_true(json_printable_ascii(got));
	free(got);
}

static void expect_encoding(const char *s, const char *want)
{
	expect_encoding_n(s, strlen(s), want);
}

static void test_plain_ascii(void **state)
{
	(void)state;
	expect_encoding("", "\"\"");
	expect_encoding("hello, world", "\"hello, world\"");
	expect_encoding(" !#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~",
			"\" !#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~\"");
}

static void test_quote_and_backslash(void **state)
{
	(void)state;
	expect_encoding("a\"b", "\"a\\\"b\"");
	expect_encoding("a\\b", "\"a\\\\b\"");
	expect_encoding("\\\"\\", "\"\\\\\\\"\\\\\"");
	expect_encoding("C:\\path\\\"x\"", "\"C:\\\\path\\\\\\\"x\\\"\"");
}

static void test_control_characters(void **state)
{
	(void)state;
	expect_encoding("\n\t\r", "\"\\n\\t\\r\"");
	expect_encoding("\x01", "\"\\u0001\"");
	expect_encoding("\b\f", "\"\\u0008\\u000c\"");
	expect_encoding("a\x1b[31mb", "\"a\\u001b[31mb\"");
	expect_encoding("\x1f", "\"\\u001f\"");
	/* an embedded NUL is data, not the end of the string */
	expect_encoding_n("a\0b", 3, "\"a\\u0000b\"");
}

static void test_del(void **state)
{
	(void)state;
	expect_encoding("\x7f", "\"\\u007f\"");
	expect_encoding("x\x7fy", "\"x\\u007fy\"");
}

static void test_utf8_two_byte(void **state)
{
	(void)state;
	expect_encoding("caf\xc3\xa9", "\"caf\\u00e9\"");
	expect_encoding("\xc2\x80", "\"\\u0080\""); /* lowest 2-byte code point */
	expect_encoding("\xdf\xbf", "\"\\u07ff\""); /* highest 2-byte code point */
	expect_encoding("\xd0\x96", "\"\\u0416\""); /* CYRILLIC ZHE */
}

static void test_utf8_three_byte(void **state)
{
	(void)state;
	expect_encoding("\xe2\x82\xac", "\"\\u20ac\""); /* EURO SIGN */
	expect_encoding("\xe0\xa0\x80", "\"\\u0800\""); /* lowest 3-byte code point */
	expect_encoding("\xef\xbf\xbf", "\"\\uffff\"");
	expect_encoding("\xed\x9f\xbf", "\"\\ud7ff\""); /* just below the surrogates */
	expect_encoding("\xee\x80\x80", "\"\\ue000\""); /* just above them */
}

static void test_utf8_four_byte_surrogate_pairs(void **state)
{
	(void)state;
	expect_encoding("\xf0\x9f\x98\x80", "\"\\ud83d\\ude00\""); /* U+1F600 */
	expect_encoding("\xf0\x90\x80\x80", "\"\\ud800\\udc00\""); /* U+10000 */
	expect_encoding("\xf4\x8f\xbf\xbf", "\"\\udbff\\udfff\""); /* U+10FFFF */
	expect_encoding("a\xf0\x9f\x98\x80z", "\"a\\ud83d\\ude00z\"");
}

static void test_invalid_utf8_lone_continuation(void **state)
{
	(void)state;
	expect_encoding("\x80", "\"\\ufffd\"");
	expect_encoding("a\xbfz", "\"a\\ufffdz\"");
	expect_encoding("\xff", "\"\\ufffd\"");
	expect_encoding("\xfe\xff", "\"\\ufffd\\ufffd\"");
}

static void test_invalid_utf8_overlong(void **state)
{
	(void)state;
	/* overlong '/' in 2, 3 and 4 bytes: every byte is replaced, nothing decodes to '/' */
	expect_encoding("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	expect_encoding("\xc1\xbf", "\"\\ufffd\\ufffd\"");
	expect_encoding("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	expect_encoding("\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* overlong NUL */
	expect_encoding("\xc0\x80", "\"\\ufffd\\ufffd\"");
}

static void test_invalid_utf8_surrogates_and_range(void **state)
{
	(void)state;
	/* U+D800 and U+DFFF encoded in UTF-8 (CESU-style) are not valid UTF-8 */
	expect_encoding("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	expect_encoding("\xed\xbf\xbf", "\"\\ufffd\\ufffd\\ufffd\"");
	/* a surrogate pair encoded as two 3-byte sequences */
	expect_encoding("\xed\xa0\xbd\xed\xb8\x80",
			"\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* above U+10FFFF */
	expect_encoding("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	expect_encoding("\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

/* Strips every \ufffd from a JSON string literal; what is left must equal rest. */
static void expect_replaced_then(const char *s, size_t n, const char *rest)
{
	char *got = encode_n(s, n), *w = got;
	unsigned replaced = 0;

	assert_true(json_valid(got));
	assert_true(json_printable_ascii(got));
	for (const char *r = got; *r;) {
		if (!strncmp(r, "\\ufffd", 6)) {
			r += 6;
			replaced++;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
	assert_true(replaced >= 1);
	assert_string_equal(got, rest);
	free(got);
}

static void test_invalid_utf8_truncated(void **state)
{
	(void)state;
	/* truncated at the end of the string */
	expect_replaced_then("\xe2\x82", 2, "\"\"");
	expect_replaced_then("\xf0\x9f\x98", 3, "\"\"");
	expect_replaced_then("\xc3", 1, "\"\"");
	/* truncated by a following ASCII byte, which must survive */
	expect_replaced_then("\xe2\x82"
			     "A",
			     3, "\"A\"");
	expect_replaced_then("\xf0\x9f"
			     "AB",
			     4, "\"AB\"");
	/* a truncated sequence followed by a valid one: the valid one still decodes */
	expect_replaced_then("\xe2\xc3\xa9", 3, "\"\\u00e9\"");
	/* the length limit: a sequence running past n is invalid even if bytes follow */
	expect_replaced_then("\xc3\xa9", 1, "\"\"");
}

static void test_keys_are_escaped(void **state)
{
	struct json j;
	(void)state;

	json_init(&j);
	json_obj_begin(&j);
	json_kv_str(&j, "k\"\x01\xc3\xa9", "v");
	json_obj_end(&j);
	assert_string_equal(json_text(&j), "{\"k\\\"\\u0001\\u00e9\":\"v\"}");
	json_free(&j);
}

static void test_nesting_and_commas(void **state)
{
	struct json j;
	(void)state;

	json_init(&j);
	json_obj_begin(&j);
	json_kv_int(&j, "a", 1);
	json_key(&j, "b");
	json_arr_begin(&j);
	json_bool(&j, true);
	json_bool(&j, false);
	json_null(&j);
	json_str(&j, "x");
	json_obj_begin(&j);
	json_obj_end(&j);
	json_arr_begin(&j);
	json_arr_end(&j);
	json_int(&j, -7);
	json_arr_end(&j);
	json_key(&j, "c");
	json_obj_begin(&j);
	json_kv_int(&j, "d", INT64_MIN);
	json_kv_uint(&j, "e", UINT64_MAX);
	json_kv_bool(&j, "f", false);
	json_kv_str(&j, "g", NULL);
	json_obj_end(&j);
	json_key(&j, "h");
	json_raw(&j, "{\"pre\":[1,2]}");
	json_kv_str(&j, "i", "last");
	json_obj_end(&j);
	assert_non_null(json_text(&j));
	assert_string_equal(json_text(&j),
			    "{\"a\":1,\"b\":[true,false,null,\"x\",{},[],-7],"
			    "\"c\":{\"d\":-9223372036854775808,\"e\":18446744073709551615,"
			    "\"f\":false,\"g\":null},\"h\":{\"pre\":[1,2]},\"i\":\"last\"}");
	assert_true(json_valid(json_text(&j)));
	json_free(&j);
}

static void test_array_of_objects(void **state)
{
	struct json j;
	(void)state;

	json_init(&j);
	json_arr_begin(&j);
	for (int i = 0; i < 3; i++) {
		json_obj_begin(&j);
		json_kv_int(&j, "n", i);
		json_kv_str(&j, "s", "v");
		json_obj_end(&j);
	}
	json_arr_end(&j);
	assert_string_equal(json_text(&j),
			    "[{\"n\":0,\"s\":\"v\"},{\"n\":1,\"s\":\"v\"},{\"n\":2,\"s\":\"v\"}]");
	json_free(&j);
}

static void test_max_depth(void **state)
{
	struct json j;
	char want[2 * JSON_MAX_DEPTH + 1];
	(void)state;

	/* exactly JSON_MAX_DEPTH levels are fine */
	json_init(&j);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		json_arr_begin(&j);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		json_arr_end(&j);
	memset(want, '[', JSON_MAX_DEPTH);
	memset(want + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
	want[2 * JSON_MAX_DEPTH] = '\0';
	assert_non_null(json_text(&j));
	assert_string_equal(json_text(&j), want);
	json_free(&j);

	/* one more level makes the document unusable */
	json_init(&j);
	for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
		json_arr_begin(&j);
	for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
		json_arr_end(&j);
	assert_null(json_text(&j));
	json_free(&j);
}

static void test_unbalanced(void **state)
{
	struct json j;
	(void)state;

	/* nothing written */
	json_init(&j);
	assert_null(json_text(&j));
	json_free(&j);

	/* unclosed object */
	json_init(&j);
	json_obj_begin(&j);
	json_kv_int(&j, "a", 1);
	assert_null(json_text(&j));
	json_obj_end(&j);
	assert_string_equal(json_text(&j), "{\"a\":1}");
	json_free(&j);

	/* unclosed array inside an object */
	json_init(&j);
	json_obj_begin(&j);
	json_key(&j, "a");
	json_arr_begin(&j);
	json_obj_end(&j);
	assert_null(json_text(&j));
	json_free(&j);

	/* one close too many: even balancing it later does not make the text usable */
	json_init(&j);
	json_arr_begin(&j);
	json_arr_end(&j);
	json_arr_end(&j);
	assert_null(json_text(&j));
	json_arr_begin(&j);
	assert_null(json_text(&j));
	json_free(&j);

	/* a close with nothing open */
	json_init(&j);
	json_obj_end(&j);
	assert_null(json_text(&j));
	json_free(&j);
}

static void test_long_string_grows_buffer(void **state)
{
	size_t n = 100000;
	char *s = malloc(n + 1), *want = malloc(6 * n + 3);
	struct json j;
	(void)state;

	assert_non_null(s);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		s[i] = (i % 2) ? 'a' : '\x01';
	s[n] = '\0';
	want[0] = '"';
	size_t w = 1;
	for (size_t i = 0; i < n; i++) {
		if (i % 2)
			want[w++] = 'a';
		else
			memcpy(want + w, "\\u0001", 6), w += 6;
	}
	want[w++] = '"';
	want[w] = '\0';
	json_init(&j);
	json_str(&j, s);
	assert_non_null(json_text(&j));
	assert_string_equal(json_text(&j), want);
	json_free(&j);
	free(s);
	free(want);
}

/* Every byte value, alone, gives valid printable-ASCII JSON. */
static void test_every_single_byte(void **state)
{
	(void)state;
	for (int b = 1; b < 256; b++) {
		char s[2] = {(char)b, '\0'};
		char *got = encode_n(s, 1);
		if (!json_valid(got) || !json_printable_ascii(got)) {
			print_error("byte 0x%02x encoded as %s\n", b, got);
			free(got);
			fail();
		}
		if (b >= 0x80)
			assert_string_equal(got, "\"\\ufffd\"");
		free(got);
	}
}

/* ---------- the string filter (the audit trail's redaction hook) ---------- */

struct filter_log {
	unsigned calls;
	size_t last_n;
};

static char *test_filter(void *ctx, const char *s, size_t n, bool *oom)
{
	struct filter_log *log = ctx;

	log->calls++;
	log->last_n = n;
	if (n == 6 && !memcmp(s, "secret", 6))
		return strdup("[REDACTED]");
	if (n == 4 && !memcmp(s, "ctrl", 4))
		return strdup("q\"\x01\xc3\xa9\xff");
	if (n == 3 && !memcmp(s, "oom", 3)) {
		*oom = true;
		return NULL;
	}
	return NULL;
}

static void test_filter_rewrites_values_not_keys(void **state)
{
	struct filter_log log = {0};
	struct json j;
	(void)state;

	json_init(&j);
	j.filter = test_filter;
	j.filter_ctx = &log;
	json_obj_begin(&j);
	json_kv_str(&j, "secret", "secret");
	json_kv_str(&j, "keep", "keep");
	json_kv_str(&j, "ctrl", "ctrl");
	json_kv_str(&j, "null", NULL);
	json_key(&j, "arr");
	json_arr_begin(&j);
	json_strn(&j, "secretive", 6); /* the filter sees exactly n bytes */
	json_arr_end(&j);
	json_obj_end(&j);
	assert_non_null(json_text(&j));
	assert_string_equal(json_text(&j), "{\"secret\":\"[REDACTED]\",\"keep\":\"keep\","
					   "\"ctrl\":\"q\\\"\\u0001\\u00e9\\ufffd\",\"null\":null,"
					   "\"arr\":[\"[REDACTED]\"]}");
	assert_true(json_valid(json_text(&j)));
	assert_int_equal(log.calls, 4); /* not for keys, not for null */
	assert_int_equal(log.last_n, 6);
	json_free(&j);
}

static void test_filter_oom_spoils_document(void **state)
{
	struct filter_log log = {0};
	struct json j;
	(void)state;

	json_init(&j);
	j.filter = test_filter;
	j.filter_ctx = &log;
	json_arr_begin(&j);
	json_str(&j, "fine");
	json_str(&j, "oom");
	json_str(&j, "fine");
	json_arr_end(&j);
	assert_null(json_text(&j));
	json_free(&j);
}

/* A file name: valid UTF-8 as it is; anything else also as its exact bytes in base64, at each
 * padding length; never past a filter. */
static void expect_bytes(const char *name, bool filtered, const char *want)
{
	struct filter_log log = {0};
	struct json j;

	json_init(&j);
	if (filtered)
		j.filter = test_filter, j.filter_ctx = &log;
	json_obj_begin(&j);
	json_kv_bytes(&j, "path", name);
	json_obj_end(&j);
	assert_non_null(json_text(&j));
	if (strcmp(json_text(&j), want)) {
		print_error("encoded as %s\nexpected   %s\n", json_text(&j), want);
		fail();
	}
	assert_true(json_valid(json_text(&j)));
	json_free(&j);
}

static void test_bytes_keep_what_is_not_utf8(void **state)
{
	(void)state;
	expect_bytes("a/b.txt", false, "{\"path\":\"a/b.txt\"}");
	expect_bytes("caf\xc3\xa9", false, "{\"path\":\"caf\\u00e9\"}");
	expect_bytes(NULL, false, "{\"path\":null}");
	expect_bytes("bad\xffname", false,
		     "{\"path\":\"bad\\ufffdname\",\"path_b64\":\"YmFk/25hbWU=\"}");
	expect_bytes("\xff", false, "{\"path\":\"\\ufffd\",\"path_b64\":\"/w==\"}");
	expect_bytes("\xc3(", false, "{\"path\":\"\\ufffd(\",\"path_b64\":\"wyg=\"}");
	expect_bytes("\xed\xa0\x80x", false,
		     "{\"path\":\"\\ufffd\\ufffd\\ufffdx\",\"path_b64\":\"7aCAeA==\"}");
	expect_bytes("bad\xffname", true, "{\"path\":\"bad\\ufffdname\"}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_ascii),
	    cmocka_unit_test(test_quote_and_backslash),
	    cmocka_unit_test(test_control_characters),
	    cmocka_unit_test(test_del),
	    cmocka_unit_test(test_utf8_two_byte),
	    cmocka_unit_test(test_utf8_three_byte),
	    cmocka_unit_test(test_utf8_four_byte_surrogate_pairs),
	    cmocka_unit_test(test_invalid_utf8_lone_continuation),
	    cmocka_unit_test(test_invalid_utf8_overlong),
	    cmocka_unit_test(test_invalid_utf8_surrogates_and_range),
	    cmocka_unit_test(test_invalid_utf8_truncated),
	    cmocka_unit_test(test_keys_are_escaped),
	    cmocka_unit_test(test_nesting_and_commas),
	    cmocka_unit_test(test_array_of_objects),
	    cmocka_unit_test(test_max_depth),
	    cmocka_unit_test(test_unbalanced),
	    cmocka_unit_test(test_long_string_grows_buffer),
	    cmocka_unit_test(test_every_single_byte),
	    cmocka_unit_test(test_filter_rewrites_values_not_keys),
	    cmocka_unit_test(test_filter_oom_spoils_document),
	    cmocka_unit_test(test_bytes_keep_what_is_not_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

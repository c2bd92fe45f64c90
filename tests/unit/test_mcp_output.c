/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for mcp_output: the head and tail of a run's output, whatever sizes the reads
 * come in, with no UTF-8 character split and the bytes between counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "mcp_output.h"

/* Feeds text in reads of step bytes to an output keeping head and tail bytes. */
static void feed(struct mcp_output *o, size_t head, size_t tail, const char *text, size_t step)
{
	size_t n = strlen(text);

	mcp_output_init(o, head, tail);
	for (size_t at = 0; at < n; at += step)
		mcp_output_add(o, text + at, n - at < step ? n - at : step);
}

static void expect(const char *text, size_t head, size_t tail, const char *want_head,
		   uint64_t dropped, const char *want_tail)
{
	/* reads of every size: the ring's wrap must not matter */
	for (size_t step = 1; step <= strlen(text) + 1; step++) {
		struct mcp_output o;
		struct mcp_kept k;
		feed(&o, head, tail, text, step);
		mcp_output_kept(&o, &k);
		assert_int_equal(k.head_len, strlen(want_head));
		assert_memory_equal(k.head, want_head, k.head_len);
		assert_int_equal(k.tail_len, strlen(want_tail));
		assert_memory_equal(k.tail, want_tail, k.tail_len);
		assert_int_equal(k.dropped, dropped);
		mcp_output_free(&o);
	}
}

static void test_whole_when_it_fits(void **state)
{
	(void)state;
	expect("hello", 4, 4, "hello", 0, "");
	expect("12345678", 4, 4, "12345678", 0, "");
	expect("", 4, 4, "", 0, "");
}

static void test_head_and_tail_ascii(void **state)
{
	(void)state;
	expect("0123456789", 4, 3, "0123", 3, "789");
	expect("0123456789abcdefghij", 5, 5, "01234", 10, "fghij");
	expect("0123456789", 0, 0, "", 10, "");
	expect("0123456789", 0, 2, "", 8, "89");
}

static void test_characters_never_split(void **state)
{
	(void)state;
	/* the head ends in the middle of "é" (c3 a9): cut before it */
	expect("abc\xc3\xa9xxxxxxxyz", 4, 3, "abc", 8, "xyz");
	/* the tail starts in the middle of "€" (e2 82 ac): start after it */
	expect("aaaaaaaaa\xe2\x82\xacz", 4, 3, "aaaa", 8, "z");
	/* a 4-byte character cut at both ends */
	expect("\xf0\x9f\x98\x80xxxxxx\xf0\x9f\x98\x80", 3, 3, "", 14, "");
	/* whole characters at the edges stay */
	expect("\xc3\xa9\xc3\xa9xxxxx\xe2\x82\xac", 4, 3, "\xc3\xa9\xc3\xa9", 5, "\xe2\x82\xac");
}

static void test_whole_utf8_prefix(void **state)
{
	(void)state;
	assert_int_equal(mcp_utf8_whole("ab", 2), 2);
	assert_int_equal(mcp_utf8_whole("a\xc3", 2), 1);
	assert_int_equal(mcp_utf8_whole("a\xc3\xa9", 3), 3);
	assert_int_equal(mcp_utf8_whole("a\xe2\x82", 3), 1);
	assert_int_equal(mcp_utf8_whole("\xf0\x9f\x98", 3), 0);
	assert_int_equal(mcp_utf8_whole("\xf0\x9f\x98\x80", 4), 4);
	/* not UTF-8 at all: left as it is (the JSON writer makes it U+FFFD) */
	assert_int_equal(mcp_utf8_whole("\x80\x80\x80\x80\x80", 5), 5);
	assert_int_equal(mcp_utf8_whole("", 0), 0);
}

static void test_clear_starts_over(void **state)
{
	struct mcp_output o;
	struct mcp_kept k;

	(void)state;
	feed(&o, 0, 4, "0123456789", 3);
	mcp_output_kept(&o, &k);
	assert_int_equal(k.dropped, 6);
	assert_memory_equal(k.tail, "6789", 4);
	/* after kept, more may still come into the ring (a progress message that was not sent) */
	mcp_output_add(&o, "ab", 2);
	mcp_output_kept(&o, &k);
	assert_int_equal(k.dropped, 8);
	assert_memory_equal(k.tail, "89ab", 4);
	mcp_output_clear(&o);
	mcp_output_add(&o, "xy", 2);
	mcp_output_kept(&o, &k);
	assert_int_equal(k.dropped, 0);
	assert_int_equal(k.head_len, 2);
	assert_memory_equal(k.head, "xy", 2);
	mcp_output_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whole_when_it_fits),
	    cmocka_unit_test(test_head_and_tail_ascii),
	    cmocka_unit_test(test_characters_never_split),
	    cmocka_unit_test(test_whole_utf8_prefix),
	    cmocka_unit_test(test_clear_starts_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

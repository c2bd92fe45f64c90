/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for printable: what reaches a person's terminal from names the command chose. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "printable.h"

static void check(const char *in, const char *want)
{
	char out[256];
	size_t need = printable(in, out, sizeof(out));

	assert_string_equal(out, want);
	assert_int_equal(need, strlen(want));
}

static void check_line(const char *in, const char *want)
{
	char out[256];
	size_t need = printable_line(in, out, sizeof(out));

	assert_string_equal(out, want);
	assert_int_equal(need, strlen(want));
}

/* agentbox's own lines: a name already made safe reads as it was; raw controls do not pass */
static void test_line_keeps_backslash_and_tab(void **state)
{
	(void)state;
	check_line("promote a\\x0db: cannot\tcreate", "promote a\\x0db: cannot\tcreate");
	check_line("next to \r\x1b[2K\x1b[1Apromoted 3 changes\nagentbox: note",
		   "next to \\x0d\\x1b[2K\\x1b[1Apromoted 3 changes\\x0aagentbox: note");
	check_line("\xc2\x9b"
		   "31m \xe2\x80\xae",
		   "\\xc2\\x9b31m \\xe2\\x80\\xae");
}

static void test_plain_and_utf8_pass(void **state)
{
	(void)state;
	check("src/main.c", "src/main.c");
	check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

static void test_controls_escaped(void **state)
{
	(void)state;
	check("a\n+++ b", "a\\x0a+++ b");
	check("\x1b[2J\x07\x7f\\", "\\x1b[2J\\x07\\x7f\\x5c");
	check("tab\there", "tab\\x09here");
	/* C1 controls encoded in UTF-8 (U+009B is CSI to some terminals) */
	check("\xc2\x9b"
	      "31m",
	      "\\xc2\\x9b31m");
	/* bidirectional override U+202E and isolate U+2066 */
	check("x\xe2\x80\xaey", "x\\xe2\\x80\\xaey");
	check("\xe2\x81\xa6", "\\xe2\\x81\\xa6");
}

static void test_invalid_utf8_escaped(void **state)
{
	(void)state;
	check("\xff\xfe", "\\xff\\xfe");
	check("\xc0\xae", "\\xc0\\xae");		   /* overlong '.' */
	check("\xe0\x80\xaf", "\\xe0\\x80\\xaf");	   /* overlong '/' */
	check("\xed\xa0\x80", "\\xed\\xa0\\x80");	   /* a surrogate */
	check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	check("\xe2\x82", "\\xe2\\x82");		   /* cut short at the end */
}

static void test_small_buffer_cuts_whole_escapes(void **state)
{
	char out[6];

	(void)state;
	assert_int_equal(printable("ab\ncd", out, sizeof(out)), 8);
	assert_string_equal(out, "ab"); /* "\x0a" does not fit whole: nothing after it either */
	assert_int_equal(printable("abc", NULL, 0), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_and_utf8_pass),
	    cmocka_unit_test(test_controls_escaped),
	    cmocka_unit_test(test_line_keeps_backslash_and_tab),
	    cmocka_unit_test(test_invalid_utf8_escaped),
	    cmocka_unit_test(test_small_buffer_cuts_whole_escapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

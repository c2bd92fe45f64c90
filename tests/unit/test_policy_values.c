/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the profile parser's values: the [limits] section, the variables of a profile
 * and policy_expand_vars, and the value parsers (sizes, durations, counts, paths). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_testlib.h"

static void expect_parse_error(int (*parse)(const char *, uint64_t *, struct ab_err *),
			       const char *s, const char *what)
{
	struct ab_err e = {0};
	uint64_t v = 12345;

	if (parse(s, &v, &e) != -1) {
		print_error("'%s' parsed as %llu\n", s, (unsigned long long)v);
		fail();
	}
	expect_msg(&e, "", what);
}

static uint64_t must_parse(int (*parse)(const char *, uint64_t *, struct ab_err *), const char *s)
{
	struct ab_err e = {0};
	uint64_t v = 12345;

	if (parse(s, &v, &e) != 0) {
		print_error("'%s' refused: %s\n", s, e.msg);
		fail();
	}
	return v;
}

/* ---------- [limits] ---------- */

static void test_limits_every_key(void **state)
{
	struct policy *p = must_load("[limits]\n"
				     "timeout = 90s\n"
				     "cpu = 1500ms\n"
				     "memory = 512M\n"
				     "processes = 64\n"
				     "open-files = 256\n"
				     "file-size = 1G\n"
				     "tmpfs-size = 64k\n"
				     "changes-size = 2G\n"
				     "session-timeout = 2h\n"
				     "idle-timeout = 15m\n");
	(void)state;

	assert_int_equal(p->limits.timeout_ms, 90000);
	assert_int_equal(p->limits.cpu_s, 2); /* whole seconds, rounded up */
	assert_int_equal(p->limits.memory, 512ull << 20);
	assert_int_equal(p->limits.processes, 64);
	assert_int_equal(p->limits.open_files, 256);
	assert_int_equal(p->limits.file_size, 1ull << 30);
	assert_int_equal(p->limits.tmpfs_size, 64ull << 10);
	assert_int_equal(p->limits.changes_size, 2ull << 30);
	assert_int_equal(p->limits.session_timeout_ms, 2 * 3600000);
	assert_int_equal(p->limits.idle_timeout_ms, 15 * 60000);
	policy_free(p);

	p = must_load("[limits]\ntimeout = 250ms\ncpu = 2m\nmemory = 4096\nfile-size = 1TiB\n");
	assert_int_equal(p->limits.timeout_ms, 250);
	assert_int_equal(p->limits.cpu_s, 120);
	assert_int_equal(p->limits.memory, 4096);
	assert_int_equal(p->limits.file_size, 1ull << 40);
	policy_free(p);

	p = must_load("[limits]\ncpu = 1ms\ntimeout = 1h\n");
	assert_int_equal(p->limits.cpu_s, 1);
	assert_int_equal(p->limits.timeout_ms, 3600000);
	policy_free(p);
}

static void test_limits_zero_rejected(void **state)
{
	static const char *const keys[] = {"timeout",	 "cpu",	      "memory",	    "processes",
					   "open-files", "file-size", "tmpfs-size", "changes-size"};
	char text[128], what[64];
	(void)state;

	for (size_t i = 0; i < NFILES(keys); i++) {
		snprintf(text, sizeof(text), "[limits]\n%s = 0\n", keys[i]);
		snprintf(what, sizeof(what), "'%s' must be greater than 0", keys[i]);
		expect_error(text, MAIN ":2: ", what);
	}
	expect_error("[limits]\nmemory = 0K\n", MAIN ":2: ", "'memory' must be greater than 0");
	expect_error("[limits]\ntimeout = 0ms\n", MAIN ":2: ", "'timeout' must be greater than 0");
}

static void test_limits_bad_values(void **state)
{
	(void)state;
	expect_error("[limits]\nmemory = -1\n", MAIN ":2: ", "'-1' is not a size");
	expect_error("[limits]\nmemory = 12X\n", MAIN ":2: ", "'12X' has an unknown size unit");
	expect_error("[limits]\nmemory = 1.5X\n", MAIN ":2: ", "has an unknown size unit");
	expect_error("[limits]\nmemory = 17179869184G\n",
		     MAIN ":2: ", "size '17179869184G' is too large");
	expect_error("[limits]\nfile-size = 99999999999999999999\n", MAIN ":2: ", "is too large");
	expect_error("[limits]\ntimeout = 5d\n", MAIN ":2: ", "'5d' has an unknown duration unit");
	expect_error("[limits]\ntimeout = -5s\n", MAIN ":2: ", "'-5s' is not a duration");
	expect_error("[limits]\ntimeout = 99999999999999999999\n",
		     MAIN ":2: ", "duration '99999999999999999999' is too large");
	expect_error("[limits]\ncpu = 18446744073709552s\n", MAIN ":2: ", "is too large");
	expect_error("[limits]\nprocesses = 1K\n", MAIN ":2: ", "'1K' is not a whole number");
	expect_error("[limits]\nprocesses = -5\n", MAIN ":2: ", "'-5' is not a whole number");
	expect_error("[limits]\nopen-files = 4294967296\n",
		     MAIN ":2: ", "'4294967296' is too large");
	expect_error("[limits]\nprocesses = 99999999999999999999\n", MAIN ":2: ", "is too large");
	expect_error("[limits]\nmemory =\n", MAIN ":2: ", "'memory' has an empty value");
	expect_error("[limits]\ncpu = 1,2\n", MAIN ":2: ", "has an unknown duration unit");
}

static void test_limits_cpu_rounding_does_not_wrap(void **state)
{
	struct policy *p;
	(void)state;

	/* the largest durations round up to whole seconds without wrapping to 0 ("no limit") */
	p = must_load("[limits]\ncpu = 18446744073709551615ms\n");
	assert_int_equal(p->limits.cpu_s, 18446744073709552ull);
	policy_free(p);
	p = must_load("[limits]\ncpu = 18446744073709551s\n");
	assert_int_equal(p->limits.cpu_s, 18446744073709551ull);
	policy_free(p);
}

/* ---------- variables ---------- */

static void test_variables_in_profile(void **state)
{
	const struct mfile files[] = {
	    {"/p/main.ini", "[sandbox]\ninclude = sub/vars.ini\n", 0},
	    {"/p/sub/vars.ini",
	     "[filesystem]\n"
	     "ro = ${HOME}/a, ${CWD}/b\n"
	     "rw = /run/user/${UID}\n"
	     "tmpfs = ${TMPDIR}/t\n"
	     "ro-try = ~/.config, ~\n"
	     "hide = ${PROFILE_DIR}/secret\n"
	     "symlink = ${HOME}/target ${CWD}/link\n"
	     "[env]\n"
	     "set = WHO=${USER}:${UID}\n"
	     "set = RAW=~/not-expanded\n",
	     0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_fs(p, "/home/alice/a", FS_RO, false, "/p/sub/vars.ini", 2);
	expect_fs(p, "/work/proj/b", FS_RO, false, "/p/sub/vars.ini", 2);
	expect_fs(p, "/run/user/1000", FS_RW, false, "/p/sub/vars.ini", 3);
	expect_fs(p, "/var/tmp/alice/t", FS_TMPFS, false, "/p/sub/vars.ini", 4);
	expect_fs(p, "/home/alice/.config", FS_RO, true, "/p/sub/vars.ini", 5);
	expect_fs(p, "/home/alice", FS_RO, true, "/p/sub/vars.ini", 5);
	expect_fs(p, "/p/sub/secret", FS_HIDE, false, "/p/sub/vars.ini", 6);
	expect_fs(p, "/work/proj/link", FS_SYMLINK, false, "/p/sub/vars.ini", 7);
	assert_string_equal(find_fs(p, "/work/proj/link")->target, "/home/alice/target");
	expect_strv(&p->env_set, 2, "WHO=alice:1000", "RAW=~/not-expanded");
	policy_free(p);
}

static void test_variable_errors(void **state)
{
	(void)state;
	expect_error("[filesystem]\n\nro = ${NOPE}/x\n",
		     MAIN ":3: ", "undefined variable '${NOPE}'; fix: use ${HOME}, ${CWD}");
	expect_error("[filesystem]\nro = ${home}\n", MAIN ":2: ", "undefined variable '${home}'");
	expect_error("[filesystem]\nro = /a/${}\n", MAIN ":2: ", "undefined variable '${}'");
	expect_error("[filesystem]\nro = ${HOME/x\n",
		     MAIN ":2: ", "unterminated '${' in '${HOME/x'");
	expect_error("[sandbox]\nworkdir = /x/${CWD\n", MAIN ":2: ", "unterminated '${'");
	expect_error("[limits]\nmemory = ${UID\n", MAIN ":2: ", "unterminated '${'");
	/* ~user is not expanded, so it stays relative */
	expect_error("[filesystem]\nro = ~bob/x\n",
		     MAIN ":2: ", "'~bob/x' is not an absolute path");
}

static void test_expand_vars_direct(void **state)
{
	struct ab_err e = {0};
	char *out;
	(void)state;

	assert_int_equal(expand_vars("${HOME}|${CWD}|${USER}|${UID}|${TMPDIR}|${PROFILE_DIR}",
				     &test_vars, "/prof", &out, &e),
			 0);
	assert_string_equal(out, "/home/alice|/work/proj|alice|1000|/var/tmp/alice|/prof");
	free(out);
	assert_int_equal(expand_vars("~", &test_vars, NULL, &out, &e), 0);
	assert_string_equal(out, "/home/alice");
	free(out);
	assert_int_equal(expand_vars("~/x/~/y", &test_vars, NULL, &out, &e), 0);
	assert_string_equal(out, "/home/alice/x/~/y");
	free(out);
	assert_int_equal(expand_vars("", &test_vars, NULL, &out, &e), 0);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(expand_vars("$HOME and $ {HOME} and }", &test_vars, NULL, &out, &e), 0);
	assert_string_equal(out, "$HOME and $ {HOME} and }");
	free(out);
	/* a value is not expanded again */
	{
		struct policy_vars v = test_vars;
		v.user = "${HOME}";
		assert_int_equal(expand_vars("${USER}", &v, NULL, &out, &e), 0);
		assert_string_equal(out, "${HOME}");
		free(out);
	}
	/* ${PROFILE_DIR} without a profile (the command line) and unknown HOME */
	assert_int_equal(expand_vars("${PROFILE_DIR}/x", &test_vars, NULL, &out, &e), -1);
	expect_msg(&e, "", "undefined variable '${PROFILE_DIR}'");
	{
		struct policy_vars v = test_vars;
		v.home = NULL;
		assert_int_equal(expand_vars("~/x", &v, NULL, &out, &e), -1);
		expect_msg(&e, "", "'~' used but HOME is not known");
		assert_int_equal(expand_vars("${HOME}/x", &v, NULL, &out, &e), -1);
		expect_msg(&e, "", "undefined variable '${HOME}'");
	}
	assert_int_equal(expand_vars("a${", &test_vars, NULL, &out, &e), -1);
	expect_msg(&e, "", "unterminated '${' in 'a${'");
}

/* ---------- value parsers ---------- */

static void test_parse_size(void **state)
{
	(void)state;
	assert_int_equal(must_parse(parse_size, "0"), 0);
	assert_int_equal(must_parse(parse_size, "4096"), 4096);
	assert_int_equal(must_parse(parse_size, "1K"), 1024);
	assert_int_equal(must_parse(parse_size, "1k"), 1024);
	assert_int_equal(must_parse(parse_size, "2M"), 2ull << 20);
	assert_int_equal(must_parse(parse_size, "3G"), 3ull << 30);
	assert_int_equal(must_parse(parse_size, "1T"), 1ull << 40);
	assert_int_equal(must_parse(parse_size, "1KB"), 1024);
	assert_int_equal(must_parse(parse_size, "1KiB"), 1024);
	assert_int_equal(must_parse(parse_size, "007M"), 7ull << 20);
	assert_int_equal(must_parse(parse_size, "18446744073709551615"), UINT64_MAX);
	assert_int_equal(must_parse(parse_size, "17179869183G"), 17179869183ull << 30);
	assert_int_equal(must_parse(parse_size, "16777215T"), 16777215ull << 40);
	/* a fraction of a unit, rounded down to whole bytes */
	assert_int_equal(must_parse(parse_size, "1.5G"), 3ull << 29);
	assert_int_equal(must_parse(parse_size, "0.5K"), 512);
	assert_int_equal(must_parse(parse_size, "1.3K"), 1331);
	assert_int_equal(must_parse(parse_size, "2.000000001T"), (2ull << 40) + 1099);
	assert_int_equal(must_parse(parse_size, "16777215.999999999T"), UINT64_MAX - 1099);
}

static void test_parse_size_errors(void **state)
{
	(void)state;
	expect_parse_error(parse_size, "18446744073709551616",
			   "size '18446744073709551616' is too large");
	expect_parse_error(parse_size, "99999999999999999999", "is too large");
	expect_parse_error(parse_size, "17179869184G", "size '17179869184G' is too large");
	expect_parse_error(parse_size, "16777216T", "is too large");
	expect_parse_error(parse_size, "18014398509481984K", "is too large");
	expect_parse_error(parse_size, "", "'' is not a size");
	expect_parse_error(parse_size, "K", "'K' is not a size");
	expect_parse_error(parse_size, "-1", "'-1' is not a size");
	expect_parse_error(parse_size, "+1", "'+1' is not a size");
	expect_parse_error(parse_size, " 1", "is not a size");
	expect_parse_error(parse_size, "1X", "'1X' has an unknown size unit");
	expect_parse_error(parse_size, "1KK", "has an unknown size unit");
	expect_parse_error(parse_size, "1P", "has an unknown size unit");
	expect_parse_error(parse_size, "1.5", "'1.5' is a fraction of a byte");
	expect_parse_error(parse_size, "0.0009K", "size '0.0009K' rounds down to nothing");
	expect_parse_error(parse_size, "1.G", "'1.G' is not a size");
	expect_parse_error(parse_size, ".5G", "'.5G' is not a size");
	expect_parse_error(parse_size, "1.0000000001G", "is not a size");
	expect_parse_error(parse_size, "1,5G", "has an unknown size unit");
	expect_parse_error(parse_size, "16777216.5T", "is too large");
	expect_parse_error(parse_size, "1 K", "has an unknown size unit");
	expect_parse_error(parse_size, "1KBB", "has an unknown size unit");
}

static void test_parse_duration(void **state)
{
	(void)state;
	assert_int_equal(must_parse(parse_duration_ms, "0"), 0);
	assert_int_equal(must_parse(parse_duration_ms, "30"), 30000);
	assert_int_equal(must_parse(parse_duration_ms, "30s"), 30000);
	assert_int_equal(must_parse(parse_duration_ms, "250ms"), 250);
	assert_int_equal(must_parse(parse_duration_ms, "5m"), 300000);
	assert_int_equal(must_parse(parse_duration_ms, "2h"), 7200000);
	assert_int_equal(must_parse(parse_duration_ms, "18446744073709551615ms"), UINT64_MAX);
	assert_int_equal(must_parse(parse_duration_ms, "18446744073709551s"),
			 18446744073709551000ull);
	assert_int_equal(must_parse(parse_duration_ms, "1.5s"), 1500);
	assert_int_equal(must_parse(parse_duration_ms, "1.5"), 1500);
	assert_int_equal(must_parse(parse_duration_ms, "0.25h"), 900000);
	expect_parse_error(parse_duration_ms, "0.0004s", "rounds down to nothing");
	expect_parse_error(parse_duration_ms, "1.5ms", "'1.5ms' is a fraction of a millisecond");
	expect_parse_error(parse_duration_ms, "1.s", "is not a duration");
	expect_parse_error(parse_duration_ms, "18446744073709551616ms", "is too large");
	expect_parse_error(parse_duration_ms, "18446744073709552s",
			   "duration '18446744073709552s' is too large");
	expect_parse_error(parse_duration_ms, "5124095576030432h", "is too large");
	expect_parse_error(parse_duration_ms, "99999999999999999999", "is too large");
	expect_parse_error(parse_duration_ms, "", "'' is not a duration");
	expect_parse_error(parse_duration_ms, "s", "'s' is not a duration");
	expect_parse_error(parse_duration_ms, "-5s", "'-5s' is not a duration");
	expect_parse_error(parse_duration_ms, "5d", "'5d' has an unknown duration unit");
	expect_parse_error(parse_duration_ms, "5 s", "has an unknown duration unit");
	expect_parse_error(parse_duration_ms, "5sec", "has an unknown duration unit");
	expect_parse_error(parse_duration_ms, "5mss", "has an unknown duration unit");
}

static void test_parse_count(void **state)
{
	(void)state;
	assert_int_equal(must_parse(parse_count, "0"), 0);
	assert_int_equal(must_parse(parse_count, "42"), 42);
	assert_int_equal(must_parse(parse_count, "2147483647"), 2147483647);
	expect_parse_error(parse_count, "2147483648", "'2147483648' is too large");
	expect_parse_error(parse_count, "99999999999999999999", "is too large");
	expect_parse_error(parse_count, "-1", "'-1' is not a whole number");
	expect_parse_error(parse_count, "1K", "'1K' is not a whole number");
	expect_parse_error(parse_count, "", "'' is not a whole number");
	expect_parse_error(parse_count, "1 ", "is not a whole number");
	expect_parse_error(parse_count, "0x10", "is not a whole number");
}

static void test_path_normalize(void **state)
{
	static const char *const cases[][2] = {
	    {"/", "/"},
	    {"//", "/"},
	    {"/./", "/"},
	    {"/a", "/a"},
	    {"/a/", "/a"},
	    {"/a//b///c", "/a/b/c"},
	    {"/a/./b/.", "/a/b"},
	    {"/./a/./", "/a"},
	    {"/a/.../b", "/a/.../b"},
	    {"/a/..b/c..", "/a/..b/c.."},
	    {"/.hidden/.x", "/.hidden/.x"},
	};
	struct ab_err e = {0};
	char *out, *longp;
	(void)state;

	for (size_t i = 0; i < NFILES(cases); i++) {
		if (path_normalize(cases[i][0], &out, &e) != 0) {
			print_error("'%s' refused: %s\n", cases[i][0], e.msg);
			fail();
		}
		assert_string_equal(out, cases[i][1]);
		free(out);
	}
	assert_int_equal(path_normalize("/a/../b", &out, &e), -1);
	expect_msg(&e, "", "'/a/../b' has a '..' component");
	assert_int_equal(path_normalize("/..", &out, &e), -1);
	assert_int_equal(path_normalize("/a/..", &out, &e), -1);
	assert_int_equal(path_normalize("/a/../", &out, &e), -1);
	assert_int_equal(path_normalize("a/b", &out, &e), -1);
	expect_msg(&e, "", "'a/b' is not an absolute path");
	assert_int_equal(path_normalize("", &out, &e), -1);
	expect_msg(&e, "", "is not an absolute path");
	assert_int_equal(path_normalize("./a", &out, &e), -1);
	assert_int_equal(path_normalize("../a", &out, &e), -1);
	longp = malloc(PATH_MAX + 2);
	assert_non_null(longp);
	memset(longp, 'a', PATH_MAX + 1);
	longp[0] = '/';
	longp[PATH_MAX + 1] = '\0';
	assert_int_equal(path_normalize(longp, &out, &e), -1);
	expect_msg(&e, "", "longer than");
	free(longp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limits_every_key),
	    cmocka_unit_test(test_limits_zero_rejected),
	    cmocka_unit_test(test_limits_bad_values),
	    cmocka_unit_test(test_limits_cpu_rounding_does_not_wrap),
	    cmocka_unit_test(test_variables_in_profile),
	    cmocka_unit_test(test_variable_errors),
	    cmocka_unit_test(test_expand_vars_direct),
	    cmocka_unit_test(test_parse_size),
	    cmocka_unit_test(test_parse_size_errors),
	    cmocka_unit_test(test_parse_duration),
	    cmocka_unit_test(test_parse_count),
	    cmocka_unit_test(test_path_normalize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

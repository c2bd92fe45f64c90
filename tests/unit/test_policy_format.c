/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the profile parser's format and errors: structure errors, hostile input (NUL
 * bytes, huge lines, garbage) and what the profile reference promises about the format. */
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
#include "policy.h"
#include "policy_testlib.h"

/* ---------- structure errors ---------- */

static void test_unknown_section(void **state)
{
	(void)state;
	/* reported at the header, where the fix goes */
	expect_error("[sandbox]\nhostname = a\n[files]\nro = /a\n",
		     MAIN ":3: ", "unknown section [files]");
	expect_error("[Sandbox]\nhostname = a\n", MAIN ":1: ", "unknown section [Sandbox]");
}

static void test_unknown_key(void **state)
{
	struct policy *p;
	struct ab_err e;
	(void)state;

	assert_int_equal(load_text(&p, "[filesystem]\nro = /usr\nrwx = /a\n", &e), -1);
	assert_non_null(strstr(e.msg, MAIN ":3: unknown key 'rwx' in [filesystem]"));
	assert_ptr_equal(strstr(e.msg, MAIN ":3: "), e.msg);
	policy_free(p);

	/* include belongs to [sandbox] only; keys are case-sensitive */
	expect_error("[filesystem]\ninclude = x.ini\n",
		     MAIN ":2: ", "unknown key 'include' in [filesystem]");
	expect_error("[limits]\nMemory = 1G\n", MAIN ":2: ", "unknown key 'Memory' in [limits]");
	expect_error("[sandbox]\n= x\n", MAIN ":2: ", "unknown key '' in [sandbox]");
}

static void test_key_outside_section(void **state)
{
	(void)state;
	expect_error("hostname = box\n[sandbox]\n", MAIN ":1: ",
		     "'hostname' is outside any section; fix: put it under a [section] header");
	expect_error("# comment\n\nro = /a\n", MAIN ":3: ", "'ro' is outside any section");
}

static void test_scalar_twice_in_one_file(void **state)
{
	(void)state;
	expect_error("[sandbox]\nhostname = a\nhostname = b\n",
		     MAIN ":3: ", "'hostname' is set twice in [sandbox]");
	/* even in two blocks of the same section */
	expect_error("[limits]\ntimeout = 1s\n[sandbox]\nhostname = a\n[limits]\ntimeout = 2s\n",
		     MAIN ":6: ", "'timeout' is set twice in [limits]");
	expect_error("[network]\nmode = none\nmode = none\n",
		     MAIN ":3: ", "'mode' is set twice in [network]");
	expect_error("[audit]\nfile = -\nfile = fd:2\n",
		     MAIN ":3: ", "'file' is set twice in [audit]");
	expect_error("[limits]\ncpu = 1s\ncpu = 2s\n", MAIN ":3: ", "'cpu' is set twice");
	expect_error("[sandbox]\nworkdir = /a\nworkdir = /b\n",
		     MAIN ":3: ", "'workdir' is set twice");
	expect_error("[seccomp]\npreset = none\npreset = strict\n",
		     MAIN ":3: ", "'preset' is set twice");
}

static void test_key_case_and_spacing_in_values(void **state)
{
	struct policy *p = must_load("[network]\nmode=host\n[sandbox]\nhostname:colon\n");
	(void)state;

	/* inih also accepts name: value */
	assert_int_equal(p->net_mode, NET_HOST);
	assert_string_equal(p->hostname, "colon");
	policy_free(p);
	expect_error("[network]\nmode = HOST\n", MAIN ":2: ", "'HOST' is not a valid mode");
}

/* ---------- hostile input ---------- */

static void test_nul_byte(void **state)
{
	static const char text[] = "[sandbox]\nhostname = a\n[filesystem]\nro = /a\0/b\nrw = /c\n";
	const struct mfile files[] = {{MAIN, text, sizeof(text) - 1}};
	const struct mfile first[] = {{MAIN, "\0", 1}};
	(void)state;

	expect_files_error(files, NFILES(files), MAIN ":4: ", "NUL byte in the profile");
	expect_files_error(first, NFILES(first), MAIN ":1: ", "NUL byte in the profile");
}

static void test_huge_single_line(void **state)
{
	size_t n = 1024 * 1024;
	char *text = malloc(n + 1);
	const char *prefix = "[filesystem]\nro = /";
	struct policy *p;
	struct ab_err e;
	(void)state;

	assert_non_null(text);
	memset(text, 'a', n);
	memcpy(text, prefix, strlen(prefix));
	text[n - 1] = '\n';
	text[n] = '\0';
	assert_int_equal(load_text(&p, text, &e), -1);
	expect_msg(&e, MAIN ":2: ", "line is 1048563 bytes, longer than the 196-byte limit");
	assert_int_equal(p->n_fs, 0);
	policy_free(p);

	/* the same without a single newline */
	memset(text, 'x', n);
	text[n] = '\0';
	assert_int_equal(load_text(&p, text, &e), -1);
	expect_msg(&e, MAIN ":1: ", "line is 1048576 bytes");
	policy_free(p);
	free(text);
}

/* "[filesystem]\n" then one "ro = /xxx...\n" line of exactly len bytes (newline included). */
static int load_line_of(size_t len, struct policy **p, struct ab_err *e, char **path)
{
	char text[512];
	size_t head = strlen("[filesystem]\n"), pre = strlen("ro = /");
	int rc;

	assert_true(len > pre + 1 && head + len < sizeof(text));
	memcpy(text, "[filesystem]\nro = /", head + pre);
	memset(text + head + pre, 'x', len - pre - 1);
	text[head + len - 1] = '\n';
	text[head + len] = '\0';
	rc = load_text(p, text, e);
	*path = strndup(text + head + pre - 1, len - pre);
	return rc;
}

static void test_line_length_limit(void **state)
{
	struct policy *p;
	struct ab_err e;
	char *path;
	(void)state;

	/* 196 bytes with its newline: the longest line accepted */
	if (load_line_of(196, &p, &e, &path) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	assert_int_equal(p->n_fs, 1);
	assert_int_equal(strlen(p->fs[0].path), 196 - strlen("ro = \n"));
	assert_memory_equal(p->fs[0].path, path, strlen(p->fs[0].path));
	free(path);
	policy_free(p);

	/* one byte more */
	assert_int_equal(load_line_of(197, &p, &e, &path), -1);
	expect_msg(&e,
		   MAIN ":2: ", "line is 197 bytes, longer than the 196-byte limit; fix: split it");
	assert_int_equal(p->n_fs, 0);
	free(path);
	policy_free(p);

	/* a \r counts too */
	{
		char text[256];
		size_t head = strlen("[filesystem]\nro = /");
		memcpy(text, "[filesystem]\nro = /", head);
		memset(text + head, 'y', 188);
		memcpy(text + head + 188, "\r\n", 3);
		p = must_load(text); /* "ro = /" + 188 + "\r\n" = 196 bytes */
		assert_int_equal(strlen(p->fs[0].path), 189);
		policy_free(p);
		memset(text + head, 'y', 189);
		memcpy(text + head + 189, "\r\n", 3);
		assert_int_equal(load_text(&p, text, &e), -1);
		expect_msg(&e, MAIN ":2: ", "line is 197 bytes");
		policy_free(p);
	}

	/* much more, well beyond inih's own 200-byte buffer */
	assert_int_equal(load_line_of(400, &p, &e, &path), -1);
	expect_msg(&e, MAIN ":2: ", "line is 400 bytes");
	free(path);
	policy_free(p);
}

static void test_garbage_only(void **state)
{
	static const char bin[] = "\x7f"
				  "ELF\x02\x01\x01\xff\xfe\xfd garbage ]]] [[[\n%%%%\n";
	const struct mfile files[] = {{MAIN, bin, sizeof(bin) - 1}};
	(void)state;

	expect_files_error(files, NFILES(files), MAIN ":1: ",
			   "cannot parse this line; fix: write '[section]' or 'key = value'");
	expect_error("this is not an ini file\n", MAIN ":1: ", "cannot parse this line");
	expect_error("[sandbox]\nhostname = a\njust words\n",
		     MAIN ":3: ", "cannot parse this line");
	expect_error("=\n", MAIN ":1: ", "'' is outside any section");
}

static void test_section_header_without_bracket(void **state)
{
	(void)state;
	expect_error("[sandbox\nhostname = a\n", MAIN ":1: ", "cannot parse this line");
	expect_error("[sandbox]\nhostname = a\n[filesystem\nro = /a\n",
		     MAIN ":3: ", "cannot parse this line");
	expect_error("[\n", MAIN ":1: ", "cannot parse this line");
}

static void test_long_section_and_key_names(void **state)
{
	char text[190];
	(void)state;

	snprintf(text, sizeof(text), "[%0150d]\nro = /a\n", 0);
	expect_error(text, MAIN ":1: ", "unknown section");
	snprintf(text, sizeof(text), "[filesystem]\n%0150d = /a\n", 0);
	expect_error(text, MAIN ":2: ", "unknown key");
}

/* ---------- what the profile reference promises about the format ---------- */

static void test_profile_sha256(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "[sandbox]\nhostname = a\n", 0},
	};
	static const char nul_text[] = "abc";
	const struct mfile plain[] = {{MAIN, nul_text, 3}};
	struct policy *p = must_load_files(files, NFILES(files));
	struct ab_err e;
	(void)state;

	/* one digest per file read, of the bytes parsed, in the same order */
	expect_strv(&p->profiles, 2, MAIN, "/p/a.ini");
	expect_strv(&p->profile_sha256, 2,
		    "d8420bd858860461cf38a0063b8463b7fa20a51c232637a4cd15b38986a63de1",
		    "2a5ed27fc9c0ab16bd2da5fecda39c829567afad8ee0fa60ee87e3ddc45031e5");
	policy_free(p);

	p = must_load("");
	expect_strv(&p->profile_sha256, 1,
		    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	policy_free(p);

	/* "abc" is not a valid profile, but the digest of what was read is recorded */
	assert_int_equal(load_files(&p, plain, 1, &e), -1);
	expect_msg(&e, MAIN ":1: ", "cannot parse this line");
	expect_strv(&p->profile_sha256, 1,
		    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	policy_free(p);
}

static void test_inline_comments_and_no_quoting(void **state)
{
	struct policy *p = must_load("[env]\n"
				     "set = A=a#b;c\n"
				     "set = Q=\"x y\"\n"
				     "set = C=1,2 ;comment\n"
				     "set = T=v\t;tab comment\n"
				     "[filesystem]\n"
				     "ro = /usr ; why\n"
				     "ro = /a#b\n");
	(void)state;

	expect_strv(&p->env_set, 4, "A=a#b;c", "Q=\"x y\"", "C=1,2", "T=v");
	expect_fs(p, "/usr", FS_RO, false, MAIN, 7);
	expect_fs(p, "/a#b", FS_RO, false, MAIN, 8);
	policy_free(p);
	expect_error("[sandbox]\nhostname = \"box\"\n",
		     MAIN ":2: ", "'\"box\"' is not a valid host name");
}

static void test_no_continuation_lines(void **state)
{
	(void)state;
	/* an indented line is not a continuation of the previous value */
	expect_error("[filesystem]\nro = /a\n  /b\n", MAIN ":3: ", "cannot parse this line");
	expect_error("[filesystem]\nro = /a,\n\t/b\n", MAIN ":3: ", "cannot parse this line");
	expect_error("[env]\nset = A=1\n    B=2\n", MAIN ":3: ", "unknown key 'B' in [env]");
}

static void test_one_value_per_line_keys(void **state)
{
	struct policy *p = must_load("[filesystem]\nsymlink = a,b /c\n[env]\nset = L=x,y\n"
				     "[audit]\nredact = a,b\n");
	(void)state;

	/* commas are literal in include, symlink, set and redact */
	assert_string_equal(find_fs(p, "/c")->target, "a,b");
	expect_strv(&p->env_set, 1, "L=x,y");
	expect_strv(&p->audit_redact, 1, "a,b");
	policy_free(p);
	expect_error("[sandbox]\ninclude = a.ini, b.ini\n",
		     MAIN ":2: ", "cannot find profile /p/a.ini, b.ini");
}

static void test_nested_error_format(void **state)
{
	const struct mfile files[] = {
	    {"/home/u/my.ini", "# my profile\n[sandbox]\ninclude = base.ini\n", 0},
	    {"/home/u/base.ini", "[limits]\ntimeout = 1s\n\n\n#\n\nmemory = 1.5X\n", 0},
	};
	struct policy *p;
	struct ab_err e;
	(void)state;

	/* the example from docs/profile.md, exactly */
	assert_int_equal(load_files(&p, files, NFILES(files), &e), -1);
	assert_string_equal(e.msg, "/home/u/my.ini:3: /home/u/base.ini:7: '1.5X' has an unknown "
				   "size unit; fix: use K, M, G or T (powers of 1024)");
	policy_free(p);
}

static void test_redact_patterns_checked(void **state)
{
	(void)state;
	expect_error("[audit]\nredact = ok\nredact = (unclosed\n",
		     MAIN ":3: ", "bad redact pattern '(unclosed'");
	expect_error("[audit]\nredact = a{2,1}\n", MAIN ":2: ", "bad redact pattern");
}

static void test_value_types_from_reference(void **state)
{
	struct policy *p = must_load("[limits]\nmemory = 2GiB\nfile-size = 1t\ntmpfs-size = 3mb\n");
	(void)state;

	assert_int_equal(p->limits.memory, 2ull << 30);
	assert_int_equal(p->limits.file_size, 1ull << 40);
	assert_int_equal(p->limits.tmpfs_size, 3ull << 20);
	policy_free(p);
	/* durations are lower case; sizes need a unit letter before B */
	expect_error("[limits]\ntimeout = 5S\n", MAIN ":2: ", "'5S' has an unknown duration unit");
	expect_error("[limits]\ntimeout = 1H\n", MAIN ":2: ", "unknown duration unit");
	expect_error("[limits]\nmemory = 512B\n", MAIN ":2: ", "'512B' has an unknown size unit");
	expect_error("[limits]\nprocesses = 2147483648\n", MAIN ":2: ", "is too large");
	policy_free(must_load("[limits]\nprocesses = 2147483647\n"));
}

static void test_override_repeats(void **state)
{
	struct policy *p = must_load("[sandbox]\nhostname = h\n");
	struct ab_err e = {0};
	(void)state;

	/* repeating a scalar option is an error, like a scalar written twice in one file */
	assert_int_equal(policy_override(p, "limits", "timeout", "1s", "--timeout", &e), 0);
	assert_int_equal(policy_override(p, "limits", "timeout", "2s", "--timeout", &e), -1);
	expect_msg(&e, "--timeout: ", "'timeout' is set twice in [limits]");
	assert_int_equal(p->limits.timeout_ms, 1000);
	assert_int_equal(policy_override(p, "network", "mode", "host", "--net", &e), 0);
	assert_int_equal(policy_override(p, "network", "mode", "none", "--net", &e), -1);
	expect_msg(&e, "--net: ", "'mode' is set twice");
	assert_int_equal(policy_override(p, "sandbox", "workdir", "/a", "--chdir", &e), 0);
	assert_int_equal(policy_override(p, "sandbox", "workdir", "/b", "--chdir", &e), -1);
	expect_msg(&e, "--chdir: ", "'workdir' is set twice");
	assert_int_equal(policy_override(p, "audit", "file", "-", "--audit", &e), 0);
	assert_int_equal(policy_override(p, "audit", "file", "fd:1", "--audit", &e), -1);
	expect_msg(&e, "--audit: ", "'file' is set twice");
	/* one path twice, whatever the option */
	assert_int_equal(policy_override(p, "filesystem", "ro", "/x", "--ro", &e), 0);
	assert_int_equal(policy_override(p, "filesystem", "hide", "/x/", "--hide", &e), -1);
	expect_msg(&e, "--hide: ", "/x is already listed as 'ro'");
	/* a later --setenv of the same NAME wins */
	assert_int_equal(policy_override(p, "env", "set", "A=1", "--setenv", &e), 0);
	assert_int_equal(policy_override(p, "env", "set", "A=2", "--setenv", &e), 0);
	expect_strv(&p->env_set, 1, "A=2");
	/* and --allow may repeat */
	assert_int_equal(policy_override(p, "network", "allow", "a.com", "--allow", &e), 0);
	assert_int_equal(policy_override(p, "network", "allow", "b.com,a.com", "--allow", &e), 0);
	expect_strv(&p->net.allow.text, 2, "a.com", "b.com");
	policy_free(p);
}

static void test_explain_sandbox_fields(void **state)
{
	struct policy *p = must_load("[sandbox]\nnesting = true\nuid = 0\n");
	struct json j;
	const char *text;
	(void)state;

	json_init(&j);
	policy_explain(p, &j);
	text = json_text(&j);
	assert_non_null(text);
	assert_true(json_valid(text));
	assert_non_null(strstr(text, "\"nesting\":true,\"uid\":0,\"gid\":null"));
	json_free(&j);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unknown_section),
	    cmocka_unit_test(test_unknown_key),
	    cmocka_unit_test(test_key_outside_section),
	    cmocka_unit_test(test_scalar_twice_in_one_file),
	    cmocka_unit_test(test_key_case_and_spacing_in_values),
	    cmocka_unit_test(test_nul_byte),
	    cmocka_unit_test(test_huge_single_line),
	    cmocka_unit_test(test_line_length_limit),
	    cmocka_unit_test(test_garbage_only),
	    cmocka_unit_test(test_section_header_without_bracket),
	    cmocka_unit_test(test_long_section_and_key_names),
	    cmocka_unit_test(test_profile_sha256),
	    cmocka_unit_test(test_inline_comments_and_no_quoting),
	    cmocka_unit_test(test_no_continuation_lines),
	    cmocka_unit_test(test_one_value_per_line_keys),
	    cmocka_unit_test(test_nested_error_format),
	    cmocka_unit_test(test_redact_patterns_checked),
	    cmocka_unit_test(test_value_types_from_reference),
	    cmocka_unit_test(test_override_repeats),
	    cmocka_unit_test(test_explain_sandbox_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

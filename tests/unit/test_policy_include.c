/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the profile parser's layers: includes (relative, absolute, cycles, depth,
 * bombs, which value wins) and the command line's overrides over the profile. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "policy_testlib.h"

/* ---------- includes ---------- */

static void test_include_nested_relative(void **state)
{
	const struct mfile files[] = {
	    {"/p/main.ini", "[sandbox]\ninclude = sub/a.ini\nhostname = main\n", 0},
	    {"/p/sub/a.ini",
	     "[sandbox]\ninclude = ../common/b.ini\n[filesystem]\nro = ${PROFILE_DIR}/data\n", 0},
	    {"/p/common/b.ini", "[filesystem]\nro = ${PROFILE_DIR}/lib\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_strv(&p->profiles, 3, "/p/main.ini", "/p/sub/a.ini", "/p/common/b.ini");
	assert_string_equal(p->hostname, "main");
	assert_int_equal(p->n_fs, 2);
	/* includes are applied first: b, then a */
	assert_string_equal(p->fs[0].path, "/p/common/lib");
	assert_string_equal(p->fs[1].path, "/p/sub/data");
	expect_fs(p, "/p/common/lib", FS_RO, false, "/p/common/b.ini", 2);
	expect_fs(p, "/p/sub/data", FS_RO, false, "/p/sub/a.ini", 4);
	policy_free(p);
}

static void test_include_absolute_and_variable(void **state)
{
	const struct mfile files[] = {
	    {"/p/main.ini", "[sandbox]\ninclude = /etc/ab/one.ini\ninclude = ~/two.ini\n", 0},
	    {"/etc/ab/one.ini", "[filesystem]\nro = /one\n", 0},
	    {"/home/alice/two.ini", "[sandbox]\ninclude = ${PROFILE_DIR}/three.ini\n", 0},
	    {"/home/alice/three.ini", "[filesystem]\nro = /three\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_strv(&p->profiles, 4, "/p/main.ini", "/etc/ab/one.ini", "/home/alice/two.ini",
		    "/home/alice/three.ini");
	expect_fs(p, "/one", FS_RO, false, "/etc/ab/one.ini", 2);
	expect_fs(p, "/three", FS_RO, false, "/home/alice/three.ini", 2);
	policy_free(p);
}

static void test_include_cycles(void **state)
{
	const struct mfile self[] = {{MAIN, "[sandbox]\nhostname = a\ninclude = main.ini\n", 0}};
	const struct mfile self_spelled[] = {
	    {MAIN, "[sandbox]\ninclude = ./x/../main.ini\n", 0},
	    {"/p/x", "", 0},
	};
	const struct mfile two[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "[filesystem]\nro = /a\n[sandbox]\ninclude = main.ini\n", 0},
	};
	const struct mfile three[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "[sandbox]\ninclude = b.ini\n", 0},
	    {"/p/b.ini", "[sandbox]\n\ninclude = a.ini\n", 0},
	};
	(void)state;

	expect_files_error(self, NFILES(self),
			   MAIN ":3: ", "include cycle: /p/main.ini includes itself");
	expect_files_error(self_spelled, NFILES(self_spelled), MAIN ":2: ", "include cycle");
	expect_files_error(two, NFILES(two),
			   "/p/a.ini:4: ", "include cycle: /p/main.ini includes itself");
	expect_files_error(two, NFILES(two), MAIN ":2: ", "/p/a.ini:4: include cycle");
	expect_files_error(three, NFILES(three),
			   "/p/b.ini:3: ", "include cycle: /p/a.ini includes itself");
}

static void test_include_diamond_is_not_a_cycle(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\ninclude = b.ini\n", 0},
	    {"/p/a.ini", "[sandbox]\ninclude = common.ini\n", 0},
	    {"/p/b.ini", "[sandbox]\ninclude = common.ini\n", 0},
	    {"/p/common.ini", "[sandbox]\nhostname = c\n[filesystem]\nro = /usr\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_strv(&p->profiles, 5, MAIN, "/p/a.ini", "/p/common.ini", "/p/b.ini",
		    "/p/common.ini");
	assert_string_equal(p->hostname, "c");
	assert_int_equal(p->n_fs, 1);
	policy_free(p);
}

static void test_include_missing(void **state)
{
	const struct mfile nested[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "# a\n[sandbox]\ninclude = gone/x.ini\n", 0},
	};
	const struct mfile unreadable[] = {
	    {MAIN, "[sandbox]\n\ninclude = locked.ini\n", 0},
	    {"/p/locked.ini", NULL, 0},
	};
	struct policy *p;
	struct ab_err e;
	(void)state;

	expect_error("[sandbox]\ninclude = nope.ini\n",
		     MAIN ":2: ", "cannot find profile /p/nope.ini");
	assert_int_equal(load_text(&p, "[sandbox]\ninclude = nope.ini\n", &e), -1);
	assert_ptr_equal(strstr(e.msg, MAIN ":2: "), e.msg);
	policy_free(p);
	expect_files_error(nested, NFILES(nested),
			   "/p/a.ini:3: ", "cannot find profile /p/gone/x.ini");
	expect_files_error(unreadable, NFILES(unreadable),
			   MAIN ":3: ", "cannot open profile /p/locked.ini: Permission denied");
	expect_error("[sandbox]\ninclude =\n", MAIN ":2: ", "'include' has an empty value");
	expect_error("[sandbox]\ninclude = ${NOPE}.ini\n", MAIN ":2: ", "undefined variable");
}

/* A chain f0 -> f1 -> ... -> f(n-1). */
static int load_chain(unsigned n, struct ab_err *e, struct policy **out)
{
	struct mfile *files = calloc(n, sizeof(*files));
	char(*names)[32] = calloc(n, sizeof(*names));
	char(*texts)[96] = calloc(n, sizeof(*texts));
	int rc;

	assert_non_null(files);
	assert_non_null(names);
	assert_non_null(texts);
	for (unsigned i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "/p/f%u.ini", i);
		if (i + 1 < n)
			snprintf(texts[i], sizeof(texts[i]),
				 "[sandbox]\ninclude = f%u.ini\n[filesystem]\nro = /d%u\n", i + 1,
				 i);
		else
			snprintf(texts[i], sizeof(texts[i]), "[filesystem]\nro = /d%u\n", i);
		files[i] = (struct mfile){names[i], texts[i], 0};
	}
	rc = load_files(out, files, n, e);
	free(files);
	free(names);
	free(texts);
	return rc;
}

static void test_include_depth_limit(void **state)
{
	struct policy *p;
	struct ab_err e;
	(void)state;

	assert_int_equal(POLICY_MAX_INCLUDE_DEPTH, 16);
	/* 16 files nested: fine */
	if (load_chain(16, &e, &p) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	assert_int_equal(p->profiles.n, 16);
	assert_int_equal(p->n_fs, 16);
	policy_free(p);

	/* 17: refused, naming the first include line and the file that went too deep */
	assert_int_equal(load_chain(17, &e, &p), -1);
	expect_msg(&e, "/p/f0.ini:2: ", "includes nest deeper than 16 files at /p/f16.ini");
	assert_ptr_equal(strstr(e.msg, "/p/f0.ini:2: "), e.msg);
	expect_msg(&e, "/p/f15.ini:2: ", "includes nest deeper");
	policy_free(p);
}

static void test_include_deep_chain_hostile(void **state)
{
	struct policy *p;
	struct ab_err e;
	(void)state;

	assert_int_equal(load_chain(500, &e, &p), -1);
	expect_msg(&e, "/p/f0.ini:2: ", "includes nest deeper than 16 files");
	assert_true(strlen(e.msg) < AB_ERR_MAX);
	policy_free(p);
}

/* f0 includes f1 k times, f1 includes f2 k times, ... (depth files). */
static int load_bomb(unsigned depth, unsigned k, struct policy **p, struct ab_err *e)
{
	struct mfile *files = calloc(depth, sizeof(*files));
	char(*names)[32] = calloc(depth, sizeof(*names));
	char(*texts)[160] = calloc(depth, sizeof(*texts));
	int rc;

	assert_non_null(files);
	assert_non_null(names);
	assert_non_null(texts);
	for (unsigned i = 0; i < depth; i++) {
		size_t off = 0;
		snprintf(names[i], sizeof(names[i]), "/p/f%u.ini", i);
		off += (size_t)snprintf(texts[i], sizeof(texts[i]), "[sandbox]\n");
		for (unsigned r = 0; i + 1 < depth && r < k; r++)
			off += (size_t)snprintf(texts[i] + off, sizeof(texts[i]) - off,
						"include = f%u.ini\n", i + 1);
		files[i] = (struct mfile){names[i], texts[i], 0};
	}
	rc = load_files(p, files, depth, e);
	free(files);
	free(names);
	free(texts);
	return rc;
}

static void test_include_bomb(void **state)
{
	struct policy *p;
	struct ab_err e;
	int rc;
	(void)state;

	/* 3 includes per file, 16 deep: 3^15 reads unless the total is capped */
	alarm(60);
	rc = load_bomb(16, 3, &p, &e);
	alarm(0);
	assert_int_equal(rc, -1);
	expect_msg(&e, "/p/f0.ini:2: ", "more than 256 profile files read");
	assert_int_equal(p->profiles.n, 256);
	policy_free(p);

	/* repeats that stay under the cap are applied: 1 + 2 + 4 + ... + 128 = 255 files */
	if (load_bomb(8, 2, &p, &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	assert_int_equal(p->profiles.n, 255);
	policy_free(p);
	/* one level more: 511 */
	assert_int_equal(load_bomb(9, 2, &p, &e), -1);
	expect_msg(&e, "", "more than 256 profile files read");
	policy_free(p);
}

static void test_later_include_overrides_earlier(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\ninclude = b.ini\n", 0},
	    {"/p/a.ini",
	     "[sandbox]\nhostname = from-a\n[limits]\ntimeout = 10s\nmemory = 1G\n"
	     "[network]\nmode = host\n[filesystem]\nro = /shared\n",
	     0},
	    {"/p/b.ini",
	     "[sandbox]\nhostname = from-b\n[limits]\ntimeout = 20s\n[filesystem]\n"
	     "tmpfs = /shared\n",
	     0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	assert_string_equal(p->hostname, "from-b");
	assert_int_equal(p->limits.timeout_ms, 20000);
	assert_int_equal(p->limits.memory, 1ull << 30); /* only a set it */
	assert_int_equal(p->net_mode, NET_HOST);
	assert_int_equal(p->n_fs, 1);
	expect_fs(p, "/shared", FS_TMPFS, false, "/p/b.ini", 6);
	policy_free(p);
}

static void test_including_file_overrides_include_listed_last(void **state)
{
	const struct mfile files[] = {
	    {MAIN,
	     "[sandbox]\nhostname = main\n[network]\nmode = host\n[filesystem]\nro = /data\n"
	     "[seccomp]\npreset = none\n[sandbox]\ninclude = base.ini\n",
	     0},
	    {"/p/base.ini",
	     "[sandbox]\nhostname = base\n[network]\nmode = none\n[filesystem]\nrw = /data\n"
	     "rw = /other\n[seccomp]\npreset = strict\naction = kill\n",
	     0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	assert_string_equal(p->hostname, "main");
	assert_int_equal(p->net_mode, NET_HOST);
	assert_int_equal(p->seccomp_preset, SECCOMP_PRESET_NONE);
	assert_int_equal(p->seccomp_action, SECCOMP_ACTION_KILL); /* only base set it */
	expect_fs(p, "/data", FS_RO, false, MAIN, 6);
	expect_fs(p, "/other", FS_RW, false, "/p/base.ini", 7);
	assert_int_equal(p->n_fs, 2);
	policy_free(p);
}

static void test_lists_append_across_includes(void **state)
{
	const struct mfile files[] = {
	    {MAIN,
	     "[sandbox]\ninclude = a.ini\n[network]\nallow = b.com, a.com\n[env]\npass = B_*\n"
	     "set = X=main\n[seccomp]\ndeny = bpf\n[audit]\nredact = two\n",
	     0},
	    {"/p/a.ini",
	     "[network]\nallow = a.com\ndeny = 10.0.0.0/8\n[env]\npass = A_*\nset = X=a\n"
	     "set = Y=a\ndeny = SECRET\n[seccomp]\ndeny = ptrace\nallow = keyctl\n[audit]\n"
	     "redact = one\n",
	     0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	expect_strv(&p->net.allow.text, 2, "a.com", "b.com");
	expect_strv(&p->net.deny.text, 1, "10.0.0.0/8");
	expect_strv(&p->env_pass, 2, "A_*", "B_*");
	expect_strv(&p->env_set, 2, "Y=a", "X=main");
	expect_strv(&p->env_deny, 1, "SECRET");
	expect_strv(&p->seccomp_deny, 2, "ptrace", "bpf");
	expect_strv(&p->seccomp_allow, 1, "keyctl");
	expect_strv(&p->audit_redact, 2, "one", "two");
	policy_free(p);
}

static void test_same_path_across_include_later_wins(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[filesystem]\nrw = /data\n[sandbox]\ninclude = a.ini\ninclude = b.ini\n", 0},
	    {"/p/a.ini", "[filesystem]\nro = /data\nhide = /x\nro = /keep\n", 0},
	    {"/p/b.ini", "[filesystem]\nro = /x\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	(void)state;

	assert_int_equal(p->n_fs, 3);
	expect_fs(p, "/data", FS_RW, false, MAIN, 2);
	expect_fs(p, "/x", FS_RO, false, "/p/b.ini", 2);
	expect_fs(p, "/keep", FS_RO, false, "/p/a.ini", 4);
	policy_free(p);
}

static void test_scalar_twice_in_included_file(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = a.ini\n", 0},
	    {"/p/a.ini", "[limits]\nmemory = 1G\n\nmemory = 2G\n", 0},
	};
	(void)state;

	expect_files_error(files, NFILES(files),
			   "/p/a.ini:4: ", "'memory' is set twice in [limits]");
}

/* ---------- the command line ---------- */

static void test_override_beats_profile(void **state)
{
	const struct mfile files[] = {
	    {MAIN,
	     "[sandbox]\nhostname = prof\ninclude = a.ini\n[limits]\ntimeout = 10s\n"
	     "[filesystem]\nrw = /work/proj\n",
	     0},
	    {"/p/a.ini", "[network]\nmode = none\n[filesystem]\nro = /from-include\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	struct ab_err e = {0};
	(void)state;

	assert_int_equal(policy_override(p, "limits", "timeout", "30s", "--timeout", &e), 0);
	assert_int_equal(policy_override(p, "network", "mode", "host", "--net", &e), 0);
	assert_int_equal(policy_override(p, "filesystem", "ro", "/work/proj", "--ro", &e), 0);
	assert_int_equal(policy_override(p, "filesystem", "tmpfs", "/from-include", "--tmpfs", &e),
			 0);
	assert_int_equal(policy_override(p, "filesystem", "ro", "~/data, ${CWD}/x", "--ro", &e), 0);
	assert_int_equal(policy_override(p, "sandbox", "workdir", "/work/proj", "--chdir", &e), 0);
	assert_int_equal(policy_override(p, "env", "set", "A=${USER}", "--setenv", &e), 0);
	assert_int_equal(policy_override(p, "network", "allow", "example.com", "--allow", &e), 0);
	assert_int_equal(policy_override(p, "audit", "file", "fd:2", "--audit", &e), 0);

	assert_string_equal(p->hostname, "prof");
	assert_int_equal(p->limits.timeout_ms, 30000);
	assert_int_equal(p->net_mode, NET_HOST);
	expect_fs(p, "/work/proj", FS_RO, false, "--ro", 0);
	expect_fs(p, "/from-include", FS_TMPFS, false, "--tmpfs", 0);
	expect_fs(p, "/home/alice/data", FS_RO, false, "--ro", 0);
	expect_fs(p, "/work/proj/x", FS_RO, false, "--ro", 0);
	assert_int_equal(p->n_fs, 4);
	assert_string_equal(p->workdir, "/work/proj");
	expect_strv(&p->env_set, 1, "A=alice");
	expect_strv(&p->net.allow.text, 1, "example.com");
	assert_string_equal(p->audit_file, "fd:2");
	policy_free(p);
}

static void test_override_errors_name_the_option(void **state)
{
	struct policy *p = must_load("[filesystem]\nro = /usr\n");
	struct ab_err e = {0};
	(void)state;

	assert_int_equal(policy_override(p, "filesystem", "ro", "relative/x", "--ro", &e), -1);
	assert_ptr_equal(strstr(e.msg, "--ro: "), e.msg);
	expect_msg(&e, "--ro: ", "'relative/x' is not an absolute path");
	assert_int_equal(policy_override(p, "limits", "timeout", "soon", "--timeout", &e), -1);
	expect_msg(&e, "--timeout: ", "'soon' is not a duration");
	assert_int_equal(policy_override(p, "limits", "timeout", "0", "--timeout", &e), -1);
	expect_msg(&e, "--timeout: ", "'timeout' must be greater than 0");
	assert_int_equal(policy_override(p, "network", "mode", "wifi", "--net", &e), -1);
	expect_msg(&e, "--net: ", "'wifi' is not a valid mode");
	assert_int_equal(policy_override(p, "network", "allow", "b\xc3\xa4r\xff.de", "--allow", &e),
			 -1);
	expect_msg(&e, "--allow: ", "not valid UTF-8");
	assert_int_equal(policy_override(p, "env", "set", "NOEQ", "--setenv", &e), -1);
	expect_msg(&e, "--setenv: ", "'NOEQ' is not NAME=VALUE");
	assert_int_equal(policy_override(p, "filesystem", "ro", "${PROFILE_DIR}/x", "--ro", &e),
			 -1);
	expect_msg(&e, "--ro: ", "undefined variable '${PROFILE_DIR}'");
	assert_int_equal(policy_override(p, "filesystem", "tmpfs", "/", "--tmpfs", &e), -1);
	expect_msg(&e, "--tmpfs: ", "'tmpfs' cannot be applied to /");
	assert_int_equal(policy_override(p, "filesystem", "rw", "/", "--rw", &e), -1);
	expect_msg(&e, "--rw: ", "'rw = /' would make the whole file system writable");
	assert_int_equal(policy_override(p, "filesystem", "rwx", "/a", "--rwx", &e), -1);
	expect_msg(&e, "--rwx: ", "unknown key 'rwx' in [filesystem]");
	/* the profile is untouched by the failed overrides */
	assert_int_equal(p->n_fs, 1);
	expect_fs(p, "/usr", FS_RO, false, MAIN, 2);
	assert_int_equal(p->limits.timeout_ms, 0);
	assert_int_equal(p->net_mode, NET_NONE);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_include_nested_relative),
	    cmocka_unit_test(test_include_absolute_and_variable),
	    cmocka_unit_test(test_include_cycles),
	    cmocka_unit_test(test_include_diamond_is_not_a_cycle),
	    cmocka_unit_test(test_include_missing),
	    cmocka_unit_test(test_include_depth_limit),
	    cmocka_unit_test(test_include_deep_chain_hostile),
	    cmocka_unit_test(test_include_bomb),
	    cmocka_unit_test(test_later_include_overrides_earlier),
	    cmocka_unit_test(test_including_file_overrides_include_listed_last),
	    cmocka_unit_test(test_lists_append_across_includes),
	    cmocka_unit_test(test_same_path_across_include_later_wins),
	    cmocka_unit_test(test_scalar_twice_in_included_file),
	    cmocka_unit_test(test_override_beats_profile),
	    cmocka_unit_test(test_override_errors_name_the_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

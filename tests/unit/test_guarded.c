/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for guarded_paths: what stays read-only whatever the workspace is, from the
 * environment: the start-up files under HOME, its ssh, bin and agentbox directories, git's and
 * agentbox's XDG directories, agentbox's state directory, the profile path and PATH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "guarded.h"
#include "policy.h"

static const char *const *table;

static const char *lookup(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; table && table[i]; i++)
		if (!strncmp(table[i], name, n) && table[i][n] == '=')
			return table[i] + n + 1;
	return NULL;
}

static void lists(const char *const *env, struct strv *files, struct strv *dirs)
{
	struct ab_err e = {0};

	table = env;
	memset(files, 0, sizeof(*files));
	memset(dirs, 0, sizeof(*dirs));
	assert_int_equal(guarded_paths(lookup, files, dirs, &e), 0);
}

static void test_home_defaults(void **state)
{
	static const char *const env[] = {"HOME=/home/a",
					  "PATH=/home/a/bin:/usr/bin:rel/bin:/usr/bin/", NULL};
	struct strv files, dirs;

	(void)state;
	lists(env, &files, &dirs);
	assert_true(strv_has(&files, "/home/a/.bashrc"));
	assert_true(strv_has(&files, "/home/a/.gitconfig"));
	assert_false(strv_has(&dirs, "/home/a/.gitconfig"));
	assert_true(strv_has(&dirs, "/home/a/.ssh"));
	assert_true(strv_has(&dirs, "/home/a/.local/bin"));
	assert_true(strv_has(&dirs, "/home/a/.config/agentbox"));
	assert_true(strv_has(&dirs, "/home/a/.config/git"));
	assert_true(strv_has(&dirs, "/home/a/.local/state/agentbox"));
	assert_true(strv_has(&dirs, "/home/a/bin"));
	/* PATH: absolute entries once, a trailing slash folded, a relative one ignored */
	assert_true(strv_has(&dirs, "/usr/bin"));
	assert_false(strv_has(&dirs, "/usr/bin/"));
	assert_false(strv_has(&dirs, "rel/bin"));
	{
		size_t usr = 0;
		for (size_t i = 0; i < dirs.n; i++)
			usr += !strcmp(dirs.v[i], "/usr/bin");
		assert_int_equal(usr, 1);
	}
	strv_free(&files);
	strv_free(&dirs);
}

static void test_xdg_and_profile_path(void **state)
{
	static const char *const env[] = {"HOME=/h", "XDG_CONFIG_HOME=/cfg", "XDG_STATE_HOME=/st",
					  "AGENTBOX_PROFILE_PATH=/p1::/p2:x", NULL};
	struct strv files, dirs;

	(void)state;
	lists(env, &files, &dirs);
	assert_true(strv_has(&dirs, "/cfg/git"));
	assert_true(strv_has(&dirs, "/cfg/agentbox"));
	assert_false(strv_has(&dirs, "/h/.config/git"));
	assert_true(strv_has(&dirs, "/st/agentbox"));
	assert_false(strv_has(&dirs, "/h/.local/state/agentbox"));
	assert_true(strv_has(&dirs, "/p1"));
	assert_true(strv_has(&dirs, "/p2"));
	assert_false(strv_has(&dirs, "x"));
	strv_free(&files);
	strv_free(&dirs);
}

static void test_no_home(void **state)
{
	static const char *const env[] = {"HOME=relative", NULL};
	struct strv files, dirs;

	(void)state;
	lists(env, &files, &dirs);
	assert_int_equal(files.n, 0);
	assert_int_equal(dirs.n, 0);
}

/* Names in fixed-size arrays (a table of pointers is relocated at every start): a name as long
 * as its array would lose its NUL and run into the next one, and C says nothing of it. */
static void test_protected_names_end(void **state)
{
	size_t i;
	(void)state;

	for (i = 0; i < 100 && policy_protected_names[i][0]; i++)
		assert_non_null(
		    memchr(policy_protected_names[i], '\0', POLICY_PROTECTED_NAME_SIZE));
	assert_true(i > 0 && i < 100); /* "" ends the list */
}

/* A .git below the root, as a directory, a file or anything inside one; the root's own is the
 * protected names' (and not this), and names that only begin with .git are no repository. */
static void test_nested_git(void **state)
{
	(void)state;
	assert_true(guarded_nested_git("evil/.git"));
	assert_true(guarded_nested_git("evil/.git/config"));
	assert_true(guarded_nested_git("a/b/.git/hooks/pre-commit"));
	assert_false(guarded_nested_git(".git"));
	assert_false(guarded_nested_git(".git/objects/ab/cdef"));
	assert_false(guarded_nested_git("src/.gitignore"));
	assert_false(guarded_nested_git("src/.github/workflows/ci.yml"));
	assert_false(guarded_nested_git("src/x.git"));
	assert_false(guarded_nested_git("src/main.c"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_protected_names_end),	 cmocka_unit_test(test_home_defaults),
	    cmocka_unit_test(test_xdg_and_profile_path), cmocka_unit_test(test_no_home),
	    cmocka_unit_test(test_nested_git),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

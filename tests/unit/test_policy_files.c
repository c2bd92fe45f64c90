/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the profile parser on real files: policy_find_profile's search, and the
 * default policy_io (symlinks, refused files, a FIFO that must not block), in temporary
 * directories. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "policy_testlib.h"

/* ---------- policy_find_profile ---------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	assert_int_equal(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void make_dir(const char *dir)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", tmp, strerror(errno));
		*s = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", tmp, strerror(errno));
}

static void make_profile(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	make_dir(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[sandbox]\n", f);
	fclose(f);
}

struct search {
	char root[64];
	char d1[128], d2[128], home[128], conf[192], rel[128];
	char *old_path;
};

static int search_setup(void **state)
{
	struct search *s = calloc(1, sizeof(*s));
	const char *old = getenv("AGENTBOX_PROFILE_PATH");

	if (!s)
		return -1;
	snprintf(s->root, sizeof(s->root), "/tmp/agentbox-test-XXXXXX");
	if (!mkdtemp(s->root))
		return -1;
	snprintf(s->d1, sizeof(s->d1), "%s/d1", s->root);
	snprintf(s->d2, sizeof(s->d2), "%s/d2", s->root);
	snprintf(s->home, sizeof(s->home), "%s/home", s->root);
	snprintf(s->conf, sizeof(s->conf), "%s/.config/agentbox/profiles", s->home);
	snprintf(s->rel, sizeof(s->rel), "%s/rel", s->root);
	s->old_path = old ? strdup(old) : NULL;
	*state = s;
	return 0;
}

static int search_teardown(void **state)
{
	struct search *s = *state;

	rm_tree(s->root);
	if (s->old_path)
		setenv("AGENTBOX_PROFILE_PATH", s->old_path, 1);
	else
		unsetenv("AGENTBOX_PROFILE_PATH");
	free(s->old_path);
	free(s);
	return 0;
}

static char *find(const struct search *s, const char *name, struct ab_err *e)
{
	struct policy_vars v = test_vars;

	v.home = s->home;
	memset(e, 0, sizeof(*e));
	return policy_find_profile(name, &v, NULL, e);
}

static void expect_found(const struct search *s, const char *name, const char *dir,
			 const char *file)
{
	struct ab_err e;
	char want[PATH_MAX];
	char *got = find(s, name, &e);

	if (!got) {
		print_error("'%s' not found: %s\n", name, e.msg);
		fail();
	}
	snprintf(want, sizeof(want), "%s/%s", dir, file);
	assert_string_equal(got, want);
	free(got);
}

static void test_find_profile_search_order(void **state)
{
	struct search *s = *state;
	char env[512];

	make_profile(s->d1, "abtest-both.ini");
	make_profile(s->d2, "abtest-both.ini");
	make_profile(s->d2, "abtest-second.ini");
	make_profile(s->conf, "abtest-both.ini");
	make_profile(s->conf, "abtest-home.ini");
	/* a directory named like a profile is not a profile */
	make_dir(s->d1);
	snprintf(env, sizeof(env), "%s/abtest-second.ini", s->d1);
	make_dir(env);

	snprintf(env, sizeof(env), "%s:%s", s->d1, s->d2);
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", env, 1), 0);
	expect_found(s, "abtest-both", s->d1, "abtest-both.ini");
	expect_found(s, "abtest-second", s->d2, "abtest-second.ini");
	expect_found(s, "abtest-home", s->conf, "abtest-home.ini");

	/* order within the list matters; empty entries are skipped */
	snprintf(env, sizeof(env), "::%s::%s:", s->d2, s->d1);
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", env, 1), 0);
	expect_found(s, "abtest-both", s->d2, "abtest-both.ini");

	/* without the variable, ~/.config/agentbox/profiles is searched */
	assert_int_equal(unsetenv("AGENTBOX_PROFILE_PATH"), 0);
	expect_found(s, "abtest-both", s->conf, "abtest-both.ini");
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", "", 1), 0);
	expect_found(s, "abtest-both", s->conf, "abtest-both.ini");
}

static void test_find_profile_relative_dirs_ignored(void **state)
{
	struct search *s = *state;
	char old_cwd[PATH_MAX], *got;
	struct ab_err e;

	make_profile(s->rel, "abtest-rel.ini");
	assert_non_null(getcwd(old_cwd, sizeof(old_cwd)));
	assert_int_equal(chdir(s->root), 0);
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", "rel:./rel:.", 1), 0);
	got = find(s, "abtest-rel", &e);
	assert_int_equal(chdir(old_cwd), 0);
	assert_null(got);
	expect_msg(&e, "", "profile 'abtest-rel' not found");
}

static void test_find_profile_name_forms(void **state)
{
	struct search *s = *state;
	struct ab_err e;
	char *got;

	make_profile(s->d1, "abtest-name.ini");
	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", s->d1, 1), 0);
	expect_found(s, "abtest-name", s->d1, "abtest-name.ini");
	expect_found(s, "abtest-name.ini", s->d1, "abtest-name.ini");

	/* a value with a '/' is a path, returned as is, even if it does not exist */
	got = find(s, "./abtest-name.ini", &e);
	assert_non_null(got);
	assert_string_equal(got, "./abtest-name.ini");
	free(got);
	got = find(s, "/nonexistent/dir/x.ini", &e);
	assert_non_null(got);
	assert_string_equal(got, "/nonexistent/dir/x.ini");
	free(got);
	got = find(s, "sub/abtest-name", &e);
	assert_non_null(got);
	assert_string_equal(got, "sub/abtest-name");
	free(got);
}

static void test_find_profile_not_found(void **state)
{
	struct search *s = *state;
	struct ab_err e;
	char *got;

	assert_int_equal(setenv("AGENTBOX_PROFILE_PATH", s->d1, 1), 0);
	got = find(s, "abtest-no-such-profile", &e);
	assert_null(got);
	expect_msg(&e, "profile 'abtest-no-such-profile' not found",
		   "fix: give a path (./abtest-no-such-profile)");
	got = find(s, "abtest-no-such-profile.ini", &e);
	assert_null(got);
	expect_msg(&e, "profile 'abtest-no-such-profile.ini' not found",
		   "put abtest-no-such-profile.ini in");
	got = find(s, "", &e);
	assert_null(got);
	expect_msg(&e, "", "'' is not a profile name");
	got = find(s, ".ini", &e);
	assert_null(got);
}

/* ---------- real files (the default policy_io) ---------- */

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f;

	assert_true(n > 0 && (size_t)n < sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int load_real(struct policy **p, const char *dir, const char *name, struct ab_err *e)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*p = policy_new(&test_vars);
	assert_non_null(*p);
	memset(e, 0, sizeof(*e));
	return policy_load(*p, path, NULL, e);
}

static void test_real_files_and_symlinks(void **state)
{
	struct search *s = *state;
	char real[PATH_MAX], sub[PATH_MAX + 8], want[PATH_MAX + 32], link[PATH_MAX + 16];
	struct policy *p;
	struct ab_err e;

	assert_non_null(realpath(s->root, real));
	snprintf(sub, sizeof(sub), "%s/sub", s->root);
	make_dir(sub);
	write_file(s->root, "main.ini", "[sandbox]\ninclude = sub/a.ini\n", 30);
	write_file(sub, "a.ini", "[filesystem]\nro = ${PROFILE_DIR}/data\n", 38);
	write_file(sub, "b.ini", "[sandbox]\ninclude = a.ini\n", 26);
	if (load_real(&p, s->root, "main.ini", &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	snprintf(want, sizeof(want), "%s/main.ini", real);
	assert_string_equal(p->profiles.v[0], want);
	snprintf(want, sizeof(want), "%s/sub/data", real);
	expect_fs(p, want, FS_RO, false, p->profiles.v[1], 2);
	policy_free(p);

	/* a symlinked profile is read at its real path: its includes resolve from there */
	snprintf(link, sizeof(link), "%s/link.ini", s->root);
	snprintf(want, sizeof(want), "%s/sub/b.ini", real);
	assert_int_equal(symlink(want, link), 0);
	if (load_real(&p, s->root, "link.ini", &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	expect_strv(&p->profiles, 2, want, p->profiles.v[1]);
	snprintf(want, sizeof(want), "%s/sub/a.ini", real);
	assert_string_equal(p->profiles.v[1], want);
	policy_free(p);
}

static void test_real_files_refused(void **state)
{
	struct search *s = *state;
	char path[PATH_MAX], *big;
	struct policy *p;
	struct ab_err e;

	assert_int_equal(load_real(&p, s->root, "missing.ini", &e), -1);
	expect_msg(&e, "cannot find profile", "No such file or directory");
	policy_free(p);

	snprintf(path, sizeof(path), "%s/dir.ini", s->root);
	make_dir(path);
	assert_int_equal(load_real(&p, s->root, "dir.ini", &e), -1);
	expect_msg(&e, "", "is not a regular file");
	policy_free(p);

	/* 1 MiB is the limit; one byte more is refused before it is parsed */
	big = malloc(POLICY_MAX_FILE_BYTES + 1);
	assert_non_null(big);
	memset(big, '\n', POLICY_MAX_FILE_BYTES + 1);
	write_file(s->root, "big.ini", big, POLICY_MAX_FILE_BYTES);
	if (load_real(&p, s->root, "big.ini", &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	policy_free(p);
	write_file(s->root, "big.ini", big, POLICY_MAX_FILE_BYTES + 1);
	free(big);
	assert_int_equal(load_real(&p, s->root, "big.ini", &e), -1);
	expect_msg(&e, "", "is 1048577 bytes; the limit is 1048576");
	policy_free(p);

	/* an include that names a file too big is refused at the include line */
	write_file(s->root, "inc.ini", "[sandbox]\n\ninclude = big.ini\n", 29);
	assert_int_equal(load_real(&p, s->root, "inc.ini", &e), -1);
	expect_msg(&e, "/inc.ini:3: ", "the limit is 1048576");
	policy_free(p);
}

static void test_real_fifo_does_not_block(void **state)
{
	struct search *s = *state;
	char path[PATH_MAX];
	struct policy *p;
	struct ab_err e;
	int rc;

	/* a FIFO is not a regular file: refused at once, not waited on for a writer */
	snprintf(path, sizeof(path), "%s/fifo.ini", s->root);
	assert_int_equal(mkfifo(path, 0600), 0);
	write_file(s->root, "inc.ini", "[sandbox]\ninclude = fifo.ini\n", 29);
	alarm(20); /* turns a hang into a failure */
	rc = load_real(&p, s->root, "fifo.ini", &e);
	alarm(0);
	assert_int_equal(rc, -1);
	expect_msg(&e, "", "is not a regular file");
	policy_free(p);
	alarm(20);
	rc = load_real(&p, s->root, "inc.ini", &e);
	alarm(0);
	assert_int_equal(rc, -1);
	expect_msg(&e, "/inc.ini:2: ", "is not a regular file");
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_find_profile_search_order, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_find_profile_relative_dirs_ignored, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_find_profile_name_forms, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_find_profile_not_found, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_real_files_and_symlinks, search_setup,
					    search_teardown),
	    cmocka_unit_test_setup_teardown(test_real_files_refused, search_setup, search_teardown),
	    cmocka_unit_test_setup_teardown(test_real_fifo_does_not_block, search_setup,
					    search_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

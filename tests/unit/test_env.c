/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for env_build: the command's environment starts empty, [env] pass copies, deny wins
 * over pass, set overrides, defaults fill in, TERM follows the caller, the run id is always set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "policy.h"

static char *caller_env[] = {
    "HOME=/home/alice",
    "PATH=/opt/bin:/usr/bin",
    "FOO=1",
    "FOOBAR=2",
    "LC_ALL=de_DE.UTF-8",
    "LC_TIME=C",
    "XLC_X=no",
    "AWS_SECRET_ACCESS_KEY=hunter2",
    "AWS_REGION=eu-west-1",
    "TERM=xterm-256color",
    "SSH_AUTH_SOCK=/run/ssh.sock",
    "EQ=a=b=c",
    "EMPTY=",
    "NOEQUALS",
    "=novalue",
    NULL,
};

static struct policy *new_policy(void)
{
	struct policy_vars v = {0};
	struct policy *p = policy_new(&v);
	assert_non_null(p);
	return p;
}

static void push(struct strv *sv, const char *s)
{
	assert_int_equal(strv_push(sv, s), 0);
}

static void build(const struct policy *p, char *const *caller, const char *home,
		  struct env_result *r)
{
	struct ab_err e = {0};

	if (env_build(p, caller, home, "run-42", r, &e) != 0) {
		print_error("env_build failed: %s\n", e.msg);
		fail();
	}
}

/* The value of name in r->vars; fails if name appears more than once. NULL when absent. */
static const char *get(const struct env_result *r, const char *name)
{
	size_t len = strlen(name);
	const char *found = NULL;

	for (size_t i = 0; i < r->vars.n; i++) {
		if (strncmp(r->vars.v[i], name, len) || r->vars.v[i][len] != '=')
			continue;
		if (found) {
			print_error("%s is set twice\n", name);
			fail();
		}
		found = r->vars.v[i] + len + 1;
	}
	return found;
}

static bool listed(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return true;
	return false;
}

/* Every entry is NAME=VALUE with a unique name, and the vector is NULL-terminated. */
static void check_well_formed(const struct env_result *r)
{
	assert_null(r->vars.v[r->vars.n]);
	for (size_t i = 0; i < r->vars.n; i++) {
		const char *eq = strchr(r->vars.v[i], '=');
		char name[256];
		assert_non_null(eq);
		assert_true(eq > r->vars.v[i]);
		snprintf(name, sizeof(name), "%.*s", (int)(eq - r->vars.v[i]), r->vars.v[i]);
		assert_non_null(get(r, name));
	}
}

static void test_starts_empty(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	build(p, caller_env, "/home/sandbox", &r);
	check_well_formed(&r);
	/* nothing from the caller but TERM; only the defaults and the run id */
	assert_int_equal(r.vars.n, 6);
	assert_string_equal(get(&r, "PATH"), "/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(get(&r, "HOME"), "/home/sandbox");
	assert_string_equal(get(&r, "TMPDIR"), "/tmp");
	assert_string_equal(get(&r, "LANG"), "C.UTF-8");
	assert_string_equal(get(&r, "TERM"), "xterm-256color");
	assert_string_equal(get(&r, "AGENTBOX_RUN_ID"), "run-42");
	assert_null(get(&r, "FOO"));
	assert_null(get(&r, "AWS_SECRET_ACCESS_KEY"));
	assert_null(get(&r, "SSH_AUTH_SOCK"));
	assert_int_equal(r.passed.n, 0);
	assert_int_equal(r.denied.n, 0);
	env_result_free(&r);
	policy_free(p);
}

static void test_pass_globs_copy(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_pass, "LC_*");
	push(&p->env_pass, "FOO");
	push(&p->env_pass, "EQ");
	push(&p->env_pass, "EMPTY");
	build(p, caller_env, "/home/sandbox", &r);
	check_well_formed(&r);
	assert_string_equal(get(&r, "LC_ALL"), "de_DE.UTF-8");
	assert_string_equal(get(&r, "LC_TIME"), "C");
	assert_string_equal(get(&r, "FOO"), "1");
	assert_string_equal(get(&r, "EQ"), "a=b=c");
	assert_string_equal(get(&r, "EMPTY"), "");
	/* a glob matches the whole name */
	assert_null(get(&r, "FOOBAR"));
	assert_null(get(&r, "XLC_X"));
	assert_int_equal(r.passed.n, 5);
	assert_string_equal(r.passed.v[0], "FOO");
	assert_string_equal(r.passed.v[1], "LC_ALL");
	assert_string_equal(r.passed.v[2], "LC_TIME");
	assert_string_equal(r.passed.v[3], "EQ");
	assert_string_equal(r.passed.v[4], "EMPTY");
	assert_int_equal(r.denied.n, 0);
	env_result_free(&r);
	policy_free(p);
}

static void test_deny_wins_over_pass(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_pass, "*");
	push(&p->env_deny, "AWS_*");
	push(&p->env_deny, "SSH_AUTH_SOCK");
	build(p, caller_env, "/home/sandbox", &r);
	check_well_formed(&r);
	assert_null(get(&r, "AWS_SECRET_ACCESS_KEY"));
	assert_null(get(&r, "AWS_REGION"));
	assert_null(get(&r, "SSH_AUTH_SOCK"));
	assert_int_equal(r.denied.n, 3);
	assert_true(listed(&r.denied, "AWS_SECRET_ACCESS_KEY"));
	assert_true(listed(&r.denied, "AWS_REGION"));
	assert_true(listed(&r.denied, "SSH_AUTH_SOCK"));
	assert_false(listed(&r.passed, "AWS_REGION"));
	/* what was passed keeps the caller's value, defaults do not override it */
	assert_string_equal(get(&r, "FOO"), "1");
	assert_string_equal(get(&r, "PATH"), "/opt/bin:/usr/bin");
	assert_string_equal(get(&r, "HOME"), "/home/alice");
	assert_string_equal(get(&r, "TMPDIR"), "/tmp");
	/* malformed caller entries are never copied */
	assert_null(get(&r, "NOEQUALS"));
	for (size_t i = 0; i < r.vars.n; i++)
		assert_true(r.vars.v[i][0] != '=');
	env_result_free(&r);
	policy_free(p);
}

static void test_denied_names_only_when_pass_matched(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_pass, "FOO");
	push(&p->env_deny, "AWS_*");
	build(p, caller_env, "/home/sandbox", &r);
	assert_int_equal(r.denied.n, 0);
	assert_null(get(&r, "AWS_REGION"));
	env_result_free(&r);
	policy_free(p);
}

static void test_set_overrides(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_pass, "FOO");
	push(&p->env_pass, "PATH");
	push(&p->env_set, "FOO=from-profile");
	push(&p->env_set, "NEW=x=y");
	push(&p->env_set, "HOME=/custom/home");
	push(&p->env_set, "LANG=en_US.UTF-8");
	push(&p->env_set, "TMPDIR=/scratch");
	push(&p->env_set, "TERM=dumb");
	build(p, caller_env, "/home/sandbox", &r);
	check_well_formed(&r);
	assert_string_equal(get(&r, "FOO"), "from-profile");
	assert_string_equal(get(&r, "NEW"), "x=y");
	assert_string_equal(get(&r, "HOME"), "/custom/home");
	assert_string_equal(get(&r, "LANG"), "en_US.UTF-8");
	assert_string_equal(get(&r, "TMPDIR"), "/scratch");
	assert_string_equal(get(&r, "TERM"), "dumb");
	assert_string_equal(get(&r, "PATH"), "/opt/bin:/usr/bin");
	env_result_free(&r);
	policy_free(p);
}

static void test_set_path_overrides_default(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_set, "PATH=/sandbox/bin");
	build(p, caller_env, "/home/sandbox", &r);
	assert_string_equal(get(&r, "PATH"), "/sandbox/bin");
	env_result_free(&r);
	policy_free(p);
}

static void test_defaults_without_home_or_term(void **state)
{
	char *caller[] = {"FOO=1", NULL};
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	build(p, caller, NULL, &r);
	check_well_formed(&r);
	assert_null(get(&r, "HOME"));
	assert_null(get(&r, "TERM"));
	assert_string_equal(get(&r, "PATH"), "/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(get(&r, "TMPDIR"), "/tmp");
	assert_string_equal(get(&r, "LANG"), "C.UTF-8");
	assert_string_equal(get(&r, "AGENTBOX_RUN_ID"), "run-42");
	assert_int_equal(r.vars.n, 4);
	env_result_free(&r);
	policy_free(p);
}

static void test_null_caller(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_pass, "*");
	build(p, NULL, "/h", &r);
	check_well_formed(&r);
	assert_int_equal(r.vars.n, 5);
	assert_string_equal(get(&r, "HOME"), "/h");
	assert_int_equal(r.passed.n, 0);
	env_result_free(&r);
	policy_free(p);
}

static void test_term_copied_unless_denied(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	/* denied without being passed: not copied */
	push(&p->env_deny, "TERM");
	build(p, caller_env, "/h", &r);
	assert_null(get(&r, "TERM"));
	env_result_free(&r);
	policy_free(p);

	/* denied by a glob while everything is passed: not copied, and listed */
	p = new_policy();
	push(&p->env_pass, "*");
	push(&p->env_deny, "T*");
	build(p, caller_env, "/h", &r);
	assert_null(get(&r, "TERM"));
	assert_true(listed(&r.denied, "TERM"));
	env_result_free(&r);
	policy_free(p);

	/* a deny glob that does not match TERM leaves it alone */
	p = new_policy();
	push(&p->env_deny, "TERMINAL*");
	build(p, caller_env, "/h", &r);
	assert_string_equal(get(&r, "TERM"), "xterm-256color");
	env_result_free(&r);
	policy_free(p);
}

static void test_run_id_always_set(void **state)
{
	char *caller[] = {"AGENTBOX_RUN_ID=spoofed", "TERM=vt100", NULL};
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_pass, "*");
	push(&p->env_deny, "AGENTBOX_*");
	push(&p->env_set, "AGENTBOX_RUN_ID=from-profile");
	build(p, caller, "/h", &r);
	check_well_formed(&r);
	assert_string_equal(get(&r, "AGENTBOX_RUN_ID"), "run-42");
	assert_true(listed(&r.denied, "AGENTBOX_RUN_ID"));
	env_result_free(&r);
	policy_free(p);

	/* even when nothing else is there */
	p = new_policy();
	push(&p->env_set, "AGENTBOX_RUN_ID=x");
	build(p, NULL, NULL, &r);
	assert_string_equal(get(&r, "AGENTBOX_RUN_ID"), "run-42");
	env_result_free(&r);
	policy_free(p);
}

static void test_duplicate_caller_entries(void **state)
{
	char *caller[] = {"FOO=first", "FOO=second", NULL};
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_pass, "FOO");
	build(p, caller, "/h", &r);
	check_well_formed(&r); /* FOO appears once */
	assert_non_null(get(&r, "FOO"));
	env_result_free(&r);
	policy_free(p);
}

/* env_get reads what was built; env_append adds to a list of options after a space, or sets it
 * when it is unset or empty (JAVA_TOOL_OPTIONS: the profile's options, then agentbox's). */
static void test_get_and_append(void **state)
{
	struct policy *p = new_policy();
	struct env_result r;
	(void)state;

	push(&p->env_set, "JAVA_TOOL_OPTIONS=-Xmx1g");
	push(&p->env_set, "EMPTY=");
	build(p, NULL, "/h", &r);
	assert_string_equal(env_get(&r, "JAVA_TOOL_OPTIONS"), "-Xmx1g");
	assert_null(env_get(&r, "JAVA_TOOL"));
	assert_null(env_get(&r, "UNSET"));
	assert_int_equal(env_append(&r, "JAVA_TOOL_OPTIONS", "-Da=1"), 0);
	assert_int_equal(env_append(&r, "JAVA_TOOL_OPTIONS", "-Db=2"), 0);
	assert_string_equal(env_get(&r, "JAVA_TOOL_OPTIONS"), "-Xmx1g -Da=1 -Db=2");
	assert_int_equal(env_append(&r, "UNSET", "-Dc=3"), 0);
	assert_string_equal(env_get(&r, "UNSET"), "-Dc=3");
	assert_int_equal(env_append(&r, "EMPTY", "-Dd=4"), 0);
	assert_string_equal(env_get(&r, "EMPTY"), "-Dd=4");
	check_well_formed(&r);
	env_result_free(&r);
	policy_free(p);
}

/* A session's exec: the session's environment with the request's NAME=VALUE set in it, each
 * replacing the session's value; the session's own is left as it was; an entry without '='
 * fails. */
static void test_overlaid(void **state)
{
	struct strv base = {0}, over = {0}, out = {0};
	(void)state;

	push(&base, "A=1");
	push(&base, "PATH=/bin");
	push(&over, "PATH=/usr/bin:/bin");
	push(&over, "B=");
	push(&over, "B=2");
	assert_int_equal(env_overlaid(&base, &over, &out), 0);
	assert_int_equal(out.n, 3);
	assert_string_equal(out.v[0], "A=1");
	assert_string_equal(out.v[1], "PATH=/usr/bin:/bin");
	assert_string_equal(out.v[2], "B=2");
	assert_null(out.v[3]);
	assert_string_equal(base.v[1], "PATH=/bin");
	strv_free(&out);
	push(&over, "NOEQUALS");
	assert_int_equal(env_overlaid(&base, &over, &out), -1);
	strv_free(&base);
	strv_free(&over);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_starts_empty),
	    cmocka_unit_test(test_pass_globs_copy),
	    cmocka_unit_test(test_deny_wins_over_pass),
	    cmocka_unit_test(test_denied_names_only_when_pass_matched),
	    cmocka_unit_test(test_set_overrides),
	    cmocka_unit_test(test_set_path_overrides_default),
	    cmocka_unit_test(test_defaults_without_home_or_term),
	    cmocka_unit_test(test_null_caller),
	    cmocka_unit_test(test_term_copied_unless_denied),
	    cmocka_unit_test(test_run_id_always_set),
	    cmocka_unit_test(test_duplicate_caller_entries),
	    cmocka_unit_test(test_get_and_append),
	    cmocka_unit_test(test_overlaid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

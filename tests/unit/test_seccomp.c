/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The precompiled default filter: the same program libseccomp compiles at run time, and used
 * for the default preset only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy.h"
#include "seccomp.h"
#include "seccomp_internal.h"

extern const struct seccomp_precompiled seccomp_precompiled;

static const struct policy_vars vars = {"/home/alice", "/work", "alice", "1000", "/tmp"};
static struct seccomp_program compiled;

static void test_default_is_precompiled(void **state)
{
	struct policy *p = policy_new(&vars);
	struct ab_err e = {0};
	(void)state;

	assert_non_null(p);
	assert_true(seccomp_precompiled_fits(p));
	if (seccomp_precompiled.len == 0) {
		policy_free(p);
		skip(); /* the build host could not compile a filter */
	}
	/* pid 1 loads the program seccomp_builtin names: the one libseccomp compiles now */
	assert_ptr_equal(seccomp_builtin(p), &seccomp_precompiled);
	assert_int_equal(seccomp_compile(p, &compiled, &e), 0);
	assert_int_equal(compiled.len, seccomp_precompiled.len);
	assert_memory_equal(compiled.insns, seccomp_precompiled.insns,
			    seccomp_precompiled.len * sizeof(struct sock_filter));
	policy_free(p);
}

/* Every input of the filter other than the default's takes the compiled path. */
static void test_other_inputs_compile(void **state)
{
	struct ab_err e = {0};
	struct policy *p;
	(void)state;

	for (int variant = 0; variant < 5; variant++) {
		p = policy_new(&vars);
		assert_non_null(p);
		switch (variant) {
		case 0:
			p->seccomp_preset = SECCOMP_PRESET_STRICT;
			break;
		case 1:
			p->seccomp_preset = SECCOMP_PRESET_NONE;
			break;
		case 2:
			assert_int_equal(strv_push(&p->seccomp_allow, "mount"), 0);
			break;
		case 3:
			assert_int_equal(strv_push(&p->seccomp_deny, "ptrace"), 0);
			break;
		case 4:
			p->nesting = true;
			break;
		}
		assert_false(seccomp_precompiled_fits(p));
		assert_null(seccomp_builtin(p));
		assert_int_equal(seccomp_compile(p, &compiled, &e), 0);
		policy_free(p);
	}
}

/* The presets' names, in fixed-size arrays: one as long as its array would lose its NUL and run
 * into the next, silently (C allows the initialiser). */
static void expect_names_end(const char (*names)[SYSCALL_NAME_SIZE])
{
	size_t i;

	for (i = 0; i < 1000 && names[i][0]; i++)
		assert_non_null(memchr(names[i], '\0', SYSCALL_NAME_SIZE));
	assert_true(i > 0 && i < 1000); /* "" ends the list */
}

static void test_names_end(void **state)
{
	(void)state;
	expect_names_end(default_deny);
	expect_names_end(strict_allow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_end),
	    cmocka_unit_test(test_default_is_precompiled),
	    cmocka_unit_test(test_other_inputs_compile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for a valid profile's warnings (policy_warn.c): each kind, named at the FILE:LINE of
 * the item that never takes effect, with the other item's place in the message; and the near
 * misses that take effect and must not warn. The rule coverage they rest on
 * (egress_rule_covers) first. Profiles come from memory (policy_testlib.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "egress_rule.h"
#include "policy.h"
#include "policy_testlib.h"
#include "policy_warn.h"

#define PROXY "[network]\nmode = proxy\n"

static bool covers(const char *outer, const char *inner)
{
	struct egress_rule o, i;
	struct ab_err e = {0};

	assert_int_equal(egress_rule_parse(outer, &o, &e), 0);
	assert_int_equal(egress_rule_parse(inner, &i, &e), 0);
	return egress_rule_covers(&o, &i);
}

static void test_rule_covers(void **state)
{
	(void)state;
	assert_true(covers("a.test", "A.test."));
	assert_false(covers("a.test", "b.a.test"));
	assert_false(covers("a.test", "*.a.test"));
	assert_true(covers("*.a.test", "b.a.test"));
	assert_true(covers("*.a.test", "*.a.test"));
	assert_true(covers("*.a.test", "*.b.a.test"));
	assert_true(covers("*.a.test", "**.b.a.test"));
	assert_false(covers("*.a.test", "a.test"));
	assert_false(covers("*.a.test", "**.a.test")); /* the apex */
	assert_false(covers("*.a.test", "ba.test"));
	assert_true(covers("**.a.test", "a.test"));
	assert_true(covers("**.a.test", "*.a.test"));
	assert_true(covers("**.a.test", "**.a.test"));
	assert_true(covers("**.a.test", "c.b.a.test"));
	assert_false(covers("**.a.test", "**.test"));
	/* ports: a rule without one covers every port, one with a port only that port */
	assert_true(covers("a.test", "a.test:443"));
	assert_true(covers("a.test:443", "a.test:443"));
	assert_false(covers("a.test:443", "a.test"));
	assert_false(covers("a.test:443", "a.test:80"));
	/* addresses and ranges; never a name */
	assert_true(covers("10.0.0.0/8", "10.1.2.3"));
	assert_true(covers("10.0.0.0/8", "10.128.0.0/9"));
	assert_false(covers("10.0.0.0/9", "10.0.0.0/8"));
	assert_false(covers("10.0.0.0/8", "11.0.0.1"));
	assert_true(covers("10.0.0.5", "10.0.0.5:22"));
	assert_false(covers("10.0.0.5", "10.0.0.6"));
	assert_true(covers("[fd00::]/8", "[fd12::1]"));
	assert_false(covers("[fd00::]/8", "10.0.0.1"));
	assert_false(covers("10.0.0.0/8", "a.test"));
	assert_false(covers("**.a.test", "10.0.0.1"));
}

/* The warnings of files (finished), as lines. */
static struct strv warnings_of(const struct mfile *files, size_t n)
{
	struct policy *p = must_load_files(files, n);
	struct strv out = {0};
	struct ab_err e = {0};

	if (policy_finish(p, &e) < 0) {
		print_error("policy_finish: %s\n", e.msg);
		fail();
	}
	assert_int_equal(policy_warnings(p, &out, &e), 0);
	policy_free(p);
	return out;
}

/* text warns exactly want (NULL-terminated): each warning begins with its "FILE:LINE: " and
 * holds the phrase after it. */
static void expect_warnings(const char *text, ...)
{
	const struct mfile f[] = {{MAIN, text, 0}};
	struct strv got = warnings_of(f, 1);
	va_list ap;
	size_t i = 0;

	va_start(ap, text);
	for (const char *at; (at = va_arg(ap, const char *)); i++) {
		const char *what = va_arg(ap, const char *);
		if (i >= got.n || strncmp(got.v[i], at, strlen(at)) || !strstr(got.v[i], what)) {
			print_error("warning %zu: \"%s\"\nexpected \"%s\" then \"%s\"\n", i,
				    i < got.n ? got.v[i] : "(none)", at, what);
			fail();
		}
	}
	va_end(ap);
	if (got.n != i) {
		print_error("%zu warnings, expected %zu; the first extra: %s\n", got.n, i,
			    got.v[i]);
		fail();
	}
	strv_free(&got);
}

static void test_network_shadowed(void **state)
{
	(void)state;
	expect_warnings(PROXY "allow = x.test, y.test\ndeny = x.test\n", MAIN ":3: ",
			"[network] allow = x.test never takes effect: deny = x.test (" MAIN ":4)",
			NULL);
	expect_warnings(PROXY "allow = api.x.test:443\nallow = 10.1.1.1\ndeny = **.x.test\n"
			      "deny = 10.0.0.0/8\n",
			MAIN ":3: ", "allow = api.x.test:443 never takes effect: deny = **.x.test",
			MAIN ":4: ", "allow = 10.1.1.1 never takes effect: deny = 10.0.0.0/8",
			NULL);
	/* near misses: each deny leaves some of the allow open */
	expect_warnings(PROXY "allow = **.x.test, y.test, z.test\ndeny = evil.x.test, y.test:80, "
			      "*.z.test\n",
			NULL);
}

/* The place is the layer that wrote the item: an included file's line, the command line's
 * option. */
static void test_places(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = inc.ini\n" PROXY "deny = x.test\n", 0},
	    {"/p/inc.ini", PROXY "\nallow = x.test\n", 0},
	};
	struct strv got = warnings_of(files, NFILES(files));
	struct policy *p = must_load(PROXY "deny = x.test\n");
	struct ab_err e = {0};
	(void)state;

	assert_int_equal(got.n, 1);
	assert_non_null(strstr(got.v[0], "/p/inc.ini:4: [network] allow = x.test never takes "
					 "effect: deny = x.test (" MAIN ":5)"));
	strv_free(&got);
	assert_int_equal(policy_override(p, "network", "allow", "x.test", "--allow", &e), 0);
	assert_int_equal(policy_finish(p, &e), 0);
	assert_int_equal(policy_warnings(p, &got, &e), 0);
	assert_int_equal(got.n, 1);
	assert_non_null(strstr(got.v[0], "--allow: [network] allow = x.test never"));
	strv_free(&got);
	policy_free(p);
	/* in profile order, whatever the kind */
	expect_warnings(
	    PROXY "[seccomp]\nallow = ptrace\ndeny = ptrace\n[network]\nallow = x.test\n"
		  "deny = x.test\n",
	    MAIN ":4: ", "[seccomp] allow = ptrace", MAIN ":7: ", "[network] allow = x.test", NULL);
}

static void test_http_shadowed(void **state)
{
	(void)state;
	expect_warnings(
	    PROXY "[http]\nallow = GET h.test/a/**\ndeny = GET h.test/a/**\n", MAIN ":4: ",
	    "[http] allow = GET h.test/a/** never takes effect: deny = GET h.test/a/** (" MAIN
	    ":5)",
	    NULL);
	/* a deny of every path, of any method, of any host, in another letter case */
	expect_warnings(PROXY
			"[http]\nallow = GET h.test/a/**\nallow = POST h.test/b?x=*\n"
			"allow = PUT a.h.test/Up\ndeny = * h.test/**\ndeny = PUT *.h.test/up\n",
			MAIN ":4: ", "allow = GET h.test/a/** never",
			MAIN ":5: ", "allow = POST h.test/b?x=* never", MAIN ":6: ",
			"allow = PUT a.h.test/Up never takes effect: deny = PUT *.h.test/up", NULL);
	expect_warnings(PROXY "[http]\nallow = GET h.test/a\ndeny = GET */**\n",
			MAIN ":4: ", "deny = GET */**", NULL);
	/* near misses: another method, path, host, or a query the allow rule may lack */
	expect_warnings(PROXY
			"[http]\nallow = GET h.test/a/**\nallow = * h.test/b\n"
			"allow = GET h.test/c\nallow = GET i.test/a/**\n"
			"deny = DELETE h.test/**\ndeny = GET h.test/b\ndeny = GET h.test/c?x=1\n"
			"deny = GET h.test/a/*\n",
			NULL);
	/* a credential's rule that an [http] deny rule refuses */
	expect_warnings(
	    PROXY "[http]\ndeny = DELETE api.test/**\n[credential c]\nsource = env:C\n"
		  "hosts = api.test\nrules = GET api.test/**\nrules = DELETE "
		  "api.test/repos/**\nheader = A: {}\nenv = C\n",
	    MAIN ":9: ",
	    "[credential c] rules = DELETE api.test/repos/** never takes effect: [http] "
	    "deny = DELETE api.test/** (" MAIN ":4)",
	    NULL);
}

/* An [http] allow rule or a credential's host that [network] deny cuts off at 80 and 443. */
static void test_web_unreachable(void **state)
{
	(void)state;
	expect_warnings(PROXY "deny = **.h.test\n[http]\nallow = GET api.h.test/**\n", MAIN ":5: ",
			"[http] allow = GET api.h.test/** never takes effect: [network] deny = "
			"**.h.test (" MAIN ":3) refuses the connections it needs",
			NULL);
	expect_warnings(
	    PROXY "deny = h.test:80\ndeny = h.test:443\n[http]\nallow = GET h.test/**\n",
	    MAIN ":6: ",
	    "[network] deny = h.test:80 (" MAIN ":3) and deny = h.test:443 (" MAIN ":4)", NULL);
	expect_warnings(PROXY "deny = *.h.test\n[credential c]\nsource = env:C\nhosts = x.test, "
			      "api.h.test\nheader = A: {}\nenv = C\n",
			MAIN ":6: ",
			"[credential c] hosts = api.h.test: [network] deny = *.h.test (" MAIN
			":3) refuses every connection to it",
			NULL);
	/* near misses: one port left, a host beside the denied one */
	expect_warnings(PROXY "deny = h.test:443, *.i.test\n[http]\nallow = GET h.test/**\n"
			      "allow = GET i.test/**\n",
			NULL);
}

static void test_pins(void **state)
{
	(void)state;
	expect_warnings(
	    PROXY "resolve = a.test=127.0.0.1\n", MAIN ":3: ",
	    "[network] resolve = a.test=127.0.0.1 never takes effect: no allow rule lets "
	    "a.test through; fix: add allow = a.test",
	    NULL);
	expect_warnings(PROXY "allow = a.test:443\nresolve = a.test:8443=127.0.0.1\n",
			MAIN ":4: ", "no allow rule lets a.test through", NULL);
	expect_warnings(PROXY "allow = **.a.test\ndeny = b.a.test\nresolve = b.a.test=127.0.0.1\n",
			MAIN ":5: ",
			"resolve = b.a.test=127.0.0.1 never takes effect: deny = b.a.test (" MAIN
			":4) refuses b.a.test",
			NULL);
	/* let through by an allow rule at some port, an [http] rule, a credential */
	expect_warnings(PROXY "allow = a.test:443, **.b.test\nresolve = a.test=127.0.0.1, "
			      "x.b.test:8443=127.0.0.1, h.test=127.0.0.1, c.test=127.0.0.1\n"
			      "[http]\nallow = GET h.test/**\n[credential c]\nsource = env:C\n"
			      "hosts = c.test\nheader = A: {}\nenv = C\n",
			NULL);
}

/* Class and alternative syntax where agentbox's globs (or none) read it literally. */
static void test_glob_syntax(void **state)
{
	(void)state;
	expect_warnings(PROXY "[http]\nallow = GET h.test/v[0-9]/**\nallow = GET h.test/{a,b}/x\n"
			      "deny = * h.test/x?id=[!0]*\n",
			MAIN ":4: ", "'[0-9]' is matched as those very characters",
			MAIN ":5: ", "'{a,b}' is matched",
			MAIN ":6: ", "[http] deny = * h.test/x?id=[!0]*: '[!0]'", NULL);
	expect_warnings(PROXY "[credential c]\nsource = env:C\nhosts = h.test\nheader = A: {}\n"
			      "env = C\nrules = GET h.test/[[:alpha:]]*\n",
			MAIN ":8: ", "[credential c] rules = GET h.test/[[:alpha:]]*: '[:alpha:]'",
			NULL);
	expect_warnings("[filesystem]\nro-try = /opt/[a-z]\nro = /srv/{a\n", MAIN ":2: ",
			"[filesystem] ro-try = /opt/[a-z]: '[a-z]' is part of the name",
			MAIN ":3: ", "[filesystem] ro = /srv/{a: '{' is part of the name", NULL);
	expect_warnings("[env]\npass = AWS_{KEY,SECRET}\ndeny = GH_[A-Z]*\n",
			MAIN ":2: ", "[env] pass = AWS_{KEY: '{' is matched as itself",
			MAIN ":2: ", "[env] pass = SECRET}: '}'", NULL);
	/* near misses: brackets that are no class (PHP arrays, a name), a brace with no
	 * alternative */
	expect_warnings(PROXY
			"[http]\nallow = GET h.test/a?ids[]=*&filter[name]=*\n"
			"allow = GET h.test/x/[1]/{id}\n[filesystem]\nro-try = /opt/[draft]\n",
			NULL);
}

static void test_env_seccomp(void **state)
{
	(void)state;
	expect_warnings("[env]\npass = FOO, BAR\ndeny = FOO\n",
			MAIN ":2: ", "[env] pass = FOO never takes effect: deny = FOO (" MAIN ":3)",
			NULL);
	expect_warnings("[seccomp]\nallow = ptrace\ndeny = ptrace, bpf\n", MAIN ":2: ",
			"[seccomp] allow = ptrace never takes effect: deny = ptrace (" MAIN ":3)",
			NULL);
	expect_warnings("[seccomp]\npreset = none\nallow = ptrace\n",
			MAIN ":3: ", "has no effect with preset = none (" MAIN ":2)", NULL);
	/* near misses: a glob deny (the run says which variables it kept out), strict's allowlist
	 */
	expect_warnings(
	    "[env]\npass = FOO\ndeny = F*\n[seccomp]\npreset = strict\nallow = ptrace\n", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rule_covers),	    cmocka_unit_test(test_network_shadowed),
	    cmocka_unit_test(test_places),	    cmocka_unit_test(test_http_shadowed),
	    cmocka_unit_test(test_web_unreachable), cmocka_unit_test(test_pins),
	    cmocka_unit_test(test_glob_syntax),	    cmocka_unit_test(test_env_seccomp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the [http] rules' decision (http_rules.c): deny first, then the allow rules by
 * tier (the profile's [http] rules, a credential's rules, the fallback for a credential's
 * hosts), with their positive controls: deny rules read in any letter case and refusing
 * non-ASCII paths no allow rule names, allow rules read strictly. Parsing and the request
 * target's canonical form are test_http_rules.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_rules.h"

static enum http_verdict decide(const struct http_rules *rs, const char *method, const char *host,
				const char *target, const char **rule)
{
	struct http_target t;
	const char *why;
	enum http_verdict v;

	assert_int_equal(http_target_canon(target, strlen(target), &t, &why), 0);
	v = http_rules_decide(rs, method, host, &t, rule);
	http_target_free(&t);
	return v;
}

static void add_ok(struct http_rules *rs, bool deny, const char *text)
{
	struct ab_err e = {0};

	if (http_rules_add(rs, deny, text, &e) != 0) {
		print_error("'%s' was refused: %s\n", text, e.msg);
		fail();
	}
}

static void test_decide(void **state)
{
	struct http_rules rs = {0};
	const char *rule;
	(void)state;

	assert_int_equal(decide(&rs, "GET", "example.com", "/", &rule), HTTP_PASS);
	assert_null(rule);
	add_ok(&rs, false, "GET api.github.com/repos/acme/**");
	add_ok(&rs, false, "POST api.openai.com/v1/chat/completions");
	add_ok(&rs, true, "* */admin/*");
	add_ok(&rs, true, "DELETE api.github.com/**");

	/* positive controls */
	assert_int_equal(decide(&rs, "GET", "api.github.com", "/repos/acme/x", &rule), HTTP_ALLOW);
	assert_string_equal(rule, "GET api.github.com/repos/acme/**");
	assert_int_equal(decide(&rs, "POST", "api.openai.com", "/v1/chat/completions", &rule),
			 HTTP_ALLOW);
	/* a host with allow rules: anything else is denied */
	assert_int_equal(decide(&rs, "GET", "api.github.com", "/repos/other/x", &rule), HTTP_DENY);
	assert_string_equal(rule, HTTP_RULES_NO_ALLOW);
	assert_int_equal(decide(&rs, "POST", "api.github.com", "/repos/acme/x", &rule), HTTP_DENY);
	assert_int_equal(decide(&rs, "get", "api.github.com", "/repos/acme/x", &rule), HTTP_DENY);
	assert_int_equal(decide(&rs, "GET", "api.openai.com", "/v1/chat/completions", &rule),
			 HTTP_DENY);
	/* the same host however it is written */
	assert_int_equal(decide(&rs, "GET", "API.GitHub.com.", "/repos/acme/x", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET", "x.api.github.com", "/repos/acme/x", &rule), HTTP_PASS);
	/* deny first, even over a matching allow */
	assert_int_equal(decide(&rs, "GET", "api.github.com", "/repos/acme/admin/x", &rule),
			 HTTP_ALLOW); /* that deny rule is for one segment before admin */
	assert_int_equal(decide(&rs, "DELETE", "api.github.com", "/repos/acme/x", &rule),
			 HTTP_DENY);
	assert_string_equal(rule, "DELETE api.github.com/**");
	/* a host with deny rules only: what they do not match passes to the connection rules */
	assert_int_equal(decide(&rs, "GET", "example.com", "/admin/x", &rule), HTTP_DENY);
	assert_string_equal(rule, "* */admin/*");
	assert_int_equal(decide(&rs, "GET", "example.com", "/public/x", &rule), HTTP_PASS);
	assert_null(rule);
	/* encodings cannot sneak past the deny rule */
	assert_int_equal(decide(&rs, "GET", "example.com", "//admin/x", &rule), HTTP_DENY);
	assert_int_equal(decide(&rs, "GET", "example.com", "/x/../admin/y", &rule), HTTP_DENY);
	assert_int_equal(decide(&rs, "GET", "example.com", "/%61dmin/y", &rule), HTTP_DENY);
	assert_int_equal(decide(&rs, "GET", "example.com", "/x/%2e%2e/admin/y", &rule), HTTP_DENY);
	assert_int_equal(decide(&rs, "GET", "example.com", "/./admin/./y", &rule), HTTP_DENY);
	/* nor past the allow rule: climbing out of acme is another path */
	assert_int_equal(decide(&rs, "GET", "api.github.com", "/repos/acme/%2e%2e/other", &rule),
			 HTTP_DENY);
	assert_int_equal(
	    decide(&rs, "GET", "api.github.com", "/repos/acme/%252e%252e/other", &rule),
	    HTTP_ALLOW); /* a literal "%2e%2e" directory inside acme */
	/* an invalid host is denied, never passed */
	assert_int_equal(decide(&rs, "GET", "b\xff.example", "/", &rule), HTTP_DENY);
	assert_string_equal(rule, HTTP_RULES_BAD_HOST);
	http_rules_free(&rs);
}

static void test_decide_hosts(void **state)
{
	struct http_rules rs = {0};
	const char *rule;
	(void)state;

	add_ok(&rs, false, "GET *.example.com/**");
	add_ok(&rs, false, "GET **.example.org/**");
	add_ok(&rs, false, "GET 127.0.0.1/**");
	add_ok(&rs, false, "GET [::1]/**");
	add_ok(&rs, false,
	       "GET b\xc3\xbc"
	       "cher.example/**");
	assert_int_equal(decide(&rs, "GET", "a.example.com", "/", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET", "example.com", "/", &rule), HTTP_PASS);
	assert_int_equal(decide(&rs, "GET", "badexample.com", "/", &rule), HTTP_PASS);
	assert_int_equal(decide(&rs, "GET", "example.org", "/", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET", "a.b.example.org", "/", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET", "127.0.0.1", "/", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET", "127.0.0.2", "/", &rule), HTTP_PASS);
	assert_int_equal(decide(&rs, "GET", "[::1]", "/", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET", "::1", "/", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET", "xn--bcher-kva.example", "/", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET",
				"b\xc3\xbc"
				"cher.example",
				"/", &rule),
			 HTTP_ALLOW);
	assert_int_equal(decide(&rs, "POST", "a.example.com", "/", &rule), HTTP_DENY);
	assert_true(http_rules_cover(&rs, "a.example.com"));
	assert_true(http_rules_cover(&rs, "EXAMPLE.org."));
	assert_false(http_rules_cover(&rs, "example.com"));
	assert_false(http_rules_cover(&rs, "example.net"));
	assert_true(http_rules_cover(&rs, "b\xff")); /* invalid: intercepted, then denied */
	http_rules_free(&rs);

	add_ok(&rs, true, "* */admin/*");
	assert_true(http_rules_cover(&rs, "anything.example"));
	http_rules_free(&rs);
	assert_false(http_rules_cover(&rs, "anything.example"));
}

/* Both NULL, or the same text (in one test, so an optimised build sees no strcmp of NULL). */
static bool same_text(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* decide, and the deny rule or default it names (NULL: passed) and the reason it adds. */
static void expect_decision(const struct http_rules *rs, const char *method, const char *target,
			    enum http_verdict want, const char *want_rule, const char *want_why)
{
	struct http_target t;
	const char *why, *rule, *detail;
	enum http_verdict v;

	assert_int_equal(http_target_canon(target, strlen(target), &t, &why), 0);
	v = http_rules_decide_why(rs, method, "example.com", &t, &rule, &detail);
	if (v != want || !same_text(rule, want_rule) || !same_text(detail, want_why)) {
		print_error("%s %s: verdict %d by '%s' (%s), expected %d by '%s' (%s)\n", method,
			    target, v, rule ? rule : "(none)", detail ? detail : "-", want,
			    want_rule ? want_rule : "(none)", want_why ? want_why : "-");
		fail();
	}
	/* http_rules_decide is the same decision */
	assert_int_equal(http_rules_decide(rs, method, "example.com", &t, &detail), v);
	assert_ptr_equal(detail, rule);
	http_target_free(&t);
}

#define ADMIN "* example.com/admin/**"
#define KUBE "* example.com/kube/*"
#define CAFE "GET example.com/caf%C3%A9/*"

/* A deny rule matches the path as an origin that folds case or Unicode may read it. Each form
 * here reached /admin past the rule ADMIN before. */
static void test_deny_folded(void **state)
{
	struct http_rules rs = {0};
	(void)state;

	add_ok(&rs, true, ADMIN);
	add_ok(&rs, true, KUBE);
	add_ok(&rs, false, "GET example.com/**");
	add_ok(&rs, false, CAFE);
	/* positive controls: the paths really outside the deny rules pass, as written */
	expect_decision(&rs, "GET", "/public/x", HTTP_ALLOW, "GET example.com/**", NULL);
	expect_decision(&rs, "GET", "/administrator", HTTP_ALLOW, "GET example.com/**", NULL);
	expect_decision(&rs, "GET", "/x/admin", HTTP_ALLOW, "GET example.com/**", NULL);
	expect_decision(&rs, "GET", "/kube/x/y", HTTP_ALLOW, "GET example.com/**", NULL);
	expect_decision(&rs, "GET", "/admin/x", HTTP_DENY, ADMIN, NULL);
	/* ASCII letters in another case, written or percent-encoded */
	expect_decision(&rs, "GET", "/ADMIN/x", HTTP_DENY, ADMIN, HTTP_RULES_WHY_CASE);
	expect_decision(&rs, "GET", "/%41dmin/x", HTTP_DENY, ADMIN, HTTP_RULES_WHY_CASE);
	expect_decision(&rs, "GET", "/Admin", HTTP_DENY, ADMIN, HTTP_RULES_WHY_CASE);
	expect_decision(&rs, "GET", "/aDmIn/%78", HTTP_DENY, ADMIN, HTTP_RULES_WHY_CASE);
	expect_decision(&rs, "GET", "/%61%64%6d%69%6e/x", HTTP_DENY, ADMIN, NULL);
	expect_decision(&rs, "GET", "/KUBE/x", HTTP_DENY, KUBE, HTTP_RULES_WHY_CASE);
	/* letters an origin may read as ASCII ones: fullwidth a (U+FF41), dotless i (U+0131),
	 * the Kelvin sign (U+212A); the rule at stake is named */
	expect_decision(&rs, "GET", "/%EF%BD%81dmin/x", HTTP_DENY, ADMIN, HTTP_RULES_WHY_NON_ASCII);
	expect_decision(&rs, "GET", "/%ef%bd%81%EF%BC%A4min/x", HTTP_DENY, ADMIN,
			HTTP_RULES_WHY_NON_ASCII); /* fullwidth a and D */
	expect_decision(&rs, "GET", "/adm%C4%B1n/x", HTTP_DENY, ADMIN, HTTP_RULES_WHY_NON_ASCII);
	expect_decision(&rs, "GET", "/%E2%84%AAube/x", HTTP_DENY, KUBE, HTTP_RULES_WHY_NON_ASCII);
	/* raw, such bytes never reach the rules: the target is refused (test_http_rules.c) */
	/* a non-ASCII path no allow rule writes out is denied even away from the deny rules'
	 * paths, by the first deny rule for the host and method */
	expect_decision(&rs, "GET", "/%C3%A9t%C3%A9", HTTP_DENY, ADMIN, HTTP_RULES_WHY_NON_ASCII);
	/* ... and allowed where an allow rule names it: every non-ASCII byte written in the rule,
	 * none taken by a star */
	expect_decision(&rs, "GET", "/caf%C3%A9/menu", HTTP_ALLOW, CAFE, NULL);
	expect_decision(&rs, "GET", "/caf%c3%a9/menu", HTTP_ALLOW, CAFE, NULL);
	expect_decision(&rs, "GET", "/caf%C3%A9/%EF%BD%81", HTTP_DENY, ADMIN,
			HTTP_RULES_WHY_NON_ASCII);
	expect_decision(&rs, "GET", "/caf%C3%A9/a/b", HTTP_DENY, ADMIN, HTTP_RULES_WHY_NON_ASCII);
	expect_decision(&rs, "GET", "/CAF%C3%A9/menu", HTTP_DENY, ADMIN, HTTP_RULES_WHY_NON_ASCII);
	expect_decision(&rs, "GET", "/caf%C3%89/menu", HTTP_DENY, ADMIN, HTTP_RULES_WHY_NON_ASCII);
	http_rules_free(&rs);
}

/* Allow rules keep the strict reading: a case variant of an allowed path is another path. */
static void test_allow_strict(void **state)
{
	struct http_rules rs = {0};
	(void)state;

	add_ok(&rs, false, "GET example.com/repos/acme/**");
	add_ok(&rs, false, "GET example.com/search?q=*");
	expect_decision(&rs, "GET", "/repos/acme/x", HTTP_ALLOW, "GET example.com/repos/acme/**",
			NULL);
	expect_decision(&rs, "GET", "/REPOS/acme/x", HTTP_DENY, HTTP_RULES_NO_ALLOW, NULL);
	expect_decision(&rs, "GET", "/repos/Acme/x", HTTP_DENY, HTTP_RULES_NO_ALLOW, NULL);
	expect_decision(&rs, "GET", "/search?Q=x", HTTP_DENY, HTTP_RULES_NO_ALLOW, NULL);
	expect_decision(&rs, "get", "/repos/acme/x", HTTP_DENY, HTTP_RULES_NO_ALLOW, NULL);
	/* no deny rule concerns the request: a non-ASCII path is read as written */
	expect_decision(&rs, "GET", "/repos/acme/caf%C3%A9", HTTP_ALLOW,
			"GET example.com/repos/acme/**", NULL);
	http_rules_free(&rs);
}

/* Only the deny rules for the request's host and method make a non-ASCII path need naming; the
 * query and the method are folded for deny rules too. */
static void test_deny_scope(void **state)
{
	struct http_rules rs = {0};
	(void)state;

	add_ok(&rs, true, "DELETE example.com/**");
	add_ok(&rs, true, "GET example.com/search?debug=*");
	add_ok(&rs, true, "* other.example/admin/**");
	add_ok(&rs, false, "* example.com/**");
	expect_decision(&rs, "DELETE", "/x", HTTP_DENY, "DELETE example.com/**", NULL);
	/* the method in any case: some frameworks upper-case it */
	expect_decision(&rs, "Delete", "/x", HTTP_DENY, "DELETE example.com/**",
			HTTP_RULES_WHY_CASE);
	expect_decision(&rs, "POST", "/%C3%A9", HTTP_ALLOW, "* example.com/**", NULL);
	expect_decision(&rs, "GET", "/%C3%A9", HTTP_DENY, "GET example.com/search?debug=*",
			HTTP_RULES_WHY_NON_ASCII);
	expect_decision(&rs, "GET", "/search?debug=1", HTTP_DENY, "GET example.com/search?debug=*",
			NULL);
	expect_decision(&rs, "GET", "/search?DEBUG=1", HTTP_DENY, "GET example.com/search?debug=*",
			HTTP_RULES_WHY_CASE);
	expect_decision(&rs, "GET", "/SEARCH?Debug=1", HTTP_DENY, "GET example.com/search?debug=*",
			HTTP_RULES_WHY_CASE);
	expect_decision(&rs, "GET", "/search?%64ebug=1", HTTP_DENY,
			"GET example.com/search?debug=*", NULL);
	expect_decision(&rs, "GET", "/search?q=1", HTTP_ALLOW, "* example.com/**", NULL);
	expect_decision(&rs, "GET", "/search?q=%C3%A9", HTTP_ALLOW, "* example.com/**", NULL);
	http_rules_free(&rs);
}

/* rs's last rule made implied by a credential (by), a fallback or not. */
static void imply(struct http_rules *rs, const char *text, const char *by, bool fallback)
{
	struct http_rules one = {0};

	add_ok(&one, false, text);
	assert_int_equal(http_rules_copy(rs, &one.v[0], by), 0);
	rs->v[rs->n - 1].fallback = fallback;
	http_rules_free(&one);
}

/* The allow rules that decide a host are those of the first tier naming it: written ones, then a
 * credential's (their denial names the credential and the fix), then the fallbacks. */
static void test_decide_tiers(void **state)
{
	struct http_rules rs = {0};
	const char *rule, *why;
	struct http_target t;
	char list[256];
	(void)state;

	imply(&rs, "GET api.example/**", "[credential gh]", false);
	imply(&rs, "POST api.example/repos/acme/**", "[credential gh]", false);
	imply(&rs, "* api.example/**", "[credential gh]", true);
	imply(&rs, "* *.example/**", "[credential gh]", true);
	assert_true(rs.v[0].implied && !rs.v[0].fallback);
	assert_string_equal(rs.v[0].by, "[credential gh]");
	assert_int_equal(http_rule_tier(&rs.v[0]), HTTP_TIER_IMPLIED);
	assert_int_equal(http_rule_tier(&rs.v[2]), HTTP_TIER_FALLBACK);
	/* the credential's rules decide api.example, the fallback does not widen them */
	assert_int_equal(decide(&rs, "GET", "api.example", "/x", &rule), HTTP_ALLOW);
	assert_string_equal(rule, "GET api.example/**");
	assert_int_equal(decide(&rs, "POST", "api.example", "/repos/acme/x", &rule), HTTP_ALLOW);
	assert_int_equal(http_target_canon("/repos/acme/x", 13, &t, &why), 0);
	assert_int_equal(http_rules_decide_why(&rs, "DELETE", "api.example", &t, &rule, &why),
			 HTTP_DENY);
	http_target_free(&t);
	assert_string_equal(rule, "[credential gh]");
	assert_string_equal(why, HTTP_RULES_WHY_CREDENTIAL);
	http_rules_deciding(&rs, "api.example", list, sizeof(list));
	assert_string_equal(list, "GET api.example/**, POST api.example/repos/acme/**");
	/* cut short to fit, never past the buffer */
	http_rules_deciding(&rs, "api.example", list, 12);
	assert_string_equal(list, "GET api.exa");
	/* another host of the credential's: its fallback alone names it */
	assert_int_equal(decide(&rs, "DELETE", "www.example", "/x", &rule), HTTP_ALLOW);
	assert_string_equal(rule, "* *.example/**");
	http_rules_deciding(&rs, "www.example", list, sizeof(list));
	assert_string_equal(list, "* *.example/**");
	http_rules_deciding(&rs, "other.test", list, sizeof(list));
	assert_string_equal(list, "");
	assert_int_equal(decide(&rs, "DELETE", "other.test", "/x", &rule), HTTP_PASS);

	/* a written allow rule for the host: it alone decides, the credential's rules do not */
	add_ok(&rs, false, "* api.example/v2/**");
	assert_int_equal(decide(&rs, "DELETE", "api.example", "/v2/x", &rule), HTTP_ALLOW);
	assert_int_equal(decide(&rs, "GET", "api.example", "/x", &rule), HTTP_DENY);
	assert_string_equal(rule, HTTP_RULES_NO_ALLOW);
	/* and written deny rules come first at every tier */
	add_ok(&rs, true, "GET *.example/private/**");
	assert_int_equal(decide(&rs, "GET", "www.example", "/private/x", &rule), HTTP_DENY);
	assert_string_equal(rule, "GET *.example/private/**");
	http_rules_free(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decide),	 cmocka_unit_test(test_decide_hosts),
	    cmocka_unit_test(test_decide_tiers), cmocka_unit_test(test_deny_folded),
	    cmocka_unit_test(test_allow_strict), cmocka_unit_test(test_deny_scope),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

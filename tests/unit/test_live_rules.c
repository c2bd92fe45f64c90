/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for a session's live rules (live_rules.c) and what they are checked with: one
 * [http] rule within another (http_rule_covers, over http_glob_within), an allow within the
 * profile's grantable rules or refused, a deny always taken, what each lifts or withdraws, the
 * rules the proxy then decides with (egress_decide, http_rules_decide), the bounds, and the
 * texts of rules taken out still readable (a connection's event may name one). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "egress.h"
#include "http_glob.h"
#include "http_rules.h"
#include "http_target.h"
#include "live_rules.h"
#include "policy.h"
#include "policy_testlib.h"

/* ---------- one [http] rule within another ---------- */

static bool covers(const char *outer, const char *inner)
{
	struct http_rules rs = {0};
	struct ab_err e = {0};
	bool ok;

	if (http_rules_add(&rs, false, outer, &e) < 0 ||
	    http_rules_add(&rs, false, inner, &e) < 0) {
		print_error("cannot parse '%s' or '%s': %s\n", outer, inner, e.msg);
		fail();
	}
	ok = http_rule_covers(&rs.v[0], &rs.v[1]);
	http_rules_free(&rs);
	return ok;
}

static void test_http_covers(void **state)
{
	(void)state;
	assert_true(covers("GET a.example/**", "GET a.example/x/y"));
	assert_true(covers("GET a.example/**", "GET a.example/"));
	assert_true(covers("GET a.example/**", "GET a.example/x?q=1"));
	assert_true(covers("GET a.example/**", "GET a.example/**"));
	assert_false(covers("GET a.example/**", "POST a.example/x"));
	assert_false(covers("GET a.example/**", "* a.example/x"));
	assert_true(covers("* a.example/**", "DELETE a.example/x"));
	assert_false(covers("GET a.example/**", "GET b.example/x"));
	assert_false(covers("GET a.example/**", "GET */x"));
	assert_true(covers("GET */**", "GET b.example/x"));
	/* hosts as the connection rules cover them */
	assert_true(covers("* *.example/**", "GET a.example/x"));
	assert_true(covers("* *.example/**", "GET *.a.example/x"));
	assert_false(covers("* *.example/**", "GET example/x"));
	assert_true(covers("* **.example/**", "GET example/x"));
	/* '*' stays in its segment, '**' does not */
	assert_true(covers("GET a.example/v1/*", "GET a.example/v1/x"));
	assert_true(covers("GET a.example/v1/*", "GET a.example/v1/x*"));
	assert_false(covers("GET a.example/v1/*", "GET a.example/v1/x/y"));
	assert_false(covers("GET a.example/v1/*", "GET a.example/v1/**"));
	assert_true(covers("GET a.example/v1/**", "GET a.example/v1/*/z"));
	assert_false(covers("GET a.example/v1/x", "GET a.example/v1/*"));
	/* a final "/" and two stars also match the bare parent; inside, zero segments */
	assert_true(covers("GET a.example/v1/**", "GET a.example/v1"));
	assert_true(covers("GET a.example/a/**/b", "GET a.example/a/b"));
	assert_true(covers("GET a.example/a/**/b", "GET a.example/a/x/y/b"));
	assert_false(covers("GET a.example/a/**/b", "GET a.example/a/bb"));
	/* a query: none taken is any query */
	assert_true(covers("GET a.example/s?q=*", "GET a.example/s?q=abc"));
	assert_false(covers("GET a.example/s?q=*", "GET a.example/s"));
	assert_true(covers("GET a.example/s", "GET a.example/s?q=1"));
	assert_false(covers("GET a.example/s?q=*", "GET a.example/s?q=a&r=b"));
	assert_true(covers("GET a.example/s?**", "GET a.example/s?q=a&r=b"));
	/* %2F: both readings */
	assert_true(covers("GET a.example/**", "GET a.example/a%2Fb"));
	assert_true(covers("GET a.example/a/*", "GET a.example/a/b%2Fc") == false);
	/* a star takes no non-ASCII byte where a deny rule is at stake: the inner rule must be
	 * within in that reading too */
	assert_false(covers("GET a.example/*", "GET a.example/\xc3\xa9"));
	assert_true(covers("GET a.example/\xc3\xa9*", "GET a.example/\xc3\xa9t"));
	assert_false(covers("GET a.example/\xc3\xa9*", "GET a.example/\xc3\xa9t\xc3\xa9"));
}

static unsigned next_random(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 16;
}

/* A random pair of rules for one host (false when one of them is not a rule): the inner one's
 * path of a few tokens, the outer one's the same with some made stars (mostly within it, not
 * always), or another path altogether. */
static bool random_pair(unsigned *seed, struct http_rules *rs)
{
	static const char *const tokens[] = {"a", "b", "/", "*", "**", "%2F", "\xc3\xa9"};
	char inner[128] = "GET h.example/", outer[128] = "GET h.example/";
	bool other = next_random(seed) % 4 == 0;
	unsigned n = 1 + next_random(seed) % 5;
	struct ab_err e = {0};

	for (unsigned k = 0; k < n; k++) {
		const char *t = tokens[next_random(seed) % 7];
		unsigned m = next_random(seed) % 6;
		strcat(inner, t);
		strcat(outer, other    ? tokens[next_random(seed) % 7]
			      : m == 0 ? "*"
			      : m == 1 ? "**"
				       : t);
	}
	return http_rules_add(rs, false, inner, &e) == 0 &&
	       http_rules_add(rs, false, outer, &e) == 0;
}

/* Every text "/" + up to 5 bytes of a few that inner matches (read as how), outer matches too;
 * the number of texts inner matched. */
static unsigned check_texts(const struct http_rule *inner, const struct http_rule *outer,
			    unsigned how)
{
	static const char alphabet[] = {'a', 'b', '/', '\xc3'};
	unsigned matched = 0;

	for (unsigned len = 0, total = 1; len <= 5; len++, total *= 4)
		for (unsigned v = 0; v < total; v++) {
			char text[8] = "/";
			for (unsigned k = 0, x = v; k < len; k++, x /= 4)
				text[1 + k] = alphabet[x % 4];
			text[1 + len] = '\0';
			if (!http_glob_match(&inner->path, text, '/', how))
				continue;
			matched++;
			if (!http_glob_match(&outer->path, text, '/', how)) {
				print_error("'%s' within '%s' (how %u), yet only the first matches "
					    "'%s'\n",
					    inner->text, outer->text, how, text);
				fail();
			}
		}
	return matched;
}

/* Within is sound: for random pairs of globs, every short text the inner one matches, the
 * outer one matches too (as allow rules read, and with stars that take ASCII only); a glob is
 * within itself. */
static void test_glob_within_sound(void **state)
{
	unsigned seed = 12345, checked = 0, within = 0, not_within = 0;
	(void)state;

	for (int pair = 0; pair < 2000; pair++) {
		struct http_rules rs = {0};
		if (random_pair(&seed, &rs)) {
			assert_true(http_glob_within(&rs.v[0].path, &rs.v[0].path, '/', 0));
			for (unsigned how = 0; how <= MATCH_NAMED; how += MATCH_NAMED) {
				if (!http_glob_within(&rs.v[0].path, &rs.v[1].path, '/', how)) {
					not_within++;
					continue;
				}
				within++;
				checked += check_texts(&rs.v[0], &rs.v[1], how);
			}
		}
		http_rules_free(&rs);
	}
	/* the property was put to the test, both ways */
	print_message("%u pairs within, %u not, %u texts checked\n", within, not_within, checked);
	assert_true(checked > 1000 && within > 300 && not_within > 300);
}

/* ---------- live rules ---------- */

static const char profile[] = "[network]\nmode = proxy\n"
			      "allow = a.example\n"
			      "deny = bad.example\n"
			      "grantable = *.grant.example, pypi.org:443, 10.0.0.0/8, "
			      "**.bad.example\n"
			      "[http]\n"
			      "grantable = GET api.grant.example/v1/**\n";

struct fixture {
	struct policy *p;
	struct live_rules l;
};

static int setup(void **state)
{
	static struct fixture f;
	struct ab_err e = {0};

	f.p = must_load(profile);
	assert_int_equal(policy_finish(f.p, &e), 0);
	assert_int_equal(live_rules_init(&f.l, &f.p->net, &e), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	live_rules_free(&f->l);
	policy_free(f->p);
	return 0;
}

/* op text succeeds; changed as said; the change's removed texts, ", " between them. */
static void applied(struct live_rules *l, enum live_op op, const char *text, bool changed,
		    const char *removed)
{
	struct live_change c;
	struct ab_err e = {0};
	char list[512] = "";

	if (live_rules_apply(l, op, text, &c, &e) != 0) {
		print_error("%s '%s' was refused: %s\n", live_op_name(op), text, e.msg);
		fail();
	}
	for (size_t i = 0; i < c.removed.n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 c.removed.v[i]);
	assert_true(c.changed == changed);
	assert_string_equal(list, removed);
	assert_non_null(c.rule);
	if (op == LIVE_ALLOW || op == LIVE_HTTP_ALLOW)
		assert_non_null(c.grant);
	live_change_free(&c);
}

static void refused(struct live_rules *l, enum live_op op, const char *text, int errnum,
		    const char *phrase)
{
	struct live_change c;
	struct ab_err e = {0};

	if (live_rules_apply(l, op, text, &c, &e) != -1) {
		print_error("%s '%s' was taken\n", live_op_name(op), text);
		fail();
	}
	assert_int_equal(e.errnum, errnum);
	if (!strstr(e.msg, phrase)) {
		print_error("'%s': \"%s\" lacks \"%s\"\n", text, e.msg, phrase);
		fail();
	}
}

static bool allowed(const struct live_rules *l, const char *host, unsigned port)
{
	const char *rule;

	return egress_decide(&l->now, host, port, &rule);
}

static void test_widen_within_grant(void **state)
{
	struct fixture *f = *state;
	struct live_rules *l = &f->l;

	assert_false(allowed(l, "x.grant.example", 80));
	applied(l, LIVE_ALLOW, " x.grant.example ", true, "");
	assert_true(allowed(l, "x.grant.example", 80));
	applied(l, LIVE_ALLOW, "X.Grant.Example", false, ""); /* the same rule */
	applied(l, LIVE_ALLOW, "pypi.org:443", true, "");
	assert_true(allowed(l, "pypi.org", 443));
	assert_false(allowed(l, "pypi.org", 80));
	applied(l, LIVE_ALLOW, "10.1.2.0/24", true, "");
	assert_true(allowed(l, "10.1.2.3", 22));
	/* the profile's rules are as they were */
	assert_true(allowed(l, "a.example", 443));
	assert_false(allowed(l, "bad.example", 443));
	assert_false(egress_decide(&f->p->net, "x.grant.example", 80, &(const char *){NULL}));
}

/* What the proxy asks a harness about: a host a grantable rule matches (as allow rules match),
 * by name for the DNS stub (not an address). */
static void test_grantable_match(void **state)
{
	struct fixture *f = *state;
	const struct egress_rules *r = &f->l.now;

	assert_string_equal(egress_grantable(r, "x.grant.example", 80), "*.grant.example");
	assert_string_equal(egress_grantable(r, "X.GRANT.EXAMPLE.", 80), "*.grant.example");
	assert_null(egress_grantable(r, "grant.example", 80));
	assert_string_equal(egress_grantable(r, "pypi.org", 443), "pypi.org:443");
	assert_null(egress_grantable(r, "pypi.org", 80));
	assert_string_equal(egress_grantable(r, "10.9.8.7", 22), "10.0.0.0/8");
	assert_null(egress_grantable(r, "11.0.0.1", 22));
	assert_string_equal(egress_name_grantable(r, "pypi.org"), "pypi.org:443");
	assert_null(egress_name_grantable(r, "10.9.8.7"));
	assert_null(egress_name_grantable(r, "other.example"));
}

static void test_beyond_grant(void **state)
{
	struct fixture *f = *state;
	struct live_rules *l = &f->l;

	refused(l, LIVE_ALLOW, "other.example", EPERM, "beyond what the profile lets");
	refused(l, LIVE_ALLOW, "pypi.org", EPERM, "beyond");	  /* every port: wider */
	refused(l, LIVE_ALLOW, "grant.example", EPERM, "beyond"); /* *. is not the apex */
	refused(l, LIVE_ALLOW, "*.example", EPERM, "beyond");
	refused(l, LIVE_ALLOW, "10.0.0.0/7", EPERM, "beyond");
	refused(l, LIVE_ALLOW, "a b", EINVAL, "");
	refused(l, LIVE_ALLOW, "", EINVAL, "a rule of 0 bytes");
	/* the profile's deny rule stays, even under a grantable rule */
	refused(l, LIVE_ALLOW, "bad.example", EPERM, "stays denied by the profile's rule");
	applied(l, LIVE_ALLOW, "x.bad.example", true, "");
	assert_false(allowed(l, "other.example", 443));
}

static void test_narrow(void **state)
{
	struct fixture *f = *state;
	struct live_rules *l = &f->l;

	applied(l, LIVE_ALLOW, "x.grant.example", true, "");
	/* a deny withdraws the run-time allow rules it covers; the profile's stay (and lose) */
	applied(l, LIVE_DENY, "*.grant.example", true, "x.grant.example");
	assert_false(allowed(l, "x.grant.example", 80));
	applied(l, LIVE_DENY, "a.example", true, "");
	assert_false(allowed(l, "a.example", 443));
	applied(l, LIVE_DENY, "a.example", false, "");
	/* anything may be denied, granted or not */
	applied(l, LIVE_DENY, "nowhere.example:8080", true, "");
	/* a narrower allow under a wider run-time deny: refused, saying which */
	refused(l, LIVE_ALLOW, "y.grant.example", EPERM,
		"stays denied by the run-time rule '*.grant.example'");
	/* the same rule lifts it */
	applied(l, LIVE_ALLOW, "*.grant.example", true, "*.grant.example");
	assert_true(allowed(l, "y.grant.example", 443));
	/* and an allow lifts the run-time deny rules it covers */
	applied(l, LIVE_DENY, "z.grant.example", true, "");
	assert_false(allowed(l, "z.grant.example", 443));
	applied(l, LIVE_ALLOW, "z.grant.example", true, "z.grant.example");
	assert_true(allowed(l, "z.grant.example", 443));
	/* a.example is the profile's allow, never grantable: it stays denied */
	refused(l, LIVE_ALLOW, "a.example", EPERM, "beyond");
}

static enum http_verdict http(const struct live_rules *l, const char *method, const char *host,
			      const char *target)
{
	struct http_target t;
	const char *why, *rule;
	enum http_verdict v;

	assert_int_equal(http_target_canon(target, strlen(target), &t, &why), 0);
	v = http_rules_decide(&l->now.http, method, host, &t, &rule);
	http_target_free(&t);
	return v;
}

static void test_http(void **state)
{
	struct fixture *f = *state;
	struct live_rules *l = &f->l;
	const char *api = "api.grant.example";

	assert_false(allowed(l, api, 443));
	refused(l, LIVE_HTTP_ALLOW, "GET api.grant.example/v2", EPERM, "beyond");
	refused(l, LIVE_HTTP_ALLOW, "POST api.grant.example/v1/x", EPERM, "beyond");
	refused(l, LIVE_HTTP_ALLOW, "GET api.grant.example//x", EINVAL, "'//' in the path");
	applied(l, LIVE_HTTP_ALLOW, "GET api.grant.example/v1/repos/*", true, "");
	/* its host's ports 80 and 443, as a profile's rule opens them */
	assert_true(allowed(l, api, 443));
	assert_true(allowed(l, api, 80));
	assert_false(allowed(l, api, 8080));
	assert_int_equal(http(l, "GET", api, "/v1/repos/x"), HTTP_ALLOW);
	assert_int_equal(http(l, "GET", api, "/v1/users"), HTTP_DENY);
	/* a deny narrows at once; it withdraws the allow rules it covers, with their ports */
	applied(l, LIVE_HTTP_DENY, "* api.grant.example/v1/**", true,
		"GET api.grant.example/v1/repos/*");
	assert_false(allowed(l, api, 443));
	assert_int_equal(http(l, "GET", api, "/v1/repos/x"), HTTP_DENY);
	/* an allow lifts the run-time deny rules it covers, not a wider one (any method) */
	applied(l, LIVE_HTTP_DENY, "GET api.grant.example/v1/secret", true, "");
	applied(l, LIVE_HTTP_ALLOW, "GET api.grant.example/v1/**", true,
		"GET api.grant.example/v1/secret");
	assert_int_equal(http(l, "GET", api, "/v1/x"), HTTP_DENY);
	/* a deny it has already: still withdraws what was allowed since */
	applied(l, LIVE_HTTP_DENY, "* api.grant.example/v1/**", true,
		"GET api.grant.example/v1/**");
	applied(l, LIVE_HTTP_DENY, "* api.grant.example/v1/**", false, "");
}

/* The texts of rules taken out stay readable (a connection's event may still point to one);
 * the bounds hold. */
static void test_retired_and_bounds(void **state)
{
	struct fixture *f = *state;
	struct live_rules *l = &f->l;
	struct live_change c;
	struct ab_err e = {0};
	const char *kept;
	char rule[64];

	assert_int_equal(live_rules_apply(l, LIVE_ALLOW, "keep.grant.example", &c, &e), 0);
	kept = c.rule;
	live_change_free(&c);
	applied(l, LIVE_DENY, "keep.grant.example", true, "keep.grant.example");
	assert_string_equal(kept, "keep.grant.example");
	for (int i = 0; i < LIVE_MAX_RULES - 1; i++) {
		snprintf(rule, sizeof(rule), "n%d.example", i);
		applied(l, LIVE_DENY, rule, true, "");
	}
	refused(l, LIVE_DENY, "one-more.example", ENOSPC, "256 deny rules");
	applied(l, LIVE_DENY, "n0.example", false, ""); /* one it has: no room needed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_http_covers),
	    cmocka_unit_test(test_glob_within_sound),
	    cmocka_unit_test_setup_teardown(test_widen_within_grant, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_grantable_match, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_beyond_grant, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_narrow, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_retired_and_bounds, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the [http] rules (http_rules.c): request-target canonicalisation (percent-
 * decoding once, the refused escapes, dot segments, repeated slashes, UTF-8, the query), the
 * rule syntax and its errors, glob matching. The decision is test_http_decide.c's. */
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

/* target canonicalises to path (and query, NULL for none). */
static void expect_canon(const char *target, const char *path, const char *query)
{
	struct http_target t;
	const char *why = NULL;

	if (http_target_canon(target, strlen(target), &t, &why) != 0) {
		print_error("'%s' was refused: %s\n", target, why);
		fail();
	}
	if (strcmp(t.path, path) || (query == NULL) != (t.query == NULL) ||
	    (query && strcmp(t.query, query))) {
		print_error("'%s' -> path '%s' query '%s', expected '%s' '%s'\n", target, t.path,
			    t.query ? t.query : "(none)", path, query ? query : "(none)");
		fail();
	}
	http_target_free(&t);
}

static void expect_bad_target(const char *target, size_t len, const char *phrase)
{
	struct http_target t;
	const char *why = NULL;

	if (http_target_canon(target, len, &t, &why) == 0) {
		print_error("'%.*s' was accepted as '%s'\n", (int)len, target, t.path);
		fail();
	}
	assert_null(t.path);
	assert_null(t.query);
	if (!strstr(why, phrase)) {
		print_error("'%.*s': reason \"%s\" lacks \"%s\"\n", (int)len, target, why, phrase);
		fail();
	}
}

static void test_canon_plain(void **state)
{
	(void)state;
	expect_canon("/", "/", NULL);
	expect_canon("/repos/acme/x", "/repos/acme/x", NULL);
	expect_canon("/a/", "/a/", NULL);
	expect_canon("/search?q=x", "/search", "q=x");
	expect_canon("/search?", "/search", "");
	expect_canon("/a?b?c", "/a", "b?c");
}

static void test_canon_percent(void **state)
{
	(void)state;
	expect_canon("/a%20b", "/a b", NULL);
	expect_canon("/%41%62", "/Ab", NULL);
	expect_canon("/%7e%7E", "/~~", NULL); /* upper and lower case hex alike */
	/* decoded exactly once: %252e is a literal "%2e", not a dot segment; a literal '%' stays
	 * escaped, so that it can never spell an encoded '/' */
	expect_canon("/a/%252e%252e/b", "/a/%252e%252e/b", NULL);
	expect_canon("/%25", "/%25", NULL);
	expect_canon("/a%252Fb", "/a%252Fb", NULL);
	expect_canon("/%3F", "/?", NULL); /* an escaped '?' is path, not query */
	expect_canon("/%2A", "/*", NULL);
	expect_bad_target("/a%", 3, "two hex digits");
	expect_bad_target("/a%4", 4, "two hex digits");
	expect_bad_target("/a%zz", 5, "two hex digits");
	expect_bad_target("/a%%41", 6, "two hex digits");
}

/* The package registries' request shapes canonicalise to themselves and go up unchanged. */
static void test_registry_shapes(void **state)
{
	static const char *const shapes[] = {
	    "/simple/requests/",				/* PyPI */
	    "/packages/ab/cd/requests-2.31.0-py3-none-any.whl", /* PyPI files */
	    "/api/v1/crates/serde/1.0.0/download",		/* crates.io */
	    "/github.com/!burnt!sushi/toml/@v/v1.2.3.info",	/* Go module proxy */
	    "/org/apache/commons/commons-lang3/3.14.0/commons-lang3-3.14.0.jar", /* Maven */
	    "/gems/rake-13.0.6.gem",						 /* RubyGems */
	    "/@types%2Fnode",							 /* npm, scoped */
	    "/@types/node/-/node-20.1.0.tgz",					 /* npm tarball */
	};
	(void)state;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct http_target t;
		const char *why;
		char *up;
		assert_int_equal(http_target_canon(shapes[i], strlen(shapes[i]), &t, &why), 0);
		assert_string_equal(t.path, shapes[i]);
		up = http_target_format(&t);
		assert_string_equal(up, shapes[i]);
		free(up);
		http_target_free(&t);
	}
}

static void test_canon_refused_bytes(void **state)
{
	(void)state;
	/* beside an encoded '/', a dot segment means one path or another to different origins */
	expect_bad_target("/a%2F..%2Fadmin", 15, "dot segment beside an encoded '/'");
	expect_bad_target("/a/..%2Fadmin", 13, "dot segment beside an encoded '/'");
	expect_bad_target("/a%2f.", 6, "dot segment beside an encoded '/'");
	expect_bad_target("/.%2Fadmin", 10, "dot segment beside an encoded '/'");
	/* and the path-parameter forms servlet containers read as dot segments */
	expect_bad_target("/x%2F..;%2Fadmin%2Fx", 20, "dot segment beside an encoded '/'");
	expect_bad_target("/x%2F..%3B%2Fadmin", 18, "dot segment beside an encoded '/'");
	expect_bad_target("/x%2F.;%2Fadmin", 15, "dot segment beside an encoded '/'");
	expect_bad_target("/a%5cb", 6, "'\\'");
	expect_bad_target("/a\\b", 4, "'\\'");
	expect_bad_target("/a%00b", 6, "NUL");
	expect_bad_target("/a\0b", 4, "visible ASCII");
	expect_bad_target("/a b", 4, "visible ASCII");
	expect_bad_target("/a\x7f", 3, "visible ASCII");
	expect_bad_target("/a#frag", 7, "visible ASCII");
	expect_bad_target("/caf\xc3\xa9", 6, "visible ASCII"); /* raw non-ASCII */
	expect_bad_target("/q?a\x01", 5, "query");
	expect_bad_target("/q?a%g1", 7, "two hex digits");
	expect_bad_target("/q?a#b", 6, "query");
	/* raw look-alikes of deny rules' ASCII (fullwidth a, dotless i) never reach the rules */
	expect_bad_target("/\xef\xbd\x81"
			  "dmin/x",
			  10, "visible ASCII");
	expect_bad_target("/adm\xc4\xb1n/x", 9, "visible ASCII");
}

static void test_canon_form(void **state)
{
	(void)state;
	expect_bad_target("", 0, "origin-form");
	expect_bad_target("*", 1, "origin-form");
	expect_bad_target("http://example.com/", 19, "origin-form");
	expect_bad_target("a/b", 3, "origin-form");
}

static void test_canon_dots(void **state)
{
	(void)state;
	expect_canon("/a/./b", "/a/b", NULL);
	expect_canon("/a/b/../c", "/a/c", NULL);
	expect_canon("/a/b/..", "/a/", NULL);
	expect_canon("/a/b/.", "/a/b/", NULL);
	expect_canon("/a/..", "/", NULL);
	expect_canon("/.", "/", NULL);
	expect_canon("/./", "/", NULL);
	/* decoded first, so an encoded dot segment is a dot segment */
	expect_canon("/a/%2e%2e/admin", "/admin", NULL);
	expect_canon("/a/%2E./admin", "/admin", NULL);
	expect_canon("/a/.%2e/b/%2e/c", "/b/c", NULL);
	expect_canon("/a/...", "/a/...", NULL); /* three dots are a name */
	expect_canon("/a/..b", "/a/..b", NULL);
	expect_canon("/a/b../c", "/a/b../c", NULL);
	expect_canon("/a/..?x=/..", "/", "x=/.."); /* the query is not a path */
	expect_bad_target("/..", 3, "climbs above");
	expect_bad_target("/a/../..", 8, "climbs above");
	expect_bad_target("/%2e%2e/etc/passwd", 18, "climbs above");
	expect_bad_target("/a/../../b", 10, "climbs above");
	expect_bad_target("/a/..;/admin", 12, "path parameter");
	expect_bad_target("/a/.;x/admin", 12, "path parameter");
	expect_bad_target("/a/%2e%2e;/admin", 16, "path parameter");
}

/* Repeated slashes are merged (nginx's default), so //admin is /admin to the rules too. */
static void test_canon_slashes(void **state)
{
	(void)state;
	expect_canon("//", "/", NULL);
	expect_canon("//admin/x", "/admin/x", NULL);
	expect_canon("/a//b///c", "/a/b/c", NULL);
	expect_canon("/a//", "/a/", NULL);
	expect_canon("/a//..", "/", NULL);
	expect_canon("/a/.//b", "/a/b", NULL);
}

static void test_canon_unicode(void **state)
{
	(void)state;
	expect_canon("/caf%C3%A9", "/caf\xc3\xa9", NULL);
	expect_canon("/%F0%9F%98%80", "/\xf0\x9f\x98\x80", NULL);
	/* overlong '.' (a lax decoder's "..") and '/', surrogates, truncated sequences, > U+10FFFF
	 */
	expect_bad_target("/%C0%AE%C0%AE/x", 15, "UTF-8");
	expect_bad_target("/%C0%AF", 7, "UTF-8");
	expect_bad_target("/%E0%80%AE", 10, "UTF-8");
	expect_bad_target("/%ED%A0%80", 10, "UTF-8");
	expect_bad_target("/%C3", 4, "UTF-8");
	expect_bad_target("/%C3x", 5, "UTF-8");
	expect_bad_target("/%F4%90%80%80", 13, "UTF-8");
	expect_bad_target("/%FF", 4, "UTF-8");
	/* the query is not decoded: escapes stay, raw non-ASCII is refused */
	expect_canon("/s?q=%c3%a9", "/s", "q=%C3%A9");
}

static void test_canon_query(void **state)
{
	(void)state;
	expect_canon("/s?q=%41%2d%7e", "/s", "q=A-~"); /* unreserved escapes decoded */
	expect_canon("/s?a=%26&b=%2f", "/s", "a=%26&b=%2F");
	expect_canon("/s?a=%2e%2e/x", "/s", "a=../x");
	expect_canon("/s?q=*", "/s", "q=*");
}

static void test_format(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"/a/b", "/a/b"},
	    {"/a%20b", "/a%20b"},
	    {"/a/%2e%2e/b", "/b"},
	    {"/%252e", "/%252e"},
	    {"/%3F?x=1", "/%3F?x=1"},
	    {"/admin;x", "/admin%3Bx"},
	    {"/caf%c3%a9", "/caf%C3%A9"},
	    {"/@scope/x:y,z", "/@scope/x:y,z"},
	    {"//a?q=%2f", "/a?q=%2F"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_target t, again;
		const char *why;
		char *out, *out2;

		assert_int_equal(http_target_canon(cases[i].in, strlen(cases[i].in), &t, &why), 0);
		out = http_target_format(&t);
		assert_non_null(out);
		assert_string_equal(out, cases[i].out);
		/* what goes upstream canonicalises to what the rules saw */
		assert_int_equal(http_target_canon(out, strlen(out), &again, &why), 0);
		assert_string_equal(again.path, t.path);
		out2 = http_target_format(&again);
		assert_string_equal(out2, out);
		free(out);
		free(out2);
		http_target_free(&t);
		http_target_free(&again);
	}
}

static void add_ok(struct http_rules *rs, bool deny, const char *text)
{
	struct ab_err e = {0};

	if (http_rules_add(rs, deny, text, &e) != 0) {
		print_error("'%s' was refused: %s\n", text, e.msg);
		fail();
	}
}

static void expect_bad_rule(const char *text, const char *phrase)
{
	struct http_rules rs = {0};
	struct ab_err e = {0};

	if (http_rules_add(&rs, false, text, &e) == 0) {
		print_error("'%s' was accepted\n", text);
		fail();
	}
	assert_int_equal(rs.n, 0);
	if (!strstr(e.msg, phrase)) {
		print_error("'%s': message \"%s\" lacks \"%s\"\n", text, e.msg, phrase);
		fail();
	}
	http_rules_free(&rs);
}

static void test_rule_parse(void **state)
{
	struct http_rules rs = {0};
	(void)state;

	add_ok(&rs, false, "GET api.github.com/repos/acme/**");
	add_ok(&rs, true, "* */admin/*");
	add_ok(&rs, false, "  POST   api.openai.com/v1/chat/completions\t");
	add_ok(&rs, false, "GET example.com/search?q=*");
	add_ok(&rs, false, "GET *.example.com/x");
	add_ok(&rs, false, "GET **.example.org/x");
	add_ok(&rs, false, "GET 127.0.0.1/x");
	add_ok(&rs, false, "GET [::1]/x");
	add_ok(&rs, false, "GET 10.0.0.0/8/x"); /* no ranges: the host ends at the first '/' */
	add_ok(&rs, false, "M-SEARCH Example.COM./%2A");
	add_ok(&rs, false,
	       "GET b\xc3\xbc"
	       "cher.example/caf\xc3\xa9");
	assert_int_equal(rs.n, 11);
	assert_string_equal(rs.v[0].method, "GET");
	assert_false(rs.v[0].deny);
	assert_true(rs.v[1].deny);
	assert_true(rs.v[1].any_host);
	assert_string_equal(rs.v[2].text, "POST   api.openai.com/v1/chat/completions");
	assert_string_equal(rs.v[2].host.host, "api.openai.com");
	assert_true(rs.v[3].has_query);
	assert_false(rs.v[0].has_query);
	assert_int_equal(rs.v[4].host.kind, RULE_SUBDOMAINS);
	assert_int_equal(rs.v[5].host.kind, RULE_DOMAIN);
	assert_int_equal(rs.v[6].host.kind, RULE_ADDRESS);
	assert_string_equal(rs.v[9].host.host, "example.com");
	/* %2A is a literal star, not a glob */
	assert_int_equal(rs.v[9].path.n, 2);
	assert_int_equal(rs.v[9].path.el[1], '*');
	assert_string_equal(rs.v[10].host.host, "xn--bcher-kva.example");
	assert_int_equal(rs.v[8].host.kind, RULE_ADDRESS);
	assert_int_equal(rs.v[8].path.n, 4);
	http_rules_free(&rs);
	assert_int_equal(rs.n, 0);
}

static void test_rule_errors(void **state)
{
	(void)state;
	expect_bad_rule("", "no HOST/PATH");
	expect_bad_rule("GET", "no HOST/PATH");
	expect_bad_rule("get example.com/x", "not a method; fix: write an upper-case method");
	expect_bad_rule("G=T example.com/x", "not a method");
	expect_bad_rule("GET example.com",
			"fix: write HOST/PATH-GLOB: example.com/** for every path");
	expect_bad_rule("GET /x", "no host");
	/* a URL: the scheme goes, the fix says the rule without it */
	expect_bad_rule("GET https://pypi.org/simple/**",
			"a URL, not HOST/PATH; fix: drop the scheme: GET pypi.org/simple/**");
	expect_bad_rule("* HTTP://a.example/x", "fix: drop the scheme: * a.example/x");
	expect_bad_rule("GET example.com/a b", "blank inside");
	expect_bad_rule("GET exa mple.com/a", "blank inside");
	expect_bad_rule("GET example.com:443/x", "port");
	expect_bad_rule("GET exa_mple..com/x", "http rule");
	expect_bad_rule("GET example.com/a/***", "'***'");
	expect_bad_rule("GET example.com/a//b", "'//'");
	expect_bad_rule("GET example.com/a/../b", "'..'");
	expect_bad_rule("GET example.com/a/./b", "'.'");
	expect_bad_rule("GET example.com/a/%2e%2e", "'..'");
	expect_bad_rule("GET example.com/a/..", "'..'");
	expect_bad_rule("GET example.com/a\\b", "'\\'");
	expect_bad_rule("GET example.com/a%00", "NUL");
	expect_bad_rule("GET example.com/a%zz", "two hex digits");
	expect_bad_rule("GET example.com/a#b", "'#'");
	expect_bad_rule("GET example.com/%C0%AE", "UTF-8");
	expect_bad_rule("GET example.com/s?q=%", "two hex digits");
	expect_bad_rule("GET example.com/s?q=#", "query");
}

static void test_rule_too_long(void **state)
{
	char *text = malloc(5000);
	(void)state;

	assert_non_null(text);
	memcpy(text, "GET example.com/", 16);
	memset(text + 16, 'a', 5000 - 17);
	text[4999] = '\0';
	expect_bad_rule(text, "longer than");
	free(text);
}

/* pattern (a rule path, with optional ?query) against target, for GET on example.com. */
static bool matches(const char *pattern, const char *target)
{
	struct http_rules rs = {0};
	struct http_target t;
	char rule[512];
	const char *why, *deciding;
	enum http_verdict v;

	snprintf(rule, sizeof(rule), "GET example.com%s", pattern);
	add_ok(&rs, false, rule);
	if (http_target_canon(target, strlen(target), &t, &why) != 0) {
		print_error("'%s' was refused: %s\n", target, why);
		fail();
	}
	v = http_rules_decide(&rs, "GET", "example.com", &t, &deciding);
	assert_true(v == HTTP_ALLOW || v == HTTP_DENY);
	assert_string_equal(deciding, v == HTTP_ALLOW ? rule : HTTP_RULES_NO_ALLOW);
	http_target_free(&t);
	http_rules_free(&rs);
	return v == HTTP_ALLOW;
}

/* An encoded '/' is data inside one segment (npm's scoped packages): kept escaped, upper-cased,
 * matched by a star as any other byte of the segment and by a rule that writes it, and sent up
 * escaped. A deny rule also reads it as an origin that decodes it does. */
static void test_encoded_slash(void **state)
{
	struct http_rules rs = {0};
	struct http_target t;
	const char *why, *rule, *detail;
	char *up;
	(void)state;

	expect_canon("/@eco%2fscoped", "/@eco%2Fscoped", NULL);
	expect_canon("/@eco%2Fscoped/-/scoped-1.0.0.tgz", "/@eco%2Fscoped/-/scoped-1.0.0.tgz",
		     NULL);
	expect_canon("/a%2F%2Fb", "/a%2F%2Fb", NULL);
	/* an allow rule must name it both ways an origin may read it: as written, and with %2F
	 * read as '/' (the rule's own %2F too) */
	assert_true(matches("/**", "/@eco%2fscoped"));
	assert_true(matches("/@eco%2F*", "/@eco%2fscoped"));
	assert_true(matches("/@eco%2f*", "/@eco%2Fscoped"));
	assert_false(matches("/*", "/@eco%2fscoped"));	    /* two segments to a decoding origin */
	assert_false(matches("/@eco/*", "/@eco%2fscoped")); /* one segment to another */
	assert_false(matches("/*", "/a%252Fb%2Fc/d"));
	assert_false(matches("/a%252Fb*", "/a%252Fb%2Fc"));
	assert_true(matches("/a%252Fb%2F*", "/a%252Fb%2Fc"));
	/* a star reaches no deeper through %2F: /v1/users/admin/delete to a decoding origin */
	assert_false(matches("/v1/*", "/v1/users%2Fadmin%2Fdelete"));
	assert_false(matches("/repos/myorg/*/issues", "/repos/myorg/r%2Fpulls%2F1%2Fmerge/issues"));

	/* upstream: escaped as it came (upper-case hex), a literal '%' still %25 */
	assert_int_equal(http_target_canon("/@eco%2fscoped", 14, &t, &why), 0);
	assert_string_equal(t.as_slashes, "/@eco/scoped");
	up = http_target_format(&t);
	assert_string_equal(up, "/@eco%2Fscoped");
	free(up);
	http_target_free(&t);
	assert_int_equal(http_target_canon("/x/100%25", 9, &t, &why), 0);
	assert_null(t.as_slashes);
	up = http_target_format(&t);
	assert_string_equal(up, "/x/100%25");
	free(up);
	http_target_free(&t);

	/* a deny rule for /admin/ also denies /admin%2Fx: an origin may route it there */
	add_ok(&rs, true, "* example.com/admin/**");
	add_ok(&rs, false, "GET example.com/**");
	assert_int_equal(http_target_canon("/admin%2fx", 10, &t, &why), 0);
	assert_int_equal(http_rules_decide_why(&rs, "GET", "example.com", &t, &rule, &detail),
			 HTTP_DENY);
	assert_string_equal(rule, "* example.com/admin/**");
	assert_string_equal(detail, HTTP_RULES_WHY_SLASH);
	http_target_free(&t);
	assert_int_equal(http_target_canon("/adm%2Fin", 9, &t, &why), 0);
	assert_int_equal(http_rules_decide(&rs, "GET", "example.com", &t, &rule), HTTP_ALLOW);
	http_target_free(&t);
	/* a deny rule that writes %2F also denies the path written with '/': the same request to an
	 * origin that decodes it */
	add_ok(&rs, true, "GET example.com/@evil%2F*");
	assert_int_equal(http_target_canon("/@evil/pkg", 10, &t, &why), 0);
	assert_int_equal(http_rules_decide_why(&rs, "GET", "example.com", &t, &rule, &detail),
			 HTTP_DENY);
	assert_string_equal(rule, "GET example.com/@evil%2F*");
	assert_string_equal(detail, HTTP_RULES_WHY_SLASH);
	http_target_free(&t);
	assert_int_equal(http_target_canon("/@evil%2fpkg", 12, &t, &why), 0);
	assert_int_equal(http_rules_decide_why(&rs, "GET", "example.com", &t, &rule, &detail),
			 HTTP_DENY);
	assert_null(detail); /* as written */
	http_target_free(&t);
	http_rules_free(&rs);
}

static void test_glob(void **state)
{
	(void)state;
	assert_true(matches("/a/b", "/a/b"));
	assert_false(matches("/a/b", "/a/b/"));
	assert_false(matches("/a/b", "/a/bc"));
	assert_false(matches("/a/b", "/A/b")); /* paths are case-sensitive */
	/* '*' stays within a segment */
	assert_true(matches("/a/*", "/a/x"));
	assert_true(matches("/a/*", "/a/"));
	assert_false(matches("/a/*", "/a/x/y"));
	assert_false(matches("/a/*", "/a"));
	assert_true(matches("/a/*.json", "/a/x.json"));
	assert_false(matches("/a/*.json", "/a/x/y.json"));
	assert_true(matches("/*/admin/*", "/x/admin/y"));
	/* two stars cross segments; a final slash-star-star includes the parent, and a
	 * slash-star-star-slash also matches one slash (zero segments) */
	assert_true(matches("/repos/acme/**", "/repos/acme/x/y/z"));
	assert_true(matches("/repos/acme/**", "/repos/acme/"));
	assert_true(matches("/repos/acme/**", "/repos/acme"));
	assert_false(matches("/repos/acme/**", "/repos/acme-evil"));
	assert_false(matches("/repos/acme/**", "/repos/acmex/y"));
	assert_true(matches("/a/**/b", "/a/b"));
	assert_true(matches("/a/**/b", "/a/x/y/b"));
	assert_false(matches("/a/**/b", "/a/x/yb"));
	assert_false(matches("/a/**/b", "/a/xb"));
	assert_false(matches("/a/**/b", "/ab"));
	assert_true(matches("/**/b", "/b"));
	assert_true(matches("/**/b", "/x/y/b"));
	assert_false(matches("/**/b", "/xb"));
	assert_true(matches("/a**", "/a/b/c"));
	assert_true(matches("/**", "/"));
	assert_true(matches("/**", "/anything/at/all"));
	/* the canonical form is what is matched */
	assert_true(matches("/a/b", "/a/./b"));
	assert_true(matches("/a/b", "//a//b"));
	assert_true(matches("/a/b", "/x/../a/%62"));
	assert_true(matches("/a%20b", "/a%20b"));
	assert_true(matches("/%2A", "/*"));
	assert_false(matches("/%2A", "/x"));
	assert_true(matches("/caf\xc3\xa9", "/caf%C3%A9"));
	/* a long hostile path does not blow up the matcher (no backtracking) */
	{
		char target[4100];
		memset(target, 'a', sizeof(target) - 1);
		target[0] = '/';
		target[sizeof(target) - 2] = 'b';
		target[sizeof(target) - 1] = '\0';
		assert_false(matches("/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c", target));
		assert_true(matches("/**a**a**a**a**a**a**a**a**a**a**b", target));
	}
}

static void test_glob_query(void **state)
{
	(void)state;
	/* no '?' in the rule: the query does not matter */
	assert_true(matches("/search", "/search?q=anything&x=1"));
	assert_true(matches("/search?q=*", "/search?q=cats"));
	assert_true(matches("/search?q=*", "/search?q="));
	assert_true(matches("/search?q=*", "/search?q=%63ats"));	/* %63 is c */
	assert_false(matches("/search?q=*", "/search?q=cats&admin=1")); /* '*' stops at '&' */
	assert_true(matches("/search?q=**", "/search?q=cats&admin=1"));
	assert_false(matches("/search?q=*", "/search"));
	assert_false(matches("/search?q=*", "/search?x=1&q=2"));
	assert_true(matches("/search?", "/search"));
	assert_true(matches("/search?", "/search?"));
	assert_false(matches("/search?", "/search?q=1"));
	assert_true(matches("/s?a=%2f", "/s?a=%2F"));
	assert_false(matches("/s?a=%2f", "/s?a=/"));
	assert_true(matches("/s?q=caf\xc3\xa9", "/s?q=caf%c3%a9"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_canon_plain),
	    cmocka_unit_test(test_canon_percent),
	    cmocka_unit_test(test_canon_refused_bytes),
	    cmocka_unit_test(test_encoded_slash),
	    cmocka_unit_test(test_registry_shapes),
	    cmocka_unit_test(test_canon_form),
	    cmocka_unit_test(test_canon_dots),
	    cmocka_unit_test(test_canon_slashes),
	    cmocka_unit_test(test_canon_unicode),
	    cmocka_unit_test(test_canon_query),
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_rule_parse),
	    cmocka_unit_test(test_rule_errors),
	    cmocka_unit_test(test_rule_too_long),
	    cmocka_unit_test(test_glob),
	    cmocka_unit_test(test_glob_query),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

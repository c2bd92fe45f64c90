/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the profile parser's [network] and [http] sections: the HTTP rules, the CA,
 * resolve pins, protected ports and the egress limits (policy_testlib.h serves the profiles). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "json.h"
#include "policy.h"
#include "policy_testlib.h"

/* The rules of rs a profile wrote, allow or deny ones, as texts. */
static struct strv http_texts(const struct http_rules *rs, bool deny)
{
	struct strv sv = {0};

	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].deny == deny && !rs->v[i].implied)
			assert_int_equal(strv_push(&sv, rs->v[i].text), 0);
	return sv;
}

/* ---------- [http] ---------- */

/* One rule per line (a glob may hold a comma), repeatable, checked by the rules' parser at load
 * with its line; rules need the proxy. */
static void test_http_rules(void **state)
{
	struct policy *p = must_load("[network]\nmode = proxy\n[http]\n"
				     "allow = GET api.example/v1/**\n"
				     "allow = GET api.example/search?q=a,b\n"
				     "deny = * */admin/*\n");
	(void)state;

	struct strv allow = http_texts(&p->net.http, false), deny = http_texts(&p->net.http, true);
	expect_strv(&allow, 2, "GET api.example/v1/**", "GET api.example/search?q=a,b");
	expect_strv(&deny, 1, "* */admin/*");
	strv_free(&allow);
	strv_free(&deny);
	policy_free(p);
	expect_error("[network]\nmode = proxy\n[http]\nallow = GET a.example//x\n",
		     MAIN ":4: ", "'//' in the path");
	expect_error("[network]\nmode = proxy\n[http]\ndeny = get a.example/x\n",
		     MAIN ":4: ", "http rule 'get a.example/x'");
	p = must_load("[http]\nallow = GET a.example/x\n");
	{
		struct ab_err e = {0};
		assert_int_equal(policy_finish(p, &e), -1);
		expect_msg(&e, MAIN ":2: ", "[http] has rules but [network] mode is none");
	}
	policy_free(p);
	expect_error("[network]\nmode = proxy\n[http]\nmethods = GET\n", MAIN ":4: ", "methods");
}

/* [network] ca: a relative path is the profile's directory's (as an include is), variables are
 * expanded, the command line's is the current directory's; the file is not read at load. */
static void test_network_ca(void **state)
{
	const struct mfile files[] = {
	    {MAIN, "[sandbox]\ninclude = sub/inc.ini\n", 0},
	    {"/p/sub/inc.ini", "[network]\nmode = proxy\n\nca = certs/local.pem\n", 0},
	};
	struct policy *p = must_load_files(files, NFILES(files));
	struct ab_err e = {0};
	struct json j;
	(void)state;

	assert_string_equal(p->net_ca, "/p/sub/certs/local.pem");
	assert_string_equal(p->net_ca_at.file, "/p/sub/inc.ini");
	assert_int_equal(p->net_ca_at.line, 4);
	assert_int_equal(policy_finish(p, &e), 0);
	json_init(&j);
	policy_explain(p, &j);
	assert_non_null(strstr(json_text(&j), "\"ca\":\"/p/sub/certs/local.pem\""));
	json_free(&j);
	policy_free(p);

	p = must_load("[network]\nmode = proxy\nca = ${HOME}/ca.pem\n");
	assert_string_equal(p->net_ca, "/home/alice/ca.pem");
	assert_int_equal(policy_override(p, "network", "ca", "mine.pem", "--ca", &e), 0);
	assert_string_equal(p->net_ca, "/work/proj/mine.pem");
	policy_free(p);

	expect_error("[network]\nmode = proxy\nca = a.pem\nca = b.pem\n",
		     MAIN ":4: ", "'ca' is set twice");
	expect_error("[network]\nca =\n", MAIN ":2: ", "empty value");
	p = must_load("[network]\nca = /etc/x.pem\n");
	assert_int_equal(policy_finish(p, &e), -1);
	expect_msg(&e, MAIN ":2: ", "[network] ca is set but mode is none");
	policy_free(p);
}

/* ---------- [network] ---------- */

static void test_network(void **state)
{
	struct policy *p = must_load("[network]\n"
				     "mode = proxy\n"
				     "allow = example.com, *.GitHub.com:443\n"
				     "allow = 192.0.2.1, example.com, b\xc3\xbc"
				     "cher.de\n"
				     "deny = 10.0.0.0/8, [fd00::]/8\n");
	(void)state;

	assert_int_equal(p->net_mode, NET_PROXY);
	/* rules are kept as written (an international name too, converted only for matching); a
	 * repeated rule is listed once */
	expect_strv(&p->net.allow.text, 4, "example.com", "*.GitHub.com:443", "192.0.2.1",
		    "b\xc3\xbc"
		    "cher.de");
	expect_strv(&p->net.deny.text, 2, "10.0.0.0/8", "[fd00::]/8");
	policy_free(p);

	p = must_load("[network]\nmode = host\n");
	assert_int_equal(p->net_mode, NET_HOST);
	policy_free(p);
	p = must_load("[network]\nmode = none\n");
	assert_int_equal(p->net_mode, NET_NONE);
	policy_free(p);

	expect_error("[network]\nmode = wifi\n",
		     MAIN ":2: ", "'wifi' is not a valid mode; fix: use one of: none, proxy, host");
	expect_error("[network]\nmode = proxy\nallow = example.com:0\n",
		     MAIN ":3: ", "is not a port number");
	expect_error("[network]\ndeny = b\xc3\xbc"
		     "cher\xc3.de\n",
		     MAIN ":2: ", "not valid UTF-8; fix: check the name, or write it in punycode");
	expect_error("[network]\nallow = ok.com, -bad.com\n", MAIN ":2: ", "is not a host name");
}

static void test_protect(void **state)
{
	struct policy *p = must_load("[filesystem]\nprotect = /w/Makefile, /w/./ci/\n"
				     "unprotect = .envrc, .git/hooks\n");
	(void)state;

	expect_strv(&p->protect, 2, "/w/Makefile", "/w/ci");
	expect_strv(&p->unprotect, 2, ".envrc", ".git/hooks");
	policy_free(p);
	expect_error("[filesystem]\nunprotect = Makefile\n",
		     MAIN ":2: ", "'Makefile' is not one of the protected names");
	expect_error("[filesystem]\nprotect = relative/path\n", MAIN ":2: ", "absolute");
}

static void test_network_resolve(void **state)
{
	struct policy *p = must_load("[network]\nmode = proxy\n"
				     "resolve = pypi.org:443=127.0.0.1:8443, mirror.test=[::1]\n"
				     "resolve = pypi.org:443=127.0.0.1:8443\n");
	(void)state;

	expect_strv(&p->net.pins.text, 2, "pypi.org:443=127.0.0.1:8443", "mirror.test=[::1]");
	policy_free(p);

	expect_error("[network]\nmode = proxy\nresolve = pypi.org\n",
		     MAIN ":3: ", "'pypi.org' is not NAME[:PORT]=ADDRESS[:PORT]");
	expect_error("[network]\nmode = proxy\n\nresolve = *.pypi.org=127.0.0.1\n",
		     MAIN ":4: ", "one host name");
	expect_error("[network]\nmode = proxy\nresolve = pypi.org=files.example\n",
		     MAIN ":3: ", "needs an IP address");
}

/* Egress limits for the run and for each host: parsed, shown by --explain, only with proxy. */
static void test_network_limits(void **state)
{
	struct policy *p =
	    must_load("[network]\nmode = proxy\n"
		      "max-connections = 64\nrate = 20\n"
		      "max-bytes-out = 1M\nmax-bytes-in = 1G\n"
		      "max-connections-per-host = 4\nrate-per-host = 2\n"
		      "max-bytes-out-per-host = 64K\nmax-bytes-in-per-host = 100M\n");
	struct ab_err e = {0};
	struct json j;
	(void)state;

	assert_int_equal(p->net_max_connections, 64);
	assert_int_equal(p->net_rate, 20);
	assert_int_equal(p->net_max_bytes_out, 1ull << 20);
	assert_int_equal(p->net_max_bytes_in, 1ull << 30);
	assert_int_equal(p->net_host_max_connections, 4);
	assert_int_equal(p->net_host_rate, 2);
	assert_int_equal(p->net_host_max_bytes_out, 64ull << 10);
	assert_int_equal(p->net_host_max_bytes_in, 100ull << 20);
	assert_int_equal(policy_finish(p, &e), 0);
	json_init(&j);
	policy_explain(p, &j);
	assert_non_null(strstr(json_text(&j), "\"max_connections_per_host\":4,\"rate_per_host\":2,"
					      "\"max_bytes_out_per_host\":65536,"
					      "\"max_bytes_in_per_host\":104857600"));
	json_free(&j);
	policy_free(p);

	expect_error("[network]\nmode = proxy\nrate-per-host = 0\n",
		     MAIN ":3: ", "'rate-per-host' must be greater than 0");
	expect_error("[network]\nmode = proxy\nmax-bytes-in-per-host = lots\n",
		     MAIN ":3: ", "lots");
	expect_error("[network]\nmax-connections-per-host = 2\nmax-connections-per-host = 3\n",
		     MAIN ":3: ", "max-connections-per-host");
	p = must_load("[network]\nmax-connections-per-host = 2\n");
	assert_int_equal(policy_finish(p, &e), -1);
	expect_msg(&e, MAIN ":2: ", "[network] has egress limits but mode is none");
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_http_rules),	    cmocka_unit_test(test_network),
	    cmocka_unit_test(test_network_resolve), cmocka_unit_test(test_protect),
	    cmocka_unit_test(test_network_ca),	    cmocka_unit_test(test_network_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

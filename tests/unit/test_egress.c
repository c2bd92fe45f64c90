/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for egress_rule_parse: host names, wildcards, ports, IPv4/IPv6 addresses and ranges,
 * international names (kept as punycode), and the inputs it must refuse; for resolve pins
 * (egress_pin_parse, egress_pinned); and for rule matching of Unicode and punycode names. The
 * protocol parsers (sniff, request heads, framing) are in test_egress_proto.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress.h"

static struct egress_rule parse_ok(const char *text)
{
	struct egress_rule r;
	struct ab_err e = {0};

	if (egress_rule_parse(text, &r, &e) != 0) {
		print_error("'%s' was refused: %s\n", text, e.msg);
		fail();
	}
	return r;
}

/* text is refused and the message contains phrase. */
static void expect_refused(const char *text, const char *phrase)
{
	struct egress_rule r;
	struct ab_err e = {0};

	if (egress_rule_parse(text, &r, &e) != -1) {
		print_error("'%s' was accepted (kind %d, host '%s', port %u)\n", text, r.kind,
			    r.host, r.port);
		fail();
	}
	if (!strstr(e.msg, phrase)) {
		print_error("'%s': message \"%s\" lacks \"%s\"\n", text, e.msg, phrase);
		fail();
	}
}

static void expect_host(const char *text, enum egress_rule_kind kind, const char *host,
			unsigned port)
{
	struct egress_rule r = parse_ok(text);

	assert_int_equal(r.kind, kind);
	assert_string_equal(r.host, host);
	assert_int_equal(r.port, port);
}

static void expect_addr(const char *text, enum egress_rule_kind kind, int family, const char *addr,
			unsigned prefix, unsigned port)
{
	struct egress_rule r = parse_ok(text);
	uint8_t want[16] = {0};

	assert_int_equal(r.kind, kind);
	assert_int_equal(r.family, family);
	assert_int_equal(inet_pton(family, addr, want), 1);
	assert_memory_equal(r.addr, want, family == AF_INET ? 4 : 16);
	assert_int_equal(r.prefix, prefix);
	assert_int_equal(r.port, port);
}

static void test_host(void **state)
{
	(void)state;
	expect_host("example.com", RULE_HOST, "example.com", 0);
	expect_host("localhost", RULE_HOST, "localhost", 0);
	expect_host("a-b.c_d.example", RULE_HOST, "a-b.c_d.example", 0);
	expect_host("xn--bcher-kva.example", RULE_HOST, "xn--bcher-kva.example", 0);
	expect_host("1password.com", RULE_HOST, "1password.com", 0);
}

static void test_subdomain_wildcards(void **state)
{
	(void)state;
	expect_host("*.example.com", RULE_SUBDOMAINS, "example.com", 0);
	expect_host("**.example.com", RULE_DOMAIN, "example.com", 0);
	expect_host("*.com", RULE_SUBDOMAINS, "com", 0);
	expect_host("**.github.io:443", RULE_DOMAIN, "github.io", 443);
}

static void test_bad_wildcards(void **state)
{
	(void)state;
	expect_refused("*", "not a host name");
	/* a URL names the host in a way a rule does not: say so, not "not a port number" */
	expect_refused("https://pypi.org/simple", "'https://pypi.org/simple' is a URL");
	expect_refused("http://a.example", "fix: write the host");
	expect_refused("*.", "not a host name");
	expect_refused("**.", "not a host name");
	expect_refused("a.*.com", "not a host name");
	expect_refused("***.example.com", "not a host name");
	expect_refused("*example.com", "not a host name");
	expect_refused("ex*ample.com", "not a host name");
}

static void test_uppercase_is_lowered(void **state)
{
	(void)state;
	expect_host("EXAMPLE.COM", RULE_HOST, "example.com", 0);
	expect_host("*.GitHub.COM:8443", RULE_SUBDOMAINS, "github.com", 8443);
	expect_host("**.Api.Example.Org", RULE_DOMAIN, "api.example.org", 0);
}

static void test_trailing_dot_stripped(void **state)
{
	(void)state;
	expect_host("example.com.", RULE_HOST, "example.com", 0);
	expect_host("example.com.:80", RULE_HOST, "example.com", 80);
	expect_host("*.example.com.", RULE_SUBDOMAINS, "example.com", 0);
	/* only one trailing dot: the name does not end in an empty label */
	expect_refused("example.com..", "not a host name");
	expect_refused(".", "not an IPv4 address"); /* digits and dots only */
	expect_refused(".example.com", "not a host name");
	expect_refused("a..b", "not a host name");
}

static void test_ports(void **state)
{
	(void)state;
	expect_host("example.com:443", RULE_HOST, "example.com", 443);
	expect_host("example.com:1", RULE_HOST, "example.com", 1);
	expect_host("example.com:65535", RULE_HOST, "example.com", 65535);
	expect_addr("192.0.2.1:8080", RULE_ADDRESS, AF_INET, "192.0.2.1", 32, 8080);
}

static void test_bad_ports(void **state)
{
	(void)state;
	expect_refused("example.com:0", "'0' is not a port number (1-65535)");
	expect_refused("example.com:65536", "'65536' is not a port number");
	expect_refused("example.com:abc", "'abc' is not a port number");
	expect_refused("example.com:", "is not a port number");
	expect_refused("example.com:-1", "is not a port number");
	expect_refused("example.com:+80", "is not a port number");
	expect_refused("example.com:80x", "is not a port number");
	expect_refused("example.com: 80", "is not a port number");
	expect_refused("example.com:99999999999999999999999", "is not a port number");
	expect_refused("[2001:db8::1]:0", "is not a port number");
	expect_refused("[2001:db8::1]:70000", "is not a port number");
	expect_refused("[2001:db8::1]:", "is not a port number");
}

static void test_ipv4(void **state)
{
	(void)state;
	expect_addr("192.0.2.1", RULE_ADDRESS, AF_INET, "192.0.2.1", 32, 0);
	expect_addr("0.0.0.0", RULE_ADDRESS, AF_INET, "0.0.0.0", 32, 0);
	expect_addr("255.255.255.255", RULE_ADDRESS, AF_INET, "255.255.255.255", 32, 0);
	expect_refused("256.0.0.1", "not an IPv4 address");
	expect_refused("1.2.3", "not an IPv4 address");
	expect_refused("1.2.3.4.5", "not an IPv4 address");
	expect_refused("123", "not an IPv4 address");
}

static void test_ipv4_cidr(void **state)
{
	(void)state;
	expect_addr("10.0.0.0/8", RULE_CIDR, AF_INET, "10.0.0.0", 8, 0);
	expect_addr("192.168.1.0/24:53", RULE_CIDR, AF_INET, "192.168.1.0", 24, 53);
	expect_addr("0.0.0.0/0", RULE_CIDR, AF_INET, "0.0.0.0", 0, 0);
	expect_addr("192.0.2.7/32", RULE_CIDR, AF_INET, "192.0.2.7", 32, 0);
	expect_refused("10.0.0.0/33", "not a prefix length (0-32)");
	expect_refused("10.0.0.0/", "not a prefix length");
	expect_refused("10.0.0.0/-1", "not a prefix length");
	expect_refused("10.0.0.0/8x", "not a prefix length");
	expect_refused("example.com/8", "not an IPv4 address");
}

static void test_ipv6_bracketed(void **state)
{
	(void)state;
	expect_addr("[2001:db8::1]", RULE_ADDRESS, AF_INET6, "2001:db8::1", 128, 0);
	expect_addr("[::1]", RULE_ADDRESS, AF_INET6, "::1", 128, 0);
	expect_addr("[2001:DB8::ABCD]", RULE_ADDRESS, AF_INET6, "2001:db8::abcd", 128, 0);
	expect_addr("[::ffff:192.0.2.1]", RULE_ADDRESS, AF_INET6, "::ffff:192.0.2.1", 128, 0);
}

static void test_ipv6_with_port(void **state)
{
	(void)state;
	expect_addr("[2001:db8::1]:443", RULE_ADDRESS, AF_INET6, "2001:db8::1", 128, 443);
	expect_addr("[::1]:65535", RULE_ADDRESS, AF_INET6, "::1", 128, 65535);
}

static void test_ipv6_bare(void **state)
{
	(void)state;
	expect_addr("2001:db8::1", RULE_ADDRESS, AF_INET6, "2001:db8::1", 128, 0);
	expect_addr("::1", RULE_ADDRESS, AF_INET6, "::1", 128, 0);
	expect_addr("fe80::/10", RULE_CIDR, AF_INET6, "fe80::", 10, 0);
	expect_refused("2001:db8::g", "not an IPv6 address");
	expect_refused("host:80:90", "not an IPv6 address");
}

static void test_ipv6_cidr(void **state)
{
	(void)state;
	expect_addr("[fd00::]/8", RULE_CIDR, AF_INET6, "fd00::", 8, 0);
	expect_addr("[2001:db8::]/32", RULE_CIDR, AF_INET6, "2001:db8::", 32, 0);
	expect_addr("[::]/0", RULE_CIDR, AF_INET6, "::", 0, 0);
	expect_refused("[fd00::]/129", "not a prefix length (0-128)");
	expect_refused("[fd00::]/", "not a prefix length");
}

static void test_ipv6_malformed(void **state)
{
	(void)state;
	expect_refused("[2001:db8::1", "missing ']'");
	expect_refused("[2001:db8::1]x", "unexpected text after ']'");
	expect_refused("[192.0.2.1]", "not an IPv6 address");
	expect_refused("[]", "not an IPv6 address");
	expect_refused("[example.com]", "not an IPv6 address");
}

/* "bücher" and "例子" in UTF-8, and their punycode (IDNA2008) */
#define BUECHER                                                                                    \
	"b\xc3\xbc"                                                                                \
	"cher"
#define BUECHER_UPPER                                                                              \
	"B\xc3\x9c"                                                                                \
	"CHER"
#define BUECHER_ACE "xn--bcher-kva"
#define LIZI "\xe4\xbe\x8b\xe5\xad\x90"
#define LIZI_ACE "xn--fsqu00a"

/* Unicode rules are kept in their ASCII form: the form requests are compared in. */
static void test_idn_rules(void **state)
{
	(void)state;
	expect_host(BUECHER ".example", RULE_HOST, BUECHER_ACE ".example", 0);
	expect_host(BUECHER_UPPER ".EXAMPLE:443", RULE_HOST, BUECHER_ACE ".example", 443);
	expect_host("*." LIZI ".com", RULE_SUBDOMAINS, LIZI_ACE ".com", 0);
	expect_host("**." LIZI ".com.", RULE_DOMAIN, LIZI_ACE ".com", 0);
	/* a full-width ideographic full stop (U+3002) separates labels, as UTS #46 maps it */
	expect_host(BUECHER "\xe3\x80\x82"
			    "example",
		    RULE_HOST, BUECHER_ACE ".example", 0);
	/* non-transitional: sharp s stays itself (not "ss") */
	expect_host("fa\xc3\x9f.de", RULE_HOST, "xn--fa-hia.de", 0);
	/* punycode written by hand is the same rule */
	expect_host(BUECHER_ACE ".example", RULE_HOST, BUECHER_ACE ".example", 0);
}

static void test_idn_refused(void **state)
{
	(void)state;
	expect_refused("example.com\xff", "not valid UTF-8");
	expect_refused("ex\xc3.com", "not valid UTF-8"); /* cut short */
	expect_refused("\xc0\xaf"
		       "example.com",
		       "not valid UTF-8");		       /* overlong '/' */
	expect_refused("\xed\xa0\x80.com", "not valid UTF-8"); /* a UTF-16 surrogate */
	expect_refused("-" BUECHER ".com", "is not an international host name");
	expect_refused(BUECHER "..com", "not a host name");
	/* a mapping that yields a character no host name has: U+FF0F (full-width '/') */
	expect_refused("a\xef\xbc\x8f" BUECHER ".com", "is not an international host name");
	expect_refused("a\xef\xbc\x8f"
		       "b.com",
		       "its ASCII form is not a host name");
	/* U+034F (combining grapheme joiner) is ignored by the mapping: found by the fuzzer */
	expect_refused("0\xcd\x8f", "its ASCII form is an IPv4 address");
	expect_refused("1\xcd\x8f"
		       "27.0.0.1",
		       "its ASCII form is an IPv4 address");
}

static void test_bad_labels(void **state)
{
	(void)state;
	expect_refused("-example.com", "not a host name");
	expect_refused("example-.com", "not a host name");
	expect_refused("www.-bad.com", "not a host name");
	expect_refused("*.-bad.com", "not a host name");
	expect_refused("exa mple.com", "not a host name");
	expect_refused("exa/mple", "has a path; a network rule names a host");
	expect_refused("pypi.org/simple", "'pypi.org/simple' has a path");
	expect_refused("pypi.org:443/simple", "'pypi.org:443/simple' has a path");
	expect_refused("10.0.0.1:80/x", "has a path");
	expect_refused("10.0.0.0/x", "not a prefix length");
	expect_refused("[a-z].example.com", "brackets hold an IPv6 address");
	expect_refused("exa@mple.com", "not a host name");
	expect_refused("", "not a network rule");
}

static void test_long_names(void **state)
{
	char label63[64], label64[65], name[400];
	(void)state;

	memset(label63, 'a', 63);
	label63[63] = '\0';
	memset(label64, 'a', 64);
	label64[64] = '\0';

	snprintf(name, sizeof(name), "%s.com", label63);
	expect_host(name, RULE_HOST, name, 0);
	snprintf(name, sizeof(name), "%s.com", label64);
	expect_refused(name, "not a host name");

	/* 253 characters: 63+1+63+1+63+1+61 */
	snprintf(name, sizeof(name), "%s.%s.%s.%.61s", label63, label63, label63, label63);
	assert_int_equal(strlen(name), 253);
	expect_host(name, RULE_HOST, name, 0);
	/* the same with a trailing dot is still 253 */
	{
		char dotted[sizeof(name) + 2];
		snprintf(dotted, sizeof(dotted), "%s.", name);
		expect_host(dotted, RULE_HOST, name, 0);
	}
	/* 254 characters */
	snprintf(name, sizeof(name), "%s.%s.%s.%.62s", label63, label63, label63, label63);
	assert_int_equal(strlen(name), 254);
	expect_refused(name, "not a host name");

	/* longer than the parser's buffer: refused without overflowing */
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	expect_refused(name, "not a network rule");
}

static void test_rule_is_reset(void **state)
{
	struct egress_rule r;
	struct ab_err e = {0};
	(void)state;

	memset(&r, 0xff, sizeof(r));
	assert_int_equal(egress_rule_parse("example.com", &r, &e), 0);
	assert_int_equal(r.port, 0);
	assert_int_equal(r.family, 0);
	assert_int_equal(r.prefix, 0);
}

static void test_pin_parse(void **state)
{
	struct egress_pin pin;
	struct ab_err e = {0};
	uint8_t want[16];

	(void)state;
	assert_int_equal(egress_pin_parse("PyPI.org.:443=127.0.0.1:8443", &pin, &e), 0);
	assert_string_equal(pin.name.host, "pypi.org");
	assert_int_equal(pin.name.port, 443);
	assert_int_equal(pin.to.family, AF_INET);
	assert_int_equal(pin.to.port, 8443);
	inet_pton(AF_INET, "127.0.0.1", want);
	assert_memory_equal(pin.to.addr, want, 4);

	assert_int_equal(egress_pin_parse("mirror.example=[2001:db8::7]", &pin, &e), 0);
	assert_int_equal(pin.name.port, 0);
	assert_int_equal(pin.to.family, AF_INET6);
	assert_int_equal(pin.to.port, 0);
	inet_pton(AF_INET6, "2001:db8::7", want);
	assert_memory_equal(pin.to.addr, want, 16);
}

static void pin_refused(const char *text, const char *phrase)
{
	struct egress_pin pin;
	struct ab_err e = {0};

	if (egress_pin_parse(text, &pin, &e) == 0) {
		print_error("'%s' was accepted\n", text);
		fail();
	}
	if (!strstr(e.msg, phrase)) {
		print_error("'%s': message '%s' lacks '%s'\n", text, e.msg, phrase);
		fail();
	}
}

static void test_pin_refused(void **state)
{
	(void)state;
	pin_refused("pypi.org", "NAME[:PORT]=ADDRESS[:PORT]");
	pin_refused("=127.0.0.1", "not a network rule");
	pin_refused("pypi.org=", "not a network rule");
	pin_refused("*.pypi.org=127.0.0.1", "one host name");
	pin_refused("**.pypi.org=127.0.0.1", "one host name");
	pin_refused("10.0.0.1=127.0.0.1", "one host name");
	pin_refused("pypi.org=mirror.example", "needs an IP address");
	pin_refused("pypi.org=10.0.0.0/8", "needs an IP address");
	pin_refused("pypi.org=127.0.0.1:0", "port number");
	pin_refused("pypi.org:99999=127.0.0.1", "port number");
}

/* A proxy-mode policy with these settings (SECTION, KEY, VALUE, ...; NULL ends them), read as
 * a profile's would be: parsed once, then completed by policy_finish. */
static struct policy *net_policy(const char *section, ...)
{
	static const struct policy_vars vars = {"/home/u", "/", "u", "1000", "/tmp"};
	struct policy *p = policy_new(&vars);
	struct ab_err e = {0};
	va_list ap;

	assert_non_null(p);
	assert_int_equal(policy_override(p, "network", "mode", "proxy", "test", &e), 0);
	va_start(ap, section);
	for (const char *sec = section; sec; sec = va_arg(ap, const char *)) {
		const char *key = va_arg(ap, const char *), *value = va_arg(ap, const char *);
		if (policy_override(p, sec, key, value, "test", &e) < 0)
			fail_msg("%s", e.msg);
	}
	va_end(ap);
	if (policy_finish(p, &e) < 0)
		fail_msg("%s", e.msg);
	return p;
}

static void test_pinned_lookup(void **state)
{
	struct policy *p = net_policy("network", "resolve", "pypi.org:443=127.0.0.1:8443",
				      "network", "resolve", "mirror.example=10.1.2.3", NULL);
	const struct egress_rules *r = &p->net;
	const struct egress_pin *pin;
	const char *text;

	(void)state;

	pin = egress_pinned(r, "PYPI.org.", 443, &text);
	assert_non_null(pin);
	assert_string_equal(text, "pypi.org:443=127.0.0.1:8443");
	/* the port is part of the pin: another port goes to DNS */
	assert_null(egress_pinned(r, "pypi.org", 80, &text));
	assert_null(text);
	/* a pin maps one name: not its subdomains, not a name that merely ends the same */
	assert_null(egress_pinned(r, "www.pypi.org", 443, &text));
	assert_null(egress_pinned(r, "notpypi.org", 443, &text));
	/* no port in the pin: every port */
	assert_non_null(egress_pinned(r, "mirror.example", 80, &text));
	assert_non_null(egress_pinned(r, "mirror.example", 8080, &text));
	assert_null(egress_pinned(r, "", 80, &text));

	policy_free(p);
}

/* An [http] allow rule allows its host at ports 80 and 443 (plain HTTP, intercepted HTTPS),
 * under a text that names it; a rule for any host (`*`) allows none; a [network] deny wins. */
static void test_http_rules_imply_ports(void **state)
{
	struct policy *p =
	    net_policy("http", "allow", "GET api.example/v1/**", "http", "allow", "GET */public/*",
		       "http", "deny", "* */admin/*", "network", "deny", "blocked.example", "http",
		       "allow", "POST blocked.example/x", NULL);
	const struct egress_rules *r = &p->net;
	const char *rule;

	(void)state;
	assert_true(egress_decide(r, "api.example", 80, &rule));
	assert_string_equal(rule, "[http] GET api.example/v1/**");
	/* 443 too: intercepted HTTPS is read request by request */
	assert_true(egress_decide(r, "api.example", 443, &rule));
	assert_string_equal(rule, "[http] GET api.example/v1/**");
	assert_false(egress_decide(r, "api.example", 8443, &rule));
	assert_false(egress_decide(r, "other.example", 80, &rule)); /* `*` allows no host */
	assert_false(egress_decide(r, "blocked.example", 80, &rule));
	assert_string_equal(rule, "blocked.example");
	assert_int_equal(r->http.n, 4);
	assert_true(http_rules_cover(&r->http, "other.example")); /* the `*` rules cover it */
	policy_free(p);
}

/* A Unicode rule matches the punycode request and the other way round, in any case. */
static void test_idn_decide(void **state)
{
	struct policy *p = net_policy("network", "allow", BUECHER ".example:443", "network",
				      "allow", "**." LIZI ".com", NULL);
	struct policy *q = net_policy("network", "allow", BUECHER_ACE ".example", "network",
				      "allow", "*." LIZI_ACE ".com", NULL);
	const struct egress_rules *r = &p->net, *ace = &q->net;
	const char *rule;

	(void)state;
	assert_true(egress_decide(r, BUECHER_ACE ".example", 443, &rule));
	assert_string_equal(rule, BUECHER ".example:443");
	assert_true(egress_decide(r, BUECHER ".example", 443, &rule));
	assert_true(egress_decide(r, BUECHER_UPPER ".Example.", 443, &rule));
	assert_true(egress_decide(r, "XN--BCHER-KVA.example", 443, &rule));
	assert_false(egress_decide(r, BUECHER ".example", 80, &rule)); /* the port still counts */
	assert_true(egress_decide(r, "www." LIZI_ACE ".com", 443, &rule));
	assert_true(egress_decide(r, "www." LIZI ".com", 443, &rule));
	assert_string_equal(rule, "**." LIZI ".com");
	/* not the same name: "bucher", and a look-alike with a Cyrillic "е" (U+0435) */
	assert_false(egress_decide(r, "bucher.example", 443, &rule));
	assert_null(rule);
	assert_false(egress_decide(r,
				   "b\xc3\xbc"
				   "ch\xd0\xb5r.example",
				   443, &rule));
	/* invalid UTF-8 in a request matches nothing */
	assert_false(egress_decide(r,
				   "b\xc3\xbc"
				   "cher\xff.example",
				   443, &rule));
	assert_false(egress_decide(r, "\xc3", 443, &rule));

	assert_true(egress_decide(ace, BUECHER ".example", 443, &rule));
	assert_string_equal(rule, BUECHER_ACE ".example");
	assert_true(egress_decide(ace, BUECHER_UPPER ".EXAMPLE", 80, &rule));
	assert_true(egress_decide(ace, "a." LIZI ".com", 443, &rule));
	assert_false(egress_decide(ace, LIZI ".com", 443, &rule)); /* *. is not the apex */

	policy_free(p);
	policy_free(q);
}

static void test_idn_host_name(void **state)
{
	char name[256];
	const char *why;

	(void)state;
	assert_true(egress_host_name("Example.COM.", name, &why));
	assert_string_equal(name, "example.com");
	assert_true(egress_host_name(BUECHER_UPPER ".example.", name, &why));
	assert_string_equal(name, BUECHER_ACE ".example");
	assert_null(why);
	assert_true(egress_host_name("[2001:DB8::1]", name, &why));
	assert_string_equal(name, "[2001:db8::1]");
	assert_false(egress_host_name("caf\xc3\xa9-\xff\xfe.example", name, &why));
	assert_string_equal(why, "not valid UTF-8");
	assert_false(egress_host_name("a\xef\xbc\x8f"
				      "b.example",
				      name, &why));
	assert_string_equal(why, "its ASCII form is not a host name");
	assert_false(egress_host_name("", name, &why));
	assert_false(egress_host_name("1\xcd\x8f"
				      "27.0.0.1",
				      name, &why));
	assert_string_equal(why, "its ASCII form is an IPv4 address");
}

/* The DNS stub's question: is the name allowed at some port? */
static void test_name_allowed(void **state)
{
	struct policy *p =
	    net_policy("network", "allow", "api.example.com:443", "network", "allow",
		       "*.cdn.example", "network", "allow", "10.0.0.0/8", "network", "deny",
		       "bad.cdn.example", "network", "deny", "x.cdn.example:80", NULL);
	const struct egress_rules *r = &p->net;
	const char *rule;

	(void)state;

	/* a rule with a port still makes the name resolvable */
	assert_true(egress_name_allowed(r, "api.example.com", &rule));
	assert_string_equal(rule, "api.example.com:443");
	assert_true(egress_name_allowed(r, "a.cdn.example", &rule));
	/* a port-less deny denies the name; a deny with a port does not */
	assert_false(egress_name_allowed(r, "bad.cdn.example", &rule));
	assert_string_equal(rule, "bad.cdn.example");
	assert_true(egress_name_allowed(r, "x.cdn.example", &rule));
	/* no rule, the apex of a subdomain rule, and address literals are not names */
	assert_false(egress_name_allowed(r, "example.com", &rule));
	assert_null(rule);
	assert_false(egress_name_allowed(r, "cdn.example", &rule));
	assert_false(egress_name_allowed(r, "10.1.2.3", &rule));

	policy_free(p);
}

/* The SSRF guard's IPv4 ranges, each with its reason (held in a fixed-size array: one as long
 * as the array would run on into the next range, silently), and an address none covers. */
static void test_refused_ranges(void **state)
{
	static const struct {
		const char *addr, *why;
	} cases[] = {
	    {"0.1.2.3", "an unspecified address"},
	    {"10.9.8.7", "a private address"},
	    {"100.100.100.200", "a shared or cloud metadata address"},
	    {"127.0.0.53", "a loopback address"},
	    {"169.254.169.254", "a link-local or cloud metadata address"},
	    {"172.31.255.1", "a private address"},
	    {"192.0.0.170", "a reserved address"},
	    {"192.168.1.1", "a private address"},
	    {"198.19.0.1", "a reserved address"},
	    {"239.1.2.3", "a multicast address"},
	    {"255.255.255.255", "a reserved address"},
	    {"93.184.216.34", NULL},
	};
	struct egress_rules none = {0};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t a[4];
		const char *why;

		assert_int_equal(inet_pton(AF_INET, cases[i].addr, a), 1);
		why = egress_address_refused(&none, AF_INET, a, 443);
		if (!cases[i].why)
			assert_null(why);
		else
			assert_string_equal(why, cases[i].why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refused_ranges),
	    cmocka_unit_test(test_host),
	    cmocka_unit_test(test_subdomain_wildcards),
	    cmocka_unit_test(test_bad_wildcards),
	    cmocka_unit_test(test_uppercase_is_lowered),
	    cmocka_unit_test(test_trailing_dot_stripped),
	    cmocka_unit_test(test_ports),
	    cmocka_unit_test(test_bad_ports),
	    cmocka_unit_test(test_ipv4),
	    cmocka_unit_test(test_ipv4_cidr),
	    cmocka_unit_test(test_ipv6_bracketed),
	    cmocka_unit_test(test_ipv6_with_port),
	    cmocka_unit_test(test_ipv6_bare),
	    cmocka_unit_test(test_ipv6_cidr),
	    cmocka_unit_test(test_ipv6_malformed),
	    cmocka_unit_test(test_idn_rules),
	    cmocka_unit_test(test_idn_refused),
	    cmocka_unit_test(test_idn_decide),
	    cmocka_unit_test(test_http_rules_imply_ports),
	    cmocka_unit_test(test_idn_host_name),
	    cmocka_unit_test(test_bad_labels),
	    cmocka_unit_test(test_long_names),
	    cmocka_unit_test(test_rule_is_reset),
	    cmocka_unit_test(test_pin_parse),
	    cmocka_unit_test(test_pin_refused),
	    cmocka_unit_test(test_pinned_lookup),
	    cmocka_unit_test(test_name_allowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

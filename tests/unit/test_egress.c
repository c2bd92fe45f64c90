/* Unit tests for egress_rule_parse: host names, wildcards, ports, IPv4/IPv6 addresses and ranges,
 * international names (kept as punycode), and the inputs it must refuse; for resolve pins
 * (egress_pin_parse, egress_pinned); and for rule matching of Unicode and punycode names. */
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
#include "http_proxy.h"
#include "http_stream.h"
#include "sniff.h"
#include "socks5.h"

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
	expect_refused("exa/mple", "not a prefix length");
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

/* A TLS 1.2/1.3 ClientHello for host (no other extension than server_name unless pad). */
static size_t client_hello(unsigned char *b, const char *host, bool split)
{
	size_t hl = strlen(host), at = 0, ext = 2 + 2 + 2 + 1 + 2 + hl;
	size_t body = 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + ext, rec = 4 + body;

	b[at++] = 0x16, b[at++] = 3, b[at++] = 1;
	b[at++] = (unsigned char)(rec >> 8), b[at++] = (unsigned char)rec;
	b[at++] = 1, b[at++] = 0;
	/* a split hello claims more than its record holds */
	b[at++] = (unsigned char)((body + (split ? 100 : 0)) >> 8);
	b[at++] = (unsigned char)(body + (split ? 100 : 0));
	b[at++] = 3, b[at++] = 3;
	memset(b + at, 0xab, 32), at += 32;
	b[at++] = 0;						  /* session id */
	b[at++] = 0, b[at++] = 2, b[at++] = 0x13, b[at++] = 0x01; /* one suite */
	b[at++] = 1, b[at++] = 0;				  /* null compression */
	b[at++] = (unsigned char)(ext >> 8), b[at++] = (unsigned char)ext;
	b[at++] = 0, b[at++] = 0; /* server_name */
	b[at++] = (unsigned char)((ext - 4) >> 8), b[at++] = (unsigned char)(ext - 4);
	b[at++] = (unsigned char)((hl + 3) >> 8), b[at++] = (unsigned char)(hl + 3);
	b[at++] = 0;
	b[at++] = (unsigned char)(hl >> 8), b[at++] = (unsigned char)hl;
	memcpy(b + at, host, hl), at += hl;
	return at;
}

static void test_sniff(void **state)
{
	unsigned char b[512];
	struct sniff s;
	size_t n = client_hello(b, "api.example.com", false);
	const char *get = "GET /x HTTP/1.1\r\nAccept: */*\r\nHOST:  www.example.com:8080 \r\n\r\n";

	(void)state;
	assert_int_equal(egress_sniff(b, n, &s), PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_TLS);
	assert_string_equal(s.name, "api.example.com");
	assert_false(s.odd);
	/* every shorter prefix asks for more */
	for (size_t k = 1; k < n; k++)
		assert_int_equal(egress_sniff(b, k, &s), PARSE_MORE);
	/* a hello that does not fit its record cannot be checked: unreadable */
	n = client_hello(b, "api.example.com", true);
	assert_int_equal(egress_sniff(b, n, &s), PARSE_DONE);
	assert_true(s.odd);
	assert_string_equal(s.name, "");
	/* a control byte in the name is unreadable, not a name */
	n = client_hello(b, "a\nb.example", false);
	assert_int_equal(egress_sniff(b, n, &s), PARSE_DONE);
	assert_true(s.odd);

	assert_int_equal(egress_sniff((const unsigned char *)get, strlen(get), &s), PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_HTTP);
	assert_string_equal(s.method, "GET");
	assert_string_equal(s.name, "www.example.com");
	assert_int_equal(egress_sniff((const unsigned char *)get, 20, &s), PARSE_MORE);
	/* a protocol that is neither: decided at its first line (or a NUL), no name */
	assert_int_equal(egress_sniff((const unsigned char *)"SSH-2.0-x\r\n", 11, &s), PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_OTHER);
	assert_false(s.odd);
	assert_int_equal(egress_sniff((const unsigned char *)"SSH-2.0-x", 9, &s), PARSE_MORE);
	assert_int_equal(egress_sniff((const unsigned char *)"\x00\x01", 2, &s), PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_OTHER);
	assert_false(s.odd);
	/* request lines a lenient server would serve, which the strict parse does not read:
	 * refused, however they arrive */
	static const char *const lenient[] = {"GET\t/a HTTP/1.1\r\nHost: e.test\r\n\r\n",
					      "\x0cGET /a HTTP/1.1\r\nHost: e.test\r\n\r\n",
					      "get /a http/1.1\r\nHost: e.test\r\n\r\n",
					      "\x1cGET /a HTTP/1.0\n\n", NULL};
	/* text that is no request line is other at once; ended without its line end, other too,
	 * unless it names HTTP/ */
	assert_int_equal(egress_sniff((const unsigned char *)"{\"a\":1}", 7, &s), PARSE_DONE);
	assert_false(s.odd);
	assert_int_equal(egress_sniff((const unsigned char *)"e-capture-echo", 14, &s), PARSE_MORE);
	assert_int_equal(egress_sniff_final((const unsigned char *)"e-capture-echo", 14, &s),
			 PARSE_DONE);
	assert_int_equal(s.proto, SNIFF_OTHER);
	assert_false(s.odd);
	assert_int_equal(egress_sniff_final((const unsigned char *)"get /a http/1.1", 15, &s),
			 PARSE_DONE);
	assert_true(s.odd);
	assert_int_equal(egress_sniff_final((const unsigned char *)"GET /a HTTP/1.1\r\nHo", 20, &s),
			 PARSE_DONE);
	assert_true(s.odd);
	/* Go serves any token as a method, however long */
	static const char longm[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ /a HTTP/1.1\r\nHost: e.test\r\n\r\n";
	assert_int_equal(egress_sniff((const unsigned char *)longm, strlen(longm), &s), PARSE_DONE);
	assert_true(s.odd);
	for (size_t i = 0; lenient[i]; i++) {
		size_t len = strlen(lenient[i]), eol = strcspn(lenient[i], "\n");
		for (size_t k = 1; k <= eol; k++)
			assert_int_equal(egress_sniff((const unsigned char *)lenient[i], k, &s),
					 PARSE_MORE);
		assert_int_equal(egress_sniff((const unsigned char *)lenient[i], len, &s),
				 PARSE_DONE);
		assert_true(s.odd);
	}
}

/* A captured request goes up as it came, but closing: one request per connection. */
static void test_closing_head(void **state)
{
	const char *head = "GET /a?b HTTP/1.1\r\nHost: x.example\r\nConnection: keep-alive\r\n"
			   "Keep-Alive: 5\r\nProxy-Authorization: y\r\nAccept: */*\r\n\r\n";
	size_t n;
	char *out = http_closing_head(head, strlen(head), NULL, &n);

	(void)state;
	assert_non_null(out);
	assert_int_equal(n, strlen("GET /a?b HTTP/1.1\r\nHost: x.example\r\nAccept: */*\r\n"
				   "Connection: close\r\n\r\n"));
	assert_memory_equal(out,
			    "GET /a?b HTTP/1.1\r\nHost: x.example\r\nAccept: */*\r\n"
			    "Connection: close\r\n\r\n",
			    n);
	free(out);
}

/* An intercepted request goes up on a connection kept open: the target the rules matched, the
 * hop-by-hop headers dropped, every other header kept in its place, and no Connection: close
 * (the next request on the connection is read and checked too). */
static void test_kept_head(void **state)
{
	static const char head[] =
	    "GET /a/./b/../c%41?q=%2f HTTP/1.1\r\nHost: api.example.com\r\nConnection: keep-alive, "
	    "Upgrade\r\nUser-Agent: t/1\r\nKeep-Alive: timeout=5\r\nproxy-authorization: Basic "
	    "eA==\r\nPROXY-CONNECTION: keep-alive\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQA"
	    "\r\nAccept: */*\r\nUpgrade-Insecure-Requests: 1\r\nConnection-Id: 7\r\nX-Proxy-A: b"
	    "\r\nContent-Length: 2\r\n\r\n";
	static const char want[] =
	    "GET /a/cA?q=%2F HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: t/1\r\n"
	    "Accept: */*\r\nUpgrade-Insecure-Requests: 1\r\nConnection-Id: 7\r\nX-Proxy-A: b\r\n"
	    "Content-Length: 2\r\n\r\n";
	struct http_stream *s = malloc(sizeof(*s));
	struct http_event ev;
	size_t n;
	char *out = http_kept_head(head, sizeof(head) - 1, "/a/cA?q=%2F", &n);

	(void)state;
	assert_non_null(out);
	assert_non_null(s);
	if (n != sizeof(want) - 1 || memcmp(out, want, n)) {
		print_error("got:\n%.*s\nwant:\n%s", (int)n, out, want);
		fail();
	}
	/* the server reads it as one request with the same framing */
	http_stream_init(s);
	assert_int_equal(http_stream_feed(s, out, n, &ev), n);
	assert_int_equal(ev.type, HTTP_STREAM_HEAD);
	assert_int_equal(ev.framing, HTTP_FRAMING_LENGTH);
	assert_int_equal(ev.length, 2);
	assert_int_equal(ev.target_len, 11);
	assert_memory_equal(ev.target, "/a/cA?q=%2F", 11);
	free(out);

	/* no target given: the request line as it came; HTTP/1.0 and a head of no headers */
	out = http_kept_head(head, sizeof(head) - 1, NULL, &n);
	assert_non_null(out);
	assert_true(n > 35);
	assert_memory_equal(out, "GET /a/./b/../c%41?q=%2f HTTP/1.1\r\nHost: api.example.com\r\n",
			    35 + 23);
	free(out);
	out = http_kept_head("HEAD /x HTTP/1.0\r\n\r\n", 20, "/y", &n);
	assert_non_null(out);
	assert_int_equal(n, 20);
	assert_memory_equal(out, "HEAD /y HTTP/1.0\r\n\r\n", 20);
	free(out);
	/* a head of hop-by-hop headers only, and a longer target than the one replaced */
	out = http_kept_head("POST / HTTP/1.1\r\nConnection: close\r\nUpgrade: websocket\r\n\r\n",
			     58, "/a%20long/er/path%3B", &n);
	assert_non_null(out);
	assert_int_equal(n, strlen("POST /a%20long/er/path%3B HTTP/1.1\r\n\r\n"));
	assert_memory_equal(out, "POST /a%20long/er/path%3B HTTP/1.1\r\n\r\n", n);
	free(out);
	free(s);
}

/* A request head in a buffer of exactly its size (ASan sees a read past it). */
static enum parse_result parse_exact(const char *text, size_t len, struct http_request *req)
{
	char *buf = malloc(len);
	enum parse_result r;

	assert_non_null(buf);
	memcpy(buf, text, len);
	r = http_parse_request(buf, len, req);
	free(buf);
	return r;
}

static void test_http_request_line(void **state)
{
	static const char crash[] = "GN A/z\x11\x11 G *\r\n\r\n"; /* fuzz_proxy, shortened */
	struct http_request req;

	(void)state;
	assert_int_equal(parse_exact("GET http://example.org/x HTTP/1.1\r\n\r\n", 37, &req),
			 PARSE_DONE);
	assert_string_equal(req.host, "example.org");
	assert_int_equal(req.port, 80);
	assert_int_equal(parse_exact("CONNECT example.org:443 HTTP/1.0\r\n\r\n", 36, &req),
			 PARSE_DONE);
	assert_true(req.is_connect);
	assert_int_equal(req.port, 443);
	/* a version shorter than HTTP/1.x at the very end of the buffer (found by fuzz_proxy) */
	assert_int_equal(parse_exact(crash, sizeof(crash) - 1, &req), PARSE_BAD);
	assert_int_equal(parse_exact("GET http://a/ H\r\n\r\n", 19, &req), PARSE_BAD);
	assert_int_equal(parse_exact("GET http://a/ HTTP/2.0\r\n\r\n", 26, &req), PARSE_BAD);
}

/* One request, read the same way by every server on the way: heads whose body length or
 * header lines could be read two ways are refused, by the proxy's parser and the sniffer. */
static void test_http_framing(void **state)
{
	static const char *const refused[] = {
	    "GET http://a/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nContent-Length: 5x\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nX-A: 1\r\n folded: yes\r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nX-A: 1\nHost: b\r\n\r\n",
	};
	static const char *const fine[] = {
	    "POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
	    "POST http://a/ HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\n\r\n",
	    "GET http://a/ HTTP/1.1\r\nX-A: a b\r\n\r\n",
	};
	struct http_request req;

	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(parse_exact(refused[i], strlen(refused[i]), &req), PARSE_BAD);
		assert_non_null(http_framing_refusal(refused[i], strlen(refused[i])));
	}
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		assert_int_equal(parse_exact(fine[i], strlen(fine[i]), &req), PARSE_DONE);
		assert_null(http_framing_refusal(fine[i], strlen(fine[i])));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_http_framing),
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
	    cmocka_unit_test(test_sniff),
	    cmocka_unit_test(test_closing_head),
	    cmocka_unit_test(test_kept_head),
	    cmocka_unit_test(test_http_request_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for trust.c's pure parts and its check of [network] ca: when the proxy intercepts,
 * the names its CA is made for, the CA's lifetime, the variables that point clients at the
 * trust files, and the errors a bad anchor file gives (real files in a temporary directory). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "run_result.h"
#include "strv.h"
#include "tls_ca.h"
#include "trust.h"

static const struct policy_vars vars = {.home = "/home/alice", .cwd = "/work"};

static void set(struct policy *p, const char *section, const char *key, const char *value)
{
	struct ab_err e = {0};

	if (policy_override(p, section, key, value, "test", &e) < 0)
		fail_msg("%s", e.msg);
}

/* A proxy-mode policy with [http] allow rules allow[0..), deny rules deny[0..) and [network]
 * allow rules net[0..), as a profile's: parsed, then completed by policy_finish. */
static struct policy *rules_policy(const char *const *allow, const char *const *deny,
				   const char *const *net)
{
	struct policy *p = policy_new(&vars);
	struct ab_err e = {0};

	assert_non_null(p);
	set(p, "network", "mode", "proxy");
	for (; allow && *allow; allow++)
		set(p, "http", "allow", *allow);
	for (; deny && *deny; deny++)
		set(p, "http", "deny", *deny);
	for (; net && *net; net++)
		set(p, "network", "allow", *net);
	if (policy_finish(p, &e) < 0)
		fail_msg("%s", e.msg);
	return p;
}

static struct policy *proxy_policy(const char *const *allow, const char *const *net)
{
	return rules_policy(allow, NULL, net);
}

#define LIST(...) ((const char *[]){__VA_ARGS__, NULL})

static void expect_names(const struct policy *p, const char *const *want)
{
	struct egress_rule_list names;
	struct ab_err e = {0};
	size_t n = 0;

	if (trust_ca_names(p, &names, &e) < 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	for (; want[n]; n++) {
		assert_true(n < names.text.n);
		assert_string_equal(names.text.v[n], want[n]);
	}
	assert_int_equal(names.text.n, n);
	egress_rule_list_free(&names);
}

static void test_intercepts(void **state)
{
	struct policy *p = policy_new(&vars);
	(void)state;

	/* no proxy, or no [http] rule: nothing is intercepted */
	assert_false(trust_intercepts(p));
	policy_free(p);
	p = proxy_policy(NULL, NULL);
	assert_false(trust_intercepts(p));
	policy_free(p);
	p = proxy_policy(LIST("GET a.example/x"), NULL);
	assert_true(trust_intercepts(p));
	p->net_mode = NET_HOST;
	assert_false(trust_intercepts(p));
	policy_free(p);

	/* a deny rule alone is enough */
	p = rules_policy(NULL, LIST("POST b.example/admin/*"), NULL);
	assert_true(trust_intercepts(p));
	policy_free(p);

	/* rules that name addresses only cover no name a client connects to */
	p = rules_policy(LIST("GET 127.0.0.1/x", "GET [::1]/y"), LIST("* */admin/*"),
			 LIST("127.0.0.1:8080", "10.0.0.0/8"));
	assert_false(trust_intercepts(p));
	policy_free(p);
	/* ... until [network] allow names a host the `*` rule then covers */
	p = rules_policy(LIST("GET 127.0.0.1/x", "GET [::1]/y"), LIST("* */admin/*"),
			 LIST("127.0.0.1:8080", "10.0.0.0/8", "pypi.org:443"));
	assert_true(trust_intercepts(p));
	policy_free(p);
}

/* A session's harness may add [http] rules for the hosts of [http] grantable, and under a `*`
 * rule allow those of [network] grantable: the CA is made for them at the start, and a profile
 * with grantable [http] rules alone has one. */
static void test_grantable_names(void **state)
{
	struct policy *p = policy_new(&vars);
	struct ab_err e = {0};
	(void)state;

	set(p, "network", "mode", "proxy");
	set(p, "http", "grantable", "GET api.grant.example/v1/**");
	assert_int_equal(policy_finish(p, &e), 0);
	assert_true(trust_intercepts(p));
	expect_names(p, LIST("api.grant.example"));
	policy_free(p);

	p = policy_new(&vars);
	set(p, "network", "mode", "proxy");
	set(p, "network", "allow", "pypi.org:443");
	set(p, "network", "grantable", "*.grant.example, 10.0.0.0/8");
	set(p, "http", "allow", "GET */health");
	assert_int_equal(policy_finish(p, &e), 0);
	expect_names(p, LIST("pypi.org", "*.grant.example"));
	policy_free(p);

	/* without a `*` rule, [network] grantable names no host the CA is made for */
	p = policy_new(&vars);
	set(p, "network", "mode", "proxy");
	set(p, "network", "grantable", "*.grant.example");
	assert_int_equal(policy_finish(p, &e), 0);
	assert_false(trust_intercepts(p));
	policy_free(p);
}

static void test_names(void **state)
{
	struct policy *p;
	struct egress_rule_list names;
	struct ab_err e = {0};
	(void)state;

	/* each host form once, in rule order, addresses skipped, deny rules too */
	p = rules_policy(LIST("GET api.github.com/repos/**", "POST api.github.com/x",
			      "GET *.example.com/a", "* **.corp.test/*", "GET 192.0.2.1/x"),
			 LIST("DELETE Other.Example./x"), LIST("unrelated.example"));
	expect_names(p, (const char *[]){"api.github.com", "*.example.com", "**.corp.test",
					 "other.example", NULL});
	policy_free(p);

	/* `*`: the names [network] allow lets through, ports dropped, addresses skipped */
	p = proxy_policy((const char *[]){"GET */health", "GET api.github.com/x", NULL},
			 (const char *[]){"pypi.org:443", "*.pythonhosted.org", "10.0.0.0/8",
					  "api.github.com", "[2001:db8::1]:443", NULL});
	expect_names(p, (const char *[]){"api.github.com", "pypi.org", "*.pythonhosted.org", NULL});
	policy_free(p);

	/* nothing nameable: an error with a fix */
	p = proxy_policy((const char *[]){"GET 127.0.0.1/x", NULL}, NULL);
	assert_int_equal(trust_ca_names(p, &names, &e), -1);
	assert_non_null(strstr(e.msg, "name no host the run's CA can be made for; fix: "));
	policy_free(p);

	/* the CA accepts every name the rules give */
	p = proxy_policy((const char *[]){"GET bücher.example/x", "GET **.a.test/y", NULL}, NULL);
	assert_int_equal(trust_ca_names(p, &names, &e), 0);
	{
		struct tls_ca *ca;
		assert_int_equal(tls_ca_new(names.v, names.text.n, 60, &ca, &e), 0);
		tls_ca_free(ca);
	}
	assert_string_equal(names.text.v[0], "xn--bcher-kva.example");
	egress_rule_list_free(&names);
	policy_free(p);
}

static void test_lifetime(void **state)
{
	struct policy *p = policy_new(&vars);
	uint64_t grace = (SANDBOX_KILL_GRACE_MS + 999) / 1000;
	(void)state;

	assert_int_equal(trust_ca_lifetime(p), TRUST_DEFAULT_LIFETIME_S);
	p->limits.timeout_ms = 1000;
	assert_int_equal(trust_ca_lifetime(p), 1 + grace);
	p->limits.timeout_ms = 1001; /* rounded up */
	assert_int_equal(trust_ca_lifetime(p), 2 + grace);
	p->limits.timeout_ms = 30ull * 86400 * 1000;
	assert_int_equal(trust_ca_lifetime(p), 30ull * 86400 + grace);
	/* more than the CA can be made for: capped, not refused */
	p->limits.timeout_ms = UINT64_MAX;
	assert_true(trust_ca_lifetime(p) <= 10ull * 365 * 86400);
	policy_free(p);
}

static int collect(void *ctx, const char *name, const char *value)
{
	struct strv *sv = ctx;
	char kv[256];

	snprintf(kv, sizeof(kv), "%s=%s", name, value);
	assert_false(strv_has(sv, kv)); /* each variable once */
	return strv_push(sv, kv);
}

static int refuse(void *ctx, const char *name, const char *value)
{
	(void)ctx;
	(void)name;
	(void)value;
	return -1;
}

static void test_env(void **state)
{
	struct strv sv = {0};
	size_t bundle = 0;
	(void)state;

	assert_int_equal(trust_env(collect, &sv, true), 0);
	assert_true(strv_has(&sv, "SSL_CERT_FILE=" TRUST_BUNDLE_FILE));
	assert_true(strv_has(&sv, "REQUESTS_CA_BUNDLE=" TRUST_BUNDLE_FILE));
	assert_true(strv_has(&sv, "CURL_CA_BUNDLE=" TRUST_BUNDLE_FILE));
	assert_true(strv_has(&sv, "PIP_CERT=" TRUST_BUNDLE_FILE));
	assert_true(strv_has(&sv, "GIT_SSL_CAINFO=" TRUST_BUNDLE_FILE));
	assert_true(strv_has(&sv, "AWS_CA_BUNDLE=" TRUST_BUNDLE_FILE));
	assert_true(strv_has(&sv, "DENO_CERT=" TRUST_BUNDLE_FILE));
	assert_true(strv_has(&sv, "CARGO_HTTP_CAINFO=" TRUST_BUNDLE_FILE));
	/* node adds its extra certificates to its own store: the CA (and the user's) */
	assert_true(strv_has(&sv, "NODE_EXTRA_CA_CERTS=" TRUST_CA_FILE));
	/* a directory list: the run's hashed CA, then the system's */
	assert_true(strv_has(&sv, "SSL_CERT_DIR=" TRUST_CERT_DIR ":/etc/ssl/certs"));
	/* Java reads none of those: its options name the store (the caller appends them) */
	assert_true(strv_has(&sv, "JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStore=" TRUST_JVM_STORE
				  " -Djavax.net.ssl.trustStoreType=PKCS12"));
	for (size_t i = 0; i < sv.n; i++)
		bundle += strstr(sv.v[i], "=" TRUST_BUNDLE_FILE) != NULL;
	assert_int_equal(bundle, sv.n - 3);
	strv_free(&sv);
	/* the user's Java options name a store of their own: none of the run's */
	assert_int_equal(trust_env(collect, &sv, false), 0);
	for (size_t i = 0; i < sv.n; i++)
		assert_null(strstr(sv.v[i], "JAVA_TOOL_OPTIONS"));
	strv_free(&sv);
	assert_int_equal(trust_env(refuse, NULL, true), -1);
}

/* ---------- [network] ca ---------- */

static char dir[] = "/tmp/test_trust.XXXXXX";

static const char *write_file(const char *name, const void *data, size_t len)
{
	static char path[sizeof(dir) + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* The run's two checks of [network] ca = path, set at line 7, on a policy intercepting
 * a.example: trust_prepare's before the clone, trust_check_anchor's after it. */
static int prepare_with(const char *path, struct ab_err *e)
{
	struct policy *p = proxy_policy((const char *[]){"GET a.example/x", NULL}, NULL);
	int rc;

	p->net_ca = strdup(path);
	p->net_ca_at = (struct origin){"/p/main.ini", 7, 0};
	memset(e, 0, sizeof(*e));
	rc = trust_prepare(p, e);
	if (rc == 0)
		rc = trust_check_anchor(p, e);
	policy_free(p);
	return rc;
}

static void expect_ca_error(const char *path, const char *cause)
{
	char want[512];
	struct ab_err e;

	assert_int_equal(prepare_with(path, &e), -1);
	snprintf(want, sizeof(want), "/p/main.ini:7: [network] ca %s: %s", path, cause);
	if (strncmp(e.msg, want, strlen(want)) || !strstr(e.msg, "; fix: ")) {
		print_error("error message: \"%s\"\nexpected it to start with \"%s\"\n", e.msg,
			    want);
		fail();
	}
}

/* PEM of pem's certificate with two zero bytes after its DER, which OpenSSL ignores. */
static char *with_trailing_bytes(const char *pem, size_t len)
{
	BIO *in = BIO_new_mem_buf(pem, (int)len), *out = BIO_new(BIO_s_mem());
	char *name = NULL, *header = NULL, *text;
	unsigned char *der = NULL, *longer;
	long n = 0;
	BUF_MEM *mem;

	assert_non_null(in);
	assert_non_null(out);
	assert_int_equal(PEM_read_bio(in, &name, &header, &der, &n), 1);
	assert_non_null(longer = calloc(1, (size_t)n + 2));
	memcpy(longer, der, (size_t)n);
	assert_true(PEM_write_bio(out, name, header, longer, n + 2) > 0);
	BIO_get_mem_ptr(out, &mem);
	assert_non_null(text = strndup(mem->data, mem->length));
	OPENSSL_free(name);
	OPENSSL_free(header);
	OPENSSL_free(der);
	free(longer);
	BIO_free(in);
	BIO_free(out);
	return text;
}

static void test_anchor_file(void **state)
{
	struct egress_rule names[1];
	struct tls_ca *ca;
	struct ab_err e = {0};
	char *pem, both[4096];
	size_t len;
	(void)state;

	assert_int_equal(egress_rule_parse("local.test", &names[0], &e), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(tls_ca_new(names, 1, 60, &ca, &e), 0);
	assert_int_equal(tls_ca_cert_pem(ca, &pem, &len, &e), 0);
	tls_ca_free(ca);

	/* one certificate, and two with text around them, as bundles have */
	assert_int_equal(prepare_with(write_file("one.pem", pem, len), &e), 0);
	assert_true(2 * len + 64 < sizeof(both));
	snprintf(both, sizeof(both), "# a comment\n%s\nsome text\n%s", pem, pem);
	assert_int_equal(prepare_with(write_file("two.pem", both, strlen(both)), &e), 0);
	/* bytes after a certificate's DER: OpenSSL loads it, so the check takes it */
	{
		char *trailing = with_trailing_bytes(pem, len);
		assert_int_equal(
		    prepare_with(write_file("trailing.pem", trailing, strlen(trailing)), &e), 0);
		free(trailing);
	}

	expect_ca_error(write_file("empty.pem", "", 0), "no PEM certificate in it");
	expect_ca_error(write_file("text.pem", "hello\n", 6), "no PEM certificate in it");
	/* DER (or anything else without a BEGIN line) holds no PEM certificate either */
	expect_ca_error(write_file("der.crt", "\x30\x82\x01\x0a\x02\x01", 6),
			"no PEM certificate in it");
	snprintf(both, sizeof(both),
		 "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
	expect_ca_error(write_file("bad.pem", both, strlen(both)), "not readable as PEM");
	expect_ca_error(dir, "not a regular file");
	snprintf(both, sizeof(both), "%s/missing.pem", dir);
	expect_ca_error(both, "cannot open it: No such file or directory");

	/* no interception: the file is not read at all */
	{
		struct policy *p = proxy_policy(NULL, NULL);
		p->net_ca = strdup(both);
		assert_int_equal(trust_prepare(p, &e), 0);
		policy_free(p);
	}
	free(pem);
	for (const char *const *f =
		 (const char *[]){"one.pem", "two.pem", "trailing.pem", "empty.pem", "text.pem",
				  "der.crt", "bad.pem", NULL};
	     *f; f++) {
		snprintf(both, sizeof(both), "%s/%s", dir, *f);
		unlink(both);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intercepts),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_grantable_names),
	    cmocka_unit_test(test_lifetime),
	    cmocka_unit_test(test_env),
	    cmocka_unit_test(test_anchor_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

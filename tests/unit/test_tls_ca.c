/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the per-run interception CA (tls_ca.c): leaves verify against the CA for their
 * name (OpenSSL's chain and hostname checks), the CA's name constraints stop a certificate made
 * by hand for any other name (and for any IP address), the refusals, the leaf cache and its bound,
 * the PEM export (one certificate, no key), validity bounds and extensions. Prints the cost of a CA
 * and of a leaf (a bench note, not an assertion). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "tls_ca.h"

static const char *const names[] = {"example.com", "*.svc.test", "**.org.test"};
#define NNAMES (sizeof(names) / sizeof(names[0]))
#define LIFETIME 3600

/* A name as the policy parses it from a rule. */
static struct egress_rule rule(const char *text)
{
	struct egress_rule r;
	struct ab_err e = {0};

	assert_int_equal(egress_rule_parse(text, &r, &e), 0);
	return r;
}

static struct tls_ca *make_ca(void)
{
	struct tls_ca *ca;
	struct ab_err e = {0};
	struct egress_rule typed[NNAMES];

	for (size_t i = 0; i < NNAMES; i++)
		typed[i] = rule(names[i]);
	if (tls_ca_new(typed, NNAMES, LIFETIME, &ca, &e) != 0) {
		print_error("tls_ca_new: %s\n", e.msg);
		fail();
	}
	return ca;
}

static X509 *leaf_ok(struct tls_ca *ca, const char *name, EVP_PKEY **key)
{
	X509 *cert;
	EVP_PKEY *k;
	struct ab_err e = {0};

	if (tls_ca_leaf(ca, name, &cert, &k, &e) != 0) {
		print_error("tls_ca_leaf(%s): %s\n", name, e.msg);
		fail();
	}
	if (key)
		*key = k;
	return cert;
}

/* X509_V_OK or the error of verifying leaf against the one trust anchor, as a TLS client
 * checking host would (purpose TLS server, RFC 6125 host name check). */
static int verify(X509 *anchor, X509 *leaf, const char *host)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *param;
	int rc;

	assert_non_null(store);
	assert_non_null(ctx);
	assert_int_equal(X509_STORE_add_cert(store, anchor), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
	param = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if (host)
		assert_int_equal(X509_VERIFY_PARAM_set1_host(param, host, 0), 1);
	assert_int_equal(X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER), 1);
	rc = X509_verify_cert(ctx) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	ERR_clear_error();
	return rc;
}

static void expect_verifies(X509 *anchor, X509 *leaf, const char *host)
{
	int rc = verify(anchor, leaf, host);

	if (rc != X509_V_OK) {
		print_error("%s: %s\n", host, X509_verify_cert_error_string(rc));
		fail();
	}
}

static void test_leaf_verifies(void **state)
{
	struct tls_ca *ca = make_ca();
	static const char *const ok[] = {"example.com", "a.svc.test", "x.y.svc.test",
					 "org.test",	"a.org.test", "b.a.org.test"};
	(void)state;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		EVP_PKEY *key;
		X509 *leaf = leaf_ok(ca, ok[i], &key);

		expect_verifies(tls_ca_cert(ca), leaf, ok[i]);
		assert_int_equal(X509_check_private_key(leaf, key), 1);
		assert_string_equal(EVP_PKEY_get0_type_name(key), "EC");
		/* the hostname check is live: the same leaf does not pass for another name */
		assert_int_equal(verify(tls_ca_cert(ca), leaf, "other.example"),
				 X509_V_ERR_HOSTNAME_MISMATCH);
	}
	tls_ca_free(ca);
}

static void test_leaf_refused(void **state)
{
	struct tls_ca *ca = make_ca();
	static const char *const bad[] = {
	    "evil.com",	     /* not a CA name */
	    "x.example.com", /* example.com is that name only */
	    "svc.test",	     /* *.svc.test: the subdomains only */
	    "example.com.evil", "notorg.test",	   "127.0.0.1", "::1",
	    "*.svc.test",	"example.com:443", "",		"a..svc.test",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		X509 *cert = (X509 *)1;
		EVP_PKEY *key = (EVP_PKEY *)1;
		struct ab_err e = {0};

		if (tls_ca_leaf(ca, bad[i], &cert, &key, &e) != -1) {
			print_error("a leaf for '%s' was made\n", bad[i]);
			fail();
		}
		assert_null(cert);
		assert_null(key);
		assert_non_null(strstr(e.msg, "TLS CA"));
	}
	assert_int_equal(tls_ca_leaf_count(ca), 0);
	tls_ca_free(ca);
}

static void test_new_refused(void **state)
{
	struct tls_ca *ca = (struct tls_ca *)1;
	struct ab_err e = {0};
	struct egress_rule addr[] = {rule("10.0.0.1")}, cidr[] = {rule("10.0.0.0/8")},
			   port[] = {rule("example.com:443")}, one[] = {rule("example.com")};
	(void)state;

	assert_int_equal(tls_ca_new(one, 0, LIFETIME, &ca, &e), -1);
	assert_null(ca);
	assert_non_null(strstr(e.msg, "no names"));
	assert_int_equal(tls_ca_new(addr, 1, LIFETIME, &ca, &e), -1);
	assert_non_null(strstr(e.msg, "address"));
	assert_int_equal(tls_ca_new(port, 1, LIFETIME, &ca, &e), -1);
	assert_non_null(strstr(e.msg, "port"));
	assert_int_equal(tls_ca_new(cidr, 1, LIFETIME, &ca, &e), -1);
	assert_non_null(strstr(e.msg, "address"));
	assert_int_equal(tls_ca_new(one, 1, 0, &ca, &e), -1);
	assert_non_null(strstr(e.msg, "lifetime"));
	assert_int_equal(tls_ca_new(one, 1, 20ULL * 366 * 86400, &ca, &e), -1);
	tls_ca_free(NULL);
}

/* A certificate for dns (or, when dns is NULL, for the IPv4 address 192.0.2.1; with cn, a
 * subject CN and no SAN at all), signed by key, issued by issuer. */
static X509 *forge(X509 *issuer, EVP_PKEY *key, const char *dns, const char *cn)
{
	X509 *x = X509_new();
	EVP_PKEY *leaf_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	char san[300];

	assert_non_null(x);
	assert_non_null(leaf_key);
	assert_int_equal(X509_set_version(x, X509_VERSION_3), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(x), 4242), 1);
	assert_int_equal(X509_set1_notBefore(x, X509_get0_notBefore(issuer)), 1);
	assert_int_equal(X509_set1_notAfter(x, X509_get0_notAfter(issuer)), 1);
	assert_int_equal(X509_set_issuer_name(x, X509_get_subject_name(issuer)), 1);
	if (cn)
		assert_int_equal(X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN",
							    MBSTRING_ASC, (const unsigned char *)cn,
							    -1, -1, 0),
				 1);
	assert_int_equal(X509_set_pubkey(x, leaf_key), 1);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if (!cn) {
		snprintf(san, sizeof(san), dns ? "DNS:%s" : "IP:192.0.2.1", dns);
		ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, san);
		assert_non_null(ext);
		assert_int_equal(X509_add_ext(x, ext, -1), 1);
		X509_EXTENSION_free(ext);
	}
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_ext_key_usage, "serverAuth");
	assert_int_equal(X509_add_ext(x, ext, -1), 1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(x, key, EVP_sha256()) > 0);
	EVP_PKEY_free(leaf_key);
	return x;
}

/* The CA's key never leaves tls_ca.c, so the constraints are proven on a twin: the CA's own
 * certificate (subject, every extension, its nameConstraints byte for byte) re-signed with a
 * key the test holds. Certificates made by hand under the twin then show what the constraints
 * alone allow. */
static void test_name_constraints(void **state)
{
	struct tls_ca *ca = make_ca();
	X509 *twin = X509_dup(tls_ca_cert(ca));
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	int crit = -1;
	NAME_CONSTRAINTS *nc;
	struct {
		const char *dns, *cn;
		int expect;
	} cases[] = {
	    /* positive controls: inside the constraints, a hand-made leaf verifies */
	    {"example.com", NULL, X509_V_OK},
	    {"a.svc.test", NULL, X509_V_OK},
	    {"org.test", NULL, X509_V_OK},
	    {"deep.a.org.test", NULL, X509_V_OK},
	    /* X.509 cannot say "this name only": the subtree of example.com passes (tls_ca_leaf
	     * refuses to make it, see test_leaf_refused) */
	    {"x.example.com", NULL, X509_V_OK},
	    /* outside: a leaked CA key cannot vouch for these */
	    {"evil.com", NULL, X509_V_ERR_PERMITTED_VIOLATION},
	    {"example.com.evil", NULL, X509_V_ERR_PERMITTED_VIOLATION},
	    {"badexample.com", NULL, X509_V_ERR_PERMITTED_VIOLATION},
	    {"svc.test", NULL, X509_V_ERR_PERMITTED_VIOLATION},
	    {"notorg.test", NULL, X509_V_ERR_PERMITTED_VIOLATION},
	    {NULL, NULL, X509_V_ERR_EXCLUDED_VIOLATION},	/* an IP address SAN */
	    {NULL, "evil.com", X509_V_ERR_PERMITTED_VIOLATION}, /* CN only, no SAN */
	};
	(void)state;

	assert_non_null(twin);
	assert_non_null(key);
	assert_true(X509_get_ext_by_NID(twin, NID_name_constraints, -1) >= 0);
	nc = X509_get_ext_d2i(tls_ca_cert(ca), NID_name_constraints, &crit, NULL);
	assert_non_null(nc);
	assert_int_equal(crit, 1);
	assert_int_equal(sk_GENERAL_SUBTREE_num(nc->permittedSubtrees), NNAMES);
	assert_int_equal(sk_GENERAL_SUBTREE_num(nc->excludedSubtrees), 2);
	NAME_CONSTRAINTS_free(nc);
	assert_int_equal(X509_set_pubkey(twin, key), 1);
	assert_true(X509_sign(twin, key, EVP_sha256()) > 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		X509 *x = forge(twin, key, cases[i].dns, cases[i].cn);
		int rc = verify(twin, x, NULL);

		if (rc != cases[i].expect) {
			print_error("%s: %s, expected %s\n",
				    cases[i].dns  ? cases[i].dns
				    : cases[i].cn ? cases[i].cn
						  : "IP",
				    X509_verify_cert_error_string(rc),
				    X509_verify_cert_error_string(cases[i].expect));
			fail();
		}
		/* and nothing made by another key passes for the real CA */
		assert_int_not_equal(verify(tls_ca_cert(ca), x, NULL), X509_V_OK);
		X509_free(x);
	}
	X509_free(twin);
	EVP_PKEY_free(key);
	tls_ca_free(ca);
}

static void test_cache(void **state)
{
	struct tls_ca *ca = make_ca();
	EVP_PKEY *k1, *k2, *k3;
	X509 *a, *b, *c;
	(void)state;

	a = leaf_ok(ca, "a.svc.test", &k1);
	assert_int_equal(tls_ca_leaf_count(ca), 1);
	b = leaf_ok(ca, "A.SVC.test.", &k2); /* the same name however it is written */
	assert_ptr_equal(a, b);
	assert_ptr_equal(k1, k2);
	assert_int_equal(tls_ca_leaf_count(ca), 1);
	c = leaf_ok(ca, "b.svc.test", &k3);
	assert_ptr_not_equal(a, c);
	assert_ptr_not_equal(k1, k3);
	assert_int_equal(EVP_PKEY_eq(k1, k3), 0); /* each leaf its own key */
	assert_int_equal(
	    ASN1_INTEGER_cmp(X509_get0_serialNumber(a), X509_get0_serialNumber(c)) != 0, 1);
	assert_int_equal(tls_ca_leaf_count(ca), 2);
	tls_ca_free(ca);
}

/* More names than the cache keeps: it stays at its bound, the least recently used leaf goes
 * (one in use stays), a leaf evicted while a connection holds it stays valid for that
 * connection, and an evicted name gets a new leaf that verifies. */
static void test_cache_bound(void **state)
{
	struct tls_ca *ca = make_ca();
	EVP_PKEY *k0, *kk, *k;
	X509 *first, *kept, *again;
	ASN1_INTEGER *serial;
	char name[64];
	(void)state;

	first = leaf_ok(ca, "h0.svc.test", &k0);
	assert_int_equal(X509_up_ref(first), 1); /* as SSL_use_certificate does */
	assert_int_equal(EVP_PKEY_up_ref(k0), 1);
	serial = ASN1_INTEGER_dup(X509_get0_serialNumber(first));
	assert_non_null(serial);
	kept = leaf_ok(ca, "keep.svc.test", &kk);
	for (int i = 1; i <= TLS_CA_LEAVES_MAX + 10; i++) {
		snprintf(name, sizeof(name), "h%d.svc.test", i);
		leaf_ok(ca, name, NULL);
		assert_true(tls_ca_leaf_count(ca) <= TLS_CA_LEAVES_MAX);
		if (i % 16 == 0) /* in use: never the least recently used */
			assert_ptr_equal(leaf_ok(ca, "keep.svc.test", &k), kept);
	}
	assert_int_equal(tls_ca_leaf_count(ca), TLS_CA_LEAVES_MAX);
	assert_ptr_equal(leaf_ok(ca, "keep.svc.test", &k), kept);
	assert_ptr_equal(k, kk);
	/* the holder's references outlive the eviction */
	assert_int_equal(X509_check_private_key(first, k0), 1);
	expect_verifies(tls_ca_cert(ca), first, "h0.svc.test");
	/* h0 was evicted: made again, a new certificate that verifies for its name */
	again = leaf_ok(ca, "h0.svc.test", &k);
	assert_int_not_equal(ASN1_INTEGER_cmp(serial, X509_get0_serialNumber(again)), 0);
	expect_verifies(tls_ca_cert(ca), again, "h0.svc.test");
	assert_int_equal(X509_check_private_key(again, k), 1);
	assert_int_equal(tls_ca_leaf_count(ca), TLS_CA_LEAVES_MAX);
	ASN1_INTEGER_free(serial);
	X509_free(first);
	EVP_PKEY_free(k0);
	tls_ca_free(ca);
}

static void test_pem(void **state)
{
	struct tls_ca *ca = make_ca();
	struct ab_err e = {0};
	char *pem;
	size_t len, begins = 0;
	BIO *bio;
	X509 *back;
	(void)state;

	leaf_ok(ca, "example.com", NULL);
	assert_int_equal(tls_ca_cert_pem(ca, &pem, &len, &e), 0);
	assert_int_equal(strlen(pem), len);
	for (const char *p = pem; (p = strstr(p, "-----BEGIN ")); p++)
		begins++;
	assert_int_equal(begins, 1);
	assert_non_null(strstr(pem, "-----BEGIN CERTIFICATE-----\n"));
	assert_non_null(strstr(pem, "-----END CERTIFICATE-----\n"));
	assert_null(strstr(pem, "PRIVATE"));
	assert_null(strstr(pem, "KEY"));
	bio = BIO_new_mem_buf(pem, (int)len);
	back = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	assert_non_null(back);
	assert_int_equal(X509_cmp(back, tls_ca_cert(ca)), 0);
	X509_free(back);
	BIO_free(bio);
	free(pem);
	tls_ca_free(ca);
}

static time_t asn1_time(const ASN1_TIME *t)
{
	struct tm tm;

	assert_int_equal(ASN1_TIME_to_tm(t, &tm), 1);
	return timegm(&tm);
}

static void test_validity(void **state)
{
	time_t before = time(NULL), after;
	struct tls_ca *ca = make_ca();
	X509 *cert = tls_ca_cert(ca), *leaf;
	(void)state;

	after = time(NULL);
	leaf = leaf_ok(ca, "example.com", NULL);
	assert_true(asn1_time(X509_get0_notBefore(cert)) >= before - TLS_CA_MARGIN_S);
	assert_true(asn1_time(X509_get0_notBefore(cert)) <= after - TLS_CA_MARGIN_S);
	assert_true(asn1_time(X509_get0_notAfter(cert)) >= before + LIFETIME + TLS_CA_MARGIN_S);
	assert_true(asn1_time(X509_get0_notAfter(cert)) <= after + LIFETIME + TLS_CA_MARGIN_S);
	/* the leaf within the CA's validity */
	assert_true(ASN1_TIME_compare(X509_get0_notBefore(leaf), X509_get0_notBefore(cert)) >= 0);
	assert_true(ASN1_TIME_compare(X509_get0_notAfter(leaf), X509_get0_notAfter(cert)) <= 0);
	/* a client whose clock is past the end refuses it */
	{
		X509_STORE *store = X509_STORE_new();
		X509_STORE_CTX *ctx = X509_STORE_CTX_new();
		X509_STORE_add_cert(store, cert);
		X509_STORE_CTX_init(ctx, store, leaf, NULL);
		X509_STORE_CTX_set_time(ctx, 0, after + LIFETIME + TLS_CA_MARGIN_S + 60);
		assert_int_not_equal(X509_verify_cert(ctx), 1);
		assert_int_equal(X509_STORE_CTX_get_error(ctx), X509_V_ERR_CERT_HAS_EXPIRED);
		X509_STORE_CTX_free(ctx);
		X509_STORE_free(store);
		ERR_clear_error();
	}
	tls_ca_free(ca);
}

static int ext_critical(X509 *x, int nid)
{
	int i = X509_get_ext_by_NID(x, nid, -1);

	assert_true(i >= 0);
	return X509_EXTENSION_get_critical(X509_get_ext(x, i));
}

static void test_extensions(void **state)
{
	struct tls_ca *ca = make_ca();
	X509 *cert = tls_ca_cert(ca), *leaf = leaf_ok(ca, "a.svc.test", NULL);
	EVP_PKEY *pub = X509_get0_pubkey(cert);
	char group[32];
	const ASN1_INTEGER *sa = X509_get0_serialNumber(cert);
	(void)state;

	/* the CA */
	assert_true(X509_get_extension_flags(cert) & EXFLAG_CA);
	assert_true(X509_get_extension_flags(cert) & EXFLAG_SS);
	assert_int_equal(X509_get_pathlen(cert), 0);
	assert_int_equal(ext_critical(cert, NID_basic_constraints), 1);
	assert_int_equal(X509_get_key_usage(cert), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
	assert_int_equal(ext_critical(cert, NID_key_usage), 1);
	assert_int_equal(ext_critical(cert, NID_name_constraints), 1);
	assert_non_null(X509_get0_subject_key_id(cert));
	assert_int_equal(X509_get_version(cert), X509_VERSION_3);
	assert_int_equal(EVP_PKEY_get_group_name(pub, group, sizeof(group), NULL), 1);
	assert_string_equal(group, "prime256v1");
	assert_int_equal(X509_get_signature_nid(cert), NID_ecdsa_with_SHA256);
	assert_true(ASN1_STRING_length(sa) >= 15); /* 127 random bits */
	/* the leaf */
	assert_false(X509_get_extension_flags(leaf) & EXFLAG_CA);
	assert_int_equal(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
	assert_int_equal(ext_critical(leaf, NID_key_usage), 1);
	assert_int_equal(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
	assert_int_equal(
	    ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(leaf), X509_get0_subject_key_id(cert)),
	    0);
	assert_int_equal(X509_check_host(leaf, "a.svc.test", 0, 0, NULL), 1);
	assert_int_equal(X509_NAME_cmp(X509_get_issuer_name(leaf), X509_get_subject_name(cert)), 0);
	assert_int_equal(
	    EVP_PKEY_get_group_name(X509_get0_pubkey(leaf), group, sizeof(group), NULL), 1);
	assert_string_equal(group, "prime256v1");
	assert_int_not_equal(ASN1_INTEGER_cmp(sa, X509_get0_serialNumber(leaf)), 0);
	/* two runs, two CAs: different keys and serials */
	{
		struct tls_ca *other = make_ca();
		assert_int_equal(EVP_PKEY_eq(pub, X509_get0_pubkey(tls_ca_cert(other))), 0);
		assert_int_not_equal(
		    ASN1_INTEGER_cmp(sa, X509_get0_serialNumber(tls_ca_cert(other))), 0);
		tls_ca_free(other);
	}
	tls_ca_free(ca);
}

/* The private numbers live in OpenSSL's secure heap (locked, out of core dumps, cleared on
 * free): its use grows with each key and falls back when the CA is freed. */
static void test_keys_in_secure_heap(void **state)
{
	size_t base;
	struct tls_ca *ca;
	(void)state;

	ca = make_ca();
	assert_int_equal(CRYPTO_secure_malloc_initialized(), 1);
	tls_ca_free(ca);
	base = CRYPTO_secure_used();
	ca = make_ca();
	size_t with_ca = CRYPTO_secure_used();
	assert_true(with_ca > base);
	leaf_ok(ca, "example.com", NULL);
	assert_true(CRYPTO_secure_used() > with_ca);
	tls_ca_free(ca);
	assert_int_equal(CRYPTO_secure_used(), base);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Not an assertion (shared machines): the figures for docs and the 1 ms target. */
static void test_cost(void **state)
{
	enum { N = 50 };
	struct tls_ca *ca[N];
	char name[64];
	double t0, t1, t2;
	X509 *x;
	EVP_PKEY *k;
	struct ab_err e = {0};
	(void)state;

	t0 = now_ms();
	for (int i = 0; i < N; i++)
		ca[i] = make_ca();
	t1 = now_ms();
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "h%d.svc.test", i);
		assert_int_equal(tls_ca_leaf(ca[0], name, &x, &k, &e), 0);
	}
	t2 = now_ms();
	print_message("bench: tls_ca_new %.3f ms, a new leaf %.3f ms (mean of %d)\n", (t1 - t0) / N,
		      (t2 - t1) / N, N);
	for (int i = 0; i < N; i++)
		tls_ca_free(ca[i]);
}

/* The reason as text, or the fallback when OpenSSL queued none; the queue left empty. */
static void test_error_reason(void **state)
{
	char buf[200];

	(void)state;
	ERR_clear_error();
	assert_string_equal(tls_error_reason(buf, sizeof(buf), "no detail"), "no detail");
	ERR_raise(ERR_LIB_X509, X509_R_CERT_ALREADY_IN_HASH_TABLE);
	assert_non_null(strstr(tls_error_reason(buf, sizeof(buf), "no detail"),
			       "x509 certificate routines::cert already in hash table"));
	assert_int_equal(ERR_peek_error(), 0);
	/* cut to the buffer, NUL-terminated */
	ERR_raise(ERR_LIB_X509, X509_R_CERT_ALREADY_IN_HASH_TABLE);
	assert_int_equal(strlen(tls_error_reason(buf, 12, "no detail")), 11);
	tls_ca_relocate(); /* nothing deferred outside the agentbox binary: a no-op */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_leaf_verifies), cmocka_unit_test(test_leaf_refused),
	    cmocka_unit_test(test_new_refused),	  cmocka_unit_test(test_name_constraints),
	    cmocka_unit_test(test_cache),	  cmocka_unit_test(test_cache_bound),
	    cmocka_unit_test(test_pem),		  cmocka_unit_test(test_validity),
	    cmocka_unit_test(test_extensions),	  cmocka_unit_test(test_keys_in_secure_heap),
	    cmocka_unit_test(test_error_reason),  cmocka_unit_test(test_cost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

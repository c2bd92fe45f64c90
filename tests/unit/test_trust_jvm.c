/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for trust_jvm.c: the JVM's trust store holds each certificate of its PEM sources,
 * byte for byte, as a certificate bag with the attribute Java needs to call it trusted, and
 * nothing else (no key, no other block); bad PEM is an error naming the source and the block;
 * and which of the user's Java option variables names a trust store of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <openssl/pem.h>
#include <openssl/pkcs12.h>

#include "egress_rule.h"
#include "tls_ca.h"
#include "trust_jvm.h"

#define KEY "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n"

/* A real certificate's PEM (the CA tls_ca makes for the name), malloc'd. */
static char *certificate(const char *name, size_t *len)
{
	struct egress_rule rule;
	struct tls_ca *ca;
	struct ab_err e = {0};
	char *pem;

	assert_int_equal(egress_rule_parse(name, &rule, &e), 0);
	assert_int_equal(tls_ca_new(&rule, 1, 60, &ca, &e), 0);
	assert_int_equal(tls_ca_cert_pem(ca, &pem, len, &e), 0);
	tls_ca_free(ca);
	return pem;
}

/* The DER of pem's first certificate, malloc'd. */
static unsigned char *der_of(const char *pem, long *len)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	char *name, *header;
	unsigned char *der;

	assert_non_null(b);
	assert_true(PEM_read_bio(b, &name, &header, &der, len));
	OPENSSL_free(name);
	OPENSSL_free(header);
	BIO_free(b);
	return der;
}

/* pem's certificate as a TRUSTED CERTIFICATE block (OpenSSL's trust settings after it), malloc'd.
 */
static char *trusted_form(const char *pem, size_t *len)
{
	BIO *in = BIO_new_mem_buf(pem, -1), *out = BIO_new(BIO_s_mem());
	X509 *x = in ? PEM_read_bio_X509(in, NULL, NULL, NULL) : NULL;
	char *data, *copy;
	long n;

	assert_non_null(x);
	assert_non_null(out);
	assert_true(X509_add1_trust_object(x, OBJ_nid2obj(NID_server_auth)));
	assert_true(PEM_write_bio_X509_AUX(out, x));
	n = BIO_get_mem_data(out, &data);
	assert_true(n > 0 && strstr(data, "-----BEGIN TRUSTED CERTIFICATE-----"));
	assert_non_null(copy = strndup(data, (size_t)n));
	*len = (size_t)n;
	X509_free(x);
	BIO_free(in);
	BIO_free(out);
	return copy;
}

/* The store's bags, as Java reads them: one unencrypted SafeContents, no MAC. */
static STACK_OF(PKCS12_SAFEBAG) * bags_of(const unsigned char *der, size_t len)
{
	const unsigned char *p = der;
	PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len);
	STACK_OF(PKCS7) * safes;
	STACK_OF(PKCS12_SAFEBAG) * bags;

	assert_non_null(p12);
	assert_ptr_equal(p, der + len);
	assert_false(PKCS12_mac_present(p12));
	assert_non_null(safes = PKCS12_unpack_authsafes(p12));
	assert_int_equal(sk_PKCS7_num(safes), 1);
	assert_int_equal(OBJ_obj2nid(sk_PKCS7_value(safes, 0)->type), NID_pkcs7_data);
	assert_non_null(bags = PKCS12_unpack_p7data(sk_PKCS7_value(safes, 0)));
	sk_PKCS7_pop_free(safes, PKCS7_free);
	PKCS12_free(p12);
	return bags;
}

/* A certificate bag holding exactly der, trusted for any purpose (Oracle's attribute). */
static void assert_trusted(const PKCS12_SAFEBAG *bag, const unsigned char *der, long len)
{
	X509 *cert = PKCS12_SAFEBAG_get1_cert(bag);
	unsigned char *got = NULL;
	const ASN1_TYPE *usage;
	ASN1_OBJECT *oid = OBJ_txt2obj("2.16.840.1.113894.746875.1.1", 1);
	const STACK_OF(X509_ATTRIBUTE) *attrs = PKCS12_SAFEBAG_get0_attrs(bag);
	int at;

	assert_int_equal(PKCS12_SAFEBAG_get_nid(bag), NID_certBag);
	assert_int_equal(PKCS12_SAFEBAG_get_bag_nid(bag), NID_x509Certificate);
	assert_non_null(cert);
	assert_int_equal(i2d_X509(cert, &got), len);
	assert_memory_equal(got, der, (size_t)len);
	OPENSSL_free(got);
	X509_free(cert);
	assert_non_null(oid);
	at = X509at_get_attr_by_OBJ(attrs, oid, -1);
	assert_true(at >= 0);
	usage = X509_ATTRIBUTE_get0_type(X509at_get_attr(attrs, at), 0);
	assert_non_null(usage);
	assert_int_equal(ASN1_TYPE_get(usage), V_ASN1_OBJECT);
	assert_int_equal(OBJ_obj2nid(usage->value.object), NID_anyExtendedKeyUsage);
	ASN1_OBJECT_free(oid);
}

/* Two sources, one with text and a key around its certificate: two trusted bags, in order,
 * each the certificate's own bytes; the key's block stays out. */
static void test_store(void **state)
{
	struct ab_err e = {0};
	size_t a_len, b_len, len;
	long da_len, db_len;
	char *a = certificate("a.test", &a_len), *b = certificate("b.test", &b_len), *mixed;
	unsigned char *da = der_of(a, &da_len), *db = der_of(b, &db_len);
	const unsigned char *der;
	STACK_OF(PKCS12_SAFEBAG) * bags;
	struct trust_jvm *s;
	(void)state;

	assert_non_null(mixed = malloc(b_len + 256));
	snprintf(mixed, b_len + 256, "# corp\n%s%sbye\n", KEY, b);
	assert_non_null(s = trust_jvm_new(&e));
	assert_int_equal(trust_jvm_add(s, a, a_len, "A", &e), 0);
	assert_int_equal(trust_jvm_add(s, "", 0, "nothing", &e), 0);
	assert_int_equal(trust_jvm_add(s, mixed, strlen(mixed), "B", &e), 0);
	assert_int_equal(trust_jvm_encode(s, &der, &len, &e), 0);
	assert_null(memmem(der, len, "secret", 6));
	bags = bags_of(der, len);
	assert_int_equal(sk_PKCS12_SAFEBAG_num(bags), 2);
	assert_trusted(sk_PKCS12_SAFEBAG_value(bags, 0), da, da_len);
	assert_trusted(sk_PKCS12_SAFEBAG_value(bags, 1), db, db_len);
	sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	trust_jvm_free(s);
	OPENSSL_free(da);
	OPENSSL_free(db);
	free(a);
	free(b);
	free(mixed);
}

/* The store as OpenSSL's own PKCS12 objects encode it (what trust_jvm.c wrote before it placed
 * the bytes itself): each certificate's bytes in a bag with the trusted usage attribute, the
 * bags in one SafeContents, no MAC. */
static unsigned char *openssl_store(char *const *pems, size_t n, int *len)
{
	STACK_OF(PKCS12_SAFEBAG) *bags = sk_PKCS12_SAFEBAG_new_null();
	STACK_OF(PKCS7) *safes = sk_PKCS7_new_null();
	int usage_nid = OBJ_txt2nid("2.16.840.1.113894.746875.1.1");
	unsigned char *out = NULL;
	PKCS12 *p12;

	assert_non_null(bags);
	assert_non_null(safes);
	if (usage_nid == NID_undef) /* OpenSSL 3.2 knows it by name */
		usage_nid = OBJ_create("2.16.840.1.113894.746875.1.1", "jdkTrustedKeyUsage",
				       "Oracle JDK trusted key usage");
	assert_int_not_equal(usage_nid, NID_undef);
	for (size_t i = 0; i < n; i++) {
		long der_len;
		unsigned char *der = der_of(pems[i], &der_len);
		const unsigned char *p = der;
		ASN1_TYPE *cert = d2i_ASN1_TYPE(NULL, &p, der_len);
		PKCS12_SAFEBAG *bag = PKCS12_item_pack_safebag(cert, ASN1_ITEM_rptr(ASN1_ANY),
							       NID_x509Certificate, NID_certBag);
		assert_non_null(bag);
		assert_true(PKCS12_add1_attr_by_NID(
		    bag, usage_nid, V_ASN1_OBJECT,
		    (const unsigned char *)OBJ_nid2obj(NID_anyExtendedKeyUsage), -1));
		assert_true(sk_PKCS12_SAFEBAG_push(bags, bag));
		ASN1_TYPE_free(cert);
		OPENSSL_free(der);
	}
	assert_true(sk_PKCS7_push(safes, PKCS12_pack_p7data(bags)));
	assert_non_null(p12 = PKCS12_add_safes(safes, 0));
	*len = i2d_PKCS12(p12, &out);
	PKCS12_free(p12);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	return out;
}

/* Byte for byte what OpenSSL's PKCS12 objects make of the same certificates: small ones, one
 * of ~100 KB (4,000 names), whose length and every enclosing one take three bytes, and a TRUSTED
 * CERTIFICATE block, whose trust settings stay out. */
static void test_same_bytes_as_openssl(void **state)
{
	struct egress_rule *rules = calloc(4000, sizeof(*rules));
	struct ab_err e = {0};
	struct tls_ca *big;
	char *pems[4];
	size_t lens[4], len;
	const unsigned char *der;
	unsigned char *want;
	struct trust_jvm *s;
	int want_len;
	long big_len;
	(void)state;

	assert_non_null(rules);
	for (int i = 0; i < 4000; i++) {
		char name[64];
		snprintf(name, sizeof(name), "host-%d.big.test", i);
		assert_int_equal(egress_rule_parse(name, &rules[i], &e), 0);
	}
	assert_int_equal(tls_ca_new(rules, 4000, 60, &big, &e), 0);
	assert_int_equal(tls_ca_cert_pem(big, &pems[1], &lens[1], &e), 0);
	tls_ca_free(big);
	free(rules);
	pems[0] = certificate("a.test", &lens[0]);
	pems[2] = certificate("c.test", &lens[2]);
	pems[3] = trusted_form(pems[0], &lens[3]);
	OPENSSL_free(der_of(pems[1], &big_len));
	assert_true(big_len > 65535); /* its length takes three bytes */
	want = openssl_store(pems, 4, &want_len);
	assert_true(want_len > 65536);
	assert_non_null(s = trust_jvm_new(&e));
	for (int i = 0; i < 4; i++)
		assert_int_equal(trust_jvm_add(s, pems[i], lens[i], "PEM", &e), 0);
	assert_int_equal(trust_jvm_encode(s, &der, &len, &e), 0);
	assert_int_equal(len, (size_t)want_len);
	assert_memory_equal(der, want, len);
	trust_jvm_free(s);
	/* one certificate, and none: the shortest lengths */
	for (size_t n = 0; n < 2; n++) {
		OPENSSL_free(want);
		want = openssl_store(pems, n, &want_len);
		assert_non_null(s = trust_jvm_new(&e));
		assert_int_equal(trust_jvm_add(s, pems[0], n ? lens[0] : 0, "PEM", &e), 0);
		assert_int_equal(trust_jvm_encode(s, &der, &len, &e), 0);
		assert_int_equal(len, (size_t)want_len);
		assert_memory_equal(der, want, len);
		trust_jvm_free(s);
	}
	OPENSSL_free(want);
	for (int i = 0; i < 4; i++)
		free(pems[i]);
}

/* The same PEM with CRLF line ends, each line indented: the certificate's exact bytes, for
 * each of the three lengths base64 pads differently (0, 1 or 2 '='; an ECDSA signature's
 * length varies, so certificates are made until each was seen). The bag holds the
 * certificate as its own length reads, so a decoded length a padding byte too long would not
 * show here; what shows is every byte of the certificate. */
static void test_padding_and_line_ends(void **state)
{
	bool seen[3] = {false, false, false};
	(void)state;

	for (int i = 0; i < 200 && !(seen[0] && seen[1] && seen[2]); i++) {
		struct ab_err e = {0};
		size_t len, n = 0, der_len;
		long want_len;
		char *pem = certificate("pad.test", &len), *crlf;
		unsigned char *want = der_of(pem, &want_len);
		const unsigned char *der;
		STACK_OF(PKCS12_SAFEBAG) * bags;
		struct trust_jvm *s;

		assert_non_null(crlf = malloc(len * 4 + 1));
		for (size_t k = 0; k < len; k++) {
			if (k == 0 || pem[k - 1] == '\n')
				crlf[n++] = ' ';
			if (pem[k] == '\n')
				crlf[n++] = '\r';
			crlf[n++] = pem[k];
		}
		assert_non_null(s = trust_jvm_new(&e));
		assert_int_equal(trust_jvm_add(s, crlf, n, "CRLF", &e), 0);
		assert_int_equal(trust_jvm_encode(s, &der, &der_len, &e), 0);
		bags = bags_of(der, der_len);
		assert_int_equal(sk_PKCS12_SAFEBAG_num(bags), 1);
		assert_trusted(sk_PKCS12_SAFEBAG_value(bags, 0), want, want_len);
		seen[want_len % 3] = true;
		sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
		trust_jvm_free(s);
		OPENSSL_free(want);
		free(crlf);
		free(pem);
	}
	assert_true(seen[0] && seen[1] && seen[2]);
}

/* A certificate's outer shape, and nothing less: SEQUENCE { SEQUENCE, SEQUENCE, BIT STRING } in
 * DER, its length without what follows it (a TRUSTED CERTIFICATE's trust settings). */
static void test_certificate_shape(void **state)
{
	static const struct {
		const char *hex;
		long want;
	} cases[] = {
	    {"300730003000030100", 9},	    /* the shape, empty */
	    {"300730003000030100ffff", 9},  /* with bytes after it */
	    {"3000", -1},		    /* an empty SEQUENCE */
	    {"3f1000", -1},		    /* a SEQUENCE's tag in the long form */
	    {"300730003000020101", -1},	    /* an INTEGER where the signature goes */
	    {"3008300030000301000a", -1},   /* a byte after the three fields */
	    {"3080300030000301000000", -1}, /* an indefinite length */
	    {"300930003000030100", -1},	    /* longer than the bytes there are */
	    {"300730003000230100", -1},	    /* a constructed BIT STRING */
	    {"300630003000030100", -1},	    /* a field running past its SEQUENCE */
	};
	size_t len;
	long der_len;
	char *pem = certificate("shape.test", &len), *trusted = trusted_form(pem, &len);
	unsigned char *der = der_of(pem, &der_len), buf[32];
	(void)state;

	assert_int_equal(trust_certificate_length(der, der_len), der_len);
	OPENSSL_free(der);
	der = der_of(trusted, &der_len); /* the certificate and its trust settings */
	assert_true(trust_certificate_length(der, der_len) > 0);
	assert_true(trust_certificate_length(der, der_len) < der_len);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].hex) / 2;
		for (size_t k = 0; k < n; k++)
			assert_int_equal(sscanf(cases[i].hex + 2 * k, "%2hhx", &buf[k]), 1);
		assert_int_equal(trust_certificate_length(buf, (long)n), cases[i].want);
	}
	OPENSSL_free(der);
	free(pem);
	free(trusted);
}

/* A certificate block that is no SEQUENCE, base64 that does not decode (a stray character,
 * padding before the end, a length no multiple of 4), a block without its END line: an error
 * naming the source and the block. */
static void test_bad_blocks(void **state)
{
	static const char *const bad[] = {
	    /* an INTEGER */
	    "-----BEGIN CERTIFICATE-----\nAgEB\n-----END CERTIFICATE-----\n",
	    /* a SEQUENCE of no definite length; one longer than its block */
	    "-----BEGIN CERTIFICATE-----\nMIAAAA==\n-----END CERTIFICATE-----\n",
	    /* an empty SEQUENCE: Java would refuse the whole store for it */
	    "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n",
	    "-----BEGIN CERTIFICATE-----\nMAUB\n-----END CERTIFICATE-----\n",
	    "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
	    "-----BEGIN CERTIFICATE-----\nAg==AQE=\n-----END CERTIFICATE-----\n",
	    "-----BEGIN CERTIFICATE-----\nAgEBA\n-----END CERTIFICATE-----\n",
	    /* a key's block, skipped, then a certificate's never closed */
	    KEY "-----BEGIN CERTIFICATE-----\nAgEB\n",
	};
	static const char *const why[] = {
	    "the test file: block 1 (CERTIFICATE) is not a certificate",
	    "the test file: block 1 (CERTIFICATE) is not a certificate",
	    "the test file: block 1 (CERTIFICATE) is not a certificate",
	    "the test file: block 1 (CERTIFICATE) is not a certificate",
	    "the test file: not readable as PEM (block 1, CERTIFICATE, is not base64)",
	    "the test file: not readable as PEM (block 1, CERTIFICATE, is not base64)",
	    "the test file: not readable as PEM (block 1, CERTIFICATE, is not base64)",
	    "the test file: not readable as PEM (block 2 has no END line)",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ab_err e = {0};
		struct trust_jvm *s = trust_jvm_new(&e);
		assert_non_null(s);
		assert_int_equal(trust_jvm_add(s, bad[i], strlen(bad[i]), "the test file", &e), -1);
		assert_string_equal(e.msg, why[i]);
		trust_jvm_free(s);
	}
}

/* Which variable names the user's own store: the option itself, anywhere in the list, in any
 * of the three variables the JVM reads; not a longer property's name, nor a value. */
static void test_user_store(void **state)
{
	static const struct {
		const char *var;
		const char *want;
	} cases[] = {
	    {"JAVA_TOOL_OPTIONS=-Xmx1g -Djavax.net.ssl.trustStore=/etc/corp.jks",
	     "JAVA_TOOL_OPTIONS"},
	    {"JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStore=/a", "JAVA_TOOL_OPTIONS"},
	    {"JAVA_TOOL_OPTIONS=\"-Djavax.net.ssl.trustStore=/a b\"", "JAVA_TOOL_OPTIONS"},
	    {"JDK_JAVA_OPTIONS=-Djavax.net.ssl.trustStore=/a", "JDK_JAVA_OPTIONS"},
	    {"_JAVA_OPTIONS=-Dx=1\t-Djavax.net.ssl.trustStore=/a", "_JAVA_OPTIONS"},
	    {"JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStoreType=JKS", NULL},
	    {"JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStorePassword=changeit", NULL},
	    {"JAVA_TOOL_OPTIONS=-Dx=-Djavax.net.ssl.trustStore=/a", NULL},
	    {"OTHER_OPTIONS=-Djavax.net.ssl.trustStore=/a", NULL},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct env_result env = {0};
		const char *got;
		assert_int_equal(strv_push(&env.vars, "PATH=/usr/bin"), 0);
		assert_int_equal(strv_push(&env.vars, cases[i].var), 0);
		got = trust_jvm_user_store(&env);
		if (cases[i].want)
			assert_string_equal(got, cases[i].want);
		else
			assert_null(got);
		env_result_free(&env);
	}
}

/* mmap, linked as __wrap_mmap (tests/CMakeLists.txt): with fail_file_maps set, a read-only
 * private map of a file fails as a file system that cannot map gives ENODEV; counted. */
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
static bool fail_file_maps;
static int file_maps_failed;

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fail_file_maps && fd >= 0 && prot == PROT_READ && flags == MAP_PRIVATE) {
		file_maps_failed++;
		errno = ENODEV;
		return MAP_FAILED;
	}
	return __real_mmap(addr, len, prot, flags, fd, off);
}

static const char *fixed_ca_pem;
static size_t fixed_ca_len;

static const char *fixed_ca(size_t *len)
{
	*len = fixed_ca_len;
	return fixed_ca_pem;
}

/* The store trust_jvm_start makes of the host's system bundle and ca.test's CA, malloc'd. */
static unsigned char *started_store(size_t *len)
{
	static const struct strv no_files;
	struct trust_jvm_sources src = {NULL, 0, &no_files, fixed_ca};
	struct ab_err e = {0};
	const unsigned char *der;
	unsigned char *copy;

	trust_jvm_start(&src);
	if (trust_jvm_wait(&der, len, &e) < 0)
		fail_msg("trust_jvm_wait: %s", e.msg);
	assert_non_null(copy = malloc(*len));
	memcpy(copy, der, *len);
	trust_jvm_end();
	return copy;
}

/* Where the system bundle cannot be mapped, it is read instead, into the same store. */
static void test_bundle_not_mappable(void **state)
{
	unsigned char *mapped, *read;
	size_t mapped_len, read_len;
	(void)state;

	fixed_ca_pem = certificate("ca.test", &fixed_ca_len);
	mapped = started_store(&mapped_len);
	fail_file_maps = true;
	read = started_store(&read_len);
	fail_file_maps = false;
	/* the control: a host without a bundle maps nothing, and this case proves nothing there */
	if (file_maps_failed == 0) {
		free(mapped);
		free(read);
		free((char *)fixed_ca_pem);
		skip();
	}
	assert_int_equal(read_len, mapped_len);
	assert_memory_equal(read, mapped, mapped_len);
	assert_true(mapped_len > 100 * 1000); /* the bundle's certificates, not the CA alone */
	free(mapped);
	free(read);
	free((char *)fixed_ca_pem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store),
	    cmocka_unit_test(test_same_bytes_as_openssl),
	    cmocka_unit_test(test_padding_and_line_ends),
	    cmocka_unit_test(test_bad_blocks),
	    cmocka_unit_test(test_certificate_shape),
	    cmocka_unit_test(test_user_store),
	    cmocka_unit_test(test_bundle_not_mappable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

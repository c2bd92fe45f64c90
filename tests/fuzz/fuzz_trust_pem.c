/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the PEM reading and the JVM's trust store (sandbox/trust_jvm.c), fed the
 * texts a run's trust takes from files the user names ([network] ca, the trust variables).
 *
 * Each input is one PEM text. The blocks trust_pem_blocks hands on are counted, with how many
 * trust_certificate_length takes as certificates; the store made of the text must then exist
 * exactly when every certificate block was taken, hold one bag per block, and parse back with
 * OpenSSL's PKCS12 reader to the same number of bags, each holding the bytes of its block's
 * certificate. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pkcs12.h>

#include "trust_jvm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_trust_pem: check failed: %s (%s:%d)\n", #cond,       \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#define MAX_BLOCKS 64

struct seen {
	size_t blocks, certificates;
	unsigned char *der[MAX_BLOCKS];
	long len[MAX_BLOCKS];
};

static int see(void *ctx, const char *name, const unsigned char *der, long n, int block,
	       struct ab_err *e)
{
	struct seen *s = ctx;
	long len = trust_certificate_length(der, n);

	(void)name;
	(void)block;
	(void)e;
	CHECK(n >= 0);
	CHECK(len <= n);
	if (len > 0 && s->blocks < MAX_BLOCKS) {
		s->der[s->blocks] = malloc((size_t)len);
		CHECK(s->der[s->blocks]);
		memcpy(s->der[s->blocks], der, (size_t)len);
		s->len[s->blocks] = len;
	}
	s->blocks++;
	s->certificates += len > 0;
	return 0;
}

/* One DER header of the tag and class wanted at *p, stepped into (or over, with skip). */
static long header(const unsigned char **p, const unsigned char *end, int tag, int class, int skip)
{
	long len;
	int t, c, r = ASN1_get_object(p, &len, &t, &c, end - *p);

	CHECK(!(r & 0x80) && t == tag && c == class);
	if (skip)
		*p += len;
	return len;
}

/* SafeBag { bagId, [0] CertBag { certId, [0] OCTET STRING }, ... }: the OCTET STRING's
 * contents, left at *p, and their length */
static long cert_octets(const unsigned char **p, const unsigned char *end)
{
	header(p, end, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL, 0);
	header(p, end, V_ASN1_OBJECT, V_ASN1_UNIVERSAL, 1);
	header(p, end, 0, V_ASN1_CONTEXT_SPECIFIC, 0);
	header(p, end, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL, 0);
	header(p, end, V_ASN1_OBJECT, V_ASN1_UNIVERSAL, 1);
	header(p, end, 0, V_ASN1_CONTEXT_SPECIFIC, 0);
	return header(p, end, V_ASN1_OCTET_STRING, V_ASN1_UNIVERSAL, 0);
}

/* The store's bags, parsed back by OpenSSL; each the bytes of its block's certificate. */
static void check_store(const unsigned char *der, size_t len, const struct seen *s)
{
	const unsigned char *p = der;
	PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len);
	STACK_OF(PKCS7) * safes;
	STACK_OF(PKCS12_SAFEBAG) * bags;

	CHECK(p12);
	CHECK(p == der + len);
	CHECK((safes = PKCS12_unpack_authsafes(p12)));
	CHECK(sk_PKCS7_num(safes) == 1);
	CHECK((bags = PKCS12_unpack_p7data(sk_PKCS7_value(safes, 0))));
	CHECK((size_t)sk_PKCS12_SAFEBAG_num(bags) == s->blocks);
	for (size_t i = 0; i < s->blocks && i < MAX_BLOCKS; i++) {
		const PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, i);
		unsigned char *enc = NULL;
		int n = i2d_PKCS12_SAFEBAG(bag, &enc);
		const unsigned char *at = enc;
		long got;

		CHECK(PKCS12_SAFEBAG_get_nid(bag) == NID_certBag);
		CHECK(PKCS12_SAFEBAG_get_bag_nid(bag) == NID_x509Certificate);
		/* the bag's own bytes, not OpenSSL's re-encoding of the certificate it reads there:
		 * that one normalises what DER leaves free (a BIT STRING's unused bits), and Java
		 * reads the bag as it is. OpenSSL keeps a bag's OCTET STRING as it read it. */
		CHECK(n > 0);
		got = cert_octets(&at, enc + n);
		CHECK(got == s->len[i]);
		CHECK(!memcmp(at, s->der[i], (size_t)got));
		OPENSSL_free(enc);
	}
	sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	PKCS12_free(p12);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ab_err e = {0};
	struct seen s = {0};
	struct trust_jvm *store = trust_jvm_new(&e);
	const unsigned char *der;
	size_t len;
	int walked = trust_pem_blocks((const char *)data, size, see, &s, &e), added;

	CHECK(store);
	e = (struct ab_err){0};
	added = trust_jvm_add(store, (const char *)data, size, "the input", &e);
	/* taken whole exactly when the text reads and every certificate block is one */
	CHECK((added == 0) == (walked == 0 && s.certificates == s.blocks));
	CHECK(added == 0 || e.msg[0]);
	if (added == 0) {
		CHECK(trust_jvm_encode(store, &der, &len, &e) == 0);
		check_store(der, len, &s);
	}
	trust_jvm_free(store);
	for (size_t i = 0; i < s.blocks && i < MAX_BLOCKS; i++)
		free(s.der[i]);
	ERR_clear_error();
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the PEM reading and the JVM's trust store (sandbox/trust_jvm.c), fed the
 * texts a run's trust takes from files the user names ([network] ca, the trust variables).
 *
 * Each input is one PEM text. The blocks trust_pem_blocks hands on are counted, with how many
 * trust_certificate_length takes as certificates; the store made of the text must then exist
 * exactly when every certificate block was taken, hold one bag per block, and parse back with
 * OpenSSL's PKCS12 reader to the same number of bags, each (when OpenSSL reads it as a
 * certificate) of the bytes its block began with. */
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
		X509 *cert = PKCS12_SAFEBAG_get1_cert(bag);
		unsigned char *got = NULL;

		CHECK(PKCS12_SAFEBAG_get_nid(bag) == NID_certBag);
		CHECK(PKCS12_SAFEBAG_get_bag_nid(bag) == NID_x509Certificate);
		/* only of the shape, not a certificate OpenSSL reads: no bytes to compare */
		if (!cert)
			continue;
		CHECK(i2d_X509(cert, &got) == s->len[i]);
		CHECK(!memcmp(got, s->der[i], (size_t)s->len[i]));
		OPENSSL_free(got);
		X509_free(cert);
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

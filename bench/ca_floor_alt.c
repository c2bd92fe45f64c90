/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* bench/ca_floor_alt.c: bench/ca_floor.c's work (a P-256 key, a self-signed CA certificate
 * signed with it, its PEM) done by another library, or by OpenSSL's pre-3.0 paths, to learn
 * whether a different way of making the per-run CA could fit issue 30's interception target.
 * One of (each a static binary of one thread, as ca_floor is):
 *
 *   cc -O2 -static -DCA_MBEDTLS -o ca_floor_mbedtls bench/ca_floor_alt.c -lmbedx509 -lmbedcrypto
 *   cc -O2 -DCA_GNUTLS -o ca_floor_gnutls bench/ca_floor_alt.c -lgnutls
 *   cc -O2 -static -DCA_OPENSSL_LEGACY -o ca_floor_legacy bench/ca_floor_alt.c -lcrypto -lpthread
 *
 * mbedTLS from Debian's libmbedtls-dev, GnuTLS from libgnutls28-dev (dynamic: Debian's static
 * GnuTLS needs its whole dependency chain). The legacy build draws its random bytes from
 * getrandom(2) through a RAND_METHOD (no DRBG is instantiated), makes the key as an EC_KEY with
 * a method of its own (so that signing takes the legacy route, without fetching a provider's
 * key manager) and sets the certificate's key from its point, as agentbox does. Exits 0 when
 * the certificate was made, 1 when a step failed; with SHOW set, prints the PEM. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#if !defined(CA_GNUTLS) /* GnuTLS draws its own */
static int fill_random(unsigned char *b, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = getrandom(b + done, n - done, 0);
		if (r < 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}
#endif

#if defined(CA_MBEDTLS)
#include <mbedtls/ecp.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

static int rng(void *ctx, unsigned char *b, size_t n)
{
	(void)ctx;
	return fill_random(b, n);
}

static int make(char *pem, size_t size)
{
	mbedtls_pk_context key;
	mbedtls_x509write_cert crt;
	mbedtls_mpi serial;
	int ok;

	mbedtls_pk_init(&key);
	mbedtls_x509write_crt_init(&crt);
	mbedtls_mpi_init(&serial);
	ok = mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) == 0 &&
	     mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key), rng, NULL) == 0 &&
	     mbedtls_mpi_lset(&serial, 1) == 0;
	if (ok) {
		mbedtls_x509write_crt_set_version(&crt, MBEDTLS_X509_CRT_VERSION_3);
		mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
		mbedtls_x509write_crt_set_subject_key(&crt, &key);
		mbedtls_x509write_crt_set_issuer_key(&crt, &key);
		ok = mbedtls_x509write_crt_set_serial(&crt, &serial) == 0 &&
		     mbedtls_x509write_crt_set_validity(&crt, "20260101000000", "20360101000000") ==
			 0 &&
		     mbedtls_x509write_crt_set_subject_name(&crt, "CN=floor") == 0 &&
		     mbedtls_x509write_crt_set_issuer_name(&crt, "CN=floor") == 0 &&
		     mbedtls_x509write_crt_set_basic_constraints(&crt, 1, 0) == 0 &&
		     mbedtls_x509write_crt_pem(&crt, (unsigned char *)pem, size, rng, NULL) == 0;
	}
	mbedtls_x509write_crt_free(&crt);
	mbedtls_pk_free(&key);
	mbedtls_mpi_free(&serial);
	return ok;
}

#elif defined(CA_GNUTLS)
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

static int make(char *pem, size_t size)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	const unsigned char serial[1] = {1};
	time_t now = time(NULL);
	int ok;

	ok = gnutls_x509_privkey_init(&key) == 0 &&
	     gnutls_x509_privkey_generate(
		 key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) == 0 &&
	     gnutls_x509_crt_init(&crt) == 0 && gnutls_x509_crt_set_version(crt, 3) == 0 &&
	     gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)) == 0 &&
	     gnutls_x509_crt_set_activation_time(crt, now) == 0 &&
	     gnutls_x509_crt_set_expiration_time(crt, now + 3600) == 0 &&
	     gnutls_x509_crt_set_dn(crt, "CN=floor", NULL) == 0 &&
	     gnutls_x509_crt_set_key(crt, key) == 0 &&
	     gnutls_x509_crt_set_basic_constraints(crt, 1, 0) == 0 &&
	     gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) == 0 &&
	     gnutls_x509_crt_export(crt, GNUTLS_X509_FMT_PEM, pem, &size) == 0;
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
	return ok;
}

#elif defined(CA_OPENSSL_LEGACY)
#define OPENSSL_SUPPRESS_DEPRECATED /* the point of this variant */
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

static int rand_bytes(unsigned char *b, int n)
{
	return n >= 0 && fill_random(b, (size_t)n) == 0;
}

static int rand_status(void)
{
	return 1;
}

static RAND_METHOD from_getrandom = {NULL, rand_bytes, NULL, NULL, rand_bytes, rand_status};

static EVP_PKEY *legacy_key(void)
{
	EC_KEY *k = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1);
	EC_KEY_METHOD *m = EC_KEY_METHOD_new(EC_KEY_OpenSSL()); /* a process's life: not freed */
	EVP_PKEY *key = EVP_PKEY_new();

	if (!k || !m || !key || !EC_KEY_set_method(k, m) || !EC_KEY_generate_key(k) ||
	    !EVP_PKEY_assign_EC_KEY(key, k)) {
		EC_KEY_free(k);
		EVP_PKEY_free(key);
		return NULL;
	}
	return key;
}

static int make(char *pem, size_t size)
{
	const uint64_t opts = OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
			      OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS;
	EVP_PKEY *key = NULL;
	X509 *x = NULL;
	X509_EXTENSION *ext = NULL;
	X509V3_CTX ctx;
	BIO *out = NULL;
	unsigned char *point = NULL;
	size_t n = 0;
	int ok;

	ok =
	    OPENSSL_init_crypto(opts, NULL) && RAND_set_rand_method(&from_getrandom) &&
	    (key = legacy_key()) && (x = X509_new()) && (out = BIO_new(BIO_s_mem())) &&
	    (n = EC_KEY_key2buf(EVP_PKEY_get0_EC_KEY(key), POINT_CONVERSION_UNCOMPRESSED, &point,
				NULL)) > 0 &&
	    X509_set_version(x, X509_VERSION_3) && ASN1_INTEGER_set(X509_get_serialNumber(x), 1) &&
	    X509_gmtime_adj(X509_getm_notBefore(x), 0) &&
	    X509_gmtime_adj(X509_getm_notAfter(x), 3600) &&
	    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8,
				       (const unsigned char *)"floor", -1, -1, 0) &&
	    X509_set_issuer_name(x, X509_get_subject_name(x)) &&
	    X509_PUBKEY_set0_param(X509_get_X509_PUBKEY(x), OBJ_nid2obj(NID_X9_62_id_ecPublicKey),
				   V_ASN1_OBJECT, OBJ_nid2obj(NID_X9_62_prime256v1), point, (int)n);
	if (!ok)
		OPENSSL_free(point); /* else the certificate owns it */
	if (ok) {
		X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
		ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE");
		ok = ext && X509_add_ext(x, ext, -1) && X509_sign(x, key, EVP_sha256()) > 0 &&
		     PEM_write_bio_X509(out, x) && BIO_read(out, pem, (int)size - 1) > 0;
	}
	X509_EXTENSION_free(ext);
	BIO_free(out);
	X509_free(x);
	EVP_PKEY_free(key);
	return ok;
}

#else
#error "define CA_MBEDTLS, CA_GNUTLS or CA_OPENSSL_LEGACY"
#endif

int main(void)
{
	static char pem[4096];

	if (!make(pem, sizeof(pem)))
		return 1;
	if (getenv("SHOW"))
		fputs(pem, stdout);
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* bench/ca_floor.c: the least OpenSSL work an intercepting start must add, for issue 30's
 * interception figure: OpenSSL 3 started with agentbox's settings (no openssl.cnf, no legacy
 * cipher table, Hash_DRBG over SHA-256, the error strings never loaded), a P-256 key, a
 * self-signed certificate (subject, validity, serial, one extension) signed with it, and its
 * PEM. A process of its own with one thread, linked statically but not as a PIE (so without
 * the 18,500 relocations of OpenSSL's data agentbox applies); nothing else competes for the CPU
 * in it. What it costs over a static no-op is a bound below the extra cost of any start that
 * makes a per-run CA with OpenSSL before the command runs (agentbox's certificate has name
 * constraints and more extensions, its keys sit in the secure heap, and its process has other
 * work beside it).
 *
 *   cc -O2 -static -o ca_floor bench/ca_floor.c -lcrypto -lpthread && ./ca_floor
 * (exits 0 when the certificate was made, 1 when a step failed) */
#include <stdint.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

static int make(void)
{
	const uint64_t opts = OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
			      OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS;
	EVP_PKEY *key;
	X509 *x;
	X509_NAME *name;
	X509_EXTENSION *ext;
	X509V3_CTX ctx;
	BIO *out;
	int ok;

	if (!OPENSSL_init_crypto(opts, NULL) ||
	    !RAND_set_DRBG_type(NULL, "HASH-DRBG", NULL, NULL, "SHA256") ||
	    !(key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")))
		return 0;
	x = X509_new();
	name = x ? X509_get_subject_name(x) : NULL;
	out = BIO_new(BIO_s_mem());
	ok = x && name && out && X509_set_version(x, X509_VERSION_3) &&
	     ASN1_INTEGER_set(X509_get_serialNumber(x), 1) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), 0) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), 3600) &&
	     X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)"floor",
					-1, -1, 0) &&
	     X509_set_issuer_name(x, name) && X509_set_pubkey(x, key);
	if (ok) {
		X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
		ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE");
		ok = ext && X509_add_ext(x, ext, -1) && X509_sign(x, key, EVP_sha256()) > 0 &&
		     PEM_write_bio_X509(out, x);
		X509_EXTENSION_free(ext);
	}
	BIO_free(out);
	X509_free(x);
	EVP_PKEY_free(key);
	return ok;
}

int main(void)
{
	return make() ? 0 : 1;
}

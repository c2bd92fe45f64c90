/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The per-run CA for TLS interception: keys, the CA certificate with its name constraints, and
 * the per-name leaf cache (bounded: least recently used out). Everything is built with OpenSSL's
 * X.509 objects; the only bytes this file ever holds are certificates (public). */
#include "tls_ca.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "egress_rule.h"

#define LIFETIME_MAX_S (10ULL * 366 * 86400)
/* OpenSSL keeps private key numbers in its secure heap when there is one: locked (never swapped)
 * and out of core dumps. A leaf key is about 100 bytes there; room for ~500 names, twice the
 * leaves the cache keeps. */
#define SECURE_HEAP_BYTES (64 * 1024)

struct tls_leaf {
	char name[256];
	X509 *cert;
	EVP_PKEY *key;
	uint64_t used; /* the CA's clock at its last use: the least recent is evicted */
};

struct tls_ca {
	EVP_PKEY *key;
	X509 *cert;
	bool decoded; /* cert's public key (tls_ca_cert) */
	struct egress_rule *names;
	size_t n;
	struct tls_leaf *leaves; /* at most TLS_CA_LEAVES_MAX */
	size_t nleaves;
	uint64_t clock;
	char *upstream; /* [network] ca's PEM, as read once (tls_ca_set_upstream), or NULL */
	size_t upstream_len;
};

const char *tls_error_reason(char *buf, size_t size, const char *fallback)
{
	unsigned long err = ERR_peek_last_error();
	const uint64_t strings = OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_LOAD_CRYPTO_STRINGS |
				 OPENSSL_INIT_LOAD_SSL_STRINGS;

	snprintf(buf, size, "%s", fallback);
	if (err) {
		/* both sets asked for at once: the only request egress/openssl_lazy.c lets load
		 * them; without strings the reason would read "reason(134)" */
		(void)OPENSSL_init_ssl(strings, NULL);
		ERR_error_string_n(err, buf, size);
	}
	ERR_clear_error();
	return buf;
}

/* Linked into the agentbox binary only: absent (NULL) elsewhere. */
extern void openssl_lazy_relocate(void) __attribute__((weak));

void tls_ca_relocate(void)
{
	if (openssl_lazy_relocate)
		openssl_lazy_relocate();
}

/* The reason OpenSSL queued, or a plain message; the queue is left empty for the next caller. */
static int ossl_fail(struct ab_err *e, const char *what)
{
	char detail[256];

	return ab_fail(e, 0, "TLS CA: %s: %s", what,
		       tls_error_reason(detail, sizeof(detail), "no detail from OpenSSL"));
}

static void secure_heap_init(void)
{
	/* Hardening only: without it (RLIMIT_MEMLOCK too small) the keys sit on the ordinary heap,
	 * still cleared when freed. */
	if (!CRYPTO_secure_malloc_initialized())
		(void)CRYPTO_secure_malloc_init(SECURE_HEAP_BYTES, 32);
}

static EVP_PKEY *p256_key(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* 127 random bits, positive and of a fixed length: unpredictable serials, as CAs must. */
static bool set_serial(X509 *x)
{
	unsigned char b[16];
	BIGNUM *bn;
	bool ok;

	if (RAND_bytes(b, sizeof(b)) != 1)
		return false;
	b[0] = (unsigned char)((b[0] & 0x7f) | 0x40);
	bn = BN_bin2bn(b, sizeof(b), NULL);
	ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
	BN_free(bn);
	return ok;
}

static bool set_name(X509_NAME *name, const char *field, const char *value)
{
	return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, (const unsigned char *)value,
					  -1, -1, 0) == 1;
}

/* An extension from a constant description (no caller data reaches the parser). */
static bool add_ext(X509 *issuer, X509 *subject, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	bool ok;

	X509V3_set_ctx(&ctx, issuer, subject, NULL, NULL, 0);
	if (!(ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)))
		return false;
	ok = X509_add_ext(subject, ext, -1) == 1;
	X509_EXTENSION_free(ext);
	return ok;
}

static GENERAL_NAME *general_name(int type, const void *data, int len)
{
	GENERAL_NAME *gn = GENERAL_NAME_new();
	ASN1_STRING *s = type == GEN_DNS ? ASN1_IA5STRING_new() : ASN1_OCTET_STRING_new();

	if (!gn || !s || ASN1_STRING_set(s, data, len) != 1) {
		GENERAL_NAME_free(gn);
		ASN1_STRING_free(s);
		return NULL;
	}
	GENERAL_NAME_set0_value(gn, type, s);
	return gn;
}

static bool push_subtree(STACK_OF(GENERAL_SUBTREE) * *sk, GENERAL_NAME *gn)
{
	GENERAL_SUBTREE *st;

	if (!gn)
		return false;
	if ((!*sk && !(*sk = sk_GENERAL_SUBTREE_new_null())) || !(st = GENERAL_SUBTREE_new())) {
		GENERAL_NAME_free(gn);
		return false;
	}
	GENERAL_NAME_free(st->base);
	st->base = gn;
	if (!sk_GENERAL_SUBTREE_push(*sk, st)) {
		GENERAL_SUBTREE_free(st);
		return false;
	}
	return true;
}

/* The DNS subtree each name permits ("example.com" is the name and its subdomains, RFC 5280
 * 4.2.1.10; ".example.com" the subdomains only), and every IPv4 and IPv6 address excluded: a
 * DNS-only constraint would leave address names unconstrained. */
static bool add_name_constraints(X509 *x, const struct egress_rule *names, size_t n)
{
	static const unsigned char any_address[32] = {0};
	NAME_CONSTRAINTS *nc = NAME_CONSTRAINTS_new();
	bool ok = nc != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		char dns[256];
		int len = snprintf(dns, sizeof(dns), "%s%s",
				   names[i].kind == RULE_SUBDOMAINS ? "." : "", names[i].host);
		ok = len > 0 && (size_t)len < sizeof(dns) &&
		     push_subtree(&nc->permittedSubtrees, general_name(GEN_DNS, dns, len));
	}
	ok = ok && push_subtree(&nc->excludedSubtrees, general_name(GEN_IPADD, any_address, 8)) &&
	     push_subtree(&nc->excludedSubtrees, general_name(GEN_IPADD, any_address, 32)) &&
	     X509_add1_ext_i2d(x, NID_name_constraints, nc, 1, X509V3_ADD_DEFAULT) == 1;
	NAME_CONSTRAINTS_free(nc);
	return ok;
}

static bool set_validity(X509 *x, uint64_t lifetime_s)
{
	uint64_t after = lifetime_s + TLS_CA_MARGIN_S;

	return X509_gmtime_adj(X509_getm_notBefore(x), -TLS_CA_MARGIN_S) &&
	       X509_time_adj_ex(X509_getm_notAfter(x), (int)(after / 86400), (long)(after % 86400),
				NULL);
}

/* The CA's SubjectPublicKeyInfo from its point: the same DER X509_set_pubkey writes, without
 * the trip through OpenSSL's encoders and back that one makes, whose first use builds the
 * whole encoder table (about 0.3 ms) on the run's start-up path. The key is not cached in the
 * certificate this way: reparsed() does that. */
static bool set_point(X509 *x, EVP_PKEY *key)
{
	unsigned char *point = NULL;
	size_t n = EVP_PKEY_get1_encoded_public_key(key, &point);

	if (n == 0 || n > INT_MAX ||
	    !X509_PUBKEY_set0_param(X509_get_X509_PUBKEY(x), OBJ_nid2obj(NID_X9_62_id_ecPublicKey),
				    V_ASN1_OBJECT, OBJ_nid2obj(NID_X9_62_prime256v1), point,
				    (int)n)) {
		OPENSSL_free(point);
		return false;
	}
	return true;
}

/* x as it would be read from its DER, public key decoded (a verifier needs it); x is freed.
 * Decoding costs ~0.15 ms of OpenSSL's decoders on their first use: done by tls_ca_cert, when
 * asked, not on the run's start-up path (the leaves and the PEM need only the encoded key). */
static X509 *reparsed(X509 *x)
{
	unsigned char *der = NULL;
	const unsigned char *p;
	int n = i2d_X509(x, &der);
	X509 *y = NULL;

	if (n > 0) {
		p = der;
		y = d2i_X509(NULL, &p, n);
	}
	OPENSSL_free(der);
	X509_free(x);
	return y;
}

static bool build_ca_cert(struct tls_ca *ca, uint64_t lifetime_s)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	bool ok;

	ok = x && name && X509_set_version(x, X509_VERSION_3) && set_serial(x) &&
	     set_validity(x, lifetime_s) && set_name(name, "O", "agentbox") &&
	     set_name(name, "CN", "agentbox per-run interception CA") &&
	     X509_set_subject_name(x, name) && X509_set_issuer_name(x, name) &&
	     set_point(x, ca->key) &&
	     add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
	     add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") &&
	     /* on a CA, an EKU limits what its leaves may be used for (OpenSSL, Go, NSS) */
	     add_ext(x, x, NID_ext_key_usage, "serverAuth") &&
	     add_ext(x, x, NID_subject_key_identifier, "hash") &&
	     add_name_constraints(x, ca->names, ca->n) && X509_sign(x, ca->key, EVP_sha256()) > 0;
	X509_NAME_free(name);
	if (!ok) {
		X509_free(x);
		return false;
	}
	ca->cert = x;
	return true;
}

/* A name the CA is made for: a host rule, no address, no port. */
static int check_ca_name(const struct egress_rule *r, struct ab_err *e)
{
	if (r->kind != RULE_HOST && r->kind != RULE_SUBDOMAINS && r->kind != RULE_DOMAIN)
		return ab_fail(e, 0,
			       "TLS CA: an address: TLS interception needs a host name (the "
			       "client's SNI)");
	if (r->port)
		return ab_fail(e, 0, "TLS CA: '%s' has a port: the CA vouches for names", r->host);
	return 0;
}

/* OpenSSL as agentbox uses it, set before its first use (the settings are taken only then):
 * - the host's openssl.cnf (or $OPENSSL_CONF) has no say in the supervisor: it could load an
 *   engine into it or change what a certificate is;
 * - no legacy cipher table: agentbox and libssl fetch ciphers from the default provider, and
 *   indexing the table on the first fetch costs ~0.2 ms of the run's start-up (the digest
 *   table stays: libssl looks certificates' signature digests up in it);
 * - random bytes from Hash_DRBG over SHA-256 (NIST SP 800-90A, as the default CTR_DRBG is):
 *   SHA-256 is fetched for the signatures anyway, where CTR_DRBG's AES would build the cipher
 *   tables after all. Possible only before the first random bytes are drawn.
 * OpenSSL's cleanup at exit stays (~0.1 ms of the run's end): the DRBGs' state lives in the
 * secure heap, and only that cleanup frees and wipes it. */
int tls_ca_openssl_init(struct ab_err *e)
{
	const uint64_t opts = OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS;

	if (!OPENSSL_init_crypto(opts, NULL))
		return ab_fail(e, 0, "cannot initialise OpenSSL");
	if (!RAND_set_DRBG_type(NULL, "HASH-DRBG", NULL, NULL, "SHA256"))
		ERR_clear_error(); /* drawn from already (a second run in one process): as it is */
	return 0;
}

int tls_ca_new(const struct egress_rule *names, size_t n, uint64_t lifetime_s, struct tls_ca **out,
	       struct ab_err *e)
{
	struct tls_ca *ca;

	*out = NULL;
	if (n == 0)
		return ab_fail(e, 0,
			       "TLS CA: no names: a CA without name constraints could vouch "
			       "for any host");
	if (lifetime_s == 0 || lifetime_s > LIFETIME_MAX_S)
		return ab_fail(e, 0, "TLS CA: a lifetime of %llu s is not 1 s to 10 years",
			       (unsigned long long)lifetime_s);
	if (!(ca = calloc(1, sizeof(*ca))) || !(ca->names = calloc(n, sizeof(*ca->names)))) {
		free(ca);
		return ab_fail(e, ENOMEM, "TLS CA");
	}
	ca->n = n;
	for (size_t i = 0; i < n; i++) {
		if (check_ca_name(&names[i], e) < 0) {
			tls_ca_free(ca);
			return -1;
		}
		ca->names[i] = names[i];
	}
	if (tls_ca_openssl_init(e) < 0) {
		tls_ca_free(ca);
		return -1;
	}
	secure_heap_init();
	if (!(ca->key = p256_key()) || !build_ca_cert(ca, lifetime_s)) {
		tls_ca_free(ca);
		return ossl_fail(e, "cannot make the CA certificate");
	}
	*out = ca;
	return 0;
}

static bool ca_permits(const struct tls_ca *ca, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < ca->n; i++) {
		const struct egress_rule *r = &ca->names[i];
		size_t hn = strlen(r->host);
		bool sub = n > hn && name[n - hn - 1] == '.' && !strcmp(name + n - hn, r->host);

		if ((r->kind != RULE_SUBDOMAINS && !strcmp(name, r->host)) ||
		    (r->kind != RULE_HOST && sub))
			return true;
	}
	return false;
}

static bool add_san(X509 *x, const char *name)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	GENERAL_NAME *gn = general_name(GEN_DNS, name, (int)strlen(name));
	bool ok = gens && gn && sk_GENERAL_NAME_push(gens, gn);

	if (!ok)
		GENERAL_NAME_free(gn);
	ok = ok && X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1;
	GENERAL_NAMES_free(gens);
	return ok;
}

static bool build_leaf(const struct tls_ca *ca, struct tls_leaf *l)
{
	X509 *x = l->cert = X509_new();
	X509_NAME *subject = X509_NAME_new();
	bool ok;

	/* CN is limited to 64 characters; the SAN is what clients check anyway. */
	ok = x && subject && (l->key = p256_key()) && X509_set_version(x, X509_VERSION_3) &&
	     set_serial(x) && X509_set1_notBefore(x, X509_get0_notBefore(ca->cert)) &&
	     X509_set1_notAfter(x, X509_get0_notAfter(ca->cert)) &&
	     set_name(subject, strlen(l->name) <= 64 ? "CN" : "O",
		      strlen(l->name) <= 64 ? l->name : "agentbox") &&
	     X509_set_subject_name(x, subject) &&
	     X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) &&
	     X509_set_pubkey(x, l->key) &&
	     add_ext(ca->cert, x, NID_basic_constraints, "critical,CA:FALSE") &&
	     add_ext(ca->cert, x, NID_key_usage, "critical,digitalSignature") &&
	     add_ext(ca->cert, x, NID_ext_key_usage, "serverAuth") &&
	     add_ext(ca->cert, x, NID_subject_key_identifier, "hash") &&
	     add_ext(ca->cert, x, NID_authority_key_identifier, "keyid:always") &&
	     add_san(x, l->name) && X509_sign(x, ca->key, EVP_sha256()) > 0;
	X509_NAME_free(subject);
	return ok;
}

static int leaf_name(const char *name, char canon[256], struct ab_err *e)
{
	struct egress_rule r;
	const char *why;

	if (!egress_host_name(name, canon, &why))
		return ab_fail(e, 0, "TLS CA: no leaf for '%s': %s", name, why);
	if (egress_rule_parse(canon, &r, e) < 0 || r.kind != RULE_HOST || r.port)
		return ab_fail(e, 0, "TLS CA: no leaf for '%s': not a host name", name);
	return 0;
}

static void leaf_free(struct tls_leaf *l)
{
	X509_free(l->cert);
	EVP_PKEY_free(l->key); /* OpenSSL clears the key's memory as it frees it */
	memset(l, 0, sizeof(*l));
}

/* Where a new leaf goes: a new slot while the cache has room, else the least recently used
 * one, freed (a connection that uses it holds its own references). NULL when out of memory. */
static struct tls_leaf *leaf_slot(struct tls_ca *ca)
{
	struct tls_leaf *nv, *lru;

	if (ca->nleaves < TLS_CA_LEAVES_MAX) {
		if (!(nv = realloc(ca->leaves, (ca->nleaves + 1) * sizeof(*nv))))
			return NULL;
		ca->leaves = nv;
		return &ca->leaves[ca->nleaves++];
	}
	lru = &ca->leaves[0];
	for (size_t i = 1; i < ca->nleaves; i++)
		if (ca->leaves[i].used < lru->used)
			lru = &ca->leaves[i];
	leaf_free(lru);
	return lru;
}

int tls_ca_leaf(struct tls_ca *ca, const char *name, X509 **cert, EVP_PKEY **key, struct ab_err *e)
{
	char canon[256];
	struct tls_leaf made = {0}, *l;

	*cert = NULL;
	*key = NULL;
	if (leaf_name(name, canon, e) < 0)
		return -1;
	for (size_t i = 0; i < ca->nleaves; i++)
		if (!strcmp(ca->leaves[i].name, canon)) {
			l = &ca->leaves[i];
			goto found;
		}
	if (!ca_permits(ca, canon))
		return ab_fail(e, 0, "TLS CA: no leaf for '%s': not a name this run intercepts",
			       canon);
	memcpy(made.name, canon, sizeof(made.name));
	if (!build_leaf(ca, &made)) {
		leaf_free(&made);
		return ossl_fail(e, "cannot make a leaf certificate");
	}
	if (!(l = leaf_slot(ca))) {
		leaf_free(&made);
		return ab_fail(e, ENOMEM, "TLS CA");
	}
	*l = made;
found:
	l->used = ++ca->clock;
	*cert = l->cert;
	*key = l->key;
	return 0;
}

X509 *tls_ca_cert(struct tls_ca *ca)
{
	if (!ca->decoded && ca->cert) {
		ca->cert = reparsed(ca->cert);
		ca->decoded = ca->cert != NULL;
	}
	return ca->cert;
}

size_t tls_ca_leaf_count(const struct tls_ca *ca)
{
	return ca->nleaves;
}

int tls_ca_cert_pem(const struct tls_ca *ca, char **pem, size_t *len, struct ab_err *e)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data;
	long n;

	*pem = NULL;
	*len = 0;
	if (!b || PEM_write_bio_X509(b, ca->cert) != 1 || (n = BIO_get_mem_data(b, &data)) <= 0) {
		BIO_free(b);
		return ossl_fail(e, "cannot write the CA certificate");
	}
	if (!(*pem = malloc((size_t)n + 1))) {
		BIO_free(b);
		return ab_fail(e, ENOMEM, "TLS CA");
	}
	memcpy(*pem, data, (size_t)n);
	(*pem)[n] = '\0';
	*len = (size_t)n;
	BIO_free(b);
	return 0;
}

void tls_ca_free(struct tls_ca *ca)
{
	if (!ca)
		return;
	for (size_t i = 0; i < ca->nleaves; i++)
		leaf_free(&ca->leaves[i]);
	free(ca->leaves);
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	free(ca->names);
	free(ca->upstream);
	free(ca);
}

void tls_ca_hash_name(const struct tls_ca *ca, char name[12])
{
	snprintf(name, 12, "%08lx.0", X509_subject_name_hash(ca->cert) & 0xffffffffUL);
}

int tls_ca_set_upstream(struct tls_ca *ca, const char *pem, size_t len)
{
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return -1;
	memcpy(copy, pem, len);
	free(ca->upstream);
	ca->upstream = copy;
	ca->upstream_len = len;
	return 0;
}

int tls_ca_load_upstream(const struct tls_ca *ca, X509_STORE *store)
{
	BIO *b;
	STACK_OF(X509_INFO) * infos;
	int added = 0;

	if (!ca->upstream)
		return 0;
	if (!(b = BIO_new_mem_buf(ca->upstream, (int)ca->upstream_len)))
		return -1;
	infos = PEM_X509_INFO_read_bio(b, NULL, NULL, NULL);
	BIO_free(b);
	for (int i = 0; infos && i < sk_X509_INFO_num(infos); i++) {
		X509_INFO *info = sk_X509_INFO_value(infos, i);
		if (info->x509 && X509_STORE_add_cert(store, info->x509))
			added++;
		if (info->crl)
			(void)X509_STORE_add_crl(store, info->crl);
	}
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	return added > 0 ? added : -1;
}

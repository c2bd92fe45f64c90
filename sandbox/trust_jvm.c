/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The JVM's trust store. Java takes its anchors from one key store file
 * (javax.net.ssl.trustStore), never from SSL_CERT_FILE and the variables other clients read, so
 * a run that intercepts gives it a store holding what the run's bundle holds.
 *
 * PKCS12, which every JVM since 8 reads. Java lists a certificate bag of a PKCS12 store, as a
 * trusted entry, only when the bag carries Oracle's "trusted key usage" attribute (without it
 * the store reads as empty); OpenSSL 3.0 has no name for that attribute, so it goes by its OID.
 * Each certificate goes in as the bytes its PEM block held, not parsed as a certificate:
 * OpenSSL 3.0's full parse decodes the public key, ~0.2 ms a certificate, 30 ms for a system
 * bundle. Its outer shape (a SEQUENCE of a definite length) is checked; the proxy's own stores
 * and Java's parse of the store see the rest. The store of a system bundle of 150 certificates
 * costs an intercepting start about 0.6 ms of CPU in all (the reading, the decoding, the sealed
 * copy and pid 1's); made with OpenSSL's PKCS12 objects it cost 2.5 ms (see below). */
#include "trust_jvm.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>

#include "fsops.h"
#include "trust_anchors.h"

/* Oracle's trusted key usage (Java's PKCS12 store), whose value is the purposes trusted */
#define JDK_TRUSTED_KEY_USAGE "2.16.840.1.113894.746875.1.1"

static const char *const jvm_option_vars[] = {"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS",
					      "_JAVA_OPTIONS"};

/* Whether a JVM's option list sets the property: an option of its own, after the start, a
 * space or a quote (the launcher splits on white space and keeps quoted spaces). */
static bool sets_property(const char *options, const char *option)
{
	size_t n = strlen(option);

	for (const char *s = strstr(options, option); s; s = strstr(s + 1, option))
		if ((s == options || strchr(" \t\n\r'\"", s[-1])) && s[n] == '=')
			return true;
	return false;
}

const char *trust_jvm_user_store(const struct env_result *env)
{
	for (size_t i = 0; i < sizeof(jvm_option_vars) / sizeof(jvm_option_vars[0]); i++) {
		const char *v = env_get(env, jvm_option_vars[i]);
		if (v && sets_property(v, "-Djavax.net.ssl.trustStore"))
			return jvm_option_vars[i];
	}
	return NULL;
}

bool trust_pem_is_certificate(const char *name)
{
	return !strcmp(name, PEM_STRING_X509) || !strcmp(name, PEM_STRING_X509_TRUSTED) ||
	       !strcmp(name, PEM_STRING_X509_OLD);
}

/* Where a block's text and bytes are kept while it is read (grown as needed). */
struct pem_scratch {
	char *text; /* its base64 without line breaks */
	unsigned char *der;
	size_t text_cap, der_cap;
};

static bool grow(void **buf, size_t *cap, size_t need)
{
	void *more;

	if (need <= *cap)
		return true;
	if (!(more = realloc(*buf, need)))
		return false;
	*buf = more;
	*cap = need;
	return true;
}

/* Block number block's base64 (body[0, n)) into x->der: its length, or -1 when it does not
 * decode (a header line, a stray character, padding before its end). The line breaks go
 * first and the rest is decoded in one EVP_DecodeBlock: EVP_DecodeUpdate takes the text a
 * character at a time, four times the cost of the decoding itself (perf, an intercepting
 * start). */
static long decode(struct pem_scratch *x, const char *body, size_t n, int block, const char *label,
		   struct ab_err *e)
{
	size_t len = 0, pad = 0;
	int out;

	if (n > 64ull * 1024 * 1024) /* no certificate is this big; bounds the int OpenSSL takes */
		return ab_fail(e, 0, "not readable as PEM (block %d, %s, is too long)", block,
			       label);
	if (!grow((void **)&x->text, &x->text_cap, n + 1) ||
	    !grow((void **)&x->der, &x->der_cap, n / 4 * 3 + 3))
		return ab_fail(e, ENOMEM, "cannot read it");
	for (const char *p = body, *end = body + n; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		size_t k = (size_t)(stop - p);
		while (k && (p[k - 1] == '\r' || p[k - 1] == ' ' || p[k - 1] == '\t'))
			k--;
		while (k && (*p == ' ' || *p == '\t'))
			p++, k--;
		memcpy(x->text + len, p, k);
		len += k;
		p = stop + (nl ? 1 : 0);
	}
	while (pad < 2 && pad < len && x->text[len - 1 - pad] == '=')
		pad++;
	if (len % 4 || memchr(x->text, '=', len - pad) ||
	    (out = EVP_DecodeBlock(x->der, (const unsigned char *)x->text, (int)len)) < 0)
		return ab_fail(e, 0, "not readable as PEM (block %d, %s, is not base64)", block,
			       label);
	return (long)out - (long)pad; /* EVP_DecodeBlock counts the padding as bytes */
}

/* The blocks are found by their armour lines, as trust_anchors.c finds them, and only a
 * certificate's base64 is decoded (by OpenSSL): PEM_read_bio reads a bundle line by line, which
 * costs half as much again. */
int trust_pem_blocks(const char *pem, size_t len,
		     int (*fn)(void *ctx, const char *name, const unsigned char *der, long n,
			       int block, struct ab_err *e),
		     void *ctx, struct ab_err *e)
{
	static const char begin[] = "-----BEGIN ";
	const char *p = pem, *end = pem + len;
	struct pem_scratch x = {0};
	int rc = 0, block = 0;

	while (rc == 0 && (p = memmem(p, (size_t)(end - p), begin, sizeof(begin) - 1))) {
		const char *name = p + sizeof(begin) - 1, *body, *stop = NULL;
		const char *dashes = memmem(name, (size_t)(end - name), "-----", 5);
		char label[64], end_line[96];
		long n;

		block++;
		if (dashes && (size_t)(dashes - name) < sizeof(label) &&
		    !memchr(name, '\n', (size_t)(dashes - name))) {
			snprintf(label, sizeof(label), "%.*s", (int)(dashes - name), name);
			snprintf(end_line, sizeof(end_line), "-----END %s-----", label);
			body = dashes + 5;
			stop = memmem(body, (size_t)(end - body), end_line, strlen(end_line));
		}
		if (!stop) {
			rc = ab_fail(e, 0, "not readable as PEM (block %d has no END line)", block);
			break;
		}
		p = stop + strlen(end_line);
		if (!trust_pem_is_certificate(label))
			continue;
		if ((n = decode(&x, body, (size_t)(stop - body), block, label, e)) < 0)
			rc = -1;
		else
			rc = fn(ctx, label, x.der, n, block, e);
	}
	ERR_clear_error();
	free(x.text);
	free(x.der);
	return rc;
}

/* ---------- the store's bytes ----------
 *
 * The store is written in one pass into one buffer: OpenSSL's PKCS12 objects would copy each
 * certificate five times over (parsed, packed into its bag, the bags into their SafeContents,
 * that into the authenticated safe, the whole into the file), and on a guest where a fresh page
 * costs a fault the copies were most of the store's cost at every intercepting start. The DER
 * headers are OpenSSL's (ASN1_put_object, ASN1_object_size) and so are the OIDs' encodings;
 * this file only places them. The shape, from the outside in:
 *
 *   PFX { version 3, ContentInfo { data, [0] OCTET STRING { AuthenticatedSafe {
 *     ContentInfo { data, [0] OCTET STRING { SafeContents { SafeBag... } } } } } } }
 *   SafeBag { certBag, [0] CertBag { x509Certificate, [0] OCTET STRING { certificate } },
 *             SET { Attribute { trusted key usage, SET { anyExtendedKeyUsage } } } }
 *
 * The bags follow HEAD_ROOM bytes kept free, where the outer headers are written last, in
 * front of them, once their length is known. */

/* Nine headers of at most 6 bytes, two OIDs of 11 and the version's 3, with room to spare. */
#define HEAD_ROOM 128
#define OID_MAX 32

struct trust_jvm {
	unsigned char *buf; /* HEAD_ROOM bytes, then the bags */
	size_t len, cap;    /* len counts from buf, the room included */
	/* encoded once: the bag's OIDs, and its attributes (the same for every certificate) */
	unsigned char cert_bag[OID_MAX], x509[OID_MAX], data[OID_MAX], attrs[2 * OID_MAX + 16];
	int cert_bag_len, x509_len, data_len, attrs_len;
};

/* obj's DER into out[OID_MAX]: its length, or -1. */
static int oid_der(const ASN1_OBJECT *obj, unsigned char *out)
{
	unsigned char *p = out;
	int n = obj ? i2d_ASN1_OBJECT(obj, NULL) : 0;

	return n <= 0 || n > OID_MAX ? -1 : i2d_ASN1_OBJECT(obj, &p);
}

/* SET { Attribute { trusted key usage, SET { anyExtendedKeyUsage } } } into s->attrs. */
static int encode_attrs(struct trust_jvm *s)
{
	unsigned char usage[OID_MAX], any[OID_MAX], *p = s->attrs;
	ASN1_OBJECT *obj = OBJ_txt2obj(JDK_TRUSTED_KEY_USAGE, 1); /* the OID, not registered */
	int usage_len = oid_der(obj, usage),
	    any_len = oid_der(OBJ_nid2obj(NID_anyExtendedKeyUsage), any);
	int values, attr;

	ASN1_OBJECT_free(obj);
	if (usage_len < 0 || any_len < 0)
		return -1;
	values = ASN1_object_size(1, any_len, V_ASN1_SET);
	attr = ASN1_object_size(1, usage_len + values, V_ASN1_SEQUENCE);
	if (ASN1_object_size(1, attr, V_ASN1_SET) > (int)sizeof(s->attrs))
		return -1;
	ASN1_put_object(&p, 1, attr, V_ASN1_SET, V_ASN1_UNIVERSAL);
	ASN1_put_object(&p, 1, usage_len + values, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL);
	memcpy(p, usage, (size_t)usage_len), p += usage_len;
	ASN1_put_object(&p, 1, any_len, V_ASN1_SET, V_ASN1_UNIVERSAL);
	memcpy(p, any, (size_t)any_len), p += any_len;
	s->attrs_len = (int)(p - s->attrs);
	return 0;
}

/* One element of DER at *p (at most max bytes) in its one-byte identifier form (constructed,
 * universal, tag), of a definite length that fits: its content's length, *p moved past its
 * header; or -1. */
static long element(const unsigned char **p, long max, bool constructed, int tag)
{
	long len;
	int got_tag, xclass;

	if (max < 2 || **p != ((constructed ? V_ASN1_CONSTRUCTED : 0) | tag))
		return -1;
	/* 0x80 is an error (longer than max), 0x01 an indefinite length */
	if (ASN1_get_object(p, &len, &got_tag, &xclass, max) !=
	    (constructed ? V_ASN1_CONSTRUCTED : 0))
		return -1;
	return len;
}

long trust_certificate_length(const unsigned char *der, long n)
{
	static const struct {
		bool constructed;
		int tag;
	} fields[] = {{true, V_ASN1_SEQUENCE}, {true, V_ASN1_SEQUENCE}, {false, V_ASN1_BIT_STRING}};
	const unsigned char *p = der, *end;
	long len = element(&p, n, true, V_ASN1_SEQUENCE);

	if (len < 0)
		return -1;
	end = p + len;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if ((len = element(&p, (long)(end - p), fields[i].constructed, fields[i].tag)) < 0)
			return -1;
		p += len;
	}
	return p == end ? (long)(end - der) : -1;
}

/* Room for extra more bytes; grown to twice what is needed, so that it is seldom copied (pages
 * of a buffer this size left unused are never touched: it is a mapping of its own). */
static bool reserve(struct trust_jvm *s, size_t extra)
{
	size_t need = s->len + extra;

	return need <= s->cap || grow((void **)&s->buf, &s->cap, 2 * need);
}

static int add_block(void *ctx, const char *name, const unsigned char *der, long n, int block,
		     struct ab_err *e)
{
	struct trust_jvm *s = ctx;
	long cert = trust_certificate_length(der, n);
	int octets, inner, cert_bag, outer, bag;
	unsigned char *p;

	/* Java refuses the whole store for one entry it cannot read: no such entry goes in */
	if (cert < 0)
		return ab_fail(e, 0, "block %d (%s) is not a certificate", block, name);
	/* (a text TRUST_JVM_MAX bounds decodes to less: the ints below cannot overflow) */
	octets = ASN1_object_size(0, (int)cert, V_ASN1_OCTET_STRING);
	inner = ASN1_object_size(1, octets, 0);
	cert_bag = ASN1_object_size(1, s->x509_len + inner, V_ASN1_SEQUENCE);
	outer = ASN1_object_size(1, cert_bag, 0);
	bag = ASN1_object_size(1, s->cert_bag_len + outer + s->attrs_len, V_ASN1_SEQUENCE);
	if (s->len + (size_t)bag > TRUST_JVM_MAX)
		return ab_fail(e, 0, "the JVM's trust store would take over %llu MiB",
			       TRUST_JVM_MAX >> 20);
	if (!reserve(s, (size_t)bag))
		return ab_fail(e, ENOMEM, "the JVM's trust store");
	p = s->buf + s->len;
	ASN1_put_object(&p, 1, s->cert_bag_len + outer + s->attrs_len, V_ASN1_SEQUENCE,
			V_ASN1_UNIVERSAL);
	memcpy(p, s->cert_bag, (size_t)s->cert_bag_len), p += s->cert_bag_len;
	ASN1_put_object(&p, 1, cert_bag, 0, V_ASN1_CONTEXT_SPECIFIC);
	ASN1_put_object(&p, 1, s->x509_len + inner, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL);
	memcpy(p, s->x509, (size_t)s->x509_len), p += s->x509_len;
	ASN1_put_object(&p, 1, octets, 0, V_ASN1_CONTEXT_SPECIFIC);
	ASN1_put_object(&p, 0, (int)cert, V_ASN1_OCTET_STRING, V_ASN1_UNIVERSAL);
	memcpy(p, der, (size_t)cert), p += cert;
	memcpy(p, s->attrs, (size_t)s->attrs_len), p += s->attrs_len;
	s->len = (size_t)(p - s->buf);
	return 0;
}

struct trust_jvm *trust_jvm_new(struct ab_err *e)
{
	struct trust_jvm *s = calloc(1, sizeof(*s));

	if (s && grow((void **)&s->buf, &s->cap, HEAD_ROOM + 4096) &&
	    (s->cert_bag_len = oid_der(OBJ_nid2obj(NID_certBag), s->cert_bag)) > 0 &&
	    (s->x509_len = oid_der(OBJ_nid2obj(NID_x509Certificate), s->x509)) > 0 &&
	    (s->data_len = oid_der(OBJ_nid2obj(NID_pkcs7_data), s->data)) > 0 &&
	    encode_attrs(s) == 0) {
		s->len = HEAD_ROOM;
		return s;
	}
	trust_jvm_free(s);
	ERR_clear_error();
	ab_fail(e, ENOMEM, "the JVM's trust store");
	return NULL;
}

int trust_jvm_add(struct trust_jvm *s, const char *pem, size_t len, const char *what,
		  struct ab_err *e)
{
	/* Room for the text's bags at once, so that the buffer is not copied as it grows: a
	 * bag's ~70 bytes around a certificate of n bytes are fewer than the n / 3 + 54 its block
	 * adds to the text, for any real certificate (add_block grows it for an odd tiny block). */
	if (len > TRUST_JVM_MAX)
		return ab_fail(e, 0, "%s: over %llu MiB, too long for the JVM's trust store", what,
			       TRUST_JVM_MAX >> 20);
	if (!reserve(s, len + 1024))
		return ab_fail(e, ENOMEM, "the JVM's trust store");
	if (trust_pem_blocks(pem, len, add_block, s, e) < 0)
		return ab_context(e, "%s", what);
	return 0;
}

/* A header (or, with tag < 0, the bytes of bytes) written just before s->buf[*at], which
 * moves back over it; *content counts what follows it inside the element being built. False
 * when HEAD_ROOM has no room left for it (the layers below take 79 bytes at most). */
static bool prepend(struct trust_jvm *s, size_t *at, int *content, int constructed, int tag,
		    int xclass, const unsigned char *bytes, int n)
{
	int size = tag < 0 ? n : ASN1_object_size(constructed, *content, tag) - *content;
	unsigned char *p;

	if (size < 0 || (size_t)size > *at)
		return false;
	p = s->buf + *at - size;
	if (tag < 0)
		memcpy(p, bytes, (size_t)n);
	else
		ASN1_put_object(&p, constructed, *content, tag, xclass);
	*at -= (size_t)size;
	*content += size;
	return true;
}

/* One SafeContents, neither encrypted nor given integrity data (see TRUST_JVM_OPTIONS). */
int trust_jvm_encode(struct trust_jvm *s, const unsigned char **der, size_t *len, struct ab_err *e)
{
	static const unsigned char version[] = {V_ASN1_INTEGER, 1, 3};
	size_t at = HEAD_ROOM;
	int n = (int)(s->len - HEAD_ROOM); /* the bags; TRUST_JVM_MAX bounds it */
	/* SafeContents, then twice a ContentInfo of data around it, the AuthenticatedSafe (a
	 * SEQUENCE of that one ContentInfo) between them; then the PFX's version and SEQUENCE */
	bool ok = prepend(s, &at, &n, 1, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL, NULL, 0);

	for (int layer = 0; ok && layer < 2; layer++)
		ok = prepend(s, &at, &n, 0, V_ASN1_OCTET_STRING, V_ASN1_UNIVERSAL, NULL, 0) &&
		     prepend(s, &at, &n, 1, 0, V_ASN1_CONTEXT_SPECIFIC, NULL, 0) &&
		     prepend(s, &at, &n, 0, -1, 0, s->data, s->data_len) &&
		     prepend(s, &at, &n, 1, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL, NULL, 0) &&
		     (layer == 1 ||
		      prepend(s, &at, &n, 1, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL, NULL, 0));
	ok = ok && prepend(s, &at, &n, 0, -1, 0, version, (int)sizeof(version)) &&
	     prepend(s, &at, &n, 1, V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL, NULL, 0);
	if (!ok)
		return ab_fail(e, 0,
			       "cannot encode the JVM's trust store (no room for its headers)");
	*der = s->buf + at;
	*len = (size_t)n;
	return 0;
}

void trust_jvm_free(struct trust_jvm *s)
{
	if (!s)
		return;
	free(s->buf);
	free(s);
}

/* ---------- the supervisor's thread ---------- */

/* The store is made in a thread of its own, started beside the CA's (trust.c) right after the
 * clone, which pid 1 would otherwise wait for after the CA (it needs the store when it installs
 * the trust files). The certificates the store holds before the CA's are read and packed while
 * the CA is made. */
static struct {
	pthread_t thread;
	bool started;
	struct trust_jvm_sources src;
	bool openssl; /* initialised by this thread: its own state is freed at its end */
	int rc;
	struct ab_err err;
	struct trust_jvm *store; /* made, and encoded into der[0, len) */
	const unsigned char *der;
	size_t len;
} maker;

/* The host's system bundle as text: mapped where the file can be, else read into a buffer. */
struct bundle_text {
	const char *pem; /* NULL when the host has none, or it is empty */
	size_t len;
	bool mapped;
};

/* Mapped, not read: a copy of its ~220 KB would cost 54 fresh pages, each a fault, on the CPUs
 * the CA's thread needs (a Firecracker guest: 0.5 ms); the mapping's pages are the page
 * cache's. Its writers (update-ca-certificates, p11-kit) replace it by a rename, which leaves
 * the mapping whole; only root could shorten it in place meanwhile, and the supervisor would
 * then stop (SIGBUS). */
static int system_bundle(struct bundle_text *b, struct ab_err *e)
{
	off_t size = 0;
	int fd = trust_open_system_bundle(&size, e);
	void *map;
	char *text;

	*b = (struct bundle_text){0};
	if (fd < 0 && e->errnum == ENOENT) {
		*e = (struct ab_err){0}; /* trust.c warns of it */
		return 0;
	}
	if (fd < 0)
		return -1;
	if (size == 0) {
		close(fd);
		return 0;
	}
	if ((map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED) {
		*b = (struct bundle_text){map, (size_t)size, true};
	} else if ((text = malloc((size_t)size))) {
		/* a file system that cannot map it: read (a shorter file: what was read) */
		b->len = fs_read_all(fd, text, (size_t)size);
		b->pem = text;
	}
	close(fd);
	return b->pem ? 0 : ab_fail(e, ENOMEM, "the system CA bundle");
}

static void bundle_text_free(struct bundle_text *b)
{
	if (b->mapped)
		munmap((void *)b->pem, b->len);
	else
		free((void *)b->pem);
}

static int make(struct ab_err *e)
{
	const uint64_t opts = OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS;
	struct trust_extra extra = {0};
	struct trust_jvm *s = NULL;
	struct bundle_text system;
	const char *ca;
	size_t ca_len = 0;
	int rc = -1;

	if (system_bundle(&system, e) < 0 ||
	    trust_extra_gather(&extra, maker.src.anchor, maker.src.anchor_len, maker.src.files, e) <
		0)
		goto out;
	/* after the reading, which the CA's thread's first use of OpenSSL may take meanwhile */
	if (!(maker.openssl = OPENSSL_init_crypto(opts, NULL))) {
		ab_fail(e, 0, "cannot initialise OpenSSL");
		goto out;
	}
	if (!(s = trust_jvm_new(e)) ||
	    (system.pem &&
	     trust_jvm_add(s, system.pem, system.len, "the system CA bundle", e) < 0) ||
	    (extra.len &&
	     trust_jvm_add(s, extra.pem, extra.len,
			   "the CA files of [network] ca and the trust variables", e) < 0))
		goto out;
	if (!(ca = maker.src.ca(&ca_len))) {
		ab_fail(e, 0, "no CA");
		goto out;
	}
	if (trust_jvm_add(s, ca, ca_len, "the run's CA", e) == 0 &&
	    trust_jvm_encode(s, &maker.der, &maker.len, e) == 0) {
		maker.store = s;
		s = NULL;
		rc = 0;
	}
out:
	trust_jvm_free(s);
	trust_extra_free(&extra);
	bundle_text_free(&system);
	return rc < 0 ? ab_context(e, "the JVM's trust store") : 0;
}

static void *make_thread(void *arg)
{
	(void)arg;
	maker.rc = make(&maker.err);
	if (maker.openssl)
		OPENSSL_thread_stop(); /* the thread's error queue and the like */
	return NULL;
}

void trust_jvm_start(const struct trust_jvm_sources *src)
{
	maker.src = *src;
	maker.rc = -1;
	maker.openssl = false;
	if (pthread_create(&maker.thread, NULL, make_thread, NULL) != 0)
		make_thread(NULL); /* no thread to be had: the same work, in line */
	else
		maker.started = true;
}

static void join(void)
{
	if (maker.started)
		(void)pthread_join(maker.thread, NULL); /* fails only for a thread not joinable */
	maker.started = false;
}

int trust_jvm_wait(const unsigned char **der, size_t *len, struct ab_err *e)
{
	join();
	if (maker.rc < 0) {
		*e = maker.err;
		return -1;
	}
	*der = maker.der;
	*len = maker.len;
	return 0;
}

void trust_jvm_end(void)
{
	join();
	trust_jvm_free(maker.store);
	maker.store = NULL;
	maker.der = NULL;
	maker.len = 0;
}

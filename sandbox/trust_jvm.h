/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The JVM's part of a run's trust (trust_jvm.c): Java reads none of the variables other clients
 * take a CA bundle from, only a key store named in its options. Private to sandbox/trust*.c. */
#ifndef AGENTBOX_TRUST_JVM_H
#define AGENTBOX_TRUST_JVM_H

#include <stdbool.h>
#include <stddef.h>

#include "env.h"
#include "error.h"
#include "run_dir.h"
#include "strv.h"

/* What trust_env adds to JAVA_TOOL_OPTIONS (after the user's options: the last setting of a
 * property wins). The store has no password: it holds public certificates only, and Java
 * loads a PKCS12 file without integrity data when no password is given. */
#define TRUST_JVM_OPTIONS                                                                          \
	"-Djavax.net.ssl.trustStore=" TRUST_JVM_STORE " -Djavax.net.ssl.trustStoreType=PKCS12"

/* The most a store may take: every certificate of the largest system bundle, the CA and the
 * added ones, with a trusted entry's few bytes each. */
#define TRUST_JVM_MAX (24ull * 1024 * 1024)

/* The variable of the command's environment whose Java options name a trust store of the
 * user's own (javax.net.ssl.trustStore): JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS or _JAVA_OPTIONS,
 * or NULL when none does. */
const char *trust_jvm_user_store(const struct env_result *env);

/* ---------- the store ---------- */

/* A store being made: each certificate of the PEM texts added a trusted certificate entry, in
 * order. In the supervisor, after OpenSSL's initialisation. */
struct trust_jvm;
struct trust_jvm *trust_jvm_new(struct ab_err *e);
/* The certificate blocks of pem[0, len) (other blocks skipped); errors name the text (what)
 * and the block. */
int trust_jvm_add(struct trust_jvm *s, const char *pem, size_t len, const char *what,
		  struct ab_err *e);
/* The store as a PKCS12 file: *der[0, *len), valid until trust_jvm_free; no certificate may be
 * added after. */
int trust_jvm_encode(struct trust_jvm *s, const unsigned char **der, size_t *len, struct ab_err *e);
void trust_jvm_free(struct trust_jvm *s);

/* ---------- the supervisor's thread ---------- */

/* What a run's store holds, as its bundle does: the host's system bundle (read by the thread,
 * with the caller's rights), [network] ca's certificates (anchor, as read before the clone;
 * NULL without) and the user's CA files (files) as trust_extra_gather takes them, and the run's
 * CA, which ca() gives once it is made (waiting for it; NULL when it could not be made). */
struct trust_jvm_sources {
	const char *anchor;
	size_t anchor_len;
	const struct strv *files;
	const char *(*ca)(size_t *len);
};

/* Right after the clone: starts making the store in a thread of the supervisor (in line when
 * no thread can be had); src's pointers must stay valid until trust_jvm_end. */
void trust_jvm_start(const struct trust_jvm_sources *src);
/* Waits for the store: its bytes (*der, *len, valid until trust_jvm_end), or -1 and why. */
int trust_jvm_wait(const unsigned char **der, size_t *len, struct ab_err *e);
/* Waits for the thread if it runs, and frees the store. */
void trust_jvm_end(void);

/* Calls fn for each certificate block of pem[0, len) (its type, its bytes, its number among
 * all the blocks from 1) until fn fails; other blocks are skipped. A block without its END
 * line, or a certificate's that is not base64, is an error ("not readable as PEM (...)"). */
int trust_pem_blocks(const char *pem, size_t len,
		     int (*fn)(void *ctx, const char *name, const unsigned char *der, long n,
			       int block, struct ab_err *e),
		     void *ctx, struct ab_err *e);
/* The length of the certificate der[0, n) begins with, or -1 when it does not begin with one:
 * a certificate's outer shape as X.509 gives it, in DER (one-byte identifiers, definite
 * lengths), SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm SEQUENCE, signature BIT
 * STRING }; what follows it is not read, as OpenSSL does not read it (a TRUSTED CERTIFICATE has
 * its trust settings there). Not OpenSSL's whole parse, which decodes the public key (~0.2 ms
 * a certificate) and allocates: the proxy's upstream store parses [network] ca in full at the
 * first intercepted connection, and Java the store it is given. */
long trust_certificate_length(const unsigned char *der, long n);
/* Whether a PEM block of this type is a certificate (TRUSTED CERTIFICATE and the old X509
 * CERTIFICATE too): the blocks OpenSSL's stores load. */
bool trust_pem_is_certificate(const char *name);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The per-run certificate authority for TLS interception (tls_ca.c), on OpenSSL 3: an ECDSA
 * P-256 key made in memory, a self-signed CA certificate whose X.509 name constraints permit only
 * the intercepted names, and leaf certificates minted per name and cached (a bounded cache). The
 * private keys live only in this process's memory: no function writes them out in any form. Not
 * thread-safe: one event loop owns a CA, the proxy's (egress/intercept.c mints a leaf for each
 * intercepted host). */
#ifndef AGENTBOX_TLS_CA_H
#define AGENTBOX_TLS_CA_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "egress_rule.h"
#include "error.h"

struct tls_ca;

/* Added to the run's lifetime on both ends of the validity: clocks inside and outside drift,
 * and a run may outlast its timeout while it shuts down. */
#define TLS_CA_MARGIN_S 300

/* Starts OpenSSL the way agentbox runs it (no openssl.cnf, no legacy cipher table, Hash_DRBG);
 * before any other use of it. Idempotent. */
int tls_ca_openssl_init(struct ab_err *e);

/* Relocates OpenSSL's data now where the agentbox binary defers it to OpenSSL's first use
 * (egress/openssl_lazy.c; nothing elsewhere): for a run that will intercept, before the clone,
 * where the pages' copies cost a fraction of what they cost in the CA's thread after it. */
void tls_ca_relocate(void);

/* The reason OpenSSL queued last, as its text ("error:0A000086:SSL routines::certificate verify
 * failed"), or fallback when none is queued; the queue is left empty. In the agentbox binary
 * OpenSSL's error strings are loaded here, at the first reason rendered, not at the run's start
 * (libssl's come with its first context too). */
const char *tls_error_reason(char *buf, size_t size, const char *fallback);

/* names[0..n): the host names the CA may vouch for, as the policy parsed them from its rules:
 * RULE_HOST (that name; X.509 cannot express "this name but not its subdomains", so the
 * constraint is the subtree and tls_ca_leaf refuses the subdomains), RULE_SUBDOMAINS (*.SUFFIX:
 * constraint ".SUFFIX") or RULE_DOMAIN (**.SUFFIX: the apex and its subdomains); no port. No
 * addresses: a TLS client sends no SNI for them, and every IP address is an excluded subtree.
 * lifetime_s: how long the run may last (validity: now - TLS_CA_MARGIN_S to
 * now + lifetime_s + TLS_CA_MARGIN_S). */
int tls_ca_new(const struct egress_rule *names, size_t n, uint64_t lifetime_s, struct tls_ca **ca,
	       struct ab_err *e);

/* Leaves the cache keeps at once: a wildcard rule lets through a name per subdomain, and a leaf
 * with its key is ~5.4 KB. Past it, the least recently used leaf is freed (its key cleared). */
#define TLS_CA_LEAVES_MAX 256

/* The leaf certificate and key for name (a host name, canonicalised as the connection rules
 * do), minted on first use and cached: the same name gives the same pointers while it stays in
 * the cache (TLS_CA_LEAVES_MAX names; an evicted name gets a new leaf). Refused when the name is
 * not one the CA was made for. Both are owned by ca, valid until the next tls_ca_leaf (which may
 * evict them) or tls_ca_free; a caller that keeps one longer takes its own reference
 * (X509_up_ref, EVP_PKEY_up_ref; SSL_use_certificate and SSL_use_PrivateKey take one). */
int tls_ca_leaf(struct tls_ca *ca, const char *name, X509 **cert, EVP_PKEY **key, struct ab_err *e);

/* The CA certificate (owned by ca, its public key decoded, as a verifier needs it); NULL when
 * decoding fails. */
X509 *tls_ca_cert(struct tls_ca *ca);

/* The CA certificate in PEM, what the sandbox trusts: one CERTIFICATE block and nothing else.
 * *pem is malloc'd (the caller frees it) and NUL-terminated; *len excludes the NUL. */
int tls_ca_cert_pem(const struct tls_ca *ca, char **pem, size_t *len, struct ab_err *e);

/* The number of leaves in the cache, at most TLS_CA_LEAVES_MAX (for the audit and tests). */
size_t tls_ca_leaf_count(const struct tls_ca *ca);

/* Frees the keys (OpenSSL clears a private key's memory as it frees it), the certificates and
 * the cache. NULL is fine. */
void tls_ca_free(struct tls_ca *ca);

/* The name a hashed CA directory gives the CA's certificate (OpenSSL's subject hash, as
 * `openssl rehash` names it): "%08lx.0", in name[12]. */
void tls_ca_hash_name(const struct tls_ca *ca, char name[12]);

/* The upstream trust anchor ([network] ca): its PEM as sandbox/trust.c read it, once, before the
 * run started; the proxy's upstream verification loads it from here, not from the path again.
 * A copy is kept; -1 when out of memory. */
int tls_ca_set_upstream(struct tls_ca *ca, const char *pem, size_t len);
/* Adds the anchor's certificates (and CRLs) to store: how many certificates, 0 when there is
 * no anchor, -1 when none could be added. */
int tls_ca_load_upstream(const struct tls_ca *ca, X509_STORE *store);

#endif

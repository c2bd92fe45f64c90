/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What the sandbox trusts when the egress proxy intercepts HTTPS: the run's CA
 * (tls_ca.h), made in the supervisor after the clone, so that pid 1 (a fork-like copy of the
 * supervisor) never holds its key; its certificate, alone and appended to the host's system
 * bundle, and the same anchors as the JVM's PKCS12 store, handed to pid 1 in sealed memfds
 * (MSG_TRUST, MSG_TRUST_JVM) and shown read-only in the view; the
 * environment variables that point clients at them; and the check of [network] ca, the extra
 * anchor the proxy verifies upstream with. */
#ifndef AGENTBOX_TRUST_H
#define AGENTBOX_TRUST_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "policy.h"
#include "run_dir.h"
#include "strv.h"

struct audit;
struct run;

/* How long the CA is valid without [limits] timeout (tls_ca adds its margin to either). */
#define TRUST_DEFAULT_LIFETIME_S (7ull * 86400)

/* ---------- pure ---------- */

/* The one predicate: the proxy terminates TLS for some hosts, i.e. proxy mode and at least one
 * [http] rule. Everything in this file (and the proxy's interception) happens only then. */
bool trust_intercepts(const struct policy *p);

/* The names the CA may vouch for (tls_ca_new's), each once, with its text (NAME, *.SUFFIX,
 * **.SUFFIX): the hosts of the [http] rules and of the credentials, and when a rule's host is
 * `*`, the host names of [network] allow as well (ports dropped). Addresses are skipped: a CA
 * cannot name them (the proxy refuses TLS to an address the rules cover). No name at all is an
 * error with a fix. */
int trust_ca_names(const struct policy *p, struct egress_rule_list *names, struct ab_err *e);

/* The CA's lifetime in seconds: [limits] timeout and the kill grace after it, rounded up, or
 * TRUST_DEFAULT_LIFETIME_S without a timeout. */
uint64_t trust_ca_lifetime(const struct policy *p);

/* Sets the variables that point clients at the trust files (set(ctx, NAME, VALUE) per
 * variable, as egress_proxy_env does); -1 when set fails. jvm: JAVA_TOOL_OPTIONS gets the
 * options naming the JVM's store too, which set must add to the options already there (Java
 * reads them in order, the last setting of a property winning). */
int trust_env(int (*set)(void *ctx, const char *name, const char *value), void *ctx, bool jvm);

/* Before trust_env replaces them: notes the CA files the command's environment (the profile's
 * [env] and the caller's passed variables) names in the trust variables (r->user_anchors), so
 * that trust_stage adds their certificates to the run's bundle, ca.crt and the JVM's store:
 * intercepting one host must not break a tunnelled one that needs the user's own CA. Notes as
 * well the variable whose Java options name a trust store of the user's own
 * (r->jvm_user_store): that one is kept, and the JVM gets no store of the run's. */
int trust_note_user_anchors(struct run *r, struct ab_err *e);

/* ---------- the supervisor ---------- */

/* Before the clone, with the caller's rights: checks that the CA can be named, and reads
 * [network] ca into memory, the one time the file is opened (trust_check_anchor checks its
 * certificates; the proxy verifies upstream with those bytes, through the CA). Errors read
 * "PROFILE:LINE: [network] ca FILE: cause; fix: ...". Nothing to do without interception. */
int trust_prepare(const struct policy *p, struct ab_err *e);

/* [network] ca as trust_prepare read it (read now when it was not) decodes as PEM and holds at
 * least one certificate block, each of a certificate's outer shape (the proxy's upstream store
 * parses it in full at the first intercepted connection); 0 without the key. Errors read
 * "PROFILE:LINE: [network] ca FILE: cause; fix: ...". Called by trust_start's thread, which
 * then hands the bytes to the CA (tls_ca_set_upstream). */
int trust_check_anchor(const struct policy *p, struct ab_err *e);

/* Right after the clone: starts making the CA (r->tls_ca), then reading [network] ca, in a
 * thread of the supervisor, while the run's first events are written and pid 1 is let go.
 * Makes the supervisor non-dumpable first: it is about to hold a private key. */
int trust_start(struct run *r, struct ab_err *e);

/* After GO, while pid 1 builds its view: waits for the CA, sends its certificate to pid 1 (a
 * sealed memfd; pid 1 has the system bundle), then waits for the check of [network] ca and the
 * JVM's store (before the filter is sent, so before any command starts), and sends the store.
 * -1 when the CA or the store could not be made or [network] ca holds no certificate OpenSSL
 * reads (errors read "PROFILE:LINE: [network] ca FILE: cause; fix: ..."). A failed send means
 * pid 1 is gone: the socket is shut and its reason is left for supervise_wait_ready, as with
 * the filter. */
int trust_send(struct run *r, struct audit *a, struct ab_err *e);

/* Waits for trust_start's thread and closes what it left (every run that started it, before
 * r->tls_ca is freed). */
void trust_end(struct run *r);

/* ---------- pid 1 ---------- */

/* Before the view is built (pid 1 still sees the host's files): makes the run's tmpfs (not
 * attached yet), with the credentials' files and ca-bundle.crt holding the host's system
 * bundle; while the supervisor makes the CA. */
int trust_stage(struct run *r, struct ab_err *e);

/* After the pivot, before the capabilities are dropped: waits for the CA's certificate, writes
 * it as ca.crt and at the end of the bundle, then the JVM's store, and mounts the tmpfs (and
 * the bundle) read-only where the plan's MOP_TRUST ops say. */
int trust_install(struct run *r, struct ab_err *e);

#endif

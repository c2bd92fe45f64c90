/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What the sandbox trusts when the proxy intercepts HTTPS (see include/trust.h). The CA's key
 * exists only in the supervisor, from after the clone to the end of the run: the files pid 1
 * gets hold certificates only, and reach it as sealed memfds, never as files on the host. */
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "channel.h"
#include "credential_file.h"
#include "egress_rule.h"
#include "fsops.h"
#include "http_rules.h"
#include "mounts.h"
#include "run.h"
#include "run_audit.h"
#include "run_result.h"
#include "tls_ca.h"
#include "trust_anchors.h"
#include "trust_jvm.h"

/* The run's CA certificate, at most: each of its names adds a name constraint (~31 bytes of
 * PEM), and nothing else bounds how many names a profile gives. */
#define TRUST_CA_MAX (1024ull * 1024)
/* tls_ca_new accepts up to 10 years. */
#define TRUST_MAX_LIFETIME_S (10ull * 365 * 86400)

/* ---------- pure ---------- */

/* Each name once, as the connection rules write it (NAME, *.SUFFIX, **.SUFFIX), without a
 * port: the CA vouches for names. */
static int add_name(struct egress_rule_list *names, const struct egress_rule *r, struct ab_err *e)
{
	char name[sizeof(r->host) + 3];
	const char *prefix = r->kind == RULE_SUBDOMAINS ? "*."
			     : r->kind == RULE_DOMAIN	? "**."
							: "";
	struct egress_rule bare = *r;

	if (r->kind != RULE_HOST && r->kind != RULE_SUBDOMAINS && r->kind != RULE_DOMAIN)
		return 0; /* an address or a range: not something a CA can name */
	snprintf(name, sizeof(name), "%s%s", prefix, r->host);
	if (strv_has(&names->text, name))
		return 0;
	bare.port = 0;
	return egress_rule_list_add(names, &bare, name) < 0 ? ab_fail(e, ENOMEM, "the CA's names")
							    : 0;
}

/* The hosts rs's rules name (deny ones too, but not a credential's implied ones); *any_host
 * when one is `*`. */
static int rule_names(const struct http_rules *rs, struct egress_rule_list *names, bool *any_host,
		      struct ab_err *e)
{
	int rc = 0;

	/* allow rules, then deny rules */
	for (int deny = 0; deny < 2; deny++)
		for (size_t i = 0; rc == 0 && i < rs->n; i++) {
			if (rs->v[i].implied || rs->v[i].deny != deny)
				continue;
			*any_host |= rs->v[i].any_host;
			if (!rs->v[i].any_host)
				rc = add_name(names, &rs->v[i].host, e);
		}
	return rc;
}

/* The names, or none (0 with no names): the rules name addresses only. A session's harness
 * may add [http] rules for the hosts of [http] grantable, and under a `*` rule allow the hosts
 * of [network] grantable: the CA is made for them too, once, at the start. */
static int collect_names(const struct policy *p, struct egress_rule_list *names, struct ab_err *e)
{
	bool any_host = false;
	int rc;

	memset(names, 0, sizeof(*names));
	rc = rule_names(&p->net.http, names, &any_host, e);
	if (rc == 0)
		rc = rule_names(&p->net.http_grantable, names, &any_host, e);
	/* a `*` rule covers every host the connection rules let through, by name */
	for (size_t i = 0; rc == 0 && any_host && i < p->net.allow.text.n; i++)
		rc = add_name(names, &p->net.allow.v[i], e);
	for (size_t i = 0; rc == 0 && any_host && i < p->net.grantable.text.n; i++)
		rc = add_name(names, &p->net.grantable.v[i], e);
	/* a credential's hosts are intercepted: that is where its value is put in */
	for (size_t i = 0; rc == 0 && i < p->n_creds; i++)
		for (size_t k = 0; rc == 0 && k < p->creds[i].hosts.text.n; k++)
			rc = add_name(names, &p->creds[i].hosts.v[k], e);
	if (rc < 0)
		egress_rule_list_free(names);
	return rc;
}

/* Rules that name addresses only cover no connection a client makes by name: there is nothing
 * a CA could be made for, and the proxy refuses TLS to a covered address. */
bool trust_intercepts(const struct policy *p)
{
	struct egress_rule_list names;
	struct ab_err ignored = {0};
	bool some;

	if (p->net_mode != NET_PROXY || (!p->net.http.n && !p->net.http_grantable.n && !p->n_creds))
		return false;
	/* out of memory: true, so that trust_ca_names fails the run instead */
	if (collect_names(p, &names, &ignored) < 0)
		return true;
	some = names.text.n > 0;
	egress_rule_list_free(&names);
	return some;
}

int trust_ca_names(const struct policy *p, struct egress_rule_list *names, struct ab_err *e)
{
	if (collect_names(p, names, e) < 0)
		return ab_context(e, "[http]");
	if (names->text.n == 0)
		return ab_fail(e, 0, "[http] rules name no host the run's CA can be made for"),
		       ab_hint(e, "name the hosts in the [http] rules, or in [network] allow for a "
				  "`*` rule");
	return 0;
}

uint64_t trust_ca_lifetime(const struct policy *p)
{
	uint64_t ms = p->limits.timeout_ms, s;

	if (!ms)
		return TRUST_DEFAULT_LIFETIME_S;
	/* the command may run the grace period past its timeout */
	s = ms / 1000 + (ms % 1000 != 0) + (SANDBOX_KILL_GRACE_MS + 999) / 1000;
	return s > TRUST_MAX_LIFETIME_S ? TRUST_MAX_LIFETIME_S : s;
}

int trust_env(int (*set)(void *ctx, const char *name, const char *value), void *ctx, bool jvm)
{
	for (size_t i = 0; trust_bundle_vars[i][0]; i++)
		if (set(ctx, trust_bundle_vars[i], TRUST_BUNDLE_FILE) < 0)
			return -1;
	/* OpenSSL and Go read a list of directories: the run's CA, then the system's */
	if (set(ctx, "SSL_CERT_DIR", TRUST_CERT_DIR ":/etc/ssl/certs") < 0)
		return -1;
	/* Java's options: added to the profile's (the caller's set appends to this one) */
	if (jvm && set(ctx, "JAVA_TOOL_OPTIONS", TRUST_JVM_OPTIONS) < 0)
		return -1;
	/* node adds these to its own store (npm, yarn, pnpm too) */
	return set(ctx, "NODE_EXTRA_CA_CERTS", TRUST_CA_FILE);
}

int trust_note_user_anchors(struct run *r, struct ab_err *e)
{
	if (!trust_intercepts(r->p))
		return 0;
	r->jvm_user_store = trust_jvm_user_store(&r->env);
	return trust_user_anchor_files(&r->env, &r->user_anchors, e);
}

/* ---------- the supervisor: [network] ca ---------- */

/* A certificate block of the file (other blocks are skipped, as the store skips them): counted,
 * or an error when it is not one. */
static int count_certificate(void *ctx, const char *name, const unsigned char *der, long len,
			     int block, struct ab_err *e)
{
	int *n = ctx;

	if (trust_certificate_length(der, len) < 0)
		return ab_fail(e, 0, "not readable as PEM (block %d, %s, is not a certificate)",
			       block, name);
	(*n)++;
	return 0;
}

static const char anchor_fix[] = "give a PEM file with one or more -----BEGIN CERTIFICATE----- "
				 "blocks (from DER: openssl x509 -inform der -in FILE -out "
				 "FILE.pem)";

static int anchor_context(const struct policy *p, struct ab_err *e)
{
	ab_context(e, "[network] ca %s", p->net_ca);
	return p->net_ca_at.line ? ab_context(e, "%s:%u", p->net_ca_at.file, p->net_ca_at.line)
				 : ab_context(e, "%s", p->net_ca_at.file);
}

/* The anchor opened and checked for what costs nothing: a readable regular file of sane size.
 * Its PEM is parsed after the clone (trust_check_anchor), off the serial start-up path. */
static int anchor_open(const char *path, struct ab_err *e)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return ab_fail(e, errno, "cannot open it"),
		       ab_hint(e, "check the path (a relative one is relative to the profile's "
				  "directory) and that you can read it");
	if (fstat(fd, &st) < 0)
		ab_fail(e, errno, "cannot read it");
	else if (!S_ISREG(st.st_mode))
		ab_fail(e, 0, "not a regular file"), ab_hint(e, "%s", anchor_fix);
	else if ((uint64_t)st.st_size > TRUST_MAX_FILE)
		ab_fail(e, 0, "%lld bytes, more than a CA file holds", (long long)st.st_size),
		    ab_hint(e, "%s", anchor_fix);
	else
		return fd;
	close(fd);
	return -1;
}

/* What the proxy will load into its upstream store: PEM that decodes, at least one
 * certificate block, each of a certificate's shape (trust_certificate_length). Read by the thread
 * that makes the CA (make_ca), once the CA is made. */
/* [network] ca as read once, before the clone, with the caller's rights (trust_prepare): its
 * PEM is checked after the clone and handed to the proxy through the CA, so that the path is
 * never opened again (a file swapped mid-run changes nothing). */
static struct {
	char *pem;
	size_t len;
} anchor;

static void anchor_forget(void)
{
	free(anchor.pem);
	anchor.pem = NULL;
	anchor.len = 0;
}

static int anchor_read(const struct policy *p, struct ab_err *e)
{
	struct stat st;
	int fd;

	anchor_forget();
	if ((fd = anchor_open(p->net_ca, e)) < 0)
		return anchor_context(p, e);
	if (fstat(fd, &st) < 0 || !(anchor.pem = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return ab_fail(e, errno, "cannot read it"), anchor_context(p, e);
	}
	/* shorter than it said: what was read is checked */
	anchor.len = fs_read_all(fd, anchor.pem, (size_t)st.st_size);
	close(fd);
	return 0;
}

int trust_check_anchor(const struct policy *p, struct ab_err *e)
{
	int n = 0, rc;

	if (!p->net_ca)
		return 0;
	if (!anchor.pem && anchor_read(p, e) < 0)
		return -1;
	rc = trust_pem_blocks(anchor.pem, anchor.len, count_certificate, &n, e);
	if (rc == 0 && n == 0)
		rc = ab_fail(e, 0, "no PEM certificate in it");
	if (rc < 0)
		return ab_hint(e, "%s", anchor_fix), anchor_context(p, e);
	return 0;
}

int trust_prepare(const struct policy *p, struct ab_err *e)
{
	struct egress_rule_list names;

	if (!trust_intercepts(p)) /* and the anchor stays empty: its page is never touched */
		return 0;
	anchor_forget();
	if (trust_ca_names(p, &names, e) < 0)
		return -1;
	egress_rule_list_free(&names);
	tls_ca_relocate(); /* before the clone: see tls_ca.h */
	return p->net_ca ? anchor_read(p, e) : 0;
}

/* ---------- the supervisor: the files ---------- */

static int new_memfd(const char *name, struct ab_err *e)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	return fd < 0 ? ab_fail(e, errno, "memfd for %s", name) : fd;
}

/* Nothing can change the file once sealed, whoever holds it. */
static int seal(int fd, const char *name, struct ab_err *e)
{
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return ab_fail(e, errno, "sealing the memfd for %s", name);
	return 0;
}

/* Whether the host has a system bundle (for the supervisor's warning; pid 1 copies it). */
static bool have_system_bundle(void)
{
	struct ab_err ignored = {0};
	off_t size;
	int fd = trust_open_system_bundle(&size, &ignored);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* len bytes in a sealed memfd, for pid 1. */
static int sealed_file(const char *name, const void *data, size_t len, struct ab_err *e)
{
	int fd = new_memfd(name, e);

	if (fd < 0)
		return -1;
	if (fs_write_all(fd, data, len) < 0 || seal(fd, name, e) < 0) {
		if (!e->msg[0])
			ab_fail(e, errno, "%s", name);
		close(fd);
		return -1;
	}
	return fd;
}

/* The CA's certificate in a sealed memfd, for pid 1. */
static int ca_file(const char *pem, size_t len, struct ab_err *e)
{
	if (len > TRUST_CA_MAX)
		return ab_fail(e, 0, "the run's CA certificate is over 1 MiB (too many names)"),
		       ab_hint(e, "give [http] rules and [network] allow fewer host names, e.g. "
				  "one *.example.com rule instead of many hosts below it");
	return sealed_file("agentbox-ca.crt", pem, len, e);
}

/* The CA is made by a thread of the supervisor, started right after the clone (pid 1 never
 * shares its memory), while the main thread writes the run's first events and applies the
 * cgroup, and pid 1 copies the system bundle and builds the view: OpenSSL's first use, the key
 * and the certificate cost ~0.8 ms, which pid 1 would otherwise wait for. The certificate is
 * posted (made) as soon as it exists and sent to pid 1 by whichever thread finds it made with
 * sending allowed (claim_send): the main thread allows it once the channel is its to share
 * (after GO), and by then it has usually been waiting for the CA, so the CA's thread sends it
 * and pid 1 gets it one wake-up earlier. The thread then checks [network] ca while pid 1
 * installs the files, and the main thread joins it before the filter, so that no command starts
 * with an anchor that does not read. The thread touches only OpenSSL, r->tls_ca, the channel's
 * socket (to send the CA, while the main thread sends nothing) and these fields; the main thread
 * reads them after `made` (the CA's) or the join (the anchor's and the send's). */
static struct {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t posted;
	bool made;
	bool may_send, claimed; /* the CA's sending: allowed by the main thread, taken by one */
	char *pem;
	size_t len;
	char hash_name[12]; /* the certificate's name in a hashed CA directory */
	int rc, anchor_rc, send_rc;
	struct ab_err err, anchor_err, send_err;
} maker = {.lock = PTHREAD_MUTEX_INITIALIZER, .posted = PTHREAD_COND_INITIALIZER};

static void post_made(void)
{
	pthread_mutex_lock(&maker.lock);
	maker.made = true;
	pthread_cond_broadcast(&maker.posted); /* the main thread and the JVM store's */
	pthread_mutex_unlock(&maker.lock);
}

static void wait_made(void)
{
	pthread_mutex_lock(&maker.lock);
	while (!maker.made)
		pthread_cond_wait(&maker.posted, &maker.lock);
	pthread_mutex_unlock(&maker.lock);
}

/* The CA's certificate for the JVM store's thread, once made; NULL when it could not be. */
static const char *made_ca(size_t *len)
{
	wait_made();
	*len = maker.len;
	return maker.rc == 0 ? maker.pem : NULL;
}

/* True for the one caller that finds the CA made, its sending allowed and not yet taken. */
static bool claim_send(void)
{
	bool mine;

	pthread_mutex_lock(&maker.lock);
	mine = maker.made && maker.rc == 0 && maker.may_send && !maker.claimed;
	maker.claimed |= mine;
	pthread_mutex_unlock(&maker.lock);
	return mine;
}

/* The CA's certificate to pid 1. */
static int send_ca(struct run *r, struct ab_err *e)
{
	int fd = ca_file(maker.pem, maker.len, e);

	if (fd < 0)
		return -1;
	/* pid 1 gone: its reason is on the socket, for supervise_wait_ready */
	if (channel_send_fds(r->sock[0], MSG_TRUST, 0, maker.hash_name, &fd, 1) < 0)
		shutdown(r->sock[0], SHUT_WR);
	close(fd);
	return 0;
}

static void *make_ca(void *arg)
{
	struct run *r = arg;
	struct egress_rule_list names = {0};

	maker.rc = maker.anchor_rc = -1;
	if (tls_ca_openssl_init(&maker.err) == 0 && trust_ca_names(r->p, &names, &maker.err) == 0 &&
	    tls_ca_new(names.v, names.text.n, trust_ca_lifetime(r->p), &r->tls_ca, &maker.err) ==
		0 &&
	    tls_ca_cert_pem(r->tls_ca, &maker.pem, &maker.len, &maker.err) == 0) {
		tls_ca_hash_name(r->tls_ca, maker.hash_name);
		maker.rc = 0;
	}
	egress_rule_list_free(&names);
	post_made();
	if (claim_send())
		maker.send_rc = send_ca(r, &maker.send_err);
	if (maker.rc == 0)
		maker.anchor_rc = trust_check_anchor(r->p, &maker.anchor_err);
	if (maker.anchor_rc == 0 && anchor.pem &&
	    tls_ca_set_upstream(r->tls_ca, anchor.pem, anchor.len) < 0)
		maker.anchor_rc = ab_fail(&maker.anchor_err, ENOMEM, "[network] ca");
	OPENSSL_thread_stop(); /* the thread's error queue and the like */
	return NULL;
}

int trust_start(struct run *r, struct ab_err *e)
{
	if (!trust_intercepts(r->p))
		return 0;
	/* from here the supervisor holds a private key: no core dump of it, and no process of the
	 * caller's may read its memory (pid 1, cloned before, keeps its own setting) */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ab_fail(e, errno, "PR_SET_DUMPABLE");
	r->trust_started = true;
	maker.made = maker.may_send = maker.claimed = false;
	maker.send_rc = 0;
	if (pthread_create(&maker.thread, NULL, make_ca, r) != 0)
		make_ca(r); /* no thread to be had: the same work, in line */
	else
		maker.started = true;
	/* [network] ca as read before the clone: freed by trust_end, after this thread */
	trust_jvm_start(
	    &(struct trust_jvm_sources){anchor.pem, anchor.len, &r->user_anchors, made_ca});
	return 0;
}

static void join_maker(void)
{
	if (maker.started)
		(void)pthread_join(maker.thread, NULL); /* fails only for a thread not joinable */
	maker.started = false;
}

/* The warning, then the CA's sending allowed: sent here when the CA is made already, else by
 * its thread (trust_send reads how it went after the join). */
static int send_files(struct run *r, struct audit *a, struct ab_err *e)
{
	if (!have_system_bundle() &&
	    run_audit_warn(
		a, "trust",
		"no system CA bundle on the host: " TRUST_BUNDLE_FILE
		" holds only the run's CA, and clients pointed at it trust no other host",
		e) < 0)
		return -1;
	pthread_mutex_lock(&maker.lock);
	maker.may_send = true;
	pthread_mutex_unlock(&maker.lock);
	return claim_send() ? send_ca(r, e) : 0;
}

/* The JVM's store, once its thread has made it: pid 1 writes the CA's files meanwhile. */
static int send_jvm_store(struct run *r, struct ab_err *e)
{
	const unsigned char *der;
	size_t len;
	int fd;

	if (trust_jvm_wait(&der, &len, e) < 0 ||
	    (fd = sealed_file("agentbox-java-cacerts.p12", der, len, e)) < 0) {
		if (!strstr(e->msg, "; fix: "))
			ab_hint(e,
				"the JVM's store holds the run's CA bundle: the files [network] ca "
				"and the trust variables name must hold PEM certificates only");
		return -1;
	}
	if (channel_send_fds(r->sock[0], MSG_TRUST_JVM, 0, NULL, &fd, 1) < 0)
		shutdown(r->sock[0], SHUT_WR); /* pid 1 gone: as in send_files */
	close(fd);
	return 0;
}

int trust_send(struct run *r, struct audit *a, struct ab_err *e)
{
	int rc;

	if (!trust_intercepts(r->p))
		return 0;
	rc = send_files(r, a, e);
	join_maker();
	if (rc == 0 && maker.rc < 0) {
		*e = maker.err;
		rc = -1;
	}
	if (rc == 0 && maker.send_rc < 0) {
		*e = maker.send_err;
		rc = -1;
	}
	if (rc == 0 && maker.anchor_rc < 0) {
		*e = maker.anchor_err;
		rc = -1;
	}
	if (rc == 0)
		rc = send_jvm_store(r, e);
	trust_end(r);
	return rc;
}

void trust_end(struct run *r)
{
	if (!trust_intercepts(r->p)) /* nothing was made or read (trust_prepare) */
		return;
	if (r->trust_started) {
		trust_jvm_end(); /* first: it may be waiting for the CA's thread */
		join_maker();
		free(maker.pem);
		maker.pem = NULL;
	}
	/* read by trust_prepare, whether or not the threads started; after them, which read it */
	anchor_forget();
}

/* ---------- pid 1 ---------- */

/* What trust_stage made for trust_install (pid 1's own copy of this file's statics). */
static struct {
	int dir;    /* the tmpfs, not attached yet */
	int bundle; /* its ca-bundle.crt, open for the CA's certificate to be appended */
	/* [network] ca's and the user's own CA files' certificates, for the bundle and ca.crt */
	struct trust_extra extra;
} staged = {-1, -1, {NULL, 0, 0}};

static int create_file(int dir, const char *name, struct ab_err *e)
{
	int fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0444);

	return fd < 0 ? ab_fail(e, errno, "%s/%s", TRUST_DIR, name) : fd;
}

/* Appends size bytes of from (from its start) to fd: in the kernel, not a byte of it passes
 * through pid 1's memory. */
static int append(int fd, int from, off_t size, const char *name, struct ab_err *e)
{
	off_t done = 0;

	while (done < size) {
		ssize_t n = sendfile(fd, from, &done, (size_t)(size - done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ab_fail(e, n < 0 ? errno : EIO, "%s/%s", TRUST_DIR, name);
	}
	return 0;
}

/* Copies the first system bundle the host has to out: 1, or 0 when it has none. */
static int copy_system_bundle(int out, struct ab_err *e)
{
	off_t size = 0, done = 0;
	int in = trust_open_system_bundle(&size, e);
	char last = '\n';

	if (in < 0 && e->errnum == ENOENT) {
		*e = (struct ab_err){0};
		return 0;
	}
	if (in < 0)
		return -1;
	/* in the kernel: not a byte of it passes through pid 1's memory */
	while (done < size) {
		ssize_t n = sendfile(out, in, &done, (size_t)(size - done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* shorter than it was: what was read is the bundle */
	}
	if (done > 0 && pread(in, &last, 1, done - 1) != 1)
		last = 0;
	close(in);
	/* a bundle whose last line has no newline would swallow the next BEGIN line */
	if (last != '\n' && fs_write_all(out, "\n", 1) < 0)
		return ab_fail(e, errno, "the trust bundle");
	return 1;
}

/* What the run adds to the system's anchors besides its CA: [network] ca (as read before the
 * clone) and the files the user's trust variables named, their certificates only; written
 * after the CA (trust_install), so that ca.crt is the bundle's end. */
static int stage_extra(struct run *r, struct ab_err *e)
{
	return trust_extra_gather(&staged.extra, anchor.pem, anchor.len, &r->user_anchors, e);
}

int trust_stage(struct run *r, struct ab_err *e)
{
	if (!trust_intercepts(r->p))
		return 0;
	/* its size is a cap: the largest bundle, the CA, the JVM's store, the credentials' files
	 * and a page each for the directory and rounding */
	staged.dir = mounts_new_tmpfs(TRUST_MAX_FILE + 2 * TRUST_CA_MAX + 2 * TRUST_EXTRA_MAX +
					  TRUST_JVM_MAX + 4 * 4096 + creds_files_size(r->p),
				      "0755", e);
	if (staged.dir < 0 || creds_write_files(r->creds, staged.dir, e) < 0 ||
	    (staged.bundle = create_file(staged.dir, "ca-bundle.crt", e)) < 0 ||
	    copy_system_bundle(staged.bundle, e) < 0 || stage_extra(r, e) < 0)
		return ab_context(e, "the run's trust files");
	return 0;
}

/* A file from the supervisor: one sealed memfd (its size cannot change) of at most max bytes,
 * in a message of the type; what: what it is, for the errors. */
static int receive(struct run *r, int type, uint64_t max, const char *what, struct msg *m,
		   off_t *size, struct ab_err *e)
{
	int got[MAX_PASSED_FDS];
	size_t n = 0;
	int rc = channel_recv_fds(r->sock[1], m, got, MAX_PASSED_FDS, &n);
	struct stat st;

	if (rc != 1 || m->type != type || n != 1) {
		for (size_t i = 0; i < n; i++)
			close(got[i]);
		return ab_fail(e, rc < 0 ? errno : EPROTO, "no %s from the supervisor", what);
	}
	if (fstat(got[0], &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(got[0]);
		return ab_fail(e, EPROTO, "the supervisor's %s", what);
	}
	*size = st.st_size;
	return got[0];
}

/* The CA's certificate, and its name in the hashed directory. */
static int receive_ca(struct run *r, off_t *size, char hash_name[12], struct ab_err *e)
{
	struct msg m;
	int fd = receive(r, MSG_TRUST, TRUST_CA_MAX, "CA certificate", &m, size, e);

	if (fd < 0)
		return -1;
	/* eight hex digits and ".0", nothing else */
	if (strlen(m.text) != 10 || strspn(m.text, "0123456789abcdef") != 8 ||
	    strcmp(m.text + 8, ".0")) {
		close(fd);
		return ab_fail(e, EPROTO, "the supervisor's CA certificate's name");
	}
	memcpy(hash_name, m.text, 11);
	return fd;
}

/* The JVM's store, sent once the supervisor's thread has made it. */
static int jvm_store(struct run *r, struct ab_err *e)
{
	struct msg m;
	off_t size = 0;
	int in = receive(r, MSG_TRUST_JVM, TRUST_JVM_MAX, "JVM trust store", &m, &size, e), out, rc;

	if (in < 0)
		return -1;
	if ((out = create_file(staged.dir, "java-cacerts.p12", e)) < 0) {
		close(in);
		return -1;
	}
	rc = append(out, in, size, "java-cacerts.p12", e);
	if (close(out) < 0 && rc == 0)
		rc = ab_fail(e, errno, "%s", TRUST_JVM_STORE);
	close(in);
	return rc;
}

/* certs/HASH.0: the CA where clients that look CAs up in a directory (SSL_CERT_DIR, -CApath)
 * find it by its subject's hash. */
static int hashed_dir(int ca, off_t size, const char *hash_name, struct ab_err *e)
{
	int dir, fd, rc;

	if (mkdirat(staged.dir, "certs", 0755) < 0)
		return ab_fail(e, errno, "%s", TRUST_CERT_DIR);
	if ((dir = openat(staged.dir, "certs", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) <
	    0)
		return ab_fail(e, errno, "%s", TRUST_CERT_DIR);
	fd = create_file(dir, hash_name, e);
	close(dir);
	if (fd < 0)
		return -1;
	rc = append(fd, ca, size, hash_name, e);
	if (close(fd) < 0 && rc == 0)
		rc = ab_fail(e, errno, "%s/%s", TRUST_CERT_DIR, hash_name);
	return rc;
}

int trust_install(struct run *r, struct ab_err *e)
{
	char hash_name[12];
	int ca = -1, crt = -1, rc = -1;
	off_t size = 0;
	bool closed;

	if (!trust_intercepts(r->p))
		return 0;
	if ((ca = receive_ca(r, &size, hash_name, e)) < 0 ||
	    (crt = create_file(staged.dir, "ca.crt", e)) < 0 ||
	    append(crt, ca, size, "ca.crt", e) < 0 ||
	    append(staged.bundle, ca, size, "ca-bundle.crt", e) < 0 ||
	    hashed_dir(ca, size, hash_name, e) < 0)
		goto out;
	/* node reads ca.crt as extra to its own store: the user's CAs go there too */
	if (staged.extra.len &&
	    (fs_write_all(crt, staged.extra.pem, staged.extra.len) < 0 ||
	     fs_write_all(staged.bundle, staged.extra.pem, staged.extra.len) < 0)) {
		ab_fail(e, errno, "the trust files");
		goto out;
	}
	closed = close(crt) == 0;
	closed = close(staged.bundle) == 0 && closed;
	crt = staged.bundle = -1;
	if (!closed) {
		ab_fail(e, errno, "%s", TRUST_DIR);
		goto out;
	}
	if (jvm_store(r, e) < 0 || mounts_attach_ro(staged.dir, TRUST_DIR, e) < 0)
		goto out;
	for (size_t i = 0; i < r->plan.n; i++) {
		const struct mount_op *op = &r->plan.ops[i];
		if (op->kind == MOP_TRUST && op->source &&
		    mounts_bind_ro(op->source, op->dest, e) < 0)
			goto out;
	}
	rc = 0;
out:
	if (ca >= 0)
		close(ca);
	if (crt >= 0)
		close(crt);
	if (staged.bundle >= 0)
		close(staged.bundle);
	if (staged.dir >= 0)
		close(staged.dir);
	staged.dir = staged.bundle = -1;
	trust_extra_free(&staged.extra);
	return rc < 0 ? ab_context(e, "the run's trust files") : 0;
}

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
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include "channel.h"
#include "credential_file.h"
#include "egress_rule.h"
#include "http_rules.h"
#include "mounts.h"
#include "run.h"
#include "run_audit.h"
#include "run_result.h"
#include "tls_ca.h"

/* A system bundle is ~200 KiB; anything this big is not one (and must not fill memory). */
#define TRUST_MAX_FILE (16ull * 1024 * 1024)
/* What the run's CA adds to the system bundle, at most. */
#define TRUST_CA_SLACK 8192
/* tls_ca_new accepts up to 10 years. */
#define TRUST_MAX_LIFETIME_S (10ull * 365 * 86400)

/* Where hosts keep their system bundle: Debian, Ubuntu, Arch, Alpine, Gentoo; Fedora, RHEL;
 * openSUSE; BSD-style. The first one present is used. */
static const char *const system_bundles[] = {
    TRUST_SYSTEM_BUNDLE,
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
};

/* ---------- pure ---------- */

static int add_name(struct strv *names, const struct egress_rule *r, struct ab_err *e)
{
	char name[sizeof(r->host) + 3];
	const char *prefix = r->kind == RULE_SUBDOMAINS ? "*."
			     : r->kind == RULE_DOMAIN	? "**."
							: "";

	if (r->kind != RULE_HOST && r->kind != RULE_SUBDOMAINS && r->kind != RULE_DOMAIN)
		return 0; /* an address or a range: not something a CA can name */
	snprintf(name, sizeof(name), "%s%s", prefix, r->host);
	if (strv_has(names, name))
		return 0;
	return strv_push(names, name) < 0 ? ab_fail(e, ENOMEM, "the CA's names") : 0;
}

/* The names, or none (0 with names->n == 0): the rules name addresses only. */
static int collect_names(const struct policy *p, struct strv *names, struct ab_err *e)
{
	struct http_rules rs = {0};
	bool any_host = false;
	int rc = 0;

	memset(names, 0, sizeof(*names));
	for (size_t i = 0; rc == 0 && i < p->http_allow.n + p->http_deny.n; i++) {
		bool deny = i >= p->http_allow.n;
		rc = http_rules_add(
		    &rs, deny, deny ? p->http_deny.v[i - p->http_allow.n] : p->http_allow.v[i], e);
	}
	for (size_t i = 0; rc == 0 && i < rs.n; i++) {
		any_host |= rs.v[i].any_host;
		if (!rs.v[i].any_host)
			rc = add_name(names, &rs.v[i].host, e);
	}
	/* a `*` rule covers every host the connection rules let through, by name */
	for (size_t i = 0; rc == 0 && any_host && i < p->net_allow.n; i++) {
		struct egress_rule r;
		if ((rc = egress_rule_parse(p->net_allow.v[i], &r, e)) == 0)
			rc = add_name(names, &r, e);
	}
	http_rules_free(&rs);
	/* a credential's hosts are intercepted: that is where its value is put in */
	for (size_t i = 0; rc == 0 && i < p->n_creds; i++)
		for (size_t k = 0; rc == 0 && k < p->creds[i].hosts.n; k++) {
			struct egress_rule r;
			if ((rc = egress_rule_parse(p->creds[i].hosts.v[k], &r, e)) == 0)
				rc = add_name(names, &r, e);
		}
	if (rc < 0)
		strv_free(names);
	return rc;
}

/* Rules that name addresses only cover no connection a client makes by name: there is nothing
 * a CA could be made for, and the proxy refuses TLS to a covered address. */
bool trust_intercepts(const struct policy *p)
{
	struct strv names;
	struct ab_err ignored = {0};
	bool some;

	if (p->net_mode != NET_PROXY || (!p->http_allow.n && !p->http_deny.n && !p->n_creds))
		return false;
	/* out of memory: true, so that trust_ca_names fails the run instead */
	if (collect_names(p, &names, &ignored) < 0)
		return true;
	some = names.n > 0;
	strv_free(&names);
	return some;
}

int trust_ca_names(const struct policy *p, struct strv *names, struct ab_err *e)
{
	if (collect_names(p, names, e) < 0)
		return ab_context(e, "[http]");
	if (names->n == 0)
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

int trust_env(int (*set)(void *ctx, const char *name, const char *value), void *ctx)
{
	/* OpenSSL and what builds on it (Python's ssl, Go, Ruby, PHP, rustls-native-certs),
	 * requests, curl, pip, git, the AWS SDKs and CLI, Deno, cargo, Nix, Hex/mix, bundler,
	 * httplib2, gRPC: each reads its own variable, and each replaces its store with the file */
	static const char *const bundle_vars[] = {
	    "SSL_CERT_FILE",
	    "REQUESTS_CA_BUNDLE",
	    "CURL_CA_BUNDLE",
	    "PIP_CERT",
	    "GIT_SSL_CAINFO",
	    "AWS_CA_BUNDLE",
	    "DENO_CERT",
	    "CARGO_HTTP_CAINFO",
	    "NIX_SSL_CERT_FILE",
	    "HEX_CACERTFILE",
	    "BUNDLE_SSL_CA_CERT",
	    "HTTPLIB2_CA_CERTS",
	    "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
	};

	for (size_t i = 0; i < sizeof(bundle_vars) / sizeof(bundle_vars[0]); i++)
		if (set(ctx, bundle_vars[i], TRUST_BUNDLE_FILE) < 0)
			return -1;
	/* node adds these to its own store (npm, yarn, pnpm too) */
	return set(ctx, "NODE_EXTRA_CA_CERTS", TRUST_CA_FILE);
}

/* ---------- the supervisor: [network] ca ---------- */

static int count_certificates(int fd, int *n, struct ab_err *e)
{
	BIO *b = BIO_new_fd(fd, BIO_NOCLOSE);
	STACK_OF(X509_INFO) *infos = b ? PEM_X509_INFO_read_bio(b, NULL, NULL, NULL) : NULL;
	char detail[256] = "no detail from OpenSSL";
	unsigned long err = ERR_peek_last_error();

	*n = 0;
	for (int i = 0; infos && i < sk_X509_INFO_num(infos); i++)
		*n += sk_X509_INFO_value(infos, i)->x509 != NULL;
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	BIO_free(b);
	if (infos) {
		ERR_clear_error();
		return 0;
	}
	if (err)
		ERR_error_string_n(err, detail, sizeof(detail));
	ERR_clear_error();
	return ab_fail(e, 0, "not readable as PEM (%s)", detail);
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
 * Its PEM is read after the clone (trust_check_anchor), off the serial start-up path. */
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

/* What the proxy will load into its upstream store (X509_STORE_load_file reads the same way):
 * at least one certificate, no block OpenSSL cannot parse. Read by the thread that makes the
 * CA (make_ca), off the run's serial start-up path. */
int trust_check_anchor(const struct policy *p, struct ab_err *e)
{
	int fd, n = 0, rc;

	if (!p->net_ca)
		return 0;
	if ((fd = anchor_open(p->net_ca, e)) < 0)
		return anchor_context(p, e);
	rc = count_certificates(fd, &n, e);
	close(fd);
	if (rc == 0 && n == 0)
		rc = ab_fail(e, 0, "no PEM certificate in it");
	if (rc < 0)
		return ab_hint(e, "%s", anchor_fix), anchor_context(p, e);
	return 0;
}

int trust_prepare(const struct policy *p, struct ab_err *e)
{
	struct strv names;
	int fd;

	if (!trust_intercepts(p))
		return 0;
	if (trust_ca_names(p, &names, e) < 0)
		return -1;
	strv_free(&names);
	if (!p->net_ca)
		return 0;
	if ((fd = anchor_open(p->net_ca, e)) < 0)
		return anchor_context(p, e);
	close(fd);
	return 0;
}

/* ---------- the supervisor: the files ---------- */

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

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

/* Copies the first system bundle the host has to out: 1, or 0 when it has none. */
static int copy_system_bundle(int out, struct ab_err *e)
{
	for (size_t i = 0; i < sizeof(system_bundles) / sizeof(system_bundles[0]); i++) {
		const char *path = system_bundles[i];
		int in = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		struct stat st;
		off_t done = 0;
		char last = '\n';

		if (in < 0 && errno == ENOENT)
			continue;
		if (in < 0)
			return ab_fail(e, errno, "the system CA bundle %s", path);
		if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size > TRUST_MAX_FILE) {
			close(in);
			return ab_fail(e, 0,
				       "the system CA bundle %s is not a regular file of at "
				       "most 16 MiB",
				       path);
		}
		while (done < st.st_size) {
			ssize_t n = sendfile(out, in, &done, (size_t)(st.st_size - done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break; /* shorter than it was: what was read is the bundle */
		}
		if (done > 0 && pread(in, &last, 1, done - 1) != 1)
			last = 0;
		close(in);
		/* a bundle whose last line has no newline would swallow the next BEGIN line */
		if (last != '\n' && write_all(out, "\n", 1) < 0)
			return ab_fail(e, errno, "the trust bundle");
		return 1;
	}
	return 0;
}

/* The two files, ca.crt and ca-bundle.crt, in sealed memfds (fds[0], fds[1]). */
static int build_files(const char *pem, size_t len, int fds[2], bool *system, struct ab_err *e)
{
	int rc;

	if ((fds[0] = new_memfd("agentbox-ca.crt", e)) < 0)
		return -1;
	if (write_all(fds[0], pem, len) < 0)
		return ab_fail(e, errno, "the CA certificate");
	if (seal(fds[0], "ca.crt", e) < 0 || (fds[1] = new_memfd("agentbox-ca-bundle.crt", e)) < 0)
		return -1;
	if ((rc = copy_system_bundle(fds[1], e)) < 0)
		return -1;
	*system = rc > 0;
	if (write_all(fds[1], pem, len) < 0)
		return ab_fail(e, errno, "the trust bundle");
	return seal(fds[1], "ca-bundle.crt", e);
}

/* The CA is made by a thread of the supervisor, started right after the clone (pid 1 never
 * shares its memory), while the main thread writes the run's first events and applies the
 * cgroup: OpenSSL's first use, [network] ca, the key and the certificate cost ~1 ms, which
 * pid 1 would otherwise wait for. The thread touches only OpenSSL, its own memfds, r->tls_ca
 * and these fields; the main thread reads them after the join. */
static struct {
	pthread_t thread;
	bool started;
	struct run *r;
	int fds[2];
	bool system;
	int rc;
	struct ab_err err;
} maker = {.fds = {-1, -1}};

static void *make_ca(void *arg)
{
	struct run *r = arg;
	struct strv names = {0};
	char *pem = NULL;
	size_t len;

	maker.rc = -1;
	if (tls_ca_openssl_init(&maker.err) == 0 && trust_check_anchor(r->p, &maker.err) == 0 &&
	    trust_ca_names(r->p, &names, &maker.err) == 0 &&
	    tls_ca_new((const char *const *)names.v, names.n, trust_ca_lifetime(r->p), &r->tls_ca,
		       &maker.err) == 0 &&
	    tls_ca_cert_pem(r->tls_ca, &pem, &len, &maker.err) == 0 &&
	    build_files(pem, len, maker.fds, &maker.system, &maker.err) == 0)
		maker.rc = 0;
	free(pem);
	strv_free(&names);
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
	maker.r = r;
	if (pthread_create(&maker.thread, NULL, make_ca, r) != 0)
		make_ca(r); /* no thread to be had: the same work, in line */
	else
		maker.started = true;
	return 0;
}

static void join_maker(void)
{
	if (maker.started)
		(void)pthread_join(maker.thread, NULL); /* fails only for a thread not joinable */
	maker.started = false;
}

int trust_send(struct run *r, struct audit *a, struct ab_err *e)
{
	if (!trust_intercepts(r->p))
		return 0;
	join_maker();
	if (maker.rc < 0) {
		*e = maker.err;
		return -1;
	}
	if (!maker.system &&
	    run_audit_warn(
		a, "trust",
		"no system CA bundle on the host: " TRUST_BUNDLE_FILE
		" holds only the run's CA, and clients pointed at it trust no other host",
		e) < 0)
		return -1;
	/* pid 1 gone: its reason is on the socket, for supervise_wait_ready */
	if (channel_send_fds(r->sock[0], MSG_TRUST, 0, NULL, maker.fds, 2) < 0)
		shutdown(r->sock[0], SHUT_WR);
	trust_end(r);
	return 0;
}

void trust_end(struct run *r)
{
	if (maker.r != r)
		return;
	join_maker();
	for (int i = 0; i < 2; i++)
		if (maker.fds[i] >= 0) {
			close(maker.fds[i]);
			maker.fds[i] = -1;
		}
}

/* ---------- pid 1 ---------- */

static int copy_in(int dir, const char *name, int from, off_t size, struct ab_err *e)
{
	int fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0444);
	off_t done = 0;

	if (fd < 0)
		return ab_fail(e, errno, "%s/%s", TRUST_DIR, name);
	/* in the kernel: not a byte of it passes through pid 1's memory */
	while (done < size) {
		ssize_t n = sendfile(fd, from, &done, (size_t)(size - done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : EIO;
			close(fd);
			return ab_fail(e, err, "%s/%s", TRUST_DIR, name);
		}
	}
	return close(fd) < 0 ? ab_fail(e, errno, "%s/%s", TRUST_DIR, name) : 0;
}

static int receive(struct run *r, int fds[2], off_t size[2], struct ab_err *e)
{
	int got[MAX_PASSED_FDS];
	size_t n = 0;
	struct msg m;
	int rc = channel_recv_fds(r->sock[1], &m, got, MAX_PASSED_FDS, &n);
	struct stat st;

	if (rc != 1 || m.type != MSG_TRUST || n != 2) {
		for (size_t i = 0; i < n; i++)
			close(got[i]);
		return ab_fail(e, rc < 0 ? errno : EPROTO, "no trust files from the supervisor");
	}
	fds[0] = got[0];
	fds[1] = got[1];
	for (int i = 0; i < 2; i++) {
		/* sealed: the size cannot change after this */
		if (fstat(fds[i], &st) < 0 || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size > TRUST_MAX_FILE + TRUST_CA_SLACK)
			return ab_fail(e, EPROTO, "the supervisor's trust files");
		size[i] = st.st_size;
	}
	return 0;
}

int trust_install(struct run *r, struct ab_err *e)
{
	int fds[2] = {-1, -1}, mnt = -1, rc = -1;
	off_t size[2] = {0, 0};

	if (!trust_intercepts(r->p))
		return 0;
	/* made before the files come, in case they are not there yet; its size is a cap (the
	 * largest two files receive accepts and a page each for the directory and rounding) */
	mnt = mounts_new_tmpfs(
	    2 * (TRUST_MAX_FILE + TRUST_CA_SLACK) + 4 * 4096 + creds_files_size(r->p), "0755", e);
	if (mnt < 0 || creds_write_files(r->creds, mnt, e) < 0 || receive(r, fds, size, e) < 0 ||
	    copy_in(mnt, "ca.crt", fds[0], size[0], e) < 0 ||
	    copy_in(mnt, "ca-bundle.crt", fds[1], size[1], e) < 0 ||
	    mounts_attach_ro(mnt, TRUST_DIR, e) < 0)
		goto out;
	for (size_t i = 0; i < r->plan.n; i++) {
		const struct mount_op *op = &r->plan.ops[i];
		if (op->kind == MOP_TRUST && op->source &&
		    mounts_bind_ro(op->source, op->dest, e) < 0)
			goto out;
	}
	rc = 0;
out:
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (mnt >= 0)
		close(mnt);
	return rc < 0 ? ab_context(e, "the run's trust files") : 0;
}

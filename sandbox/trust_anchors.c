/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Where a run's trust files take their certificates from besides its own CA: the host's system
 * bundle, and what the run adds to it. A profile that intercepts
 * one host and tunnels another whose CA the user gives through SSL_CERT_FILE,
 * REQUESTS_CA_BUNDLE or NODE_EXTRA_CA_CERTS would lose that CA when trust_env points the
 * variables at the run's bundle: so the bundle (and ca.crt, node's extra store) carries those
 * files' certificates, and [network] ca's, as well. Only certificate blocks are copied: a
 * variable naming some other file brings none of its bytes into the sandbox. */
#include "trust_anchors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsops.h"
#include "run_dir.h"

#define BEGIN_CERT "-----BEGIN CERTIFICATE-----"
#define END_CERT "-----END CERTIFICATE-----"

/* OpenSSL and what builds on it (Python's ssl, Go, Ruby, PHP, rustls-native-certs),
 * requests, curl, pip, git, the AWS SDKs and CLI, Deno, cargo, Nix, Hex/mix, bundler,
 * httplib2, gRPC: each reads its own variable, and each replaces its store with the file */
const char trust_bundle_vars[][TRUST_VAR_NAME_SIZE] = {
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
    "",
};

/* Where hosts keep their system bundle: Debian, Ubuntu, Arch, Alpine, Gentoo; Fedora, RHEL;
 * openSUSE; BSD-style. The first one present is used. */
static const char *const system_bundles[] = {
    TRUST_SYSTEM_BUNDLE,
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
};

int trust_open_system_bundle(off_t *size, struct ab_err *e)
{
	for (size_t i = 0; i < sizeof(system_bundles) / sizeof(system_bundles[0]); i++) {
		const char *path = system_bundles[i];
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		struct stat st;

		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return ab_fail(e, errno, "the system CA bundle %s", path);
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size > TRUST_MAX_FILE) {
			close(fd);
			return ab_fail(e, 0,
				       "the system CA bundle %s is not a regular file of at most "
				       "16 MiB",
				       path);
		}
		*size = st.st_size;
		return fd;
	}
	*size = 0;
	return ab_fail(e, ENOENT, "no system CA bundle");
}

static int add_file(struct strv *files, const char *value, struct ab_err *e)
{
	if (!value || value[0] != '/' || strv_has(files, value))
		return 0; /* unset, or relative (no directory to read it from): nothing to add */
	return strv_push(files, value) < 0 ? ab_fail(e, ENOMEM, "the user's CA files") : 0;
}

int trust_user_anchor_files(const struct env_result *env, struct strv *files, struct ab_err *e)
{
	for (size_t i = 0; trust_bundle_vars[i][0]; i++)
		if (add_file(files, env_get(env, trust_bundle_vars[i]), e) < 0)
			return -1;
	return add_file(files, env_get(env, "NODE_EXTRA_CA_CERTS"), e);
}

static int put(struct trust_extra *x, const char *s, size_t n, struct ab_err *e)
{
	if (n > TRUST_EXTRA_MAX - x->len)
		return ab_fail(e, 0, "more than %u bytes of certificates", TRUST_EXTRA_MAX);
	if (x->len + n > x->cap) {
		/* doubling: a file of many small blocks costs a few copies, not one per block */
		size_t cap = x->cap ? x->cap : 4096;
		char *nv;
		while (cap < x->len + n)
			cap *= 2;
		if (!(nv = realloc(x->pem, cap)))
			return ab_fail(e, ENOMEM, "certificates");
		x->pem = nv;
		x->cap = cap;
	}
	memcpy(x->pem + x->len, s, n);
	x->len += n;
	return 0;
}

int trust_extra_add(struct trust_extra *x, const char *pem, size_t len, struct ab_err *e)
{
	const char *p = pem, *end = pem + len;

	while (p < end) {
		const char *b = memmem(p, (size_t)(end - p), BEGIN_CERT, strlen(BEGIN_CERT));
		const char *body = b ? b + strlen(BEGIN_CERT) : NULL;
		const char *f =
		    b ? memmem(body, (size_t)(end - body), END_CERT, strlen(END_CERT)) : NULL;
		if (!f)
			break;
		/* a block that holds another armour line is not a certificate's: nothing of it */
		if (memmem(body, (size_t)(f - body), "-----", 5)) {
			p = body;
			continue;
		}
		f += strlen(END_CERT);
		if (put(x, b, (size_t)(f - b), e) < 0 || put(x, "\n", 1, e) < 0)
			return -1;
		p = f;
	}
	return 0;
}

int trust_extra_add_file(struct trust_extra *x, const char *path, struct ab_err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *buf;
	size_t off;
	int rc;

	if (fd < 0 && errno == ENOENT)
		return 0; /* names no file: a client had no CA from it either */
	if (fd < 0)
		return ab_fail(e, errno, "%s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > TRUST_EXTRA_MAX) {
		close(fd);
		return ab_fail(e, 0, "%s is not a regular file of at most %u bytes", path,
			       TRUST_EXTRA_MAX);
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return ab_fail(e, ENOMEM, "%s", path);
	}
	off = fs_read_all(fd, buf, (size_t)st.st_size);
	close(fd);
	rc = trust_extra_add(x, buf, off, e);
	free(buf);
	return rc;
}

void trust_extra_free(struct trust_extra *x)
{
	free(x->pem);
	x->pem = NULL;
	x->len = x->cap = 0;
}

int trust_extra_gather(struct trust_extra *x, const char *anchor, size_t anchor_len,
		       const struct strv *files, struct ab_err *e)
{
	trust_extra_free(x);
	if (anchor && trust_extra_add(x, anchor, anchor_len, e) < 0)
		return ab_context(e, "[network] ca");
	for (size_t i = 0; i < files->n; i++)
		if (trust_extra_add_file(x, files->v[i], e) < 0)
			return ab_context(e, "the CA file a trust variable of the command names"),
			       ab_hint(e, "point the variable at a readable PEM file, or leave it "
					  "out: the run's bundle holds the system's CAs");
	return 0;
}

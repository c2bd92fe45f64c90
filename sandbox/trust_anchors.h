/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Where a run's trust files take their certificates from besides its own CA
 * (trust_anchors.c): the host's system bundle, the [network] ca anchor and the CA files the
 * user's own trust variables name. Private to sandbox/trust*.c. */
#ifndef AGENTBOX_TRUST_ANCHORS_H
#define AGENTBOX_TRUST_ANCHORS_H

#include <stddef.h>
#include <sys/types.h>

#include "env.h"
#include "error.h"
#include "strv.h"

/* A system bundle is ~200 KiB; anything this big is not one (and must not fill memory). */
#define TRUST_MAX_FILE (16ull * 1024 * 1024)
/* At most this many bytes of added certificates, all sources together. */
#define TRUST_EXTRA_MAX (4u * 1024 * 1024)

/* The variables clients read a replacement trust store from, "" last: trust_env points each
 * at the run's bundle. Names, not pointers, which would be relocated at every start. */
#define TRUST_VAR_NAME_SIZE 40
extern const char trust_bundle_vars[][TRUST_VAR_NAME_SIZE];

/* Certificates gathered for the trust files: PEM CERTIFICATE blocks only, each ending in a
 * newline. */
struct trust_extra {
	char *pem;
	size_t len, cap;
};

/* The files the command's environment (as the profile and the caller made it, before
 * trust_env) names in trust_bundle_vars and NODE_EXTRA_CA_CERTS: absolute paths, each once. */
int trust_user_anchor_files(const struct env_result *env, struct strv *files, struct ab_err *e);

/* Appends the CERTIFICATE blocks of pem[0, len) to x (what else the bytes hold is left out:
 * a file named as a CA bundle reaches the sandbox only as certificates). -1 past
 * TRUST_EXTRA_MAX or out of memory; what holds no block adds nothing. */
int trust_extra_add(struct trust_extra *x, const char *pem, size_t len, struct ab_err *e);

/* The same for a file, read with the caller's rights (pid 1 before the view is built); a
 * missing file adds nothing. */
int trust_extra_add_file(struct trust_extra *x, const char *path, struct ab_err *e);

/* x := the CERTIFICATE blocks of anchor[0, anchor_len) ([network] ca as read before the
 * clone; NULL without one), then those of each of files (trust_user_anchor_files'): what the
 * run adds to every trust file it makes. Errors name the source, with a fix. */
int trust_extra_gather(struct trust_extra *x, const char *anchor, size_t anchor_len,
		       const struct strv *files, struct ab_err *e);

void trust_extra_free(struct trust_extra *x);

/* The host's system bundle opened (O_CLOEXEC), the first of the places distributions keep it
 * that exists: its fd, *size its size. A regular file of at most TRUST_MAX_FILE bytes, or an
 * error; -1 with e->errnum ENOENT when the host has none. */
int trust_open_system_bundle(off_t *size, struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A credential's token file (`file` in [credential NAME]): the text the profile gives, with the
 * run's placeholder for each {}, made by pid 1 in the run's directory inside (run_dir.h, with the
 * trust files), so that a tool which reads its token from a file (npm's .npmrc, gh's hosts.yml)
 * holds the placeholder too. Not a secret: the real value never reaches it. */
#ifndef AGENTBOX_CREDENTIAL_FILE_H
#define AGENTBOX_CREDENTIAL_FILE_H

#include <stddef.h>

#include "credential.h"
#include "error.h"
#include "policy.h"

/* The bytes the files of p's credentials take at most, for the tmpfs that holds them. */
size_t creds_files_size(const struct policy *p);

/* pid 1: writes the file of each credential that has one into dir (the trust tmpfs, before
 * it is mounted read-only), mode 0444. */
int creds_write_files(const struct creds *cs, int dir, struct ab_err *e);

#endif

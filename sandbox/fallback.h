/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* fallback = landlock: where user namespaces are unavailable, the command runs as a child of
 * the supervisor in its own process group, confined by Landlock, seccomp and rlimits only. */
#ifndef AGENTBOX_FALLBACK_H
#define AGENTBOX_FALLBACK_H

#include "audit.h"
#include "run.h"
#include "run_result.h"

int fallback_run(struct run *r, struct audit *a, struct sandbox_result *res, struct ab_err *e);
/* Best effort at the end of a fallback run: what cannot be removed stays in TMPDIR. */
void fallback_remove_tmpdir(const char *path);

#endif

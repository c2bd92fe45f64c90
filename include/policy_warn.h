/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What a profile says that cannot take effect, or most likely does not say what its author
 * meant (policy_warn.c): a rule another one always overrides, a glob with syntax agentbox's
 * globs lack, a pin no rule lets through; and, when asked, the host paths it names that are
 * missing. A profile with warnings is valid: `agentbox --check` prints them and exits 0,
 * `--check --strict` fails on them. */
#ifndef AGENTBOX_POLICY_WARN_H
#define AGENTBOX_POLICY_WARN_H

#include "error.h"
#include "policy.h"
#include "strv.h"

/* Appends to out one line per warning, "FILE:LINE: what; fix: how", in profile order (layer,
 * then line). Reads p only (its parsed rules and where each was written; no file), cheap
 * enough for every run. -1 (e says) when out of memory. */
int policy_warnings(const struct policy *p, struct strv *out, struct ab_err *e);

/* The same for the host paths p names: ro, rw and overlay sources that are missing or cannot be
 * read (rw: written), ro-try and rw-try excepted; a tmpfs whose mount point a host tree lacks; a
 * credential's source file; [network] ca. stat(2) and access(2) only, never a file's bytes. */
int policy_path_warnings(const struct policy *p, struct strv *out, struct ab_err *e);

#endif

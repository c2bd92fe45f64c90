/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Before an overlay run: the entries of its trees the command could change but overlayfs could
 * not copy up. A copy-up keeps the owner and group, which must exist in the sandbox's user
 * namespace; it maps one uid and one gid (an unprivileged user can map no other), so a file or
 * directory the caller may write whose owner or group is another (a shared group, a setgid
 * directory) would fail with EOVERFLOW on the first write. The run says so before it starts. */
#ifndef AGENTBOX_OVERLAY_IDS_H
#define AGENTBOX_OVERLAY_IDS_H

#include <sys/types.h>

#include "error.h"
#include "mounts.h"

/* Walks each overlay tree of the plan (directory levels bounded, symlinks not followed); the
 * first writable entry not owned by uid and gid fails, naming it and the fix. */
int overlay_ids_check(const struct mount_plan *plan, uid_t uid, gid_t gid, struct ab_err *e);

#endif

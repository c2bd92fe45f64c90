/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Landlock: defence in depth under the namespaces. pid 1 restricts itself to the view the mount
 * plan built (read and execute everywhere in it, writes only under rw binds and tmpfs mounts,
 * device files usable) and, on ABI >= 6, scopes abstract unix sockets and signals to the
 * sandbox. */
#ifndef AGENTBOX_LANDLOCK_H
#define AGENTBOX_LANDLOCK_H

#include <stdbool.h>

#include "error.h"
#include "json.h"
#include "mounts.h"

/* The kernel's Landlock ABI version, 0 when Landlock is not available. */
int landlock_abi(void);

/* In pid 1, after pivot_root and no_new_privs. Does nothing when abi is 0. */
int landlock_apply(const struct mount_plan *plan, int abi, struct ab_err *e);

/* fallback = landlock, without namespaces: the plan's host paths (binds at their sources,
 * tmpdir for /tmp, device files, /proc read-only); deny_tcp refuses every TCP bind and
 * connect (ABI >= 4). Fails when Landlock is not available. */
int landlock_apply_host(const struct mount_plan *plan, int abi, const char *tmpdir, bool deny_tcp,
			struct ab_err *e);

/* What landlock_apply enforces on this ABI, for the audit trail. */
void landlock_describe(int abi, struct json *j);

#endif

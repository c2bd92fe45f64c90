/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The sandbox's id maps: the caller's uid and gid (or [sandbox] uid/gid) mapped to
 * themselves, one id each, setgroups denied unless root gives the command other ids. */
#ifndef AGENTBOX_IDMAP_H
#define AGENTBOX_IDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "policy.h"

/* proc: "/proc/self" (pid 1, its own maps) or "/proc/PID" (the supervisor, for root). */
int idmap_write(const struct policy *p, const char *proc, uid_t outer_uid, gid_t outer_gid,
		bool allow_setgroups, struct ab_err *e);

#endif

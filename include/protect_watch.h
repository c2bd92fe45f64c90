/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The protected paths an rw tree lacks, watched while the run lives (include/mounts.h:
 * protect_missing): one that appears is renamed aside and the run stops. */
#ifndef AGENTBOX_PROTECT_WATCH_H
#define AGENTBOX_PROTECT_WATCH_H

#include "audit.h"
#include "error.h"
#include "mounts.h"

struct protect_watch;

/* In the supervisor, before the sandbox is cloned. *out is NULL when the plan's rw trees lack
 * no protected path (nothing is watched then, and nothing costs). */
int protect_watch_start(const struct mount_plan *plan, struct protect_watch **out,
			struct ab_err *e);
/* Readable when something appeared in a watched directory. */
int protect_watch_fd(const struct protect_watch *w);
/* Reads what appeared: -1 when a protected path did (renamed aside, audited; e says so, with
 * cause "protected-path": the run must stop) or on error; 0 otherwise. */
int protect_watch_check(struct protect_watch *w, struct audit *a, struct ab_err *e);
/* The command is gone: what is left to read, then every protected path looked at once more. */
int protect_watch_settle(struct protect_watch *w, struct audit *a, struct ab_err *e);
/* One line each for what was renamed aside (w may be NULL). */
void protect_watch_report(const struct protect_watch *w);
void protect_watch_close(struct protect_watch *w);

#endif

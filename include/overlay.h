/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Quarantined writes: `[filesystem] overlay` trees keep every change in a per-run changes
 * directory outside the sandbox, which `agentbox changes|diff|promote|discard` then act on. */
#ifndef AGENTBOX_OVERLAY_H
#define AGENTBOX_OVERLAY_H

#include "audit.h"
#include "error.h"
#include "mounts.h"
#include "policy.h"

/* Whether the plan has an overlay tree. */
bool overlay_in_plan(const struct mount_plan *plan);

/* In the supervisor, before the sandbox is cloned: when the plan has overlays, creates the
 * changes directory (p->changes, or $XDG_STATE_HOME/agentbox/runs/RUN_ID), records the run
 * (its start time and each tree), and gives every overlay op its upper and work directories.
 * *dir is set to the changes directory (malloc'd), or NULL when there are no overlays; *lock
 * to an fd holding a shared lock on the record until closed at the end of the run (promote
 * and discard refuse a run still going), or -1. */
int overlay_prepare(const struct policy *p, const char *run_id, struct mount_plan *plan, char **dir,
		    int *lock, struct ab_err *e);

/* After a run with [limits] changes-size: copies the upper layers from fs (the tmpfs they were
 * on, passed out by pid 1) into the changes directory dir, and audits a `limit` event when
 * the budget was used up. */
int overlay_save(const char *dir, int fs, uint64_t size, struct audit *a, struct ab_err *e);

/* `agentbox changes|diff|promote|discard [--audit DEST] RUN_ID|DIR [PATH...]`: argv[1] is the
 * subcommand. Returns the exit status. */
int overlay_command(int argc, char **argv);

/* Whether argv[1] names one of those subcommands. */
bool overlay_is_command(const char *name);

#endif

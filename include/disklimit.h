/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [limits] disk: how much the file systems under a run's writable host trees may grow while it
 * runs. No quota needs privilege, so the supervisor samples the file systems' free space every
 * DISK_LIMIT_TICK_MS and stops the run past the budget: a writer overshoots by what it writes
 * in one tick, and other writers on the same file system count against the run too. */
#ifndef AGENTBOX_DISKLIMIT_H
#define AGENTBOX_DISKLIMIT_H

#include <stdint.h>

#include "error.h"
#include "mounts.h"

#define DISK_LIMIT_TICK_MS 10

struct disk_limit;

/* Opens the file systems of plan's rw binds (and of overlay upper layers that are on disk)
 * and arms the sampling timer. *out is NULL when budget is 0 or nothing is writable. */
int disk_limit_open(const struct mount_plan *plan, uint64_t budget, struct disk_limit **out,
		    struct ab_err *e);
/* The timer to poll. */
int disk_limit_fd(const struct disk_limit *d);
/* After the timer fired: 1 when the file systems grew past the budget (*grown says by how
 * much), 0 when not, -1 on error. */
int disk_limit_check(struct disk_limit *d, uint64_t *grown, struct ab_err *e);
void disk_limit_close(struct disk_limit *d);

#endif

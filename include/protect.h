/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Protected paths that a rw tree does not have. The read-only bind that keeps the command from
 * creating one needs something to be mounted on, and in a rw tree that can only be the host's
 * own directory: an empty placeholder is made there before the run and removed after it. */
#ifndef AGENTBOX_PROTECT_H
#define AGENTBOX_PROTECT_H

#include <stddef.h>

#include "error.h"
#include "mounts.h"

/* The rw trees this run protects paths in, each with a shared lock on the tree's record of
 * placeholders; and a shared lock on every protected entry itself, so no run removes a
 * placeholder while another still has it mounted. */
struct protect_tree {
	char *root;
	int fd;	    /* the tree's root, opened once: every placeholder is made below it */
	int record; /* its record, locked shared */
};

struct protect_hold {
	struct protect_tree *trees;
	size_t n;
	int *held; /* every protected entry in those trees, locked shared for the run */
	size_t n_held;
};

/* In the supervisor, before the sandbox is cloned: makes the placeholders of the plan's rw
 * trees (overlay trees have theirs in the upper layer: overlay.c). */
int protect_prepare(const struct mount_plan *plan, struct protect_hold *h, struct ab_err *e);

/* After the run: the last run holding a tree removes the placeholders recorded for it that are
 * still empty, its own and those of runs that were killed. */
void protect_release(struct protect_hold *h);

#endif

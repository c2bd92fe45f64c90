/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What earlier promotes of a run did, kept in its changes record (promote.c appends, review.c
 * reads), so that a run's changes can be promoted a few at a time, in any order:
 *   promoted TREE HEX             a change promote applied: no longer pending
 *   settled TREE HEX SEC.NSEC     a host directory promote wrote to, unchanged by the host
 *                                 before, and its ctime after: no conflict while it stays so
 * HEX is the path below the tree's root, hex-encoded (any byte but NUL, whatever its length),
 * "-" for the root itself. Private to the files of quarantined writes (overlay_internal.h). */
#ifndef AGENTBOX_PROMOTE_LOG_H
#define AGENTBOX_PROMOTE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "error.h"
#include "overlay_internal.h"

struct promote_mark {
	unsigned tree;
	char *rel;
	struct timespec ctime; /* settled marks only */
};

struct promote_log {
	struct promote_mark *promoted, *settled;
	size_t n_promoted, n_settled;
	int fd; /* the record, open for appending while promote runs; -1 otherwise */
};

/* Whether a line of the record is the log's (review.c leaves those to promote_log_load). */
bool promote_log_line(const char *line);
/* Reads the log from r's record; an empty log when there is none yet. */
int promote_log_load(const struct run_info *r, struct promote_log *log, struct ab_err *e);
void promote_log_free(struct promote_log *log);
/* Drops the changes an earlier promote applied from c (r's log): what is left is pending; or,
 * with keep, marks them promoted (changes --json lists them too). */
int promote_log_pending(const struct run_info *r, struct changes *c, bool keep, struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Internal to the files of quarantined writes, not an interface for anything else (the rest of
 * agentbox sees overlay.h): overlay.c writes a run's changes record (and reopens its trees),
 * review.c reads it back and lists the changes in it (`changes`, `diff`, `discard`), promote.c
 * applies them. */
#ifndef AGENTBOX_OVERLAY_INTERNAL_H
#define AGENTBOX_OVERLAY_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "audit.h"
#include "error.h"
#include "strv.h"

#define RUN_FILE "run"
#define RUN_MAGIC "agentbox-changes 1"

struct run_info {
	int fd; /* the record, open: the running sandbox's supervisor holds a lock on it */
	char dir[PATH_MAX];
	char id[64];
	struct timespec started;
	struct strv trees;	  /* host paths, by tree number */
	struct strv placeholders; /* "N/PATH": older runs' stand-ins in the upper layer */
	struct strv protected;	  /* "N/PATH": protected paths the tree lacked (promote refuses) */
};

enum change_kind { CH_ADDED, CH_MODIFIED, CH_DELETED };

struct change {
	enum change_kind kind;
	unsigned tree;
	char *rel;	  /* below the tree's root, no leading slash */
	mode_t mode;	  /* the upper entry's (added, modified) */
	mode_t host_mode; /* the host entry's (modified, deleted), as lstat gives it */
	/* a directory on the way to rel is a symlink on the host: the host side is never read
	 * (it would be outside the tree), the change is listed as added, and promote refuses it */
	bool beyond_link;
};

struct changes {
	struct change *v;
	size_t n;
	/* upper directories the command made unreadable, opened up (u+rwx) while this command
	 * reads them, and their modes, put back by changes_free, deepest first */
	struct strv opened;
	mode_t *opened_modes;
};

/* overlay.c: the root of tree on the host, reopened with no symlink on its path (it was
 * canonical at the start: a symlink now was swapped in since); an O_PATH directory fd. */
int overlay_open_root(const struct run_info *r, unsigned tree);
/* overlay.c: rel in tree on the host, or in its upper layer, opened with fs_open_nolinks:
 * beneath the tree, no symlink on the way (the last component included). */
int overlay_open_host(const struct run_info *r, unsigned tree, const char *rel, int flags);
int overlay_open_upper(const struct run_info *r, unsigned tree, const char *rel, int flags);
/* review.c: the host path of rel in tree, in out; false when it does not fit. */
bool overlay_host_path(const struct run_info *r, unsigned tree, const char *rel, char *out,
		       size_t size);
/* review.c: PATH arguments (host paths) select the changes at or below them; none selects all. */
bool overlay_selected(const struct run_info *r, const struct change *c, char **paths, int n);
/* review.c: a `changes` audit event (path, change and result when not NULL). */
int overlay_audit_change(struct audit *a, const char *action, const struct run_info *r,
			 const char *path, const char *change, const char *result,
			 struct ab_err *e);

/* promote.c: the selected changes applied, protected and guarded paths refused; 1 when a
 * conflict stopped it before the first write. */
int overlay_promote(const struct run_info *r, const struct changes *c, char **paths, int n,
		    struct audit *a, struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Internal to the files of quarantined writes, not an interface for anything else (the rest of
 * agentbox sees overlay.h): overlay.c writes a run's changes record (and reopens its trees),
 * review.c reads it back and runs `changes`, `diff`, `promote`, `discard`; review_list.c lists
 * the changes in it, review_diff.c diffs them, promote.c applies them, review_json.c says all
 * of it as JSON (--json). */
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
	off_t size, host_size; /* the upper entry's, the host entry's (as mode, host_mode) */
	/* what review found or promote did, for --json (overlay_assess, overlay_promote) */
	bool promoted;	     /* an earlier promote applied it: no longer pending */
	bool conflict;	     /* the host changed it since the run started */
	const char *refused; /* why promote refuses it, or NULL */
	const char *result;  /* this promote's outcome (applied, skipped, refused, conflict) */
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
/* review_list.c: the changes of r, sorted by tree and path; overlay_changes_free puts back the
 * modes of upper directories it opened up to read them. */
int overlay_list_changes(const struct run_info *r, struct changes *out, struct ab_err *e);
void overlay_changes_free(struct changes *c);
/* review_list.c: the host path of rel in tree, in out; false when it does not fit. */
bool overlay_host_path(const struct run_info *r, unsigned tree, const char *rel, char *out,
		       size_t size);
/* review_list.c: PATH arguments (host paths) select the changes at or below them; none selects all.
 */
bool overlay_selected(const struct run_info *r, const struct change *c, char **paths, int n);
/* review.c: a `changes` audit event (path, change and result when not NULL). */
int overlay_audit_change(struct audit *a, const char *action, const struct run_info *r,
			 const char *path, const char *change, const char *result,
			 struct ab_err *e);

/* review_diff.c: `diff` of one change, printed (text); or, for --json, written into j as the
 * "diff" text (valid UTF-8, at most cap bytes: less than REVIEW_DIFF_ONE when that is what is
 * left of the document's) or a "note" saying why there is none. */
int overlay_diff_one(const struct run_info *r, const struct change *c, struct ab_err *e);
/* review_diff.c: the target of c's symlink in the upper layer, in out; -1 (errno) otherwise. */
int overlay_link_target(const struct run_info *r, const struct change *c, char *out, size_t size);
struct json;
int overlay_diff_json(const struct run_info *r, const struct change *c, size_t cap, struct json *j,
		      struct ab_err *e);

/* review_json.c: the JSON document of cmd (changes, diff, promote, discard) on stdout: the
 * selected changes of c (NULL: not listed) as objects (diff: with at most diff_max bytes of
 * diff text in all), counts, the outcome (rc: 0, 1 for a conflict, -1 for the error in e).
 * Returns rc, or -1 when a diff or stdout failed. */
#define REVIEW_DIFF_MAX (16 * 1024 * 1024)
#define REVIEW_DIFF_ONE (1024 * 1024) /* one change's diff text, at most */
int overlay_json_print(const char *cmd, const struct run_info *r, const struct changes *c,
		       char **paths, int n, size_t diff_max, int rc, struct ab_err *e);
/* review_json.c: the document for an error before the run's record was read. */
void overlay_json_error(const char *cmd, const struct ab_err *e);

/* promote.c: for each selected pending change, whether promote would find a conflict or refuse
 * it (conflict, refused), without writing anything. */
int overlay_assess(const struct run_info *r, struct changes *c, char **paths, int n,
		   struct ab_err *e);
/* promote.c: the selected changes applied, protected and guarded paths refused, each one's
 * result set (the caller says what was done); 1 when a conflict stopped it before the first
 * write. */
int overlay_promote(const struct run_info *r, struct changes *c, char **paths, int n,
		    struct audit *a, struct ab_err *e);

#endif

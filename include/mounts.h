/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The filesystem view: the policy's [filesystem] entries become a mount plan (built in the
 * supervisor, where host paths are resolved once), which the sandbox's pid 1 applies by fd onto
 * an empty tmpfs root before pivoting into it. */
#ifndef AGENTBOX_MOUNTS_H
#define AGENTBOX_MOUNTS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "policy.h"

enum mount_op_kind {
	MOP_BIND_RO,
	MOP_BIND_RW,
	MOP_TMPFS,
	MOP_HIDE, /* dir: empty read-only tmpfs; file: an unopenable node */
	MOP_SYMLINK,
	MOP_PROC,
	MOP_DEV,
	MOP_OVERLAY, /* the host tree as the lower layer; changes land in upper */
	/* The run's trust files (trust.h), which pid 1 gets only after the pivot: here only the
	 * mount point is made; source NULL: the trust tmpfs goes on dest, else source (a file
	 * in it) is bound over dest. */
	MOP_TRUST,
};

struct mount_op {
	enum mount_op_kind kind;
	char *dest;	    /* absolute path inside the sandbox */
	char *source;	    /* binds: the host path, symlinks resolved */
	char *target;	    /* symlinks: link content */
	char *upper, *work; /* overlays: host directories the changes land in (overlay.c) */
	uint64_t size;	    /* tmpfs size cap */
	bool implicit;	    /* added by agentbox, not written in the profile */
	bool skipped;	    /* optional and missing on the host */
	bool protects;	    /* a protected path's read-only bind */
	const char *why;    /* implicit ops: the reason, for the audit */
};

/* A protected path the host does not have. No mount can cover a name that does not exist, and
 * a stand-in made for one would sit in the user's tree (where git and promote take it), so
 * nothing is made: in an rw tree the supervisor watches dir for name (protect_watch.h) and
 * stops the run that creates it; in an overlay tree the creation stays in the upper layer,
 * and promote refuses it (overlay.c records it). */
struct protect_missing {
	char *dir;	 /* the host directory it would appear in, canonical */
	char *name;	 /* the first component dir lacks */
	char *rest;	 /* the components after name, "" when name is the protected path */
	char *root;	 /* the host root of the rw or overlay tree that holds dir */
	char *rel;	 /* the protected path below root */
	const char *why; /* for the audit */
	bool overlay;	 /* root is an overlay tree's, not an rw bind's */
};

struct mount_plan {
	struct mount_op *ops;
	size_t n;
	uint64_t tmpfs_size;   /* for /dev/shm */
	bool guard_proc;       /* the command is host root: kernel tunables in /proc read-only */
	bool limit_userns;     /* no user namespaces below the sandbox's own */
	uint64_t changes_size; /* [limits] changes-size: overlays' upper layers on a tmpfs */
	char *changes_dir;     /* the run's changes directory, when it has overlays */
	struct protect_missing *missing;
	size_t n_missing;
};

/* Paths agentbox itself uses. paths (its binary, the profiles): visible only when the profile
 * binds them, and then read-only. hidden (the audit trail): never readable inside; wherever a
 * bind shows one, an unopenable node stands in, which the command cannot open, replace or
 * rename, nor rename a directory above it in a writable tree. */
struct mount_protect {
	const char *const *paths;
	size_t n;
	const char *const *hidden;
	size_t n_hidden;
	/* guarded.h: read-only where a writable tree holds them; a missing directory of dirs
	 * whose parent exists gets a stand-in */
	const struct strv *guarded_files, *guarded_dirs;
};

/* trust_files: the run intercepts HTTPS, and its trust files' directory (run_dir.h) is made in
 * the view. */
int mount_plan_build(const struct policy *p, const struct mount_protect *protect, bool trust_files,
		     struct mount_plan *plan, struct ab_err *e);
void mount_plan_free(struct mount_plan *plan);
const char *mount_op_name(enum mount_op_kind k);
/* True when the host's path is what the view shows at path: the deepest entry covering it is a
 * bind (a tmpfs shows a new empty directory, a hide nothing). */
bool mount_plan_shows(const struct mount_plan *plan, const char *path);
/* The same, disregarding hide entries: is path inside a bound host tree at all? */
bool mount_plan_binds(const struct mount_plan *plan, const char *path);
/* The rw or overlay entry from the profile whose tree holds op's destination, or NULL. */
const struct mount_op *mount_plan_tree(const struct mount_plan *plan, const struct mount_op *op);

/* The bind sources, opened with the caller's rights before anything else changes. */
struct mount_sources {
	int *fds;   /* per plan op: the cloned tree, flags set; -1 where none */
	bool *dirs; /* whether that tree's root is a directory */
	size_t n;
	int changes_fs; /* changes-size: the tmpfs the upper layers are on, or -1 */
};

/* In the sandbox's mount namespace: clones every bind source's tree (symlinks refused on the
 * path), before any staging mount exists. */
int mounts_open_sources(const struct mount_plan *plan, struct mount_sources *out, struct ab_err *e);
void mounts_close_sources(struct mount_sources *src);
/* Builds the new root from the plan and the opened sources, and pivots into it. */
int mounts_apply(const struct mount_plan *plan, const struct mount_sources *src, struct ab_err *e);

/* After the pivot, before confinement, for what arrives late (trust.c): a detached tmpfs,
 * filled through its fd; attached read-only (nosuid, nodev, noexec) on dest, an entry the
 * view has; or a path of the view bound read-only over another. Paths are absolute in the
 * view (the process's root by then), magic links refused. */
int mounts_new_tmpfs(uint64_t size, const char *mode, struct ab_err *e);
int mounts_attach_ro(int mntfd, const char *dest, struct ab_err *e);
int mounts_bind_ro(const char *from, const char *dest, struct ab_err *e);

#endif

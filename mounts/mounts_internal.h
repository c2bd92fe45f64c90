/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Internal to the filesystem view's four files, not an interface for anything else (the rest of
 * agentbox sees mounts.h): mount_plan.c makes the plan, mount_protect.c adds the protected,
 * hidden and guarded paths to it, mount_sources.c opens the host trees it binds, mounts.c
 * applies it. The types are only declared here, so
 * that mounts.c can include this without an include circle. */
#ifndef AGENTBOX_MOUNTS_INTERNAL_H
#define AGENTBOX_MOUNTS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

struct ab_err;
struct mount_op;
struct mount_plan;
struct mount_protect;
struct policy;

/* Whether path is dir or below it. */
bool mount_path_under(const char *path, const char *dir);
/* A bind of a host tree: ro, rw or overlay. */
bool mount_op_is_bind(const struct mount_op *o);
/* The entry that decides what is at path: the deepest one covering it. */
const struct mount_op *mount_plan_deepest(const struct mount_plan *plan, const char *path,
					  bool skip_hides);
/* Appends a copy of op (its strings duplicated); may move plan->ops. */
int mount_plan_push(struct mount_plan *plan, struct mount_op op, struct ab_err *e);

/* mounts.c, for mount_sources.c: openat2(2) with O_CLOEXEC added; a bind source opened
 * O_PATH with no symlink on its path (a swap after the plan fails the run, with a fix); the
 * mount attributes set on a detached tree; a detached tmpfs of size bytes and mode. */
int mount_openat2(int dirfd, const char *path, int flags, uint64_t resolve);
int mount_open_source(const char *source, struct ab_err *e);
int mount_set_attr(int mntfd, uint64_t set, bool recursive);
int mount_detached_tmpfs(uint64_t size, const char *mode, unsigned attrs, struct ab_err *e);

/* mount_protect.c: the paths a writable tree must not let the command change, added to the plan
 * once the profile's entries are in it. */
int mount_plan_protect(struct mount_plan *plan, const struct policy *p,
		       const struct mount_protect *protect, struct ab_err *e);

#endif

/* Internal to the filesystem view's three files, not an interface for anything else (the rest of
 * agentbox sees mounts.h): mount_plan.c makes the plan, mount_protect.c adds the protected,
 * hidden and guarded paths to it, mounts.c applies it. The types are only declared here, so
 * that mounts.c can include this without an include circle. */
#ifndef AGENTBOX_MOUNTS_INTERNAL_H
#define AGENTBOX_MOUNTS_INTERNAL_H

#include <stdbool.h>

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

/* mount_protect.c: the paths a writable tree must not let the command change, added to the plan
 * once the profile's entries are in it. */
int mount_plan_protect(struct mount_plan *plan, const struct policy *p,
		       const struct mount_protect *protect, struct ab_err *e);

#endif

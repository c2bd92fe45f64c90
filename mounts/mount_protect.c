/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The paths a writable tree must not let the command change, added to the mount plan: agentbox's
 * own files (read-only), its audit trail (hidden), the guarded paths (guarded.h), the protected
 * names at the root of every rw and overlay tree, and the pins that keep them in place. A
 * protected path the host does not have is recorded as missing (include/mounts.h). */
#include "mounts.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mounts_internal.h"

static int plan_pin(struct mount_plan *plan, const char *dest, struct ab_err *e);
static bool planned(const struct mount_plan *plan, const char *dest);

/* The bind whose host tree holds real (a resolved host path), when that tree is writable. */
static const struct mount_op *writable_cover(const struct mount_plan *plan, const char *real)
{
	const struct mount_op *cover = NULL;

	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *o = &plan->ops[i];
		if (mount_op_is_bind(o) && !o->skipped && mount_path_under(real, o->source) &&
		    (!cover || strlen(o->source) > strlen(cover->source)))
			cover = o;
	}
	return cover && cover->kind != MOP_BIND_RO ? cover : NULL;
}

enum missing { ALL_THERE, MISSING, NOT_A_DIR, LINK_ON_THE_WAY };

/* Walks path from its first known bytes (a directory): MISSING with out set to the first
 * component the host does not have; NOT_A_DIR with out set to a component that is a file or
 * a special file where path needs a directory (a worktree's .git file: protected itself);
 * LINK_ON_THE_WAY at a symlink; ALL_THERE; or -1 when it cannot be told (errno set). */
static int first_missing(const char *path, size_t known, char *out, size_t size)
{
	struct stat st;
	size_t n = strlen(path);

	if (n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(out, path, n + 1);
	if (known >= n)
		return ALL_THERE;
	for (char *s = out + known + 1;; s++) {
		char c = *s;
		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (lstat(out, &st) < 0)
			return errno == ENOENT ? MISSING : -1;
		if (S_ISLNK(st.st_mode))
			return LINK_ON_THE_WAY;
		if (!c)
			return ALL_THERE;
		if (!S_ISDIR(st.st_mode))
			return NOT_A_DIR;
		*s = c;
	}
}

/* dest inside the sandbox for real, a host path under cover's tree. */
static int view_path(const struct mount_op *cover, const char *real, char *dest, size_t size,
		     struct ab_err *e)
{
	size_t base = strlen(cover->source) == 1 ? 0 : strlen(cover->source);

	if ((size_t)snprintf(dest, size, "%s%s", strcmp(cover->dest, "/") ? cover->dest : "",
			     real + base) >= size)
		return ab_fail(e, ENAMETOOLONG, "protecting %s", real);
	return 0;
}

static int push_protect(struct mount_plan *plan, const struct mount_op *cover, const char *dest,
			const char *source, const char *why, struct ab_err *e)
{
	/* a hide or tmpfs deeper than the writable tree already keeps the path out of sight */
	if (mount_plan_deepest(plan, dest, false) != cover)
		return 0;
	if (plan_pin(plan, dest, e) < 0)
		return -1;
	return mount_plan_push(plan,
			       (struct mount_op){.kind = MOP_BIND_RO,
						 .dest = (char *)dest,
						 .source = (char *)source,
						 .implicit = true,
						 .protects = true,
						 .why = why},
			       e);
}

static int push_missing(struct mount_plan *plan, struct protect_missing m, struct ab_err *e)
{
	struct protect_missing *v = realloc(plan->missing, (plan->n_missing + 1) * sizeof(*v));

	if (!v)
		return ab_fail(e, ENOMEM, "protecting %s/%s", m.dir, m.name);
	plan->missing = v;
	v[plan->n_missing] = (struct protect_missing){.why = m.why, .overlay = m.overlay};
	v = &v[plan->n_missing++];
	if (!(v->dir = strdup(m.dir)) || !(v->name = strdup(m.name)) ||
	    !(v->rest = strdup(m.rest)) || !(v->root = strdup(m.root)) || !(v->rel = strdup(m.rel)))
		return ab_fail(e, ENOMEM, "protecting %s/%s", m.dir, m.name);
	return 0;
}

/* A protected path the host does not have: missing is its first missing component. Nothing is
 * made (include/mounts.h: protect_missing); the directories above it are pinned, so that the
 * command cannot move the watched directory away and make another in its place. */
static int protect_missing(struct mount_plan *plan, const char *path, const char *missing,
			   const char *why, struct ab_err *e)
{
	const char *name = strrchr(missing, '/') + 1;
	char parent[PATH_MAX], root[PATH_MAX], dest[PATH_MAX];
	const struct mount_op *cover;
	size_t base;
	bool overlay;

	/* first_missing walked it: directories only, no link, so it is canonical already */
	snprintf(parent, sizeof(parent), "%.*s", (int)(name - 1 - missing), missing);
	cover = writable_cover(plan, parent[0] ? parent : "/");
	if (!cover)
		return 0;
	if (view_path(cover, missing, dest, sizeof(dest), e) < 0)
		return -1;
	if (mount_plan_deepest(plan, dest, false) != cover)
		return 0; /* a hide or tmpfs deeper than the tree keeps it out of sight */
	snprintf(root, sizeof(root), "%s", cover->source); /* plan_pin may move the ops */
	overlay = cover->kind == MOP_OVERLAY;
	if (plan_pin(plan, dest, e) < 0)
		return -1;
	base = strcmp(root, "/") ? strlen(root) + 1 : 1;
	return push_missing(plan,
			    (struct protect_missing){.dir = parent[0] ? parent : "/",
						     .name = (char *)name,
						     .rest = (char *)path + strlen(missing) +
							     (path[strlen(missing)] == '/'),
						     .root = root,
						     .rel = (char *)path + base,
						     .why = why,
						     .overlay = overlay},
			    e);
}

/* A protected path under a rw bind or an overlay gets a read-only bind of itself on top; one
 * the host does not have, when missing is set, a placeholder. */
static int plan_protect(struct mount_plan *plan, const char *path, size_t known, bool missing,
			const char *why, struct ab_err *e)
{
	const struct mount_op *cover;
	char dest[PATH_MAX], first[PATH_MAX];
	char *real;
	int r = 0, where = missing ? first_missing(path, known, first, sizeof(first)) : ALL_THERE;

	if (where < 0)
		return ab_fail(e, errno, "cannot tell whether %s exists", path),
		       ab_hint(e, "make its directories readable, or unprotect it");
	if (where == MISSING)
		return protect_missing(plan, path, first, why, e);
	if (where == LINK_ON_THE_WAY) {
		/* the link's target is what the tree shows there: go on from it */
		char *target = realpath(first, NULL), rest[PATH_MAX];
		if (!target)
			return 0; /* dangling: nothing there to cover, nor a place for a stand-in */
		r = (size_t)snprintf(rest, sizeof(rest), "%s%s", strcmp(target, "/") ? target : "",
				     path + strlen(first)) >= sizeof(rest)
			? ab_fail(e, ENAMETOOLONG, "protecting %s", path)
			: plan_protect(plan, rest, strlen(target), missing, why, e);
		free(target);
		return r;
	}
	/* what first_missing walked has no link in it; agentbox's own files it did not walk */
	real = missing ? strdup(where == NOT_A_DIR ? first : path) : realpath(path, NULL);
	if (!real)
		return missing ? ab_fail(e, ENOMEM, "protecting %s", path) : 0; /* dangling link */
	if ((cover = writable_cover(plan, real)) &&
	    (r = view_path(cover, real, dest, sizeof(dest), e)) == 0)
		r = push_protect(plan, cover, dest, real, why, e);
	free(real);
	return r;
}

/* The deepest rw bind whose view holds dest, or NULL; NULL too when an overlay tree below it
 * holds dest: there nothing is pinned, since an rw bind of a host directory inside the overlay
 * would let writes bypass the quarantine (promote refuses protected paths instead). */
static const struct mount_op *rw_cover(const struct mount_plan *plan, const char *dest)
{
	const struct mount_op *best = NULL;

	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *o = &plan->ops[i];
		if ((o->kind == MOP_BIND_RW || o->kind == MOP_OVERLAY) && !o->skipped &&
		    strcmp(o->dest, dest) && mount_path_under(dest, o->dest) &&
		    (!best || strlen(o->dest) > strlen(best->dest)))
			best = o;
	}
	return best && best->kind == MOP_BIND_RW ? best : NULL;
}

static bool planned(const struct mount_plan *plan, const char *dest)
{
	for (size_t i = 0; i < plan->n; i++)
		if (!strcmp(plan->ops[i].dest, dest))
			return true;
	return false;
}

/* A mount point cannot be renamed or removed. What must stay where it is inside an rw tree
 * (a hidden path, agentbox's own files) gets every directory between the tree's root and it
 * bound onto itself, writable as before: the command cannot move it away so that a later run
 * finds the path empty and the content elsewhere. */
static int plan_pin(struct mount_plan *plan, const char *dest, struct ab_err *e)
{
	const struct mount_op *cover = rw_cover(plan, dest);
	char ancestor[PATH_MAX], host[PATH_MAX], source[PATH_MAX];
	size_t root_len, cut;

	if (!cover)
		return 0;
	/* plan_push may move the ops: keep copies, not pointers */
	root_len = strcmp(cover->dest, "/") ? strlen(cover->dest) : 0;
	snprintf(source, sizeof(source), "%s", strcmp(cover->source, "/") ? cover->source : "");
	for (cut = root_len + 1; dest[cut]; cut++) {
		struct stat st;
		if (dest[cut] != '/')
			continue;
		memcpy(ancestor, dest, cut);
		ancestor[cut] = '\0';
		if ((size_t)snprintf(host, sizeof(host), "%s%s", source, ancestor + root_len) >=
		    sizeof(host))
			return ab_fail(e, ENAMETOOLONG, "pinning %s", dest);
		if (lstat(host, &st) < 0 || !S_ISDIR(st.st_mode))
			return 0; /* missing, or a link: nothing below it to pin */
		if (planned(plan, ancestor))
			continue;
		if (mount_plan_push(plan,
				    (struct mount_op){
					.kind = MOP_BIND_RW,
					.dest = ancestor,
					.source = host,
					.implicit = true,
					.why = "pinned: keeps a protected or hidden path in place"},
				    e) < 0)
			return -1;
	}
	return 0;
}

static bool unprotected(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->unprotect.n; i++)
		if (!strcmp(p->unprotect.v[i], name))
			return true;
	return false;
}

/* The protected names below root. */
static int protect_names(struct mount_plan *plan, const struct policy *p, const char *root,
			 struct ab_err *e)
{
	static const char why[] = "protected: runs outside the sandbox later";
	char path[PATH_MAX];

	for (size_t k = 0; policy_protected_names[k][0]; k++) {
		const char *name = policy_protected_names[k];
		if (unprotected(p, name))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, name) >= sizeof(path))
			return ab_fail(e, ENAMETOOLONG, "protecting %s", root);
		if (plan_protect(plan, path, strlen(root), true, why, e) < 0)
			return -1;
	}
	return 0;
}

/* The protected names at the root of every rw and overlay tree, and [filesystem] protect. */
static int protect_trees(struct mount_plan *plan, const struct policy *p, struct ab_err *e)
{
	for (size_t i = 0, n = plan->n; i < n; i++) {
		const struct mount_op *o = &plan->ops[i];
		char root[PATH_MAX];
		if (o->skipped || o->implicit || (o->kind != MOP_BIND_RW && o->kind != MOP_OVERLAY))
			continue;
		/* a copy: protect_names may move the ops */
		snprintf(root, sizeof(root), "%s", strcmp(o->source, "/") ? o->source : "");
		if (protect_names(plan, p, root, e) < 0)
			return -1;
	}
	for (size_t i = 0; i < p->protect.n; i++)
		if (plan_protect(plan, p->protect.v[i], 0, true,
				 "protected by [filesystem] protect", e) < 0)
			return -1;
	return 0;
}

/* A file agentbox writes while the run lasts (include/mounts.h: hidden): hidden at every place
 * a bind shows it. One with other hard links cannot be hidden that way: refused. */
static int plan_hide_own(struct mount_plan *plan, const char *path, struct ab_err *e)
{
	char *real = realpath(path, NULL), dest[PATH_MAX];
	struct stat st;
	int r = 0;

	if (!real)
		return 0; /* not on the host: nothing any bind could show */
	if (stat(real, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1 &&
	    mount_plan_binds(plan, real))
		r = ab_fail(e, 0,
			    "%s has %ju hard links: the sandbox could read it through another",
			    path, (uintmax_t)st.st_nlink),
		ab_hint(e, "give --audit a new file, or one outside every path the profile binds");
	for (size_t i = 0, n = plan->n; r == 0 && i < n; i++) {
		const struct mount_op *o = &plan->ops[i];
		if (!mount_op_is_bind(o) || o->skipped || !mount_path_under(real, o->source))
			continue;
		if ((r = view_path(o, real, dest, sizeof(dest), e)) < 0)
			break;
		if (mount_plan_deepest(plan, dest, false) != o || planned(plan, dest))
			continue; /* something deeper decides what is there (and is looked at
				     itself) */
		r = mount_plan_push(
		    plan,
		    (struct mount_op){.kind = MOP_HIDE,
				      .dest = dest,
				      .implicit = true,
				      .why = "agentbox's audit trail: not readable inside"},
		    e);
	}
	free(real);
	return r;
}

/* A guarded path (include/guarded.h): read-only in place when the host has it; a missing one
 * is watched for only when its parent exists (creating ~/.local for ~/.local/bin is no
 * attempt on it). */
static int plan_guard(struct mount_plan *plan, const char *path, struct ab_err *e)
{
	static const char why[] = "guarded: agentbox's inputs and the user's start-up files";
	char first[PATH_MAX];
	int where = first_missing(path, 0, first, sizeof(first));

	if (where == ALL_THERE || where == LINK_ON_THE_WAY)
		return plan_protect(plan, path, 0, false, why, e);
	if (where == MISSING && !strcmp(first, path))
		return protect_missing(plan, path, first, why, e);
	return 0; /* a missing parent, or what it cannot tell: nothing there to write through */
}

/* Whether the plan shows any host tree writable (a rw bind, an overlay): every protection but
 * hiding is against writes through one, and a path has a writable cover only if one exists. */
static bool any_writable_tree(const struct mount_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		if (!plan->ops[i].skipped && mount_op_is_bind(&plan->ops[i]) &&
		    plan->ops[i].kind != MOP_BIND_RO)
			return true;
	return false;
}

/* After the profile's entries: agentbox's own files read-only, its audit trail hidden, the
 * guarded paths, the protected names of every writable tree, and the pins that keep hidden
 * paths and overlay trees where they are. Without a writable tree only the hiding is done: the
 * rest would walk the host's paths (two dozen guarded ones) to find no cover for any. */
int mount_plan_protect(struct mount_plan *plan, const struct policy *p,
		       const struct mount_protect *protect, struct ab_err *e)
{
	bool writable = any_writable_tree(plan);

	for (size_t i = 0; writable && protect && i < protect->n; i++)
		if (plan_protect(plan, protect->paths[i], 0, false,
				 "agentbox's own file stays read-only", e) < 0)
			return -1;
	for (size_t i = 0; protect && i < protect->n_hidden; i++)
		if (plan_hide_own(plan, protect->hidden[i], e) < 0)
			return -1;
	for (size_t i = 0;
	     writable && protect && protect->guarded_files && i < protect->guarded_files->n; i++)
		if (plan_guard(plan, protect->guarded_files->v[i], e) < 0)
			return -1;
	for (size_t i = 0;
	     writable && protect && protect->guarded_dirs && i < protect->guarded_dirs->n; i++)
		if (plan_guard(plan, protect->guarded_dirs->v[i], e) < 0)
			return -1;
	if (writable && protect_trees(plan, p, e) < 0)
		return -1;
	for (size_t i = 0, n = plan->n; i < n; i++) {
		char dest[PATH_MAX];
		/* a hidden path, or an overlay whose changes promote writes back to its host path
		 */
		if (plan->ops[i].kind != MOP_HIDE && plan->ops[i].kind != MOP_OVERLAY)
			continue;
		snprintf(dest, sizeof(dest), "%s", plan->ops[i].dest); /* plan_push may move ops */
		if (plan_pin(plan, dest, e) < 0)
			return -1;
	}
	return 0;
}

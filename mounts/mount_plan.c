/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The mount plan: the policy's [filesystem] entries, and what agentbox adds itself (/proc, /dev,
 * a private /tmp), as a list of mount ops sorted parents first. Made in the supervisor, where
 * every bind's host path is resolved once; the protected, hidden and guarded paths it adds are
 * planned in mount_protect.c, and pid 1 applies the plan (mounts.c). */
#include "mounts.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mounts_internal.h"
#include "run_dir.h"

bool mount_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1)
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

static unsigned depth(const char *path)
{
	unsigned d = 0;

	for (; *path; path++)
		d += *path == '/';
	return path[-1] == '/' ? 0 : d;
}

int mount_plan_push(struct mount_plan *plan, struct mount_op op, struct ab_err *e)
{
	struct mount_op *n = realloc(plan->ops, (plan->n + 1) * sizeof(*n));
	struct mount_op *o;

	if (!n)
		return ab_fail(e, ENOMEM, "mount plan");
	plan->ops = n;
	o = &plan->ops[plan->n++];
	*o = op;
	o->dest = strdup(op.dest);
	o->source = op.source ? strdup(op.source) : NULL;
	o->target = op.target ? strdup(op.target) : NULL;
	if (!o->dest || (op.source && !o->source) || (op.target && !o->target))
		return ab_fail(e, ENOMEM, "mount plan");
	return 0;
}

void mount_plan_free(struct mount_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->ops[i].dest);
		free(plan->ops[i].source);
		free(plan->ops[i].target);
		free(plan->ops[i].upper);
		free(plan->ops[i].work);
	}
	for (size_t i = 0; i < plan->n_missing; i++) {
		free(plan->missing[i].dir);
		free(plan->missing[i].name);
		free(plan->missing[i].rest);
		free(plan->missing[i].root);
		free(plan->missing[i].rel);
	}
	free(plan->missing);
	plan->missing = NULL;
	plan->n_missing = 0;
	free(plan->ops);
	free(plan->changes_dir);
	plan->ops = NULL;
	plan->changes_dir = NULL;
	plan->n = 0;
}

static int at_error(const struct fs_entry *f, struct ab_err *e)
{
	if (f->at.line)
		return ab_context(e, "%s:%u", f->at.file, f->at.line);
	return ab_context(e, "%s", f->at.file);
}

static int check_reserved(const struct fs_entry *f, struct ab_err *e)
{
	if (mount_path_under(f->path, "/proc") || !strcmp(f->path, "/dev"))
		return ab_fail(e, 0, "%s is set up by agentbox itself", f->path),
		       ab_hint(e, "remove this entry (the sandbox gets its own /proc and /dev)"),
		       at_error(f, e);
	return 0;
}

/* The trees the command can write: where it could plant a symlink for a later run to follow. */
struct writable {
	char **roots;
	size_t n;
};

static const char *planted_in(const struct writable *w, const char *path)
{
	for (size_t i = 0; i < w->n; i++)
		if (mount_path_under(path, w->roots[i]))
			return w->roots[i];
	return NULL;
}

/* Like realpath(3), but a symlink met on the way is followed only when it lies outside every
 * writable tree of the profile; inside one, the sandboxed command may have planted it. */
static int resolve_bind_path(const char *path, const struct writable *w, char **out,
			     struct ab_err *e)
{
	char cur[PATH_MAX], rest[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
	int links = 0;

	cur[0] = '\0'; /* C strings throughout: only what they hold is written, not 4 KiB each */
	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return ab_fail(e, ENAMETOOLONG, "%s", path);
	while (rest[0]) {
		char *comp = rest + strspn(rest, "/"), *slash, *tail;
		struct stat st;
		ssize_t n;
		size_t clen;

		slash = strchr(comp, '/');
		clen = slash ? (size_t)(slash - comp) : strlen(comp);
		tail = slash ? slash : comp + clen;
		if (clen == 0)
			break;
		if ((clen == 1 && comp[0] == '.') ||
		    (clen == 2 && comp[0] == '.' && comp[1] == '.')) {
			if (clen == 2 && strrchr(cur, '/'))
				*strrchr(cur, '/') = '\0';
			memmove(rest, tail, strlen(tail) + 1);
			continue;
		}
		if (snprintf(next, sizeof(next), "%s/%.*s", cur, (int)clen, comp) >=
		    (int)sizeof(next))
			return ab_fail(e, ENAMETOOLONG, "%s", path);
		if (lstat(next, &st) < 0)
			return ab_fail(e, errno, "%s", next);
		if (!S_ISLNK(st.st_mode)) {
			memcpy(cur, next, strlen(next) + 1);
			memmove(rest, tail, strlen(tail) + 1);
			continue;
		}
		if (planted_in(w, next))
			return ab_fail(e, 0,
				       "%s is a symlink inside the writable tree %s, where the "
				       "sandboxed command could have planted it",
				       next, planted_in(w, next)),
			       ab_hint(e, "list the path it points to instead");
		if (++links > 40)
			return ab_fail(e, ELOOP, "%s", path);
		n = readlink(next, target, sizeof(target) - 1);
		if (n < 0)
			return ab_fail(e, errno, "readlink %s", next);
		target[n] = '\0';
		if (strlen(target) + strlen(tail) + 2 > sizeof(rest))
			return ab_fail(e, ENAMETOOLONG, "%s", path);
		memmove(rest + strlen(target) + 1, tail, strlen(tail) + 1);
		memcpy(rest, target, (size_t)n);
		rest[n] = '/';
		if (target[0] == '/')
			cur[0] = '\0';
	}
	*out = strdup(cur[0] ? cur : "/");
	return *out ? 0 : ab_fail(e, ENOMEM, "mount plan");
}

static int plan_entry(struct mount_plan *plan, const struct policy *p, const struct fs_entry *f,
		      const struct writable *w, struct ab_err *e)
{
	struct mount_op op = {.dest = f->path};
	char *resolved;
	int r;

	switch (f->kind) {
	case FS_TMPFS:
		op.kind = MOP_TMPFS;
		op.size = p->limits.tmpfs_size;
		return mount_plan_push(plan, op, e);
	case FS_HIDE:
		op.kind = MOP_HIDE;
		return mount_plan_push(plan, op, e);
	case FS_SYMLINK:
		op.kind = MOP_SYMLINK;
		op.target = f->target;
		return mount_plan_push(plan, op, e);
	case FS_RO:
	case FS_RW:
	case FS_OVERLAY:
		break;
	}
	op.kind = f->kind == FS_RO ? MOP_BIND_RO : f->kind == FS_RW ? MOP_BIND_RW : MOP_OVERLAY;
	if (resolve_bind_path(f->path, w, &resolved, e) < 0) {
		if (e->errnum == ENOENT && f->optional) {
			op.skipped = true;
			op.source = f->path;
			return mount_plan_push(plan, op, e);
		}
		if (e->errnum == ENOENT)
			ab_hint(e, "create it, or use %s-try to skip a missing path",
				fs_kind_name(f->kind));
		return ab_context(e, "%s %s", fs_kind_name(f->kind), f->path), at_error(f, e);
	}
	op.source = resolved;
	r = mount_plan_push(plan, op, e);
	free(resolved);
	return r;
}

/* The entry that decides what is at path: the deepest one covering it. */
const struct mount_op *mount_plan_deepest(const struct mount_plan *plan, const char *path,
					  bool skip_hides)
{
	const struct mount_op *best = NULL;

	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *o = &plan->ops[i];
		if (o->skipped || o->kind == MOP_SYMLINK || (skip_hides && o->kind == MOP_HIDE) ||
		    !mount_path_under(path, o->dest))
			continue;
		if (!best || strlen(o->dest) >= strlen(best->dest))
			best = o;
	}
	return best;
}

bool mount_op_is_bind(const struct mount_op *o)
{
	return o && (o->kind == MOP_BIND_RO || o->kind == MOP_BIND_RW || o->kind == MOP_OVERLAY);
}

/* Parents before children, whatever the order in the profile; equal depths keep their order. */
static void sort_by_depth(struct mount_plan *plan)
{
	for (size_t i = 1; i < plan->n; i++) {
		struct mount_op key = plan->ops[i];
		size_t j = i;
		while (j > 0 && depth(plan->ops[j - 1].dest) > depth(key.dest)) {
			plan->ops[j] = plan->ops[j - 1];
			j--;
		}
		plan->ops[j] = key;
	}
}

/* The host path behind path, where a bind shows it; NULL otherwise. */
static const char *host_path(const struct mount_plan *plan, const char *path, char *buf,
			     size_t size)
{
	const struct mount_op *o = mount_plan_deepest(plan, path, false);

	if (!mount_op_is_bind(o) ||
	    snprintf(buf, size, "%s%s", o->source, path + strlen(o->dest)) >= (int)size)
		return NULL;
	return buf;
}

/* HTTPS interception (trust_files): the trust files' directory, and the bundle over the system's
 * where the view shows that file. pid 1 mounts them once it has them; here it is checked that
 * the view has room for them, so that a profile that leaves none fails before the run. */
static int plan_trust(struct mount_plan *plan, const struct policy *p, struct ab_err *e)
{
	const struct mount_op *cover = mount_plan_deepest(plan, AGENTBOX_RUN_DIR, false);
	char host[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < p->n_fs; i++)
		if (mount_path_under(p->fs[i].path, AGENTBOX_RUN_DIR))
			return ab_fail(e, 0,
				       "%s is set up by agentbox itself when [http] rules are in "
				       "use (the run's CA)",
				       p->fs[i].path),
			       ab_hint(e, "remove this entry"), at_error(&p->fs[i], e);
	if (cover && cover->kind == MOP_HIDE)
		return ab_fail(
			   e, 0,
			   "hide %s leaves no room for the run's trust files in " AGENTBOX_RUN_DIR,
			   cover->dest),
		       ab_hint(e, "hide only what is below it, or list tmpfs = /run");
	if (mount_op_is_bind(cover) && (!host_path(plan, AGENTBOX_RUN_DIR, host, sizeof(host)) ||
					stat(host, &st) < 0 || !S_ISDIR(st.st_mode)))
		return ab_fail(e, 0,
			       "the view shows the host's %s, where " AGENTBOX_RUN_DIR
			       " cannot be made for the run's trust files ([http] rules)",
			       cover->dest),
		       ab_hint(e, "add tmpfs = /run (the sandbox's own /run), or stop listing %s",
			       cover->dest);
	if (mount_plan_push(plan,
			    (struct mount_op){.kind = MOP_TRUST,
					      .dest = AGENTBOX_RUN_DIR,
					      .implicit = true,
					      .why = "the run's CA certificate and bundle ([http] "
						     "rules: HTTPS interception)"},
			    e) < 0)
		return -1;
	if (!host_path(plan, TRUST_SYSTEM_BUNDLE, host, sizeof(host)) || stat(host, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	return mount_plan_push(plan,
			       (struct mount_op){.kind = MOP_TRUST,
						 .dest = TRUST_SYSTEM_BUNDLE,
						 .source = TRUST_BUNDLE_FILE,
						 .implicit = true,
						 .why = "the system's CA bundle with the run's CA"},
			       e);
}

static void writable_free(struct writable *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->roots[i]);
	free(w->roots);
}

static int writable_roots(const struct policy *p, struct writable *w, struct ab_err *e)
{
	memset(w, 0, sizeof(*w));
	if (!(w->roots = calloc(p->n_fs + 1, sizeof(*w->roots))))
		return ab_fail(e, ENOMEM, "mount plan");
	for (size_t i = 0; i < p->n_fs; i++) {
		char *r;
		if (p->fs[i].kind != FS_RW || !(r = realpath(p->fs[i].path, NULL)))
			continue;
		w->roots[w->n++] = r;
	}
	return 0;
}

int mount_plan_build(const struct policy *p, const struct mount_protect *protect, bool trust_files,
		     struct mount_plan *plan, struct ab_err *e)
{
	struct writable w;
	bool own_tmp = false;

	memset(plan, 0, sizeof(*plan));
	plan->tmpfs_size = p->limits.tmpfs_size;
	plan->changes_size = p->limits.changes_size;
	for (size_t i = 0; i < p->n_fs; i++) {
		if (check_reserved(&p->fs[i], e) < 0)
			return -1;
		own_tmp |= !strcmp(p->fs[i].path, "/tmp");
	}
	if (mount_plan_push(plan,
			    (struct mount_op){.kind = MOP_PROC,
					      .dest = "/proc",
					      .implicit = true,
					      .why = "procfs of the sandbox's pid namespace"},
			    e) < 0 ||
	    mount_plan_push(
		plan,
		(struct mount_op){
		    .kind = MOP_DEV, .dest = "/dev", .implicit = true, .why = "minimal /dev"},
		e) < 0)
		goto fail;
	if (!own_tmp && mount_plan_push(plan,
					(struct mount_op){.kind = MOP_TMPFS,
							  .dest = "/tmp",
							  .size = p->limits.tmpfs_size,
							  .implicit = true,
							  .why = "private /tmp"},
					e) < 0)
		goto fail;
	if (writable_roots(p, &w, e) < 0)
		goto fail;
	for (size_t i = 0; i < p->n_fs; i++) {
		if (plan_entry(plan, p, &p->fs[i], &w, e) < 0) {
			writable_free(&w);
			goto fail;
		}
	}
	writable_free(&w);
	if (mount_plan_protect(plan, p, protect, e) < 0 ||
	    (trust_files && plan_trust(plan, p, e) < 0))
		goto fail;
	sort_by_depth(plan);
	return 0;
fail:
	mount_plan_free(plan);
	return -1;
}

bool mount_plan_shows(const struct mount_plan *plan, const char *path)
{
	return mount_op_is_bind(mount_plan_deepest(plan, path, false));
}

const struct mount_op *mount_plan_tree(const struct mount_plan *plan, const struct mount_op *op)
{
	const struct mount_op *best = NULL;

	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *o = &plan->ops[i];
		if (!o->implicit && !o->skipped &&
		    (o->kind == MOP_BIND_RW || o->kind == MOP_OVERLAY) && o != op &&
		    mount_path_under(op->dest, o->dest) &&
		    (!best || strlen(o->dest) > strlen(best->dest)))
			best = o;
	}
	return best;
}

bool mount_plan_binds(const struct mount_plan *plan, const char *path)
{
	return mount_op_is_bind(mount_plan_deepest(plan, path, true));
}

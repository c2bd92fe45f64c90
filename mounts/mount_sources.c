/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The host trees a run shows, opened and cloned before pid 1 builds the view (mounts.h:
 * mounts_open_sources): each bind source opened without following a symlink and cloned with
 * its mount flags set, each overlay made, and the changes-size tmpfs under the overlays. */
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsops.h"
#include "mounts_internal.h"

static bool is_bind(const struct mount_op *op)
{
	return !op->skipped && mount_op_is_bind(op);
}

/* The kernel's own words for a refused fsconfig: the last error line of the context's log
 * ("e overlayfs: ..."), without its marker; "" when it logged none. */
static void kernel_reason(int fs, char *out, size_t size)
{
	char msg[512];
	ssize_t n;

	out[0] = '\0';
	while ((n = read(fs, msg, sizeof(msg) - 1)) > 0) {
		msg[n] = '\0';
		msg[strcspn(msg, "\n")] = '\0';
		if (msg[0] == 'e' && msg[1] == ' ')
			snprintf(out, size, " (%.*s)", (int)(size > 4 ? size - 4 : 0), msg + 2);
	}
}

static int set_layer(int fs, const char *key, const char *path, int fd, struct ab_err *e)
{
	char proc[64], why[256];
	int err;

	/* the layers go by the fds already opened without following symlinks */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fsconfig(fs, FSCONFIG_SET_STRING, key, proc, 0) == 0)
		return 0;
	err = errno;
	kernel_reason(fs, why, sizeof(why));
	ab_fail(e, err, "overlay %s %s%s", key, path, why);
	if (strcmp(key, "lowerdir"))
		ab_hint(
		    e, "the overlay's changes need a file system that can hold an overlay's upper "
		       "layer (not an overlay itself, as inside a sandbox whose tree is one): give "
		       "--changes a directory elsewhere, e.g. under /tmp");
	return -1;
}

/* A new overlayfs: the host tree read-only below, the run's upper directory above. */
static int overlay_tree(const struct mount_op *op, struct ab_err *e)
{
	static const char *const keys[] = {"lowerdir", "upperdir", "workdir"};
	const char *paths[] = {op->source, op->upper, op->work};
	int layer[3] = {-1, -1, -1}, fs = -1, mnt = -1;

	if ((fs = fsopen("overlay", FSOPEN_CLOEXEC)) < 0) {
		ab_fail(e, errno, "overlayfs is not available");
		goto out;
	}
	for (int i = 0; i < 3; i++)
		if ((layer[i] = mount_open_source(paths[i], e)) < 0 ||
		    set_layer(fs, keys[i], paths[i], layer[i], e) < 0)
			goto out;
	/* in a user namespace overlayfs keeps its metadata in user.overlay.* xattrs */
	if (fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int err = errno;
		char why[256];
		kernel_reason(fs, why, sizeof(why));
		ab_fail(e, err, "cannot create an overlay of %s%s", op->source, why);
		/* without the kernel's word: a permission, or else most likely the version */
		if (!why[0] && err == EACCES)
			ab_hint(e, "the sandbox's user cannot reach the tree or its changes "
				   "directory (with [sandbox] uid set, as root: leave uid unset)");
		else if (!why[0])
			ab_hint(e, "overlayfs must be allowed in user namespaces (Linux 5.11 or "
				   "later)");
		goto out;
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		ab_fail(e, errno, "cannot mount the overlay of %s", op->source);
out:
	for (int i = 0; i < 3; i++)
		if (layer[i] >= 0)
			close(layer[i]);
	if (fs >= 0)
		close(fs);
	return mnt;
}

/* Clones one bind source's mount tree (src: its O_PATH fd), flags set, ready to attach. */
static int clone_source(const struct mount_op *op, int src, bool *dir, struct ab_err *e)
{
	uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			 (op->kind == MOP_BIND_RO ? MOUNT_ATTR_RDONLY : 0);
	struct stat st;
	int tree;

	if (op->kind == MOP_OVERLAY) {
		*dir = true;
		return overlay_tree(op, e);
	}
	if (fstat(src, &st) < 0)
		return ab_fail(e, errno, "fstat %s", op->source);
	*dir = S_ISDIR(st.st_mode);
	tree =
	    open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return ab_fail(e, errno, "cannot clone mount of %s", op->source);
	if (mount_set_attr(tree, attrs, true) < 0) {
		int err = errno;
		close(tree);
		return ab_fail(e, err, "cannot set mount flags on %s", op->source);
	}
	return tree;
}

/* Op i's source, opened. Below a bind source already open (a protected path in its tree, a
 * nested bind) it is opened from there: one lookup of the tree's path serves all of it, so
 * every bind from that tree comes from the same directory, and a rename race on the path
 * has one moment to hit instead of one per bind. */
static int open_op_source(const struct mount_plan *plan, const int *opened, size_t i,
			  struct ab_err *e)
{
	const struct mount_op *op = &plan->ops[i];
	size_t best = i;

	for (size_t j = 0; j < i; j++) {
		const struct mount_op *o = &plan->ops[j];
		if (opened[j] >= 0 && o->kind != MOP_OVERLAY &&
		    mount_path_under(op->source, o->source) &&
		    (best == i || strlen(o->source) > strlen(plan->ops[best].source)))
			best = j;
	}
	if (best < i) {
		const char *above = plan->ops[best].source;
		const char *rel = op->source + (strcmp(above, "/") ? strlen(above) : 0);
		/* the same source twice (a file's "." would not open): the same fd again */
		int fd = *rel ? mount_openat2(opened[best], rel + 1, O_PATH,
					      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
						  RESOLVE_NO_MAGICLINKS)
			      : fcntl(opened[best], F_DUPFD_CLOEXEC, 0);
		if (fd >= 0)
			return fd;
		return ab_fail(e, errno, "cannot open %s", op->source),
		       ab_hint(e, errno == ELOOP
				      ? "a symlink appeared on the path after the profile "
					"was read; check who can write there"
				      : "check that nothing moves it while agentbox starts");
	}
	return mount_open_source(op->source, e);
}

/* [limits] changes-size: the overlays' upper and work directories go on a tmpfs of that size,
 * mounted over the changes directory in the sandbox's own mount namespace (the host's view is
 * unchanged), with what is there already (the protected paths' stand-ins) copied in. The
 * supervisor gets the mount, to copy the upper layers out when the run ends. */
static int changes_tmpfs(const struct mount_plan *plan, struct ab_err *e)
{
	static const char *const layers[] = {"upper", "work"};
	int dir, mnt, rc = 0;

	dir = mount_openat2(AT_FDCWD, plan->changes_dir, O_PATH | O_DIRECTORY,
			    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (dir < 0)
		return ab_fail(e, errno, "cannot open %s", plan->changes_dir);
	if ((mnt = mount_detached_tmpfs(plan->changes_size, "0700", 0, e)) < 0) {
		close(dir);
		return -1;
	}
	for (size_t i = 0; i < 2 && rc == 0; i++) {
		int from = openat(dir, layers[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int to = -1;
		if (from < 0 || mkdirat(mnt, layers[i], 0700) < 0 ||
		    (to = openat(mnt, layers[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			rc = ab_fail(e, errno, "changes-size: cannot set up %s/%s",
				     plan->changes_dir, layers[i]);
		} else {
			rc = fs_copy_tree(from, to, 0, e);
			close(to);
		}
		if (from >= 0)
			close(from);
	}
	if (rc == 0 &&
	    move_mount(mnt, "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		rc = ab_fail(e, errno, "changes-size: cannot mount a tmpfs on %s",
			     plan->changes_dir);
	close(dir);
	if (rc < 0) {
		close(mnt);
		if (!strstr(e->msg, "; fix: "))
			ab_hint(e, "remove [limits] changes-size to keep the changes on disk");
		return -1;
	}
	return mnt;
}

static int clone_sources(const struct mount_plan *plan, struct mount_sources *out, struct ab_err *e)
{
	int *opened = malloc((plan->n ? plan->n : 1) * sizeof(*opened));
	int rc = 0;

	if (!opened)
		return ab_fail(e, ENOMEM, "mount plan");
	for (size_t i = 0; i < plan->n; i++)
		opened[i] = -1;
	for (size_t i = 0; i < plan->n && rc == 0; i++) {
		const struct mount_op *op = &plan->ops[i];
		if (!is_bind(op))
			continue;
		if (op->kind != MOP_OVERLAY && (opened[i] = open_op_source(plan, opened, i, e)) < 0)
			rc = -1;
		else if ((out->fds[i] = clone_source(op, opened[i], &out->dirs[i], e)) < 0)
			rc = -1;
		if (rc < 0)
			ab_context(e, "mount %s %s", mount_op_name(op->kind), op->dest);
	}
	for (size_t i = 0; i < plan->n; i++)
		if (opened[i] >= 0)
			close(opened[i]);
	free(opened);
	return rc;
}

int mounts_open_sources(const struct mount_plan *plan, struct mount_sources *out, struct ab_err *e)
{
	out->changes_fs = -1;
	/* before the overlays are made: their upper layers are on it */
	if (plan->changes_size && plan->changes_dir &&
	    (out->changes_fs = changes_tmpfs(plan, e)) < 0)
		return -1;
	out->fds = calloc(plan->n ? plan->n : 1, sizeof(*out->fds));
	out->dirs = calloc(plan->n ? plan->n : 1, sizeof(*out->dirs));
	out->n = plan->n;
	if (!out->fds || !out->dirs)
		return ab_fail(e, ENOMEM, "mount plan");
	for (size_t i = 0; i < plan->n; i++)
		out->fds[i] = -1;
	/* every tree is cloned before the staging mount exists: no clone can contain it */
	return clone_sources(plan, out, e);
}

void mounts_close_sources(struct mount_sources *src)
{
	for (size_t i = 0; src->fds && i < src->n; i++)
		if (src->fds[i] >= 0)
			close(src->fds[i]);
	free(src->fds);
	free(src->dirs);
	src->fds = NULL;
	src->dirs = NULL;
	if (src->changes_fs >= 0)
		close(src->changes_fs);
	src->changes_fs = -1;
}

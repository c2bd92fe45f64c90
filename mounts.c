/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The filesystem view, applied. The plan is made in the supervisor (mount_plan.c,
 * mount_protect.c); the sandbox's pid 1 applies it here with the new mount API, holding every
 * source and destination by fd so no path is resolved twice: a symlink swapped in after the plan
 * was made makes the run fail instead of redirecting a bind. */
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsops.h"
#include "mounts/mounts_internal.h"

#define HIDE_TMPFS_SIZE 4096

const char *mount_op_name(enum mount_op_kind k)
{
	static const char *const names[] = {"ro",   "rw",  "tmpfs",   "hide", "symlink",
					    "proc", "dev", "overlay", "trust"};
	return names[k];
}

struct root {
	int fd;		 /* the new root's tmpfs */
	dev_t owned[64]; /* tmpfs mounts agentbox made: the only places it creates mount points */
	size_t n_owned;
};

int mount_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC), .resolve = resolve};
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

static int in_root(struct root *r, const char *dest, int flags)
{
	return mount_openat2(r->fd, dest[1] ? dest + 1 : ".", flags,
			     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

static bool owned(const struct root *r, dev_t dev)
{
	for (size_t i = 0; i < r->n_owned; i++)
		if (r->owned[i] == dev)
			return true;
	return false;
}

static int own(struct root *r, int mntfd, struct ab_err *e)
{
	struct stat st;

	if (fstat(mntfd, &st) < 0)
		return ab_fail(e, errno, "fstat tmpfs");
	if (r->n_owned == sizeof(r->owned) / sizeof(r->owned[0]))
		return ab_fail(e, 0, "more than %zu tmpfs mounts", r->n_owned),
		       ab_hint(e, "use fewer tmpfs/hide entries");
	r->owned[r->n_owned++] = st.st_dev;
	return 0;
}

/* dest's parent directory, a copy to free (NULL with errno set), and its last name. On the
 * heap, not in a PATH_MAX buffer: ensure() recurses once per missing level, and each page of
 * stack pid 1 touches costs it a fault. */
static char *split_parent(const char *dest, const char **name)
{
	const char *slash = strrchr(dest, '/');
	size_t n = slash == dest ? 1 : (size_t)(slash - dest);
	char *parent;

	if (n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if ((parent = strndup(dest, n)))
		*name = slash + 1;
	return parent;
}

static int ensure(struct root *r, const char *dest, bool dir, struct ab_err *e);

/* A new directory or empty file NAME in dirfd to mount on; like O_CREAT | O_EXCL, neither call
 * follows a symlink at NAME (EEXIST), and mknodat leaves no fd to close. */
static int make_entry(int dirfd, const char *name, bool dir)
{
	return dir ? mkdirat(dirfd, name, 0755) : mknodat(dirfd, name, S_IFREG | 0644, 0);
}

/* The directory a new entry goes in, opened in *pfd: 0, or 1 when it is a host directory (no
 * entry may be made there), or -1 on error. The new root itself is held open already (the
 * common case: no lookup at all); close *pfd with put_parent. */
static int owned_parent(struct root *r, const char *parent, int *pfd, struct ab_err *e)
{
	struct stat st;

	if (!strcmp(parent, "/")) {
		*pfd = r->fd; /* agentbox's own tmpfs, owned from the start */
		return 0;
	}
	if ((*pfd = ensure(r, parent, true, e)) < 0)
		return -1;
	if (fstat(*pfd, &st) < 0 || !owned(r, st.st_dev)) {
		close(*pfd);
		*pfd = -1;
		return 1;
	}
	return 0;
}

static void put_parent(const struct root *r, int pfd)
{
	if (pfd != r->fd)
		close(pfd);
}

/* Opens dest inside the new root, creating it (and its parents) as a directory or an empty file
 * when missing, but only on agentbox's own tmpfs mounts: never on a host directory. */
static int ensure(struct root *r, const char *dest, bool dir, struct ab_err *e)
{
	const char *name;
	char *parent = split_parent(dest, &name);
	int fd, pfd, rc;

	if (!parent)
		return ab_fail(e, errno, "mount point %s", dest);
	/* an entry of the root's own fresh tmpfs is new but for a second mount on it: made first,
	 * without asking (EEXIST then), which saves a failed lookup per mount point; / itself
	 * (ro = /) is looked up as before */
	if (strcmp(parent, "/") || !*name) {
		fd = in_root(r, dest, O_PATH);
		if (fd >= 0 || errno != ENOENT) {
			int err = errno;
			free(parent);
			return fd >= 0 ? fd : ab_fail(e, err, "mount point %s", dest);
		}
	}
	if ((rc = owned_parent(r, parent, &pfd, e)) != 0) {
		if (rc > 0)
			ab_fail(e, 0, "cannot create mount point %s: %s is a host directory", dest,
				parent),
			    ab_hint(e, "create %s on the host, or list a path that exists", dest);
		free(parent);
		return -1;
	}
	free(parent);
	rc = make_entry(pfd, name, dir);
	put_parent(r, pfd);
	if (rc < 0 && errno != EEXIST)
		return ab_fail(e, errno, "cannot create mount point %s", dest);
	fd = in_root(r, dest, O_PATH);
	if (fd < 0)
		return ab_fail(e, errno, "mount point %s", dest);
	return fd;
}

static int attach(struct root *r, int mntfd, const char *dest, bool dir, struct ab_err *e)
{
	int dfd = ensure(r, dest, dir, e);
	int rc;

	if (dfd < 0)
		return -1;
	rc = move_mount(mntfd, "", dfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	close(dfd);
	if (rc < 0)
		return ab_fail(e, errno, "cannot mount on %s", dest);
	return 0;
}

int mount_set_attr(int mntfd, uint64_t set, bool recursive)
{
	struct mount_attr attr = {.attr_set = set};
	return mount_setattr(mntfd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
			     sizeof(attr));
}

/* A detached tmpfs mount; the caller attaches it. */
int mount_detached_tmpfs(uint64_t size, const char *mode, unsigned attrs, struct ab_err *e)
{
	char sz[32], inodes[32];
	int fs, mnt;

	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	/* inodes cost memory too: as many as 1 KiB files would need */
	snprintf(inodes, sizeof(inodes), "%llu", (unsigned long long)(size / 1024 + 1024));
	fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return ab_fail(e, errno, "fsopen tmpfs");
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", sz, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int err = errno;
		close(fs);
		return ab_fail(e, err, "tmpfs (size %s)", sz);
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | attrs);
	close(fs);
	if (mnt < 0)
		return ab_fail(e, errno, "fsmount tmpfs");
	return mnt;
}

static int mount_tmpfs(struct root *r, const char *dest, uint64_t size, const char *mode,
		       struct ab_err *e)
{
	int mnt = mount_detached_tmpfs(size, mode, 0, e);
	int rc;

	if (mnt < 0)
		return ab_context(e, "tmpfs %s", dest);
	rc = own(r, mnt, e) < 0 ? -1 : attach(r, mnt, dest, true, e);
	close(mnt);
	return rc;
}

/* Opens a bind source on the host; a symlink anywhere on the path is refused, so a swap made
 * after the plan was resolved fails the run instead of redirecting the bind. */
int mount_open_source(const char *source, struct ab_err *e)
{
	int fd =
	    mount_openat2(AT_FDCWD, source, O_PATH, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

	if (fd >= 0)
		return fd;
	ab_fail(e, errno, "cannot open %s", source);
	if (errno == ELOOP)
		ab_hint(e, "a symlink appeared on the path after the profile was read; check who "
			   "can write there");
	return -1;
}

/* Clones the mount tree at src (an O_PATH fd) onto dest with the given attributes. */
static int bind_fd(struct root *r, int src, const char *source, const char *dest, uint64_t attrs,
		   struct ab_err *e)
{
	struct stat st;
	int tree, rc;

	if (fstat(src, &st) < 0)
		return ab_fail(e, errno, "fstat %s", source);
	tree =
	    open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return ab_fail(e, errno, "cannot clone mount of %s", source);
	if (mount_set_attr(tree, attrs, true) < 0) {
		int err = errno;
		close(tree);
		return ab_fail(e, err, "cannot set mount flags on %s", source);
	}
	rc = attach(r, tree, dest, S_ISDIR(st.st_mode), e);
	close(tree);
	return rc;
}

static int bind(struct root *r, const char *source, const char *dest, uint64_t attrs,
		struct ab_err *e)
{
	int src = mount_open_source(source, e), rc;

	if (src < 0)
		return -1;
	rc = bind_fd(r, src, source, dest, attrs, e);
	close(src);
	return rc;
}

static int hide(struct root *r, const char *dest, struct ab_err *e)
{
	struct stat st;
	int fd = in_root(r, dest, O_PATH), rc, mnt;

	if (fd < 0 && errno == ENOENT)
		return 0; /* not in the view: already hidden */
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = errno;
		if (fd >= 0)
			close(fd);
		return ab_fail(e, rc, "hide %s", dest);
	}
	close(fd);
	if (!S_ISDIR(st.st_mode))
		/* /dev/null on a nodev mount: exists, but opening it fails with EACCES */
		return bind(r, "/dev/null", dest,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID |
				MOUNT_ATTR_NOEXEC,
			    e);
	mnt = mount_detached_tmpfs(HIDE_TMPFS_SIZE, "0555", MOUNT_ATTR_RDONLY, e);
	if (mnt < 0)
		return ab_context(e, "hide %s", dest);
	rc = attach(r, mnt, dest, true, e);
	close(mnt);
	return rc;
}

static int make_symlink(struct root *r, const char *target, const char *dest, struct ab_err *e)
{
	const char *name;
	char *parent = split_parent(dest, &name);
	int pfd, rc;

	if (!parent)
		return ab_fail(e, errno, "symlink %s", dest);
	if ((rc = owned_parent(r, parent, &pfd, e)) != 0) {
		if (rc > 0)
			ab_fail(e, 0, "cannot create symlink %s: %s is a host directory", dest,
				parent);
		free(parent);
		return -1;
	}
	free(parent);
	rc = symlinkat(target, pfd, name);
	put_parent(r, pfd);
	if (rc < 0)
		return ab_fail(e, errno, "symlink %s -> %s", dest, target);
	return 0;
}

/* The kernel mounts a new procfs only where an uncovered one is visible. */
static int proc_hint(struct ab_err *e)
{
	if (e->errnum != EPERM)
		return -1;
	return ab_hint(e, "the /proc agentbox runs under is partly covered (a container's masked "
			  "paths, or bwrap run as root); run where /proc is not masked, e.g. "
			  "Docker/podman --security-opt systempaths=unconfined, Kubernetes "
			  "procMount: Unmasked, or bwrap as an ordinary user");
}

/* This user namespace may have no children: a per-namespace limit, written through the new
 * procfs while pid 1 still has its capabilities (beside the seccomp rules). */
static int limit_userns(int proc, struct ab_err *e)
{
	int fd = openat(proc, "sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return ab_fail(e, errno, "limiting nested user namespaces");
	w = write(fd, "0", 1);
	close(fd);
	return w == 1 ? 0 : ab_fail(e, w < 0 ? errno : EIO, "limiting nested user namespaces");
}

/* A command that is root on the host (uid 0 mapped to itself) passes the uid checks of the
 * kernel's global tunables: /proc/sys, sysrq-trigger, irq and bus become read-only. */
static int guard_proc(int proc, struct ab_err *e)
{
	static const char *const kernel[] = {"sys", "sysrq-trigger", "irq", "bus"};

	for (size_t i = 0; i < sizeof(kernel) / sizeof(kernel[0]); i++) {
		int tree =
		    open_tree(proc, kernel[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		int rc;
		if (tree < 0 && errno == ENOENT)
			continue;
		if (tree < 0)
			return ab_fail(e, errno, "cannot clone /proc/%s", kernel[i]);
		rc = mount_set_attr(tree,
				    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					MOUNT_ATTR_NOEXEC,
				    true) < 0 ||
		     move_mount(tree, "", proc, kernel[i], MOVE_MOUNT_F_EMPTY_PATH) < 0;
		close(tree);
		if (rc)
			return ab_fail(e, errno, "cannot make /proc/%s read-only", kernel[i]);
	}
	return 0;
}

static int mount_proc(struct root *r, const char *dest, bool guard, bool no_userns,
		      struct ab_err *e)
{
	int fs = fsopen("proc", FSOPEN_CLOEXEC), mnt, rc;

	if (fs < 0)
		return ab_fail(e, errno, "fsopen proc");
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		rc = errno;
		close(fs);
		return ab_fail(e, rc, "cannot mount proc"), proc_hint(e);
	}
	mnt =
	    fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	close(fs);
	if (mnt < 0)
		return ab_fail(e, errno, "cannot mount proc"), proc_hint(e);
	rc = no_userns ? limit_userns(mnt, e) : 0;
	if (rc == 0)
		rc = attach(r, mnt, dest, true, e);
	if (rc == 0 && guard)
		rc = guard_proc(mnt, e);
	close(mnt);
	return rc;
}

/* A detached devpts instance of the sandbox's own. */
static int new_devpts(struct ab_err *e)
{
	int fs = fsopen("devpts", FSOPEN_CLOEXEC), mnt, rc;

	if (fs < 0)
		return ab_fail(e, errno, "fsopen devpts");
	if (fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		rc = errno;
		close(fs);
		return ab_fail(e, rc, "cannot mount devpts");
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	close(fs);
	return mnt < 0 ? ab_fail(e, errno, "fsmount devpts") : mnt;
}

/* Mounts mnt on NAME, a new entry of /dev, held by dev (no path walk needed: agentbox made that
 * directory a moment ago and nothing else can write it). */
static int dev_entry(int dev, int mnt, const char *name, bool dir, struct ab_err *e)
{
	if (make_entry(dev, name, dir) < 0)
		return ab_fail(e, errno, "/dev/%s", name);
	if (move_mount(mnt, "", dev, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return ab_fail(e, errno, "cannot mount /dev/%s", name);
	return 0;
}

static int dev_node(int dev, const char *name, struct ab_err *e)
{
	char src[32];
	int fd, tree, rc;

	snprintf(src, sizeof(src), "/dev/%s", name);
	if ((fd = mount_open_source(src, e)) < 0)
		return -1;
	tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	close(fd);
	if (tree < 0)
		return ab_fail(e, errno, "cannot clone %s", src);
	rc = mount_set_attr(tree, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false) < 0
		 ? ab_fail(e, errno, "cannot set mount flags on %s", src)
		 : dev_entry(dev, tree, name, false, e);
	close(tree);
	return rc;
}

static int fill_dev(struct root *r, int dev, uint64_t shm_size, struct ab_err *e)
{
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
	static const char *const links[][2] = {
	    {"pts/ptmx", "ptmx"},	   {"/proc/self/fd", "fd"},
	    {"/proc/self/fd/0", "stdin"},  {"/proc/self/fd/1", "stdout"},
	    {"/proc/self/fd/2", "stderr"},
	};
	int mnt, rc;

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (dev_node(dev, nodes[i], e) < 0)
			return -1;
	if ((mnt = new_devpts(e)) < 0)
		return -1;
	rc = dev_entry(dev, mnt, "pts", true, e);
	close(mnt);
	if (rc < 0 || (mnt = mount_detached_tmpfs(shm_size, "1777", 0, e)) < 0)
		return -1;
	rc = own(r, mnt, e) < 0 ? -1 : dev_entry(dev, mnt, "shm", true, e);
	close(mnt);
	for (size_t i = 0; rc == 0 && i < sizeof(links) / sizeof(links[0]); i++)
		if (symlinkat(links[i][0], dev, links[i][1]) < 0)
			rc = ab_fail(e, errno, "symlink /dev/%s", links[i][1]);
	return rc;
}

/* /dev is a directory of the root's tmpfs, read-only with it: what is written there (the nodes,
 * pts, shm) are mounts of their own. A tmpfs of its own cost one more superblock to make and
 * to take down at every run, for a directory nothing may write (Landlock's rules never let the
 * command create entries in /dev). */
static int mount_dev(struct root *r, uint64_t shm_size, struct ab_err *e)
{
	int dev = ensure(r, "/dev", true, e), rc;

	if (dev < 0)
		return -1;
	/* 0755 whatever the caller's umask, which the command keeps */
	if (fchmodat(r->fd, "dev", 0755, 0) < 0)
		rc = ab_fail(e, errno, "chmod /dev");
	else
		rc = fill_dev(r, dev, shm_size, e);
	close(dev);
	return rc;
}

static int apply_op(struct root *r, const struct mount_plan *plan, const struct mount_op *op,
		    int tree, bool dir, struct ab_err *e)
{
	if (op->skipped)
		return 0;
	switch (op->kind) {
	case MOP_BIND_RO:
	case MOP_BIND_RW:
	case MOP_OVERLAY:
		return attach(r, tree, op->dest, dir, e);
	case MOP_TMPFS:
		return mount_tmpfs(r, op->dest, op->size,
				   !strcmp(op->dest, "/tmp") ? "1777" : "0755", e);
	case MOP_HIDE:
		return hide(r, op->dest, e);
	case MOP_SYMLINK:
		return make_symlink(r, op->target, op->dest, e);
	case MOP_PROC:
		return mount_proc(r, op->dest, plan->guard_proc, plan->limit_userns, e);
	case MOP_DEV:
		return mount_dev(r, plan->tmpfs_size, e);
	case MOP_TRUST: {
		/* the mount point only: pid 1 mounts on it once it has the files */
		int fd = ensure(r, op->dest, op->source == NULL, e);
		return fd < 0 ? -1 : close(fd);
	}
	}
	return ab_fail(e, EINVAL, "unknown mount kind");
}

/* The new root is attached at a staging directory of this (private) mount namespace. */
static int stage_root(struct root *r, struct ab_err *e)
{
	static const char *const stages[] = {"/tmp", "/mnt", "/var/tmp", "/run"};
	int mnt;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return ab_fail(e, errno, "cannot make mounts private");
	mnt = mount_detached_tmpfs(1024 * 1024, "0755", 0, e);
	if (mnt < 0)
		return ab_context(e, "new root");
	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		if (move_mount(mnt, "", AT_FDCWD, stages[i], MOVE_MOUNT_F_EMPTY_PATH) == 0) {
			r->fd = mnt;
			return own(r, mnt, e);
		}
	}
	close(mnt);
	return ab_fail(e, errno,
		       "no directory to stage the new root on (tried /tmp, /mnt, "
		       "/var/tmp, /run)");
}

static int pivot(struct root *r, struct ab_err *e)
{
	if (mount_set_attr(r->fd, MOUNT_ATTR_RDONLY, false) < 0)
		return ab_fail(e, errno, "cannot make the new root read-only");
	if (fchdir(r->fd) < 0)
		return ab_fail(e, errno, "chdir to the new root");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return ab_fail(e, errno, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return ab_fail(e, errno, "cannot detach the old root");
	if (chdir("/") < 0)
		return ab_fail(e, errno, "chdir /");
	return 0;
}

int mounts_apply(const struct mount_plan *plan, const struct mount_sources *src, struct ab_err *e)
{
	struct root r = {.fd = -1};
	int rc = stage_root(&r, e);

	for (size_t i = 0; i < plan->n && rc == 0; i++) {
		rc = apply_op(&r, plan, &plan->ops[i], src->fds[i], src->dirs[i], e);
		if (rc < 0)
			ab_context(e, "mount %s %s", mount_op_name(plan->ops[i].kind),
				   plan->ops[i].dest);
	}
	if (rc == 0)
		rc = pivot(&r, e);
	if (r.fd >= 0)
		close(r.fd);
	return rc;
}

/* ---------- after the pivot ---------- */

int mounts_new_tmpfs(uint64_t size, const char *mode, struct ab_err *e)
{
	return mount_detached_tmpfs(size, mode, MOUNT_ATTR_NOEXEC, e);
}

/* path in the view, now the process's root: symlinks are followed inside it */
static int view_open(const char *path, struct ab_err *e)
{
	int fd = mount_openat2(AT_FDCWD, path, O_PATH, RESOLVE_NO_MAGICLINKS);

	return fd < 0 ? ab_fail(e, errno, "%s", path) : fd;
}

int mounts_attach_ro(int mntfd, const char *dest, struct ab_err *e)
{
	int dfd, rc;

	if (mount_set_attr(
		mntfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
		true) < 0)
		return ab_fail(e, errno, "cannot make the mount for %s read-only", dest);
	if ((dfd = view_open(dest, e)) < 0)
		return -1;
	rc = move_mount(mntfd, "", dfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	close(dfd);
	return rc < 0 ? ab_fail(e, errno, "cannot mount on %s", dest) : 0;
}

int mounts_bind_ro(const char *from, const char *dest, struct ab_err *e)
{
	int src = view_open(from, e), tree, rc;

	if (src < 0)
		return -1;
	tree = open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	close(src);
	if (tree < 0)
		return ab_fail(e, errno, "cannot clone mount of %s", from);
	rc = mounts_attach_ro(tree, dest, e);
	close(tree);
	return rc;
}

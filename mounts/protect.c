/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Placeholders for protected paths a rw tree does not have.
 *
 * Each rw tree has a record, $XDG_STATE_HOME/agentbox/protect/SHA256(ROOT), a line per
 * placeholder path below ROOT. Every run that protects something in the tree holds a shared
 * lock on the record while it lives; a placeholder is recorded before it is made. At its end a
 * run takes the lock exclusively if it can: then no other run has the tree mounted, and the
 * placeholders still empty are removed, the record emptied. A run that cannot is not the last,
 * and leaves that to whoever is; a killed run leaves it to the next run's end. Removing a
 * placeholder another run still has mounted would lift that run's protection (the kernel
 * detaches a mount whose mount point is unlinked elsewhere), which is what the lock prevents. */
#include "protect.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "digest.h"
#include "fsops.h"

#define RECORD_MAX (1 << 20) /* larger is not a record agentbox wrote: left alone */

/* path below dirfd, no symlink on the way. */
static int open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {.flags = (uint64_t)flags | O_NOFOLLOW | O_CLOEXEC,
			       .resolve =
				   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* A directory, with no symlink on the path; below dirfd only, when path is relative. */
static int open_dir(int dirfd, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					  (path[0] == '/' ? 0 : RESOLVE_BENEATH)};
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* The record's directory may be within reach of a command that has $HOME bound read-write: no
 * symlink on its path, and the record must be a plain file of the caller's own, so that a
 * root caller cannot be made to write (or truncate) somewhere else. */
static int open_record(const char *root, struct ab_err *e)
{
	char dir[PATH_MAX], hex[SHA256_HEX_LEN + 1];
	struct stat st;
	int dfd, fd;

	if (fs_state_dir("protect", dir, sizeof(dir), e) < 0 || fs_mkdirs(dir, e) < 0)
		return ab_context(e, "the record of protected placeholders");
	if (sha256_hex(root, strlen(root), hex) < 0)
		return ab_fail(e, 0, "sha256");
	if ((dfd = open_dir(AT_FDCWD, dir)) < 0)
		return ab_fail(e, errno, "cannot open %s", dir),
		       ab_hint(e, "it must be a directory with no symlink on its path");
	fd = openat(dfd, hex, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open %s/%s", dir, hex);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid()) {
		close(fd);
		return ab_fail(e, 0, "%s/%s is not agentbox's own record", dir, hex),
		       ab_hint(e, "remove it (it must be a plain file of yours with one link)");
	}
	if (flock(fd, LOCK_SH) < 0) {
		int err = errno;
		close(fd);
		return ab_fail(e, err, "cannot lock %s/%s", dir, hex);
	}
	return fd;
}

/* The tree's record, locked shared, and its root: opened on the first protected path in that
 * tree. Returns its index in h. */
static int hold_tree(struct protect_hold *h, const char *root, struct ab_err *e)
{
	struct protect_tree *trees;

	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->trees[i].root, root))
			return (int)i;
	if (!(trees = realloc(h->trees, (h->n + 1) * sizeof(*trees))))
		return ab_fail(e, ENOMEM, "protect");
	h->trees = trees;
	trees[h->n] = (struct protect_tree){.root = strdup(root), .record = -1, .fd = -1};
	if (!trees[h->n].root)
		return ab_fail(e, ENOMEM, "protect");
	h->n++;
	/* resolved when the plan was made: a link on the path now is a swap */
	if ((trees[h->n - 1].fd = open_dir(AT_FDCWD, root)) < 0)
		return ab_fail(e, errno, "cannot open %s", root);
	if ((trees[h->n - 1].record = open_record(root, e)) < 0)
		return -1;
	return (int)h->n - 1;
}

/* An empty directory, or a file with the stand-in's content (mount_op.stub). */
static int make_standin(int dirfd, const char *name, const char *stub)
{
	size_t n = stub ? strlen(stub) : 0;
	int fd, rc = 0;

	if (!stub)
		return mkdirat(dirfd, name, 0755);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (n && fs_write_all(fd, stub, n) < 0)
		rc = -1;
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

static int make_placeholder(const struct mount_op *op, const struct protect_tree *t,
			    struct ab_err *e)
{
	const char *rel = op->source + (strcmp(t->root, "/") ? strlen(t->root) + 1 : 1);
	const char *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	char parent[PATH_MAX], line[PATH_MAX + 1];
	int n = snprintf(line, sizeof(line), "%s\n", rel), fd;

	/* recorded first: a run killed between the two leaves a line for nothing, not the
	 * reverse */
	if (n < 0 || (size_t)n >= sizeof(line) || fs_write_all(t->record, line, (size_t)n) < 0)
		return ab_fail(e, errno, "cannot record the placeholder %s", op->source);
	snprintf(parent, sizeof(parent), "%.*s", (int)(name - rel), rel);
	fd = name == rel ? t->fd : open_dir(t->fd, parent);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open %s/%s", t->root, parent);
	if (make_standin(fd, name, op->stub) < 0 && errno != EEXIST) { /* another run made it */
		int err = errno;
		if (fd != t->fd)
			close(fd);
		return ab_fail(e, err, "cannot create the placeholder %s", op->source),
		       ab_hint(e,
			       "an empty directory there keeps the command from creating that "
			       "protected path: make its directory writable, use overlay instead "
			       "of rw, or unprotect it");
	}
	if (fd != t->fd)
		close(fd);
	return 0;
}

/* A shared lock on the protected entry itself, held for the run: whatever record another run
 * keeps (another state directory, another tree root above this one), none removes a stand-in
 * this run has mounted, since removing takes an exclusive lock on it. An entry this run cannot
 * open (unreadable, a link) is no stand-in of agentbox's. An existing one may be another run's
 * stand-in that was removed before this run got here: then pid 1 cannot open it, and the
 * run stops. */
static int hold_path(struct protect_hold *h, const struct mount_op *op,
		     const struct protect_tree *t, struct ab_err *e)
{
	const char *rel = op->source + (strcmp(t->root, "/") ? strlen(t->root) + 1 : 1);
	int fd = open_beneath(t->fd, rel, O_RDONLY | O_NONBLOCK), *held;

	if (fd < 0)
		return 0;
	if (!(held = realloc(h->held, (h->n_held + 1) * sizeof(*held)))) {
		close(fd);
		return ab_fail(e, ENOMEM, "protect");
	}
	h->held = held;
	h->held[h->n_held++] = fd;
	if (flock(fd, LOCK_SH) < 0)
		return ab_fail(e, errno, "cannot lock %s", op->source);
	return 0;
}

/* Every failure stops the run with 125; say what to do about the ones without a fix of their
 * own. */
static int protect_error(struct ab_err *e)
{
	if (!strstr(e->msg, "; fix: "))
		ab_hint(e, "protecting a path in an rw tree needs its directory and agentbox's "
			   "state directory writable; use overlay instead of rw, or unprotect it");
	return -1;
}

int protect_prepare(const struct mount_plan *plan, struct protect_hold *h, struct ab_err *e)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		const struct mount_op *tree = op->protects ? mount_plan_tree(plan, op) : NULL;
		int t;
		if (!tree || tree->kind != MOP_BIND_RW)
			continue;
		if ((t = hold_tree(h, tree->source, e)) < 0)
			return protect_error(e);
		if ((op->placeholder && make_placeholder(op, &h->trees[t], e) < 0) ||
		    hold_path(h, op, &h->trees[t], e) < 0)
			return protect_error(e);
	}
	return 0;
}

/* A file stand-in still as it was made: no more than the two bytes of ".\n", nothing else. */
static bool untouched_stub(int fd)
{
	char buf[3];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);
	return n == 0 || (n == 2 && buf[0] == '.' && buf[1] == '\n');
}

/* rel, if it is still a placeholder: an empty directory, or an untouched file stand-in. */
static void remove_placeholder(int rootfd, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	const char *name = slash ? slash + 1 : rel;
	char parent[PATH_MAX];
	struct stat st;
	int fd, lock;

	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - rel) : 1, slash ? rel : ".");
	fd = open_dir(rootfd, parent);
	if (fd < 0)
		return;
	/* only when no run holds it: every run that has it mounted has a shared lock on it */
	lock = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (lock >= 0 && fstat(lock, &st) == 0 && flock(lock, LOCK_EX | LOCK_NB) == 0) {
		if (S_ISDIR(st.st_mode))
			unlinkat(fd, name, AT_REMOVEDIR); /* fails when not empty: kept */
		else if (S_ISREG(st.st_mode) && st.st_nlink == 1 && untouched_stub(lock))
			unlinkat(fd, name, 0);
	}
	if (lock >= 0)
		close(lock);
	close(fd);
}

/* The last run out: every recorded placeholder that is still one goes, newest first. */
static void clear_record(const struct protect_tree *t)
{
	char *buf = malloc(RECORD_MAX + 1);
	ssize_t n = buf ? pread(t->record, buf, RECORD_MAX + 1, 0) : -1;

	if (n >= 0 && n <= RECORD_MAX) {
		buf[n] = '\0';
		for (char *line = buf + n; line > buf;) {
			do /* back to the start of the line before this one */
				line--;
			while (line > buf && line[-1] != '\n');
			line[strcspn(line, "\n")] = '\0';
			if (*line && *line != '/')
				remove_placeholder(t->fd, line);
		}
		if (ftruncate(t->record, 0) < 0)
			ab_say("cannot empty the record of placeholders in %s\n", t->root);
	}
	free(buf);
}

void protect_release(struct protect_hold *h)
{
	/* this run's own shared locks go first, or its exclusive ones would fail on them */
	for (size_t i = 0; i < h->n_held; i++)
		close(h->held[i]);
	free(h->held);
	for (size_t i = 0; i < h->n; i++) {
		struct protect_tree *t = &h->trees[i];
		if (t->record >= 0 && t->fd >= 0 && flock(t->record, LOCK_EX | LOCK_NB) == 0)
			clear_record(t);
		if (t->record >= 0)
			close(t->record);
		if (t->fd >= 0)
			close(t->fd);
		free(t->root);
	}
	free(h->trees);
	memset(h, 0, sizeof(*h));
}

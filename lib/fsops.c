/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "fsops.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

int fs_each_entry(int dirfd, int (*fn)(int dirfd, const char *name, void *ctx), void *ctx,
		  struct ab_err *e)
{
	int fd = dup(dirfd), rc = 0;
	struct dirent *d;
	DIR *dir;

	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return ab_fail(e, errno, "cannot read a directory");
	}
	while (rc == 0 && (d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			rc = fn(dirfd, d->d_name, ctx);
	closedir(dir);
	return rc;
}

static int remove_one(int dirfd, const char *name, void *e)
{
	return fs_remove_tree(dirfd, name, e);
}

int fs_remove_tree(int dirfd, const char *name, struct ab_err *e)
{
	struct stat st;
	int fd, rc;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : ab_fail(e, errno, "%s", name);
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT
			   ? ab_fail(e, errno, "cannot remove %s", name)
			   : 0;
	/* read-only directories (a module cache, overlayfs's work dir) are opened up first */
	if ((st.st_mode & 0700) != 0700 && fchmodat(dirfd, name, 0700, 0) < 0)
		return ab_fail(e, errno, "cannot remove %s", name);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open %s", name);
	rc = fs_each_entry(fd, remove_one, e, e);
	close(fd);
	if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		return ab_fail(e, errno, "cannot remove %s", name);
	return rc;
}

int fs_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			errno =
			    w < 0 ? errno : EIO; /* 0 for a non-empty write: it would never end */
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

size_t fs_read_all(int fd, void *buf, size_t size)
{
	char *p = buf;
	size_t off = 0;

	while (off < size) {
		ssize_t got = read(fd, p + off, size - off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		off += (size_t)got;
	}
	return off;
}

int fs_open_nolinks(int dirfd, const char *path, int flags)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					  (path[0] == '/' ? 0 : RESOLVE_BENEATH)};
	int fd;

	/* EAGAIN: a rename elsewhere raced a lookup the kernel could not prove stayed beneath */
	for (int i = 0; i < 16; i++) {
		fd = (int)syscall(SYS_openat2, dirfd, path[0] ? path : ".", &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd;
}

int fs_mkdirs(const char *path, struct ab_err *e)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return ab_fail(e, ENAMETOOLONG, "%s", path);
	memcpy(buf, path, n + 1);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return ab_fail(e, errno, "cannot create %s", buf);
		*s = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return ab_fail(e, errno, "cannot create %s", buf);
	return 0;
}

int fs_state_dir(const char *sub, char *out, size_t size, struct ab_err *e)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int n;

	if (state && state[0] == '/')
		n = snprintf(out, size, "%s/agentbox/%s", state, sub);
	else if (home && home[0] == '/')
		n = snprintf(out, size, "%s/.local/state/agentbox/%s", home, sub);
	else
		return ab_fail(e, 0, "no place for agentbox's state (%s): HOME is not set", sub),
		       ab_hint(e, "set HOME or XDG_STATE_HOME");
	if (n < 0 || (size_t)n >= size)
		return ab_fail(e, ENAMETOOLONG, "agentbox's state directory");
	return 0;
}

static int copy_data(int in, int out, off_t size, uint64_t *left);

int fs_copy_fd(int from, int to)
{
	struct stat st;

	if (fstat(from, &st) < 0)
		return -1;
	return copy_data(from, to, st.st_size, NULL);
}

/* name in dirfd, opened; an entry its owner made unreadable is opened up first (we are its
 * owner: the command ran with our uid). */
static int open_own(int dirfd, const char *name, const struct stat *st, int flags)
{
	mode_t need = S_ISDIR(st->st_mode) ? 0700 : 0400;
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == EACCES && fchmodat(dirfd, name, st->st_mode | need, 0) == 0)
		fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* A copy in progress: where to, how deep, and how many data bytes it may still write. */
struct copy {
	int to;
	unsigned depth;
	uint64_t *left; /* NULL: no budget */
	struct ab_err *e;
};

#define COPY_MAX_DEPTH 1000

static int copy_entry(int from, const char *name, void *ctx);

static int copy_entries(int from, int to, const struct copy *parent)
{
	struct copy c = {to, parent->depth + 1, parent->left, parent->e};

	if (c.depth > COPY_MAX_DEPTH)
		return ab_fail(c.e, ELOOP, "more than %d directories deep", COPY_MAX_DEPTH);
	return fs_each_entry(from, copy_entry, &c, c.e);
}

static int copy_dir(int from, const char *name, const struct stat *st, const struct copy *c)
{
	struct ab_err *e = c->e;
	char opaque[2];
	int in, out, rc;

	if (mkdirat(c->to, name, 0700) < 0 && errno != EEXIST)
		return ab_fail(e, errno, "cannot create %s", name);
	if ((in = open_own(from, name, st, O_RDONLY | O_DIRECTORY)) < 0)
		return ab_fail(e, errno, "cannot open %s", name);
	if ((out = openat(c->to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		close(in);
		return ab_fail(e, errno, "cannot open the copy of %s", name);
	}
	/* an opaque directory hides the lower layer's entries: the mark is part of the change */
	if (fgetxattr(in, "user.overlay.opaque", opaque, 1) == 1 &&
	    fsetxattr(out, "user.overlay.opaque", opaque, 1, 0) < 0)
		rc = ab_fail(e, errno, "cannot mark the copy of %s opaque", name);
	else
		rc = copy_entries(in, out, c);
	if (rc == 0 && fchmod(out, st->st_mode & 07777) < 0)
		rc = ab_fail(e, errno, "cannot set the mode of %s", name);
	close(in);
	close(out);
	return rc;
}

/* [off, end) of in to the same place in out. */
static int copy_range(int in, int out, off_t off, off_t end)
{
	char buf[65536];

	while (off < end) {
		size_t want = (size_t)(end - off) < sizeof(buf) ? (size_t)(end - off) : sizeof(buf);
		ssize_t n = pread(in, buf, want, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n == 0 ? EIO : errno;
			return -1;
		}
		for (ssize_t done = 0; done < n;) {
			ssize_t w = pwrite(out, buf + done, (size_t)(n - done), off + done);
			if (w < 0 && errno != EINTR)
				return -1;
			done += w > 0 ? w : 0;
		}
		off += n;
	}
	return 0;
}

/* Only the data: a hole stays a hole (a 1 PiB sparse file costs the tmpfs nothing, and must
 * cost the disk nothing either), and the data counts against the budget. */
static int copy_data(int in, int out, off_t size, uint64_t *left)
{
	off_t data, hole = 0;

	while (hole < size && (data = lseek(in, hole, SEEK_DATA)) >= 0) {
		if ((hole = lseek(in, data, SEEK_HOLE)) < 0)
			return -1;
		if (left && (uint64_t)(hole - data) > *left) {
			errno = EDQUOT;
			return -1;
		}
		if (left)
			*left -= (uint64_t)(hole - data);
		if (copy_range(in, out, data, hole) < 0)
			return -1;
	}
	if (hole < size && errno != ENXIO) /* ENXIO: no data after hole */
		return -1;
	return ftruncate(out, size);
}

/* name in dirfd is a regular file of the same few bytes as in (at most 64). */
static bool same_small_file(int dirfd, const char *name, int in, const struct stat *st)
{
	char a[64], b[64];
	struct stat there;
	int fd;
	bool same = false;

	if (st->st_size > (off_t)sizeof(a))
		return false;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &there) == 0 && S_ISREG(there.st_mode) && there.st_size == st->st_size &&
	    pread(fd, a, (size_t)st->st_size, 0) == st->st_size &&
	    pread(in, b, (size_t)st->st_size, 0) == st->st_size)
		same = !memcmp(a, b, (size_t)st->st_size);
	close(fd);
	return same;
}

static int copy_file(int from, const char *name, const struct stat *st, const struct copy *c)
{
	int in = open_own(from, name, st, O_RDONLY | O_NONBLOCK), out, rc = 0;

	if (in < 0)
		return ab_fail(c->e, errno, "cannot open %s", name);
	out = openat(c->to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	/* a file that is there already with the same bytes (a protected path's file stand-in,
	 * made in both places) is merged into, like a directory */
	if (out < 0 && errno == EEXIST && same_small_file(c->to, name, in, st)) {
		close(in);
		return 0;
	}
	if (out < 0 || copy_data(in, out, st->st_size, c->left) < 0 ||
	    fchmod(out, st->st_mode & 0777) < 0)
		rc = ab_fail(c->e, errno, "cannot copy %s", name);
	if (rc < 0 && c->e->errnum == EDQUOT)
		ab_hint(c->e, "the changes hold more data than their budget (a hard link is "
			      "copied once per name)");
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static int copy_link(int from, const char *name, const struct copy *c)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(from, name, target, sizeof(target) - 1);

	if (n < 0)
		return ab_fail(c->e, errno, "readlink %s", name);
	target[n] = '\0';
	return symlinkat(target, c->to, name) < 0 ? ab_fail(c->e, errno, "symlink %s", name) : 0;
}

/* Kept small: it is on the stack once per directory level. */
static int copy_entry(int from, const char *name, void *ctx)
{
	const struct copy *c = ctx;
	struct stat st;

	if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ab_fail(c->e, errno, "%s", name);
	if (S_ISDIR(st.st_mode))
		return copy_dir(from, name, &st, c);
	if (S_ISREG(st.st_mode))
		return copy_file(from, name, &st, c);
	if (S_ISLNK(st.st_mode))
		return copy_link(from, name, c);
	/* overlayfs's whiteout (a deletion: unprivileged users may make one) and fifos; other
	 * special files are not changes promote would apply */
	if ((S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) || S_ISFIFO(st.st_mode))
		return mknodat(c->to, name, st.st_mode & (S_IFMT | 0777), 0) < 0
			   ? ab_fail(c->e, errno, "cannot copy %s", name)
			   : 0;
	return 0;
}

int fs_copy_tree(int from, int to, uint64_t budget, struct ab_err *e)
{
	struct copy top = {to, 0, budget ? &budget : NULL, e};
	return copy_entries(from, to, &top);
}

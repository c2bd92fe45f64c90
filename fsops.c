#include "fsops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
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

int fs_copy_fd(int from, int to)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fs_write_all(to, buf, (size_t)n) < 0)
			return -1;
	}
	return 0;
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

struct copy {
	int to;
	struct ab_err *e;
};

static int copy_entry(int from, const char *name, void *ctx);

static int copy_entries(int from, int to, struct ab_err *e)
{
	struct copy c = {to, e};
	return fs_each_entry(from, copy_entry, &c, e);
}

static int copy_dir(int from, int to, const char *name, const struct stat *st, struct ab_err *e)
{
	char opaque[2];
	int in, out, rc;

	if (mkdirat(to, name, 0700) < 0 && errno != EEXIST)
		return ab_fail(e, errno, "cannot create %s", name);
	if ((in = open_own(from, name, st, O_RDONLY | O_DIRECTORY)) < 0)
		return ab_fail(e, errno, "cannot open %s", name);
	if ((out = openat(to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		close(in);
		return ab_fail(e, errno, "cannot open the copy of %s", name);
	}
	/* an opaque directory hides the lower layer's entries: the mark is part of the change */
	if (fgetxattr(in, "user.overlay.opaque", opaque, 1) == 1 &&
	    fsetxattr(out, "user.overlay.opaque", opaque, 1, 0) < 0)
		rc = ab_fail(e, errno, "cannot mark the copy of %s opaque", name);
	else
		rc = copy_entries(in, out, e);
	if (rc == 0 && fchmod(out, st->st_mode & 07777) < 0)
		rc = ab_fail(e, errno, "cannot set the mode of %s", name);
	close(in);
	close(out);
	return rc;
}

static int copy_file(int from, int to, const char *name, const struct stat *st, struct ab_err *e)
{
	int in = open_own(from, name, st, O_RDONLY | O_NONBLOCK), out, rc = 0;

	if (in < 0)
		return ab_fail(e, errno, "cannot open %s", name);
	out = openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0 || fs_copy_fd(in, out) < 0 || fchmod(out, st->st_mode & 0777) < 0)
		rc = ab_fail(e, errno, "cannot copy %s", name);
	close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static int copy_entry(int from, const char *name, void *ctx)
{
	const struct copy *c = ctx;
	struct ab_err *e = c->e;
	char target[PATH_MAX];
	struct stat st;
	int to = c->to;
	ssize_t n;

	if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ab_fail(e, errno, "%s", name);
	if (S_ISDIR(st.st_mode))
		return copy_dir(from, to, name, &st, e);
	if (S_ISREG(st.st_mode))
		return copy_file(from, to, name, &st, e);
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(from, name, target, sizeof(target) - 1)) < 0)
			return ab_fail(e, errno, "readlink %s", name);
		target[n] = '\0';
		return symlinkat(target, to, name) < 0 ? ab_fail(e, errno, "symlink %s", name) : 0;
	}
	/* overlayfs's whiteout (a deletion: unprivileged users may make one) and fifos; other
	 * special files are not changes promote would apply */
	if ((S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) || S_ISFIFO(st.st_mode))
		return mknodat(to, name, st.st_mode & (S_IFMT | 0777), 0) < 0
			   ? ab_fail(e, errno, "cannot copy %s", name)
			   : 0;
	return 0;
}

int fs_copy_tree(int from, int to, struct ab_err *e)
{
	return copy_entries(from, to, e);
}

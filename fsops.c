#include "fsops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int remove_entries(int fd, struct ab_err *e)
{
	int dfd = dup(fd), rc = 0;
	struct dirent *d;
	DIR *dir;

	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return ab_fail(e, errno, "cannot read a directory to remove");
	}
	while (rc == 0 && (d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			rc = fs_remove_tree(fd, d->d_name, e);
	closedir(dir);
	return rc;
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
	rc = remove_entries(fd, e);
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

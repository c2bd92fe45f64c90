/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* fds: reach files outside the view through a directory fd.
 *   fds inherited FD NAME MARKER  an fd FD the caller left open to a directory: openat(FD, NAME)
 *                                 and openat(FD, "..") then NAME there; also lists every fd from
 *                                 3 to 1023 that is open. SUCCESS when MARKER is read
 *   fds dotdot NAME MARKER        open "." and climb with openat(fd, "..") up to 16 levels,
 *                                 looking for NAME at each level: SUCCESS when a file NAME
 *                                 holding MARKER is found */
#include "escape.h"

#include <sys/stat.h>

static int read_at(int dirfd, const char *name, const char *marker)
{
	char buf[4096];
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return strstr(buf, marker) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "inherited")) {
		int fd = atoi(argv[2]), up, open_fds = 0;
		struct stat st;
		for (int i = 3; i < 1024; i++)
			if (fcntl(i, F_GETFD) >= 0 && i != fd) {
				info("fd %d is open", i);
				open_fds++;
			}
		if (fstat(fd, &st) < 0)
			failed(errno, "fstat(%d): the fd was not inherited (%d other fds open)", fd,
			       open_fds);
		info("fd %d is open: a %s", fd,
		     S_ISDIR(st.st_mode) ? "directory" : "non-directory");
		if (read_at(fd, argv[3], argv[4]) == 1)
			success("read %s through the inherited fd %d", argv[3], fd);
		if ((up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 &&
		    read_at(up, argv[3], argv[4]) == 1)
			success("read ../%s through the inherited fd %d", argv[3], fd);
		failed(errno, "openat(%d, %s)", fd, argv[3]);
	}
	if (argc == 4 && !strcmp(argv[1], "dotdot")) {
		int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			failed(errno, "open .");
		for (int level = 0; level <= 16; level++) {
			int r = read_at(fd, argv[2], argv[3]), up;
			if (r == 1)
				success("found %s holding the marker %d levels up", argv[2], level);
			up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (up < 0)
				failed(errno, "openat(fd, \"..\") at level %d", level);
			close(fd);
			fd = up;
		}
		failed(ENOENT, "no %s holding the marker within 16 levels up", argv[2]);
	}
	usage("fds inherited FD NAME MARKER | fds dotdot NAME MARKER");
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* setid: make a setuid file by one route; SUCCESS when the file ends up with S_ISUID.
 *   setid ROUTE PATH   ROUTE: chmod fchmod fchmodat fchmodat2 creat open openat openat2 mknod
 *                      mknodat tmpfile (O_TMPFILE in PATH's directory, then linked as PATH)
 * The file is a copy of nothing (empty) except for chmod routes, which first create it 0755.
 * Every route asks for mode 04755 (S_ISUID), the only bit the control can set unprivileged on
 * any group. */
#include "escape.h"

#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define MODE 04755

static int plain_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (fd < 0)
		failed(errno, "create %s", path);
	return fd;
}

static int route(const char *r, const char *path)
{
	if (!strcmp(r, "chmod")) {
		close(plain_file(path));
		return chmod(path, MODE);
	}
	if (!strcmp(r, "fchmod")) {
		int fd = plain_file(path);
		return fchmod(fd, MODE);
	}
	if (!strcmp(r, "fchmodat")) {
		close(plain_file(path));
		return (int)syscall(SYS_fchmodat, AT_FDCWD, path, MODE);
	}
	if (!strcmp(r, "fchmodat2")) {
		close(plain_file(path));
		return (int)syscall(452 /* fchmodat2 */, AT_FDCWD, path, MODE, 0);
	}
	if (!strcmp(r, "creat"))
		return (int)syscall(SYS_creat, path, MODE) < 0 ? -1 : 0;
	if (!strcmp(r, "open"))
		return (int)syscall(SYS_open, path, O_WRONLY | O_CREAT | O_CLOEXEC, MODE) < 0 ? -1
											      : 0;
	if (!strcmp(r, "openat"))
		return openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_CLOEXEC, MODE) < 0 ? -1 : 0;
	if (!strcmp(r, "openat2")) {
		struct open_how how = {.flags = O_WRONLY | O_CREAT | O_CLOEXEC, .mode = MODE};
		return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how)) < 0 ? -1 : 0;
	}
	if (!strcmp(r, "mknod"))
		return (int)syscall(SYS_mknod, path, S_IFREG | MODE, 0);
	if (!strcmp(r, "mknodat"))
		return mknodat(AT_FDCWD, path, S_IFREG | MODE, 0);
	if (!strcmp(r, "tmpfile")) {
		char dir[4096], proc[64];
		const char *slash = strrchr(path, '/');
		int fd;
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
			 slash ? path : ".");
		fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, MODE);
		if (fd < 0)
			return -1;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
	}
	usage("setid ROUTE PATH");
}

int main(int argc, char **argv)
{
	struct stat st;

	if (argc != 3)
		usage("setid ROUTE PATH");
	info("about to make %s setuid by %s", argv[2], argv[1]);
	if (route(argv[1], argv[2]) < 0)
		failed(errno, "%s", argv[1]);
	if (stat(argv[2], &st) < 0)
		failed(errno, "stat %s after %s", argv[2], argv[1]);
	if (!(st.st_mode & S_ISUID))
		failed(0, "%s returned, but %s has mode %o", argv[1], argv[2], st.st_mode & 07777);
	success("%s made %s mode %o", argv[1], argv[2], st.st_mode & 07777);
}

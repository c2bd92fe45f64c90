/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* bench/view_floor.c: the least a sandbox must do to show a command the view of
 * profiles/minimal.ini, for bench/interleave's "view" line. The floor (`unshare -Urmnpif true`)
 * only makes namespaces; this makes the same namespaces (and the uts and cgroup ones agentbox
 * and bwrap make) and then the view: a tmpfs root, /usr read-only, the usual symlinks into it,
 * /proc, a /dev tmpfs with the six device nodes bound in, a /tmp tmpfs, pivot_root and the old
 * root detached, then exec. No supervisor, filter, Landlock, capability drop, audit or error
 * messages beyond one line: what it costs over the floor is what the view costs on this kernel,
 * a bound below every sandbox that builds it (agentbox and bwrap alike).
 *
 *   view_floor COMMAND [ARG...]     (exits with the command's status; 125 when a step fails) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "view_floor: %s: %s\n", what, strerror(errno));
	_exit(125);
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(text);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n || close(fd) < 0)
		die(path);
}

static void tmpfs(const char *dest, const char *mode)
{
	char options[64];

	snprintf(options, sizeof(options), "size=1m,mode=%s", mode);
	if (mount("tmpfs", dest, "tmpfs", MS_NOSUID | MS_NODEV, options) < 0)
		die(dest);
}

static void bind_mount(const char *from, const char *to, bool dir, unsigned long ro)
{
	int fd;

	if (dir ? mkdir(to, 0755) < 0
		: (fd = open(to, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644)) < 0 ||
		      close(fd) < 0)
		die(to);
	if (mount(from, to, NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    mount(NULL, to, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | ro, NULL) < 0)
		die(from);
}

/* In the new namespaces, as pid 1: the view at /tmp, then pivot_root into it. */
static void view(void)
{
	static const char *const devices[] = {"null", "zero", "full", "random", "urandom", "tty"};
	static const char *const links[][2] = {{"usr/bin", "/tmp/bin"},
					       {"usr/sbin", "/tmp/sbin"},
					       {"usr/lib", "/tmp/lib"},
					       {"usr/lib64", "/tmp/lib64"}};
	char from[32], to[32];

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("making / private");
	tmpfs("/tmp", "0755");
	bind_mount("/usr", "/tmp/usr", true, MS_RDONLY);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlink(links[i][0], links[i][1]) < 0)
			die(links[i][1]);
	if (mkdir("/tmp/proc", 0755) < 0 ||
	    mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("/proc");
	if (mkdir("/tmp/dev", 0755) < 0) /* a directory of the root, as agentbox's */
		die("/dev");
	for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		snprintf(from, sizeof(from), "/dev/%s", devices[i]);
		snprintf(to, sizeof(to), "/tmp/dev/%s", devices[i]);
		bind_mount(from, to, false, 0);
	}
	if (mkdir("/tmp/tmp", 01777) < 0)
		die("/tmp/tmp");
	tmpfs("/tmp/tmp", "1777");
	if (mount(NULL, "/tmp", NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_RDONLY, NULL) < 0)
		die("read-only root");
	if (chdir("/tmp") < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		die("pivot_root");
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		die("detaching the old root");
}

int main(int argc, char **argv)
{
	char map[64];
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid(); /* before: then unmapped */
	pid_t pid;
	int status;

	if (argc < 2) {
		fprintf(stderr, "usage: view_floor COMMAND [ARG...]\n");
		return 2;
	}
	snprintf(map, sizeof(map), "0 %u 1", uid);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
		    CLONE_NEWUTS | CLONE_NEWCGROUP) < 0)
		die("unshare");
	put("/proc/self/setgroups", "deny");
	put("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1", gid);
	put("/proc/self/gid_map", map);
	if ((pid = fork()) < 0)
		die("fork");
	if (pid == 0) {
		view();
		execv(argv[1], argv + 1);
		die(argv[1]);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}

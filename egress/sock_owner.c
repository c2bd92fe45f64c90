/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The process holding a connection's other end (sock_owner.h). */
#include "sock_owner.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bounded, like everything read from /proc, and small: the proxy's loop waits for a lookup. A
 * process with more fds than are left in the budget is not searched to its end (its socket
 * may go unfound: the events then say null). */
#define MAX_PIDS 1024
#define MAX_FDS_READ 8192
#define MAX_TCP_LINES 16384

/* An address and port as /proc/net/tcp{,6} print them: the address's 32-bit words in the
 * kernel's byte order, the port as a number. */
static int proc_form(const struct sockaddr_storage *sa, char *out, size_t size)
{
	int n;

	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		n = snprintf(out, size, "%08" PRIX32 ":%04X", (uint32_t)in->sin_addr.s_addr,
			     ntohs(in->sin_port));
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		uint32_t w[4];
		memcpy(w, &in6->sin6_addr, sizeof(w));
		n = snprintf(out, size, "%08" PRIX32 "%08" PRIX32 "%08" PRIX32 "%08" PRIX32 ":%04X",
			     w[0], w[1], w[2], w[3], ntohs(in6->sin6_port));
	} else {
		return -1;
	}
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The inode of the socket whose local end is `local` and remote end `remote`, or 0. */
static unsigned long find_inode(pid_t pid1, bool v6, const char *local, const char *remote)
{
	char path[64], line[512], l[64], r[64];
	unsigned long inode = 0, ino;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid1, v6 ? "tcp6" : "tcp");
	if (!(f = fopen(path, "re")))
		return 0;
	for (int k = 0; !inode && k < MAX_TCP_LINES && fgets(line, sizeof(line), f); k++)
		if (sscanf(line, " %*d: %63s %63s %*x %*s %*s %*s %*u %*u %lu", l, r, &ino) == 3 &&
		    !strcmp(l, local) && !strcmp(r, remote))
			inode = ino;
	fclose(f);
	return inode;
}

static bool holds(pid_t pid, const char *link, size_t *budget)
{
	char path[64], target[64];
	struct dirent *d;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(dir = opendir(path)))
		return false;
	while (!found && *budget && (d = readdir(dir))) {
		ssize_t n;
		if (d->d_name[0] == '.')
			continue;
		(*budget)--;
		n = readlinkat(dirfd(dir), d->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found = !strcmp(target, link);
	}
	closedir(dir);
	return found;
}

/* Appends the children of every thread of pid to pids[]. */
static void add_children(pid_t pid, pid_t *pids, size_t *n)
{
	char path[64];
	struct dirent *d;
	DIR *tasks;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(tasks = opendir(path)))
		return;
	while ((d = readdir(tasks)) && *n < MAX_PIDS) {
		char cpath[300];
		FILE *f;
		int child, len;
		if (d->d_name[0] == '.')
			continue;
		len = snprintf(cpath, sizeof(cpath), "%s/%s/children", path, d->d_name);
		if (len < 0 || (size_t)len >= sizeof(cpath) || !(f = fopen(cpath, "re")))
			continue;
		while (*n < MAX_PIDS && fscanf(f, "%d", &child) == 1)
			pids[(*n)++] = child;
		fclose(f);
	}
	closedir(tasks);
}

pid_t sock_owner(pid_t pid1, int fd)
{
	struct sockaddr_storage peer, local;
	socklen_t pl = sizeof(peer), ll = sizeof(local);
	char p[64], l[64], link[48];
	unsigned long inode;
	pid_t *pids, owner = -1;
	size_t n = 0, budget = MAX_FDS_READ;

	if (getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&local, &ll) < 0 ||
	    proc_form(&peer, p, sizeof(p)) < 0 || proc_form(&local, l, sizeof(l)) < 0)
		return -1;
	/* the sandbox's end: local address the peer's, remote the proxy's */
	inode = find_inode(pid1, peer.ss_family == AF_INET6, p, l);
	if (!inode || !(pids = malloc(MAX_PIDS * sizeof(*pids))))
		return -1;
	snprintf(link, sizeof(link), "socket:[%lu]", inode);
	pids[n++] = pid1;
	/* breadth first: the list grows as it is read */
	for (size_t i = 0; i < n && owner < 0 && budget; i++) {
		if (holds(pids[i], link, &budget))
			owner = pids[i];
		else
			add_children(pids[i], pids, &n);
	}
	free(pids);
	return owner;
}

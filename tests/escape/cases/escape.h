/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* escape.h: what the probe programs of tests/escape share. Not a case: run.sh compiles every
 * cases/NAME.c with -I cases, and each program includes this header.
 *
 * A probe does one thing and says what the kernel answered, as one final line:
 *     RESULT SUCCESS <evidence>       the action worked
 *     RESULT FAILED errno=NAME <step> it was refused (the step that failed, and how)
 * plus any number of INFO lines. The case script, not the probe, decides whether that is
 * "blocked" or "escaped": the same probe runs as the positive control and as the attack. */
#ifndef ESCAPE_H
#define ESCAPE_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline const char *errname(int e)
{
	switch (e) {
	case 0:
		return "0";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case ESRCH:
		return "ESRCH";
	case ESTALE:
		return "ESTALE";
	case EINTR:
		return "EINTR";
	case EIO:
		return "EIO";
	case ENXIO:
		return "ENXIO";
	case E2BIG:
		return "E2BIG";
	case EBADF:
		return "EBADF";
	case EAGAIN:
		return "EAGAIN";
	case ENOMEM:
		return "ENOMEM";
	case EACCES:
		return "EACCES";
	case EFAULT:
		return "EFAULT";
	case EBUSY:
		return "EBUSY";
	case EEXIST:
		return "EEXIST";
	case EXDEV:
		return "EXDEV";
	case ENODEV:
		return "ENODEV";
	case ENOTDIR:
		return "ENOTDIR";
	case EISDIR:
		return "EISDIR";
	case EINVAL:
		return "EINVAL";
	case EMFILE:
		return "EMFILE";
	case ENOTTY:
		return "ENOTTY";
	case ETXTBSY:
		return "ETXTBSY";
	case EFBIG:
		return "EFBIG";
	case ENOSPC:
		return "ENOSPC";
	case EDQUOT:
		return "EDQUOT";
	case EROFS:
		return "EROFS";
	case EPIPE:
		return "EPIPE";
	case ENOSYS:
		return "ENOSYS";
	case ELOOP:
		return "ELOOP";
	case EUSERS:
		return "EUSERS";
	case ENOTSOCK:
		return "ENOTSOCK";
	case EAFNOSUPPORT:
		return "EAFNOSUPPORT";
	case EPROTONOSUPPORT:
		return "EPROTONOSUPPORT";
	case EADDRNOTAVAIL:
		return "EADDRNOTAVAIL";
	case ENETUNREACH:
		return "ENETUNREACH";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	case ECONNRESET:
		return "ECONNRESET";
	case EHOSTUNREACH:
		return "EHOSTUNREACH";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	default:
		return "E?";
	}
}

static inline void info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("INFO ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

/* RESULT SUCCESS ...; exits 0. */
static inline _Noreturn void success(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("RESULT SUCCESS ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
	exit(0);
}

/* RESULT FAILED errno=NAME step; exits 1. */
static inline _Noreturn void failed(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("RESULT FAILED errno=%s ", errname(err));
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
	exit(1);
}

static inline _Noreturn void usage(const char *text)
{
	fprintf(stderr, "usage: %s\n", text);
	exit(2);
}

/* Reads up to size-1 bytes of a file; -1 with errno on failure. */
static inline ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	if (n >= 0)
		buf[n] = '\0';
	close(fd);
	return n;
}

/* Writes text to an existing file (no O_TRUNC, no O_CREAT); 0 or -1 with errno. */
static inline int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, text, strlen(text));
	if (w < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

/* The positive controls of some cases need what an unprivileged user gets from a user namespace
 * of its own on the host (mount, raw sockets): unshare(flags | CLONE_NEWUSER) with the caller
 * mapped to root. Returns 0 or -1 with errno. */
#include <sched.h>
static inline int own_userns(int flags)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (unshare(CLONE_NEWUSER | flags) < 0)
		return -1;
	if (write_file("/proc/self/setgroups", "deny") < 0)
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
	return write_file("/proc/self/gid_map", map);
}

#endif

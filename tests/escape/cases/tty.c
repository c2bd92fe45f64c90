/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* tty: terminal injection through the terminal on fd 0 (give it a pty, or a VT as root).
 *   tty sti MARKER [hi]    TIOCSTI: push MARKER and a newline into the terminal's input, as if
 *                          typed, then read the line back: SUCCESS when it arrives
 *   tty linux [hi]         TIOCLINUX (TIOCL_GETSHIFTSTATE, read-only): SUCCESS when it works
 *   tty steal MARKER       TIOCSCTTY with force = 1 (take the terminal from its session), then
 *                          TIOCSTI as above
 * hi: the ioctl number with high bits set (0xdead << 32); the kernel reads only the low 32
 * bits, so a filter comparing all 64 would miss it. */
#include "escape.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>

static unsigned long cmd_of(unsigned long cmd, int hi)
{
	return hi ? (cmd | 0xdead00000000ul) : cmd;
}

static long do_ioctl(int fd, unsigned long cmd, void *arg)
{
	return syscall(SYS_ioctl, fd, cmd, arg);
}

static _Noreturn void sti(const char *marker, int hi)
{
	char line[256];
	struct pollfd p = {0, POLLIN, 0};
	size_t got = 0;

	info("isatty(0)=%d pid=%d sid=%d pgrp=%d tcgetpgrp=%d", isatty(0), getpid(), getsid(0),
	     getpgrp(), tcgetpgrp(0));
	for (const char *c = marker;; c++) {
		char ch = *c ? *c : '\n';
		if (do_ioctl(0, cmd_of(TIOCSTI, hi), &ch) < 0)
			failed(errno, "ioctl(0, TIOCSTI%s) at byte %zu", hi ? "|hi" : "",
			       (size_t)(c - marker));
		if (!*c)
			break;
	}
	/* the injected line sits in the terminal's input queue: read it back */
	while (got < sizeof(line) - 1 && poll(&p, 1, 2000) == 1) {
		ssize_t n = read(0, line + got, sizeof(line) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		line[got] = '\0';
		if (strchr(line, '\n'))
			break;
	}
	line[got] = '\0';
	if (strstr(line, marker))
		success("injected %s into the terminal and read it back", marker);
	failed(0, "the ioctl returned 0 but the input never arrived (read '%s')", line);
}

static _Noreturn void tioclinux(int hi)
{
	char arg[2] = {6 /* TIOCL_GETSHIFTSTATE */, 0};

	info("isatty(0)=%d", isatty(0));
	if (do_ioctl(0, cmd_of(TIOCLINUX, hi), arg) < 0)
		failed(errno, "ioctl(0, TIOCLINUX%s, TIOCL_GETSHIFTSTATE)", hi ? "|hi" : "");
	success("TIOCLINUX answered (shift state %d)", arg[0]);
}

int main(int argc, char **argv)
{
	int hi = argc > 3 && !strcmp(argv[3], "hi");

	if (argc >= 3 && !strcmp(argv[1], "sti"))
		sti(argv[2], hi);
	if (argc >= 2 && !strcmp(argv[1], "linux"))
		tioclinux(argc > 2 && !strcmp(argv[2], "hi"));
	if (argc >= 3 && !strcmp(argv[1], "steal")) {
		if (ioctl(0, TIOCSCTTY, 1) < 0)
			info("TIOCSCTTY(force) failed: %s", errname(errno));
		else
			info("TIOCSCTTY(force) succeeded");
		sti(argv[2], 0);
	}
	usage("tty sti MARKER [hi] | tty linux [hi] | tty steal MARKER");
}

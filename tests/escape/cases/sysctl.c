/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* sysctl: change the host kernel's settings through /proc/sys, writing back each file's
 * current value (so a write that lands changes nothing, but proves it could have).
 *   sysctl PATH... [own]   SUCCESS naming every file whose write was accepted
 * kernel.core_pattern is the classic one: a "|program" pattern makes the kernel run that
 * program as root on the host when any process crashes.
 * own: first a user and network namespace of its own (an unprivileged caller's positive
 * control: the net.* files of a network namespace it owns are its to write). */
#include "escape.h"

int main(int argc, char **argv)
{
	int n = argc - 1, ok = 0, last_err = 0;
	char accepted[4096] = "";

	if (n >= 1 && !strcmp(argv[argc - 1], "own")) {
		n--;
		if (own_userns(CLONE_NEWNET) < 0)
			failed(errno, "control: a user and network namespace of its own");
	}
	if (n < 1)
		usage("sysctl PATH... [own]");
	for (int i = 1; i <= n; i++) {
		char value[4096];
		int fd;
		ssize_t len = read_file(argv[i], value, sizeof(value));
		if (len < 0) {
			info("%s: read: %s", argv[i], errname(last_err = errno));
			continue;
		}
		/* no O_TRUNC: a sysctl file needs none, and truncation is a right of its own */
		if ((fd = open(argv[i], O_WRONLY | O_CLOEXEC)) < 0) {
			info("%s: open for writing: %s", argv[i], errname(last_err = errno));
			continue;
		}
		if (write(fd, value, (size_t)len) != len) {
			info("%s: write: %s", argv[i], errname(last_err = errno));
		} else {
			info("%s: WRITE ACCEPTED (wrote back its value)", argv[i]);
			ok++;
			strncat(accepted, " ", sizeof(accepted) - strlen(accepted) - 1);
			strncat(accepted, argv[i], sizeof(accepted) - strlen(accepted) - 1);
		}
		close(fd);
	}
	if (ok)
		success("the kernel accepted writes to%s", accepted);
	failed(last_err, "no write accepted");
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* swap A B: exchanges the two paths atomically (renameat2 RENAME_EXCHANGE) in a loop until
 * SIGTERM, then prints how many swaps it made. Each name always exists: at any instant A is
 * one of the two objects, never missing, which is the sharpest form of a symlink-swap race.
 * Built by test_view.sh with cc at run time. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	unsigned long n = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: swap A B\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop) {
		if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) < 0) {
			perror("renameat2 RENAME_EXCHANGE");
			return 1;
		}
		n++;
	}
	printf("%lu\n", n);
	return 0;
}

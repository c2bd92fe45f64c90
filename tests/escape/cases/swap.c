/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* swap A B SECONDS: exchanges the paths A and B atomically (renameat2 RENAME_EXCHANGE) as fast
 * as it can for at most SECONDS, or until SIGTERM, then prints how many swaps it made. At every
 * instant each name exists: the sharpest form of a symlink-swap race. */
#include "escape.h"

#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_term};
	struct timespec t0, t;
	unsigned long n = 0;
	double limit;

	if (argc != 4)
		usage("swap A B SECONDS");
	limit = atof(argv[3]);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) < 0)
			failed(errno, "renameat2 RENAME_EXCHANGE");
		if (++n % 1024 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) +
				(double)(t.tv_nsec - t0.tv_nsec) / 1e9 >
			    limit)
				break;
		}
	}
	printf("%lu\n", n);
	return 0;
}

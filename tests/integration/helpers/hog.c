/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* hog MODE ARG: uses up one resource until a limit stops it, and says how far it got.
 *   hog fork MAX      forks children that sleep, until fork fails or MAX are running; prints
 *                     "RESULT forks=N errno=NAME" (exit 1) or "RESULT forks=N capped" and then
 *                     sleeps until it is killed (a bounded fork bomb: MAX keeps it from eating
 *                     the host where no limit holds it)
 *   hog alloc MB      allocates and touches MB MiB in 16 MiB steps; prints "RESULT alloc ok MB=N"
 *                     (exit 0) or "RESULT alloc failed after N MiB" (exit 3)
 *   hog spin SECONDS  burns SECONDS (a decimal) of CPU time, then prints "RESULT spin done" and
 *                     exits 0
 * Built by test_confine.sh with cc at run time. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int do_fork(long max)
{
	long n = 0;

	while (n < max) {
		pid_t pid = fork();
		if (pid < 0) {
			int err = errno;
			printf("RESULT forks=%ld errno=%s\n", n,
			       err == EAGAIN   ? "EAGAIN"
			       : err == ENOMEM ? "ENOMEM"
					       : "other");
			return 1;
		}
		if (pid == 0) {
			for (;;)
				pause();
		}
		n++;
	}
	printf("RESULT forks=%ld capped\n", n);
	for (;;)
		pause();
}

static int do_alloc(long mb)
{
	const size_t step = 16u << 20;
	long got = 0;

	while (got < mb) {
		char *p = malloc(step);
		if (!p) {
			printf("RESULT alloc failed after %ld MiB\n", got);
			return 3;
		}
		memset(p, 0x5a, step);
		got += 16;
	}
	printf("RESULT alloc ok MB=%ld\n", got);
	return 0;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_spin(double seconds)
{
	volatile unsigned long x = 0;

	while (cpu_seconds() < seconds)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
	printf("RESULT spin done\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "fork"))
		return do_fork(strtol(argv[2], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "alloc"))
		return do_alloc(strtol(argv[2], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return do_spin(strtod(argv[2], NULL));
	fprintf(stderr, "usage: hog fork MAX | alloc MB | spin SECONDS\n");
	return 2;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* bench/interleave.c: times commands round-robin, so that load on a shared machine falls on
 * all of them alike (hyperfine runs one command after the other, and a burst of load can land
 * on one of them only).
 *
 *   interleave [--raw FILE] ROUNDS WARMUP NAME CMD [ARG...] [::: NAME CMD [ARG...]]...
 *
 * Each round runs every command once (posix_spawn + waitpid, stdin/stdout/stderr inherited;
 * the command's output should be nothing), starting with a different command each round.
 * Prints, per command: median, 25th and 75th percentile and mean of the wall time in ms, the
 * median CPU time (user + system of the command and every descendant it waited for, from
 * wait4), the ratios of the wall-time medians, and for every command the median of its
 * per-round difference to the first command (paired: a burst of load that hits one round
 * cancels out). CPU time is less disturbed by other work on the machine than wall time.
 * --raw FILE also writes every counted run, one line each: round, name, wall ms, CPU ms (tab
 * separated), for statistics over rounds (bench/compare's intervals of a ratio).
 * Exits 1 if any run of a command fails. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_CMDS 8

extern char **environ;

struct cmd {
	const char *name;
	char **argv;
	double *ms;
	double *cpu;  /* user + system, ms */
	double *diff; /* wall time minus the first command's in the same round, ms */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One run: its wall time in ms (and CPU time in *cpu), or -1 if it could not start or did not
 * exit 0. */
static double run(const struct cmd *c, double *cpu)
{
	struct rusage ru;
	double t0 = now_ms(), t1;
	pid_t pid;
	int st, err = posix_spawn(&pid, c->argv[0], NULL, NULL, c->argv, environ);

	if (err) {
		fprintf(stderr, "interleave: %s: %s\n", c->argv[0], strerror(err));
		return -1;
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR)
			return -1;
	t1 = now_ms();
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "interleave: %s failed (status %#x)\n", c->name, st);
		return -1;
	}
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return t1 - t0;
}

/* Every counted run as "round name wall cpu" lines; 0, or -1 when FILE cannot be written. */
static int write_raw(const char *path, const struct cmd *cmds, int n, int rounds)
{
	FILE *f = fopen(path, "we");

	if (!f) {
		fprintf(stderr, "interleave: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < n; k++)
			fprintf(f, "%d\t%s\t%.6f\t%.6f\n", r, cmds[k].name, cmds[k].ms[r],
				cmds[k].cpu[r]);
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "interleave: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double pct(const double *sorted, int n, double p)
{
	double i = p * (n - 1);
	int lo = (int)i;
	return lo + 1 < n ? sorted[lo] + (i - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
}

int main(int argc, char **argv)
{
	struct cmd cmds[MAX_CMDS];
	double med[MAX_CMDS];
	const char *raw = NULL;
	int n = 0, rounds, warmup;

	if (argc > 2 && strcmp(argv[1], "--raw") == 0) {
		raw = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 5) {
		fprintf(stderr, "usage: interleave [--raw FILE] ROUNDS WARMUP NAME CMD [ARG...] "
				"[::: NAME CMD...]\n");
		return 2;
	}
	rounds = atoi(argv[1]);
	warmup = atoi(argv[2]);
	for (int i = 3; i < argc && n < MAX_CMDS;) {
		int j = i + 1;
		while (j < argc && strcmp(argv[j], ":::") != 0)
			j++;
		if (j - i < 2) {
			fprintf(stderr, "interleave: %s has no command\n", argv[i]);
			return 2;
		}
		argv[j < argc ? j : argc] = NULL; /* ends this command's argv */
		cmds[n].name = argv[i];
		cmds[n].argv = argv + i + 1;
		cmds[n].ms = calloc((size_t)rounds, sizeof(double));
		cmds[n].cpu = calloc((size_t)rounds, sizeof(double));
		cmds[n].diff = calloc((size_t)rounds, sizeof(double));
		if (!cmds[n].ms || !cmds[n].cpu || !cmds[n].diff || rounds < 1)
			return 2;
		n++;
		i = j + 1;
	}
	for (int r = -warmup; r < rounds; r++)
		for (int k = 0; k < n; k++) {
			struct cmd *c = &cmds[((r < 0 ? -r : r) + k) % n];
			double cpu = 0, ms = run(c, &cpu);
			if (ms < 0)
				return 1;
			if (r >= 0)
				c->ms[r] = ms, c->cpu[r] = cpu;
		}
	if (raw && write_raw(raw, cmds, n, rounds) < 0)
		return 1;
	for (int k = 0; k < n; k++) {
		for (int r = 0; r < rounds; r++)
			cmds[k].diff[r] = cmds[k].ms[r] - cmds[0].ms[r];
		qsort(cmds[k].diff, (size_t)rounds, sizeof(double), cmp);
	}
	printf("| command | median [ms] | p25 | p75 | mean | CPU median [ms] |\n"
	       "|:---|---:|---:|---:|---:|---:|\n");
	for (int k = 0; k < n; k++) {
		double sum = 0;
		for (int r = 0; r < rounds; r++)
			sum += cmds[k].ms[r];
		qsort(cmds[k].ms, (size_t)rounds, sizeof(double), cmp);
		qsort(cmds[k].cpu, (size_t)rounds, sizeof(double), cmp);
		med[k] = pct(cmds[k].ms, rounds, 0.5);
		printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", cmds[k].name, med[k],
		       pct(cmds[k].ms, rounds, 0.25), pct(cmds[k].ms, rounds, 0.75), sum / rounds,
		       pct(cmds[k].cpu, rounds, 0.5));
	}
	printf("\npaired: median of (command - %s) per round [ms]:", cmds[0].name);
	for (int k = 1; k < n; k++)
		printf(" %s %+.3f (p25 %+.3f, p75 %+.3f);", cmds[k].name,
		       pct(cmds[k].diff, rounds, 0.5), pct(cmds[k].diff, rounds, 0.25),
		       pct(cmds[k].diff, rounds, 0.75));
	printf("\n\nmedian ratios (row / column):\n%-12s", "");
	for (int k = 0; k < n; k++)
		printf(" %10s", cmds[k].name);
	printf("\n");
	for (int i = 0; i < n; i++) {
		printf("%-12s", cmds[i].name);
		for (int k = 0; k < n; k++)
			printf(" %10.3f", med[i] / med[k]);
		printf("\n");
	}
	return 0;
}

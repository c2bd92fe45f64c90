/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* bench/beside.c: runs a command with other work beside it, at the lowest priority the
 * scheduler has, for issue 30's interception bound: what would an intercepting start cost if
 * its CA were made in parallel, by a process of its own on the second vCPU, and nothing on the
 * run's own path waited for it?
 *
 *   beside HELPER [ARG...] [:: HELPER [ARG...]]... -- CMD [ARG...]
 *
 * Starts a process group at SCHED_IDLE (it runs only on a CPU nothing else wants) that runs the
 * helpers one after another, their stdout to /dev/null; starts CMD beside it and waits for it;
 * then kills the group (SIGKILL) if it is still running. Its own time is CMD's plus two
 * process starts, so compare it with `beside NOOP -- CMD` in the same interleaved run
 * (bench/interleave.c). Run beside an intercepting profile's tunnel twin, the helper
 * bench/ca_floor (the least OpenSSL work a CA takes), or `agentbox --version :: ca_floor`
 * (a helper process of agentbox's own: the binary's start, then the CA; it leaves out
 * OpenSSL's relocations and the JVM's store, and counts ca_floor's own start) give a lower
 * bound for a start that makes its CA beside the run: here no one waits for the certificate.
 * Helpers that leave the process group (setsid) outlive the kill; so do all of them when
 * beside itself is killed: a tool for the bench, not for a user.
 * Exits with CMD's status, or 125 when either cannot be started or a helper fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* The helpers argv[0..] (NULL-terminated, "::" between them, since bench/interleave takes
 * ":::"), one after another: 0 when each exits 0. Runs in the group's first process. */
static int run_helpers(char **argv)
{
	struct sched_param none = {.sched_priority = 0};
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (null < 0 || dup2(null, STDOUT_FILENO) < 0 ||
	    sched_setscheduler(0, SCHED_IDLE, &none) < 0) {
		perror("beside: the helpers' stdout or SCHED_IDLE");
		return 1;
	}
	while (*argv) {
		char **next = argv;
		pid_t pid;
		int st;

		while (*next && strcmp(*next, "::") != 0)
			next++;
		if (*next)
			*next++ = NULL;
		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0 ||
		    (st = reap(pid)) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "beside: %s failed\n", argv[0]);
			return 1;
		}
		argv = next;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int sep = 1, err, st, hst, reap_errno;
	pid_t helpers, cmd;

	while (sep < argc && strcmp(argv[sep], "--") != 0)
		sep++;
	if (sep == 1 || sep + 1 >= argc) {
		fprintf(stderr,
			"usage: beside HELPER [ARG...] [:: HELPER [ARG...]]... -- CMD [ARG...]\n");
		return 125;
	}
	argv[sep] = NULL;
	if ((helpers = fork()) < 0) {
		perror("beside: fork");
		return 125;
	}
	if (helpers == 0) {
		setpgid(0, 0);
		_exit(run_helpers(&argv[1]));
	}
	setpgid(helpers, helpers); /* both sides: the group exists before either goes on */
	err = posix_spawn(&cmd, argv[sep + 1], NULL, NULL, &argv[sep + 1], environ);
	st = err ? -1 : reap(cmd);
	reap_errno = errno;
	kill(-helpers, SIGKILL);
	hst = reap(helpers);
	if (err || st < 0) {
		fprintf(stderr, "beside: %s: %s\n", argv[sep + 1],
			strerror(err ? err : reap_errno));
		return 125;
	}
	/* killed by us, or done: anything else means a helper never did its work */
	if (hst < 0 || (WIFEXITED(hst) && WEXITSTATUS(hst) != 0))
		return 125;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* tools/step_trace OUT PROGRAM [ARGS...]: runs PROGRAM under ptrace, single-stepping it and every
 * process it forks, and writes to OUT the offset from PROGRAM's load address (hex, one a line,
 * in the order each first ran) of every instruction of PROGRAM's own code that ran. A process
 * that executes a program (another, or PROGRAM again) is let go. Exits with PROGRAM's status, 2
 * on an error of its own, 3 when this system does not let it trace (ptrace refused).
 *
 * For tools/start-order, which asks which of agentbox's code a start runs so that the link can
 * put that code on as few pages as possible. Counters of retired instructions or branch
 * tracing would be faster, but a virtual machine rarely has them; a single step costs tens of
 * microseconds there, a start of agentbox some half a million steps. A development tool: a
 * signal that stops a process (SIGSTOP to a child) is taken for a new child's first stop. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

struct code_map {
	uintptr_t base;	  /* where the program's first page (file offset 0) is mapped */
	uintptr_t lo, hi; /* its executable mapping */
	unsigned char *seen;
	uint32_t *order; /* offsets from base, first run first */
	size_t count;
};

enum { FAILED = 2, CANNOT_TRACE = 3 };

__attribute__((format(printf, 2, 0), noreturn)) static void vfail(int code, const char *fmt,
								  va_list ap)
{
	fputs("step_trace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(code);
}

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(FAILED, fmt, ap);
}

__attribute__((format(printf, 1, 2), noreturn)) static void cannot_trace(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(CANNOT_TRACE, fmt, ap);
}

/* the mappings of PATH in process PID: base and executable range */
static void code_map_find(struct code_map *m, pid_t pid, const char *path)
{
	char maps[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		die("%s: %s", maps, strerror(errno));
	while (fgets(line, sizeof line, f)) {
		unsigned long start, end, off;
		char perm[8];
		int at = 0;
		const char *name;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &start, &end, perm, &off, &at) < 4 ||
		    !at)
			continue;
		name = line + at;
		if (strncmp(name, path, strlen(path)) != 0 || name[strlen(path)] != '\n')
			continue;
		if (off == 0 && !m->base)
			m->base = start;
		if (perm[2] == 'x') {
			m->lo = start;
			m->hi = end;
		}
	}
	fclose(f);
	if (!m->base || !m->hi || m->lo < m->base || m->hi - m->base > UINT32_MAX)
		die("no executable mapping of %s in process %d", path, (int)pid);
	m->seen = calloc(m->hi - m->lo, 1);
	m->order = calloc(m->hi - m->lo, sizeof *m->order);
	if (!m->seen || !m->order)
		die("out of memory");
}

static void code_map_note(struct code_map *m, pid_t pid)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0) {
		if (errno == ESRCH)
			return;
		die("PTRACE_GETREGS %d: %s", (int)pid, strerror(errno));
	}
	if (!m->seen || r.rip < m->lo || r.rip >= m->hi || m->seen[r.rip - m->lo])
		return;
	m->seen[r.rip - m->lo] = 1;
	m->order[m->count++] = (uint32_t)(r.rip - m->base);
}

static pid_t start(char **argv)
{
	int status;
	pid_t child = fork();

	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 || raise(SIGSTOP) != 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(child, &status, 0) != child)
		die("waitpid: %s", strerror(errno));
	if (!WIFSTOPPED(status)) /* PTRACE_TRACEME refused */
		cannot_trace("%s did not stop before its exec", argv[0]);
	if (ptrace(PTRACE_SETOPTIONS, child, 0,
		   PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		       PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL) < 0 ||
	    ptrace(PTRACE_CONT, child, 0, 0) < 0)
		cannot_trace("ptrace %s: %s", argv[0], strerror(errno));
	return child;
}

/* steps every traced process until none is left; returns the first one's exit status */
static int trace(struct code_map *m, pid_t first, const char *path)
{
	int status, result = 125;
	pid_t pid;

	while ((pid = waitpid(-1, &status, __WALL)) > 0) {
		int sig, event, pass = 0;

		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (pid == first)
				result = WIFEXITED(status) ? WEXITSTATUS(status)
							   : 128 + WTERMSIG(status);
			continue;
		}
		sig = WSTOPSIG(status);
		event = status >> 16;
		if (event == PTRACE_EVENT_EXEC) {
			if (m->seen) { /* any exec after the first: not ours to trace */
				if (ptrace(PTRACE_DETACH, pid, 0, 0) < 0 && errno != ESRCH)
					die("PTRACE_DETACH %d: %s", (int)pid, strerror(errno));
				continue;
			}
			code_map_find(m, pid, path);
		} else if (!event && sig == SIGTRAP) {
			code_map_note(m, pid);
		} else if (!event && sig != SIGSTOP) {
			pass = sig;
		}
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, pass) < 0 && errno != ESRCH)
			die("PTRACE_SINGLESTEP %d: %s", (int)pid, strerror(errno));
	}
	if (errno != ECHILD)
		die("waitpid: %s", strerror(errno));
	return result;
}

int main(int argc, char **argv)
{
	struct code_map m = {0};
	char path[PATH_MAX];
	FILE *out;
	int result;

	if (argc < 3)
		die("usage: step_trace OUT PROGRAM [ARGS...]");
	if (!realpath(argv[2], path))
		die("%s: %s", argv[2], strerror(errno));
	result = trace(&m, start(argv + 2), path);
	out = fopen(argv[1], "we");
	if (!out)
		die("%s: %s", argv[1], strerror(errno));
	for (size_t i = 0; i < m.count; i++)
		fprintf(out, "%x\n", m.order[i]);
	if (fclose(out) != 0)
		die("%s: %s", argv[1], strerror(errno));
	fprintf(stderr, "step_trace: %zu instructions of %s ran\n", m.count, path);
	return result;
}

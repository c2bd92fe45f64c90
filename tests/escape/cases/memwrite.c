/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* memwrite: change another process's memory.
 *   memwrite victim FILE         a victim: writes "PID ADDR" to FILE (ADDR: a variable holding 0),
 *                                then waits up to 30 s for it to change; prints CHANGED and
 *                                exits 0 when it does, exits 1 otherwise
 *   memwrite ptrace PID ADDR     PTRACE_ATTACH + PTRACE_POKEDATA 0x5eed at ADDR
 *   memwrite vmwrite PID ADDR    process_vm_writev 0x5eed at ADDR
 *   memwrite procmem PID ADDR    pwrite 0x5eed at ADDR of /proc/PID/mem
 *   memwrite sibling ptrace|vmwrite|procmem
 *                                the same against a child it forks itself (the same address in
 *                                both, by fork): SUCCESS when the child saw the change */
#include "escape.h"

#include <signal.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#define MAGIC 0x5eedl

static volatile long target;

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* Waits up to seconds for target to become MAGIC. */
static int watch(int seconds)
{
	for (int i = 0; i < seconds * 100; i++) {
		if (target == MAGIC)
			return 0;
		nap_ms(10);
	}
	return 1;
}

/* 0 or an errno; step names what failed. */
static int poke(const char *how, pid_t pid, uintptr_t addr, const char **step)
{
	long value = MAGIC;

	if (!strcmp(how, "ptrace")) {
		int st;
		*step = "ptrace(PTRACE_ATTACH)";
		if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
			return errno;
		if (waitpid(pid, &st, __WALL) < 0)
			return errno;
		*step = "ptrace(PTRACE_POKEDATA)";
		if (ptrace(PTRACE_POKEDATA, pid, (void *)addr, (void *)value) < 0)
			return errno;
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		return 0;
	}
	if (!strcmp(how, "vmwrite")) {
		struct iovec local = {&value, sizeof(value)},
			     remote = {(void *)addr, sizeof(value)};
		*step = "process_vm_writev";
		return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof(value)
			   ? 0
			   : errno;
	}
	if (!strcmp(how, "procmem")) {
		char path[64];
		int fd;
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
		*step = "open /proc/PID/mem";
		if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
			return errno;
		*step = "pwrite /proc/PID/mem";
		if (pwrite(fd, &value, sizeof(value), (off_t)addr) != (ssize_t)sizeof(value)) {
			int e = errno;
			close(fd);
			return e;
		}
		close(fd);
		return 0;
	}
	usage("memwrite ... ptrace|vmwrite|procmem");
}

int main(int argc, char **argv)
{
	const char *step = "";
	int err;

	if (argc == 3 && !strcmp(argv[1], "victim")) {
		FILE *f = fopen(argv[2], "w");
		if (!f)
			failed(errno, "fopen %s", argv[2]);
		fprintf(f, "%d %lx\n", (int)getpid(), (unsigned long)(uintptr_t)&target);
		fclose(f);
		if (watch(30) == 0) {
			printf("CHANGED\n");
			return 0;
		}
		return 1;
	}
	if (argc == 4) {
		pid_t pid = (pid_t)atoi(argv[2]);
		uintptr_t addr = (uintptr_t)strtoul(argv[3], NULL, 16);
		info("target pid %d, address %lx", (int)pid, (unsigned long)addr);
		if ((err = poke(argv[1], pid, addr, &step)) != 0)
			failed(err, "%s", step);
		success("%s wrote to process %d", argv[1], (int)pid);
	}
	if (argc == 3 && !strcmp(argv[1], "sibling")) {
		pid_t child = fork();
		int st;
		if (child < 0)
			failed(errno, "fork");
		if (child == 0)
			_exit(watch(5) == 0 ? 42 : 1);
		nap_ms(50);
		err = poke(argv[2], child, (uintptr_t)&target, &step);
		if (err) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			failed(err, "%s on the sibling %d", step, (int)child);
		}
		if (waitpid(child, &st, 0) < 0)
			failed(errno, "waitpid");
		if (WIFEXITED(st) && WEXITSTATUS(st) == 42)
			success("%s changed the sibling's memory", argv[2]);
		failed(0, "%s returned 0 but the sibling saw no change", argv[2]);
	}
	usage("memwrite victim FILE | memwrite ptrace|vmwrite|procmem PID ADDR | memwrite sibling "
	      "HOW");
}

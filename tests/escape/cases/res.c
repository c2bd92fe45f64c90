/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* res: exhaust a resource; every loop is bounded by a cap, so the positive control (no limit)
 * ends too.
 *   res bomb CAP hold|reap MARKER  fork bomb: every process forks while fewer than CAP were made;
 *                                  SUCCESS when CAP processes exist, FAILED errno=EAGAIN with the
 *                                  count when fork was refused first. hold: then every process
 *                                  sleeps until killed (the sandbox's end must take them all);
 *                                  reap: kills the rest of its process group and exits (the
 *                                  control)
 *   res heap CAPMB                 malloc and touch 8 MiB blocks up to CAPMB MiB
 *   res fill DIR TOTALMB FILEMB    write files of FILEMB MiB into DIR up to TOTALMB MiB
 *   res big FILE MB                write one file of MB MiB
 *   res sparse FILE                one byte at offset 1 TiB, then ftruncate to 2 TiB
 *   res crash                      die of SIGSEGV (a core dump, where core dumps are on)
 * SIGXFSZ is ignored, so the file-size limit shows as EFBIG. */
#include "escape.h"

#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#define MiB (1024L * 1024L)

static void nap_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
}

struct shared {
	atomic_long made;
	atomic_int err;
};

static _Noreturn void bomb(long cap, int hold)
{
	struct shared *s =
	    mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t top = getpid();
	long last = -1;

	if (s == MAP_FAILED)
		failed(errno, "mmap");
	setpgid(0, 0);
	atomic_store(&s->made, 1); /* this process */
	for (;;) {
		pid_t pid;
		if (atomic_fetch_add(&s->made, 1) >= cap) {
			atomic_fetch_sub(&s->made, 1);
			break;
		}
		pid = fork();
		if (pid < 0) {
			int zero = 0;
			atomic_fetch_sub(&s->made, 1);
			atomic_compare_exchange_strong(&s->err, &zero, errno);
			break;
		}
		/* parent and child both go on forking: the count grows exponentially */
	}
	if (getpid() != top)
		for (;;)
			pause(); /* every process but the first waits to be killed */
	/* the first: wait until the count stops growing */
	for (int still = 0; still < 6; nap_ms(50)) {
		long now = atomic_load(&s->made);
		still = now == last ? still + 1 : 0;
		last = now;
	}
	if (atomic_load(&s->err) == 0 && last >= cap)
		printf("RESULT SUCCESS the bomb made %ld processes (the cap)\n", last);
	else
		printf("RESULT FAILED errno=%s fork refused after %ld processes\n",
		       errname(atomic_load(&s->err)), last);
	fflush(stdout);
	if (hold)
		for (;;)
			pause();
	signal(SIGTERM, SIG_IGN); /* the rest of its process group dies, this one reports */
	kill(0, SIGTERM);
	exit(0);
}

static int write_mb(int fd, long mb, long *done)
{
	static char block[MiB];

	memset(block, 'x', sizeof(block));
	for (long i = 0; i < mb; i++) {
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return -1;
		(*done)++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGXFSZ, SIG_IGN);
	if (argc == 5 && !strcmp(argv[1], "bomb"))
		bomb(atol(argv[2]), !strcmp(argv[3], "hold"));
	if (argc == 3 && !strcmp(argv[1], "heap")) {
		long cap = atol(argv[2]), mb = 0;
		while (mb < cap) {
			char *p = malloc(8 * MiB);
			if (!p)
				failed(errno, "malloc refused after %ld MiB", mb);
			memset(p, 1, 8 * MiB);
			mb += 8;
		}
		success("allocated and touched %ld MiB", mb);
	}
	if (argc == 5 && !strcmp(argv[1], "fill")) {
		long total = atol(argv[3]), per = atol(argv[4]), done = 0;
		for (int i = 0; done < total; i++) {
			char path[4096];
			int fd;
			snprintf(path, sizeof(path), "%s/fill.%d", argv[2], i);
			if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
				failed(errno, "create %s after %ld MiB", path, done);
			if (write_mb(fd, per < total - done ? per : total - done, &done) < 0)
				failed(errno, "write refused after %ld MiB", done);
			close(fd);
		}
		success("wrote %ld MiB into %s", done, argv[2]);
	}
	if (argc == 4 && !strcmp(argv[1], "big")) {
		long done = 0;
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			failed(errno, "create %s", argv[2]);
		if (write_mb(fd, atol(argv[3]), &done) < 0)
			failed(errno, "write refused after %ld MiB", done);
		success("wrote a %ld MiB file", done);
	}
	if (argc == 3 && !strcmp(argv[1], "sparse")) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			failed(errno, "create %s", argv[2]);
		if (pwrite(fd, "x", 1, 1024L * 1024 * MiB) != 1)
			failed(errno, "pwrite at 1 TiB");
		if (ftruncate(fd, 2048L * 1024 * MiB) < 0)
			failed(errno, "ftruncate to 2 TiB");
		success("made a 2 TiB (sparse) file");
	}
	if (argc == 2 && !strcmp(argv[1], "crash")) {
		printf("INFO crashing (pid %d)\n", (int)getpid());
		fflush(stdout);
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		return 3;
	}
	usage(
	    "res bomb CAP hold|reap MARKER | heap CAPMB | fill DIR TOTALMB FILEMB | big FILE MB | "
	    "sparse FILE | crash");
}

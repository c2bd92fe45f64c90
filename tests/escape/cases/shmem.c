/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* shmem: hold memory the address-space limit does not count, and keep it touched.
 *   shmem memfd MB    a memfd of MB MiB, written through (no mapping)
 *   shmem sysv MB     a SysV shared memory segment of MB MiB, attached, touched, detached:
 *                     it outlives the process until IPC_RMID, which the probe does last
 *   shmem anon MB     a shared anonymous mapping of MB MiB, touched
 *   shmem zero MB     a writable shared mapping of /dev/zero (shared anonymous memory too)
 * SUCCESS when all MB MiB were held at once. */
#include "escape.h"

#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#define MiB (1024L * 1024L)

static _Noreturn void memfd(long mb)
{
	static char block[MiB];
	int fd = (int)syscall(SYS_memfd_create, "shmem-probe", MFD_CLOEXEC);

	if (fd < 0)
		failed(errno, "memfd_create");
	memset(block, 0x5a, sizeof(block));
	for (long i = 0; i < mb; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			failed(errno, "memfd write at %ld MiB", i);
	success("memfd holds %ld MiB", mb);
}

static _Noreturn void sysv(long mb)
{
	int id = shmget(IPC_PRIVATE, (size_t)mb * MiB, IPC_CREAT | 0600);
	char *p;

	if (id < 0)
		failed(errno, "shmget");
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		int e = errno;
		shmctl(id, IPC_RMID, NULL);
		failed(e, "shmat");
	}
	memset(p, 0x5a, (size_t)mb * MiB);
	shmdt(p);
	shmctl(id, IPC_RMID, NULL);
	success("SysV segment held %ld MiB", mb);
}

/* Memory RLIMIT_DATA does not count: shared, so not "data". fd -1 for anonymous. */
static _Noreturn void shared(long mb, int fd, const char *what)
{
	char *p = mmap(NULL, (size_t)mb * MiB, PROT_READ | PROT_WRITE,
		       MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);

	if (p == MAP_FAILED)
		failed(errno, "mmap %s", what);
	memset(p, 0x5a, (size_t)mb * MiB);
	success("%s held %ld MiB", what, mb);
}

static _Noreturn void zero(long mb)
{
	int fd = open("/dev/zero", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		failed(errno, "open /dev/zero for writing");
	shared(mb, fd, "a shared mapping of /dev/zero");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "memfd"))
		memfd(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "sysv"))
		sysv(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "anon"))
		shared(atol(argv[2]), -1, "a shared anonymous mapping");
	if (argc == 3 && !strcmp(argv[1], "zero"))
		zero(atol(argv[2]));
	usage("shmem memfd|sysv|anon|zero MB");
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* shmem: hold memory the address-space limit does not count, and keep it touched.
 *   shmem memfd MB    a memfd of MB MiB, written through (no mapping)
 *   shmem sysv MB     a SysV shared memory segment of MB MiB, attached, touched, detached:
 *                     it outlives the process until IPC_RMID, which the probe does last
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

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "memfd"))
		memfd(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "sysv"))
		sysv(atol(argv[2]));
	usage("shmem memfd|sysv MB");
}

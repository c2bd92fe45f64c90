/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* abi: system calls through another ABI, which a filter written for x86_64 numbers would not
 * recognise.
 *   abi x32     getpid with the x32 bit set (0x40000000 | 39)
 *   abi int80   getpid through the 32-bit int $0x80 entry (number 20)
 * Prints RESULT SUCCESS when the call returned the pid, RESULT RETURNED when it came back with
 * an error (the kernel has no such ABI: the process survived and the kernel answered), RESULT
 * NOGATE when int $0x80 raised a general-protection fault (SIGSEGV with SI_KERNEL: the kernel
 * has no 32-bit entry at all, IA32 emulation is off), and nothing when the process was killed
 * on the spot. */
#include "escape.h"

#include <signal.h>
#include <sys/syscall.h>

/* Only the fault int $0x80 raises without a 32-bit entry is reported; any other SIGSEGV (a
 * broken probe) kills the process as usual. */
static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	static const char nogate[] = "RESULT NOGATE int $0x80 raised a general-protection fault "
				     "(SIGSEGV, SI_KERNEL): no 32-bit entry\n";
	(void)ctx;
	if (si->si_code == SI_KERNEL) {
		(void)!write(STDOUT_FILENO, nogate, sizeof(nogate) - 1);
		_exit(3);
	}
	signal(sig, SIG_DFL);
}

int main(int argc, char **argv)
{
	long ret;

	if (argc != 2)
		usage("abi x32|int80");
	printf("INFO about to call getpid via %s (pid %d)\n", argv[1], (int)getpid());
	fflush(stdout);
	if (!strcmp(argv[1], "x32")) {
#if defined(__x86_64__)
		ret = syscall(0x40000000L | SYS_getpid);
		if (ret < 0)
			printf("RESULT RETURNED errno=%s: the kernel answered the x32 call\n",
			       errname(errno));
		else
			printf("RESULT SUCCESS x32 getpid returned %ld\n", ret);
		return 0;
#endif
	} else if (!strcmp(argv[1], "int80")) {
#if defined(__x86_64__)
		struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO};
		sigaction(SIGSEGV, &sa, NULL);
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "rcx", "r11");
		if (ret < 0)
			printf("RESULT RETURNED errno=%s: the kernel answered int $0x80\n",
			       errname((int)-ret));
		else
			printf("RESULT SUCCESS int $0x80 getpid returned %ld\n", ret);
		return 0;
#endif
	}
	usage("abi x32|int80 (x86_64 only)");
}

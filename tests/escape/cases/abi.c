/* abi: system calls through another ABI, which a filter written for x86_64 numbers would not
 * recognise.
 *   abi x32     getpid with the x32 bit set (0x40000000 | 39)
 *   abi int80   getpid through the 32-bit int $0x80 entry (number 20)
 * Prints RESULT SUCCESS when the call returned the pid, RESULT RETURNED when it came back with
 * an error (the kernel has no such ABI: the process survived and the kernel answered), and
 * nothing when the process was killed on the spot. */
#include "escape.h"

#include <sys/syscall.h>

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
			printf("RESULT RETURNED errno=%s: the kernel answered the x32 call\n", errname(errno));
		else
			printf("RESULT SUCCESS x32 getpid returned %ld\n", ret);
		return 0;
#endif
	} else if (!strcmp(argv[1], "int80")) {
#if defined(__x86_64__)
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "rcx", "r11");
		if (ret < 0)
			printf("RESULT RETURNED errno=%s: the kernel answered int $0x80\n", errname((int)-ret));
		else
			printf("RESULT SUCCESS int $0x80 getpid returned %ld\n", ret);
		return 0;
#endif
	}
	usage("abi x32|int80 (x86_64 only)");
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* confine MODE [ARG]: makes one kind of system call the default seccomp preset refuses and
 * prints what the kernel (or the filter) answered, as one line
 *     RESULT ok            the call succeeded
 *     RESULT errno=NAME    it failed with errno NAME
 * (plus INFO lines), then exits 0 on success and 1 on failure. Built by test_confine.sh with cc
 * at run time and run inside the sandbox (the refusal) and under a profile without a filter
 * (the positive control: the call succeeds, or at least reaches the kernel and gets another
 * errno).
 *
 * Where the kernel itself would refuse a process without capabilities with EPERM too, the mode
 * is built so that without a filter it does not: mount, packet and handle first make a user
 * namespace of their own (the default preset refuses that as well, and the audit names it), so
 * under [sandbox] nesting = true with [seccomp] preset = none the call really succeeds (handle:
 * gets past the permission check); bpf sends an attribute size the kernel rejects (E2BIG)
 * before any permission check, because unprivileged bpf is off on most hosts. The filter
 * refuses these calls whatever their arguments, so to it the probe is the same call.
 *
 * Modes: unshare clone3 mount ptrace tiocsti tiocsti-hi io_uring bpf keyctl perf userfaultfd
 *        packet sockdiag x32 int80 handle flood N */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EPERM:
		return "EPERM";
	case ENOSYS:
		return "ENOSYS";
	case EACCES:
		return "EACCES";
	case EINVAL:
		return "EINVAL";
	case E2BIG:
		return "E2BIG";
	case EBADF:
		return "EBADF";
	case ESRCH:
		return "ESRCH";
	case ENOENT:
		return "ENOENT";
	case ENOTTY:
		return "ENOTTY";
	case EIO:
		return "EIO";
	case EFAULT:
		return "EFAULT";
	case ENODEV:
		return "ENODEV";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EAFNOSUPPORT:
		return "EAFNOSUPPORT";
	case EPROTONOSUPPORT:
		return "EPROTONOSUPPORT";
	case ESTALE:
		return "ESTALE";
	case ENOMEM:
		return "ENOMEM";
	case ENOSPC:
		return "ENOSPC";
	case EAGAIN:
		return "EAGAIN";
	default:
		return "other";
	}
}

/* Prints the RESULT line for a call that returned rc (errno in err) and gives the exit status. */
static int result(long rc, int err)
{
	if (rc >= 0) {
		printf("RESULT ok\n");
		return 0;
	}
	printf("RESULT errno=%s (%d)\n", errname(err), err);
	return 1;
}

/* errno is read after the call, in res */
static int res(long rc)
{
	return result(rc, errno);
}

#define CALL(expr) res((errno = 0, (long)(expr)))

/* A user namespace (and mount and network namespaces) of our own, for the modes whose call
 * needs a capability: refused by the default preset, allowed without a filter. */
static void own_namespaces(void)
{
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) == 0)
		printf("INFO unshare ok\n");
	else
		printf("INFO unshare errno=%s\n", errname(errno));
}

static int do_clone3(void)
{
	struct clone_args args;
	long pid;
	int err, st;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	errno = 0;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	err = errno;
	if (pid == 0)
		syscall(SYS_exit_group, 0);
	if (pid > 0)
		waitpid((pid_t)pid, &st, 0);
	return result(pid, err);
}

static int do_mount(void)
{
	mkdir("/tmp/mnt", 0755);
	own_namespaces();
	return CALL(mount("none", "/tmp/mnt", "tmpfs", 0, "size=1m"));
}

static int do_ptrace(void)
{
	pid_t child = fork();
	long rc;
	int err, st;

	if (child < 0)
		return result(-1, errno);
	if (child == 0) {
		for (;;)
			pause();
	}
	errno = 0;
	rc = ptrace(PTRACE_ATTACH, child, NULL, NULL);
	err = errno;
	if (rc == 0) {
		waitpid(child, &st, 0);
		ptrace(PTRACE_DETACH, child, NULL, NULL);
	}
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	return result(rc, err);
}

static int do_tiocsti(unsigned long request)
{
	char c = ' ';

	printf("INFO isatty=%d\n", isatty(0));
	return CALL(syscall(SYS_ioctl, 0, request, &c));
}

static int do_io_uring(void)
{
	struct io_uring_params params;
	memset(&params, 0, sizeof(params));
	return CALL(syscall(SYS_io_uring_setup, 4, &params));
}

static int do_bpf(void)
{
	static union bpf_attr attr[2]; /* room for the oversized length: zeroed, readable */
	memset(attr, 0, sizeof(attr));
	attr[0].map_type = BPF_MAP_TYPE_ARRAY;
	attr[0].key_size = 4;
	attr[0].value_size = 4;
	attr[0].max_entries = 1;
	/* a length past PAGE_SIZE: E2BIG from the kernel before any permission check */
	return CALL(syscall(SYS_bpf, BPF_MAP_CREATE, attr, (unsigned)sysconf(_SC_PAGESIZE) + 8));
}

static int do_keyctl(void)
{
	return CALL(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1));
}

static int do_perf(void)
{
	struct perf_event_attr pe;
	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_SW_TASK_CLOCK;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	return CALL(syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
}

static int do_userfaultfd(void)
{
	return CALL(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
}

static int do_packet(void)
{
	own_namespaces();
	return CALL(socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
}

static int do_sockdiag(void)
{
	return CALL(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
}

static int do_x32(void)
{
	/* getpid (39) through the x32 ABI: a filtered process is killed before this returns */
	return CALL(syscall(0x40000000 | 39));
}

/* Without a 32-bit entry (IA32 emulation off) int $0x80 raises a general-protection fault:
 * SIGSEGV with SI_KERNEL. That one fault is reported (RESULT nogate); any other SIGSEGV kills. */
static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	static const char nogate[] = "RESULT nogate int $0x80 faulted (SIGSEGV, SI_KERNEL)\n";
	(void)ctx;
	if (si->si_code == SI_KERNEL) {
		(void)!write(STDOUT_FILENO, nogate, sizeof(nogate) - 1);
		_exit(3);
	}
	signal(sig, SIG_DFL);
}

static int do_int80(void)
{
	long rc = 20; /* getpid on i386 */
	struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO};

	sigaction(SIGSEGV, &sa, NULL);
	__asm__ volatile("int $0x80" : "+a"(rc) : : "memory");
	printf("INFO int80 returned %ld (getpid %d)\n", rc, (int)getpid());
	return rc < 0 ? result(-1, (int)-rc) : result(rc, 0);
}

/* A handle for the root of a tmpfs mounted in a user and mount namespace of our own. Without a
 * filter both calls reach the kernel: name_to_handle_at succeeds and open_by_handle_at gets past
 * its permission check (since Linux 6.12 the owner of a mount may decode handles on it) and
 * answers ESTALE (or succeeds). With the default preset the namespace, the mount and both calls
 * are refused; a made-up handle is then tried, so open_by_handle_at still reaches the filter. */
static int do_handle(void)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[MAX_HANDLE_SZ];
	} h;
	int mount_id, mfd;

	mkdir("/tmp/mnt", 0755);
	own_namespaces();
	if (mount("none", "/tmp/mnt", "tmpfs", 0, "size=1m") == 0)
		printf("INFO mount ok\n");
	else
		printf("INFO mount errno=%s\n", errname(errno));
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, "/tmp/mnt", &h.fh, &mount_id, 0) == 0) {
		printf("INFO name_to_handle_at ok\n");
	} else {
		printf("INFO name_to_handle_at errno=%s\n", errname(errno));
		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1;
	}
	mfd = open("/tmp/mnt", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return CALL(open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

/* n refused ptrace calls in a row; counts each answer. PTRACE_CONT on ourselves: ESRCH from
 * the kernel (we are not traced), EPERM from the filter. */
static int do_flood(long n)
{
	long eperm = 0, esrch = 0, other = 0;

	for (long i = 0; i < n; i++) {
		errno = 0;
		if (ptrace(PTRACE_CONT, getpid(), NULL, NULL) == 0)
			other++;
		else if (errno == EPERM)
			eperm++;
		else if (errno == ESRCH)
			esrch++;
		else
			other++;
	}
	printf("RESULT flood calls=%ld EPERM=%ld ESRCH=%ld other=%ld\n", n, eperm, esrch, other);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "unshare"))
		return CALL(unshare(CLONE_NEWUSER));
	if (!strcmp(m, "clone3"))
		return do_clone3();
	if (!strcmp(m, "mount"))
		return do_mount();
	if (!strcmp(m, "ptrace"))
		return do_ptrace();
	if (!strcmp(m, "tiocsti"))
		return do_tiocsti(TIOCSTI);
	if (!strcmp(m, "tiocsti-hi"))
		return do_tiocsti(0x100000000ul | TIOCSTI);
	if (!strcmp(m, "io_uring"))
		return do_io_uring();
	if (!strcmp(m, "bpf"))
		return do_bpf();
	if (!strcmp(m, "keyctl"))
		return do_keyctl();
	if (!strcmp(m, "perf"))
		return do_perf();
	if (!strcmp(m, "userfaultfd"))
		return do_userfaultfd();
	if (!strcmp(m, "packet"))
		return do_packet();
	if (!strcmp(m, "sockdiag"))
		return do_sockdiag();
	if (!strcmp(m, "x32"))
		return do_x32();
	if (!strcmp(m, "int80"))
		return do_int80();
	if (!strcmp(m, "handle"))
		return do_handle();
	if (!strcmp(m, "flood") && argc > 2)
		return do_flood(strtol(argv[2], NULL, 10));
	fprintf(stderr, "usage: confine MODE [ARG]\n");
	return 2;
}

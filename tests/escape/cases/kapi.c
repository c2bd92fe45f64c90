/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* kapi: kernel interfaces a sandbox has no use for and that have been the way out of many.
 *   kapi keyctl       add a key to the process keyring and read it back
 *   kapi bpf          create a BPF array map; when the kernel refuses an unprivileged caller
 *                     (kernel.unprivileged_bpf_disabled), also send an attribute the kernel
 *                     rejects before any permission check (E2BIG): RESULT REACHED shows the
 *                     call got to the kernel
 *   kapi perf         perf_event_open of a software clock on itself (user space only)
 *   kapi userfaultfd  userfaultfd(UFFD_USER_MODE_ONLY) and its UFFDIO_API handshake */
#include "escape.h"

#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

int main(int argc, char **argv)
{
	if (argc != 2)
		usage("kapi keyctl|bpf|perf|userfaultfd");
	if (!strcmp(argv[1], "keyctl")) {
		char payload[64], back[64] = "";
		long id, n;
		snprintf(payload, sizeof(payload), "escape-key-%d", (int)getpid());
		id = syscall(SYS_add_key, "user", "agentbox-escape", payload, strlen(payload),
			     KEY_SPEC_PROCESS_KEYRING);
		if (id < 0)
			failed(errno, "add_key(user, process keyring)");
		n = syscall(SYS_keyctl, KEYCTL_READ, id, back, sizeof(back) - 1);
		if (n < 0)
			failed(errno, "keyctl(KEYCTL_READ)");
		back[n < (long)sizeof(back) ? n : (long)sizeof(back) - 1] = '\0';
		if (strcmp(back, payload))
			failed(0, "keyctl read back '%s'", back);
		success("stored and read back a key (id %ld)", id);
	}
	if (!strcmp(argv[1], "bpf")) {
		union bpf_attr attr;
		char big[sizeof(attr) + 64];
		long fd;
		memset(&attr, 0, sizeof(attr));
		attr.map_type = BPF_MAP_TYPE_ARRAY;
		attr.key_size = 4;
		attr.value_size = 8;
		attr.max_entries = 1;
		fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
		if (fd >= 0)
			success("created a BPF map (fd %ld)", fd);
		info("BPF_MAP_CREATE: %s", errname(errno));
		if (errno != EPERM || getuid() == 0)
			failed(errno, "bpf(BPF_MAP_CREATE)");
		/* a tail of non-zero bytes past the known attribute: E2BIG before any permission
		 * check */
		memset(big, 0, sizeof(big));
		memcpy(big, &attr, sizeof(attr));
		big[sizeof(big) - 1] = 1;
		if (syscall(SYS_bpf, BPF_MAP_CREATE, big, sizeof(big)) < 0 && errno == E2BIG) {
			printf("RESULT REACHED the kernel answered E2BIG (unprivileged bpf is off "
			       "on this "
			       "host)\n");
			return 0;
		}
		failed(errno, "bpf(BPF_MAP_CREATE, oversized attribute)");
	}
	if (!strcmp(argv[1], "perf")) {
		struct perf_event_attr pe;
		long fd;
		memset(&pe, 0, sizeof(pe));
		pe.type = PERF_TYPE_SOFTWARE;
		pe.size = sizeof(pe);
		pe.config = PERF_COUNT_SW_TASK_CLOCK;
		pe.exclude_kernel = 1;
		pe.exclude_hv = 1;
		fd = syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
		if (fd < 0)
			failed(errno, "perf_event_open(software clock, self)");
		success("perf_event_open gave fd %ld", fd);
	}
	if (!strcmp(argv[1], "userfaultfd")) {
		struct uffdio_api api = {.api = UFFD_API};
		long fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
		if (fd < 0)
			failed(errno, "userfaultfd(UFFD_USER_MODE_ONLY)");
		if (ioctl((int)fd, UFFDIO_API, &api) < 0)
			failed(errno, "ioctl(UFFDIO_API)");
		success("userfaultfd gave fd %ld (API %llx)", fd, (unsigned long long)api.api);
	}
	usage("kapi keyctl|bpf|perf|userfaultfd");
}

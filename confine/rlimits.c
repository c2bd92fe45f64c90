/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "rlimits.h"

#include <errno.h>
#include <sys/resource.h>

static int lower(int resource, const char *name, uint64_t value, struct ab_err *e)
{
	struct rlimit cur, want;

	if (getrlimit(resource, &cur) < 0)
		return ab_fail(e, errno, "getrlimit %s", name);
	want.rlim_cur = value;
	want.rlim_max = value;
	/* RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL a second later for those who ignore it */
	if (resource == RLIMIT_CPU)
		want.rlim_max = value + 1;
	/* never raise a limit the caller already has lower */
	if (cur.rlim_max != RLIM_INFINITY && want.rlim_max > cur.rlim_max)
		want.rlim_max = cur.rlim_max;
	if (want.rlim_cur > want.rlim_max)
		want.rlim_cur = want.rlim_max;
	if (setrlimit(resource, &want) < 0)
		return ab_fail(e, errno, "setrlimit %s %llu", name, (unsigned long long)value);
	return 0;
}

/* Only the hard limit: the soft one stays what it was (glibc sizes new threads' stacks by it),
 * the process cannot raise it past the hard one. */
static int cap_hard(int resource, const char *name, uint64_t value, struct ab_err *e)
{
	struct rlimit cur;

	if (getrlimit(resource, &cur) < 0)
		return ab_fail(e, errno, "getrlimit %s", name);
	if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max <= value)
		return 0;
	cur.rlim_max = value;
	if (cur.rlim_cur == RLIM_INFINITY || cur.rlim_cur > value)
		cur.rlim_cur = value;
	if (setrlimit(resource, &cur) < 0)
		return ab_fail(e, errno, "setrlimit %s %llu", name, (unsigned long long)value);
	return 0;
}

/* memory is what each process allocates, not the address space it reserves: runtimes reserve
 * far more than they use (V8 sets aside about 10 GiB for each WebAssembly memory, the JVM its
 * heap's maximum), and an address-space limit broke them. RLIMIT_DATA counts private writable
 * memory, including reserved memory when it is made writable; the stack is capped beside it.
 * Shared memory it does not count is refused elsewhere (see seccomp_uncounted_memory). */
static int limit_memory(uint64_t bytes, struct ab_err *e)
{
	if (lower(RLIMIT_DATA, "memory", bytes, e) < 0)
		return -1;
	return cap_hard(RLIMIT_STACK, "memory (stack)", bytes, e);
}

int limits_apply(const struct limits *l, struct ab_err *e)
{
	if (lower(RLIMIT_CORE, "core", 0, e) < 0)
		return -1;
	if (l->cpu_s && lower(RLIMIT_CPU, "cpu", l->cpu_s, e) < 0)
		return -1;
	if (l->memory && limit_memory(l->memory, e) < 0)
		return -1;
	if (l->processes && lower(RLIMIT_NPROC, "processes", l->processes, e) < 0)
		return -1;
	if (l->open_files && lower(RLIMIT_NOFILE, "open-files", l->open_files, e) < 0)
		return -1;
	if (l->file_size && lower(RLIMIT_FSIZE, "file-size", l->file_size, e) < 0)
		return -1;
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* cgroup limits for the whole sandbox: pids.max and memory limits in a cgroup of the run's own,
 * on cgroup v2 when it is delegated to the caller, else on the v1 pids and memory controllers
 * when they are writable (as root). rlimits stay in force either way. */
#ifndef AGENTBOX_CGROUP_H
#define AGENTBOX_CGROUP_H

#include <limits.h>
#include <sys/types.h>

#include "error.h"
#include "policy.h"

enum cgroup_mode { CGROUP_NONE, CGROUP_V1, CGROUP_V2 };

/* Paths on the heap: a run without limits carries a few bytes (struct run lives on the stack,
 * and every page of it a start touches costs a fault). */
struct cgroup_run {
	enum cgroup_mode mode;
	char *dirs[2]; /* created, removed and freed at the end */
	size_t n;
	const char *memory_dir; /* one of dirs: where to read whether the memory limit killed */
};

/* Which mode a run with these limits would use (CGROUP_NONE when no limit asks for one). */
enum cgroup_mode cgroup_probe(const struct limits *l);
const char *cgroup_mode_name(enum cgroup_mode m);

/* Creates the run's cgroup(s) with the limits and moves pid in. */
int cgroup_apply(struct cgroup_run *cg, enum cgroup_mode mode, const struct limits *l, pid_t pid,
		 const char *run_id, struct ab_err *e);
/* True when the memory limit killed a process of the run. */
bool cgroup_memory_killed(const struct cgroup_run *cg);
/* Removes what cgroup_apply created (after the sandbox is gone) and frees the paths. */
void cgroup_release(struct cgroup_run *cg);

#endif

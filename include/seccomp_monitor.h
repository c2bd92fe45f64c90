/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The supervisor's side of the system call filter (seccomp_monitor.c). Denied calls reach it
 * through the filter's user-notification fd: it names each one in the audit trail, then answers
 * EPERM or ENOSYS (or kills the caller under action = kill). */
#ifndef AGENTBOX_SECCOMP_MONITOR_H
#define AGENTBOX_SECCOMP_MONITOR_H

#include <stdbool.h>

#include "audit.h"
#include "error.h"
#include "policy.h"

/* Answers notifications and audits them, coalescing repeats. */
struct seccomp_monitor;

/* memory_counted: a memory cgroup counts memfd and SysV shm, which may then be let through. */
int seccomp_monitor_open(struct seccomp_monitor **out, int listener, const struct policy *p,
			 bool memory_counted, struct ab_err *e);
int seccomp_monitor_fd(const struct seccomp_monitor *m);
/* A session's attribution of a refused call: the exec (> 0) the calling process belongs to, 0
 * for the session itself (a process no exec holds), -1 when it cannot be told. */
typedef long (*seccomp_attrib_fn)(void *ctx, int pid);
/* From then on every syscall event says "exec" (session.c). */
void seccomp_monitor_attribute(struct seccomp_monitor *m, seccomp_attrib_fn fn, void *ctx);
/* Handles one pending notification. */
int seccomp_monitor_handle(struct seccomp_monitor *m, struct audit *a, struct ab_err *e);
/* Writes the counts of repeated events; call once at the end of the run. */
int seccomp_monitor_flush(struct seccomp_monitor *m, struct audit *a, struct ab_err *e);
void seccomp_monitor_close(struct seccomp_monitor *m);

#endif

/* System call filtering (libseccomp). Denied calls are sent to the supervisor through a seccomp
 * user-notification fd: it names each one in the audit trail, then answers EPERM (or kills the
 * caller under action = kill). Works unprivileged; needs no kernel log. */
#ifndef AGENTBOX_SECCOMP_H
#define AGENTBOX_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>

#include "audit.h"
#include "error.h"
#include "policy.h"

/* True when name is a system call libseccomp knows for the native architecture. */
bool seccomp_syscall_known(const char *name);

/* In the supervisor: refuses what this build cannot enforce. */
int seccomp_prepare(const struct policy *p, struct ab_err *e);

/* True when the policy installs a filter that refuses TIOCSTI/TIOCLINUX. */
bool seccomp_blocks_tty_injection(const struct policy *p);

/* In pid 1, after no_new_privs: loads the filter. *listener is the notification fd to hand to
 * the supervisor, or -1 when the policy has no filter. When an outer sandbox already holds the
 * notification listener, the same calls are refused with plain errno and *unnamed is set.
 * no_inet also refuses inet sockets (fallback mode has no network namespace). */
int seccomp_install(const struct policy *p, bool no_inet, int *listener, bool *unnamed,
		    struct ab_err *e);

/* A compiled filter, built by the supervisor while pid 1 builds the view. */
struct seccomp_program {
	unsigned short len; /* instructions; 0: the policy installs no filter */
	struct sock_filter insns[BPF_MAXINSNS];
};

/* In the supervisor: the filter seccomp_install(p, false, ...) would load, from the
 * precompiled program when it fits the policy, else compiled. */
int seccomp_export(const struct policy *p, struct seccomp_program *out, struct ab_err *e);

/* The same, always compiled with libseccomp (the build-time generator and the tests). */
int seccomp_compile(const struct policy *p, struct seccomp_program *out, struct ab_err *e);

/* The default filter, compiled at build time by tools/seccomp_precompile.c with the library
 * agentbox links: used when seccomp_precompiled_fits(p). len 0: none (compiled at run time). */
struct seccomp_precompiled {
	unsigned short len;
	const struct sock_filter *insns;
};
bool seccomp_precompiled_fits(const struct policy *p);

/* In pid 1, after no_new_privs: loads a program from seccomp_export, with a notification
 * listener; nested under another listener, builds and loads the unnamed variant itself. */
int seccomp_install_program(const struct policy *p, const struct seccomp_program *prog,
			    int *listener, bool *unnamed, struct ab_err *e);

/* The supervisor's side: answers notifications and audits them, coalescing repeats. */
struct seccomp_monitor;

/* memory_counted: a memory cgroup counts memfd and SysV shm, which may then be let through. */
int seccomp_monitor_open(struct seccomp_monitor **out, int listener, const struct policy *p,
			 bool memory_counted, struct ab_err *e);
int seccomp_monitor_fd(const struct seccomp_monitor *m);
/* Handles one pending notification. */
int seccomp_monitor_handle(struct seccomp_monitor *m, struct audit *a, struct ab_err *e);
/* Writes the counts of repeated events; call once at the end of the run. */
int seccomp_monitor_flush(struct seccomp_monitor *m, struct audit *a, struct ab_err *e);
void seccomp_monitor_close(struct seccomp_monitor *m);

#endif

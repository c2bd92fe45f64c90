/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* System call filtering (libseccomp). Denied calls are sent to the supervisor through a seccomp
 * user-notification fd: it names each one in the audit trail, then answers EPERM (or kills the
 * caller under action = kill). Works unprivileged; needs no kernel log. */
#ifndef AGENTBOX_SECCOMP_H
#define AGENTBOX_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>

#include "error.h"
#include "policy.h"

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

/* A filter compiled at run time, by the supervisor while pid 1 builds the view. */
struct seccomp_program {
	unsigned short len; /* instructions; 0: the policy installs no filter */
	struct sock_filter insns[BPF_MAXINSNS];
};

/* The filter seccomp_install(p, false, ...) would load, compiled with libseccomp: by the
 * supervisor when no precompiled program fits the policy, the build-time generator and the
 * tests. */
int seccomp_compile(const struct policy *p, struct seccomp_program *out, struct ab_err *e);

/* The default filter, compiled at build time by tools/seccomp_precompile.c with the library
 * agentbox links: used when seccomp_precompiled_fits(p). len 0: none (compiled at run time). */
struct seccomp_precompiled {
	unsigned short len;
	const struct sock_filter *insns;
};
bool seccomp_precompiled_fits(const struct policy *p);
/* The precompiled program when it fits the policy and the build made one, else NULL. pid 1, a
 * copy of the supervisor's image, loads it from there: nothing is copied or sent, and no page
 * of either process is written for it. */
const struct seccomp_precompiled *seccomp_builtin(const struct policy *p);

/* In pid 1, after no_new_privs: loads insns[0..len) (seccomp_builtin's or seccomp_compile's),
 * with a notification listener; nested under another listener, builds and loads the unnamed
 * variant itself. */
int seccomp_install_program(const struct policy *p, const struct sock_filter *insns,
			    unsigned short len, int *listener, bool *unnamed, struct ab_err *e);

/* Calls refused for their mode argument (setuid/setgid bits), though the preset allows them. */
bool seccomp_mode_filtered(const char *name);
/* Calls that make memory the address-space limit does not count; the filter always asks the
 * supervisor about them. */
bool seccomp_uncounted_memory(const char *name);

#endif

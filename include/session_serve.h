/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's detached supervisor (session_serve.c): it builds the sandbox, says whether that
 * worked, then serves the control socket, pid 1's channel, the filter, the proxy and the
 * timeouts until the session ends, and exits. */
#ifndef AGENTBOX_SESSION_SERVE_H
#define AGENTBOX_SESSION_SERVE_H

#include <limits.h>

#include "audit.h"
#include "error.h"
#include "mounts.h"
#include "policy.h"

/* Supervisor to `session start` over a pipe, once: ok, or the error; the changes directory. */
struct session_report {
	int ok;
	struct ab_err e;
	char changes[PATH_MAX];
};

/* Writes the report (err NULL: ready). */
void session_report(int fd, const char *changes, const struct ab_err *err);

/* lfd: the listening control socket bound at path; report: the pipe to `session start`.
 * Never returns. */
_Noreturn void session_serve(const struct policy *p, struct audit *a,
			     const struct mount_protect *protect, int lfd, const char *path,
			     int report);

#endif

/* A run: the supervisor (outside every namespace) clones the sandbox, whose pid 1 sets up the
 * view and confinement, forks the command and reaps; the supervisor relays signals, enforces
 * the wall-clock timeout and reports the outcome. */
#ifndef AGENTBOX_SANDBOX_H
#define AGENTBOX_SANDBOX_H

#include <stdint.h>
#include <sys/resource.h>

#include "audit.h"
#include "error.h"
#include "mounts.h"
#include "policy.h"

/* Grace between SIGTERM and SIGKILL when the timeout fires. */
#define SANDBOX_KILL_GRACE_MS 2000
/* Exit status on timeout (the coreutils timeout convention). */
#define SANDBOX_EXIT_TIMEOUT 124

struct sandbox_result {
	int status;        /* agentbox's exit status: the command's, 128+N, or 124 */
	const char *cause; /* "exited", "signaled", "timeout" */
	int code;          /* exit code, or the signal number when signaled */
	const char *limit; /* the limit that ended the run: "timeout", "cpu", "file-size", or NULL */
	struct rusage ru;  /* of the whole sandbox */
	uint64_t duration_ms;
};

/* Runs p->command. Returns 0 with *res filled once the command ran, or -1 (e filled) when
 * setup failed and nothing was executed. */
int sandbox_run(const struct policy *p, struct audit *a, const struct mount_protect *protect,
		struct sandbox_result *res, struct ab_err *e);

#endif

/* A run: the supervisor (outside every namespace) clones the sandbox, whose pid 1 sets up the
 * view and confinement, forks the command and reaps; the supervisor relays signals, enforces
 * the wall-clock timeout and reports the outcome. */
#ifndef AGENTBOX_SANDBOX_H
#define AGENTBOX_SANDBOX_H

#include "audit.h"
#include "error.h"
#include "mounts.h"
#include "policy.h"
#include "run_result.h"

/* Runs p->command. Returns 0 with *res filled once the command ran, or -1 (e filled) when
 * setup failed and nothing was executed. */
int sandbox_run(const struct policy *p, struct audit *a, const struct mount_protect *protect,
		struct sandbox_result *res, struct ab_err *e);

#endif

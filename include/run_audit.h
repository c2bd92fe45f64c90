/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What the audit trail says of a run before the command starts: start (the policy in force),
 * warnings (everything weaker than a careful reader would assume), mounts, environment; and
 * how it ended: a session's exec, the run's exit. */
#ifndef AGENTBOX_RUN_AUDIT_H
#define AGENTBOX_RUN_AUDIT_H

#include "audit.h"
#include "run.h"
#include "run_result.h"

int run_audit_prelude(const struct run *r, struct audit *a, struct ab_err *e);
/* A warning event: what (a short word) and the message. */
int run_audit_warn(struct audit *a, const char *what, const char *message, struct ab_err *e);

/* A session's exec event, when the exec ended: its number, argv, cwd, the timeout that applied
 * (0: none), its outcome (result.h) and the system calls refused to it. */
int run_audit_exec(struct audit *a, unsigned exec, const struct strv *argv, const char *cwd,
		   uint64_t timeout_ms, const struct sandbox_result *res, uint64_t syscall_denials,
		   struct ab_err *e);

/* The exit event: how the run ended, the counts and the chain. */
int run_audit_exit(struct audit *a, const struct sandbox_result *res, int status, struct ab_err *e);

/* A run that failed or was stopped by its policy: the error event (failure's message), then
 * the exit event with status 125 and failure's cause ("setup-error" when it has none). Best
 * effort: the caller reports failure whatever the trail says. */
void run_audit_failed(struct audit *a, const struct ab_err *failure);

#endif

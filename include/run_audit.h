/* What the audit trail says of a run before the command starts: start (the policy in force),
 * warnings (everything weaker than a careful reader would assume), mounts, environment. */
#ifndef AGENTBOX_RUN_AUDIT_H
#define AGENTBOX_RUN_AUDIT_H

#include "audit.h"
#include "run.h"
#include "run_result.h"

int run_audit_prelude(const struct run *r, struct audit *a, struct ab_err *e);
/* A warning event: what (a short word) and the message. */
int run_audit_warn(struct audit *a, const char *what, const char *message, struct ab_err *e);

/* The exit event: how the run ended (res NULL: setup failed), the counts and the chain. */
int run_audit_exit(struct audit *a, const struct sandbox_result *res, int status, struct ab_err *e);

#endif

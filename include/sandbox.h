/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
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

/* Signals the supervisor and pid 1 (and `agentbox exec`) pass on to the command. */
#define SANDBOX_N_FORWARDED 7
extern const int sandbox_forwarded[SANDBOX_N_FORWARDED];

/* Runs p->command. Returns 0 with *res filled once the command ran, or -1 (e filled) when
 * setup failed and nothing was executed. *res needs no initialising. */
int sandbox_run(const struct policy *p, struct audit *a, const struct mount_protect *protect,
		struct sandbox_result *res, struct ab_err *e);

/* A session's sandbox (session.c), in phases: init fills r; start plans, clones and waits for
 * READY with r->session set, so that pid 1 waits for execs instead of running a command
 * (-1: setup failed, nothing runs); save_changes keeps a changes-size tmpfs's upper layers;
 * close releases everything (pid 1 must be reaped by then). */
struct run;
void sandbox_init(struct run *r, const struct policy *p);
int sandbox_start(struct run *r, struct audit *a, const struct mount_protect *protect,
		  struct ab_err *e);
int sandbox_save_changes(struct run *r, struct audit *a, struct ab_err *e);
void sandbox_close(struct run *r);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Outside the sandbox, while it runs: the supervisor hands pid 1 its filter, takes over what
 * READY passes, relays signals, keeps the timeout and the disk budget, answers the filter and
 * the proxy, and reaps. */
#ifndef AGENTBOX_SUPERVISE_H
#define AGENTBOX_SUPERVISE_H

#include "audit.h"
#include "run.h"
#include "run_result.h"

/* Compiles the filter and sends it to pid 1, or tells pid 1 to load its own copy of the
 * precompiled one. */
int supervise_send_filter(struct run *r, struct ab_err *e);
/* Waits for READY (adopting its fds), or reports pid 1's setup error, or its death. */
int supervise_wait_ready(struct run *r, struct audit *a, struct ab_err *e);
/* Until pid 1 is reaped; fills *res. */
int supervise_run(struct run *r, struct audit *a, struct sandbox_result *res, struct ab_err *e);
/* Signals the whole sandbox: pid 1, or without a pid namespace the process group. */
void supervise_signal(const struct run *r, int sig);
/* SIGKILL to the sandbox, then reaps pid 1. */
int supervise_kill(struct run *r);
/* [limits] disk, when its timer ticks: past the budget, kills the sandbox, audits the limit and
 * sets *full (once). */
int supervise_disk_tick(struct run *r, bool *full, struct audit *a, struct ab_err *e);
/* A command's wait status as agentbox's exit status: the code, 128+N, or 124 on timeout. */
void supervise_status(int wait_status, bool timed_out, struct sandbox_result *res);

#endif

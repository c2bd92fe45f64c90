/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Inside the sandbox: pid 1 builds the view and the confinement, hands its listeners to the
 * supervisor (READY), starts the command and reaps until it ends. */
#ifndef AGENTBOX_PID1_H
#define AGENTBOX_PID1_H

#include "run.h"

/* The clone's child: never returns. */
_Noreturn void pid1_main(struct run *r);
/* Applies the command's limits, restores its signal mask and execs it (pid 1's vfork child,
 * or the fallback child itself). */
_Noreturn void pid1_exec_command(struct run *r);
/* READY, with the listener and proxy fds; closes its copies. */
int pid1_send_ready(struct run *r);
/* Closes every fd but 0-2 and keep. */
void pid1_close_inherited(int keep);

#endif

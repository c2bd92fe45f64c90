/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* `agentbox exec SESSION [--cwd DIR] [--env NAME=VALUE] [--timeout D] -- CMD...`: the client
 * side of an exec into a session (session.h). It sends the command and its own stdin, stdout
 * and stderr to the session's supervisor (a terminal among them as a pty of the exec's own,
 * relayed while the exec runs and hung up when it ends), passes on the signals it gets, and
 * ends with the command's status as a plain run would (the code, 128+N, 124 on timeout). */
#ifndef AGENTBOX_EXEC_CLIENT_H
#define AGENTBOX_EXEC_CLIENT_H

#include "error.h"

/* argv[1] is "exec". Returns the exit status; 125 with e set when nothing ran. */
int exec_command(int argc, char **argv, struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Task sessions: one sandbox for many commands. `agentbox session start` builds the sandbox
 * with no command and leaves a detached supervisor serving a control socket; `agentbox exec`
 * (exec_client.h) runs commands in it; `session stop` ends it, `session list` shows the live
 * ones, `session port` gives the caller a socket reaching a server inside. The control socket
 * lives in a 0700 directory of the caller's (session_runtime_dir), hidden from every sandbox's
 * view; the supervisor also refuses peers of another uid or inside its sandbox. The session's
 * id is its audit run id, and names its changes directory. */
#ifndef AGENTBOX_SESSION_H
#define AGENTBOX_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"
#include "error.h"
#include "mounts.h"
#include "policy.h"

/* The control-socket directory of a new session of the caller's: $XDG_RUNTIME_DIR/agentbox
 * when $XDG_RUNTIME_DIR is a directory the caller owns with mode 0700, else /tmp/agentbox-UID,
 * else (another user's, or a symlink: never used) a /tmp/agentbox-UID.XXXXXX of the caller's,
 * found again by its owner. Created 0700 when missing; only ever a real directory (no
 * symlink) owned by the caller with mode 0700. Fails only when no such place can be had. */
int session_runtime_dir(char *out, size_t size, struct ab_err *e);

/* Starts a session for p (whose command is empty): forks the detached supervisor and returns
 * once the sandbox is ready, having printed the id (json: {"id","socket","changes"}). On
 * failure *audited says whether the supervisor already wrote the error and exit events. */
int session_start(const struct policy *p, struct audit *a, const struct mount_protect *protect,
		  const char *dir, bool json, bool *audited, struct ab_err *e);

/* A connected control socket to the caller's session id (-1, e set, when there is none). */
int session_connect(const char *id, struct ab_err *e);

/* `agentbox session stop ID` and `agentbox session list [--json]`: argv[1] is "session".
 * Returns the exit status; 125 with e set on failure. */
int session_command(int argc, char **argv, struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The task session an `agentbox mcp` server owns (see mcp.h): started with the server's options
 * through `agentbox session start --json` (the same code path as the command line), stopped
 * when the server ends, and by a watcher process when the server dies without ending it. The
 * session's audit trail comes back to the server (a pipe, or the profile's own audit file) and
 * is tallied per exec for the run tool's denial summary. */
#ifndef AGENTBOX_MCP_SESSION_H
#define AGENTBOX_MCP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "json_read.h"
#include "session_proto.h"

/* Output kept up to cap bytes; what comes after is read and counted, never kept. */
struct mcp_buf {
	char *buf;
	size_t len, cap;
	uint64_t dropped;
};
/* Reads what fd has: 1 (more may come), 0 at end of file, -1 on error. */
int mcp_buf_read(struct mcp_buf *b, int fd);

#define MCP_TALLY_NAMES 8

/* What the trail said about one exec (and, unattributed, while it ran). */
struct mcp_tally {
	unsigned long exec; /* the exec being tallied, 0 for none */
	bool done;	    /* its exec event came */
	uint64_t syscalls;  /* refused calls attributed to it */
	struct {
		char name[32];
		uint64_t n;
	} names[MCP_TALLY_NAMES];
	uint64_t net_denied, http_denied; /* refused connections and requests the trail gives it */
	uint64_t dns_denied; /* refused queries while it ran, anyone's (no exec named) */
	char limit[32];	     /* a limit event of its, "" for none */
};

struct mcp_session {
	char id[SESSION_ID_LEN + 1];
	char *changes;	     /* the changes directory, NULL without overlays */
	struct jnode policy; /* `agentbox --explain` of the same options */
	int audit_fd;	     /* the trail: a pipe's read end, or the profile's file */
	bool audit_pipe;     /* audit_fd is a pipe to poll (else a file to read on) */
	bool audit_off;	     /* the trail goes where the server cannot read (fd:N) */
	struct mcp_buf line; /* a partial line of the trail */
	bool line_skip;	     /* the line being read is past the cap: skipped */
	struct mcp_tally tally;
	bool ended;	  /* the trail said the session ended */
	bool client_gone; /* the client hung up during a run: serve no more */
	int watch;	  /* the watcher's pipe: closing it ends the session */
	pid_t watcher;
};

/* opts: the options after `mcp` (a session start's). Starts the session; 0 or -1 (e set). */
int mcp_session_start(struct mcp_session *s, char **opts, int n, struct ab_err *e);
/* Ends the session (idempotent) and waits until it is gone. */
void mcp_session_stop(struct mcp_session *s);

/* The profile's [limits] timeout in ms, 0 for none: the most a run gets. */
uint64_t mcp_session_run_limit(const struct mcp_session *s);

/* Reads the trail that has come so far and tallies it. */
void mcp_session_audit(struct mcp_session *s);
/* The same, calling before(arg) after each read and before its lines are tallied: whatever
 * the session sent elsewhere before writing those lines has arrived by then. */
void mcp_session_audit_then(struct mcp_session *s, void (*before)(void *), void *arg);
/* Starts tallying for exec (reset), or stops (0). */
void mcp_session_tally(struct mcp_session *s, unsigned long exec);

/* Runs this binary with args (argv[0] aside, NULL-terminated), stdin /dev/null, capturing
 * stdout and stderr (either may be NULL: then inherited) while reading the trail. Sets
 * *status to the exit status (128+N for signal N). */
int mcp_self(struct mcp_session *s, const char *const *args, struct mcp_buf *out,
	     struct mcp_buf *err, int keep_fd, int *status, struct ab_err *e);

#endif

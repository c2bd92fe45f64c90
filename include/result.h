/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* How a run or an exec ended, as JSON: the fields the audit trail's exit and exec events share
 * with the one-line object `--result DEST` writes for a harness (result.c, docs/harness.md). */
#ifndef AGENTBOX_RESULT_H
#define AGENTBOX_RESULT_H

#include "audit.h"
#include "error.h"
#include "json.h"
#include "run_result.h"

/* The result object's format ("v"): a new field keeps it, a changed meaning bumps it. */
#define RESULT_VERSION 1

/* status, cause, code (exited) or signal (signaled, session-ended), limit, duration_ms.
 * res NULL: nothing ran, or the run failed or was stopped before it had a result (cause:
 * failed, e.g. "credential-leak", or "setup-error" when NULL; limit null, no duration). */
void result_outcome(struct json *j, int status, const struct sandbox_result *res,
		    const char *failed);

/* --result DEST: "fd:N", an fd the caller opened for writing (N > 0; from now on
 * close-on-exec when N > 2), or a file path (created 0600 or truncated, never through a
 * symlink). Returns agentbox's own close-on-exec copy, >= 3, or -1 with e set. */
int result_open(const char *dest, struct ab_err *e);

/* A plain run's object: v, the outcome, denials, run, audit, changes, error. res NULL: the run
 * failed, err says why (and its cause, as for result_outcome); a NULL a (no run id yet): run
 * and audit null. */
void result_run(struct json *j, int status, const struct sandbox_result *res, const struct audit *a,
		const struct ab_err *err);

/* An exec's object (built by the session's supervisor, written by `agentbox exec`): v, the
 * outcome, denials (only "syscall": the kind an exec's refusals can be told apart by),
 * session_denials (the whole session's so far, every kind), run (the session), exec, error. */
void result_exec(struct json *j, const struct sandbox_result *res, const struct audit *a,
		 unsigned exec, uint64_t syscall_denials);

/* Writes text and a newline in one write, then closes fd. */
int result_write(int fd, const char *text, struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* How a run ended: what sandbox_run reports and the supervisor fills in (supervise.c). */
#ifndef AGENTBOX_RUN_RESULT_H
#define AGENTBOX_RUN_RESULT_H

#include <limits.h>
#include <stdint.h>
#include <sys/resource.h>

#include "error.h"

/* Grace between SIGTERM and SIGKILL when the timeout fires. */
#define SANDBOX_KILL_GRACE_MS 2000
/* Exit status on timeout (the coreutils timeout convention). */
#define SANDBOX_EXIT_TIMEOUT 124

struct sandbox_result {
	int status;	   /* agentbox's exit status: the command's, 128+N, or 124 */
	const char *cause; /* "exited", "signaled", "timeout", "start-error" */
	int code;	   /* exit code, or the signal number when signaled */
	const char *limit; /* the limit that ended the run ("timeout", "disk", ...), or NULL */
	struct rusage ru;  /* of the whole sandbox */
	uint64_t duration_ms;
	/* The strings last: sandbox_run clears what comes before them and their first bytes only,
	 * not 5 KiB of a start's stack. */
	char error[AB_ERR_MAX]; /* start-error: why the command never ran (its cwd, not found,
				 * ...); "" otherwise */
	char changes[PATH_MAX]; /* overlays: the changes directory, "" without */
};

#endif

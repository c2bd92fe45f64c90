/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* One error value that every module fills and the CLI reports: what failed, on which path,
 * the errno text, and how to fix it; and the one place that writes agentbox's own lines to
 * stderr (ab_say, ab_print). Nothing else writes to stderr (tools/check-prints). */
#ifndef AGENTBOX_ERROR_H
#define AGENTBOX_ERROR_H

#include <stddef.h>

#define AB_ERR_MAX 1024

struct ab_err {
	int errnum; /* errno of the failing call, 0 when the cause is not a syscall */
	char msg[AB_ERR_MAX];
	/* Set when the error is a policy stopping the run rather than a failed step: the exit
	 * event's cause (e.g. "credential-leak"). NULL: "setup-error". ab_fail clears it. */
	const char *cause;
};

/* Sets the message (printf-style) and appends ": strerror(errnum)" when errnum != 0.
 * Returns -1 so callers can `return ab_fail(...)`. */
int ab_fail(struct ab_err *e, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends "; fix: ..." to an error already set. Returns -1. */
int ab_hint(struct ab_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes the message with context, e.g. the mount step name. Returns -1. */
int ab_context(struct ab_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes "agentbox: " and the formatted text to stderr in one write (a line of agentbox's
 * own, never to be mistaken for the command's: it always carries the prefix). fmt ends with
 * "\n". Errors writing are ignored: there is nowhere left to report them. */
void ab_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same without the prefix, for usage text and continuation lines. */
void ab_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "printable.h"

__attribute__((format(printf, 2, 0))) static void append(struct ab_err *e, const char *fmt,
							 va_list ap)
{
	size_t len = strnlen(e->msg, sizeof(e->msg));
	if (len + 1 < sizeof(e->msg))
		vsnprintf(e->msg + len, sizeof(e->msg) - len, fmt, ap);
}

static void append_lit(struct ab_err *e, const char *s)
{
	size_t len = strnlen(e->msg, sizeof(e->msg));
	if (len + 1 < sizeof(e->msg))
		snprintf(e->msg + len, sizeof(e->msg) - len, "%s", s);
}

int ab_fail(struct ab_err *e, int errnum, const char *fmt, ...)
{
	va_list ap;

	e->errnum = errnum;
	e->cause = NULL;
	e->msg[0] = '\0';
	va_start(ap, fmt);
	append(e, fmt, ap);
	va_end(ap);
	if (errnum) {
		append_lit(e, ": ");
		append_lit(e, strerror(errnum));
	}
	return -1;
}

int ab_hint(struct ab_err *e, const char *fmt, ...)
{
	va_list ap;

	append_lit(e, "; fix: ");
	va_start(ap, fmt);
	append(e, fmt, ap);
	va_end(ap);
	return -1;
}

int ab_context(struct ab_err *e, const char *fmt, ...)
{
	char old[AB_ERR_MAX];
	va_list ap;

	memcpy(old, e->msg, sizeof(old));
	e->msg[0] = '\0';
	va_start(ap, fmt);
	append(e, fmt, ap);
	va_end(ap);
	append_lit(e, ": ");
	append_lit(e, old);
	return -1;
}

/* One write per line, so that lines of agentbox's own and of the command sharing a terminal do
 * not interleave mid-line; a line longer than the buffer is cut. A message may name what the
 * command chose (a file in a promote's error): every control in it but the line's own end is
 * escaped (printable_line), so that it cannot forge, erase or hide a line. */
__attribute__((format(printf, 2, 0))) static void say(const char *prefix, const char *fmt,
						      va_list ap)
{
	char line[AB_ERR_MAX * 2], out[AB_ERR_MAX * 8];
	size_t len = strlen(prefix), off = 0;
	bool end;
	int n;

	memcpy(line, prefix, len);
	n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	if (n < 0)
		return;
	len += (size_t)n;
	end = len >= sizeof(line); /* cut: it still ends its line */
	if (end)
		len = sizeof(line) - 1;
	if (len && line[len - 1] == '\n') {
		end = true;
		len--;
	}
	line[len] = '\0';
	printable_line(line, out, sizeof(out) - 1);
	len = strlen(out);
	if (end)
		out[len++] = '\n';
	while (off < len) {
		ssize_t w = write(STDERR_FILENO, out + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

void ab_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("agentbox: ", fmt, ap);
	va_end(ap);
}

void ab_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

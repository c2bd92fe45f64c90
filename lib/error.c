#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Redaction: secrets never reach the audit trail. Every string value written to it passes
 * through here; URL credentials and query values, Authorization/Cookie header values, the
 * built-in secret shapes (AWS keys, GitHub/GitLab/Slack tokens, sk-... API keys, PEM private
 * key headers, JWTs) and the profile's [audit] redact patterns become [REDACTED]. */
#ifndef AGENTBOX_REDACT_H
#define AGENTBOX_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "strv.h"

#define REDACTED "[REDACTED]"

struct redactor;

/* extra: POSIX extended regular expressions from [audit] redact. */
int redactor_new(struct redactor **out, const struct strv *extra, struct ab_err *e);
void redactor_free(struct redactor *r);
/* A secret known by value (a credential's): redacted wherever it appears. Copied; the copy is
 * wiped when the redactor is freed. */
int redactor_add_literal(struct redactor *r, const char *s, size_t n);

/* A malloc'd copy of s[0..n) with every secret replaced, or NULL when nothing matched (the
 * caller then uses s as it is). Sets *oom on allocation failure. */
char *redact(const struct redactor *r, const char *s, size_t n, bool *oom);

/* Checks one [audit] redact pattern; the error says what is wrong with it. */
int redact_pattern_check(const char *pattern, struct ab_err *e);

#endif

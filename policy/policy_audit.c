/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [audit]: where the trail goes, what it redacts, what a failure to write it does, the
 * event budget. */
#include "policy_parse.h"

#include <stdlib.h>
#include <string.h>

#include "redact.h"

static int on_redact(const struct setting *s, const char *value, struct ab_err *e)
{
	if (!*value)
		return ab_fail(e, 0, "'redact' has an empty value"), policy_at_error(&s->at, e);
	if (redact_pattern_check(value, e) < 0)
		return policy_at_error(&s->at, e);
	return policy_push_item(&s->p->audit_redact, value, e);
}

static int on_event_budget(const struct setting *s, const char *v, struct ab_err *e)
{
	return policy_set_limit(s, v, &s->p->audit_event_budget, parse_count, e);
}

static int on_audit_failure(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"stop", "continue", NULL};
	int i;
	if (policy_choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->audit_on_failure = (enum audit_failure)i;
	return 0;
}

static int on_audit_file(const struct setting *s, const char *value, struct ab_err *e)
{
	char *exp, *norm = NULL;
	int r;

	if (policy_expand_one(s, value, &exp, e) < 0)
		return -1;
	if (!strcmp(exp, "-") || !strncmp(exp, "fd:", 3)) {
		uint64_t fd;
		if (exp[0] == 'f' && parse_count(exp + 3, &fd, e) < 0) {
			free(exp);
			return ab_hint(e, "write fd:N"), policy_at_error(&s->at, e);
		}
		r = policy_set_string(s, &s->p->audit_file, exp, e);
		free(exp);
		return r;
	}
	r = path_normalize(exp, &norm, e);
	free(exp);
	if (r < 0)
		return policy_at_error(&s->at, e);
	r = policy_set_string(s, &s->p->audit_file, norm, e);
	free(norm);
	return r;
}

static const struct key_spec keys[] = {
    {"audit", "file", SINGLE, on_audit_file},
    {"audit", "redact", SINGLE, on_redact},
    {"audit", "on-failure", SINGLE, on_audit_failure},
    {"audit", "event-budget", SINGLE, on_event_budget},
};
const struct key_table policy_audit_keys = {keys, sizeof(keys) / sizeof(keys[0])};

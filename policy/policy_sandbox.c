/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [sandbox]: the host name, the working directory, the fallback, nesting and the ids
 * inside. (include is the loader's, policy_load.c.) */
#include "policy_parse.h"

#include <stdint.h>
#include <string.h>

static int on_hostname(const struct setting *s, const char *value, struct ab_err *e)
{
	size_t n = strlen(value);

	if (n == 0 || n > 64 ||
	    strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			  "0123456789-.") != n)
		return ab_fail(e, 0, "'%s' is not a valid host name", value),
		       ab_hint(e, "use at most 64 letters, digits, '-' and '.'"),
		       policy_at_error(&s->at, e);
	return policy_set_string(s, &s->p->hostname, value, e);
}

static int on_workdir(const struct setting *s, const char *value, struct ab_err *e)
{
	return policy_set_path(s, value, &s->p->workdir, e);
}

static int on_fallback(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"none", "landlock", NULL};
	int i;
	if (policy_choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->fallback = (enum fallback_mode)i;
	return 0;
}

static int on_nesting(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"false", "true", NULL};
	int i;
	if (policy_choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->nesting = i == 1;
	return 0;
}

static int set_id(const struct setting *s, const char *value, int64_t *field, struct ab_err *e)
{
	uint64_t v;

	if (parse_count(value, &v, e) < 0 || v > 65534)
		return ab_fail(e, 0, "'%s' is not an id from 0 to 65534", value),
		       policy_at_error(&s->at, e);
	if (policy_claim_scalar(s, e) < 0)
		return -1;
	*field = (int64_t)v;
	return 0;
}

static int on_uid(const struct setting *s, const char *v, struct ab_err *e)
{
	return set_id(s, v, &s->p->uid, e);
}

static int on_gid(const struct setting *s, const char *v, struct ab_err *e)
{
	return set_id(s, v, &s->p->gid, e);
}

static const struct key_spec keys[] = {
    {"sandbox", "hostname", SINGLE, on_hostname}, {"sandbox", "workdir", SINGLE, on_workdir},
    {"sandbox", "fallback", SINGLE, on_fallback}, {"sandbox", "nesting", SINGLE, on_nesting},
    {"sandbox", "uid", SINGLE, on_uid},		  {"sandbox", "gid", SINGLE, on_gid},
};
const struct key_table policy_sandbox_keys = {keys, sizeof(keys) / sizeof(keys[0])};

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [env]: the variables passed, set and denied. */
#include "policy_parse.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool env_name_ok(const char *n, size_t len)
{
	if (len == 0 || (!isalpha((unsigned char)n[0]) && n[0] != '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isalnum((unsigned char)n[i]) && n[i] != '_')
			return false;
	return true;
}

static int env_glob(const struct setting *s, const char *item, struct strv *sv, struct ab_err *e)
{
	if (strchr(item, '='))
		return ab_fail(e, 0, "'%s' is not a variable name or glob", item),
		       ab_hint(e, "use [env] set = NAME=VALUE to set a value"),
		       policy_at_error(&s->at, e);
	return policy_push_item(sv, item, e);
}

static int on_env_pass(const struct setting *s, const char *v, struct ab_err *e)
{
	return env_glob(s, v, &s->p->env_pass, e);
}
static int on_env_deny(const struct setting *s, const char *v, struct ab_err *e)
{
	return env_glob(s, v, &s->p->env_deny, e);
}

static int on_env_set(const struct setting *s, const char *value, struct ab_err *e)
{
	struct strv *sv = &s->p->env_set;
	const char *eq = strchr(value, '=');
	size_t nlen = eq ? (size_t)(eq - value) : 0;
	char *exp;

	if (!eq || !env_name_ok(value, nlen))
		return ab_fail(e, 0, "'%s' is not NAME=VALUE", value), policy_at_error(&s->at, e);
	if (expand_vars(value, &s->p->vars, s->profile_dir, &exp, e) < 0)
		return policy_at_error(&s->at, e);
	for (size_t i = 0; i < sv->n; i++) {
		if (strncmp(sv->v[i], value, nlen + 1))
			continue;
		strv_remove(sv, i); /* a later setting of the same name wins */
		break;
	}
	if (strv_push(sv, exp) < 0) {
		free(exp);
		return policy_oom(e);
	}
	free(exp);
	return 0;
}

static const struct key_spec keys[] = {
    {"env", "pass", LIST, on_env_pass},
    {"env", "set", SINGLE, on_env_set},
    {"env", "deny", LIST, on_env_deny},
};
const struct key_table policy_env_keys = {keys, sizeof(keys) / sizeof(keys[0])};

/* [http]: per-request rules, `METHOD HOST/PATH-GLOB` (docs/http-rules.md). One rule per line,
 * since a path or query glob may hold a comma; each is checked here by the rules' own parser
 * (http_rules.c), so a profile with a rule that cannot match fails at load with its line. */
#include "policy_parse.h"

#include <stdlib.h>

#include "http_rules.h"

int policy_http_rule(const struct setting *s, const char *v, bool deny, bool named_host,
		     struct strv *sv, struct ab_err *e)
{
	struct http_rules check = {0};
	char *rule;
	int r;

	if (policy_expand_one(s, v, &rule, e) < 0)
		return -1;
	r = http_rules_add(&check, deny, rule, e);
	if (r == 0 && named_host && check.v[0].any_host)
		r = ab_fail(e, 0, "a credential's rule names its host"),
		ab_hint(e, "write METHOD HOST/PATH with one of its hosts");
	http_rules_free(&check);
	if (r == 0)
		r = policy_push_item(sv, rule, e);
	else
		policy_at_error(&s->at, e);
	free(rule);
	return r;
}

static int on_allow(const struct setting *s, const char *v, struct ab_err *e)
{
	return policy_http_rule(s, v, false, false, &s->p->http_allow, e);
}
static int on_deny(const struct setting *s, const char *v, struct ab_err *e)
{
	return policy_http_rule(s, v, true, false, &s->p->http_deny, e);
}

static const struct key_spec keys[] = {
    {"http", "allow", SINGLE, on_allow},
    {"http", "deny", SINGLE, on_deny},
};
const struct key_table policy_http_keys = {keys, sizeof(keys) / sizeof(keys[0])};

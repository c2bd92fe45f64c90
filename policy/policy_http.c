/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [http]: per-request rules, `METHOD HOST/PATH-GLOB` (docs/http-rules.md). One rule per line,
 * since a path or query glob may hold a comma; each is parsed here, once, by the rules' own
 * parser (http_rules.c), so a profile with a rule that cannot match fails at load with its
 * line, and the proxy decides with the parsed rules. */
#include "policy_parse.h"

#include <stdlib.h>

#include "http_rules.h"

/* A rule written twice (as the same text, allow or deny alike) is kept once: lists are sets. */
int policy_http_rule(const struct setting *s, const char *v, bool deny, bool named_host,
		     struct http_rules *rs, struct ab_err *e)
{
	struct http_rules one = {0};
	char *rule;
	int r;

	if (policy_expand_one(s, v, &rule, e) < 0)
		return -1;
	r = http_rules_add(&one, deny, rule, e);
	free(rule);
	if (r == 0 && named_host && one.v[0].any_host)
		r = ab_fail(e, 0, "a credential's rule names its host"),
		ab_hint(e, "write METHOD HOST/PATH with one of its hosts");
	if (r < 0)
		policy_at_error(&s->at, e);
	else if ((r = policy_note_item(s, one.v[0].text, e)) == 0 &&
		 !http_rules_has(rs, deny, one.v[0].text) && http_rules_move(rs, &one) < 0)
		r = policy_oom(e);
	http_rules_free(&one);
	return r;
}

static int on_allow(const struct setting *s, const char *v, struct ab_err *e)
{
	return policy_http_rule(s, v, false, false, &s->p->net.http, e);
}
static int on_deny(const struct setting *s, const char *v, struct ab_err *e)
{
	return policy_http_rule(s, v, true, false, &s->p->net.http, e);
}
/* The request rules a session's harness may allow while it runs (live_rules.h). */
static int on_grantable(const struct setting *s, const char *v, struct ab_err *e)
{
	return policy_http_rule(s, v, false, false, &s->p->net.http_grantable, e);
}

static const struct key_spec keys[] = {
    {"http", "allow", SINGLE, on_allow},
    {"http", "deny", SINGLE, on_deny},
    {"http", "grantable", SINGLE, on_grantable},
};
const struct key_table policy_http_keys = {keys, sizeof(keys) / sizeof(keys[0])};

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [network]: the mode, the egress rules and pins, the rules a session's harness may grant and
 * how long it is asked, the methods, capture, the upstream trust anchor (ca), the limits. */
#include "policy_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_rule.h"

/* Lists are sets: an item written twice is kept once. */
static int net_rule(const struct setting *s, const char *item, struct egress_rule_list *l,
		    struct ab_err *e)
{
	struct egress_rule r;

	if (egress_rule_parse(item, &r, e) < 0)
		return policy_at_error(&s->at, e);
	if (strv_has(&l->text, item))
		return 0;
	return egress_rule_list_add(l, &r, item) < 0 ? policy_oom(e) : 0;
}

static int on_allow(const struct setting *s, const char *v, struct ab_err *e)
{
	return net_rule(s, v, &s->p->net.allow, e);
}
static int on_deny(const struct setting *s, const char *v, struct ab_err *e)
{
	return net_rule(s, v, &s->p->net.deny, e);
}

/* The connection rules a session's harness may allow while it runs (live_rules.h). */
static int on_grantable(const struct setting *s, const char *v, struct ab_err *e)
{
	return net_rule(s, v, &s->p->net.grantable, e);
}

static int on_resolve(const struct setting *s, const char *item, struct ab_err *e)
{
	struct egress_pin pin;

	if (egress_pin_parse(item, &pin, e) < 0)
		return policy_at_error(&s->at, e);
	if (strv_has(&s->p->net.pins.text, item))
		return 0;
	return egress_pin_list_add(&s->p->net.pins, &pin, item) < 0 ? policy_oom(e) : 0;
}

static int on_method(const struct setting *s, const char *item, struct ab_err *e)
{
	size_t n = strlen(item);

	if (n == 0 || n > 15 || strspn(item, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != n)
		return ab_fail(e, 0, "'%s' is not an HTTP method", item),
		       ab_hint(e, "write methods in capitals, e.g. GET, HEAD"),
		       policy_at_error(&s->at, e);
	return policy_push_item(&s->p->net_methods, item, e);
}

static int on_net_mode(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"none", "proxy", "host", NULL};
	int i;
	if (policy_choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->net_mode = (enum net_mode)i;
	return 0;
}

static int on_capture(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"auto", "on", "off", NULL};
	int i;
	if (policy_choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->net_capture = (enum net_capture)i;
	return 0;
}

/* A relative path is relative to the directory of the profile that sets it, as an include is
 * (or to the current directory, from the command line). Not opened here: --check and --explain
 * must work where the file is missing; the run checks it (trust.c). */
static int on_ca(const struct setting *s, const char *v, struct ab_err *e)
{
	const char *dir = s->profile_dir ? s->profile_dir : s->p->vars.cwd;
	char *exp, *full;
	int r;

	if (policy_expand_one(s, v, &exp, e) < 0)
		return -1;
	if (exp[0] != '/' && !dir) {
		free(exp);
		return ab_fail(e, 0, "[network] ca '%s' is relative, and no directory is known", v),
		       ab_hint(e, "give an absolute path"), policy_at_error(&s->at, e);
	}
	if (exp[0] == '/') {
		full = exp;
	} else {
		size_t n = strlen(dir) + strlen(exp) + 2;
		if (!(full = malloc(n))) {
			free(exp);
			return policy_oom(e);
		}
		snprintf(full, n, "%s/%s", dir, exp);
		free(exp);
	}
	r = policy_set_string(s, &s->p->net_ca, full, e);
	free(full);
	if (r == 0)
		s->p->net_ca_at = s->at;
	return r;
}

POLICY_LIMIT_HANDLER(on_max_connections, net_max_connections, parse_count)
POLICY_LIMIT_HANDLER(on_rate, net_rate, parse_count)
POLICY_LIMIT_HANDLER(on_max_bytes_out, net_max_bytes_out, parse_size)
POLICY_LIMIT_HANDLER(on_max_bytes_in, net_max_bytes_in, parse_size)
POLICY_LIMIT_HANDLER(on_host_max_connections, net_host_max_connections, parse_count)
POLICY_LIMIT_HANDLER(on_host_rate, net_host_rate, parse_count)
POLICY_LIMIT_HANDLER(on_host_max_bytes_out, net_host_max_bytes_out, parse_size)
POLICY_LIMIT_HANDLER(on_host_max_bytes_in, net_host_max_bytes_in, parse_size)
POLICY_LIMIT_HANDLER(on_ask_timeout, net_ask_timeout_ms, parse_duration_ms)

static const struct key_spec keys[] = {
    {"network", "mode", SINGLE, on_net_mode},
    {"network", "allow", LIST, on_allow},
    {"network", "deny", LIST, on_deny},
    {"network", "resolve", LIST, on_resolve},
    {"network", "grantable", LIST, on_grantable},
    {"network", "ask-timeout", SINGLE, on_ask_timeout},
    {"network", "methods", LIST, on_method},
    {"network", "capture", SINGLE, on_capture},
    {"network", "ca", SINGLE, on_ca},
    {"network", "max-connections", SINGLE, on_max_connections},
    {"network", "rate", SINGLE, on_rate},
    {"network", "max-bytes-out", SINGLE, on_max_bytes_out},
    {"network", "max-bytes-in", SINGLE, on_max_bytes_in},
    {"network", "max-connections-per-host", SINGLE, on_host_max_connections},
    {"network", "rate-per-host", SINGLE, on_host_rate},
    {"network", "max-bytes-out-per-host", SINGLE, on_host_max_bytes_out},
    {"network", "max-bytes-in-per-host", SINGLE, on_host_max_bytes_in},
};
const struct key_table policy_net_keys = {keys, sizeof(keys) / sizeof(keys[0])};

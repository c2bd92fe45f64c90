/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's egress rules as its harness changes them while it runs (live_rules.c): a copy of
 * the profile's typed rules that a harness widens only within the profile's grantable rules
 * ([network] grantable, [http] grantable) and narrows at will. The proxy decides with `now` by
 * the same functions it decides with a profile's (egress.h, http_rules.h); a rule a harness
 * sends is parsed here, once, by the profile's own parsers. Pure: no sockets, no audit. */
#ifndef AGENTBOX_LIVE_RULES_H
#define AGENTBOX_LIVE_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "policy.h"

/* Rules a harness may have added at once, per list (allow, deny, [http]); and rules it may
 * take out over a session (each one's text is kept to the end: a connection may name it). */
#define LIVE_MAX_RULES 256
#define LIVE_MAX_RETIRED 4096
/* One rule's text, at most (an [http] rule's bound) */
#define LIVE_RULE_MAX 4096

enum live_op {
	LIVE_ALLOW = 1,	 /* a [network] allow rule: HOST[:PORT], *.SUFFIX, ADDRESS, CIDR */
	LIVE_DENY,	 /* a [network] deny rule */
	LIVE_HTTP_ALLOW, /* an [http] allow rule: METHOD HOST/PATH-GLOB */
	LIVE_HTTP_DENY,	 /* an [http] deny rule */
};

struct live_rules {
	struct egress_rules now; /* what the proxy decides with */
	/* the first entries of each list are the profile's: never taken out */
	size_t base_allow, base_deny, base_implied, base_http;
	char **retired; /* texts of rules taken out */
	size_t n_retired;
};

struct live_change {
	bool changed;	   /* false: the rule was in force already, nothing changed */
	const char *rule;  /* the rule as kept (its text in now) */
	const char *grant; /* an allow's grantable rule that covers it; NULL for a deny */
	/* rules the harness added before that this one takes out: the deny rules an allow lifts,
	 * the allow rules a deny withdraws (texts, copies) */
	struct strv removed;
};

/* now: a copy of profile. -1 (e set) when out of memory. */
int live_rules_init(struct live_rules *l, const struct egress_rules *profile, struct ab_err *e);
/* One change. An allow must be covered by a grantable rule (egress_rule_covers,
 * http_rule_covers), and is refused when a deny rule it cannot lift (the profile's, or a wider
 * one added at run time) covers it all; it lifts the run-time deny rules it covers, and an
 * [http] allow rule opens its host's ports 80 and 443 as a profile's does. A deny is always
 * taken; it withdraws the run-time allow rules it covers. -1 with e set (errnum EINVAL: not a
 * rule; EPERM: beyond the profile's grant, or denied for good; ENOSPC: past a bound), and
 * nothing changed. c is filled on success (live_change_free). */
int live_rules_apply(struct live_rules *l, enum live_op op, const char *text, struct live_change *c,
		     struct ab_err *e);
void live_change_free(struct live_change *c);
/* "allow", "deny", "http-allow", "http-deny". */
const char *live_op_name(enum live_op op);
void live_rules_free(struct live_rules *l);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's egress rules as its harness changes them (see include/live_rules.h). The lists
 * keep the profile's rules first and the harness's after them; a rule the harness takes out
 * keeps its text to the end of the session, since a connection's event may point to it. */
#include "live_rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_rule.h"
#include "http_rules.h"

static int oom(struct ab_err *e)
{
	return ab_fail(e, ENOMEM, "the session's rules");
}

/* e's message is set: its errnum says how the request failed (not a strerror of the text). */
static int failed(struct ab_err *e, int errnum)
{
	e->errnum = errnum;
	return -1;
}

const char *live_op_name(enum live_op op)
{
	switch (op) {
	case LIVE_ALLOW:
		return "allow";
	case LIVE_DENY:
		return "deny";
	case LIVE_HTTP_ALLOW:
		return "http-allow";
	case LIVE_HTTP_DENY:
		return "http-deny";
	}
	return "?";
}

/* ---------- the copy ---------- */

static int copy_list(struct egress_rule_list *to, const struct egress_rule_list *from)
{
	for (size_t i = 0; i < from->text.n; i++)
		if (egress_rule_list_add(to, &from->v[i], from->text.v[i]) < 0)
			return -1;
	return 0;
}

static int copy_http(struct http_rules *to, const struct http_rules *from)
{
	for (size_t i = 0; i < from->n; i++) {
		if (http_rules_copy(to, &from->v[i], from->v[i].by) < 0)
			return -1;
		to->v[to->n - 1].implied = from->v[i].implied;
	}
	return 0;
}

int live_rules_init(struct live_rules *l, const struct egress_rules *profile, struct ab_err *e)
{
	struct egress_rules *now = &l->now;
	bool ok = true;

	memset(l, 0, sizeof(*l));
	ok = copy_list(&now->allow, &profile->allow) == 0 &&
	     copy_list(&now->deny, &profile->deny) == 0 &&
	     copy_list(&now->implied, &profile->implied) == 0 &&
	     copy_list(&now->grantable, &profile->grantable) == 0 &&
	     copy_http(&now->http, &profile->http) == 0 &&
	     copy_http(&now->http_grantable, &profile->http_grantable) == 0;
	for (size_t i = 0; ok && i < profile->pins.text.n; i++)
		ok = egress_pin_list_add(&now->pins, &profile->pins.v[i],
					 profile->pins.text.v[i]) == 0;
	if (!ok) {
		live_rules_free(l);
		return oom(e);
	}
	l->base_allow = now->allow.text.n;
	l->base_deny = now->deny.text.n;
	l->base_implied = now->implied.text.n;
	l->base_http = now->http.n;
	return 0;
}

void live_rules_free(struct live_rules *l)
{
	egress_rules_free(&l->now);
	for (size_t i = 0; i < l->n_retired; i++)
		free(l->retired[i]);
	free(l->retired);
	l->retired = NULL;
	l->n_retired = 0;
}

void live_change_free(struct live_change *c)
{
	strv_free(&c->removed);
}

/* ---------- what a change takes out ---------- */

/* Room for n more retired texts, before anything changes (a take cannot fail). */
static int retire_room(struct live_rules *l, size_t n, struct ab_err *e)
{
	char **v;

	if (l->n_retired + n > LIVE_MAX_RETIRED)
		return ab_fail(e, 0, "the session's rules were changed too often"),
		       ab_hint(e,
			       "a session takes out at most %d rules it was given; start a new "
			       "session",
			       LIVE_MAX_RETIRED),
		       failed(e, ENOSPC);
	if (!n)
		return 0;
	if (!(v = realloc(l->retired, (l->n_retired + n) * sizeof(*v))))
		return oom(e);
	l->retired = v;
	return 0;
}

/* A taken text goes to the change's list (a copy) and is kept, for the connections. */
static void retire(struct live_rules *l, struct live_change *c, char *text)
{
	/* out of memory, the change still says it changed; only its list is short */
	(void)strv_push(&c->removed, text);
	l->retired[l->n_retired++] = text;
}

/* The entries of list from `from` on that by covers, taken out, last first. */
static void take_covered(struct live_rules *l, struct live_change *c, struct egress_rule_list *list,
			 size_t from, const struct egress_rule *by)
{
	for (size_t i = list->text.n; i-- > from;)
		if (egress_rule_covers(by, &list->v[i]))
			retire(l, c, egress_rule_list_take(list, i));
}

static size_t count_covered(const struct egress_rule_list *list, size_t from,
			    const struct egress_rule *by)
{
	size_t n = 0;

	for (size_t i = from; i < list->text.n; i++)
		n += egress_rule_covers(by, &list->v[i]);
	return n;
}

static bool same_rule(const struct egress_rule *a, const struct egress_rule *b)
{
	return egress_rule_covers(a, b) && egress_rule_covers(b, a);
}

/* The index of a rule like r in list, or -1. */
static long find_rule(const struct egress_rule_list *list, const struct egress_rule *r)
{
	for (size_t i = 0; i < list->text.n; i++)
		if (same_rule(&list->v[i], r))
			return (long)i;
	return -1;
}

static int too_many(struct ab_err *e, const char *what)
{
	return ab_fail(e, 0, "the harness has added %d %s rules already", LIVE_MAX_RULES, what),
	       ab_hint(e, "deny or allow wider rules in place of many narrow ones"),
	       failed(e, ENOSPC);
}

/* What the profile lets a harness grant, for the refusal's hint. */
static void grant_hint(struct ab_err *e, const char *key, const char *const *texts, size_t n)
{
	char list[600];
	size_t len = 0;

	if (!n) {
		ab_hint(e, "the profile grants nothing: list what a harness may allow in its %s",
			key);
		return;
	}
	list[0] = '\0';
	for (size_t i = 0; i < n && len < 400; i++) {
		int k = snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", texts[i]);
		len = k < 0 ? sizeof(list) : len + (size_t)k;
	}
	ab_hint(e, "ask only for what the profile's %s covers: %s%s", key, list,
		len >= 400 ? ", ..." : "");
}

/* ---------- [network] ---------- */

static const char *net_grant(const struct live_rules *l, const struct egress_rule *r)
{
	const struct egress_rule_list *g = &l->now.grantable;

	for (size_t i = 0; i < g->text.n; i++)
		if (egress_rule_covers(&g->v[i], r))
			return g->text.v[i];
	return NULL;
}

/* A deny rule covering all of r that r does not lift: the profile's, or a wider one. */
static int still_denied(const struct live_rules *l, const struct egress_rule *r, const char *text,
			struct ab_err *e)
{
	const struct egress_rule_list *deny = &l->now.deny;

	for (size_t i = 0; i < deny->text.n; i++) {
		bool profile = i < l->base_deny;
		if ((!profile && egress_rule_covers(r, &deny->v[i])) ||
		    !egress_rule_covers(&deny->v[i], r))
			continue;
		ab_fail(e, 0, "'%s' stays denied by %s rule '%s'", text,
			profile ? "the profile's" : "the run-time", deny->text.v[i]);
		if (profile)
			ab_hint(e, "a harness cannot lift a deny rule of the profile");
		else
			ab_hint(e, "allow '%s' itself to lift it", deny->text.v[i]);
		return failed(e, EPERM);
	}
	return 0;
}

static int allow_net(struct live_rules *l, const char *text, struct live_change *c,
		     struct ab_err *e)
{
	struct egress_rule_list *allow = &l->now.allow;
	struct egress_rule r;
	size_t lift;
	long at;

	if (egress_rule_parse(text, &r, e) < 0)
		return failed(e, EINVAL);
	if (!(c->grant = net_grant(l, &r))) {
		ab_fail(e, 0, "'%s' is beyond what the profile lets a harness allow", text);
		grant_hint(e, "[network] grantable", (const char *const *)l->now.grantable.text.v,
			   l->now.grantable.text.n);
		return failed(e, EPERM);
	}
	if (still_denied(l, &r, text, e) < 0)
		return -1;
	lift = count_covered(&l->now.deny, l->base_deny, &r);
	at = find_rule(allow, &r);
	if (at < 0 && allow->text.n - l->base_allow >= LIVE_MAX_RULES)
		return too_many(e, "allow");
	if (retire_room(l, lift, e) < 0)
		return -1;
	if (at < 0 && egress_rule_list_add(allow, &r, text) < 0)
		return oom(e);
	take_covered(l, c, &l->now.deny, l->base_deny, &r);
	c->changed = at < 0 || lift;
	c->rule = allow->text.v[at < 0 ? (long)allow->text.n - 1 : at];
	return 0;
}

static int deny_net(struct live_rules *l, const char *text, struct live_change *c, struct ab_err *e)
{
	struct egress_rule_list *deny = &l->now.deny;
	struct egress_rule r;
	size_t withdraw;
	long at;

	if (egress_rule_parse(text, &r, e) < 0)
		return failed(e, EINVAL);
	withdraw = count_covered(&l->now.allow, l->base_allow, &r);
	at = find_rule(deny, &r);
	if (at < 0 && deny->text.n - l->base_deny >= LIVE_MAX_RULES)
		return too_many(e, "deny");
	if (retire_room(l, withdraw, e) < 0)
		return -1;
	if (at < 0 && egress_rule_list_add(deny, &r, text) < 0)
		return oom(e);
	take_covered(l, c, &l->now.allow, l->base_allow, &r);
	c->changed = at < 0 || withdraw;
	c->rule = deny->text.v[at < 0 ? (long)deny->text.n - 1 : at];
	return 0;
}

/* ---------- [http] ---------- */

/* "[http] RULE": the text of the connection rules an [http] allow rule implies (as
 * policy_rules.c writes a profile's). */
static void implied_text(char *out, size_t size, const char *rule)
{
	snprintf(out, size, "[http] %s", rule);
}

/* The implied connection rules of the run-time [http] allow rule r: counted, or taken out. */
static size_t implied_of(struct live_rules *l, const char *rule, bool take)
{
	struct egress_rule_list *im = &l->now.implied;
	char text[LIVE_RULE_MAX + 8];
	size_t n = 0;

	implied_text(text, sizeof(text), rule);
	for (size_t i = im->text.n; i-- > l->base_implied;) {
		if (strcmp(im->text.v[i], text))
			continue;
		n++;
		if (take)
			l->retired[l->n_retired++] = egress_rule_list_take(im, i);
	}
	return n;
}

/* Ports 80 and 443 of r's host, as a profile's [http] allow rule opens them. */
static int add_implied(struct live_rules *l, const struct http_rule *r)
{
	char text[LIVE_RULE_MAX + 8];

	if (r->any_host)
		return 0;
	implied_text(text, sizeof(text), r->text);
	for (unsigned port = 80; port; port = port == 80 ? 443 : 0) {
		struct egress_rule at = r->host;
		at.port = port;
		if (egress_rule_list_add(&l->now.implied, &at, text) < 0)
			return -1;
	}
	return 0;
}

/* The run-time [http] rules (deny or allow ones) r covers: counted, or taken out. */
static size_t http_covered(struct live_rules *l, struct live_change *c, const struct http_rule *r,
			   bool deny, bool take)
{
	struct http_rules *rs = &l->now.http;
	size_t n = 0;

	for (size_t i = rs->n; i-- > l->base_http;) {
		if (rs->v[i].deny != deny || !http_rule_covers(r, &rs->v[i]))
			continue;
		n += 1 + (deny ? 0 : implied_of(l, rs->v[i].text, take));
		if (take)
			retire(l, c, http_rules_take(rs, i));
	}
	return n;
}

static const char *http_grant(const struct live_rules *l, const struct http_rule *r)
{
	const struct http_rules *g = &l->now.http_grantable;

	for (size_t i = 0; i < g->n; i++)
		if (http_rule_covers(&g->v[i], r))
			return g->v[i].text;
	return NULL;
}

static void http_grant_hint(const struct live_rules *l, struct ab_err *e)
{
	const char *texts[16];
	size_t n = 0;

	for (size_t i = 0; i < l->now.http_grantable.n && n < 16; i++)
		texts[n++] = l->now.http_grantable.v[i].text;
	grant_hint(e, "[http] grantable", texts, n);
}

static int http_change(struct live_rules *l, bool deny, const char *text, struct live_change *c,
		       struct ab_err *e)
{
	struct http_rules *rs = &l->now.http, one = {0};
	const struct http_rule *r;
	size_t out, implied_before = l->now.implied.text.n;
	bool found;
	int rc = -1;

	if (http_rules_add(&one, deny, text, e) < 0)
		return failed(e, EINVAL);
	r = &one.v[0];
	found = http_rules_has(rs, deny, r->text);
	/* an allow lifts the run-time deny rules it covers; a deny withdraws the allow ones */
	out = http_covered(l, c, r, !deny, false);
	if (!deny && !(c->grant = http_grant(l, r))) {
		ab_fail(e, 0, "'%s' is beyond what the profile lets a harness allow", r->text);
		http_grant_hint(l, e);
		failed(e, EPERM);
	} else if (!found && rs->n - l->base_http >= LIVE_MAX_RULES) {
		too_many(e, "[http]");
	} else if (retire_room(l, out, e) == 0) {
		if (!found &&
		    ((!deny && add_implied(l, r) < 0) || http_rules_copy(rs, r, NULL) < 0)) {
			while (l->now.implied.text.n > implied_before)
				free(egress_rule_list_take(&l->now.implied,
							   l->now.implied.text.n - 1));
			oom(e);
		} else {
			http_covered(l, c, r, !deny, true);
			c->changed = !found || out;
			for (size_t i = 0; i < rs->n && !c->rule; i++)
				if (rs->v[i].deny == deny && !strcmp(rs->v[i].text, r->text))
					c->rule = rs->v[i].text;
			rc = 0;
		}
	}
	http_rules_free(&one);
	return rc;
}

/* ---------- one change ---------- */

int live_rules_apply(struct live_rules *l, enum live_op op, const char *text, struct live_change *c,
		     struct ab_err *e)
{
	char trimmed[LIVE_RULE_MAX + 1];
	size_t n;

	memset(c, 0, sizeof(*c));
	text += strspn(text, " \t");
	n = strlen(text);
	while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
		n--;
	if (n == 0 || n >= sizeof(trimmed))
		return ab_fail(e, 0, "a rule of %zu bytes", n),
		       ab_hint(e, "give one rule, up to %d bytes", LIVE_RULE_MAX),
		       failed(e, EINVAL);
	memcpy(trimmed, text, n);
	trimmed[n] = '\0';
	switch (op) {
	case LIVE_ALLOW:
		return allow_net(l, trimmed, c, e);
	case LIVE_DENY:
		return deny_net(l, trimmed, c, e);
	case LIVE_HTTP_ALLOW:
	case LIVE_HTTP_DENY:
		return http_change(l, op == LIVE_HTTP_DENY, trimmed, c, e);
	}
	return ab_fail(e, 0, "an unknown change of the rules"), failed(e, EINVAL);
}

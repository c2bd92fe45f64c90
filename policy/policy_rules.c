/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What the written rules imply, added once every layer is in (policy_finish): the connections
 * an [http] allow rule or a credential's host needs, the request rules a credential brings to
 * its hosts, a credential's binding when it names no rules.
 * Made here, once, so that the proxy, the CA and the credentials read one typed form. */
#include "policy_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ports 80 and 443: plain HTTP and intercepted HTTPS, what the proxy can read request by
 * request (intercept.c). */
static int implied_allow(struct egress_rules *net, const struct egress_rule *host, const char *text,
			 struct ab_err *e)
{
	for (unsigned port = 80; port; port = port == 80 ? 443 : 0) {
		struct egress_rule r = *host;
		r.port = port;
		if (egress_rule_list_add(&net->implied, &r, text) < 0)
			return policy_oom(e);
	}
	return 0;
}

/* A host an [http] allow rule names (not `*`) is allowed at 80 and 443. */
static int http_implied(struct egress_rules *net, struct ab_err *e)
{
	for (size_t i = 0; i < net->http.n; i++) {
		const struct http_rule *r = &net->http.v[i];
		char text[1024];
		if (r->deny || r->any_host)
			continue;
		snprintf(text, sizeof(text), "[http] %s", r->text);
		if (implied_allow(net, &r->host, text, e) < 0)
			return -1;
	}
	return 0;
}

/* Every request to a host: "* HOST/" and a path glob of two stars, a fallback (it names the
 * host only where no other allow rule does). by: its source, or NULL. */
static int any_request(struct http_rules *rs, const char *host, const char *by, struct ab_err *e)
{
	char rule[300];
	struct http_rule *r;

	snprintf(rule, sizeof(rule), "* %s/**", host);
	if (http_rules_has(rs, false, rule))
		return 0; /* another credential's host too */
	if (http_rules_add(rs, false, rule, e) < 0)
		return -1;
	r = &rs->v[rs->n - 1];
	r->implied = r->fallback = true;
	if (by && !(r->by = strdup(by)))
		return policy_oom(e);
	return 0;
}

/* A credential's rules decide the requests to the hosts they name that no [http] allow rule
 * names (http_rules.h, tiers): what the credential is for is all that reaches them, unless the
 * profile says more in [http]. */
static int credential_rules(struct http_rules *http, const struct policy_credential *c,
			    const char *by, struct ab_err *e)
{
	for (size_t i = 0; i < c->rules.n; i++)
		if (!c->rules.v[i].implied && http_rules_copy(http, &c->rules.v[i], by) < 0)
			return policy_oom(e);
	return 0;
}

/* A credential's hosts: allowed at 80 and 443 (the proxy must read those requests to put the
 * value in, and to find a placeholder going elsewhere), its rules the requests' rules where no
 * [http] allow rule names the host, and every request allowed to the rest of its hosts (a
 * fallback: a host no allow rule names at all). */
static int credential_implied(struct egress_rules *net, const struct policy_credential *c,
			      struct ab_err *e)
{
	char by[64];

	snprintf(by, sizeof(by), "[credential %s]", c->name);
	if (credential_rules(&net->http, c, by, e) < 0)
		return -1;
	for (size_t k = 0; k < c->hosts.text.n; k++) {
		const struct egress_rule *h = &c->hosts.v[k];
		const char *written = c->hosts.text.v[k];
		char text[300];
		snprintf(text, sizeof(text), "[credential %s] %s", c->name, written);
		if (any_request(&net->http, written, by, e) < 0 ||
		    implied_allow(net, h, text, e) < 0)
			return -1;
	}
	return 0;
}

/* Where a credential may go: its rules, or any request to its hosts. */
static int credential_bind(struct policy_credential *c, struct ab_err *e)
{
	if (c->rules.n)
		return 0;
	for (size_t k = 0; k < c->hosts.text.n; k++)
		if (any_request(&c->rules, c->hosts.text.v[k], NULL, e) < 0)
			return -1;
	return 0;
}

int policy_rules_finish(struct policy *p, struct ab_err *e)
{
	if (http_implied(&p->net, e) < 0)
		return -1;
	for (size_t i = 0; i < p->n_creds; i++)
		if (credential_implied(&p->net, &p->creds[i], e) < 0 ||
		    credential_bind(&p->creds[i], e) < 0)
			return -1;
	return 0;
}

void egress_rules_free(struct egress_rules *r)
{
	egress_rule_list_free(&r->allow);
	egress_rule_list_free(&r->deny);
	egress_rule_list_free(&r->implied);
	egress_pin_list_free(&r->pins);
	http_rules_free(&r->http);
	egress_rule_list_free(&r->grantable);
	http_rules_free(&r->http_grantable);
}

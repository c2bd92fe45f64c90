/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* For tests that build a credential by hand: its source, host and rules as the profile parser
 * and policy_finish make them (typed; a rule allowing every request to the host when the
 * credential names none). abort() on a bad argument: the fixture is the test's own text. */
#ifndef AGENTBOX_TEST_CRED_FIXTURE_H
#define AGENTBOX_TEST_CRED_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

static inline void cred_fixture(struct policy_credential *c, const char *source, const char *host,
				const char *rule)
{
	struct egress_rule h;
	struct ab_err e = {0};
	char any[300];

	c->source = strdup(source);
	if (!c->source || strncmp(source, "env:", 4))
		abort();
	c->source_kind = CRED_SOURCE_ENV;
	c->source_arg = c->source + 4;
	snprintf(any, sizeof(any), "* %s/**", host);
	if (egress_rule_parse(host, &h, &e) < 0 || egress_rule_list_add(&c->hosts, &h, host) < 0 ||
	    http_rules_add(&c->rules, false, rule ? rule : any, &e) < 0)
		abort();
	c->rules.v[0].implied = !rule;
}

/* A credential NAME from env:X for api.test, sent as "Authorization: Bearer {}", the value
 * length bytes long: what the scrubber's tests, fuzz target and benchmark bind. */
static inline void cred_fixture_bearer(struct policy_credential *c, const char *name, size_t length)
{
	c->name = strdup(name);
	cred_fixture(c, "env:X", "api.test", NULL);
	c->place = CRED_PLACE_HEADER;
	c->header_name = strdup("Authorization");
	c->template = strdup("Bearer {}");
	c->length = length;
}

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "ca_refusals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_dir.h"

void ca_refusals_note(struct ca_refusals *r, const char *host, long exec, bool silent)
{
	struct ca_refusal *nv, *h = NULL;

	for (size_t i = 0; !h && i < r->n; i++)
		if (r->v[i].exec == exec && !strcmp(r->v[i].host, host))
			h = &r->v[i];
	if (h) {
		++*(silent ? &h->silent : &h->alerts);
		return;
	}
	if (r->n == CA_REFUSALS_MAX || strlen(host) >= sizeof(r->v[0].host)) {
		r->lost = true;
		return;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;
		if (!(nv = realloc(r->v, cap * sizeof(*nv)))) {
			r->lost = true;
			return;
		}
		r->v = nv;
		r->cap = cap;
	}
	h = &r->v[r->n++];
	snprintf(h->host, sizeof(h->host), "%s", host);
	h->exec = exec;
	h->alerts = !silent;
	h->silent = silent;
}

static void say_host(const struct ca_refusal *h, void (*say)(void *ctx, const char *line),
		     void *ctx)
{
	unsigned long n = h->alerts + h->silent;
	char line[1024];

	/* an alert says so; a hang-up only makes it likely (a probe may never have meant to ask) */
	snprintf(
	    line, sizeof(line),
	    "%s: a client %s the run's certificate on %lu connection%s (%s: it pins a key or "
	    "trusts CAs of its own); fix: have it trust " TRUST_CA_FILE ", or allow %s without "
	    "[http] rules or a credential for it, so that it is not intercepted",
	    h->host, h->alerts ? "refused" : "likely refused", n, n == 1 ? "" : "s",
	    h->alerts ? "its TLS alert said so" : "it hung up after the handshake, asking nothing",
	    h->host);
	say(ctx, line);
}

void ca_refusals_say(struct ca_refusals *r, long exec, void (*say)(void *ctx, const char *line),
		     void *ctx)
{
	size_t said = 0, more = 0, kept = 0;
	char line[256];

	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].exec != exec)
			r->v[kept++] = r->v[i];
		else if (said < CA_REFUSALS_LINES)
			say_host(&r->v[i], say, ctx), said++;
		else
			more++;
	}
	r->n = kept;
	/* a session's lost refusals are no one exec's: said with the first exec that has its own */
	if (!more && !(r->lost && said))
		return;
	if (r->lost) /* how many is not known */
		snprintf(line, sizeof(line),
			 "and more hosts whose clients refused the run's "
			 "certificate (the audit trail's net events name them)");
	else
		snprintf(line, sizeof(line),
			 "and %zu more host%s whose clients refused the run's certificate (the "
			 "audit trail's net events name them)",
			 more, more == 1 ? "" : "s");
	r->lost = false;
	say(ctx, line);
}

void ca_refusals_free(struct ca_refusals *r)
{
	free(r->v);
	*r = (struct ca_refusals){0};
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The proxy's side of credential brokering (credential.h decides): an intercepted request to a
 * bound host, once the [http] rules allowed it, gets the real value in its credential's place;
 * a placeholder anywhere else (another host, header, the query, the body, a plain-HTTP request,
 * a CONNECT or SOCKS5 name, a DNS name) is refused and audited as a leak, and with on-leak =
 * stop ends the run. The responses of a bound host are scrubbed of every form of a real value
 * (cred_scrub.c), each find audited. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "credential.h"
#include "intercept_conn.h"

static void cred_event(struct proxy *px, const struct cred *cr, const char *decision,
		       const char *reason, const char *host, const char *method, const char *path)
{
	struct json *j = audit_begin(px->a, "credential");
	struct ab_err e;

	audit_decision(px->a, decision);
	json_kv_str(j, "credential", cr->pc->name);
	json_kv_str(j, "host", host);
	if (method && *method)
		json_kv_str(j, "method", method);
	json_kv_str(j, "path", path);
	if (reason)
		json_kv_str(j, "reason", reason);
	if (audit_emit(px->a, &e) < 0)
		proxy_audit_note(px, &e);
}

/* on-leak = stop: the run ends after this dispatch round, the cause in its error. */
static void maybe_stop(struct proxy *px, const struct cred *cr, const char *where)
{
	struct ab_err e = {0};

	if (!cr->pc->stop)
		return;
	ab_fail(&e, 0, "credential %s: its placeholder was sent in %s, and on-leak = stop",
		cr->pc->name, where);
	ab_hint(&e, "see the credential event in the audit trail");
	e.cause = "credential-leak";
	proxy_audit_note(px, &e);
}

static void leak(struct conn *c, int who, const char *where, const char *path)
{
	const struct cred *cr = who >= 0 ? &c->px->creds->v[who] : NULL;
	char why[256], denied[64];

	if (!cr) { /* out of memory while looking: refused all the same */
		http_check_refuse(c, 403, "credential", "out of memory while checking credentials");
		return;
	}
	snprintf(why, sizeof(why), "credential %s: its placeholder in %s, where it may not go",
		 cr->pc->name, where);
	snprintf(denied, sizeof(denied), "credential %s", cr->pc->name);
	cred_event(c->px, cr, "deny", why, c->name, c->method, path);
	maybe_stop(c->px, cr, where);
	http_check_refuse(c, 403, denied, why);
}

bool cred_check_request(struct conn *c, char **head, size_t *n)
{
	const struct creds *cs = c->px->creds;
	struct xreq *x = c->tls->cur;
	struct http_target t = {0};
	const char *why;
	bool bound[32] = {false}, canon;
	struct cred_result r;
	char *out;
	size_t out_n;
	int rc;

	if (!cs)
		return true;
	creds_stream_free(&x->body[0]);
	creds_stream_free(&x->body[1]);
	canon = x->path && http_target_canon(x->path, strlen(x->path), &t, &why) == 0;
	for (size_t i = 0; i < cs->n && canon; i++)
		bound[i] = cred_bound(&cs->v[i], x->method, c->name, &t);
	http_target_free(&t);
	rc = creds_request(cs, bound, *head, *n, &out, &out_n, &r);
	if (rc != 0) {
		leak(c, rc < 0 ? CRED_OOM : r.leak, rc < 0 ? "the request" : r.where, x->path);
		return false;
	}
	for (size_t i = 0; i < cs->n; i++)
		if (r.used >> i & 1)
			cred_event(c->px, &cs->v[i], "allow",
				   r.added >> i & 1 ? "added" : "replaced", c->name, x->method,
				   x->path);
	explicit_bzero(*head, *n);
	free(*head);
	*head = out;
	*n = out_n;
	return true;
}

/* The payload is scanned as one stream, its chunked framing and trailers as another: a
 * placeholder cut across chunks is whole in the first. */
static struct creds_stream *body_stream(struct creds_stream *two, enum http_part part)
{
	return &two[part == HTTP_PART_DATA ? 0 : 1];
}

bool cred_check_body(struct conn *c, const char *buf, size_t n, enum http_part part)
{
	const struct creds *cs = c->px->creds;
	int who;

	if (!cs || !n)
		return true;
	who = creds_scan_stream(cs, body_stream(c->tls->cur->body, part), buf, n);
	if (who == CRED_NONE)
		return true;
	leak(c, who, "the request body", c->tls->cur->path);
	return false;
}

bool cred_check_plain(struct conn *c, const char *head, size_t n)
{
	const struct creds *cs = c->px->creds;
	int who;

	if (!cs)
		return true;
	/* plain HTTP never carries a real value: a placeholder there goes nowhere it may */
	who = creds_scan(cs, head, n, false);
	if (who == CRED_NONE)
		return true;
	leak(c, who, "a plain-HTTP request (a credential is only sent over HTTPS)", c->url);
	return false;
}

bool cred_check_plain_body(struct conn *c, const char *buf, size_t n, enum http_part part)
{
	const struct creds *cs = c->px->creds;
	char why[256];
	int who;

	if (!cs || !n)
		return true;
	if (!c->cred_body && !(c->cred_body = calloc(2, sizeof(*c->cred_body)))) {
		conn_close(c, "out of memory");
		return false;
	}
	who = creds_scan_stream(cs, body_stream(c->cred_body, part), buf, n);
	if (who == CRED_NONE)
		return true;
	if (who >= 0) {
		snprintf(why, sizeof(why),
			 "credential %s: its placeholder in a plain-HTTP request body",
			 cs->v[who].pc->name);
		cred_event(c->px, &cs->v[who], "deny", why, c->name, c->method, c->url);
		maybe_stop(c->px, &cs->v[who], "a plain-HTTP request body");
	}
	/* the head is gone up: the request can only be cut short */
	conn_audit(c, "deny", who >= 0 ? why : "out of memory while checking credentials");
	conn_close(c, "a credential's placeholder in the request body");
	return false;
}

void cred_conn_free(struct conn *c)
{
	if (!c->cred_body)
		return;
	creds_stream_free(&c->cred_body[0]);
	creds_stream_free(&c->cred_body[1]);
	free(c->cred_body);
	c->cred_body = NULL;
}

bool cred_check_name(struct conn *c)
{
	const struct creds *cs = c->px->creds;
	int who;
	char where[64];

	if (!cs)
		return true;
	who = creds_scan(cs, c->host, strlen(c->host), true);
	if (who == CRED_NONE && c->sni[0])
		who = creds_scan(cs, c->sni, strlen(c->sni), true);
	if (who == CRED_NONE)
		return true;
	snprintf(where, sizeof(where), "the host name of a %s connection",
		 conn_proto_name(c->proto));
	if (who >= 0) {
		cred_event(c->px, &cs->v[who], "deny", "placeholder in a host name", c->host, NULL,
			   NULL);
		maybe_stop(c->px, &cs->v[who], where);
	}
	conn_refuse(c, who >= 0 ? "a credential's placeholder in the host name"
				: "out of memory while checking credentials");
	return false;
}

bool cred_check_dns(struct proxy *px, const char *name)
{
	int who;

	if (!px->creds)
		return true;
	who = creds_scan(px->creds, name, strlen(name), true);
	if (who == CRED_NONE)
		return true;
	if (who >= 0) {
		cred_event(px, &px->creds->v[who], "deny", "placeholder in a DNS query", name, NULL,
			   NULL);
		maybe_stop(px, &px->creds->v[who], "a DNS query");
	}
	return false;
}

bool cred_scrubs(const struct conn *c)
{
	const struct creds *cs = c->px->creds;

	for (size_t i = 0; cs && i < cs->n; i++)
		if (http_rules_cover(&cs->v[i].pc->rules, c->name))
			return true;
	return false;
}

/* Where a real value was found: one credential event for each, the response and the place. */
static void found_events(struct conn *c, uint32_t found, const char *where)
{
	const struct creds *cs = c->px->creds;
	char why[160];

	for (size_t i = 0; i < cs->n; i++) {
		if (!(found >> i & 1))
			continue;
		snprintf(why, sizeof(why), "its real value in %s, replaced by its placeholder",
			 where);
		cred_event(c->px, &cs->v[i], "redact", why, c->name, c->method,
			   c->tls ? c->tls->cur->path : NULL);
	}
}

char *cred_redact_response(struct conn *c, const char *head, size_t n, size_t *out_n,
			   const char *where)
{
	uint32_t found;
	bool oom;
	char *out;

	if (!c->px->creds)
		return NULL;
	out = creds_redact(c->px->creds, head, n, out_n, &found, &oom);
	if (out) {
		found_events(c, found, where);
		return out;
	}
	if (!oom)
		return NULL;
	/* fail closed: a head that may hold a real value is not passed on */
	*out_n = 0;
	return strdup("");
}

int cred_scrub_body(struct conn *c, char *buf, size_t n, bool final, char **out, size_t *out_n)
{
	struct creds_scrub *st = &c->tls->cur->scrub;
	uint32_t before = st->found;

	if (creds_scrub_stream(c->px->creds, st, buf, n, final, out, out_n) < 0) {
		conn_close(c, "out of memory while scrubbing a response of credentials");
		return -1;
	}
	if (st->found != before)
		found_events(c, st->found & ~before, "the response body");
	return 0;
}

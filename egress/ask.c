/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's harness asked about a connection (see proxy.h, "in a session"): one the rules
 * refused, with no deny rule, to a host a [network] grantable rule covers, is held in ST_ASK
 * (its client not read, nothing dialled) until the harness answers or its time is up. The
 * questions are the held connections themselves: one per host and port, the connections that
 * come while it is open wait for the same answer. Each question and each answer is a `policy`
 * event. */
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "egress.h"
#include "proxy.h"
#include "proxy_conn.h"

/* The text a connection the harness let through "once" gives as its rule. */
#define ALLOWED_ONCE "(allowed once by the harness)"

void proxy_use_rules(struct proxy *px, const struct egress_rules *rules)
{
	px->rules = rules;
}

/* ---------- events ---------- */

static void audit_question(struct proxy *px, const struct proxy_question *q)
{
	struct json *j = audit_begin(px->a, "policy");
	struct ab_err e;

	audit_budgeted(px->a); /* the command causes them at will */
	json_kv_str(j, "action", "ask");
	json_kv_uint(j, "question", q->id);
	json_kv_str(j, "host", q->host);
	json_kv_uint(j, "port", q->port);
	audit_kv_exec(j, q->exec);
	json_kv_str(j, "protocol", q->protocol);
	json_kv_str(j, "grant", q->grant);
	json_kv_uint(j, "timeout_ms", q->timeout_ms);
	if (audit_emit(px->a, &e) < 0)
		proxy_audit_note(px, &e);
}

static void audit_answer(struct proxy *px, const struct conn *c, const char *answer,
			 const char *rule, size_t n)
{
	struct json *j = audit_begin(px->a, "policy");
	struct ab_err e;

	audit_budgeted(px->a);
	json_kv_str(j, "action", "answer");
	json_kv_uint(j, "question", c->ask_id);
	json_kv_str(j, "answer", answer);
	json_kv_str(j, "host", c->name);
	json_kv_uint(j, "port", c->port);
	if (rule)
		json_kv_str(j, "rule", rule);
	json_kv_uint(j, "connections", n);
	if (audit_emit(px->a, &e) < 0)
		proxy_audit_note(px, &e);
}

/* ---------- holding ---------- */

/* An open question for name and port: a connection held for it, else NULL. */
static struct conn *open_question(struct proxy *px, const char *name, unsigned port)
{
	for (struct conn *c = px->conns; c; c = c->next)
		if (!c->dead && c->st == ST_ASK && c->ask_id && c->port == port &&
		    !strcmp(c->name, name))
			return c;
	return NULL;
}

const char *ask_hold(struct conn *c, const char *grant)
{
	struct proxy *px = c->px;
	const struct conn *same;

	if (!px->ask)
		return "";
	if (px->ask_held >= PROXY_ASK_MAX_HELD)
		return "not asked: 64 connections wait for the harness's answer already";
	if ((same = open_question(px, c->name, c->port))) {
		c->ask_id = same->ask_id;
		c->deadline_ms = same->deadline_ms;
	} else {
		struct proxy_question q = {
		    px->ask_last + 1,	       c->name, c->port,	   c->exec,
		    conn_proto_name(c->proto), grant,	px->ask_timeout_ms};
		if (!px->ask(px->ask_ctx, &q))
			return "not asked: the harness could not be told";
		audit_question(px, &q);
		c->ask_id = ++px->ask_last;
		c->deadline_ms = proxy_now_ms() + px->ask_timeout_ms;
	}
	c->st = ST_ASK;
	px->ask_held++;
	return NULL;
}

void ask_release(struct conn *c)
{
	if (!c->ask_id)
		return;
	c->ask_id = 0;
	c->px->ask_held--;
}

/* Every connection of question id goes on (allow: rule its rule's text, or ALLOWED_ONCE) or is
 * refused (why); one answer event. The number of them. */
static size_t settle(struct proxy *px, unsigned id, bool allow, const char *rule,
		     const char *answer, const char *why)
{
	struct conn *held[PROXY_ASK_MAX_HELD];
	size_t n = 0;

	for (struct conn *c = px->conns; c && n < PROXY_ASK_MAX_HELD; c = c->next)
		if (!c->dead && c->st == ST_ASK && c->ask_id == id)
			held[n++] = c;
	if (!n)
		return 0;
	audit_answer(px, held[0], answer, rule, n);
	for (size_t i = 0; i < n; i++) {
		struct conn *c = held[i];
		ask_release(c);
		if (allow) {
			c->rule = rule ? rule : ALLOWED_ONCE;
			dial_go(c);
		} else {
			/* a denying rule is the one its event names */
			c->rule = rule;
			/* the answer to be sent has its own time */
			c->deadline_ms = proxy_now_ms() + PROXY_HEAD_TIMEOUT_MS;
			conn_refuse(c, why);
		}
		if (!c->dead && !c->lookup_pending)
			conn_update_interest(c);
	}
	return n;
}

/* The open questions' numbers, each once (at most PROXY_ASK_MAX_HELD). */
static size_t open_ids(struct proxy *px, unsigned *ids, bool expired_only, uint64_t now)
{
	size_t n = 0;

	for (struct conn *c = px->conns; c; c = c->next) {
		bool seen = false;
		if (c->dead || c->st != ST_ASK || !c->ask_id ||
		    (expired_only && now <= c->deadline_ms))
			continue;
		for (size_t i = 0; i < n && !seen; i++)
			seen = ids[i] == c->ask_id;
		if (!seen && n < PROXY_ASK_MAX_HELD)
			ids[n++] = c->ask_id;
	}
	return n;
}

/* ---------- the harness's side ---------- */

void proxy_ask_hook(struct proxy *px, const struct proxy_ask_hook *hook, uint64_t timeout_ms)
{
	unsigned ids[PROXY_ASK_MAX_HELD];
	char why[128];
	size_t n;

	if (!px)
		return;
	px->ask = hook ? hook->ask : NULL;
	px->ask_settled = hook ? hook->settled : NULL;
	px->ask_ctx = hook ? hook->ctx : NULL;
	px->ask_timeout_ms = timeout_ms;
	if (hook)
		return;
	n = open_ids(px, ids, false, 0);
	for (size_t i = 0; i < n; i++) {
		snprintf(why, sizeof(why), "the harness left before answering question %u", ids[i]);
		settle(px, ids[i], false, NULL, "gone", why);
	}
}

size_t proxy_answer(struct proxy *px, unsigned id, enum proxy_answer answer, const char *rule)
{
	char why[128];

	if (!px || !id)
		return 0;
	if (answer == PROXY_ANSWER_DENY) {
		snprintf(why, sizeof(why), "the harness denied it (question %u)", id);
		return settle(px, id, false, NULL, "deny", why);
	}
	return settle(px, id, true, answer == PROXY_ANSWER_RUN ? rule : NULL,
		      answer == PROXY_ANSWER_RUN ? "run" : "once", NULL);
}

bool proxy_question_open(const struct proxy *px, unsigned id, char host[256], unsigned *port)
{
	for (const struct conn *c = px ? px->conns : NULL; c && id; c = c->next)
		if (!c->dead && c->st == ST_ASK && c->ask_id == id) {
			snprintf(host, 256, "%s", c->name);
			*port = c->port;
			return true;
		}
	return false;
}

void proxy_ask_recheck(struct proxy *px)
{
	unsigned ids[PROXY_ASK_MAX_HELD];
	size_t n = px ? open_ids(px, ids, false, 0) : 0;

	for (size_t i = 0; i < n; i++) {
		char host[256], why[512];
		const char *rule;
		unsigned port;
		bool allowed;
		if (!proxy_question_open(px, ids[i], host, &port))
			continue;
		allowed = egress_decide(px->rules, host, port, &rule);
		if (!allowed && !rule)
			continue; /* still for the harness to answer */
		snprintf(why, sizeof(why), "denied by rule '%.400s' (question %u)",
			 rule ? rule : "", ids[i]);
		settle(px, ids[i], allowed, rule, "rule", allowed ? NULL : why);
		if (px->ask_settled)
			px->ask_settled(px->ask_ctx, ids[i], "rule");
	}
}

/* ---------- the engine's side ---------- */

void ask_tick(struct proxy *px, uint64_t now)
{
	unsigned ids[PROXY_ASK_MAX_HELD];
	size_t n = px->ask_held ? open_ids(px, ids, true, now) : 0;
	char why[160];

	for (size_t i = 0; i < n; i++) {
		snprintf(why, sizeof(why),
			 "no answer from the harness within %llu ms (question %u)",
			 (unsigned long long)px->ask_timeout_ms, ids[i]);
		settle(px, ids[i], false, NULL, "timeout", why);
		if (px->ask_settled)
			px->ask_settled(px->ask_ctx, ids[i], "timeout");
	}
}

bool ask_name(struct proxy *px, const char *name, const char **rule)
{
	const char *grant;

	if (!px->ask || *rule || !(grant = egress_name_grantable(px->rules, name)))
		return false;
	*rule = grant;
	return true;
}

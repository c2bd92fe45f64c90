/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's live policy and its ask hook (see session_policy.h). One client at a time is
 * asked: it holds its connection open after SESSION_ASK, gets a QUESTION frame for each
 * connection the proxy holds for it and a SETTLED frame for each question that ends, and
 * answers on the same connection. It hanging up denies every open question at once. */
#include "session_policy.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "channel.h"
#include "json.h"
#include "live_rules.h"
#include "proxy.h"

/* The rules a change's event and reply list as taken out, at most (then how many more). */
#define LISTED_REMOVED 32

struct session_policy {
	struct run *r;
	struct audit *a;
	struct live_rules rules;
	bool live; /* rules hold the proxy's copy */
	int asker; /* the asked client's fd, -1 */
	pid_t asker_pid;
	uint64_t questions, answers; /* the subscription's, for its end event */
	int failed; /* an event of a hang-up could not be written: said at the next chance */
	struct ab_err failure;
};

bool session_policy_kind(enum session_kind kind)
{
	return kind == SESSION_POLICY || kind == SESSION_ASK || kind == SESSION_ANSWER;
}

static pid_t peer_pid(int fd)
{
	struct ucred uc = {0};
	socklen_t len = sizeof(uc);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0 ? 0 : uc.pid;
}

/* A frame, and data after it in the same datagram; non-blocking: a client that does not read
 * loses it. */
static int send_frame(int fd, int type, int value, unsigned id, const char *text,
		      const struct json *data)
{
	struct msg m = {.type = type, .value = value, .id = id};
	const char *d = data ? json_text(data) : NULL;

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	return channel_send_data(fd, &m, d, d ? strlen(d) : 0, NULL, 0);
}

static int error_frame(int fd, const struct ab_err *err, unsigned id)
{
	char text[AB_ERR_MAX];

	snprintf(text, sizeof(text), "%s", err->msg);
	return send_frame(fd, SESSION_REPLY_ERROR, err->errnum ? err->errnum : EINVAL, id, text,
			  NULL);
}

/* ---------- changes ---------- */

static void change_members(struct json *j, enum live_op op, const char *text,
			   const struct live_change *c, const struct ab_err *err)
{
	json_kv_str(j, "action", live_op_name(op));
	json_kv_str(j, "rule", c->rule ? c->rule : text);
	json_kv_str(j, "outcome", err ? "refused" : c->changed ? "applied" : "unchanged");
	if (c->grant)
		json_kv_str(j, "grant", c->grant);
	if (err) {
		json_kv_str(j, "error", err->msg);
		return;
	}
	json_key(j, "removed");
	json_arr_begin(j);
	for (size_t i = 0; i < c->removed.n && i < LISTED_REMOVED; i++)
		json_str(j, c->removed.v[i]);
	json_arr_end(j);
	if (c->removed.n > LISTED_REMOVED)
		json_kv_uint(j, "removed_more", c->removed.n - LISTED_REMOVED);
}

/* The change's `policy` event: pid, the caller; question, the question a "run" answered. */
static int audit_change(struct session_policy *sp, enum live_op op, const char *text,
			const struct live_change *c, const struct ab_err *err, pid_t pid,
			unsigned question, struct ab_err *e)
{
	struct json *j = audit_begin(sp->a, "policy");

	change_members(j, op, text, c, err);
	json_kv_int(j, "pid", pid);
	if (question)
		json_kv_uint(j, "question", question);
	return audit_emit(sp->a, e);
}

/* One change of the rules, audited (applied, unchanged or refused); the proxy goes by the new
 * rules from its next decision, and (but for a "run" answer's, which settles its question
 * first) the open questions they now decide are settled. 0 with *c (live_change_free), -1
 * refused (err), -2 the trail failed (e). */
static int change(struct session_policy *sp, enum live_op op, const char *text, pid_t pid,
		  unsigned question, struct live_change *c, struct ab_err *err, struct ab_err *e)
{
	int rc = live_rules_apply(&sp->rules, op, text, c, err);

	if (audit_change(sp, op, text, c, rc < 0 ? err : NULL, pid, question, e) < 0) {
		live_change_free(c);
		return -2;
	}
	if (rc < 0) {
		live_change_free(c);
		return -1;
	}
	if (c->changed && !question)
		proxy_ask_recheck(sp->r->proxy);
	return 0;
}

static int on_policy(struct session_policy *sp, int fd, const struct session_request *q,
		     struct ab_err *e)
{
	struct ab_err err = {0};
	struct live_change c;
	struct json j;
	int rc;

	if (!sp->live) {
		ab_fail(&err, 0, "the session's network is %s: it has no rules to change",
			net_mode_name(sp->r->p->net_mode));
		err.errnum = ENOTSUP;
		error_frame(fd, &err, 0);
		return 0;
	}
	rc = change(sp, (enum live_op)q->op, q->argv.v[0], peer_pid(fd), 0, &c, &err, e);
	if (rc == -2)
		return -2;
	if (rc == -1) {
		error_frame(fd, &err, 0);
		return 0;
	}
	json_init(&j);
	json_obj_begin(&j);
	change_members(&j, (enum live_op)q->op, q->argv.v[0], &c, NULL);
	json_obj_end(&j);
	send_frame(fd, SESSION_REPLY_POLICY, c.changed, 0, c.rule, &j);
	json_free(&j);
	live_change_free(&c);
	return 0;
}

/* ---------- the ask hook ---------- */

static bool ask(void *ctx, const struct proxy_question *q)
{
	struct session_policy *sp = ctx;
	struct json j;
	int rc;

	if (sp->asker < 0)
		return false;
	json_init(&j);
	json_obj_begin(&j);
	json_kv_uint(&j, "question", q->id);
	json_kv_str(&j, "host", q->host);
	json_kv_uint(&j, "port", q->port);
	audit_kv_exec(&j, q->exec);
	json_kv_str(&j, "protocol", q->protocol);
	json_kv_str(&j, "grant", q->grant);
	json_kv_uint(&j, "timeout_ms", q->timeout_ms);
	json_obj_end(&j);
	rc = json_text(&j)
		 ? send_frame(sp->asker, SESSION_REPLY_QUESTION, (int)q->port, q->id, q->host, &j)
		 : -1;
	json_free(&j);
	sp->questions += rc == 0;
	return rc == 0;
}

static void settled(void *ctx, unsigned id, const char *outcome)
{
	struct session_policy *sp = ctx;

	if (sp->asker >= 0)
		send_frame(sp->asker, SESSION_REPLY_SETTLED, 0, id, outcome, NULL);
}

static int audit_asker(struct session_policy *sp, const char *action, const char *reason,
		       struct ab_err *e)
{
	struct json *j = audit_begin(sp->a, "policy");

	json_kv_str(j, "action", action);
	json_kv_int(j, "pid", sp->asker_pid);
	if (reason) {
		json_kv_str(j, "reason", reason);
		json_kv_uint(j, "questions", sp->questions);
		json_kv_uint(j, "answers", sp->answers);
	}
	return audit_emit(sp->a, e);
}

static int on_ask(struct session_policy *sp, int fd, struct ab_err *e)
{
	const struct policy *p = sp->r->p;
	struct proxy_ask_hook hook = {ask, settled, sp};
	uint64_t timeout =
	    p->net_ask_timeout_ms ? p->net_ask_timeout_ms : POLICY_DEFAULT_ASK_TIMEOUT_MS;
	struct ab_err err = {0};

	if (!sp->live || !p->net.grantable.text.n) {
		ab_fail(&err, 0,
			"the profile grants no connection ([network] grantable): none would "
			"be put to a harness");
		err.errnum = EPERM;
	} else if (sp->asker >= 0) {
		ab_fail(&err, 0, "another client is asked already");
		err.errnum = EBUSY;
	}
	if (err.msg[0]) {
		error_frame(fd, &err, 0);
		return 0;
	}
	sp->asker = fd;
	sp->asker_pid = peer_pid(fd);
	sp->questions = sp->answers = 0;
	if (audit_asker(sp, "ask-start", NULL, e) < 0)
		return -2;
	proxy_ask_hook(sp->r->proxy, &hook, timeout);
	send_frame(fd, SESSION_REPLY_ASKING, timeout > INT_MAX ? INT_MAX : (int)timeout, 0, NULL,
		   NULL);
	return 1;
}

/* The rule a "run" adds: the question's host at its port (an IPv6 address in brackets). */
static void run_rule(char *out, size_t size, const char *host, unsigned port)
{
	bool v6 = strchr(host, ':') && host[0] != '[';

	snprintf(out, size, "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

/* "run": the host at its port allowed for the rest of the session (a change like any other,
 * audited with the question), then the question's connections go on by that rule. A change
 * that cannot be made denies the question. */
static int answer_run(struct session_policy *sp, int fd, unsigned id, size_t *n, struct ab_err *err,
		      struct ab_err *e)
{
	char host[256], rule[300];
	struct live_change c;
	unsigned port;
	int rc;

	if (!proxy_question_open(sp->r->proxy, id, host, &port))
		return 0;
	run_rule(rule, sizeof(rule), host, port);
	rc = change(sp, LIVE_ALLOW, rule, peer_pid(fd), id, &c, err, e);
	if (rc == -2)
		return -2;
	if (rc == -1) {
		*n = proxy_answer(sp->r->proxy, id, PROXY_ANSWER_DENY, NULL);
		return -1;
	}
	*n = proxy_answer(sp->r->proxy, id, PROXY_ANSWER_RUN, c.rule);
	live_change_free(&c);
	return 0;
}

static int on_answer(struct session_policy *sp, int fd, const struct session_request *q,
		     struct ab_err *e)
{
	const char *word = q->argv.v[0];
	struct ab_err err = {0};
	size_t n = 0;

	if (!strcmp(word, SESSION_ANSWER_RUN)) {
		int rc = answer_run(sp, fd, q->question, &n, &err, e);
		if (rc == -2)
			return -2;
		if (rc == -1) {
			error_frame(fd, &err, q->question);
			return 1;
		}
	} else {
		n = proxy_answer(sp->r->proxy, q->question,
				 !strcmp(word, SESSION_ANSWER_ONCE) ? PROXY_ANSWER_ONCE
								    : PROXY_ANSWER_DENY,
				 NULL);
	}
	if (!n) {
		ab_fail(&err, 0,
			"question %u is not open: answered, past its time, or settled by "
			"a change of the rules",
			q->question);
		err.errnum = ESRCH;
		error_frame(fd, &err, q->question);
		return 1;
	}
	sp->answers++;
	send_frame(fd, SESSION_REPLY_SETTLED, (int)n, q->question, word, NULL);
	return 1;
}

/* ---------- the supervisor's side ---------- */

struct session_policy *session_policy_new(struct run *r, struct audit *a, struct ab_err *e)
{
	struct session_policy *sp = calloc(1, sizeof(*sp));

	if (!sp) {
		ab_fail(e, ENOMEM, "the session's policy");
		return NULL;
	}
	sp->r = r;
	sp->a = a;
	sp->asker = -1;
	if (r->proxy) {
		if (live_rules_init(&sp->rules, &r->p->net, e) < 0) {
			free(sp);
			return NULL;
		}
		sp->live = true;
		proxy_use_rules(r->proxy, &sp->rules.now);
	}
	return sp;
}

bool session_policy_asked(const struct session_policy *sp, int fd)
{
	return sp && fd == sp->asker;
}

int session_policy_request(struct session_policy *sp, int fd, const struct session_request *q,
			   size_t nfds, struct ab_err *bad, struct ab_err *e)
{
	bool asker = fd == sp->asker;

	if (sp->failed) {
		*e = sp->failure;
		return -2;
	}
	if (q->kind == SESSION_ANSWER && asker && !nfds)
		return on_answer(sp, fd, q, e);
	if (q->kind == SESSION_POLICY && !asker && !nfds)
		return on_policy(sp, fd, q, e);
	if (q->kind == SESSION_ASK && !asker && !nfds)
		return on_ask(sp, fd, e);
	ab_fail(bad, EPROTO, "a request this connection cannot make");
	return -1;
}

void session_policy_gone(struct session_policy *sp, int fd)
{
	struct ab_err e = {0};

	if (!sp || fd != sp->asker)
		return;
	proxy_ask_hook(sp->r->proxy, NULL, 0); /* every open question: denied */
	if (audit_asker(sp, "ask-end", "hung up", &e) < 0 && !sp->failed) {
		sp->failed = 1;
		sp->failure = e;
	}
	sp->asker = -1;
}

int session_policy_end(struct session_policy *sp, struct ab_err *e)
{
	int rc = 0;

	if (!sp)
		return 0;
	if (sp->failed) {
		*e = sp->failure;
		rc = -1;
	}
	if (sp->asker >= 0) {
		proxy_ask_hook(sp->r->proxy, NULL, 0);
		if (audit_asker(sp, "ask-end", "session-end", rc < 0 ? &(struct ab_err){0} : e) < 0)
			rc = -1;
		sp->asker = -1;
	}
	return rc;
}

void session_policy_free(struct session_policy *sp)
{
	if (!sp)
		return;
	if (sp->live)
		live_rules_free(&sp->rules);
	free(sp);
}

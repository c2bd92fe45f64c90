/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The MCP client asked about connections (see mcp_ask.h): the session's questions as
 * elicitation/create requests, the client's answers back to the session. */
#include "mcp_ask.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "json.h"
#include "printable.h"
#include "session.h"
#include "session_proto.h"

/* The requests' ids: strings, so that they never meet the client's own numbers. */
#define REQUEST_ID "agentbox-ask-"
#define QUESTION_DATA_MAX 8192

void mcp_ask_init(struct mcp_ask *a)
{
	*a = (struct mcp_ask){.fd = -1};
}

bool mcp_ask_capable(const struct jnode *capabilities)
{
	const struct jnode *el = jnode_get(capabilities, "elicitation");

	if (!el || el->type != JNODE_OBJECT)
		return false;
	/* from 2025-11-25 a client names its modes, and {} is form alone; url alone cannot ask */
	return jnode_get(el, "form") || !jnode_get(el, "url");
}

static int send_request(int fd, const struct session_request *q)
{
	struct msg m = {0};
	char *buf;
	size_t len;
	int rc;

	if (session_request_encode(q, &buf, &len, &(struct ab_err){0}) < 0)
		return -1;
	rc = channel_send_data(fd, &m, buf, len, NULL, 0);
	free(buf);
	return rc;
}

int mcp_ask_start(struct mcp_ask *a, const char *id, struct ab_err *e)
{
	struct session_request q = {.kind = SESSION_ASK};
	struct msg m;
	int fd = session_connect(id, e), rc;

	if (fd < 0)
		return -1;
	if (send_request(fd, &q) < 0) {
		rc = ab_fail(e, errno, "asking session %s", id);
	} else if ((rc = channel_recv(fd, &m)) <= 0) {
		rc = ab_fail(e, rc < 0 ? errno : 0, "session %s ended", id);
	} else if (m.type == SESSION_REPLY_ERROR) {
		rc = ab_fail(e, m.value, "%s", m.text);
	} else if (m.type != SESSION_REPLY_ASKING) {
		rc = ab_fail(e, 0, "session %s answered the subscription with %d", id, m.type);
	} else {
		a->fd = fd;
		return 0;
	}
	close(fd);
	return rc;
}

/* Removes question q from the open ones: whether it was open. */
static bool take_open(struct mcp_ask *a, unsigned q)
{
	for (size_t i = 0; i < a->nopen; i++)
		if (a->open[i] == q) {
			a->open[i] = a->open[--a->nopen];
			return true;
		}
	return false;
}

static void answer(struct mcp_ask *a, unsigned q, const char *word)
{
	struct session_request r = {.kind = SESSION_ANSWER, .question = q};
	char *argv[] = {(char *)word, NULL};

	r.argv.v = argv;
	r.argv.n = 1;
	/* a failure is the subscription's end, which the next read sees: it denies them all */
	(void)send_request(a->fd, &r);
}

/* The id of question q's request, as a member named key. */
static void put_request_id(struct json *j, const char *key, unsigned q)
{
	char id[sizeof(REQUEST_ID) + 10];

	snprintf(id, sizeof(id), REQUEST_ID "%u", q);
	json_kv_str(j, key, id);
}

/* What the person is told: who connects where, what the profile lets them allow, and what an
 * unanswered question comes to. Host and grant are made printable: the command chose the
 * host, and it must not be able to write the dialog's text. */
static void question_text(char *out, size_t size, const struct jnode *qj, unsigned port)
{
	char host[4 * 256], grant[4 * 512], protocol[32];
	const struct jnode *exec = jnode_get(qj, "exec");
	int64_t n = 0, ms = 0;
	char who[64];

	printable(jnode_str(qj, "host") ? jnode_str(qj, "host") : "?", host, sizeof(host));
	printable(jnode_str(qj, "grant") ? jnode_str(qj, "grant") : "?", grant, sizeof(grant));
	printable(jnode_str(qj, "protocol") ? jnode_str(qj, "protocol") : "?", protocol,
		  sizeof(protocol));
	if (jnode_int(exec, 1, INT64_MAX, &n))
		snprintf(who, sizeof(who), "The command of run %lld", (long long)n);
	else
		snprintf(who, sizeof(who), "%s",
			 exec && exec->type == JNODE_STRING
			     ? "A process left running in the session"
			     : "A process of the session");
	(void)jnode_int(jnode_get(qj, "timeout_ms"), 0, INT64_MAX, &ms);
	snprintf(
	    out, size,
	    "%s in the agentbox sandbox wants to connect to %s port %u (%s), which its rules "
	    "do not allow. The profile lets you allow it (grantable %s). Answer once to let "
	    "this connection through, run to allow %s:%u for the rest of the session, or deny. "
	    "Unanswered within %lld s, it is denied.",
	    who, host, port, protocol, grant, host, port, (long long)((ms + 999) / 1000));
}

/* The request: the message, and a form of one field whose values are the session's words. */
static bool put_question(struct mcp_ask *a, struct mcp_wire *w, const struct msg *m,
			 const char *data, size_t len)
{
	struct jnode qj;
	struct json j;
	char text[5120]; /* question_text's parts at their longest */
	bool sent = false;

	if (json_read(data, len, &qj, &(struct ab_err){0}) < 0)
		return false;
	question_text(text, sizeof(text), &qj, (unsigned)m->value);
	jnode_free(&qj);
	json_init(&j);
	json_obj_begin(&j);
	json_kv_str(&j, "jsonrpc", "2.0");
	put_request_id(&j, "id", m->id);
	json_kv_str(&j, "method", "elicitation/create");
	json_key(&j, "params");
	json_obj_begin(&j);
	json_kv_str(&j, "message", text);
	json_key(&j, "requestedSchema");
	json_raw(&j, "{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"string\","
		     "\"title\":\"Answer\",\"description\":\"once: this connection only; run: this "
		     "host and port for the rest of the session; deny: refuse it\","
		     "\"enum\":[\"once\",\"run\",\"deny\"]}},\"required\":[\"answer\"]}");
	json_obj_end(&j);
	json_obj_end(&j);
	/* a client that does not read its stdout now is not waited for: the question is denied */
	if (json_text(&j) && a->nopen < MCP_ASK_OPEN)
		sent = mcp_wire_offer(w, json_text(&j));
	json_free(&j);
	if (sent)
		a->open[a->nopen++] = m->id;
	return sent;
}

/* A question that ended without the client's answer (how: the session's word, timeout or
 * rule; or end): its request is withdrawn. */
static void withdraw(struct mcp_ask *a, struct mcp_wire *w, unsigned q, const char *how)
{
	struct json j;

	if (!take_open(a, q))
		return; /* answered by the client: this is the session saying so */
	json_init(&j);
	json_obj_begin(&j);
	json_kv_str(&j, "jsonrpc", "2.0");
	json_kv_str(&j, "method", "notifications/cancelled");
	json_key(&j, "params");
	json_obj_begin(&j);
	put_request_id(&j, "requestId", q);
	json_kv_str(&j, "reason",
		    !strcmp(how, "timeout") ? "no answer in time: the connection was refused"
		    : !strcmp(how, "rule")  ? "a change of the session's rules settled it"
					    : "the session ended");
	json_obj_end(&j);
	json_obj_end(&j);
	if (json_text(&j))
		(void)mcp_wire_offer(w, json_text(&j));
	json_free(&j);
}

void mcp_ask_read(struct mcp_ask *a, struct mcp_wire *w)
{
	char data[QUESTION_DATA_MAX];
	struct msg m;
	struct channel_extra x = {.data = data, .cap = sizeof(data)};
	int rc;

	if (a->fd < 0)
		return;
	rc = channel_recv_extra(a->fd, &m, &x);
	if (rc < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (rc <= 0) {
		/* the session ended (or broke the protocol): its questions ended with it */
		while (a->nopen)
			withdraw(a, w, a->open[0], "end");
		mcp_ask_stop(a);
		return;
	}
	if (m.type == SESSION_REPLY_QUESTION && !put_question(a, w, &m, data, x.len))
		answer(a, m.id, SESSION_ANSWER_DENY);
	else if (m.type == SESSION_REPLY_SETTLED)
		withdraw(a, w, m.id, m.text);
	/* ERROR for an answer that came too late, ASKING: nothing to do */
}

/* The answer in a response: the one word the form allows, accepted; anything else denies. */
static const char *answer_of(const struct jnode *m)
{
	const struct jnode *result = jnode_get(m, "result");
	const char *action = jnode_str(result, "action");
	const char *word = jnode_str(jnode_get(result, "content"), "answer");

	if (!action || strcmp(action, "accept") || !word)
		return SESSION_ANSWER_DENY;
	if (!strcmp(word, SESSION_ANSWER_ONCE) || !strcmp(word, SESSION_ANSWER_RUN))
		return word;
	return SESSION_ANSWER_DENY;
}

/* The question a response's id names, 0 when it is not one of this server's requests. */
static unsigned question_of(const struct jnode *id)
{
	const size_t n = sizeof(REQUEST_ID) - 1;
	unsigned long q = 0;

	if (!id || id->type != JNODE_STRING || id->len <= n || id->len > n + 9 ||
	    memcmp(id->str, REQUEST_ID, n))
		return 0;
	for (size_t i = n; i < id->len; i++) {
		if (id->str[i] < '0' || id->str[i] > '9')
			return 0;
		q = q * 10 + (unsigned long)(id->str[i] - '0');
	}
	return (unsigned)q;
}

bool mcp_ask_response(struct mcp_ask *a, const struct jnode *m)
{
	unsigned q = question_of(jnode_get(m, "id"));

	if (!q || jnode_get(m, "method"))
		return false;
	if (a->fd >= 0 && take_open(a, q))
		answer(a, q, answer_of(m));
	return true;
}

void mcp_ask_line(struct mcp_ask *a, const char *text, size_t n)
{
	struct jnode m;

	/* most lines are not a response to this server: no parse for them */
	if (a->nopen == 0 || !memmem(text, n, REQUEST_ID, sizeof(REQUEST_ID) - 1) ||
	    json_read(text, n, &m, &(struct ab_err){0}) < 0)
		return;
	if (m.type == JNODE_OBJECT)
		(void)mcp_ask_response(a, &m);
	jnode_free(&m);
}

void mcp_ask_stop(struct mcp_ask *a)
{
	/* the subscription's close denies what is still open */
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	a->nopen = 0;
}

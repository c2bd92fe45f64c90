/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The MCP server's protocol (see include/mcp.h): lines in, JSON-RPC dispatch, lines out
 * (mcp_wire.h). One message is handled at a time, in the order received: a run blocks the
 * handling of the next message (what the client sends meanwhile waits in the wire's buffer,
 * read only for a cancel of the run, then in the pipe), so memory stays bounded by one buffer
 * and one run's capped output. */
#include "mcp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "json_read.h"
#include "mcp_ask.h"
#include "mcp_describe.h"
#include "mcp_session.h"
#include "mcp_tools.h"
#include "mcp_wire.h"

enum {
	PARSE_ERROR = -32700,
	INVALID_REQUEST = -32600,
	METHOD_NOT_FOUND = -32601,
	INVALID_PARAMS = -32602,
	INTERNAL_ERROR = -32603,
};

/* Newest first: the answer to a version not listed here. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

struct server {
	struct mcp_session s;
	struct mcp_wire w;
	struct mcp_ask ask;  /* the client asked about connections, when it can be */
	const char *version; /* the protocol revision initialize agreed, NULL before */
};

/* Whether the agreed revision is at least v (revisions are dates: they sort as text). */
static bool revision_from(const struct server *sv, const char *v)
{
	return sv->version && strcmp(sv->version, v) >= 0;
}

static void begin(struct json *j, const struct jnode *id)
{
	json_init(j);
	json_obj_begin(j);
	json_kv_str(j, "jsonrpc", "2.0");
	json_key(j, "id");
	mcp_wire_put_id(j, id);
}

static void finish(struct server *sv, struct json *j)
{
	json_obj_end(j);
	if (json_text(j))
		mcp_wire_send(&sv->w, json_text(j));
	else
		mcp_wire_send(&sv->w, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
				      "\"message\":\"out of memory\"}}");
	json_free(j);
}

static void reply_error(struct server *sv, const struct jnode *id, int code, const char *msg)
{
	struct json j;

	begin(&j, id);
	json_key(&j, "error");
	json_obj_begin(&j);
	json_kv_int(&j, "code", code);
	json_kv_str(&j, "message", msg);
	json_obj_end(&j);
	finish(sv, &j);
}

static const char *negotiate(const struct jnode *params)
{
	const char *asked = jnode_str(params, "protocolVersion");

	for (size_t i = 0; asked && i < sizeof(versions) / sizeof(versions[0]); i++)
		if (!strcmp(asked, versions[i]))
			return versions[i];
	return versions[0];
}

/* A client that can be asked (elicitation, from 2025-06-18) is asked about the connections the
 * profile lets a person allow; one whose profile grants none never has a question. */
static void ask_from_now(struct server *sv, const struct jnode *capabilities)
{
	struct ab_err e = {0};

	if (!revision_from(sv, "2025-06-18") || !mcp_ask_capable(capabilities))
		return;
	if (mcp_ask_start(&sv->ask, sv->s.id, &e) == 0)
		ab_print(
		    "agentbox mcp: the client is asked about connections the profile grants\n");
	else if (e.errnum != EPERM)
		ab_print("agentbox mcp: the client is not asked about connections: %s\n", e.msg);
}

static void initialize(struct server *sv, const struct jnode *id, const struct jnode *params)
{
	struct json j;

	if (!params || params->type != JNODE_OBJECT || !jnode_str(params, "protocolVersion"))
		return reply_error(sv, id, INVALID_PARAMS, "initialize needs protocolVersion");
	begin(&j, id);
	json_key(&j, "result");
	json_obj_begin(&j);
	sv->version = negotiate(params);
	json_kv_str(&j, "protocolVersion", sv->version);
	json_key(&j, "capabilities");
	json_raw(&j, "{\"tools\":{\"listChanged\":false}}");
	json_key(&j, "serverInfo");
	json_obj_begin(&j);
	json_kv_str(&j, "name", "agentbox");
	json_kv_str(&j, "version", AGENTBOX_VERSION);
	json_obj_end(&j);
	json_kv_str(&j, "instructions",
		    "Commands run in one agentbox sandbox session, kept for this connection: "
		    "files written by one run are seen by the next. The run tool's description "
		    "says what the sandbox can see and reach.");
	json_obj_end(&j);
	finish(sv, &j);
	ask_from_now(sv, jnode_get(params, "capabilities"));
}

static void tools_list(struct server *sv, const struct jnode *id)
{
	struct json j;

	begin(&j, id);
	json_key(&j, "result");
	json_obj_begin(&j);
	json_key(&j, "tools");
	mcp_describe(&sv->s, &j);
	json_obj_end(&j);
	finish(sv, &j);
}

/* _meta.progressToken: absent, or a string or an integer (NULL *token for none). */
static bool progress_token(const struct jnode *params, const struct jnode **token)
{
	const struct jnode *t = jnode_get(jnode_get(params, "_meta"), "progressToken");
	int64_t v;

	*token = t;
	return !t || t->type == JNODE_STRING || jnode_int(t, INT64_MIN, INT64_MAX, &v);
}

static void tools_call(struct server *sv, const struct jnode *id, const struct jnode *params)
{
	const char *name = jnode_str(params, "name");
	const struct jnode *args = jnode_get(params, "arguments");
	struct mcp_call c = {.wire = &sv->w, .ask = sv->ask.fd >= 0 ? &sv->ask : NULL, .id = id};
	struct ab_err e = {0};
	struct json r, j;
	enum mcp_call_status st;

	if (!name || (args && args->type != JNODE_OBJECT))
		return reply_error(sv, id, INVALID_PARAMS,
				   "tools/call needs name and an arguments object");
	if (!progress_token(params, &c.token))
		return reply_error(sv, id, INVALID_PARAMS,
				   "_meta.progressToken must be a string or an integer");
	/* a cancel already read: the call never starts, and gets no response */
	mcp_wire_peek_start(&sv->w);
	if (mcp_call_peek(&c)) {
		ab_print("agentbox mcp: the client cancelled a call of %.100s before it started\n",
			 name);
		return;
	}
	json_init(&r);
	st = mcp_tools_call(&sv->s, &c, name, args, &r, &e);
	/* an argument that does not fit the schema: from 2025-11-25 on a tool execution error,
	 * which the model sees and can correct; before, a protocol error */
	if (st == MCP_CALL_BAD_ARGS && revision_from(sv, "2025-11-25")) {
		mcp_tools_error(&r, e.msg);
		st = MCP_CALL_DONE;
	}
	if (st != MCP_CALL_DONE) {
		json_free(&r);
		return reply_error(sv, id, INVALID_PARAMS, e.msg);
	}
	if (c.cancelled) { /* the client gave up on it: no response */
		json_free(&r);
		return;
	}
	if (!json_text(&r)) {
		json_free(&r);
		return reply_error(sv, id, INTERNAL_ERROR, "out of memory");
	}
	begin(&j, id);
	json_key(&j, "result");
	json_raw(&j, json_text(&r));
	json_free(&r);
	finish(sv, &j);
}

static void request(struct server *sv, const char *method, const struct jnode *id,
		    const struct jnode *params)
{
	if (params && params->type != JNODE_OBJECT)
		return reply_error(sv, id, INVALID_PARAMS, "params must be an object");
	if (!strcmp(method, "ping")) {
		struct json j;
		begin(&j, id);
		json_key(&j, "result");
		json_raw(&j, "{}");
		return finish(sv, &j);
	}
	if (!strcmp(method, "initialize")) {
		if (sv->version)
			return reply_error(sv, id, INVALID_REQUEST, "already initialized");
		return initialize(sv, id, params);
	}
	if (!sv->version)
		return reply_error(sv, id, INVALID_REQUEST,
				   "not initialized: send initialize first");
	if (!strcmp(method, "tools/list"))
		return tools_list(sv, id);
	if (!strcmp(method, "tools/call"))
		return tools_call(sv, id, params);
	reply_error(sv, id, METHOD_NOT_FOUND, "method not found");
}

static bool valid_id(const struct jnode *id)
{
	return id->type == JNODE_STRING || id->type == JNODE_NUMBER;
}

static void message(struct server *sv, const struct jnode *m)
{
	const struct jnode *id = jnode_get(m, "id");
	const char *method = jnode_str(m, "method"), *version = jnode_str(m, "jsonrpc");

	if (m->type == JNODE_ARRAY)
		return reply_error(sv, NULL, INVALID_REQUEST,
				   "batches are not supported (removed in protocol 2025-06-18)");
	if (m->type != JNODE_OBJECT || !version || strcmp(version, "2.0"))
		return reply_error(sv, NULL, INVALID_REQUEST, "not a JSON-RPC 2.0 message");
	if (id && !valid_id(id))
		return reply_error(sv, NULL, INVALID_REQUEST, "id must be a string or a number");
	if (!method) {
		/* a response: to a question (mcp_ask.h), or to nothing this server asked */
		if (id && (jnode_get(m, "result") || jnode_get(m, "error"))) {
			(void)mcp_ask_response(&sv->ask, m);
			return;
		}
		return reply_error(sv, id, INVALID_REQUEST, "no method");
	}
	if (!id) {
		/* a notification: never answered; initialized needs nothing, and a cancel of a
		 * call that is done is ignored (a running one's is read while it runs) */
		return;
	}
	request(sv, method, id, jnode_get(m, "params"));
}

static void line(struct server *sv, const char *text, size_t n)
{
	struct ab_err e = {0};
	struct jnode m;

	while (n && (text[n - 1] == '\r' || text[n - 1] == ' ' || text[n - 1] == '\t'))
		n--;
	if (!n)
		return;
	if (json_read(text, n, &m, &e) < 0)
		return reply_error(sv, NULL, PARSE_ERROR, e.msg);
	message(sv, &m);
	jnode_free(&m);
}

static void too_long(struct server *sv)
{
	reply_error(sv, NULL, INVALID_REQUEST, "message over the 1 MiB limit: skipped");
}

/* Handles every whole line read so far (and those a run reads meanwhile), in order. */
static void lines(struct server *sv)
{
	const char *text;
	size_t n;
	enum mcp_wire_next k;

	/* a client that hung up during a run sent nothing more that should run */
	while (!sv->s.client_gone && (k = mcp_wire_next(&sv->w, &text, &n)) != MCP_WIRE_NONE) {
		if (k == MCP_WIRE_TOO_LONG)
			too_long(sv);
		else
			line(sv, text, n);
	}
}

/* Reads stdin until it ends, reading the session's trail meanwhile. */
static void serve(struct server *sv)
{
	while (!sv->w.broken && !sv->s.client_gone) {
		struct pollfd p[3] = {{0, POLLIN, 0},
				      {sv->s.audit_pipe ? sv->s.audit_fd : -1, POLLIN, 0},
				      {sv->ask.fd, POLLIN, 0}};
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			mcp_session_audit(&sv->s);
		/* between calls too: a process a run left running may connect */
		if (p[2].revents)
			mcp_ask_read(&sv->ask, &sv->w);
		if (!p[0].revents)
			continue;
		long n = mcp_wire_read(&sv->w);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		lines(sv);
	}
}

int mcp_command(int argc, char **argv, struct ab_err *e)
{
	struct server sv = {0};

	mcp_ask_init(&sv.ask);
	if (argc < 3 || !strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))
		return ab_fail(e, 0, "usage: agentbox mcp -p PROFILE [OPTIONS]"), 125;
	if (mcp_wire_init(&sv.w) < 0)
		return ab_fail(e, ENOMEM, "mcp"), 125;
	if (mcp_session_start(&sv.s, argv + 2, argc - 2, e) < 0) {
		mcp_wire_free(&sv.w);
		return 125;
	}
	ab_print("agentbox mcp: serving session %s\n", sv.s.id);
	serve(&sv);
	ab_print("agentbox mcp: %s; stopping session %s\n",
		 sv.s.client_gone ? "the client hung up during a run"
		 : sv.w.broken	  ? "stdout closed"
				  : "stdin ended",
		 sv.s.id);
	mcp_ask_stop(&sv.ask);
	mcp_session_stop(&sv.s);
	mcp_wire_free(&sv.w);
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The MCP server's protocol (see include/mcp.h): lines in, JSON-RPC dispatch, lines out. One
 * message is handled at a time, in the order received: a run blocks the reading of the next
 * message (the pipe holds what the client sends meanwhile), so memory stays bounded by one
 * message and one run's capped output. */
#include "mcp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "json_read.h"
#include "mcp_session.h"
#include "mcp_tools.h"

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
	bool initialized; /* initialize was answered */
	bool broken;	  /* stdout is gone */
	char *in;	  /* the message being read */
	size_t len, scanned;
	bool discard; /* the rest of an oversized line */
};

static bool wait_writable(void)
{
	struct pollfd p = {1, POLLOUT, 0};
	int n;

	while ((n = poll(&p, 1, -1)) < 0 && errno == EINTR)
		;
	return n == 1 && !(p.revents & (POLLERR | POLLNVAL));
}

static void send_line(struct server *sv, const char *text)
{
	size_t n = strlen(text), off = 0;

	while (!sv->broken && off <= n) {
		/* the text, then its newline */
		const char *p = off < n ? text + off : "\n";
		size_t want = off < n ? n - off : 1;
		ssize_t w = write(1, p, want);
		if (w < 0 && errno == EINTR)
			continue;
		/* a client may hand over a non-blocking stdout: wait for room, not give up */
		if (w < 0 && errno == EAGAIN && wait_writable())
			continue;
		if (w <= 0) {
			sv->broken = true;
			return;
		}
		off += (size_t)w;
		if (off == n + 1)
			return;
	}
}

/* The request's id, written back as it came: a string, or a number's own text. */
static void put_id(struct json *j, const struct jnode *id)
{
	json_key(j, "id");
	if (!id)
		json_null(j);
	else if (id->type == JNODE_STRING)
		json_strn(j, id->str, id->len);
	else
		json_raw(j, id->str);
}

static void begin(struct json *j, const struct jnode *id)
{
	json_init(j);
	json_obj_begin(j);
	json_kv_str(j, "jsonrpc", "2.0");
	put_id(j, id);
}

static void finish(struct server *sv, struct json *j)
{
	json_obj_end(j);
	if (json_text(j))
		send_line(sv, json_text(j));
	else
		send_line(sv, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
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

static void initialize(struct server *sv, const struct jnode *id, const struct jnode *params)
{
	struct json j;

	if (!params || params->type != JNODE_OBJECT || !jnode_str(params, "protocolVersion"))
		return reply_error(sv, id, INVALID_PARAMS, "initialize needs protocolVersion");
	begin(&j, id);
	json_key(&j, "result");
	json_obj_begin(&j);
	json_kv_str(&j, "protocolVersion", negotiate(params));
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
	sv->initialized = true;
}

static void tools_list(struct server *sv, const struct jnode *id)
{
	struct json j;

	begin(&j, id);
	json_key(&j, "result");
	json_obj_begin(&j);
	json_key(&j, "tools");
	mcp_tools_list(&sv->s, &j);
	json_obj_end(&j);
	finish(sv, &j);
}

static void tools_call(struct server *sv, const struct jnode *id, const struct jnode *params)
{
	const char *name = jnode_str(params, "name");
	const struct jnode *args = jnode_get(params, "arguments");
	struct ab_err e = {0};
	struct json r, j;

	if (!name || (args && args->type != JNODE_OBJECT))
		return reply_error(sv, id, INVALID_PARAMS,
				   "tools/call needs name and an arguments object");
	json_init(&r);
	if (mcp_tools_call(&sv->s, name, args, &r, &e) < 0) {
		json_free(&r);
		return reply_error(sv, id, INVALID_PARAMS, e.msg);
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
		if (sv->initialized)
			return reply_error(sv, id, INVALID_REQUEST, "already initialized");
		return initialize(sv, id, params);
	}
	if (!sv->initialized)
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
		/* a response: this server sends no requests, so it answers none */
		if (id && (jnode_get(m, "result") || jnode_get(m, "error")))
			return;
		return reply_error(sv, id, INVALID_REQUEST, "no method");
	}
	if (!id) {
		/* a notification: never answered; initialized and cancelled need nothing */
		return;
	}
	request(sv, method, id, jnode_get(m, "params"));
}

static void line(struct server *sv, char *text, size_t n)
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

/* Handles every whole line in the buffer; a line past the cap is answered and dropped. */
static void lines(struct server *sv)
{
	size_t start = 0;

	for (;;) {
		char *nl = memchr(sv->in + sv->scanned, '\n', sv->len - sv->scanned);
		if (!nl || sv->s.client_gone)
			break;
		size_t end = (size_t)(nl - sv->in);
		if (sv->discard)
			sv->discard = false;
		else if (end - start > MCP_MAX_MESSAGE)
			too_long(sv);
		else
			line(sv, sv->in + start, end - start);
		start = sv->scanned = end + 1;
	}
	memmove(sv->in, sv->in + start, sv->len - start);
	sv->len -= start;
	sv->scanned = sv->len;
	if (sv->len > MCP_MAX_MESSAGE || (sv->discard && sv->len)) {
		if (!sv->discard)
			too_long(sv);
		sv->discard = true;
		sv->len = sv->scanned = 0;
	}
}

/* Reads stdin until it ends, reading the session's trail meanwhile. */
static void serve(struct server *sv)
{
	const size_t chunk = 64 * 1024;

	/* a client that hung up during a run sent nothing more that should run */
	while (!sv->broken && !sv->s.client_gone) {
		struct pollfd p[2] = {{0, POLLIN, 0},
				      {sv->s.audit_pipe ? sv->s.audit_fd : -1, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			mcp_session_audit(&sv->s);
		if (!p[0].revents)
			continue;
		ssize_t n = read(0, sv->in + sv->len, chunk);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		sv->len += (size_t)n;
		lines(sv);
	}
}

int mcp_command(int argc, char **argv, struct ab_err *e)
{
	struct server sv = {0};

	if (argc < 3 || !strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))
		return ab_fail(e, 0, "usage: agentbox mcp -p PROFILE [OPTIONS]"), 125;
	/* a whole message, then one more read */
	if (!(sv.in = malloc(MCP_MAX_MESSAGE + 64 * 1024 + 1)))
		return ab_fail(e, ENOMEM, "mcp"), 125;
	if (mcp_session_start(&sv.s, argv + 2, argc - 2, e) < 0) {
		free(sv.in);
		return 125;
	}
	ab_print("agentbox mcp: serving session %s\n", sv.s.id);
	serve(&sv);
	ab_print("agentbox mcp: %s; stopping session %s\n",
		 sv.s.client_gone ? "the client hung up during a run"
		 : sv.broken	  ? "stdout closed"
				  : "stdin ended",
		 sv.s.id);
	mcp_session_stop(&sv.s);
	free(sv.in);
	return 0;
}

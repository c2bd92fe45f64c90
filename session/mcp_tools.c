/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The MCP server's tools (see include/mcp_tools.h). A run is an exec like `agentbox exec`'s:
 * the same request, with /dev/null and two pipes of this server's as its stdio. */
#include "mcp_tools.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "session.h"
#include "session_proto.h"

#define SHOWN_PATHS 12
#define REVIEW_CAP (256 * 1024) /* what changes and diff return */
#define DRAIN_AFTER_EXIT_MS 500 /* output still coming from what the command left running */
#define TRAIL_WAIT_MS 2000	/* for the exec's own event to come through the trail */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---------- descriptions, from the policy ---------- */

static void paths_of(FILE *f, const struct jnode *fs, const char *kind, const char *label)
{
	size_t shown = 0, more = 0;

	for (size_t i = 0; fs && fs->type == JNODE_ARRAY && i < fs->n; i++) {
		const char *k = jnode_str(&fs->kids[i], "kind"),
			   *p = jnode_str(&fs->kids[i], "path");
		if (!k || !p || strcmp(k, kind))
			continue;
		if (shown == SHOWN_PATHS) {
			more++;
			continue;
		}
		fprintf(f, "%s%s", shown++ ? ", " : label, p);
	}
	if (more)
		fprintf(f, " and %zu more", more);
	if (shown)
		fputs(". ", f);
}

static void network_of(FILE *f, const struct jnode *net)
{
	const char *mode = jnode_str(net, "mode");
	const struct jnode *allow = jnode_get(net, "allow");

	if (!mode || !strcmp(mode, "none")) {
		fputs("Network: none (no connection leaves the sandbox). ", f);
		return;
	}
	if (!strcmp(mode, "host")) {
		fputs("Network: the host's, unfiltered. ", f);
		return;
	}
	fputs("Network: only through agentbox's egress filter, to ", f);
	if (!allow || allow->type != JNODE_ARRAY || !allow->n)
		fputs("no host at all", f);
	for (size_t i = 0; allow && allow->type == JNODE_ARRAY && i < allow->n; i++)
		if (allow->kids[i].type == JNODE_STRING && i < SHOWN_PATHS)
			fprintf(f, "%s%s", i ? ", " : "", allow->kids[i].str);
	if (allow && allow->type == JNODE_ARRAY && allow->n > SHOWN_PATHS)
		fprintf(f, " and %zu more", allow->n - SHOWN_PATHS);
	fputs("; anything else is refused. ", f);
}

static void limit_of(FILE *f, const struct jnode *l, const char *key, const char *label,
		     const char *unit, int64_t div, bool *any)
{
	int64_t v;

	if (!jnode_int(jnode_get(l, key), 0, INT64_MAX, &v))
		return;
	fprintf(f, "%s%s %lld%s", *any ? ", " : "Limits: ", label, (long long)(v / div), unit);
	*any = true;
}

static void limits_of(FILE *f, const struct jnode *l)
{
	bool any = false;

	limit_of(f, l, "timeout_ms", "timeout per command", " s", 1000, &any);
	limit_of(f, l, "memory", "memory", " MiB", 1 << 20, &any);
	limit_of(f, l, "processes", "processes", "", 1, &any);
	limit_of(f, l, "cpu_s", "CPU", " s", 1, &any);
	limit_of(f, l, "session_timeout_ms", "session lifetime", " s", 1000, &any);
	if (any)
		fputs(". ", f);
}

/* The profile's [limits] timeout in ms, 0 for none: the most a run gets (the session's
 * supervisor lowers a longer one to it; asking for it here keeps the description and the
 * result true). */
static uint64_t profile_timeout(const struct mcp_session *s)
{
	int64_t v;

	if (!jnode_int(jnode_get(jnode_get(&s->policy, "limits"), "timeout_ms"), 1, INT64_MAX, &v))
		return 0;
	return (uint64_t)v;
}

static void duration(FILE *f, uint64_t ms)
{
	if (ms % 1000)
		fprintf(f, "%llu ms", (unsigned long long)ms);
	else
		fprintf(f, "%llu s", (unsigned long long)(ms / 1000));
}

static void timeout_of(FILE *f, uint64_t cap)
{
	uint64_t def = (uint64_t)MCP_RUN_TIMEOUT_DEFAULT * 1000;

	fputs("Default timeout ", f);
	duration(f, cap && cap < def ? cap : def);
	if (cap) {
		fputs("; a longer one is lowered to the profile's limit, ", f);
		duration(f, cap);
	}
	fputs(". ", f);
}

/* The run tool's description: the command's world in a few lines. NULL when out of memory. */
static char *run_description(const struct mcp_session *s)
{
	const struct jnode *p = &s->policy, *fs = jnode_get(p, "filesystem");
	const char *workdir = jnode_str(jnode_get(p, "sandbox"), "workdir");
	char *text = NULL;
	size_t size;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	fprintf(f,
		"Run a command in agentbox sandbox session %s (one sandbox for all runs: files "
		"written by one run are seen by the next). command: an argv array, or a string run "
		"with /bin/sh -c. Returns status (the exit code, 128+N for signal N, 124 on "
		"timeout), cause, duration_ms, stdout and stderr "
		"(each capped at %d bytes; the bytes dropped past the cap are counted in "
		"stdout_dropped/stderr_dropped), timeout_ms (the timeout that applied) and the "
		"sandbox's denials during the run. stdin is empty. ",
		s->id, MCP_OUTPUT_CAP);
	timeout_of(f, profile_timeout(s));
	if (workdir)
		fprintf(f, "Working directory: %s. ", workdir);
	paths_of(f, fs, "rw", "Read-write: ");
	paths_of(f, fs, "overlay", "Writable, changes kept apart from the host (see changes): ");
	paths_of(f, fs, "ro", "Read-only: ");
	paths_of(f, fs, "tmpfs", "Empty scratch: ");
	fputs("Nothing else of the host is visible. ", f);
	network_of(f, jnode_get(p, "network"));
	limits_of(f, jnode_get(p, "limits"));
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void schema_paths(struct json *j)
{
	json_key(j, "inputSchema");
	json_obj_begin(j);
	json_kv_str(j, "type", "object");
	json_key(j, "properties");
	json_obj_begin(j);
	json_key(j, "paths");
	json_obj_begin(j);
	json_kv_str(j, "type", "array");
	json_key(j, "items");
	json_obj_begin(j);
	json_kv_str(j, "type", "string");
	json_obj_end(j);
	json_kv_str(j, "description", "only these paths (default: all)");
	json_obj_end(j);
	json_obj_end(j);
	json_obj_end(j);
}

static void schema_prop(struct json *j, const char *name, const char *type, const char *desc)
{
	json_key(j, name);
	json_obj_begin(j);
	if (type)
		json_kv_str(j, "type", type);
	json_kv_str(j, "description", desc);
}

static void schema_run(struct json *j)
{
	json_key(j, "inputSchema");
	json_obj_begin(j);
	json_kv_str(j, "type", "object");
	json_key(j, "properties");
	json_obj_begin(j);
	schema_prop(j, "command", NULL, "argv array, or a string for /bin/sh -c");
	json_key(j, "oneOf");
	json_raw(j, "[{\"type\":\"string\"},{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
		    "\"minItems\":1}]");
	json_obj_end(j);
	schema_prop(j, "cwd", "string", "working directory inside the sandbox");
	json_obj_end(j);
	schema_prop(j, "timeout", "number", "seconds before the command is killed");
	json_kv_int(j, "exclusiveMinimum", 0);
	json_kv_int(j, "maximum", MCP_RUN_TIMEOUT_MAX);
	json_obj_end(j);
	schema_prop(j, "env", "object", "environment variables to set, NAME: value");
	json_key(j, "additionalProperties");
	json_raw(j, "{\"type\":\"string\"}");
	json_obj_end(j);
	json_obj_end(j);
	json_key(j, "required");
	json_raw(j, "[\"command\"]");
	json_obj_end(j);
}

static void tool(struct json *j, const char *name, const char *desc, void (*schema)(struct json *))
{
	json_obj_begin(j);
	json_kv_str(j, "name", name);
	json_kv_str(j, "description", desc);
	schema(j);
	json_key(j, "annotations");
	json_obj_begin(j);
	json_kv_bool(j, "readOnlyHint", schema != schema_run);
	json_kv_bool(j, "openWorldHint", false);
	json_obj_end(j);
	json_obj_end(j);
}

void mcp_tools_list(const struct mcp_session *s, struct json *j)
{
	char *desc = run_description(s);

	json_arr_begin(j);
	if (!desc)
		j->oom = true;
	tool(j, "run", desc ? desc : "", schema_run);
	free(desc);
	if (s->changes) {
		tool(
		    j, "changes",
		    "List the files the session's runs changed under its overlay paths (the host's "
		    "files are untouched until a human promotes them). Read-only.",
		    schema_paths);
		tool(j, "diff",
		     "Show the session's overlay changes as a unified diff against the host's "
		     "files. "
		     "Read-only.",
		     schema_paths);
	}
	json_arr_end(j);
}

/* ---------- run ---------- */

static int bad_args(struct ab_err *e, const char *what)
{
	return ab_fail(e, EINVAL, "invalid arguments: %s", what);
}

static bool plain_string(const struct jnode *n)
{
	return n && n->type == JNODE_STRING && strlen(n->str) == n->len;
}

static int run_command(const struct jnode *cmd, struct session_request *q, struct ab_err *e)
{
	if (plain_string(cmd)) {
		if (strv_push(&q->argv, "/bin/sh") < 0 || strv_push(&q->argv, "-c") < 0 ||
		    strv_push(&q->argv, cmd->str) < 0)
			return ab_fail(e, ENOMEM, "run");
		return 0;
	}
	if (!cmd || cmd->type != JNODE_ARRAY || !cmd->n)
		return bad_args(e, "command must be a non-empty array of strings or a string");
	for (size_t i = 0; i < cmd->n; i++) {
		if (!plain_string(&cmd->kids[i]))
			return bad_args(e, "command's items must be strings without NUL");
		if (strv_push(&q->argv, cmd->kids[i].str) < 0)
			return ab_fail(e, ENOMEM, "run");
	}
	return 0;
}

static int run_env(const struct jnode *env, struct session_request *q, struct ab_err *e)
{
	for (size_t i = 0; env && i < env->n; i++) {
		const struct jnode *v = &env->kids[i];
		char *entry;
		if (!v->key_len || strlen(v->key) != v->key_len || strchr(v->key, '=') ||
		    !plain_string(v))
			return bad_args(e, "env must map names (no '=') to strings");
		if (asprintf(&entry, "%s=%s", v->key, v->str) < 0)
			return ab_fail(e, ENOMEM, "run");
		int rc = strv_push(&q->env, entry);
		free(entry);
		if (rc < 0)
			return ab_fail(e, ENOMEM, "run");
	}
	return 0;
}

static int run_request(const struct jnode *args, uint64_t cap, struct session_request *q,
		       struct ab_err *e)
{
	const struct jnode *cwd = jnode_get(args, "cwd"), *t = jnode_get(args, "timeout");
	const struct jnode *env = jnode_get(args, "env");
	double secs = MCP_RUN_TIMEOUT_DEFAULT;

	q->kind = SESSION_EXEC;
	if (!args || args->type != JNODE_OBJECT)
		return bad_args(e, "run takes an object with command");
	for (size_t i = 0; i < args->n; i++)
		if (strcmp(args->kids[i].key, "command") && strcmp(args->kids[i].key, "cwd") &&
		    strcmp(args->kids[i].key, "timeout") && strcmp(args->kids[i].key, "env"))
			return bad_args(e, "run takes command, cwd, timeout and env only");
	if (run_command(jnode_get(args, "command"), q, e) < 0)
		return -1;
	if (cwd && (!plain_string(cwd) || !(q->cwd = strdup(cwd->str))))
		return bad_args(e, "cwd must be a string");
	if (t && (!jnode_double(t, &secs) || secs <= 0 || secs > MCP_RUN_TIMEOUT_MAX))
		return bad_args(e, "timeout must be a number of seconds, above 0, at most 86400");
	q->timeout_ms = (uint64_t)(secs * 1000);
	if (!q->timeout_ms)
		q->timeout_ms = 1;
	if (cap && q->timeout_ms > cap)
		q->timeout_ms = cap;
	if (env && env->type != JNODE_OBJECT)
		return bad_args(e, "env must be an object");
	return run_env(env, q, e);
}

struct run {
	int ctl, out, err;
	struct mcp_buf o, x;
	bool started, exited, refused;
	bool client_gone; /* the client hung up while the command ran */
	int status;
	char cause[AB_ERR_MAX];
	char *error; /* start-error: why the command never ran (from the exec's result) */
	uint64_t t0, t1;
};

/* Sends the request with /dev/null and the two pipes' write ends as the command's stdio. */
static int run_send(struct run *r, const struct session_request *q, struct ab_err *e)
{
	int po[2], pe[2], fds[3];
	struct msg m = {.type = 0};
	char *buf;
	size_t len;
	int rc;

	if (pipe2(po, O_CLOEXEC | O_NONBLOCK) < 0)
		return ab_fail(e, errno, "pipe");
	if (pipe2(pe, O_CLOEXEC | O_NONBLOCK) < 0) {
		close(po[0]), close(po[1]);
		return ab_fail(e, errno, "pipe");
	}
	r->out = po[0], r->err = pe[0];
	fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC), fds[1] = po[1], fds[2] = pe[1];
	/* the command's ends block, as anyone's stdout would */
	if (fds[0] < 0 || fcntl(po[1], F_SETFL, 0) < 0 || fcntl(pe[1], F_SETFL, 0) < 0)
		rc = ab_fail(e, errno, "stdio for the command");
	else if ((rc = session_request_encode(q, &buf, &len, e)) == 0) {
		rc = channel_send_data(r->ctl, &m, buf, len, fds, 3);
		free(buf);
		/* a refusing supervisor may close first: its reply is queued */
		if (rc < 0 && errno != EPIPE && errno != ECONNRESET)
			rc = ab_fail(e, errno, "the session did not take the command");
		else
			rc = 0;
	}
	if (fds[0] >= 0)
		close(fds[0]);
	close(po[1]);
	close(pe[1]);
	return rc;
}

/* The exec's --result object, for its error: set when agentbox could not start the command. */
static void run_error(struct run *r, const char *result)
{
	struct ab_err ignored;
	struct jnode j;
	const char *error;

	if (json_read(result, strlen(result), &j, &ignored) < 0)
		return;
	if ((error = jnode_str(&j, "error")) && !r->error)
		r->error = strdup(error); /* out of memory: the cause still says it */
	jnode_free(&j);
}

static void run_reply(struct mcp_session *s, struct run *r)
{
	struct msg m;
	int rc = channel_recv(r->ctl, &m);

	if (rc <= 0) {
		snprintf(r->cause, sizeof(r->cause), "the session ended before the command did");
		r->refused = r->exited = true;
		r->status = 125;
		return;
	}
	if (m.type == SESSION_REPLY_STARTED) {
		r->started = true;
		mcp_session_tally(s, m.id);
	} else if (m.type == SESSION_REPLY_RESULT) {
		run_error(r, m.text);
	} else if (m.type == SESSION_REPLY_EXIT || m.type == SESSION_REPLY_ERROR) {
		r->exited = true;
		r->refused = m.type == SESSION_REPLY_ERROR;
		r->status = r->refused ? 125 : m.value;
		r->t1 = now_ms();
		snprintf(r->cause, sizeof(r->cause), "%s", m.text);
	}
}

struct replies {
	struct mcp_session *s;
	struct run *r;
};

/* The supervisor sends "started" before it writes any event of that exec: taking every reply
 * that has come before tallying the trail read just now means the exec's number is known when
 * its first event is tallied, however the two fds were scheduled. */
static void replies_now(void *arg)
{
	struct replies *q = arg;

	while (!q->r->exited && poll(&(struct pollfd){q->r->ctl, POLLIN, 0}, 1, 0) == 1)
		run_reply(q->s, q->r);
}

/* The client hung up (stdin at its end, stdout's reader gone): nobody waits for this command,
 * so it must not go on running. Closing the connection makes the supervisor kill it. */
static void client_gone(struct mcp_session *s, struct run *r)
{
	close(r->ctl);
	r->ctl = -1;
	r->client_gone = r->exited = r->refused = true;
	r->status = 128 + SIGKILL;
	r->t1 = now_ms();
	snprintf(r->cause, sizeof(r->cause), "the client hung up: the command was killed");
	s->client_gone = true;
}

enum { RUN_CTL, RUN_OUT, RUN_ERR, RUN_TRAIL, RUN_STDIN, RUN_STDOUT, RUN_SLOTS };

/* Until the command ends, then its output's end (or a short while, for what it left behind
 * holding the pipes), reading the trail all along so the session never waits on it, and
 * watching the client's end of stdin and stdout. */
static void run_wait(struct mcp_session *s, struct run *r)
{
	struct replies q = {s, r};
	uint64_t deadline = 0;

	while (r->out >= 0 || r->err >= 0 || !r->exited) {
		/* no POLLIN on stdin: the next message waits its turn; a hang-up is seen anyway */
		struct pollfd p[RUN_SLOTS] = {
		    [RUN_CTL] = {r->exited ? -1 : r->ctl, POLLIN, 0},
		    [RUN_OUT] = {r->out, POLLIN, 0},
		    [RUN_ERR] = {r->err, POLLIN, 0},
		    [RUN_TRAIL] = {s->audit_pipe ? s->audit_fd : -1, POLLIN, 0},
		    [RUN_STDIN] = {r->exited ? -1 : 0, POLLRDHUP, 0},
		    [RUN_STDOUT] = {r->exited ? -1 : 1, 0, 0}};
		int wait = -1;
		if (r->exited) {
			uint64_t now = now_ms();
			if (!deadline)
				deadline = now + DRAIN_AFTER_EXIT_MS;
			if (now >= deadline)
				break;
			wait = (int)(deadline - now);
		}
		if (poll(p, RUN_SLOTS, wait) < 0 && errno != EINTR)
			break;
		if (p[RUN_TRAIL].revents)
			mcp_session_audit_then(s, replies_now, &q);
		if (p[RUN_OUT].revents && mcp_buf_read(&r->o, r->out) <= 0)
			close(r->out), r->out = -1;
		if (p[RUN_ERR].revents && mcp_buf_read(&r->x, r->err) <= 0)
			close(r->err), r->err = -1;
		/* the trail's turn may have taken the replies already: only what is still there */
		if (p[RUN_CTL].revents)
			replies_now(&q);
		if ((p[RUN_STDIN].revents & (POLLHUP | POLLRDHUP | POLLERR)) ||
		    (p[RUN_STDOUT].revents & (POLLHUP | POLLERR))) {
			client_gone(s, r);
			return;
		}
	}
}

/* The exec's own event comes before its status; with a file trail it may still be unread. */
static void run_trail(struct mcp_session *s)
{
	uint64_t deadline = now_ms() + TRAIL_WAIT_MS;

	mcp_session_audit(s);
	while (s->tally.exec && !s->tally.done && s->audit_fd >= 0 && now_ms() < deadline) {
		struct pollfd p = {s->audit_pipe ? s->audit_fd : -1, POLLIN, 0};
		poll(&p, 1, s->audit_pipe ? 100 : 20);
		mcp_session_audit(s);
	}
}

static void denials(struct json *j, const struct mcp_session *s)
{
	const struct mcp_tally *t = &s->tally;

	json_key(j, "denials");
	json_obj_begin(j);
	if (s->audit_off || s->audit_fd < 0 || !t->done) {
		json_kv_bool(j, "available", false);
		json_kv_str(j, "note",
			    s->audit_off ? "the audit trail goes to an fd this server "
					   "cannot read"
					 : "the audit trail did not say");
		json_obj_end(j);
		return;
	}
	json_kv_bool(j, "available", true);
	json_kv_uint(j, "syscalls", t->syscalls);
	json_key(j, "syscall_names");
	json_obj_begin(j);
	for (size_t i = 0; i < MCP_TALLY_NAMES && t->names[i].name[0]; i++)
		json_kv_uint(j, t->names[i].name, t->names[i].n);
	json_obj_end(j);
	json_kv_str(j, "limit", t->limit[0] ? t->limit : NULL);
	json_kv_uint(j, "network_during_run", t->net_denied + t->dns_denied + t->http_denied);
	json_kv_str(j, "note",
		    "syscalls are this run's (the trail attributes each to its exec); "
		    "network denials are anyone's in the session while it ran (the "
		    "proxy cannot tell which process connected)");
	json_obj_end(j);
}

static void output(struct json *j, const char *key, const struct mcp_buf *b, const char *dkey)
{
	json_key(j, key);
	json_strn(j, b->buf ? b->buf : "", b->len);
	json_kv_uint(j, dkey, b->dropped);
}

/* The tool's result: the structured object, and the same as text for older clients. */
static void result(struct json *j, const char *structured, bool is_error)
{
	json_obj_begin(j);
	json_key(j, "content");
	json_arr_begin(j);
	json_obj_begin(j);
	json_kv_str(j, "type", "text");
	json_kv_str(j, "text", structured);
	json_obj_end(j);
	json_arr_end(j);
	json_key(j, "structuredContent");
	json_raw(j, structured);
	json_kv_bool(j, "isError", is_error);
	json_obj_end(j);
}

static void error_result(struct json *j, const char *message)
{
	struct json s;

	json_init(&s);
	json_obj_begin(&s);
	json_kv_str(&s, "error", message);
	json_obj_end(&s);
	if (!json_text(&s))
		j->oom = true;
	result(j, json_text(&s) ? json_text(&s) : "{}", true);
	json_free(&s);
}

static void run_result(struct json *j, const struct mcp_session *s, const struct run *r,
		       uint64_t timeout_ms)
{
	struct json o;

	json_init(&o);
	json_obj_begin(&o);
	json_kv_int(&o, "status", r->status);
	json_kv_str(&o, "cause", r->cause);
	json_kv_uint(&o, "duration_ms", r->t1 - r->t0);
	json_kv_uint(&o, "timeout_ms", timeout_ms);
	output(&o, "stdout", &r->o, "stdout_dropped");
	output(&o, "stderr", &r->x, "stderr_dropped");
	json_kv_uint(&o, "exec", s->tally.exec);
	json_kv_str(&o, "error", r->error);
	denials(&o, s);
	json_obj_end(&o);
	if (!json_text(&o))
		j->oom = true;
	result(j, json_text(&o) ? json_text(&o) : "{}", r->status != 0);
	json_free(&o);
}

static int tool_run(struct mcp_session *s, const struct jnode *args, struct json *j,
		    struct ab_err *e)
{
	struct session_request q = {0};
	struct run r = {.ctl = -1, .out = -1, .err = -1};
	struct ab_err why = {0};

	r.o.cap = r.x.cap = MCP_OUTPUT_CAP;
	if (run_request(args, profile_timeout(s), &q, e) < 0) {
		session_request_free(&q);
		return -1;
	}
	mcp_session_tally(s, 0);
	r.t0 = r.t1 = now_ms();
	if ((r.ctl = session_connect(s->id, &why)) < 0 || run_send(&r, &q, &why) < 0) {
		error_result(j, why.msg);
	} else {
		run_wait(s, &r);
		if (r.refused) {
			error_result(j, r.cause);
		} else {
			run_trail(s);
			run_result(j, s, &r, q.timeout_ms);
		}
	}
	mcp_session_tally(s, 0);
	if (r.ctl >= 0)
		close(r.ctl);
	if (r.out >= 0)
		close(r.out);
	if (r.err >= 0)
		close(r.err);
	free(r.o.buf);
	free(r.x.buf);
	free(r.error);
	session_request_free(&q);
	return 0;
}

/* ---------- changes and diff ---------- */

static int tool_review(struct mcp_session *s, const char *what, const struct jnode *args,
		       struct json *j, struct ab_err *e)
{
	const struct jnode *paths = jnode_get(args, "paths");
	const char *argv[64] = {what, s->changes};
	struct mcp_buf out = {.cap = REVIEW_CAP}, err = {.cap = 4096};
	struct json o;
	int status, n = 2;

	if (args && (args->type != JNODE_OBJECT || args->n > (paths ? 1u : 0u)))
		return bad_args(e, "takes paths only");
	if (paths && (paths->type != JNODE_ARRAY || paths->n > 60))
		return bad_args(e, "paths must be an array of at most 60 strings");
	for (size_t i = 0; paths && i < paths->n; i++) {
		if (!plain_string(&paths->kids[i]))
			return bad_args(e, "paths must be strings");
		argv[n++] = paths->kids[i].str;
	}
	argv[n] = NULL;
	if (mcp_self(s, argv, &out, &err, -1, &status, e) < 0) {
		error_result(j, e->msg);
		*e = (struct ab_err){0};
		free(out.buf);
		free(err.buf);
		return 0;
	}
	json_init(&o);
	json_obj_begin(&o);
	json_key(&o, "output");
	json_strn(&o, out.buf ? out.buf : "", out.len);
	json_kv_uint(&o, "output_dropped", out.dropped);
	json_key(&o, "errors");
	json_strn(&o, err.buf ? err.buf : "", err.len);
	json_kv_int(&o, "status", status);
	json_obj_end(&o);
	if (!json_text(&o))
		j->oom = true;
	result(j, json_text(&o) ? json_text(&o) : "{}", status != 0);
	json_free(&o);
	free(out.buf);
	free(err.buf);
	return 0;
}

int mcp_tools_call(struct mcp_session *s, const char *name, const struct jnode *args,
		   struct json *j, struct ab_err *e)
{
	if (!strcmp(name, "run"))
		return tool_run(s, args, j, e);
	if (s->changes && (!strcmp(name, "changes") || !strcmp(name, "diff")))
		return tool_review(s, name, args, j, e);
	return ab_fail(e, 0, "no tool named '%.100s'", name);
}

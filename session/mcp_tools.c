/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The MCP server's tools (see mcp_tools.h). A run is an exec like `agentbox exec`'s: the same
 * request, with /dev/null and two pipes of this server's as its stdio. While it runs, the
 * client's stdin is read on for a notifications/cancelled (mcp_wire.h), and with a progress
 * token the client hears how it goes. */
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
#include "json_read.h"
#include "mcp_output.h"
#include "printable.h"
#include "session.h"
#include "session_proto.h"

#define REVIEW_CAP (256 * 1024) /* what changes and diff return */
/* diff's text within it, leaving room for the document's other members */
#define REVIEW_DIFF_BYTES "196608"
#define DRAIN_AFTER_EXIT_MS 500 /* output still coming from what the command left running */
#define TRAIL_WAIT_MS 2000	/* for the exec's own event to come through the trail */
#define CANCEL_WAIT_MS 2000	/* for a cancelled command's end, before the connection goes */
/* Progress: a notification at least this often, even with no output (a client's request
 * timeout that progress resets never fires), and with new output no more often than this. */
#define PROGRESS_BEAT_MS 1000
#define PROGRESS_GAP_MS 200
#define PROGRESS_TEXT 2048 /* the most output one notification's message carries */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---------- the run's arguments, checked as its input schema says ---------- */

/* errno 0: an argument's fault, not the system's (which tool_run tells apart by ENOMEM) */
static int bad_args(struct ab_err *e, const char *what)
{
	return ab_fail(e, 0, "invalid arguments: %s", what);
}

static bool plain_string(const struct jnode *n)
{
	return n && n->type == JNODE_STRING && strlen(n->str) == n->len;
}

static int run_command(const struct jnode *cmd, struct session_request *q, struct ab_err *e)
{
	if (cmd && cmd->type == JNODE_STRING)
		return bad_args(e, "command must be an array of strings: for shell syntax, "
				   "[\"sh\", \"-c\", \"...\"]");
	if (!cmd || cmd->type != JNODE_ARRAY || !cmd->n || cmd->n > MCP_ARGV_MAX)
		return bad_args(
		    e, "command must be an array of 1 to " MCP_STR(MCP_ARGV_MAX) " strings");
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
	if (!env)
		return 0;
	if (env->type != JNODE_OBJECT || env->n > MCP_ENV_MAX)
		return bad_args(
		    e, "env must be an object of at most " MCP_STR(MCP_ENV_MAX) " variables");
	for (size_t i = 0; i < env->n; i++) {
		const struct jnode *v = &env->kids[i];
		char *entry;
		if (!v->key_len || strlen(v->key) != v->key_len || strchr(v->key, '=') ||
		    !plain_string(v))
			return bad_args(e, "env must map names (no '=', no NUL) to strings without "
					   "NUL");
		if (asprintf(&entry, "%s=%s", v->key, v->str) < 0)
			return ab_fail(e, ENOMEM, "run");
		int rc = strv_push(&q->env, entry);
		free(entry);
		if (rc < 0)
			return ab_fail(e, ENOMEM, "run");
	}
	return 0;
}

static bool known_arg(const char *key)
{
	static const char *const names[] = {"command", "cwd", "timeout", "env", "max_output_bytes"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(key, names[i]))
			return true;
	return false;
}

/* The output cap: an integer (5.0 is one, as JSON Schema counts) in [0, MCP_OUTPUT_MAX]. */
static int run_cap(const struct jnode *n, size_t *cap, struct ab_err *e)
{
	double v;

	*cap = MCP_OUTPUT_CAP;
	if (!n)
		return 0;
	if (!jnode_double(n, &v) || v < 0 || v > MCP_OUTPUT_MAX || v != (double)(size_t)v)
		return bad_args(
		    e, "max_output_bytes must be an integer from 0 to " MCP_STR(MCP_OUTPUT_MAX));
	*cap = (size_t)v;
	return 0;
}

/* The request, checked; *encoded is what goes to the session. */
static int run_request(const struct jnode *args, uint64_t limit, struct session_request *q,
		       size_t *cap, char **encoded, size_t *len, struct ab_err *e)
{
	const struct jnode *cwd = jnode_get(args, "cwd"), *t = jnode_get(args, "timeout");
	double secs = MCP_RUN_TIMEOUT_DEFAULT;

	q->kind = SESSION_EXEC;
	if (!args)
		return bad_args(e, "run needs command");
	for (size_t i = 0; i < args->n; i++)
		if (!known_arg(args->kids[i].key) ||
		    strlen(args->kids[i].key) != args->kids[i].key_len)
			return bad_args(e, "run takes command, cwd, timeout, env and "
					   "max_output_bytes only");
	if (run_command(jnode_get(args, "command"), q, e) < 0)
		return -1;
	if (cwd && (!plain_string(cwd) || !cwd->len))
		return bad_args(e, "cwd must be a non-empty string without NUL");
	if (cwd && !(q->cwd = strdup(cwd->str)))
		return ab_fail(e, ENOMEM, "run");
	if (t && (!jnode_double(t, &secs) || secs <= 0 || secs > MCP_RUN_TIMEOUT_MAX))
		return bad_args(e, "timeout must be a number of seconds, above 0, at most "
				   "86400");
	q->timeout_ms = (uint64_t)(secs * 1000);
	if (!q->timeout_ms)
		q->timeout_ms = 1;
	if (limit && q->timeout_ms > limit)
		q->timeout_ms = limit;
	if (run_env(jnode_get(args, "env"), q, e) < 0 ||
	    run_cap(jnode_get(args, "max_output_bytes"), cap, e) < 0)
		return -1;
	if (session_request_encode(q, encoded, len, e) < 0)
		return e->errnum == E2BIG ? bad_args(e, "the command, env and cwd together are "
							"over the 128 KiB a request holds")
					  : -1;
	return 0;
}

/* ---------- a run ---------- */

struct run {
	struct mcp_call *call;
	int ctl, out, err;
	struct mcp_output o, x;
	struct mcp_output recent; /* output not yet in a progress notification */
	size_t carry;		  /* its first bytes: a character the last one cut */
	bool started, exited, refused;
	bool client_gone; /* the client hung up while the command ran */
	int status;
	char cause[AB_ERR_MAX];
	char *error; /* start-error: why the command never ran (from the exec's result) */
	uint64_t t0, t1;
	uint64_t progress_at, progress_ms; /* the last notification: when, and its progress */
	uint64_t kill_by;		   /* a cancelled command's end is awaited until then */
};

/* Sends the request with /dev/null and the two pipes' write ends as the command's stdio. */
static int run_send(struct run *r, const char *buf, size_t len, struct ab_err *e)
{
	int po[2], pe[2], fds[3];
	struct msg m = {.type = 0};
	int rc = 0;

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
	/* a refusing supervisor may close first: its reply is queued */
	else if (channel_send_data(r->ctl, &m, buf, len, fds, 3) < 0 && errno != EPIPE &&
		 errno != ECONNRESET)
		rc = ab_fail(e, errno, "the session did not take the command");
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

/* Closing the connection makes the supervisor kill the command, as when agentbox exec dies. */
static void hang_up(struct run *r)
{
	close(r->ctl);
	r->ctl = -1;
	r->exited = true;
	r->t1 = now_ms();
}

/* The client hung up (stdin at its end, stdout's reader gone): nobody waits for this command,
 * so it must not go on running. */
static void client_gone(struct mcp_session *s, struct run *r)
{
	hang_up(r);
	r->client_gone = r->refused = true;
	r->status = 128 + SIGKILL;
	snprintf(r->cause, sizeof(r->cause), "the client hung up: the command was killed");
	s->client_gone = true;
}

/* The client cancelled the call: the command's process group is killed as a hang-up would
 * kill it, but the connection stays until the supervisor says it ended (or CANCEL_WAIT_MS
 * passed: then closing it kills it all the same), so the next message finds it gone. */
static void cancel(struct run *r)
{
	struct session_request q = {.kind = SESSION_SIGNAL, .signo = SIGKILL};
	struct msg m = {.type = 0};
	char *buf = NULL;
	size_t len;

	r->kill_by = now_ms() + CANCEL_WAIT_MS;
	if (session_request_encode(&q, &buf, &len, &(struct ab_err){0}) < 0 ||
	    channel_send_data(r->ctl, &m, buf, len, NULL, 0) < 0)
		r->kill_by = now_ms(); /* the connection's end does it */
	free(buf);
}

static bool peeked(void *ctx, const char *text, size_t n)
{
	struct mcp_call *c = ctx;

	if (c->ask)
		mcp_ask_line(c->ask, text, n);
	if (c->cancelled || !mcp_wire_is_cancel(text, n, c->id, c->reason, sizeof(c->reason)))
		return false;
	c->cancelled = true;
	return true;
}

bool mcp_call_peek(struct mcp_call *c)
{
	return mcp_wire_peek(c->wire, peeked, c);
}

/* What the client sent meanwhile: read on for a cancel and the answers to questions (the rest
 * waits its turn). */
static void client_input(struct mcp_session *s, struct run *r, short revents)
{
	struct mcp_call *c = r->call;
	long n;

	if (!mcp_wire_room(c->wire) || !(revents & (POLLIN | POLLHUP))) {
		if (revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL))
			client_gone(s, r);
		return;
	}
	n = mcp_wire_read(c->wire);
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
		client_gone(s, r);
		return;
	}
	if (!c->cancelled && mcp_call_peek(c))
		cancel(r);
}

/* ---------- progress ---------- */

/* The message: the output since the last notification (its last PROGRESS_TEXT bytes), or
 * that the command still runs. Sets *ncarry to the bytes of a character cut at its end, which
 * go with the next one. */
static void progress_message(struct json *j, struct run *r, uint64_t ms, char *carry,
			     size_t *ncarry)
{
	char text[PROGRESS_TEXT + 64];
	struct mcp_kept k;
	int at = 0;

	*ncarry = r->carry;
	if (r->recent.total <= r->carry) {
		snprintf(text, sizeof(text), "running, %llu s", (unsigned long long)(ms / 1000));
		json_kv_str(j, "message", text);
		return;
	}
	mcp_output_kept(&r->recent, &k);
	const char *p = k.dropped ? k.tail : k.head;
	size_t n = k.dropped ? k.tail_len : k.head_len, whole = mcp_utf8_whole(p, n);
	*ncarry = n - whole;
	memcpy(carry, p + whole, *ncarry);
	if (k.dropped)
		at = snprintf(text, sizeof(text), "[%llu bytes not shown]\n",
			      (unsigned long long)k.dropped);
	memcpy(text + at, p, whole);
	json_key(j, "message");
	json_strn(j, text, (size_t)at + whole);
}

/* A notifications/progress: progress is the seconds since the run began (rising with each),
 * the message what the command wrote meanwhile (progress_message). */
static void progress(struct run *r, uint64_t now)
{
	struct json j;
	char num[32], carry[4];
	size_t ncarry;
	bool text = r->recent.total > r->carry;
	uint64_t ms = now - r->t0 > r->progress_ms ? now - r->t0 : r->progress_ms + 1;

	r->progress_at = now;
	json_init(&j);
	json_obj_begin(&j);
	json_kv_str(&j, "jsonrpc", "2.0");
	json_kv_str(&j, "method", "notifications/progress");
	json_key(&j, "params");
	json_obj_begin(&j);
	json_key(&j, "progressToken");
	mcp_wire_put_id(&j, r->call->token);
	snprintf(num, sizeof(num), "%llu.%03llu", (unsigned long long)(ms / 1000),
		 (unsigned long long)(ms % 1000));
	json_key(&j, "progress");
	json_raw(&j, num);
	progress_message(&j, r, ms, carry, &ncarry);
	json_obj_end(&j);
	json_obj_end(&j);
	/* a client not reading now misses this one; the output waits for the next */
	if (json_text(&j) && mcp_wire_offer(r->call->wire, json_text(&j))) {
		r->progress_ms = ms;
		if (text) {
			mcp_output_clear(&r->recent);
			mcp_output_add(&r->recent, carry, ncarry);
			r->carry = ncarry;
		}
	}
	json_free(&j);
}

/* None once the command has ended: its result follows within the drain, and a notification
 * right before the response is one the SDK may handle after it (and report as stray). */
static bool progress_on(const struct run *r)
{
	return r->call->token && !r->call->cancelled && !r->exited;
}

static uint64_t progress_due(const struct run *r)
{
	return r->progress_at + (r->recent.total > r->carry ? PROGRESS_GAP_MS : PROGRESS_BEAT_MS);
}

/* ---------- waiting for the end ---------- */

/* Reads what fd has into o (and the progress's share): 1, 0 at its end, -1 on error. */
static int take(struct run *r, int fd, struct mcp_output *o)
{
	char chunk[16384];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -1;
	if (n == 0)
		return 0;
	mcp_output_add(o, chunk, (size_t)n);
	if (progress_on(r))
		mcp_output_add(&r->recent, chunk, (size_t)n);
	return 1;
}

/* How long poll may wait: until the drain's end, the next progress, the cancel's deadline. */
static int wait_for(const struct run *r, uint64_t drain_end, uint64_t now)
{
	uint64_t until = UINT64_MAX;

	if (drain_end)
		until = drain_end;
	if (progress_on(r) && progress_due(r) < until)
		until = progress_due(r);
	if (r->kill_by && r->kill_by < until)
		until = r->kill_by;
	if (until == UINT64_MAX)
		return -1;
	return until > now ? (int)(until - now) : 0;
}

enum { RUN_CTL, RUN_OUT, RUN_ERR, RUN_TRAIL, RUN_STDIN, RUN_STDOUT, RUN_ASK, RUN_SLOTS };

/* Until the command ends, then its output's end (or a short while, for what it left behind
 * holding the pipes), reading the trail all along so the session never waits on it, and
 * watching the client: its cancel, its end of stdin and stdout. */
static void run_wait(struct mcp_session *s, struct run *r)
{
	struct replies q = {s, r};
	uint64_t drain_end = 0;

	while (r->out >= 0 || r->err >= 0 || !r->exited) {
		bool room = mcp_wire_room(r->call->wire);
		/* reading stdin only where there is room: a hang-up is seen anyway */
		struct pollfd p[RUN_SLOTS] = {
		    [RUN_CTL] = {r->exited ? -1 : r->ctl, POLLIN, 0},
		    [RUN_OUT] = {r->out, POLLIN, 0},
		    [RUN_ERR] = {r->err, POLLIN, 0},
		    [RUN_TRAIL] = {s->audit_pipe ? s->audit_fd : -1, POLLIN, 0},
		    [RUN_STDIN] = {r->exited ? -1 : 0, room ? POLLIN : POLLRDHUP, 0},
		    [RUN_STDOUT] = {r->exited ? -1 : 1, 0, 0},
		    [RUN_ASK] = {r->call->ask ? r->call->ask->fd : -1, POLLIN, 0}};
		uint64_t now = now_ms();
		if (r->exited && r->call->cancelled)
			break; /* nobody reads what a cancelled command left */
		if (r->exited && !drain_end)
			drain_end = now + DRAIN_AFTER_EXIT_MS;
		if (drain_end && now >= drain_end)
			break;
		if (r->kill_by && now >= r->kill_by && !r->exited) {
			hang_up(r);
			break;
		}
		if (progress_on(r) && now >= progress_due(r))
			progress(r, now);
		if (poll(p, RUN_SLOTS, wait_for(r, drain_end, now_ms())) < 0 && errno != EINTR)
			break;
		if (p[RUN_TRAIL].revents)
			mcp_session_audit_then(s, replies_now, &q);
		if (p[RUN_OUT].revents && take(r, r->out, &r->o) <= 0)
			close(r->out), r->out = -1;
		if (p[RUN_ERR].revents && take(r, r->err, &r->x) <= 0)
			close(r->err), r->err = -1;
		/* the trail's turn may have taken the replies already: only what is still there */
		if (p[RUN_CTL].revents)
			replies_now(&q);
		if (p[RUN_STDOUT].revents & (POLLHUP | POLLERR)) {
			client_gone(s, r);
			return;
		}
		if (p[RUN_ASK].revents) /* a question about a connection the command waits on */
			mcp_ask_read(r->call->ask, r->call->wire);
		if (p[RUN_STDIN].revents) {
			client_input(s, r, p[RUN_STDIN].revents);
			if (r->client_gone)
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

/* ---------- results ---------- */

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
	json_kv_uint(j, "network", t->net_denied + t->http_denied);
	json_kv_uint(j, "dns_during_run", t->dns_denied);
	json_kv_str(j, "note",
		    "syscalls and network (refused connections and requests) are this run's: the "
		    "trail names the exec of each; dns_during_run is anyone's in the session while "
		    "it ran (a query names no exec)");
	json_obj_end(j);
}

/* NAME (the head, or all of it), NAME_dropped, NAME_tail. */
static void output(struct json *j, const char *name, struct mcp_output *o)
{
	struct mcp_kept k;
	char key[32];

	mcp_output_kept(o, &k);
	json_key(j, name);
	json_strn(j, k.head, k.head_len);
	snprintf(key, sizeof(key), "%s_dropped", name);
	json_kv_uint(j, key, k.dropped);
	snprintf(key, sizeof(key), "%s_tail", name);
	json_key(j, key);
	json_strn(j, k.tail, k.tail_len);
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

void mcp_tools_error(struct json *j, const char *message)
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

static void run_result(struct json *j, const struct mcp_session *s, struct run *r,
		       uint64_t timeout_ms)
{
	struct json o;

	json_init(&o);
	json_obj_begin(&o);
	json_kv_int(&o, "status", r->status);
	json_kv_str(&o, "cause", r->cause);
	json_kv_uint(&o, "duration_ms", r->t1 - r->t0);
	json_kv_uint(&o, "timeout_ms", timeout_ms);
	output(&o, "stdout", &r->o);
	output(&o, "stderr", &r->x);
	json_kv_uint(&o, "exec", s->tally.exec);
	json_kv_str(&o, "error", r->error);
	denials(&o, s);
	json_obj_end(&o);
	if (!json_text(&o))
		j->oom = true;
	result(j, json_text(&o) ? json_text(&o) : "{}", r->status != 0);
	json_free(&o);
}

static void cancelled(struct run *r)
{
	char why[sizeof(r->call->reason) * 4 + 1];

	printable(r->call->reason, why, sizeof(why));
	ab_print("agentbox mcp: the client cancelled a run%s%s%s; %s\n", why[0] ? " (" : "", why,
		 why[0] ? ")" : "",
		 r->started ? "its command was killed" : "its command had not started");
}

static enum mcp_call_status tool_run(struct mcp_session *s, struct mcp_call *c,
				     const struct jnode *args, struct json *j, struct ab_err *e)
{
	struct session_request q = {0};
	struct run r = {.call = c, .ctl = -1, .out = -1, .err = -1};
	struct ab_err why = {0};
	char *buf = NULL;
	size_t len = 0, cap = MCP_OUTPUT_CAP;

	if (run_request(args, mcp_session_run_limit(s), &q, &cap, &buf, &len, e) < 0) {
		session_request_free(&q);
		return e->errnum == ENOMEM ? (mcp_tools_error(j, e->msg), MCP_CALL_DONE)
					   : MCP_CALL_BAD_ARGS;
	}
	mcp_output_init(&r.o, cap - cap / 2, cap / 2);
	mcp_output_init(&r.x, cap - cap / 2, cap / 2);
	mcp_output_init(&r.recent, 0, PROGRESS_TEXT);
	mcp_session_tally(s, 0);
	r.t0 = r.t1 = r.progress_at = now_ms();
	if ((r.ctl = session_connect(s->id, &why)) < 0 || run_send(&r, buf, len, &why) < 0) {
		mcp_tools_error(j, why.msg);
	} else {
		run_wait(s, &r);
		if (c->cancelled)
			cancelled(&r);
		else if (r.refused)
			mcp_tools_error(j, r.cause);
		else {
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
	mcp_output_free(&r.o);
	mcp_output_free(&r.x);
	mcp_output_free(&r.recent);
	free(r.error);
	free(buf);
	session_request_free(&q);
	return MCP_CALL_DONE;
}

/* ---------- changes and diff ---------- */

/* The --json document as it came, checked whole: half a document is an error asking for less,
 * never a result. */
static void review_result(struct json *j, const struct mcp_buf *out, const struct mcp_buf *err,
			  int status)
{
	struct ab_err ignored = {0};
	size_t len = out->len;
	struct jnode doc;
	const char *st;
	char msg[512], *text;

	if (out->dropped) {
		mcp_tools_error(j, "the review is larger than this server returns (256 KiB): name "
				   "fewer paths");
		return;
	}
	while (len && (out->buf[len - 1] == '\n' || out->buf[len - 1] == ' '))
		len--; /* the line's end: the document goes into a JSON-RPC line */
	if (!out->buf || json_read(out->buf, len, &doc, &ignored) < 0) {
		snprintf(msg, sizeof(msg), "the review failed (status %d): %.*s", status,
			 err->buf ? (int)(err->len > 400 ? 400 : err->len) : 0,
			 err->buf ? err->buf : "");
		mcp_tools_error(j, msg);
		return;
	}
	st = jnode_str(&doc, "status");
	if (!(text = strndup(out->buf, len)))
		j->oom = true;
	else
		result(j, text, !st || !strcmp(st, "error"));
	free(text);
	jnode_free(&doc);
}

static enum mcp_call_status tool_review(struct mcp_session *s, const char *what,
					const struct jnode *args, struct json *j, struct ab_err *e)
{
	const struct jnode *paths = jnode_get(args, "paths");
	const char *argv[MCP_PATHS_MAX + 6] = {what, "--json"};
	struct mcp_buf out = {.cap = REVIEW_CAP}, err = {.cap = 4096};
	int status, n = 2;

	if (args && args->n > (paths ? 1u : 0u))
		return bad_args(e, "takes paths only"), MCP_CALL_BAD_ARGS;
	if (paths && (paths->type != JNODE_ARRAY || paths->n > MCP_PATHS_MAX))
		return bad_args(e, "paths must be an array of at most " MCP_STR(
				       MCP_PATHS_MAX) " strings"),
		       MCP_CALL_BAD_ARGS;
	if (!strcmp(what, "diff")) {
		argv[n++] = "--max-bytes";
		argv[n++] = REVIEW_DIFF_BYTES;
	}
	argv[n++] = s->changes;
	for (size_t i = 0; paths && i < paths->n; i++) {
		if (!plain_string(&paths->kids[i]))
			return bad_args(e, "paths must be strings without NUL"), MCP_CALL_BAD_ARGS;
		argv[n++] = paths->kids[i].str;
	}
	argv[n] = NULL;
	if (mcp_self(s, argv, &out, &err, -1, &status, e) < 0) {
		mcp_tools_error(j, e->msg);
		*e = (struct ab_err){0};
	} else {
		review_result(j, &out, &err, status);
	}
	free(out.buf);
	free(err.buf);
	return MCP_CALL_DONE;
}

enum mcp_call_status mcp_tools_call(struct mcp_session *s, struct mcp_call *c, const char *name,
				    const struct jnode *args, struct json *j, struct ab_err *e)
{
	if (!strcmp(name, "run"))
		return tool_run(s, c, args, j, e);
	if (s->changes && (!strcmp(name, "changes") || !strcmp(name, "diff")))
		return tool_review(s, name, args, j, e);
	ab_fail(e, 0, "no tool named '%.100s'", name);
	return MCP_CALL_NO_TOOL;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's supervisor (see include/session_serve.h). One poll loop, like a run's
 * (supervise.c), over: its signals, pid 1's channel, the control socket and its clients, the
 * filter's notifications, the proxy, the disk budget, the forwarded ports, and the deadlines
 * (the session's, its idle time's, each exec's). Each exec is a client connection: its request
 * is checked and audited here, then handed to pid 1 with the client's stdio; pid 1 forks it
 * exactly as it forks a plain run's command, under the same confinement, and reports back. */
#include "session_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "result.h"
#include "run.h"
#include "run_audit.h"
#include "sandbox.h"
#include "session_policy.h"
#include "session_ports.h"
#include "session_proto.h"
#include "session_refusals.h"
#include "supervise.h"

#define MAX_CLIENTS 256
/* The poll set of one round: these, then one slot per client. */
enum {
	SLOT_SIGNALS,
	SLOT_PID1,
	SLOT_LISTENER,
	SLOT_FILTER,
	SLOT_PROXY,
	SLOT_DISK,
	SLOT_PROTECT,
	SLOT_PORTS,
	FIXED_FDS
};

struct client {
	int fd;
	unsigned exec; /* the exec this connection runs, 0 before its request */
};

struct exec {
	unsigned id;
	int client;	  /* -1 once the client left */
	pid_t root;	  /* its first process (host pid, from the kernel), 0 until known */
	struct strv argv; /* for its event */
	char *cwd;
	uint64_t t0, deadline; /* monotonic ms; deadline 0: none */
	uint64_t timeout_ms;
	int timeout_stage; /* 0 running, 1 SIGTERM sent, 2 SIGKILL sent */
	uint64_t denied;   /* its refused system calls */
};

struct serve {
	struct run *r;
	struct audit *a;
	int lfd;
	const char *path;
	struct client clients[MAX_CLIENTS];
	size_t n_clients;
	struct exec *execs;
	size_t n_execs, cap_execs;
	unsigned next_id;
	uint64_t t0, last_active; /* monotonic ms */
	char started[32];	  /* wall clock, for session list */
	const char *end_reason;
	bool disk_full, pid1_reaped;
	int pid1_status;
	int stopper; /* the client that asked for the stop, -1 */
	char ns[64]; /* this supervisor's pid namespace: clients must be in it */
	char *buf;
	struct session_refusals refusals;
	struct session_ports *ports;
	struct session_policy *policy;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void session_report(int fd, const char *changes, const struct ab_err *err)
{
	struct session_report rep = {.ok = err == NULL};

	if (err)
		rep.e = *err;
	if (changes)
		snprintf(rep.changes, sizeof(rep.changes), "%s", changes);
	/* a caller gone already has nobody to tell */
	(void)!write(fd, &rep, sizeof(rep));
}

static void reply(int fd, int type, int value, unsigned id, const char *text)
{
	struct msg m = {.type = type, .value = value, .id = id};

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	/* non-blocking: a client that does not read loses its reply, not the session */
	channel_send_data(fd, &m, NULL, 0, NULL, 0);
}

/* ---------- attribution ---------- */

static pid_t parent_of(pid_t pid)
{
	char path[32], buf[512], *close_paren;
	ssize_t n;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* the name in parentheses may hold anything, parentheses too: the last one ends it */
	if (!(close_paren = strrchr(buf, ')')) || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/* The exec whose first process is an ancestor of pid: the kernel's parent links, walked up to
 * pid 1, and roots the kernel named (SCM_CREDENTIALS). A process that left its exec (double
 * fork: pid 1 adopted it) is the session's; nothing inside can name another exec. */
static long place(struct serve *s, int pid, struct exec **x)
{
	pid_t cur = pid;

	*x = NULL;
	for (int hops = 0; hops < 4096 && cur > 0; hops++) {
		if (cur == s->r->pid1)
			return 0;
		for (size_t i = 0; i < s->n_execs; i++) {
			if (s->execs[i].root != cur)
				continue;
			*x = &s->execs[i];
			return s->execs[i].id;
		}
		cur = parent_of(cur);
	}
	return -1;
}

/* The filter's: a refused call, counted for its exec's --result. */
static long attribute_refusal(void *ctx, int pid)
{
	struct exec *x;
	long id = place(ctx, pid, &x);

	if (x)
		x->denied++;
	return id;
}

/* The proxy's: a connection, allowed or not (its refusals are the session's count). */
static long attribute_connection(void *ctx, int pid)
{
	struct exec *x;

	return place(ctx, pid, &x);
}

/* ---------- execs ---------- */

static struct exec *find_exec(struct serve *s, unsigned id)
{
	for (size_t i = 0; i < s->n_execs; i++)
		if (s->execs[i].id == id)
			return &s->execs[i];
	return NULL;
}

static struct client *find_client(struct serve *s, int fd)
{
	for (size_t i = 0; i < s->n_clients; i++)
		if (s->clients[i].fd == fd)
			return &s->clients[i];
	return NULL;
}

static void drop_client(struct serve *s, struct client *c)
{
	struct exec *x = c->exec ? find_exec(s, c->exec) : NULL;

	if (x)
		x->client = -1;
	session_policy_gone(s->policy, c->fd);
	close(c->fd);
	*c = s->clients[--s->n_clients];
}

static int audit_exec(struct serve *s, const struct exec *x, const struct sandbox_result *res,
		      struct ab_err *e)
{
	return run_audit_exec(s->a, x->id, &x->argv, x->cwd, x->timeout_ms, res, x->denied, e);
}

/* The exec's status to its client, after its --result object (written there if asked for). */
static void reply_exit(struct serve *s, const struct exec *x, const struct sandbox_result *res)
{
	struct json j;

	json_init(&j);
	result_exec(&j, res, s->a, x->id, x->denied);
	if (json_text(&j) && strlen(json_text(&j)) < AB_ERR_MAX)
		reply(x->client, SESSION_REPLY_RESULT, 0, x->id, json_text(&j));
	json_free(&j);
	reply(x->client, SESSION_REPLY_EXIT, res->status, x->id, res->cause);
}

static void free_exec(struct serve *s, struct exec *x)
{
	strv_free(&x->argv);
	free(x->cwd);
	*x = s->execs[--s->n_execs];
}

/* The request checked, its stdio passed on: pid 1 forks it. */
static int start_exec(struct serve *s, struct client *c, struct session_request *q,
		      const int fds[3], struct ab_err *e)
{
	struct session_request out = {.kind = SESSION_EXEC};
	struct msg m = {.type = MSG_EXEC};
	struct exec *x;
	char *buf = NULL;
	size_t len;
	int rc;

	/* a directory (or an O_PATH fd) passed as stdio would reach past the view with openat */
	for (int i = 0; i < 3; i++) {
		struct stat st;
		int fl = fcntl(fds[i], F_GETFL);
		if (fl < 0 || (fl & O_PATH) || fstat(fds[i], &st) < 0 || S_ISDIR(st.st_mode))
			return ab_fail(e, EBADF,
				       "stdin, stdout and stderr must be files, pipes, "
				       "sockets or terminals, not directories");
	}
	if (s->n_execs == s->cap_execs) {
		struct exec *v = realloc(s->execs, (s->cap_execs * 2 + 8) * sizeof(*v));
		if (!v)
			return ab_fail(e, ENOMEM, "exec");
		s->execs = v;
		s->cap_execs = s->cap_execs * 2 + 8;
	}
	out.argv = q->argv;
	out.cwd = q->cwd ? q->cwd : s->r->workdir;
	if (env_overlaid(&s->r->env.vars, &q->env, &out.env) < 0) {
		strv_free(&out.env);
		return ab_fail(e, ENOMEM, "environment");
	}
	rc = session_request_encode(&out, &buf, &len, e);
	strv_free(&out.env);
	if (rc < 0)
		return -1;
	m.id = ++s->next_id;
	rc = channel_send_data(s->r->sock[0], &m, buf, len, fds, 3);
	free(buf);
	if (rc < 0)
		return ab_fail(e, errno, "the sandbox did not take the command");
	x = &s->execs[s->n_execs++];
	*x = (struct exec){.id = m.id, .client = c->fd, .t0 = now_ms()};
	x->argv = q->argv;
	q->argv = (struct strv){0};
	x->cwd = strdup(out.cwd);
	/* the profile's timeout is the most an exec gets: a request may only lower it */
	x->timeout_ms = q->timeout_ms;
	if (s->r->p->limits.timeout_ms &&
	    (!x->timeout_ms || x->timeout_ms > s->r->p->limits.timeout_ms))
		x->timeout_ms = s->r->p->limits.timeout_ms;
	x->deadline = x->timeout_ms ? x->t0 + x->timeout_ms : 0;
	c->exec = x->id;
	s->last_active = x->t0;
	reply(c->fd, SESSION_REPLY_STARTED, 0, x->id, NULL);
	return 0;
}

static void signal_exec(struct serve *s, const struct exec *x, int sig)
{
	struct msg m = {.type = MSG_EXEC_SIGNAL, .value = sig, .id = x->id};

	channel_send_data(s->r->sock[0], &m, NULL, 0, NULL, 0);
}

static void reply_note(void *ctx, const char *line)
{
	const struct exec *x = ctx;

	if (x->client >= 0)
		reply(x->client, SESSION_REPLY_NOTE, 0, x->id, line);
}

/* failure: pid 1's word that the command never ran (its exec or what comes before it
 * failed), "" when it did. */
static int exec_ended(struct serve *s, struct exec *x, int wait_status, const char *failure,
		      struct ab_err *e)
{
	struct sandbox_result res = {0};
	int rc;

	supervise_status(wait_status, x->timeout_stage != 0, &res);
	if (failure[0] && !x->timeout_stage) {
		res.cause = "start-error";
		snprintf(res.error, sizeof(res.error), "%s", failure);
	}
	res.limit = x->timeout_stage ? "timeout" : NULL;
	res.duration_ms = now_ms() - x->t0;
	rc = audit_exec(s, x, &res, e);
	/* its connections' last bytes read first: a client that refused the run's certificate
	 * is known by its close; the exec's client says each host's line on its stderr */
	if (proxy_settle(s->r->proxy, e) < 0)
		rc = -1;
	proxy_say_refusals(s->r->proxy, x->id, reply_note, x);
	if (x->client >= 0) {
		struct client *c = find_client(s, x->client);
		reply_exit(s, x, &res);
		if (c)
			drop_client(s, c);
	}
	s->last_active = now_ms();
	free_exec(s, x);
	return rc;
}

/* ---------- pid 1's channel ---------- */

static int on_pid1(struct serve *s, struct ab_err *e)
{
	int fds[MAX_PASSED_FDS];
	struct channel_extra in = {.fds = fds, .max = MAX_PASSED_FDS};
	struct msg m;
	struct exec *x;
	int rc = channel_recv_extra(s->r->sock[0], &m, &in);

	if (rc <= 0)
		return -1;
	if (m.type == MSG_PORT_CONNECTED) /* takes the socket, when one came */
		return session_ports_connected(s->ports, &m, fds, in.n, e) < 0 ? -2 : 0;
	for (size_t i = 0; i < in.n; i++)
		close(fds[i]);
	x = find_exec(s, m.id);
	if (m.type == MSG_EXEC_STARTED && x && !x->root && in.sender > 0)
		x->root = in.sender;
	else if (m.type == MSG_EXEC_EXIT && x)
		return exec_ended(s, x, m.value, m.text, e) < 0 ? -2 : 0;
	return 0;
}

/* ---------- clients ---------- */

static int audit_refused(struct serve *s, const struct ucred *uc, enum session_refusal why,
			 const char *detail, struct ab_err *e)
{
	return session_refusal(&s->refusals, s->a, now_ms(), uc, why, detail, e);
}

/* Unread data at close would reset the connection before the refusal is read. Bounded, and
 * stops at the peer's hang-up (0, again and again once it has closed): a refused peer must not
 * hold the loop. */
static void drain(int fd)
{
	char sink[64];

	for (int k = 0; k < 8; k++)
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT | MSG_TRUNC) <= 0)
			return;
}

static int on_accept(struct serve *s, struct ab_err *e)
{
	for (int k = 0; k < 16; k++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred uc = {0};
		enum session_refusal why;

		if (fd < 0)
			return 0;
		why = session_peer_check(s->ns, fd, &uc);
		if (why == REFUSAL_NONE && s->n_clients >= MAX_CLIENTS)
			why = REFUSAL_TOO_MANY;
		if (why != REFUSAL_NONE) {
			reply(fd, SESSION_REPLY_ERROR, EPERM, 0, session_refusal_reason(why));
			drain(fd);
			close(fd);
			if (audit_refused(s, &uc, why, NULL, e) < 0)
				return -1;
			continue;
		}
		s->clients[s->n_clients++] = (struct client){fd, 0};
	}
	return 0;
}

static void info(struct serve *s, int fd)
{
	struct json j;
	const struct policy *p = s->r->p;
	const char *profile = p->profiles.n ? p->profiles.v[0] : "";
	const char *base = strrchr(profile, '/') ? strrchr(profile, '/') + 1 : profile;
	struct msg m = {.type = SESSION_REPLY_INFO};

	json_init(&j);
	json_obj_begin(&j);
	json_kv_str(&j, "id", audit_run_id(s->a));
	json_kv_str(&j, "profile", profile);
	json_kv_int(&j, "pid", getpid()); /* the supervisor's */
	json_kv_str(&j, "started", s->started);
	json_kv_uint(&j, "execs", s->next_id);
	json_kv_uint(&j, "running", s->n_execs);
	json_kv_str(&j, "socket", s->path);
	json_kv_str(&j, "changes", s->r->changes);
	json_obj_end(&j);
	snprintf(m.text, sizeof(m.text), "%-32s  %-20s  %5u  %s", audit_run_id(s->a), s->started,
		 s->next_id, base);
	if (json_text(&j))
		channel_send_data(fd, &m, json_text(&j), strlen(json_text(&j)), NULL, 0);
	json_free(&j);
}

/* A client's message: its request, or a signal for its exec, or its hang-up. */
static int on_client(struct serve *s, struct client *c, struct ab_err *e)
{
	int fds[MAX_PASSED_FDS];
	struct channel_extra in = {s->buf, SESSION_MAX_REQUEST, 0, fds, MAX_PASSED_FDS, 0, 0};
	struct session_request q;
	struct ab_err bad = {0};
	struct msg m;
	struct exec *x = c->exec ? find_exec(s, c->exec) : NULL;
	int rc = channel_recv_extra(c->fd, &m, &in), out = 0;

	if (rc <= 0) {
		if (rc < 0 && errno == EAGAIN)
			return 0;
		/* the client is gone before its command ended: like a killed agentbox, the
		 * command goes too */
		if (x)
			signal_exec(s, x, SIGKILL);
		drop_client(s, c);
		return 0;
	}
	if (session_request_decode(in.data, in.len, &q, &bad) == 0) {
		if (q.kind == SESSION_SIGNAL && x && in.n == 0) {
			signal_exec(s, x, q.signo);
		} else if (!c->exec && (session_policy_kind(q.kind) ||
					session_policy_asked(s->policy, c->fd))) {
			/* 1: the client stays (it is asked); 0: answered */
			out = session_policy_request(s->policy, c->fd, &q, in.n, &bad, e);
			if (out == 0)
				drop_client(s, c), c = NULL;
			out = out > 0 ? 0 : out;
		} else if (q.kind == SESSION_EXEC && !c->exec && in.n == 3) {
			if (start_exec(s, c, &q, fds, &bad) < 0)
				out = -1;
		} else if (q.kind == SESSION_INFO && !c->exec) {
			info(s, c->fd);
			drop_client(s, c);
			c = NULL;
		} else if (q.kind == SESSION_STOP && !c->exec) {
			s->end_reason = "stop";
			s->stopper = c->fd;
		} else if ((q.kind == SESSION_PORT || q.kind == SESSION_PORT_CLOSE) && !c->exec) {
			struct msg a;
			out = session_ports_request(s->ports, &q, &a, e) < 0 ? -2 : 0;
			reply(c->fd, a.type, a.value, 0, a.text);
			drop_client(s, c);
			c = NULL;
		} else {
			ab_fail(&bad, EPROTO, "a request this connection cannot make");
			out = -1;
		}
		session_request_free(&q);
	} else {
		out = -1;
	}
	for (size_t i = 0; i < in.n; i++)
		close(fds[i]);
	if (out == -2)
		return -1;
	if (out < 0 && c) {
		struct ucred uc = {0};
		socklen_t len = sizeof(uc);
		reply(c->fd, SESSION_REPLY_ERROR, bad.errnum, 0, bad.msg);
		if (x)
			signal_exec(s, x, SIGKILL);
		if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
			uc = (struct ucred){0}; /* the event says uid 0, pid 0: unknown */
		drop_client(s, c);
		return audit_refused(s, &uc, REFUSAL_BAD_REQUEST, bad.msg[0] ? bad.msg : NULL, e);
	}
	return 0;
}

/* ---------- deadlines ---------- */

static int limit_event(struct serve *s, const char *limit, uint64_t ms, long exec, struct ab_err *e)
{
	struct json *j = audit_begin(s->a, "limit");

	json_kv_str(j, "limit", limit);
	json_kv_uint(j, "timeout_ms", ms);
	if (exec > 0)
		json_kv_uint(j, "exec", (uint64_t)exec);
	return audit_emit(s->a, e);
}

/* Fires what is due; returns the ms until the next deadline, or -1 for none. */
static int deadlines(struct serve *s, struct ab_err *e)
{
	const struct limits *l = &s->r->p->limits;
	uint64_t now = now_ms(), next = UINT64_MAX;

	if (session_refusals_due(&s->refusals, now) &&
	    session_refusals_flush(&s->refusals, s->a, e) < 0)
		return -2;
	if (s->refusals.start)
		next = s->refusals.start + SESSION_REFUSAL_WINDOW_MS;
	for (size_t i = 0; i < s->n_execs; i++) {
		struct exec *x = &s->execs[i];
		if (!x->deadline || x->timeout_stage >= 2)
			continue;
		if (x->deadline <= now) {
			if (x->timeout_stage == 0 &&
			    limit_event(s, "timeout", x->timeout_ms, x->id, e) < 0)
				return -2;
			signal_exec(s, x, x->timeout_stage == 0 ? SIGTERM : SIGKILL);
			x->deadline = ++x->timeout_stage < 2 ? now + SANDBOX_KILL_GRACE_MS : 0;
		}
		if (x->deadline && x->deadline < next)
			next = x->deadline;
	}
	if (l->session_timeout_ms) {
		if (s->t0 + l->session_timeout_ms <= now) {
			s->end_reason = "session-timeout";
			return limit_event(s, "session-timeout", l->session_timeout_ms, 0, e) < 0
				   ? -2
				   : 0;
		}
		if (s->t0 + l->session_timeout_ms < next)
			next = s->t0 + l->session_timeout_ms;
	}
	/* a forwarded connection keeps the session busy as an exec does */
	s->last_active = session_ports_active(s->ports, now, s->last_active);
	if (l->idle_timeout_ms && s->n_execs == 0) {
		if (s->last_active + l->idle_timeout_ms <= now) {
			s->end_reason = "idle-timeout";
			return limit_event(s, "idle-timeout", l->idle_timeout_ms, 0, e) < 0 ? -2
											    : 0;
		}
		if (s->last_active + l->idle_timeout_ms < next)
			next = s->last_active + l->idle_timeout_ms;
	}
	return next == UINT64_MAX ? -1 : (int)(next - now > 60000 ? 60000 : next - now);
}

/* ---------- the loop ---------- */

static void on_signal(struct serve *s)
{
	struct signalfd_siginfo si;
	int status;

	if (read(s->r->sigfd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGCHLD) {
		if (waitpid(s->r->pid1, &status, WNOHANG) == s->r->pid1) {
			s->pid1_reaped = true;
			s->end_reason = "sandbox-ended";
		}
		return;
	}
	if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP ||
	    si.ssi_signo == SIGQUIT)
		s->end_reason = "signal";
}

/* One round: -1 when the session must end with an error (e set). */
static int round_trip(struct serve *s, struct ab_err *e)
{
	struct pollfd pfd[FIXED_FDS + MAX_CLIENTS];
	int fds[MAX_CLIENTS];
	struct run *r = s->r;
	size_t n = FIXED_FDS, nc = s->n_clients;
	int timeout = deadlines(s, e);

	if (timeout == -2 || s->end_reason)
		return timeout == -2 ? -1 : 0;
	pfd[SLOT_SIGNALS] = (struct pollfd){r->sigfd, POLLIN, 0};
	pfd[SLOT_PID1] = (struct pollfd){r->sock[0], POLLIN, 0};
	pfd[SLOT_LISTENER] = (struct pollfd){s->lfd, POLLIN, 0};
	pfd[SLOT_FILTER] =
	    (struct pollfd){r->monitor ? seccomp_monitor_fd(r->monitor) : -1, POLLIN, 0};
	pfd[SLOT_PROXY] = (struct pollfd){r->proxy ? proxy_fd(r->proxy) : -1, POLLIN, 0};
	pfd[SLOT_DISK] = (struct pollfd){r->disk ? disk_limit_fd(r->disk) : -1, POLLIN, 0};
	pfd[SLOT_PROTECT] = (struct pollfd){r->watch ? protect_watch_fd(r->watch) : -1, POLLIN, 0};
	pfd[SLOT_PORTS] = (struct pollfd){session_ports_fd(s->ports), POLLIN, 0};
	for (size_t i = 0; i < nc; i++) {
		fds[i] = s->clients[i].fd;
		pfd[n++] = (struct pollfd){fds[i], POLLIN, 0};
	}
	if (poll(pfd, n, timeout) < 0)
		return errno == EINTR ? 0 : ab_fail(e, errno, "poll");
	if (pfd[SLOT_SIGNALS].revents & POLLIN)
		on_signal(s);
	/* pid 1's messages first, all of them: an exec's root pid is known before any
	 * notification its processes can cause, since it was sent before the exec */
	if (pfd[SLOT_PID1].revents & (POLLIN | POLLHUP | POLLERR)) {
		while (poll(&(struct pollfd){r->sock[0], POLLIN, 0}, 1, 0) == 1) {
			int rc = on_pid1(s, e);
			if (rc == -2)
				return -1;
			if (rc < 0) {
				s->end_reason = s->end_reason ? s->end_reason : "sandbox-ended";
				break;
			}
		}
	}
	if ((pfd[SLOT_FILTER].revents & POLLIN) && seccomp_monitor_handle(r->monitor, s->a, e) < 0)
		return -1;
	if ((pfd[SLOT_PROXY].revents & POLLIN) && proxy_dispatch(r->proxy, e) < 0)
		return -1;
	if ((pfd[SLOT_PORTS].revents & POLLIN) && session_ports_dispatch(s->ports, e) < 0)
		return -1;
	if ((pfd[SLOT_DISK].revents & POLLIN) && supervise_disk_tick(r, &s->disk_full, s->a, e) < 0)
		return -1;
	if (s->disk_full)
		s->end_reason = "disk";
	if ((pfd[SLOT_PROTECT].revents & POLLIN) && protect_watch_check(r->watch, s->a, e) < 0)
		return -1; /* a protected path appeared: the session ends (e.cause) */
	for (size_t i = 0; i < nc; i++) {
		struct client *c;
		if (!(pfd[FIXED_FDS + i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if ((c = find_client(s, fds[i])) && on_client(s, c, e) < 0)
			return -1;
	}
	if ((pfd[SLOT_LISTENER].revents & POLLIN) && on_accept(s, e) < 0)
		return -1;
	return 0;
}

static int audit_session(struct serve *s, const char *action, struct ab_err *e)
{
	struct json *j = audit_begin(s->a, "session");

	json_kv_str(j, "action", action);
	if (!strcmp(action, "start")) {
		json_kv_str(j, "socket", s->path);
		json_kv_str(j, "changes", s->r->changes);
	} else {
		json_kv_str(j, "reason", s->end_reason);
		json_kv_uint(j, "execs", s->next_id);
		json_kv_uint(j, "duration_ms", now_ms() - s->t0);
	}
	return audit_emit(s->a, e);
}

/* Everything goes: pid 1 and with it the pid namespace, then the record is closed. */
static _Noreturn void end_session(struct serve *s, struct ab_err *e)
{
	struct sandbox_result res = {.cause = "session-end", .limit = NULL};
	int rc = e->msg[0] ? -1 : 0;

	unlink(s->path); /* no new client from now on */
	close(s->lfd);
	/* before the sandbox goes: their connections are cut by the session, not by the servers */
	if (session_ports_free(s->ports, e) < 0)
		rc = -1;
	if (session_policy_end(s->policy, rc < 0 ? &(struct ab_err){0} : e) < 0)
		rc = -1;
	if (!s->pid1_reaped)
		supervise_kill(s->r);
	/* commands still running died with the namespace */
	while (s->n_execs) {
		struct exec *x = &s->execs[0];
		struct sandbox_result xr = {.status = 128 + SIGKILL,
					    .cause = "session-ended",
					    .code = SIGKILL,
					    .duration_ms = now_ms() - x->t0};
		if (audit_exec(s, x, &xr, e) < 0)
			rc = -1;
		if (x->client >= 0) {
			struct client *c = find_client(s, x->client);
			reply_exit(s, x, &xr);
			if (c)
				drop_client(s, c);
		}
		free_exec(s, x);
	}
	if (rc < 0) {
		struct ab_err ignored;
		json_kv_str(audit_begin(s->a, "error"), "message", e->msg);
		audit_emit(s->a, &ignored);
	}
	/* what appeared last, before the watch goes (a refusal now still ends it as one) */
	if (s->r->watch) {
		struct ab_err late = {0};
		if (protect_watch_settle(s->r->watch, s->a, rc < 0 ? &late : e) < 0 && rc == 0) {
			rc = -1;
			s->end_reason = e->cause ? e->cause : "error";
		}
	}
	if (session_refusals_flush(&s->refusals, s->a, e) < 0 ||
	    (s->r->monitor && seccomp_monitor_flush(s->r->monitor, s->a, e) < 0) ||
	    sandbox_save_changes(s->r, s->a, e) < 0 || audit_session(s, "end", e) < 0)
		rc = -1;
	if (!strcmp(s->end_reason, "session-timeout") || !strcmp(s->end_reason, "idle-timeout") ||
	    !strcmp(s->end_reason, "disk"))
		res.limit = s->end_reason;
	res.duration_ms = now_ms() - s->t0;
	if (run_audit_exit(s->a, &res, rc < 0 ? 125 : 0, e) < 0)
		rc = -1;
	audit_close(s->a);
	/* stopped means released too: the changes' lock, the protect watch, the cgroup */
	sandbox_close(s->r);
	/* after the proxy, whose events named its rules until it stopped */
	session_policy_free(s->policy);
	s->policy = NULL;
	if (s->stopper >= 0)
		reply(s->stopper, SESSION_REPLY_STOPPED, rc < 0 ? 125 : 0, 0, NULL);
	while (s->n_clients)
		drop_client(s, &s->clients[0]);
	_exit(rc < 0 ? 125 : 0);
}

_Noreturn void session_serve(const struct policy *p, struct audit *a,
			     const struct mount_protect *protect, int lfd, const char *path,
			     int report)
{
	static struct run r;
	static struct serve s;
	struct ab_err e = {0};
	time_t wall = time(NULL);
	struct tm tm;
	ssize_t n;

	sandbox_init(&r, p);
	r.session = true;
	s = (struct serve){.r = &r, .a = a, .lfd = lfd, .path = path, .stopper = -1};
	n = readlink("/proc/self/ns/pid", s.ns, sizeof(s.ns) - 1);
	if (n <= 0 || !(s.buf = malloc(SESSION_MAX_REQUEST))) {
		ab_fail(&e, errno, "cannot read this process's pid namespace");
		goto failed;
	}
	s.ns[n] = '\0';
	if (!(s.ports = session_ports_new(&r, a, s.ns, &s.refusals, path, &e)))
		goto failed;
	if (sandbox_start(&r, a, protect, &e) < 0 || !(s.policy = session_policy_new(&r, a, &e)))
		goto failed;
	if (r.monitor)
		seccomp_monitor_attribute(r.monitor, attribute_refusal, &s);
	if (r.proxy)
		proxy_attribute(r.proxy, r.pid1, attribute_connection, &s);
	s.t0 = s.last_active = now_ms();
	gmtime_r(&wall, &tm);
	strftime(s.started, sizeof(s.started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (audit_session(&s, "start", &e) < 0) {
		s.end_reason = "error";
		session_report(report, NULL, &e);
		close(report);
		end_session(&s, &e);
	}
	session_report(report, r.changes, NULL);
	close(report);
	while (!s.end_reason)
		if (round_trip(&s, &e) < 0 && !s.end_reason)
			s.end_reason = e.cause ? e.cause : "error";
	end_session(&s, &e);
failed:
	session_report(report, NULL, &e);
	run_audit_failed(a, &e);
	audit_close(a);
	unlink(path);
	sandbox_close(&r);
	_exit(125);
}

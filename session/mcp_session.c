/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The session an MCP server owns (see include/mcp_session.h). Everything it does to the session
 * goes through this binary's own subcommands (session start, session stop, --explain), so the
 * server has no second copy of how a session is built or ended. */
#include "mcp_session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* This binary, by the path the kernel (or valgrind, which emulates the link) gives: a
 * path execs the same way under a memory checker. */
static char self[PATH_MAX];
#define MAX_ARGS 256		/* the options given to mcp */
#define MAX_ARGV (MAX_ARGS + 8) /* with the subcommand's own words */
#define POLICY_CAP (4u << 20)	/* the --explain text */
#define LINE_CAP (256u << 10)	/* one line of the trail; longer ones are not tallied */

int mcp_buf_read(struct mcp_buf *b, int fd)
{
	char chunk[16384];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -1;
	if (n == 0)
		return 0;
	size_t keep = b->cap - b->len < (size_t)n ? b->cap - b->len : (size_t)n;
	if (keep && !b->buf && !(b->buf = malloc(b->cap + 1)))
		keep = 0;
	if (keep)
		memcpy(b->buf + b->len, chunk, keep);
	b->len += keep;
	b->dropped += (uint64_t)n - keep;
	return 1;
}

/* The session's supervisor lowers a longer timeout to the profile's: the run tool asks for no
 * more, so that its description and results say what applies. */
uint64_t mcp_session_run_limit(const struct mcp_session *s)
{
	int64_t v;

	if (!jnode_int(jnode_get(jnode_get(&s->policy, "limits"), "timeout_ms"), 1, INT64_MAX, &v))
		return 0;
	return (uint64_t)v;
}

/* ---------- the trail ---------- */

static void tally_syscall(struct mcp_tally *t, const char *name, uint64_t count)
{
	size_t i;

	t->syscalls += count;
	for (i = 0; i < MCP_TALLY_NAMES && t->names[i].name[0]; i++)
		if (!strcmp(t->names[i].name, name))
			break;
	if (i == MCP_TALLY_NAMES)
		return; /* the total still counts it */
	if (!t->names[i].name[0])
		snprintf(t->names[i].name, sizeof(t->names[i].name), "%s", name);
	t->names[i].n += count;
}

static bool of_exec(const struct jnode *ev, unsigned long exec)
{
	int64_t v;

	return exec && jnode_int(jnode_get(ev, "exec"), 1, INT64_MAX, &v) && (uint64_t)v == exec;
}

static void tally_event(struct mcp_session *s, const struct jnode *ev)
{
	const char *event = jnode_str(ev, "event"), *run = jnode_str(ev, "run");
	const char *decision = jnode_str(ev, "decision");
	struct mcp_tally *t = &s->tally;
	bool running = t->exec && !t->done;
	int64_t count = 1;

	if (!event || !run || strcmp(run, s->id))
		return; /* another run's, in a shared file */
	if (!strcmp(event, "exit"))
		s->ended = true;
	if (!strcmp(event, "syscall") && of_exec(ev, t->exec)) {
		(void)jnode_int(jnode_get(ev, "count"), 0, INT64_MAX, &count);
		tally_syscall(t, jnode_str(ev, "name") ? jnode_str(ev, "name") : "?",
			      (uint64_t)count);
	} else if (!strcmp(event, "limit") && of_exec(ev, t->exec) && jnode_str(ev, "limit")) {
		snprintf(t->limit, sizeof(t->limit), "%s", jnode_str(ev, "limit"));
	} else if (!strcmp(event, "exec") && of_exec(ev, t->exec)) {
		t->done = true;
	} else if (decision && !strcmp(decision, "deny")) {
		/* net and http events name the exec whose process held the connection (null when
		 * it could not be placed); a dns event names none, so it counts by time */
		if (!strcmp(event, "net") && of_exec(ev, t->exec))
			t->net_denied++;
		else if (!strcmp(event, "http") && of_exec(ev, t->exec))
			t->http_denied++;
		else if (!strcmp(event, "dns") && running)
			t->dns_denied++;
	}
}

static void tally_line(struct mcp_session *s, const char *line, size_t len)
{
	struct ab_err ignored;
	struct jnode ev;

	if (json_read(line, len, &ev, &ignored) < 0)
		return;
	tally_event(s, &ev);
	jnode_free(&ev);
}

/* Splits what came into lines; a line past LINE_CAP is skipped whole. */
static void audit_chunk(struct mcp_session *s, const char *p, size_t n)
{
	struct mcp_buf *l = &s->line;

	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t part = nl ? (size_t)(nl - p) : n;
		if (!s->line_skip && l->cap - l->len >= part) {
			if (!l->buf && !(l->buf = malloc(l->cap + 1)))
				s->line_skip = true;
			else
				memcpy(l->buf + l->len, p, part), l->len += part;
		} else {
			s->line_skip = true;
		}
		if (!nl)
			return;
		if (!s->line_skip)
			tally_line(s, l->buf, l->len);
		l->len = 0;
		s->line_skip = false;
		p += part + 1;
		n -= part + 1;
	}
}

void mcp_session_audit_then(struct mcp_session *s, void (*before)(void *), void *arg)
{
	char chunk[16384];

	if (s->audit_fd < 0)
		return;
	for (;;) {
		ssize_t n = read(s->audit_fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 && s->audit_pipe) { /* the session closed its end */
				close(s->audit_fd);
				s->audit_fd = -1;
			}
			return;
		}
		if (before)
			before(arg);
		audit_chunk(s, chunk, (size_t)n);
	}
}

void mcp_session_audit(struct mcp_session *s)
{
	mcp_session_audit_then(s, NULL, NULL);
}

void mcp_session_tally(struct mcp_session *s, unsigned long exec)
{
	s->tally = (struct mcp_tally){.exec = exec};
}

/* ---------- running this binary ---------- */

static _Noreturn void child(const char *const *args, int out, int err, int keep_fd)
{
	const char *argv[MAX_ARGV + 2] = {"agentbox"};
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	size_t n = 0;

	while (args[n] && n < MAX_ARGV)
		argv[n + 1] = args[n], n++;
	if (null < 0 || dup2(null, 0) < 0 || (out >= 0 && dup2(out, 1) < 0) ||
	    (err >= 0 && dup2(err, 2) < 0) || (keep_fd >= 0 && fcntl(keep_fd, F_SETFD, 0) < 0))
		_exit(125);
	execv(self, (char *const *)argv);
	_exit(127);
}

/* Reads the child's output and the trail until both outputs end. */
static void pump(struct mcp_session *s, int out, struct mcp_buf *ob, int err, struct mcp_buf *eb)
{
	while (out >= 0 || err >= 0) {
		struct pollfd p[3] = {{out, POLLIN, 0},
				      {err, POLLIN, 0},
				      {s->audit_pipe ? s->audit_fd : -1, POLLIN, 0}};
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[2].revents)
			mcp_session_audit(s);
		if (p[0].revents && mcp_buf_read(ob, out) <= 0)
			close(out), out = -1;
		if (p[1].revents && mcp_buf_read(eb, err) <= 0)
			close(err), err = -1;
	}
}

int mcp_self(struct mcp_session *s, const char *const *args, struct mcp_buf *out,
	     struct mcp_buf *err, int keep_fd, int *status, struct ab_err *e)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, ws;
	pid_t pid;

	if ((out && pipe2(po, O_CLOEXEC) < 0) || (err && pipe2(pe, O_CLOEXEC) < 0)) {
		ab_fail(e, errno, "pipe");
		goto fail;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		ab_fail(e, errno, "fork");
		goto fail;
	}
	if (pid == 0)
		child(args, po[1], pe[1], keep_fd);
	if (po[1] >= 0)
		close(po[1]);
	if (pe[1] >= 0)
		close(pe[1]);
	pump(s, po[0], out, pe[0], err);
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return ab_fail(e, errno, "waitpid");
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	return -1;
}

/* ---------- starting ---------- */

static int load_policy(struct mcp_session *s, char **opts, int n, struct ab_err *e)
{
	const char *args[MAX_ARGS + 2] = {"--explain"};
	struct mcp_buf out = {.cap = POLICY_CAP};
	int status, rc;

	for (int i = 0; i < n; i++)
		args[i + 1] = opts[i];
	args[n + 1] = NULL;
	rc = mcp_self(s, args, &out, NULL, -1, &status, e);
	if (rc == 0 && (status != 0 || out.dropped))
		rc = ab_fail(e, 0, "the profile and options were refused (above)");
	if (rc == 0 && json_read(out.buf, out.len, &s->policy, e) < 0)
		rc = ab_context(e, "agentbox --explain");
	free(out.buf);
	return rc;
}

/* Where the trail goes: back here through a pipe (no [audit] file), or the profile's file,
 * which the server reads from its current end, keeping the session's lines. */
static int open_trail(struct mcp_session *s, int *wfd, struct ab_err *e)
{
	const char *file = jnode_str(jnode_get(&s->policy, "audit"), "file");
	int fds[2];

	*wfd = -1;
	if (!file) {
		if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
			return ab_fail(e, errno, "pipe");
		s->audit_fd = fds[0];
		s->audit_pipe = true;
		*wfd = fds[1];
		/* the session writes it blocking: a full pipe waits for this server to read */
		return fcntl(fds[1], F_SETFL, 0) < 0 ? ab_fail(e, errno, "fcntl") : 0;
	}
	if (!strcmp(file, "-"))
		return ab_fail(e, 0,
			       "the audit trail cannot go to stdout: it carries the MCP "
			       "messages"),
		       ab_hint(e, "set [audit] file to a file, or leave it unset");
	if (!strncmp(file, "fd:", 3)) {
		s->audit_off = true;
		return 0;
	}
	s->audit_fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (s->audit_fd >= 0 && lseek(s->audit_fd, 0, SEEK_END) < 0)
		return ab_fail(e, errno, "%s", file);
	return 0;
}

static int parse_started(struct mcp_session *s, const struct mcp_buf *out, struct ab_err *e)
{
	struct jnode j;
	const char *id, *changes;

	if (!out->buf || json_read(out->buf, out->len, &j, e) < 0)
		return ab_fail(e, 0, "session start printed no id");
	id = jnode_str(&j, "id");
	changes = jnode_str(&j, "changes");
	if (!id || !session_id_valid(id)) {
		jnode_free(&j);
		return ab_fail(e, 0, "session start printed no id");
	}
	memcpy(s->id, id, SESSION_ID_LEN + 1);
	if (changes && !(s->changes = strdup(changes))) {
		jnode_free(&j);
		return ab_fail(e, ENOMEM, "session");
	}
	jnode_free(&j);
	return 0;
}

static int start_session(struct mcp_session *s, char **opts, int n, int wfd, struct ab_err *e)
{
	const char *args[MAX_ARGV] = {"session", "start", "--json"};
	struct mcp_buf out = {.cap = 64 * 1024};
	char fdarg[32];
	int k = 3, status, rc;

	if (wfd >= 0) {
		snprintf(fdarg, sizeof(fdarg), "fd:%d", wfd);
		args[k++] = "--audit";
		args[k++] = fdarg;
	}
	for (int i = 0; i < n; i++)
		args[k++] = opts[i];
	args[k] = NULL;
	rc = mcp_self(s, args, &out, NULL, wfd, &status, e);
	if (rc == 0 && status != 0)
		rc = ab_fail(e, 0, "the session did not start (above)");
	if (rc == 0)
		rc = parse_started(s, &out, e);
	free(out.buf);
	return rc;
}

/* The watcher: a process of its own session (a kill of this server's group spares it) that
 * waits for the server's end of a pipe to close, however the server ended, then stops the
 * session. It keeps no other fd: the client waiting for the server's output to end must not
 * wait for it. */
static _Noreturn void watcher(int rfd, const char *id)
{
	const char *args[] = {"session", "stop", id, NULL};
	int null;
	char c;

	if (setsid() < 0 || dup2(rfd, 3) < 0)
		_exit(1);
	if (syscall(SYS_close_range, 4, ~0U, 0) < 0)
		for (int fd = 4; fd < 65536; fd++)
			close(fd);
	/* stdin too: a client reading and writing one socket must see it closed when we end */
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 || dup2(null, 0) < 0 ||
	    dup2(null, 1) < 0 || dup2(null, 2) < 0)
		_exit(1);
	for (;;) {
		ssize_t n = read(3, &c, 1);
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	close(3);
	child(args, -1, -1, -1);
}

static int start_watcher(struct mcp_session *s, struct ab_err *e)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return ab_fail(e, errno, "pipe");
	fflush(NULL);
	if ((s->watcher = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return ab_fail(e, errno, "fork");
	}
	if (s->watcher == 0)
		watcher(fds[0], s->id);
	close(fds[0]);
	s->watch = fds[1];
	return 0;
}

/* What the server holds of the session: the trail, the policy. */
static void release(struct mcp_session *s)
{
	if (s->audit_fd >= 0)
		close(s->audit_fd);
	s->audit_fd = -1;
	free(s->line.buf);
	free(s->changes);
	jnode_free(&s->policy);
	s->line.buf = s->changes = NULL;
}

int mcp_session_start(struct mcp_session *s, char **opts, int n, struct ab_err *e)
{
	int wfd = -1, rc;

	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	*s = (struct mcp_session){.audit_fd = -1, .watch = -1, .line = {.cap = LINE_CAP}};
	if (len <= 0 || (size_t)len >= sizeof(self) - 1)
		return ab_fail(e, len < 0 ? errno : ENAMETOOLONG, "/proc/self/exe");
	self[len] = '\0';
	if (n > MAX_ARGS)
		return ab_fail(e, E2BIG, "too many options");
	rc = load_policy(s, opts, n, e);
	if (rc == 0)
		rc = open_trail(s, &wfd, e);
	if (rc == 0)
		rc = start_session(s, opts, n, wfd, e);
	if (wfd >= 0)
		close(wfd);
	if (rc < 0) {
		release(s);
		return -1;
	}
	/* a file the session created: read it from the start, keeping this session's lines */
	if (!s->audit_pipe && !s->audit_off && s->audit_fd < 0) {
		const char *file = jnode_str(jnode_get(&s->policy, "audit"), "file");
		s->audit_fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	}
	if (start_watcher(s, e) < 0) {
		const char *args[] = {"session", "stop", s->id, NULL};
		int status;
		(void)mcp_self(s, args, NULL, NULL, -1, &status, &(struct ab_err){0});
		release(s);
		return -1;
	}
	return 0;
}

void mcp_session_stop(struct mcp_session *s)
{
	int ws;

	if (s->watch >= 0) {
		close(s->watch);
		s->watch = -1;
	}
	/* the stop writes the session's last events: keep reading them, or it would wait */
	while (s->watcher > 0) {
		pid_t r = waitpid(s->watcher, &ws, WNOHANG);
		if (r == s->watcher || (r < 0 && errno != EINTR))
			break;
		struct pollfd p = {s->audit_pipe ? s->audit_fd : -1, POLLIN, 0};
		if (poll(&p, 1, 50) > 0)
			mcp_session_audit(s);
	}
	s->watcher = 0;
	mcp_session_audit(s);
	release(s);
}

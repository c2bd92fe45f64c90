/* `agentbox exec` (see include/exec_client.h). */
#include "exec_client.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "channel.h"
#include "result.h"
#include "sandbox.h"
#include "session.h"
#include "session_proto.h"
#include "units.h"

static int usage(struct ab_err *e)
{
	return ab_fail(e, 0,
		       "usage: agentbox exec SESSION [--cwd DIR] [--env NAME=VALUE] "
		       "[--timeout DURATION] [--result DEST [--json]] -- COMMAND [ARG...]");
}

/* --result DEST, and --json, which only says what --result writes anyway */
struct exec_opts {
	const char *result;
	bool json;
};

static int parse(int argc, char **argv, struct session_request *q, struct exec_opts *o,
		 struct ab_err *e)
{
	int i = 3;

	q->kind = SESSION_EXEC;
	/* every option but --json takes a value: two words at a time */
	while (i < argc && strcmp(argv[i], "--")) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(opt, "--json")) {
			o->json = true;
			i++;
			continue;
		}
		if (!val || opt[0] != '-')
			break;
		i += 2;
		if (!strcmp(opt, "--result")) {
			if (o->result)
				return ab_fail(e, 0, "--result given twice");
			o->result = val;
		} else if (!strcmp(opt, "--cwd")) {
			free(q->cwd);
			if (!(q->cwd = strdup(val)))
				return ab_fail(e, ENOMEM, "options");
		} else if (!strcmp(opt, "--env")) {
			if (!strchr(val, '=') || val[0] == '=')
				return ab_fail(e, 0, "--env %s: not NAME=VALUE", val);
			if (strv_push(&q->env, val) < 0)
				return ab_fail(e, ENOMEM, "options");
		} else if (!strcmp(opt, "--timeout")) {
			if (parse_duration_ms(val, &q->timeout_ms, e) < 0)
				return ab_context(e, "--timeout");
		} else {
			return ab_fail(e, 0, "option %s is unknown", opt),
			       ab_hint(e, "see agentbox --help");
		}
	}
	if (o->json && !o->result)
		return ab_fail(e, 0, "--json needs --result DEST: where the JSON goes"),
		       ab_hint(e, "e.g. --result fd:3 3>result.json (stdout is the command's)");
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc)
		return ab_fail(e, 0, "no command given"),
		       ab_hint(e, "agentbox exec SESSION -- COMMAND [ARG...]");
	for (; i < argc; i++)
		if (strv_push(&q->argv, argv[i]) < 0)
			return ab_fail(e, ENOMEM, "command");
	return 0;
}

static int send_request(int fd, const struct session_request *q, const int *fds, size_t n,
			struct ab_err *e)
{
	struct msg m = {.type = 0};
	char *buf;
	size_t len;
	int rc;

	if (session_request_encode(q, &buf, &len, e) < 0)
		return -1;
	rc = channel_send_data(fd, &m, buf, len, fds, n);
	free(buf);
	return rc < 0 ? ab_fail(e, errno, "the session did not take the command") : 0;
}

/* A signal before the session said the command started: nothing to forward it to yet, and the
 * session may not answer at all (stopped, wedged), so the signal does what it would do to any
 * program: SIGWINCH nothing (the command starts with the terminal's size as it is then), the
 * others end this process. The session sees the hang-up and ends the command if it was about
 * to start. */
static void before_start(int signo, const sigset_t *old)
{
	if (signo == SIGWINCH)
		return;
	if (signal(signo, SIG_DFL) != SIG_ERR && sigprocmask(SIG_SETMASK, old, NULL) == 0)
		(void)raise(signo); /* does not return: the default action of these ends us */
	_exit(128 + signo);
}

/* The object from EXIT alone (status and cause), through the shared outcome fields. */
static void fallback_result(int status, const char *cause, char *out)
{
	struct sandbox_result res = {.status = status, .cause = cause};
	struct json j;

	if (!strcmp(cause, "exited"))
		res.code = status;
	else if (status > 128)
		res.code = status - 128;
	json_init(&j);
	json_obj_begin(&j);
	json_kv_int(&j, "v", RESULT_VERSION);
	result_outcome(&j, status, &res, NULL);
	json_kv_str(&j, "error",
		    "the session's supervisor predates --result: only status and "
		    "cause are known");
	json_obj_end(&j);
	snprintf(out, AB_ERR_MAX, "%s", json_text(&j) ? json_text(&j) : "");
	json_free(&j);
}

/* Until the command's status comes: the signals this process gets go on to the command.
 * result: the exec's --result object when the session sent one, "" otherwise. */
static int wait_exit(int fd, int sigfd, const sigset_t *old, char *result, struct ab_err *e)
{
	struct pollfd pfd[2] = {{fd, POLLIN, 0}, {sigfd, POLLIN, 0}};
	bool started = false;

	for (;;) {
		struct signalfd_siginfo si;
		struct msg m;
		int rc;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return ab_fail(e, errno, "poll");
		}
		if ((pfd[1].revents & POLLIN) && read(sigfd, &si, sizeof(si)) == sizeof(si)) {
			struct session_request q = {.kind = SESSION_SIGNAL,
						    .signo = (int)si.ssi_signo};
			if (!started)
				before_start((int)si.ssi_signo, old);
			else if (send_request(fd, &q, NULL, 0, e) < 0)
				return -1;
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		rc = channel_recv(fd, &m);
		if (rc <= 0) {
			ab_fail(e, rc < 0 ? errno : EPIPE,
				"the session ended before telling the command's status");
			/* the command ran (or was starting): not a setup error */
			e->cause = started ? "session-ended" : NULL;
			return -1;
		}
		if (m.type == SESSION_REPLY_ERROR)
			return ab_fail(e, 0, "the session refused the command: %s", m.text),
			       e->errnum = m.value, -1;
		if (m.type == SESSION_REPLY_RESULT)
			snprintf(result, AB_ERR_MAX, "%s", m.text);
		if (m.type == SESSION_REPLY_EXIT) {
			if (!result[0]) /* a supervisor from before --result: status and cause */
				fallback_result(m.value, m.text, result);
			return m.value;
		}
		if (m.type == SESSION_REPLY_STARTED)
			started = true;
	}
}

/* The object for an exec that failed: before the session said anything of its command, or
 * (cause session-ended) when the session went away while it ran. */
static int setup_error_result(int rfd, const struct ab_err *err, struct ab_err *e)
{
	struct json j;
	int rc;

	json_init(&j);
	json_obj_begin(&j);
	json_kv_int(&j, "v", RESULT_VERSION);
	result_outcome(&j, 125, NULL, err->cause);
	json_key(&j, "denials");
	json_obj_begin(&j);
	json_obj_end(&j);
	json_kv_str(&j, "error", err->msg);
	json_obj_end(&j);
	rc = result_write(rfd, json_text(&j), e);
	json_free(&j);
	return rc;
}

int exec_command(int argc, char **argv, struct ab_err *e)
{
	static const int stdio[3] = {0, 1, 2};
	struct session_request q = {0};
	struct exec_opts o = {0};
	char result[AB_ERR_MAX] = "";
	sigset_t set, old;
	int fd = -1, sigfd = -1, rfd = -1, rc = -1;

	if (argc < 3)
		return usage(e), 125;
	sigemptyset(&set);
	for (size_t i = 0; i < SANDBOX_N_FORWARDED; i++)
		sigaddset(&set, sandbox_forwarded[i]);
	if (parse(argc, argv, &q, &o, e) < 0 || (o.result && (rfd = result_open(o.result, e)) < 0))
		goto out;
	if ((fd = session_connect(argv[2], e)) < 0)
		goto out;
	/* blocked before the request: a signal from now on reaches the command */
	if (sigprocmask(SIG_BLOCK, &set, &old) < 0 ||
	    (sigfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0) {
		ab_fail(e, errno, "signalfd");
		goto out;
	}
	/* a refusing supervisor may close before the request is sent: its reply is queued */
	if (send_request(fd, &q, stdio, 3, e) == 0 || e->errnum == EPIPE ||
	    e->errnum == ECONNRESET) {
		struct ab_err sent = *e;
		*e = (struct ab_err){0};
		rc = wait_exit(fd, sigfd, &old, result, e);
		if (rc < 0 && sent.msg[0] && e->errnum == EPIPE)
			*e = sent;
	}
out:
	session_request_free(&q);
	if (fd >= 0)
		close(fd);
	if (sigfd >= 0)
		close(sigfd);
	if (rfd >= 0) {
		struct ab_err we = {0};
		if (rc < 0)
			setup_error_result(rfd, e, &we);
		else if (result_write(rfd, result, &we) < 0) {
			/* a result that cannot be written fails a clean exec, as for a run */
			fprintf(stderr, "agentbox: %s\n", we.msg);
			return rc == 0 ? 125 : rc;
		}
	}
	return rc < 0 ? 125 : rc;
}

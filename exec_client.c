/* `agentbox exec` (see include/exec_client.h). */
#include "exec_client.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "channel.h"
#include "sandbox.h"
#include "session.h"
#include "session_proto.h"
#include "units.h"

static int usage(struct ab_err *e)
{
	return ab_fail(e, 0,
		       "usage: agentbox exec SESSION [--cwd DIR] [--env NAME=VALUE] "
		       "[--timeout DURATION] -- COMMAND [ARG...]");
}

static int parse(int argc, char **argv, struct session_request *q, struct ab_err *e)
{
	int i = 3;

	q->kind = SESSION_EXEC;
	/* each option takes a value: two words at a time */
	for (; i < argc && strcmp(argv[i], "--"); i += 2) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!val || opt[0] != '-')
			break;
		if (!strcmp(opt, "--cwd")) {
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

/* Until the command's status comes: the signals this process gets go on to the command. */
static int wait_exit(int fd, int sigfd, const sigset_t *old, struct ab_err *e)
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
		if (rc <= 0)
			return ab_fail(e, rc < 0 ? errno : EPIPE,
				       "the session ended before telling the command's status");
		if (m.type == SESSION_REPLY_ERROR)
			return ab_fail(e, 0, "the session refused the command: %s", m.text),
			       e->errnum = m.value, -1;
		if (m.type == SESSION_REPLY_EXIT)
			return m.value;
		if (m.type == SESSION_REPLY_STARTED)
			started = true;
	}
}

int exec_command(int argc, char **argv, struct ab_err *e)
{
	static const int stdio[3] = {0, 1, 2};
	struct session_request q = {0};
	sigset_t set, old;
	int fd = -1, sigfd = -1, rc = -1;

	if (argc < 3)
		return usage(e), 125;
	sigemptyset(&set);
	for (size_t i = 0; i < SANDBOX_N_FORWARDED; i++)
		sigaddset(&set, sandbox_forwarded[i]);
	if (parse(argc, argv, &q, e) < 0 || (fd = session_connect(argv[2], e)) < 0)
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
		rc = wait_exit(fd, sigfd, &old, e);
		if (rc < 0 && sent.msg[0] && e->errnum == EPIPE)
			*e = sent;
	}
out:
	session_request_free(&q);
	if (fd >= 0)
		close(fd);
	if (sigfd >= 0)
		close(sigfd);
	return rc < 0 ? 125 : rc;
}

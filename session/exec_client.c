/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* `agentbox exec` (see include/exec_client.h). */
#include "exec_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include "channel.h"
#include "fsops.h"
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

/* ---------- the caller's terminal: the command gets a pty of its own ---------- */

/* What the command is given it keeps, and so does every process it leaves in the session: the
 * caller's terminal would let them read what is typed after the exec returned (a password) and
 * write into it. A terminal among fds 0-2 is therefore passed as the slave of a new pty; this
 * process relays between the pty and the terminal while the exec runs and closes the master
 * when it ends: the kernel hangs the slave up, and whatever still holds it reads EOF and gets
 * EIO on writes. The pty is nobody's controlling terminal (pid 1's setsid, no TIOCSCTTY), as
 * the terminal was not either: ^C, ^\ and ^Z keep signalling this process, which passes the
 * first two on as it always did. Fds that are no terminal pass as they are, relayed by no one. */

#define RELAY_BUF 4096
#define RELAY_DRAIN_MAX (1024 * 1024) /* passed on after the exec's end, at most */

struct relay {
	int master, slave; /* -1: no terminal among fds 0-2 */
	int in, out;   /* the caller's terminal to read (fd 0) and to write; -1: none, or gone */
	int term;      /* the terminal whose settings and size the pty takes */
	bool pty_done; /* the master read EOF or EIO: no slave is open any more */
	char *to_pty, *to_caller;     /* RELAY_BUF bytes each */
	size_t n_to_pty, n_to_caller; /* bytes waiting at the start of each */
};

/* The relay's buffers, of which a process has one: static, not in exec_command's frame, where
 * they would spread the locals of every exec over two more pages of stack, each first touched
 * with a fault, terminal or not. Untouched pages of .bss cost nothing. */
static char relay_to_pty[RELAY_BUF], relay_to_caller[RELAY_BUF];

/* No terminal, no relay (yet). */
static void relay_init(struct relay *t)
{
	*t = (struct relay){.master = -1,
			    .slave = -1,
			    .in = -1,
			    .out = -1,
			    .term = -1,
			    .to_pty = relay_to_pty,
			    .to_caller = relay_to_caller};
}

/* The caller's terminal settings while this process has changed them (on mode_fd) to
 * relay_mode, restored on every way out: the exec's end, a signal that ends this process, ^Z. */
static struct termios caller_mode, relay_mode;
static volatile sig_atomic_t mode_fd = -1;

/* This process may set and read the terminal: it is in the terminal's foreground process group,
 * or the terminal is not its controlling one (no job control applies). */
static bool foreground(int fd)
{
	pid_t pg = tcgetpgrp(fd);

	return pg < 0 || pg == getpgrp();
}

/* The terminal still has the settings this process gave it: no one changed them since (two
 * execs on one terminal: the first to end restores the caller's, the second leaves them). */
static bool mode_ours(int fd)
{
	struct termios now;

	return tcgetattr(fd, &now) == 0 && now.c_iflag == relay_mode.c_iflag &&
	       now.c_lflag == relay_mode.c_lflag && now.c_cc[VMIN] == relay_mode.c_cc[VMIN] &&
	       now.c_cc[VTIME] == relay_mode.c_cc[VTIME];
}

/* async-signal-safe */
static void mode_restore(void)
{
	int fd = mode_fd;

	mode_fd = -1;
	if (fd >= 0 && foreground(fd) && mode_ours(fd))
		tcsetattr(fd, TCSANOW, &caller_mode);
}

/* A signal that ends this process without passing through its signalfd (a fault, SIGALRM,
 * SIGXCPU...): the terminal's settings first, then the signal's default action. Only where
 * the action is the default: one the caller ignores stays ignored, a sanitizer's handler
 * stays. */
static void on_fatal(int signo)
{
	mode_restore();
	raise(signo); /* SA_RESETHAND: the default action, once the handler returns */
}

static void catch_fatal(void)
{
	static const int fatal[] = {SIGABRT, SIGALRM, SIGBUS,  SIGFPE,	  SIGILL,  SIGPROF,
				    SIGSEGV, SIGSYS,  SIGTRAP, SIGVTALRM, SIGXCPU, SIGXFSZ};
	struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_RESETHAND}, now;

	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (sigaction(fatal[i], NULL, &now) == 0 && now.sa_handler == SIG_DFL)
			sigaction(fatal[i], &sa, NULL);
}

/* In the terminal's foreground, its input comes here byte by byte, neither echoed nor edited:
 * the pty does that, with the caller's settings. Its signal keys stay (the pty, no controlling
 * terminal, could not signal), and its output processing (the pty does none). Out of the
 * foreground nothing is touched: the shell has the terminal. */
static void mode_sync(const struct relay *t)
{
	struct termios m;

	if (t->in < 0 || !foreground(t->in)) {
		mode_fd = -1;
		return;
	}
	if (mode_fd >= 0 || tcgetattr(t->in, &caller_mode) < 0)
		return;
	m = caller_mode;
	m.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
	m.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | IEXTEN);
	m.c_cc[VMIN] = 1;
	m.c_cc[VTIME] = 0;
	catch_fatal();
	relay_mode = m;
	mode_fd = t->in; /* before: a signal from now on puts the caller's settings back */
	if (tcsetattr(t->in, TCSANOW, &m) < 0)
		mode_fd = -1;
	else
		tcgetattr(t->in, &relay_mode); /* as the kernel keeps them, for mode_ours */
}

/* fds[i] becomes the pty's slave where i is a terminal; nothing happens when none is. */
static int relay_open(struct relay *t, int fds[3], struct ab_err *e)
{
	static const int out_order[3] = {1, 2, 0};
	bool tty[3] = {isatty(0), isatty(1), isatty(2)};
	struct termios m;
	struct winsize ws;

	if (!tty[0] && !tty[1] && !tty[2])
		return 0;
	t->in = tty[0] ? 0 : -1;
	t->term = tty[0] ? 0 : tty[1] ? 1 : 2;
	for (int i = 0; i < 3 && t->out < 0; i++) {
		int fd = out_order[i], fl = fcntl(fd, F_GETFL);
		if (tty[fd] && fl >= 0 && (fl & O_ACCMODE) != O_RDONLY)
			t->out = fd;
	}
	t->master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (t->master < 0 || unlockpt(t->master) < 0 ||
	    (t->slave = ioctl(t->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return ab_fail(e, errno, "cannot open a pty for the command (/dev/ptmx)"),
		       ab_hint(e,
			       "an exec gets a pty when the caller has a terminal: make /dev/ptmx "
			       "usable, or give the exec no terminal (</dev/null, | cat)");
	/* the caller's settings, without output processing: the caller's terminal still does it */
	if (tcgetattr(t->term, &m) == 0) {
		m.c_oflag &= ~(tcflag_t)OPOST;
		tcsetattr(t->slave, TCSANOW, &m);
	}
	if (ioctl(t->term, TIOCGWINSZ, &ws) == 0)
		ioctl(t->slave, TIOCSWINSZ, &ws);
	for (int i = 0; i < 3; i++)
		if (tty[i])
			fds[i] = t->slave;
	return 0;
}

/* Writes what fd takes of buf[0..*len), keeping the rest at the start; -1 when fd failed. */
static int send_some(int fd, char *buf, size_t *len)
{
	ssize_t n = write(fd, buf, *len);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	memmove(buf, buf + n, *len - (size_t)n);
	*len -= (size_t)n;
	return 0;
}

static void pty_read(struct relay *t)
{
	ssize_t n = read(t->master, t->to_caller, RELAY_BUF);

	if (n > 0)
		t->n_to_caller = t->out >= 0 ? (size_t)n : 0; /* no terminal to show it any more */
	else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		t->pty_done = true;
}

/* What poll watches for the relay: the terminal's input while this process has it and the
 * pty can take it, the pty's output while the terminal can take it. One buffer each way,
 * filled only when empty: the relay holds at most 2 * RELAY_BUF. */
static void relay_arm(const struct relay *t, struct pollfd p[3])
{
	short pty =
	    (short)((t->n_to_pty ? POLLOUT : 0) | (t->n_to_caller || t->pty_done ? 0 : POLLIN));

	p[0] = (struct pollfd){t->in >= 0 && mode_fd >= 0 && !t->n_to_pty ? t->in : -1, POLLIN, 0};
	p[1] = (struct pollfd){pty ? t->master : -1, pty, 0};
	p[2] = (struct pollfd){t->n_to_caller ? t->out : -1, POLLOUT, 0};
}

static void relay_step(struct relay *t, const struct pollfd p[3])
{
	if (p[0].revents) {
		ssize_t n = read(t->in, t->to_pty, RELAY_BUF);
		if (n > 0)
			t->n_to_pty = (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			t->in = -1; /* the terminal hung up: nothing more to pass */
	}
	if ((p[1].revents & (POLLOUT | POLLERR | POLLHUP)) && t->n_to_pty &&
	    send_some(t->master, t->to_pty, &t->n_to_pty) < 0)
		t->n_to_pty = 0;
	if ((p[1].revents & (POLLIN | POLLERR | POLLHUP)) && !t->n_to_caller)
		pty_read(t);
	if (p[2].revents && send_some(t->out, t->to_caller, &t->n_to_caller) < 0) {
		t->out = -1; /* the terminal is gone: what the command writes is dropped */
		t->n_to_caller = 0;
	}
}

/* The window's size for the pty; ^Z and its resumption for the terminal's settings. True when
 * the signal is the terminal's alone (not one to pass on). */
static bool relay_signal(struct relay *t, int signo)
{
	struct winsize ws;

	if (signo == SIGWINCH && t->master >= 0 && ioctl(t->term, TIOCGWINSZ, &ws) == 0)
		ioctl(t->master, TIOCSWINSZ, &ws);
	if (signo == SIGTSTP) { /* the command keeps running in the session, as before */
		mode_restore();
		raise(SIGSTOP);
	}
	if (signo == SIGCONT)
		mode_sync(t);
	return signo == SIGTSTP || signo == SIGCONT;
}

/* The exec ended: what the command wrote before is passed on (a read of the master waits for
 * the pty's own queue), then the master closes and the slave is hung up. Then the caller's
 * settings come back. */
static void relay_end(struct relay *t)
{
	size_t left = RELAY_DRAIN_MAX;

	if (t->slave >= 0)
		close(t->slave);
	while (t->master >= 0 && t->out >= 0 && left >= RELAY_BUF) {
		if (t->n_to_caller && fs_write_all(t->out, t->to_caller, t->n_to_caller) < 0)
			break;
		t->n_to_caller = 0;
		pty_read(t);
		if (!t->n_to_caller)
			break; /* nothing more now (EAGAIN), or no slave open (EIO) */
		left -= t->n_to_caller;
	}
	if (t->master >= 0)
		close(t->master);
	t->master = t->slave = -1;
	mode_restore();
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
	mode_restore();
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

/* A signal this process got: the terminal's part, then on to the command once it started. */
static int on_signal(int fd, int sigfd, const sigset_t *old, struct relay *t, bool started,
		     struct ab_err *e)
{
	struct signalfd_siginfo si;
	struct session_request q = {.kind = SESSION_SIGNAL};

	if (read(sigfd, &si, sizeof(si)) != sizeof(si) || relay_signal(t, (int)si.ssi_signo))
		return 0;
	q.signo = (int)si.ssi_signo;
	if (!started) {
		before_start(q.signo, old);
		return 0;
	}
	return send_request(fd, &q, NULL, 0, e);
}

/* Until the command's status comes: the signals this process gets go on to the command, and
 * the pty (when there is one) is relayed. result: the exec's --result object when the session
 * sent one, "" otherwise. */
static int wait_exit(int fd, int sigfd, const sigset_t *old, struct relay *t, char *result,
		     struct ab_err *e)
{
	struct pollfd pfd[5] = {{fd, POLLIN, 0}, {sigfd, POLLIN, 0}};
	nfds_t n = t->master >= 0 ? 5 : 2; /* without a terminal, nothing else is watched */
	bool started = false;

	for (;;) {
		struct msg m;
		int rc;

		if (n > 2)
			relay_arm(t, pfd + 2);
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return ab_fail(e, errno, "poll");
		}
		if (n > 2)
			relay_step(t, pfd + 2);
		if ((pfd[1].revents & POLLIN) && on_signal(fd, sigfd, old, t, started, e) < 0)
			return -1;
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
		if (m.type == SESSION_REPLY_NOTE)
			ab_say("%s\n", m.text);
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
	int stdio[3] = {0, 1, 2};
	struct session_request q = {0};
	struct exec_opts o = {0};
	struct relay t;
	char result[AB_ERR_MAX];
	sigset_t set, old;
	int fd = -1, sigfd = -1, rfd = -1, rc = -1;

	relay_init(&t);
	result[0] = '\0'; /* a C string from here on: no need to zero the rest (a page) */
	if (argc < 3)
		return usage(e), 125;
	sigemptyset(&set);
	for (size_t i = 0; i < SANDBOX_N_FORWARDED; i++)
		sigaddset(&set, sandbox_forwarded[i]);
	if (parse(argc, argv, &q, &o, e) < 0 || (o.result && (rfd = result_open(o.result, e)) < 0))
		goto out;
	if ((fd = session_connect(argv[2], e)) < 0 || relay_open(&t, stdio, e) < 0)
		goto out;
	if (t.in >= 0) { /* ^Z and fg: the terminal's settings go and come back (relay_signal) */
		sigaddset(&set, SIGTSTP);
		sigaddset(&set, SIGCONT);
	}
	/* blocked before the request: a signal from now on reaches the command */
	if (sigprocmask(SIG_BLOCK, &set, &old) < 0 ||
	    (sigfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0) {
		ab_fail(e, errno, "signalfd");
		goto out;
	}
	mode_sync(&t);
	/* a refusing supervisor may close before the request is sent: its reply is queued */
	if (send_request(fd, &q, stdio, 3, e) == 0 || e->errnum == EPIPE ||
	    e->errnum == ECONNRESET) {
		struct ab_err sent = *e;
		*e = (struct ab_err){0};
		if (t.slave >= 0) { /* the session has its own now */
			close(t.slave);
			t.slave = -1;
		}
		rc = wait_exit(fd, sigfd, &old, &t, result, e);
		if (rc < 0 && sent.msg[0] && e->errnum == EPIPE)
			*e = sent;
	}
out:
	relay_end(&t);
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
			ab_say("%s\n", we.msg);
			return rc == 0 ? 125 : rc;
		}
	}
	return rc < 0 ? 125 : rc;
}

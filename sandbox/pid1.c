/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Inside the sandbox (see include/pid1.h). pid 1 never talks to anything but the supervisor. */
#include "pid1.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "channel.h"
#include "credential_source.h"
#include "exec_why.h"
#include "idmap.h"
#include "landlock.h"
#include "rlimits.h"
#include "session_proto.h"
#include "trust.h"

extern char **environ;

/* pid 1 (or the fallback child) hands its fds to the supervisor and keeps none. */
int pid1_send_ready(struct run *r)
{
	int fds[MAX_PASSED_FDS];
	size_t n = 0;
	int value = r->seccomp_unnamed ? READY_UNNAMED : 0, rc;

	if (r->listener >= 0) {
		fds[n++] = r->listener;
		value |= READY_LISTENER;
	}
	for (size_t k = 0; k < CHANNEL_N_PASSED_EGRESS; k++) {
		if (r->proxy_fds[channel_passed_egress[k].slots[0]] < 0)
			continue;
		fds[n++] = r->proxy_fds[channel_passed_egress[k].slots[0]];
		fds[n++] = r->proxy_fds[channel_passed_egress[k].slots[1]];
		value |= (int)channel_passed_egress[k].bit;
	}
	if (r->changes_fs >= 0) {
		fds[n++] = r->changes_fs;
		value |= READY_CHANGES;
	}
	rc = channel_send_fds(r->sock[1], MSG_READY, value, NULL, fds, n);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return rc;
}

void pid1_close_inherited(int keep)
{
	if (keep > 3)
		syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u);
	syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u);
}

/* Root gave the command other ids, mapped to the same ids on the host: pid 1 takes them on
 * (dropping root's supplementary groups first), so nothing in the sandbox is root anywhere. */
static int become(const struct run *r, struct ab_err *e)
{
	const struct policy *p = r->p;

	if (setgroups(0, NULL) < 0)
		return ab_fail(e, errno, "setgroups");
	if (p->gid >= 0 && setresgid((gid_t)p->gid, (gid_t)p->gid, (gid_t)p->gid) < 0)
		return ab_fail(e, errno, "setresgid %lld", (long long)p->gid);
	if (p->uid >= 0 && setresuid((uid_t)p->uid, (uid_t)p->uid, (uid_t)p->uid) < 0)
		return ab_fail(e, errno, "setresuid %lld", (long long)p->uid);
	return 0;
}

/* pid 1 waits for the filter the supervisor compiled meanwhile, or the word that the
 * precompiled one applies (then its own copy is loaded); end of stream means the supervisor
 * failed, and nothing runs. */
static int recv_filter(struct run *r, const struct sock_filter **insns, unsigned short *len,
		       struct ab_err *e)
{
	const struct seccomp_precompiled *pre;
	struct msg m;
	struct iovec iov[2] = {{&m, sizeof(m)}, {r->filter->insns, sizeof(r->filter->insns)}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t got;

	do
		got = recvmsg(r->sock[1], &mh, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof(m) && m.type == MSG_FILTER_BUILTIN) {
		if (!(pre = seccomp_builtin(r->p)) || m.value != pre->len)
			return ab_fail(e, EPROTO,
				       "the supervisor named a precompiled seccomp filter of %d "
				       "instructions, which pid 1 does not have",
				       m.value);
		*insns = pre->insns;
		*len = pre->len;
		return 0;
	}
	if (got < (ssize_t)sizeof(m) || m.type != MSG_FILTER || m.value < 0 ||
	    m.value > BPF_MAXINSNS ||
	    (size_t)got != sizeof(m) + (size_t)m.value * sizeof(struct sock_filter))
		return ab_fail(e, got < 0 ? errno : EPROTO,
			       "no seccomp filter from the supervisor");
	*insns = r->filter->insns;
	*len = (unsigned short)m.value;
	return 0;
}

/* In its own UTS namespace only a seccomp profile refuses this: a container engine's default
 * one keeps sethostname for CAP_SYS_ADMIN, which the container does not have. */
static int hostname_hint(struct ab_err *e)
{
	if (e->errnum != EPERM)
		return -1;
	return ab_hint(e, "a container's seccomp profile refuses it: run with Docker/podman "
			  "--security-opt seccomp=unconfined, Kubernetes seccompProfile: "
			  "Unconfined, or a profile allowing sethostname");
}

static int child_setup(struct run *r, struct ab_err *e)
{
	const struct policy *p = r->p;
	const struct sock_filter *insns = NULL;
	unsigned short len = 0;
	struct mount_sources src = {0};
	int rc;

	/* sources are resolved with the caller's rights, before pid 1 takes on other ids */
	rc = mounts_open_sources(&r->plan, &src, e);
	if (rc == 0 && r->maps_by_supervisor)
		rc = become(r, e);
	/* after become: files pid 1 creates need ids the namespace maps */
	if (rc == 0)
		rc = trust_stage(r, e);
	if (rc == 0)
		rc = mounts_apply(&r->plan, &src, e);
	r->changes_fs = src.changes_fs; /* for the supervisor, with READY */
	src.changes_fs = -1;
	mounts_close_sources(&src);
	if (rc < 0)
		return -1;
	if (sethostname(p->hostname, strlen(p->hostname)) < 0)
		return ab_fail(e, errno, "sethostname %s", p->hostname), hostname_hint(e);
	if (p->net_mode != NET_HOST && egress_setup_namespace(p, r->proxy_fds, e) < 0)
		return -1;
	if (chdir(r->workdir) < 0)
		return ab_fail(e, errno, "workdir %s", r->workdir),
		       ab_hint(e, "make it visible with --ro/--rw, or set [sandbox] workdir");

	/* as late as it can be, to give the supervisor time to make the CA meanwhile */
	if (trust_install(r, e) < 0 || caps_drop(e) < 0 ||
	    landlock_apply(&r->plan, r->landlock_abi, e) < 0)
		return -1;
	/* last: the filter binds pid 1 and every process it forks */
	if (recv_filter(r, &insns, &len, e) < 0 ||
	    seccomp_install_program(p, insns, len, &r->listener, &r->seccomp_unnamed, e) < 0)
		return -1;
	/* the command (same uid) must not reach pid 1's fds or memory through /proc/1 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ab_fail(e, errno, "PR_SET_DUMPABLE");
	return 0;
}

/* Why the command's process ended before its exec (cwd, limits, not found, not executable)
 * goes to pid 1 through a close-on-exec pipe: nothing comes when the exec happened. A pipe
 * rather than the memory a vfork child shares: under a memory checker vfork is a fork. The
 * write end, for the command's process; -1 when nobody reads it (the fallback's child). */
static int failure_fd = -1;

/* Said on the command's stderr (marked, as all of agentbox's lines) and to pid 1: the
 * command's own exit code and agentbox's failure look alike otherwise. */
static _Noreturn void start_failed(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static _Noreturn void start_failed(int status, const char *fmt, ...)
{
	char text[AB_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!text[0])
		snprintf(text, sizeof(text), "the command did not start");
	ab_say("%s\n", text);
	/* the pipe is empty and holds far more than a line: this write does not block */
	if (failure_fd >= 0)
		(void)!write(failure_fd, text, strlen(text));
	_exit(status);
}

/* Every fd past stdio but keep (-1: none) is closed. */
static int close_above_stdio(int keep)
{
	if (keep < 3)
		return syscall(SYS_close_range, 3u, ~0u, 0u) < 0 ? -1 : 0;
	if (keep > 3 && syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u) < 0)
		return -1;
	return syscall(SYS_close_range, (unsigned)keep + 1, ~0u, 0u) < 0 ? -1 : 0;
}

/* What the child wrote before it exec'd or died (EOF then: the write end was its only one). */
static void read_failure(int fd, char *text, size_t size)
{
	size_t n = 0;
	ssize_t got;

	while (n < size - 1 &&
	       ((got = read(fd, text + n, size - 1 - n)) > 0 || (got < 0 && errno == EINTR)))
		n += got > 0 ? (size_t)got : 0;
	text[n] = '\0';
}

/* vfork, with the pipe start_failed writes to: the parent gets the child's reason in text
 * ("" when it exec'd), read once the child has exec'd or died. child(arg) runs in the child. */
static pid_t spawn(void (*child)(void *), void *arg, char *text, size_t size)
{
	int fds[2], err;
	pid_t pid;

	text[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	failure_fd = fds[1];
	pid = vfork();
	if (pid == 0) {
		child(arg);
		_exit(125); /* child never returns */
	}
	err = errno; /* the caller reports vfork's reason, not a close's */
	failure_fd = -1;
	close(fds[1]);
	if (pid > 0)
		read_failure(fds[0], text, size);
	close(fds[0]);
	errno = err;
	return pid;
}

/* What a command's process does last, in a plain run and for each exec of a session. */
static _Noreturn void exec_argv(struct run *r, char *const *argv, char **envp, bool own_session)
{
	struct ab_err e = {0};
	int err;

	/* the limits are the command's: pid 1 must not die of the command's memory cap */
	if (!r->fallback && limits_apply(&r->p->limits, &e) < 0)
		start_failed(125, "%s", e.msg);
	sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
	if (own_session && setsid() < 0)
		start_failed(125, "setsid for the command: %s", strerror(errno));
	if (close_above_stdio(failure_fd) < 0)
		start_failed(125, "close_range for the command: %s", strerror(errno));
	environ = envp;
	execvp(argv[0], argv);
	err = errno;
	if (err == ENOENT) {
		char why[AB_ERR_MAX];
		exec_why_enoent(argv[0], getenv("PATH"), why, sizeof(why));
		start_failed(127, "%s", why);
	}
	start_failed(126, "%s: cannot execute: %s", argv[0], strerror(err));
}

_Noreturn void pid1_exec_command(struct run *r)
{
	exec_argv(r, r->p->command.v, r->env.vars.v, r->own_session);
}

/* The command, started with vfork (spawn): pid 1's page tables are not copied for a process
 * that execs at once (pid 1 waits the few system calls until then). The child changes nothing
 * of pid 1's memory that pid 1 reads again (it sets environ, which pid 1 no longer uses); no
 * signal handler is installed that could run in it. */
static void command_child(void *r)
{
	pid1_exec_command(r);
}

/* Reaps every orphan, passes signals on, and leaves with the command; failure says why the
 * command never ran, "" when it did. */
__attribute__((noinline)) static _Noreturn void init_loop(struct run *r, pid_t cmd,
							  const char *failure)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(r->sigfd, &si, sizeof(si));
		int status;
		pid_t pid;

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			_exit(125);
		if (si.ssi_signo != SIGCHLD) {
			/* terminal-generated signals already reached the command's process group */
			if (si.ssi_code != SI_KERNEL)
				kill(cmd, (int)si.ssi_signo);
			continue;
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			if (pid != cmd)
				continue;
			/* the text, when the command never ran, says why */
			channel_send(r->sock[1], MSG_EXIT, status, failure[0] ? failure : NULL);
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		}
	}
}

/* ---------- a session: pid 1 runs the execs the supervisor sends ---------- */

struct exec_slot {
	pid_t pid;
	unsigned id;
	char *failure; /* why it ended before its exec (start_failed), NULL when it did not */
};

struct execs {
	struct exec_slot *v;
	size_t n, cap;
};

/* An exec's first process: the caller's stdio, the exec's cwd, then the kernel tells the
 * supervisor its pid (SCM_CREDENTIALS) before anything of the command runs; its own session
 * (and process group) so that its signals reach it alone and no terminal is shared. Started with
 * vfork like the plain run's command: it writes no memory of pid 1's that pid 1 reads again. */
static _Noreturn void exec_child(struct run *r, unsigned id, const struct session_request *q,
				 const int fds[3])
{
	struct msg m = {.type = MSG_EXEC_STARTED, .id = id};

	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			start_failed(125, "the caller's stdio for the command: %s",
				     strerror(errno));
	if (q->cwd && chdir(q->cwd) < 0)
		start_failed(125,
			     "cannot enter %s in the sandbox: %s; fix: give --cwd a directory the "
			     "session's view has",
			     q->cwd, strerror(errno));
	if (channel_send_data(r->sock[1], &m, NULL, 0, NULL, 0) < 0)
		start_failed(125, "cannot tell the supervisor the command's pid: %s",
			     strerror(errno));
	exec_argv(r, q->argv.v, q->env.v, true);
}

struct exec_start {
	struct run *r;
	unsigned id;
	const struct session_request *q;
	const int *fds;
};

static void exec_child_start(void *arg)
{
	const struct exec_start *x = arg;

	exec_child(x->r, x->id, x->q, x->fds);
}

static void exec_failed(struct run *r, unsigned id, const char *why)
{
	struct msg m = {.type = MSG_EXEC_EXIT, .value = 125 << 8, .id = id};

	snprintf(m.text, sizeof(m.text), "pid 1 could not start the command: %.900s", why);
	channel_send_data(r->sock[1], &m, NULL, 0, NULL, 0);
}

static bool execs_room(struct execs *x)
{
	struct exec_slot *v;

	if (x->n < x->cap)
		return true;
	if (!(v = realloc(x->v, (x->cap * 2 + 8) * sizeof(*v))))
		return false;
	x->v = v;
	x->cap = x->cap * 2 + 8;
	return true;
}

static void start_exec(struct run *r, struct execs *x, const struct msg *m,
		       const struct channel_extra *in)
{
	struct exec_start start = {r, m->id, NULL, in->fds};
	struct session_request q;
	struct ab_err e = {0};
	char failure[AB_ERR_MAX];
	pid_t pid = -1;

	if (in->n != 3)
		ab_fail(&e, EPROTO, "the request came without stdin, stdout and stderr");
	else if (!execs_room(x))
		ab_fail(&e, ENOMEM, "exec");
	else if (session_request_decode(in->data, in->len, &q, &e) == 0) {
		start.q = &q;
		if ((pid = spawn(exec_child_start, &start, failure, sizeof(failure))) < 0)
			ab_fail(&e, errno, "the command's process");
		session_request_free(&q);
	}
	for (size_t i = 0; i < in->n; i++)
		close(in->fds[i]);
	if (pid < 0) {
		exec_failed(r, m->id, e.msg);
		return;
	}
	/* out of memory here loses the reason, not the status */
	x->v[x->n++] = (struct exec_slot){pid, m->id, failure[0] ? strdup(failure) : NULL};
}

static void signal_exec(const struct execs *x, const struct msg *m)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->v[i].id == m->id && kill(-x->v[i].pid, m->value) < 0)
			kill(x->v[i].pid, m->value);
}

/* Reaps every orphan; an exec's first process ending is that exec's status. */
static void reap_execs(struct run *r, struct execs *x)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (size_t i = 0; i < x->n; i++) {
			if (x->v[i].pid != pid)
				continue;
			struct msg m = {.type = MSG_EXEC_EXIT, .value = status, .id = x->v[i].id};
			if (x->v[i].failure)
				snprintf(m.text, sizeof(m.text), "%s", x->v[i].failure);
			channel_send_data(r->sock[1], &m, NULL, 0, NULL, 0);
			free(x->v[i].failure);
			x->v[i] = x->v[--x->n];
			break;
		}
	}
}

/* The loopback address a forwarded connection asks for (nothing else: the supervisor forwards
 * to the sandbox's own servers only), with its port; 0 when it is none. */
static socklen_t loopback_address(const struct msg *m, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (m->value <= 0 || m->value > 65535)
		return 0;
	if (inet_pton(AF_INET, m->text, &in4->sin_addr) == 1 &&
	    in4->sin_addr.s_addr == htonl(INADDR_LOOPBACK)) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)m->value);
		return sizeof(*in4);
	}
	if (inet_pton(AF_INET6, m->text, &in6->sin6_addr) == 1 &&
	    IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)m->value);
		return sizeof(*in6);
	}
	return 0;
}

/* A forwarded connection's socket (MSG_PORT_CONNECT). pid 1 makes it because only a process in
 * the sandbox's network namespace can, and the supervisor cannot enter that namespace. The
 * connect is begun and never waited for (non-blocking): the supervisor sees it finish, so a
 * server that does not accept cannot hold pid 1. */
static void port_connect(struct run *r, const struct msg *m)
{
	struct msg out = {.type = MSG_PORT_CONNECTED, .id = m->id};
	struct sockaddr_storage ss;
	socklen_t len = loopback_address(m, &ss);
	int fd = -1;

	if (!len)
		out.value = EINVAL;
	else if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
		 (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS))
		out.value = errno;
	/* a supervisor gone has nobody to answer: its hang-up ends pid 1 next */
	channel_send_data(r->sock[1], &out, NULL, 0, &fd, out.value ? 0 : 1);
	if (fd >= 0)
		close(fd);
}

/* Until the supervisor hangs up (then PDEATHSIG or the hang-up ends pid 1 and, with it, every
 * process of the session). */
__attribute__((noinline)) static _Noreturn void session_loop(struct run *r)
{
	struct execs x = {0};
	int fds[MAX_PASSED_FDS];
	char *buf = malloc(SESSION_MAX_REQUEST);
	struct pollfd pfd[2] = {{r->sigfd, POLLIN, 0}, {r->sock[1], POLLIN, 0}};

	if (!buf)
		_exit(125);
	for (;;) {
		struct signalfd_siginfo si;
		struct channel_extra in = {buf, SESSION_MAX_REQUEST, 0, fds, MAX_PASSED_FDS, 0, 0};
		struct msg m;
		int rc;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(125);
		}
		if ((pfd[0].revents & POLLIN) && read(r->sigfd, &si, sizeof(si)) == sizeof(si) &&
		    si.ssi_signo == SIGCHLD)
			reap_execs(r, &x);
		if (!(pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		rc = channel_recv_extra(r->sock[1], &m, &in);
		if (rc == 0 || (rc < 0 && errno != EMSGSIZE))
			_exit(125);
		if (rc < 0) {
			for (size_t i = 0; i < in.n; i++)
				close(fds[i]);
			continue;
		}
		if (m.type == MSG_EXEC)
			start_exec(r, &x, &m, &in);
		else if (m.type == MSG_EXEC_SIGNAL)
			signal_exec(&x, &m);
		else if (m.type == MSG_PORT_CONNECT && in.n == 0)
			port_connect(r, &m);
		else
			for (size_t i = 0; i < in.n; i++)
				close(fds[i]);
	}
}

/* The supervisor's end of the socket is closed only when it died. */
static bool supervisor_gone(int sock)
{
	struct pollfd pfd = {sock, POLLIN | POLLRDHUP, 0};
	return poll(&pfd, 1, 0) < 0 || (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

_Noreturn void pid1_main(struct run *r)
{
	struct ab_err e = {0};
	struct msg m;
	pid_t cmd;

	/* if the supervisor dies, so does the sandbox; if it died already, GO never comes */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(125);
	creds_scrub_environ(r->p); /* /proc/1/environ: no env: source's value */
	pid1_close_inherited(r->sock[1]);
	/* the signals stay blocked from the supervisor on, so none is lost before this */
	r->sigfd = signalfd(-1, &r->sigs, SFD_CLOEXEC);
	if (r->sigfd < 0)
		_exit(125);
	/* a single mapping of the creator's own ids may be written from inside: no round trip */
	if (!r->maps_by_supervisor &&
	    idmap_write(r->p, "/proc/self", r->host_uid, r->host_gid, false, &e) < 0) {
		channel_send(r->sock[1], MSG_ERROR, e.errnum, e.msg);
		_exit(125);
	}
	/* GO: the supervisor is alive (set before PDEATHSIG could matter) and, when limits use a
	 * cgroup, has moved this process into it; without a cgroup, a hung-up socket says the
	 * supervisor died before PDEATHSIG was armed */
	if (r->cgroup_mode != CGROUP_NONE || r->maps_by_supervisor
		? channel_recv(r->sock[1], &m) != 1 || m.type != MSG_GO
		: supervisor_gone(r->sock[1]))
		_exit(125);

	if (child_setup(r, &e) < 0) {
		channel_send(r->sock[1], MSG_ERROR, e.errnum, e.msg);
		_exit(125);
	}
	/* only the supervisor may answer the filter and the proxy listeners; READY before the
	 * command starts, so that the timeout and signal forwarding cover its exec */
	if (pid1_send_ready(r) < 0)
		_exit(125);
	if (r->session)
		session_loop(r);
	/* e.msg, unused since setup, takes why the command never ran: a page of pid 1's stack
	 * is written already, where a static buffer's page would be one more fault */
	cmd = spawn(command_child, r, e.msg, sizeof(e.msg));
	if (cmd < 0) {
		ab_fail(&e, errno, "fork of the command");
		channel_send(r->sock[1], MSG_ERROR, e.errnum, e.msg);
		_exit(125);
	}
	init_loop(r, cmd, e.msg);
}

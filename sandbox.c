/* The story of a run, top to bottom:
 *   plan the view → clone into new namespaces → write the id maps → pid 1 sets up the view and
 *   confinement and forks the command → the supervisor relays signals and enforces the timeout
 *   → pid 1 reports the command's status and exits, taking the pid namespace with it.
 * The supervisor never enters a namespace; pid 1 never talks to anything but the supervisor. */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup.h"
#include "disklimit.h"
#include "egress.h"
#include "env.h"
#include "fsops.h"
#include "landlock.h"
#include "overlay.h"
#include "protect.h"
#include "proxy.h"
#include "rlimits.h"
#include "seccomp.h"
#include "seccomp_monitor.h"

extern char **environ;

/* Signals the supervisor and pid 1 pass on to the command. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

enum msg_type { MSG_GO = 1, MSG_READY, MSG_ERROR, MSG_EXIT, MSG_FILTER };

struct msg {
	int type;
	int value; /* MSG_ERROR: errno; MSG_EXIT: the command's wait status; MSG_FILTER: the
		    * number of instructions that follow the message */
	char text[AB_ERR_MAX];
};

struct run {
	const struct policy *p;
	struct mount_plan plan;
	struct env_result env;
	char *workdir;
	bool own_session; /* stdin is not a terminal: the command gets a session of its own */
	int sock[2];      /* [0] supervisor's end, [1] pid 1's end */
	int sigfd;
	int listener; /* seccomp notifications: pid 1 installs, the supervisor answers */
	int landlock_abi;
	bool seccomp_unnamed; /* filter without a listener (nested under another sandbox) */
	bool fallback;        /* no namespaces: Landlock, seccomp and rlimits only */
	bool home_visible;    /* the caller's HOME is bound: it stays HOME */
	enum cgroup_mode cgroup_mode;
	struct cgroup_run cgroup;
	char *tmpdir;         /* fallback: the private directory standing in for /tmp */
	char *changes;	      /* overlays: the changes directory */
	int changes_lock;     /* overlays: held while the run lives */
	int changes_fs;	      /* changes-size: the tmpfs holding the upper layers, or -1 */
	struct protect_hold protect; /* rw trees' placeholders, removed by the last run out */
	pid_t supervisor;
	int proxy_fds[EGRESS_SOCKETS]; /* proxy mode: made in the sandbox's network namespace */
	struct proxy *proxy;
	uid_t outer_uid; /* the caller's ids, which the sandbox maps */
	gid_t outer_gid;
	uid_t host_uid;  /* what the command's ids are on the host */
	gid_t host_gid;
	bool maps_by_supervisor; /* root giving the command other host ids: needs CAP_SETUID */
	sigset_t sigs, oldmask;
	pid_t pid1;
	struct seccomp_monitor *monitor;
	struct disk_limit *disk; /* [limits] disk, NULL without */
	struct seccomp_program *filter; /* compiled by the supervisor, loaded by pid 1 */
};

/* The filter's buffer (32 KiB) lies outside struct run: zeroing it with the rest of the run
 * on the stack cost ten page faults before the clone, for a program of a few hundred
 * instructions. In .bss only the pages written are ever mapped. */
static struct seccomp_program filter_buffer;

#define MAX_PASSED_FDS 8

/* Sends a message with n fds attached (SCM_RIGHTS). */
static int send_msg_fds(int fd, int type, int value, const char *text, const int *fds, size_t n)
{
	struct msg m = {.type = type, .value = value};
	struct iovec iov = {&m, sizeof(m)};
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_PASSED_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	if (n > 0 && n <= MAX_PASSED_FDS) {
		struct cmsghdr *c;
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -1;
}

static int send_msg(int fd, int type, int value, const char *text)
{
	return send_msg_fds(fd, type, value, text, NULL, 0);
}

/* 1 when a message was read, 0 at end of stream, -1 on error. Passed fds (O_CLOEXEC) land in
 * fds[0..*n) when fds is not NULL; any beyond max are closed. */
static int recv_msg_fds(int fd, struct msg *m, int *fds, size_t max, size_t *n)
{
	struct iovec iov = {m, sizeof(*m)};
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_PASSED_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	ssize_t got;
	bool reset = false;

	if (n)
		*n = 0;
	/* ECONNRESET, once: pid 1 exited leaving a message of ours (the filter) unread; what it
	 * sent before that is still queued behind the error */
	do {
		got = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (got < 0 && errno == ECONNRESET && !reset) {
			reset = true;
			errno = EINTR;
		}
	} while (got < 0 && errno == EINTR);
	if (got <= 0)
		return got < 0 ? -1 : 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < k; i++) {
			int passed;
			memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds && *n < max)
				fds[(*n)++] = passed;
			else
				close(passed);
		}
	}
	if (got != (ssize_t)sizeof(*m))
		return -1;
	m->text[sizeof(m->text) - 1] = '\0';
	return 1;
}

static int recv_msg(int fd, struct msg *m)
{
	return recv_msg_fds(fd, m, NULL, 0, NULL);
}

/* READY's value: what comes with it, in this order of fds. */
#define READY_UNNAMED 1u   /* the filter has no listener (nested) */
#define READY_LISTENER 2u  /* fd: the seccomp notification listener */
#define READY_PROXY 4u     /* fds: the HTTP and SOCKS5 listeners */
#define READY_CHANGES 8u   /* fd: the tmpfs of the overlays' upper layers */
#define READY_CAPTURE 16u  /* fds: the capture listener and DNS socket on 127.0.0.1 */
#define READY_CAPTURE6 32u /* fds: the same on ::1 */

/* The proxy's sockets that come with a READY bit, in the order they are passed. */
static const struct {
	unsigned bit;
	int slots[2];
} passed_egress[] = {
	{READY_PROXY, {EGRESS_HTTP, EGRESS_SOCKS}},
	{READY_CAPTURE, {EGRESS_CAPTURE + CAPTURE_TCP4, EGRESS_CAPTURE + CAPTURE_DNS4}},
	{READY_CAPTURE6, {EGRESS_CAPTURE + CAPTURE_TCP6, EGRESS_CAPTURE + CAPTURE_DNS6}},
};

/* pid 1 (or the fallback child) hands its fds to the supervisor and keeps none. */
static int send_ready(struct run *r)
{
	int fds[MAX_PASSED_FDS];
	size_t n = 0;
	int value = r->seccomp_unnamed ? READY_UNNAMED : 0, rc;

	if (r->listener >= 0) {
		fds[n++] = r->listener;
		value |= READY_LISTENER;
	}
	for (size_t k = 0; k < sizeof(passed_egress) / sizeof(passed_egress[0]); k++) {
		if (r->proxy_fds[passed_egress[k].slots[0]] < 0)
			continue;
		fds[n++] = r->proxy_fds[passed_egress[k].slots[0]];
		fds[n++] = r->proxy_fds[passed_egress[k].slots[1]];
		value |= (int)passed_egress[k].bit;
	}
	if (r->changes_fs >= 0) {
		fds[n++] = r->changes_fs;
		value |= READY_CHANGES;
	}
	rc = send_msg_fds(r->sock[1], MSG_READY, value, NULL, fds, n);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return rc;
}

static int warn(struct audit *a, const char *what, const char *message, struct ab_err *e);
static int write_file(const char *path, const char *text, struct ab_err *e);
static int write_maps(const struct policy *p, const char *proc, uid_t outer_uid, gid_t outer_gid,
		      bool allow_setgroups, struct ab_err *e);
static int audit_prelude(const struct run *r, struct audit *a, struct ab_err *e);

/* ---------------------------------------------------------------- pid 1 ---- */

static void close_inherited(int keep)
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

/* pid 1 waits for the filter the supervisor compiled meanwhile; end of stream means the
 * supervisor failed, and nothing runs. */
static int recv_filter(struct run *r, struct ab_err *e)
{
	struct msg m;
	struct iovec iov[2] = {{&m, sizeof(m)}, {r->filter->insns, sizeof(r->filter->insns)}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t got;

	do
		got = recvmsg(r->sock[1], &mh, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got < (ssize_t)sizeof(m) || m.type != MSG_FILTER || m.value < 0 ||
	    m.value > BPF_MAXINSNS ||
	    (size_t)got != sizeof(m) + (size_t)m.value * sizeof(struct sock_filter))
		return ab_fail(e, got < 0 ? errno : EPROTO,
			       "no seccomp filter from the supervisor");
	r->filter->len = (unsigned short)m.value;
	return 0;
}

static int child_setup(struct run *r, struct ab_err *e)
{
	const struct policy *p = r->p;

	struct mount_sources src = {0};
	int rc;

	/* sources are resolved with the caller's rights, before pid 1 takes on other ids */
	rc = mounts_open_sources(&r->plan, &src, e);
	if (rc == 0 && r->maps_by_supervisor)
		rc = become(r, e);
	if (rc == 0)
		rc = mounts_apply(&r->plan, &src, e);
	r->changes_fs = src.changes_fs; /* for the supervisor, with READY */
	src.changes_fs = -1;
	mounts_close_sources(&src);
	if (rc < 0)
		return -1;
	if (sethostname(p->hostname, strlen(p->hostname)) < 0)
		return ab_fail(e, errno, "sethostname %s", p->hostname);
	if (p->net_mode != NET_HOST && egress_setup_namespace(p, r->proxy_fds, e) < 0)
		return -1;
	if (chdir(r->workdir) < 0)
		return ab_fail(e, errno, "workdir %s", r->workdir),
		       ab_hint(e, "make it visible with --ro/--rw, or set [sandbox] workdir");

	if (caps_drop(e) < 0 || landlock_apply(&r->plan, r->landlock_abi, e) < 0)
		return -1;
	/* last: the filter binds pid 1 and every process it forks */
	if (recv_filter(r, e) < 0 ||
	    seccomp_install_program(p, r->filter, &r->listener, &r->seccomp_unnamed, e) < 0)
		return -1;
	/* the command (same uid) must not reach pid 1's fds or memory through /proc/1 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ab_fail(e, errno, "PR_SET_DUMPABLE");
	return 0;
}

static _Noreturn void exec_command(struct run *r)
{
	char *const *argv = r->p->command.v;
	struct ab_err e = {0};
	int err;

	/* the limits are the command's: pid 1 must not die of the command's memory cap */
	if (!r->fallback && limits_apply(&r->p->limits, &e) < 0) {
		fprintf(stderr, "agentbox: %s\n", e.msg);
		_exit(125);
	}
	sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
	if (r->own_session && setsid() < 0)
		_exit(125);
	if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0)
		_exit(125);
	environ = r->env.vars.v;
	execvp(argv[0], argv);
	err = errno;
	if (err == ENOENT)
		fprintf(stderr,
			"agentbox: %s: command not found in the sandbox; fix: check PATH and that "
			"its directory is listed in [filesystem]\n",
			argv[0]);
	else
		fprintf(stderr, "agentbox: %s: cannot execute: %s\n", argv[0], strerror(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* The command, started with vfork: pid 1's page tables are not copied for a process that
 * execs at once (pid 1 waits the few system calls until then). The child changes nothing of
 * pid 1's memory that pid 1 reads again (it sets environ, which pid 1 no longer uses); no
 * signal handler is installed that could run in it. */
static pid_t spawn_command(struct run *r)
{
	pid_t cmd = vfork();

	if (cmd == 0)
		exec_command(r);
	return cmd;
}

/* Reaps every orphan, passes signals on, and leaves with the command. */
static _Noreturn void init_loop(struct run *r, pid_t cmd)
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
			send_msg(r->sock[1], MSG_EXIT, status, NULL);
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		}
	}
}

/* The supervisor's end of the socket is closed only when it died. */
static bool supervisor_gone(int sock)
{
	struct pollfd pfd = {sock, POLLIN | POLLRDHUP, 0};
	return poll(&pfd, 1, 0) < 0 || (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

static _Noreturn void child_main(struct run *r)
{
	struct ab_err e = {0};
	struct msg m;
	pid_t cmd;

	/* if the supervisor dies, so does the sandbox; if it died already, GO never comes */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(125);
	close_inherited(r->sock[1]);
	/* the signals stay blocked from the supervisor on, so none is lost before this */
	r->sigfd = signalfd(-1, &r->sigs, SFD_CLOEXEC);
	if (r->sigfd < 0)
		_exit(125);
	/* a single mapping of the creator's own ids may be written from inside: no round trip */
	if (!r->maps_by_supervisor &&
	    write_maps(r->p, "/proc/self", r->host_uid, r->host_gid, false, &e) < 0) {
		send_msg(r->sock[1], MSG_ERROR, e.errnum, e.msg);
		_exit(125);
	}
	/* GO: the supervisor is alive (set before PDEATHSIG could matter) and, when limits use a
	 * cgroup, has moved this process into it; without a cgroup, a hung-up socket says the
	 * supervisor died before PDEATHSIG was armed */
	if (r->cgroup_mode != CGROUP_NONE || r->maps_by_supervisor
		    ? recv_msg(r->sock[1], &m) != 1 || m.type != MSG_GO
		    : supervisor_gone(r->sock[1]))
		_exit(125);

	if (child_setup(r, &e) < 0) {
		send_msg(r->sock[1], MSG_ERROR, e.errnum, e.msg);
		_exit(125);
	}
	/* only the supervisor may answer the filter and the proxy listeners; READY before the
	 * command starts, so that the timeout and signal forwarding cover its exec */
	if (send_ready(r) < 0)
		_exit(125);
	cmd = spawn_command(r);
	if (cmd < 0) {
		ab_fail(&e, errno, "fork of the command");
		send_msg(r->sock[1], MSG_ERROR, e.errnum, e.msg);
		_exit(125);
	}
	init_loop(r, cmd);
}

/* ----------------------------------------------------------- supervisor ---- */

static long read_sysctl(const char *path)
{
	char buf[32] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/* Says why user namespaces are unavailable and how to allow them. */
static int userns_diagnose(int err, struct ab_err *e)
{
	ab_fail(e, err, "cannot create a user namespace");
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2)
		return ab_hint(e, "a seccomp filter refuses it (an outer sandbox or a container): for "
				  "agentbox inside agentbox, set [sandbox] nesting = true in the outer "
				  "profile; or use [sandbox] fallback = landlock");
	if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0)
		return ab_hint(e, "unprivileged user namespaces are off: sysctl -w "
				  "kernel.unprivileged_userns_clone=1");
	if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0)
		return ab_hint(e, "user namespaces are off: sysctl -w user.max_user_namespaces=15000");
	if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
		return ab_hint(e, "AppArmor restricts user namespaces: install an AppArmor profile "
				  "for agentbox or sysctl -w "
				  "kernel.apparmor_restrict_unprivileged_userns=0");
	if (err == ENOSPC || err == EUSERS)
		return ab_hint(e, "the user namespace limit is reached: raise "
				  "user.max_user_namespaces or end other sandboxes");
	return ab_hint(e, "a container's seccomp profile may block them: allow clone with "
			  "CLONE_NEWUSER (or unshare) for this workload");
}

static int write_file(const char *path, const char *text, struct ab_err *e)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t w;

	if (fd < 0)
		return ab_fail(e, errno, "open %s", path);
	w = write(fd, text, len);
	if (w != (ssize_t)len) {
		int err = w < 0 ? errno : EIO;
		close(fd);
		return ab_fail(e, err, "write %s", path);
	}
	if (close(fd) < 0)
		return ab_fail(e, errno, "close %s", path);
	return 0;
}

/* The caller's uid and gid map to themselves inside, or to [sandbox] uid/gid; setgroups is
 * denied. */
static int write_maps(const struct policy *p, const char *proc, uid_t outer_uid, gid_t outer_gid,
		      bool allow_setgroups, struct ab_err *e)
{
	unsigned uid = p->uid >= 0 ? (unsigned)p->uid : (unsigned)outer_uid;
	unsigned gid = p->gid >= 0 ? (unsigned)p->gid : (unsigned)outer_gid;
	char path[64], map[64];

	snprintf(path, sizeof(path), "%s/setgroups", proc);
	/* deny, except for root giving the command other ids: pid 1 must drop root's groups */
	if (write_file(path, allow_setgroups ? "allow" : "deny", e) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/uid_map", proc);
	snprintf(map, sizeof(map), "%u %u 1\n", uid, (unsigned)outer_uid);
	if (write_file(path, map, e) < 0) {
		if (e->errnum == EPERM && outer_uid == 0)
			ab_hint(e, "uid 0 can be mapped only with CAP_SETFCAP (Linux >= 5.12), which a "
				   "sandbox drops; give the outer sandbox [sandbox] uid = 1000, or run it as "
				   "an ordinary user");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/gid_map", proc);
	snprintf(map, sizeof(map), "%u %u 1\n", gid, (unsigned)outer_gid);
	return write_file(path, map, e);
}

static int supervisor_maps(struct run *r, struct ab_err *e)
{
	char proc[32];

	if (!r->maps_by_supervisor)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)r->pid1);
	return write_maps(r->p, proc, r->host_uid, r->host_gid, true, e);
}

static int clone_sandbox(struct run *r, struct ab_err *e)
{
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
			      CLONE_NEWUTS | CLONE_NEWCGROUP;
	pid_t pid;

	if (r->p->net_mode != NET_HOST)
		flags |= CLONE_NEWNET;
	/* fork-like clone (no new stack): the child runs child_main on a copy of this process */
	pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0)
		return userns_diagnose(errno, e);
	if (pid == 0)
		child_main(r);
	r->pid1 = pid;
	close(r->sock[1]);
	r->sock[1] = -1;
	return 0;
}

/* Collects pid 1 if it is gone; returns true with *status and *ru set when it was. */
static bool reap_pid1(struct run *r, int *status, struct rusage *ru)
{
	pid_t w = wait4(r->pid1, status, WNOHANG, ru);
	return w == r->pid1;
}

/* Without a pid namespace the sandbox is the command's process group. */
static void signal_sandbox(const struct run *r, int sig)
{
	kill(r->fallback ? -r->pid1 : r->pid1, sig);
}

static int kill_and_reap(struct run *r)
{
	int status;

	signal_sandbox(r, SIGKILL);
	while (waitpid(r->pid1, &status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* Takes over what came with READY: the seccomp listener and the proxy listeners. */
static int adopt_ready(struct run *r, struct audit *a, const struct msg *m, int *fds, size_t n,
		       struct ab_err *e)
{
	size_t need = (m->value & READY_LISTENER ? 1 : 0) + (m->value & READY_PROXY ? 2 : 0) +
		      (m->value & READY_CAPTURE ? 2 : 0) + (m->value & READY_CAPTURE6 ? 2 : 0) +
		      (m->value & READY_CHANGES ? 1 : 0),
	       i = 0;

	if (n != need) {
		for (size_t k = 0; k < n; k++)
			close(fds[k]);
		return ab_fail(e, EPROTO, "the sandbox passed %zu fds, expected %zu", n, need);
	}
	if ((m->value & READY_UNNAMED) &&
	    warn(a, "seccomp", "an outer sandbox holds the notification listener: refused calls "
			       "are not named", e) < 0)
		goto fail;
	if ((m->value & READY_LISTENER) && seccomp_monitor_open(&r->monitor, fds[i++], r->p,
							   r->cgroup_mode != CGROUP_NONE, e) < 0)
		goto fail;
	if (m->value & READY_PROXY) {
		int pfds[EGRESS_SOCKETS];
		for (int k = 0; k < EGRESS_SOCKETS; k++)
			pfds[k] = -1;
		for (size_t k = 0; k < sizeof(passed_egress) / sizeof(passed_egress[0]); k++) {
			if (!(m->value & passed_egress[k].bit))
				continue;
			pfds[passed_egress[k].slots[0]] = fds[i++];
			pfds[passed_egress[k].slots[1]] = fds[i++];
		}
		if (proxy_start(&r->proxy, r->p, pfds, a, e) < 0)
			goto fail; /* it closed those */
		if (!(m->value & READY_CAPTURE) && r->p->net_capture != CAPTURE_OFF &&
		    warn(a, "capture", "this kernel cannot redirect connections in the sandbox's "
				       "network namespace (nf_tables with NAT): clients that ignore "
				       "the proxy variables get ENETUNREACH", e) < 0)
			goto fail;
	}
	if (m->value & READY_CHANGES)
		r->changes_fs = fds[i++];
	/* overlays with changes-size keep their changes only on that tmpfs */
	if (r->changes && r->p->limits.changes_size && r->changes_fs < 0)
		return ab_fail(e, EPROTO, "the sandbox did not pass the changes' tmpfs"),
		       ab_hint(e, "report this; without [limits] changes-size the changes go to disk");
	return 0;
fail:
	for (; i < n; i++)
		close(fds[i]);
	return -1;
}

/* The supervisor compiles the filter while pid 1 builds the view, and sends it. A failed send
 * means pid 1 is gone (its reason is on the socket for wait_ready) or cannot get the filter:
 * the socket is shut so that pid 1 stops instead of waiting. */
static int send_filter(struct run *r, struct ab_err *e)
{
	struct msg m = {.type = MSG_FILTER};
	struct iovec iov[2] = {{&m, sizeof(m)}, {r->filter->insns, 0}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};

	if (seccomp_export(r->p, r->filter, e) < 0) {
		kill_and_reap(r);
		return -1;
	}
	m.value = r->filter->len;
	iov[1].iov_len = r->filter->len * sizeof(struct sock_filter);
	if (sendmsg(r->sock[0], &mh, MSG_NOSIGNAL) != (ssize_t)(iov[0].iov_len + iov[1].iov_len))
		shutdown(r->sock[0], SHUT_WR);
	return 0;
}

/* Waits for pid 1 to finish setup: READY, or an error (reported), or its death. */
static int wait_ready(struct run *r, struct audit *a, struct ab_err *e)
{
	int fds[MAX_PASSED_FDS];
	size_t n;
	struct msg m;
	int rc = recv_msg_fds(r->sock[0], &m, fds, MAX_PASSED_FDS, &n);

	if (rc == 1 && m.type == MSG_READY) {
		if (adopt_ready(r, a, &m, fds, n, e) == 0)
			return 0;
		kill_and_reap(r);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	if (rc == 1 && m.type == MSG_ERROR) {
		e->errnum = m.value;
		snprintf(e->msg, sizeof(e->msg), "%s", m.text);
		if (m.value == EPERM &&
		    read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
			ab_hint(e, "AppArmor denies this user namespace its capabilities: "
				   "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
	} else {
		ab_fail(e, 0, "the sandbox died during setup");
	}
	kill_and_reap(r);
	return -1;
}

static int set_timer(int tfd, uint64_t ms)
{
	struct itimerspec its = {.it_value = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000}};
	return timerfd_settime(tfd, 0, &its, NULL);
}

struct supervision {
	int tfd;
	int timeout_stage; /* 0: running, 1: SIGTERM sent, 2: SIGKILL sent */
	bool have_exit;
	int cmd_status;
	bool setup_failed; /* pid 1 could not start the command (after READY): e says why */
	bool disk_full;    /* [limits] disk stopped the run */
};

static void on_signal(struct run *r, struct supervision *s, const struct signalfd_siginfo *si)
{
	(void)s;
	if (si->ssi_signo == SIGCHLD)
		return;
	/* with a shared terminal the command already got the keyboard's signals */
	if (si->ssi_code == SI_KERNEL && !r->own_session)
		return;
	kill(r->pid1, (int)si->ssi_signo);
}

static int on_timer(struct run *r, struct supervision *s, struct audit *a, struct ab_err *e)
{
	uint64_t ticks;

	if (read(s->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return ab_fail(e, errno, "timerfd");
	if (s->timeout_stage == 0) {
		struct json *j = audit_begin(a, "limit");
		json_kv_str(j, "limit", "timeout");
		json_kv_uint(j, "timeout_ms", r->p->limits.timeout_ms);
		if (audit_emit(a, e) < 0)
			signal_sandbox(r, SIGKILL);
		s->timeout_stage = 1;
		signal_sandbox(r, SIGTERM);
		return set_timer(s->tfd, SANDBOX_KILL_GRACE_MS) < 0 ? ab_fail(e, errno, "timer") : 0;
	}
	s->timeout_stage = 2;
	signal_sandbox(r, SIGKILL); /* pid 1's death kills every process in the namespace */
	return 0;
}

/* Past the disk budget the run is killed at once: every moment more is written. */
static int on_disk_tick(struct run *r, struct supervision *s, struct audit *a, struct ab_err *e)
{
	uint64_t grown;
	int over = disk_limit_check(r->disk, &grown, e);
	struct json *j;

	if (over <= 0 || s->disk_full)
		return over;
	s->disk_full = true;
	signal_sandbox(r, SIGKILL);
	j = audit_begin(a, "limit");
	json_kv_str(j, "limit", "disk");
	json_kv_uint(j, "size", r->p->limits.disk);
	json_kv_uint(j, "grown", grown);
	return audit_emit(a, e);
}

/* Returns false at end of stream (pid 1 is exiting) or on error: the socket is done. */
static bool on_message(struct run *r, struct supervision *s, struct ab_err *e)
{
	struct msg m;
	int rc = recv_msg(r->sock[0], &m);

	if (rc == 1 && m.type == MSG_EXIT) {
		s->have_exit = true;
		s->cmd_status = m.value;
	}
	if (rc == 1 && m.type == MSG_ERROR) {
		s->setup_failed = true;
		e->errnum = m.value;
		snprintf(e->msg, sizeof(e->msg), "%s", m.text);
	}
	return rc == 1;
}

/* Which rlimit ended the run, judged from how the command died; a shell in between reports
 * its child's death as exit status 128+N. */
static const char *limit_hit(const struct limits *l, int st, const struct rusage *ru)
{
	uint64_t cpu_s = (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec);
	int sig = WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st) > 128 ? WEXITSTATUS(st) - 128 : 0;

	if (sig == SIGXFSZ && l->file_size)
		return "file-size";
	if (l->cpu_s && (sig == SIGXCPU || (sig == SIGKILL && cpu_s >= l->cpu_s)))
		return "cpu";
	return NULL;
}

static void fill_result(const struct run *r, const struct supervision *s, int pid1_status,
			struct sandbox_result *res)
{
	int st = s->have_exit ? s->cmd_status : pid1_status;

	res->limit = s->timeout_stage ? "timeout"
		     : s->disk_full   ? "disk"
				      : limit_hit(&r->p->limits, st, &res->ru);
	if (!res->limit && cgroup_memory_killed(&r->cgroup))
		res->limit = "memory";
	if (s->timeout_stage) {
		res->status = SANDBOX_EXIT_TIMEOUT;
		res->cause = "timeout";
		res->code = SANDBOX_EXIT_TIMEOUT;
	} else if (WIFSIGNALED(st)) {
		res->code = WTERMSIG(st);
		res->status = 128 + res->code;
		res->cause = "signaled";
	} else {
		res->code = WEXITSTATUS(st);
		res->status = res->code;
		res->cause = "exited";
	}
}

static int supervise(struct run *r, struct audit *a, struct sandbox_result *res, struct ab_err *e)
{
	struct supervision s = {.tfd = -1};
	struct timespec t0, t1;
	int status = 0, rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (r->p->limits.timeout_ms) {
		s.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (s.tfd < 0 || set_timer(s.tfd, r->p->limits.timeout_ms) < 0) {
			kill_and_reap(r);
			return ab_fail(e, errno, "cannot arm the timeout");
		}
	}
	struct pollfd fds[6] = {{r->sigfd, POLLIN, 0},
				{r->sock[0], POLLIN, 0},
				{s.tfd, POLLIN, 0},
				{r->monitor ? seccomp_monitor_fd(r->monitor) : -1, POLLIN, 0},
				{r->proxy ? proxy_fd(r->proxy) : -1, POLLIN, 0},
				{r->disk ? disk_limit_fd(r->disk) : -1, POLLIN, 0}};
	for (;;) {
		struct signalfd_siginfo si;

		if (reap_pid1(r, &status, &res->ru))
			break;
		if (poll(fds, 6, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = ab_fail(e, errno, "poll");
			kill_and_reap(r);
			break;
		}
		if ((fds[0].revents & POLLIN) && read(r->sigfd, &si, sizeof(si)) == sizeof(si))
			on_signal(r, &s, &si);
		/* at end of stream the socket stays readable: polling it again would spin while the
		 * kernel tears pid 1's namespaces down, until SIGCHLD says it can be reaped */
		if ((fds[1].revents & POLLIN) && !on_message(r, &s, e))
			fds[1].fd = -1;
		if (fds[2].revents & POLLIN && on_timer(r, &s, a, e) < 0) {
			rc = -1;
			kill_and_reap(r);
			break;
		}
		if ((fds[3].revents & POLLIN) && seccomp_monitor_handle(r->monitor, a, e) < 0) {
			rc = -1;
			kill_and_reap(r);
			break;
		}
		if ((fds[4].revents & POLLIN) && proxy_dispatch(r->proxy, e) < 0) {
			rc = -1; /* the audit trail failed */
			kill_and_reap(r);
			break;
		}
		if ((fds[5].revents & POLLIN) && on_disk_tick(r, &s, a, e) < 0) {
			rc = -1;
			kill_and_reap(r);
			break;
		}
		/* an fd that hung up with nothing left to read is done: polling it again would spin
		 * (the filter's listener once the command is gone, the socket once pid 1 is) until
		 * SIGCHLD says pid 1 can be reaped */
		for (size_t i = 1; i < 6; i++)
			if ((fds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(fds[i].revents & POLLIN))
				fds[i].fd = -1;
	}
	if (r->monitor && seccomp_monitor_flush(r->monitor, a, e) < 0)
		rc = -1;
	while (!s.have_exit && !s.setup_failed &&
	       poll(&(struct pollfd){r->sock[0], POLLIN, 0}, 1, 0) == 1)
		if (!on_message(r, &s, e))
			break;
	if (s.setup_failed)
		rc = -1;
	if (s.tfd >= 0)
		close(s.tfd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->duration_ms = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	fill_result(r, &s, status, res);
	return rc;
}

/* ------------------------------------------------------------- audit ------ */

static int audit_mounts(const struct mount_plan *plan, struct audit *a, struct ab_err *e)
{
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		struct json *j = audit_begin(a, "mount");
		json_kv_str(j, "op", mount_op_name(op->kind));
		json_kv_str(j, "path", op->dest);
		if (op->source)
			json_kv_str(j, "source", op->source);
		if (op->target)
			json_kv_str(j, "target", op->target);
		if (op->upper)
			json_kv_str(j, "changes", op->upper);
		if (op->kind == MOP_TMPFS)
			json_kv_uint(j, "size", op->size);
		json_kv_bool(j, "implicit", op->implicit);
		if (op->why)
			json_kv_str(j, "why", op->why);
		if (op->skipped)
			json_kv_str(j, "skipped", "missing on the host");
		if (op->placeholder)
			json_kv_bool(j, "placeholder", true);
		if (audit_emit(a, e) < 0)
			return -1;
	}
	return 0;
}

static void json_names(struct json *j, const char *key, const struct strv *sv, bool names_only)
{
	json_key(j, key);
	json_arr_begin(j);
	for (size_t i = 0; i < sv->n; i++) {
		if (names_only)
			json_strn(j, sv->v[i], strcspn(sv->v[i], "="));
		else
			json_str(j, sv->v[i]);
	}
	json_arr_end(j);
}

static int audit_env(const struct env_result *env, const struct policy *p, struct audit *a,
		     struct ab_err *e)
{
	struct json *j = audit_begin(a, "env");

	/* names only: values never reach the audit trail */
	json_names(j, "passed", &env->passed, false);
	json_names(j, "set", &p->env_set, true);
	json_names(j, "denied", &env->denied, false);
	return audit_emit(a, e);
}

static void audit_limits(struct json *j, const struct limits *l, enum cgroup_mode mode)
{
	const struct {
		const char *name;
		uint64_t v;
	} all[] = {{"timeout_ms", l->timeout_ms}, {"cpu_s", l->cpu_s},
		   {"memory", l->memory},         {"processes", l->processes},
		   {"open_files", l->open_files}, {"file_size", l->file_size},
		   {"tmpfs_size", l->tmpfs_size}, {"disk", l->disk}};

	json_obj_begin(j);
	json_kv_str(j, "mode", cgroup_mode_name(mode));
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		json_key(j, all[i].name);
		if (all[i].v)
			json_uint(j, all[i].v);
		else
			json_null(j);
	}
	json_obj_end(j);
}

static int audit_start(const struct run *r, struct audit *a, struct ab_err *e)
{
	const struct policy *p = r->p;
	struct json *j = audit_begin(a, "start");
	char *cwd = getcwd(NULL, 0);

	json_kv_str(j, "version", AGENTBOX_VERSION);
	json_key(j, "profiles");
	json_arr_begin(j);
	for (size_t i = 0; i < p->profiles.n; i++) {
		json_obj_begin(j);
		json_kv_str(j, "path", p->profiles.v[i]);
		json_kv_str(j, "sha256", i < p->profile_sha256.n ? p->profile_sha256.v[i] : NULL);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_names(j, "argv", &p->command, false);
	json_kv_str(j, "cwd", cwd);
	free(cwd);
	json_kv_uint(j, "uid", getuid());
	json_key(j, "namespaces");
	json_arr_begin(j);
	if (!r->fallback) {
		json_str(j, "user");
		json_str(j, "mount");
		json_str(j, "pid");
		if (p->net_mode != NET_HOST)
			json_str(j, "net");
		json_str(j, "ipc");
		json_str(j, "uts");
		json_str(j, "cgroup");
	}
	json_arr_end(j);
	json_kv_bool(j, "fallback", r->fallback);
	json_kv_str(j, "network", net_mode_name(p->net_mode));
	json_kv_str(j, "seccomp", seccomp_preset_name(p->seccomp_preset));
	json_key(j, "landlock");
	landlock_describe(r->landlock_abi, j);
	json_kv_str(j, "workdir", r->workdir);
	json_kv_bool(j, "terminal", !r->own_session);
	json_key(j, "limits");
	audit_limits(j, &p->limits, r->cgroup_mode);
	return audit_emit(a, e);
}

static int warn(struct audit *a, const char *what, const char *message, struct ab_err *e)
{
	struct json *j = audit_begin(a, "warning");

	json_kv_str(j, "what", what);
	json_kv_str(j, "message", message);
	return audit_emit(a, e);
}

/* Everything weaker than a careful reader would assume is said in the audit trail. */
static int audit_warnings(const struct run *r, struct audit *a, struct ab_err *e)
{
	const struct policy *p = r->p;
	int rc = 0;

	if (p->seccomp_preset == SECCOMP_PRESET_NONE)
		rc |= warn(a, "seccomp", p->seccomp_deny.n ? "preset none: only the profile's deny list "
							     "is filtered"
							   : "preset none: no system call filter",
			   e);
	if (p->net_mode == NET_HOST)
		rc |= warn(a, "network", "mode host: the host's network is shared, nothing filtered",
			   e);
	if (r->fallback)
		rc |= warn(a, "fallback", "user namespaces are unavailable: fallback = landlock runs "
					  "the command with Landlock, seccomp and rlimits only (no private "
					  "/proc, pid or network namespace; the host's processes are visible; "
					  "hostname, uid/gid and symlink entries do not apply; a process that "
					  "starts its own session escapes the final kill)",
			   e);
	if (p->nesting && !r->fallback)
		rc |= warn(a, "nesting", "nesting = true: the command may create namespaces and "
					 "mounts (inside its own user namespace); Landlock is off",
			   e);
	else if (!r->landlock_abi)
		rc |= warn(a, "landlock", "Landlock is not available: namespaces only", e);
	if ((p->limits.memory || p->limits.processes) && r->cgroup_mode == CGROUP_NONE)
		rc |= warn(a, "limits", "no writable cgroup: memory and processes are rlimits only "
					"(address space; processes per uid, not enforced for root)",
			   e);
	return rc ? -1 : 0;
}

/* ------------------------------------------------------- fallback mode ---- */

/* Can a user namespace with mount rights be made here? Asked only when the profile allows a
 * fallback, so ordinary runs pay nothing for it. */
static bool userns_usable(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, NULL, NULL,
				   NULL, NULL);
	int st = 0;

	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 ? 0 : 1);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* What only a mount namespace can provide is refused, not dropped. */
static int fallback_check(const struct run *r, struct ab_err *e)
{
	for (size_t i = 0; i < r->plan.n; i++) {
		const struct mount_op *op = &r->plan.ops[i];
		if (op->kind == MOP_TMPFS && !op->implicit)
			return ab_fail(e, 0, "tmpfs %s needs a mount namespace, which fallback = "
					     "landlock does not have", op->dest),
			       ab_hint(e, "remove the entry, or run where user namespaces work");
		if (op->kind == MOP_HIDE && mount_plan_binds(&r->plan, op->dest))
			return ab_fail(e, 0, "hide %s cannot be enforced without a mount namespace",
				       op->dest),
			       ab_hint(e, "list only what may be seen, or run where user namespaces "
					  "work");
	}
	return 0;
}

static int fallback_setup(struct run *r, struct ab_err *e)
{
	const struct policy *p = r->p;

	if (chdir(r->workdir) < 0)
		return ab_fail(e, errno, "workdir %s", r->workdir);
	if (limits_apply(&p->limits, e) < 0 || caps_drop(e) < 0 ||
	    landlock_apply_host(&r->plan, r->landlock_abi, r->tmpdir, p->net_mode == NET_NONE, e) < 0)
		return -1;
	return seccomp_install(p, p->net_mode == NET_NONE, &r->listener, &r->seccomp_unnamed, e);
}

static _Noreturn void fallback_child(struct run *r)
{
	struct ab_err e = {0};

	struct msg m;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != r->supervisor)
		_exit(125);
	close_inherited(r->sock[1]);
	/* GO comes once the supervisor has put this process in the run's cgroup */
	if (recv_msg(r->sock[1], &m) != 1 || m.type != MSG_GO)
		_exit(125);
	if (fallback_setup(r, &e) < 0) {
		send_msg(r->sock[1], MSG_ERROR, e.errnum, e.msg);
		_exit(125);
	}
	if (send_ready(r) < 0)
		_exit(125);
	exec_command(r);
}

/* Best effort at the end of a fallback run: what cannot be removed stays in TMPDIR. */
static void remove_tmpdir(const char *path)
{
	struct ab_err ignored = {0};

	fs_remove_tree(AT_FDCWD, path, &ignored);
}

static int run_fallback(struct run *r, struct audit *a, struct sandbox_result *res,
			struct ab_err *e)
{
	char tmpl[PATH_MAX];
	pid_t pid;
	int rc;

	(void)a;
	if (fallback_check(r, e) < 0 || audit_prelude(r, a, e) < 0)
		return -1;
	snprintf(tmpl, sizeof(tmpl), "%s/agentbox-XXXXXX", r->p->vars.tmpdir ? r->p->vars.tmpdir : "/tmp");
	if (!mkdtemp(tmpl) || !(r->tmpdir = strdup(tmpl)))
		return ab_fail(e, errno, "cannot create a private temporary directory in %s",
			       r->p->vars.tmpdir),
		       ab_hint(e, "set TMPDIR to a writable directory");
	if (env_override(&r->env, "TMPDIR", r->tmpdir) < 0 ||
	    (!r->home_visible && env_override(&r->env, "HOME", r->tmpdir) < 0))
		return ab_fail(e, ENOMEM, "environment");
	fprintf(stderr, "agentbox: warning: user namespaces are unavailable; running with "
			"Landlock, seccomp and rlimits only (fallback = landlock)\n");
	r->own_session = true; /* the process group is the sandbox */
	r->supervisor = getpid();
	pid = fork();
	if (pid < 0)
		return ab_fail(e, errno, "fork");
	if (pid == 0)
		fallback_child(r);
	r->pid1 = pid;
	close(r->sock[1]);
	r->sock[1] = -1;
	if (cgroup_apply(&r->cgroup, r->cgroup_mode, &r->p->limits, pid, audit_run_id(a), e) < 0 ||
	    send_msg(r->sock[0], MSG_GO, 0, NULL) < 0) {
		if (!e->msg[0])
			ab_fail(e, errno, "cannot start the sandbox");
		kill_and_reap(r);
		return -1;
	}
	if (wait_ready(r, a, e) < 0)
		return -1;
	rc = supervise(r, a, res, e);
	signal_sandbox(r, SIGKILL); /* stragglers in the process group */
	return rc;
}

/* ------------------------------------------------------------- a run ------ */

static int set_env(void *ctx, const char *name, const char *value)
{
	return env_override(ctx, name, value);
}

static int prepare(struct run *r, const struct mount_protect *protect, struct audit *a,
		   struct ab_err *e)
{
	const struct policy *p = r->p;
	const char *cwd = p->vars.cwd, *home = p->vars.home;

	if (egress_prepare(p, e) < 0 || seccomp_prepare(p, e) < 0 ||
	    mount_plan_build(p, protect, &r->plan, e) < 0)
		return -1;
	/* the default workdir is the caller's cwd when the view shows it, else / */
	r->workdir = strdup(p->workdir ? p->workdir
				       : (cwd && mount_plan_shows(&r->plan, cwd) ? cwd : "/"));
	if (!r->workdir)
		return ab_fail(e, ENOMEM, "workdir");
	r->home_visible = home && mount_plan_shows(&r->plan, home);
	if (!r->home_visible)
		home = "/tmp";
	if (p->fallback == FALLBACK_LANDLOCK && !userns_usable())
		r->fallback = true;
	if (r->fallback && overlay_in_plan(&r->plan))
		return ab_fail(e, 0,
			       "[filesystem] overlay needs user namespaces, which this host "
			       "does not allow"),
		       ab_hint(e,
			       "allow unprivileged user namespaces, or use rw instead of overlay");
	if (overlay_prepare(p, audit_run_id(a), &r->plan, &r->changes, &r->changes_lock, e) < 0 ||
	    (!r->fallback && protect_prepare(&r->plan, &r->protect, e) < 0) ||
	    disk_limit_open(&r->plan, p->limits.disk, &r->disk, e) < 0)
		return -1;
	/* Landlock forbids mount changes to everything below it: no nested sandbox under it.
	 * Without namespaces (fallback) Landlock is the confinement, nesting or not. */
	r->landlock_abi = p->nesting && !r->fallback ? 0 : landlock_abi();
	/* root that gives the command other ids gives it those ids on the host too: the command
	 * is then not root anywhere */
	r->maps_by_supervisor = r->outer_uid == 0 && (p->uid >= 0 || p->gid >= 0);
	r->host_uid = r->maps_by_supervisor && p->uid >= 0 ? (uid_t)p->uid : r->outer_uid;
	r->host_gid = r->maps_by_supervisor && p->gid >= 0 ? (gid_t)p->gid : r->outer_gid;
	r->plan.guard_proc = r->host_uid == 0;
	r->plan.limit_userns = !p->nesting;
	r->cgroup_mode = cgroup_probe(&p->limits);
	if (env_build(p, environ, home, audit_run_id(a), &r->env, e) < 0)
		return -1;
	/* in proxy mode the command is pointed at the proxy, whatever the profile passed */
	if (p->net_mode == NET_PROXY && egress_proxy_env(set_env, &r->env) < 0)
		return ab_fail(e, ENOMEM, "environment");
	/* a shared terminal is safe only while the filter refuses TIOCSTI and TIOCLINUX */
	r->own_session = !isatty(STDIN_FILENO) || !seccomp_blocks_tty_injection(p);
	return 0;
}

/* The run's first events. Written once the sandbox is cloned, while pid 1 builds the view. */
static int audit_prelude(const struct run *r, struct audit *a, struct ab_err *e)
{
	if (audit_start(r, a, e) < 0 || audit_warnings(r, a, e) < 0 ||
	    audit_mounts(&r->plan, a, e) < 0 || audit_env(&r->env, r->p, a, e) < 0)
		return -1;
	return 0;
}

static int open_channels(struct run *r, struct ab_err *e)
{
	sigemptyset(&r->sigs);
	sigaddset(&r->sigs, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&r->sigs, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &r->sigs, &r->oldmask) < 0)
		return ab_fail(e, errno, "sigprocmask");
	r->sigfd = signalfd(-1, &r->sigs, SFD_CLOEXEC);
	if (r->sigfd < 0)
		return ab_fail(e, errno, "signalfd");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, r->sock) < 0)
		return ab_fail(e, errno, "socketpair");
	return 0;
}

static void close_run(struct run *r)
{
	mount_plan_free(&r->plan);
	env_result_free(&r->env);
	free(r->workdir);
	for (int i = 0; i < 2; i++)
		if (r->sock[i] >= 0)
			close(r->sock[i]);
	if (r->sigfd >= 0)
		close(r->sigfd);
	seccomp_monitor_close(r->monitor);
	disk_limit_close(r->disk);
	proxy_stop(r->proxy);
	cgroup_release(&r->cgroup);
	if (r->tmpdir) {
		remove_tmpdir(r->tmpdir);
		free(r->tmpdir);
	}
	if (r->changes)
		fprintf(stderr,
			"agentbox: the overlay's changes are in %s (agentbox changes|diff|"
			"promote|discard %s)\n",
			r->changes, r->changes);
	free(r->changes);
	if (r->changes_lock >= 0)
		close(r->changes_lock);
	if (r->changes_fs >= 0)
		close(r->changes_fs);
	protect_release(&r->protect);
	sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
}

int sandbox_run(const struct policy *p, struct audit *a, const struct mount_protect *protect,
		struct sandbox_result *res, struct ab_err *e)
{
	struct run r = {.p = p,
			.sock = {-1, -1},
			.sigfd = -1,
			.listener = -1,
			.proxy_fds = {-1, -1, -1, -1, -1, -1},
			.changes_lock = -1,
			.changes_fs = -1,
			.outer_uid = getuid(),
			.outer_gid = getgid(),
			.filter = &filter_buffer};
	int rc = -1;

	sigprocmask(SIG_SETMASK, NULL, &r.oldmask);
	/* the CLI blocks SIGPIPE for its audit writes; the command starts with it as usual */
	sigdelset(&r.oldmask, SIGPIPE);
	if (prepare(&r, protect, a, e) < 0 || open_channels(&r, e) < 0)
		goto out;
	if (r.fallback) {
		rc = run_fallback(&r, a, res, e);
		goto out;
	}
	if (clone_sandbox(&r, e) < 0)
		goto out;
	if (audit_prelude(&r, a, e) < 0) {
		kill_and_reap(&r);
		goto out;
	}
	if ((r.cgroup_mode != CGROUP_NONE || r.maps_by_supervisor) &&
	    (supervisor_maps(&r, e) < 0 ||
	     cgroup_apply(&r.cgroup, r.cgroup_mode, &p->limits, r.pid1, audit_run_id(a), e) < 0 ||
	     send_msg(r.sock[0], MSG_GO, 0, NULL) < 0)) {
		if (!e->msg[0])
			ab_fail(e, errno, "cannot start the sandbox");
		kill_and_reap(&r);
		goto out;
	}
	if (send_filter(&r, e) < 0 || wait_ready(&r, a, e) < 0)
		goto out;
	rc = supervise(&r, a, res, e);
	/* changes-size: the upper layers were on a tmpfs; whatever ended the run, keep them */
	if (r.changes_fs >= 0 &&
	    overlay_save(r.changes, r.changes_fs, p->limits.changes_size, a, e) < 0)
		rc = -1;
out:
	close_run(&r);
	return rc;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The supervisor while the sandbox runs (see include/supervise.h). */
#include "supervise.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "run_audit.h"
#include "userns.h"

/* Collects pid 1 if it is gone; returns true with *status and *ru set when it was. */
static bool reap_pid1(struct run *r, int *status, struct rusage *ru)
{
	pid_t w = wait4(r->pid1, status, WNOHANG, ru);
	return w == r->pid1;
}

/* Without a pid namespace the sandbox is the command's process group. */
void supervise_signal(const struct run *r, int sig)
{
	kill(r->fallback ? -r->pid1 : r->pid1, sig);
}

int supervise_kill(struct run *r)
{
	int status;

	supervise_signal(r, SIGKILL);
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
	    run_audit_warn(a, "seccomp",
			   "an outer sandbox holds the notification listener: refused calls "
			   "are not named",
			   e) < 0)
		goto fail;
	if ((m->value & READY_LISTENER) &&
	    seccomp_monitor_open(&r->monitor, fds[i++], r->p, r->cgroup_mode != CGROUP_NONE, e) < 0)
		goto fail;
	if (m->value & READY_PROXY) {
		int pfds[EGRESS_SOCKETS];
		for (int k = 0; k < EGRESS_SOCKETS; k++)
			pfds[k] = -1;
		for (size_t k = 0; k < CHANNEL_N_PASSED_EGRESS; k++) {
			if (!(m->value & channel_passed_egress[k].bit))
				continue;
			pfds[channel_passed_egress[k].slots[0]] = fds[i++];
			pfds[channel_passed_egress[k].slots[1]] = fds[i++];
		}
		if (proxy_start(&r->proxy, r->p, pfds, r->tls_ca, r->creds, a, e) < 0)
			goto fail; /* it closed those */
		if (!(m->value & READY_CAPTURE) && r->p->net_capture != CAPTURE_OFF &&
		    run_audit_warn(a, "capture",
				   "this kernel cannot redirect connections in the sandbox's "
				   "network namespace (nf_tables with NAT): clients that ignore "
				   "the proxy variables get ENETUNREACH",
				   e) < 0)
			goto fail;
	}
	if (m->value & READY_CHANGES)
		r->changes_fs = fds[i++];
	/* overlays with changes-size keep their changes only on that tmpfs */
	if (r->changes && r->p->limits.changes_size && r->changes_fs < 0)
		return ab_fail(e, EPROTO, "the sandbox did not pass the changes' tmpfs"),
		       ab_hint(e,
			       "report this; without [limits] changes-size the changes go to disk");
	return 0;
fail:
	for (; i < n; i++)
		close(fds[i]);
	return -1;
}

/* The supervisor compiles the filter while pid 1 builds the view, and sends it; the
 * precompiled one pid 1 has in its own copy of the binary, so only its length is sent. A
 * failed send means pid 1 is gone (its reason is on the socket for wait_ready) or cannot get
 * the filter: the socket is shut so that pid 1 stops instead of waiting. */
int supervise_send_filter(struct run *r, struct ab_err *e)
{
	const struct seccomp_precompiled *pre = seccomp_builtin(r->p);
	struct msg m = {.type = pre ? MSG_FILTER_BUILTIN : MSG_FILTER};
	struct iovec iov[2] = {{&m, sizeof(m)}, {r->filter->insns, 0}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};

	if (pre) {
		m.value = pre->len;
	} else if (seccomp_compile(r->p, r->filter, e) < 0) {
		supervise_kill(r);
		return -1;
	} else {
		m.value = r->filter->len;
		iov[1].iov_len = r->filter->len * sizeof(struct sock_filter);
	}
	if (sendmsg(r->sock[0], &mh, MSG_NOSIGNAL) != (ssize_t)(iov[0].iov_len + iov[1].iov_len))
		shutdown(r->sock[0], SHUT_WR);
	return 0;
}

/* Waits for pid 1 to finish setup: READY, or an error (reported), or its death. */
int supervise_wait_ready(struct run *r, struct audit *a, struct ab_err *e)
{
	int fds[MAX_PASSED_FDS];
	size_t n;
	struct msg m;
	int rc = channel_recv_fds(r->sock[0], &m, fds, MAX_PASSED_FDS, &n);

	if (rc == 1 && m.type == MSG_READY) {
		if (adopt_ready(r, a, &m, fds, n, e) == 0)
			return 0;
		supervise_kill(r);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	if (rc == 1 && m.type == MSG_ERROR) {
		e->errnum = m.value;
		snprintf(e->msg, sizeof(e->msg), "%s", m.text);
		if (m.value == EPERM)
			userns_apparmor_hint(e);
	} else {
		ab_fail(e, 0, "the sandbox died during setup");
	}
	supervise_kill(r);
	return -1;
}

static int set_timer(int tfd, uint64_t ms)
{
	struct itimerspec its = {.it_value = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000}};
	return timerfd_settime(tfd, 0, &its, NULL);
}

/* The supervisor's poll set, one slot for each thing it answers; a slot whose fd is -1 is not
 * polled (no such thing in this run, or one that is done). */
enum watch_slot {
	WATCH_SIGNALS, /* the signalfd: signals to relay to the sandbox */
	WATCH_PID1,    /* the socket to pid 1: its EXIT or a late setup error */
	WATCH_TIMEOUT, /* [limits] timeout's timerfd */
	WATCH_SECCOMP, /* the filter's notification listener */
	WATCH_PROXY,   /* the egress proxy's epoll fd */
	WATCH_DISK,    /* [limits] disk's timer */
	WATCH_PROTECT, /* the protected paths an rw tree lacks (inotify) */
	WATCH_SLOTS
};

struct supervision {
	int tfd;
	int timeout_stage; /* 0: running, 1: SIGTERM sent, 2: SIGKILL sent */
	bool have_exit;
	int cmd_status;
	bool setup_failed; /* pid 1 could not start the command (after READY): e says why */
	bool disk_full;	   /* [limits] disk stopped the run */
	/* pid 1's word with the exit when the command never ran (its cwd, not found, not
	 * executable): the result's start-error */
	char never_ran[AB_ERR_MAX];
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
			supervise_signal(r, SIGKILL);
		s->timeout_stage = 1;
		supervise_signal(r, SIGTERM);
		return set_timer(s->tfd, SANDBOX_KILL_GRACE_MS) < 0 ? ab_fail(e, errno, "timer")
								    : 0;
	}
	s->timeout_stage = 2;
	supervise_signal(r, SIGKILL); /* pid 1's death kills every process in the namespace */
	return 0;
}

/* Past the disk budget the run is killed at once: every moment more is written. */
int supervise_disk_tick(struct run *r, bool *full, struct audit *a, struct ab_err *e)
{
	uint64_t grown;
	int over = disk_limit_check(r->disk, &grown, e);
	struct json *j;

	if (over <= 0 || *full)
		return over;
	*full = true;
	supervise_signal(r, SIGKILL);
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
	int rc = channel_recv(r->sock[0], &m);

	if (rc == 1 && m.type == MSG_EXIT) {
		s->have_exit = true;
		s->cmd_status = m.value;
		snprintf(s->never_ran, sizeof(s->never_ran), "%s", m.text);
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
	int sig = WIFSIGNALED(st)	  ? WTERMSIG(st)
		  : WEXITSTATUS(st) > 128 ? WEXITSTATUS(st) - 128
					  : 0;

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
	supervise_status(st, s->timeout_stage != 0, res);
	/* agentbox's side, not the command's own exit 125/126/127 */
	if (s->never_ran[0] && !s->timeout_stage) {
		res->cause = "start-error";
		snprintf(res->error, sizeof(res->error), "%s", s->never_ran);
	}
}

void supervise_status(int st, bool timed_out, struct sandbox_result *res)
{
	if (timed_out) {
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

/* Answers each slot of the poll set that is ready; -1 when the run must stop (e says why). */
static int answer_slots(struct run *r, struct supervision *s, struct pollfd fds[WATCH_SLOTS],
			struct audit *a, struct ab_err *e)
{
	struct signalfd_siginfo si;

	if ((fds[WATCH_SIGNALS].revents & POLLIN) && read(r->sigfd, &si, sizeof(si)) == sizeof(si))
		on_signal(r, s, &si);
	/* at end of stream the socket stays readable: polling it again would spin while the
	 * kernel tears pid 1's namespaces down, until SIGCHLD says it can be reaped */
	if ((fds[WATCH_PID1].revents & POLLIN) && !on_message(r, s, e))
		fds[WATCH_PID1].fd = -1;
	if ((fds[WATCH_TIMEOUT].revents & POLLIN) && on_timer(r, s, a, e) < 0)
		return -1;
	if ((fds[WATCH_SECCOMP].revents & POLLIN) && seccomp_monitor_handle(r->monitor, a, e) < 0)
		return -1;
	if ((fds[WATCH_PROXY].revents & POLLIN) && proxy_dispatch(r->proxy, e) < 0)
		return -1; /* the audit trail failed */
	if ((fds[WATCH_DISK].revents & POLLIN) && supervise_disk_tick(r, &s->disk_full, a, e) < 0)
		return -1;
	if ((fds[WATCH_PROTECT].revents & POLLIN) && protect_watch_check(r->watch, a, e) < 0)
		return -1; /* a protected path appeared: the run stops */
	/* an fd that hung up with nothing left to read is done: polling it again would spin (the
	 * filter's listener once the command is gone, the socket once pid 1 is) until SIGCHLD says
	 * pid 1 can be reaped. The signals are relayed to the end. */
	for (size_t i = WATCH_PID1; i < WATCH_SLOTS; i++)
		if ((fds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(fds[i].revents & POLLIN))
			fds[i].fd = -1;
	return 0;
}

int supervise_run(struct run *r, struct audit *a, struct sandbox_result *res, struct ab_err *e)
{
	struct supervision s = {.tfd = -1};
	struct timespec t0, t1;
	int status = 0, rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (r->p->limits.timeout_ms) {
		s.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (s.tfd < 0 || set_timer(s.tfd, r->p->limits.timeout_ms) < 0) {
			supervise_kill(r);
			return ab_fail(e, errno, "cannot arm the timeout");
		}
	}
	struct pollfd fds[WATCH_SLOTS] = {
	    [WATCH_SIGNALS] = {r->sigfd, POLLIN, 0},
	    [WATCH_PID1] = {r->sock[0], POLLIN, 0},
	    [WATCH_TIMEOUT] = {s.tfd, POLLIN, 0},
	    [WATCH_SECCOMP] = {r->monitor ? seccomp_monitor_fd(r->monitor) : -1, POLLIN, 0},
	    [WATCH_PROXY] = {r->proxy ? proxy_fd(r->proxy) : -1, POLLIN, 0},
	    [WATCH_DISK] = {r->disk ? disk_limit_fd(r->disk) : -1, POLLIN, 0},
	    [WATCH_PROTECT] = {r->watch ? protect_watch_fd(r->watch) : -1, POLLIN, 0}};
	for (;;) {
		if (reap_pid1(r, &status, &res->ru))
			break;
		if (poll(fds, WATCH_SLOTS, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = ab_fail(e, errno, "poll");
			supervise_kill(r);
			break;
		}
		if (answer_slots(r, &s, fds, a, e) < 0) {
			rc = -1;
			supervise_kill(r);
			break;
		}
	}
	if (r->monitor && seccomp_monitor_flush(r->monitor, a, e) < 0)
		rc = -1;
	if (r->proxy && proxy_settle(r->proxy, e) < 0)
		rc = -1;
	/* whatever ended the run, what appeared last is renamed aside; it stops the run as one only
	 * when nothing else did */
	if (r->watch) {
		struct ab_err late = {0};
		if (protect_watch_settle(r->watch, a, rc < 0 ? &late : e) < 0 && rc == 0)
			rc = -1;
	}
	while (!s.have_exit && !s.setup_failed &&
	       poll(&(struct pollfd){r->sock[0], POLLIN, 0}, 1, 0) == 1)
		if (!on_message(r, &s, e))
			break;
	if (s.setup_failed)
		rc = -1;
	if (s.tfd >= 0)
		close(s.tfd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->duration_ms =
	    (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	fill_result(r, &s, status, res);
	return rc;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The supervisor's side of the system call filter: it answers the filter's notifications,
 * names each refused call in the audit trail, and lets through what the run may have after
 * all (see seccomp_uncounted_memory). */
#include "seccomp_monitor.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp.h"

#define MONITOR_KEYS 128

/* Linux 6.6: wake the supervisor synchronously (same CPU) for lower notification latency. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW('!', 4, uint64_t)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1ull
#endif

/* One kind of violation: the same call with the same interesting argument. */
struct violation {
	int nr;
	uint64_t arg;
	uint64_t count; /* occurrences after the first, which was written at once */
	int last_pid;
	long exec; /* a session's attribution (seccomp_attrib_fn), -2 outside sessions */
};

struct seccomp_monitor {
	int fd;
	bool kill;
	bool strict;	       /* calls off the allowlist answer ENOSYS, explicit denials EPERM */
	bool memory_uncounted; /* a memory limit no cgroup counts: uncounted_memory refused */
	uint64_t shared_left;  /* then: what shared anonymous mappings may still take */
	const struct strv *deny;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size; /* the kernel's sizes, at least the header's */
	struct violation seen[MONITOR_KEYS];
	size_t n_seen;
	uint64_t overflow; /* violations past MONITOR_KEYS distinct kinds */
	seccomp_attrib_fn attrib;
	void *attrib_ctx;
};

/* The buffers as large as this kernel's structures, which may have grown past the header's.
 * The ioctls are called directly: libseccomp's notify calls first probe the whole API (ten
 * system calls at every start, for a run that may never see a notification). */
static int alloc_buffers(struct seccomp_monitor *m)
{
	struct seccomp_notif_sizes sz = {0};

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		return -1;
	m->req_size = sz.seccomp_notif > sizeof(*m->req) ? sz.seccomp_notif : sizeof(*m->req);
	m->resp_size =
	    sz.seccomp_notif_resp > sizeof(*m->resp) ? sz.seccomp_notif_resp : sizeof(*m->resp);
	m->req = calloc(1, m->req_size);
	m->resp = calloc(1, m->resp_size);
	if (!m->req || !m->resp) {
		free(m->req);
		free(m->resp);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The answer to the notification in m->req: flags (CONTINUE) or an error; the caller may be
 * gone already (ENOENT), and nothing is to be done about that. */
static void respond(const struct seccomp_monitor *m, uint32_t flags, int error)
{
	memset(m->resp, 0, m->resp_size);
	m->resp->id = m->req->id;
	m->resp->flags = flags;
	m->resp->error = error;
	(void)ioctl(m->fd, SECCOMP_IOCTL_NOTIF_SEND, m->resp);
}

int seccomp_monitor_open(struct seccomp_monitor **out, int listener, const struct policy *p,
			 bool memory_counted, struct ab_err *e)
{
	struct seccomp_monitor *m = calloc(1, sizeof(*m));

	if (!m)
		return ab_fail(e, ENOMEM, "seccomp monitor");
	m->fd = listener;
	m->kill = p->seccomp_action == SECCOMP_ACTION_KILL;
	m->strict = p->seccomp_preset == SECCOMP_PRESET_STRICT;
	m->memory_uncounted = p->limits.memory && !memory_counted;
	m->shared_left = p->limits.memory;
	m->deny = &p->seccomp_deny;
	/* an optimisation only: older kernels answer EINVAL and keep working */
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	if (alloc_buffers(m) < 0) {
		int err = errno;
		free(m);
		return ab_fail(e, err, "seccomp notification buffers");
	}
	*out = m;
	return 0;
}

int seccomp_monitor_fd(const struct seccomp_monitor *m)
{
	return m->fd;
}

/* The argument that tells violations of one call apart (and is safe to log). */
static int key_arg(const char *name)
{
	if (!strcmp(name, "socket") || !strcmp(name, "clone") || !strcmp(name, "unshare") ||
	    !strcmp(name, "personality"))
		return 0;
	if (!strcmp(name, "ioctl"))
		return 1;
	if (!strcmp(name, "mmap")) /* its flags */
		return 3;
	return -1;
}

/* What one syscall audit event says. */
struct violation_event {
	const char *name;
	int nr, pid;
	int argi; /* which argument is logged, -1 for none */
	uint64_t arg;
	uint64_t count;
	bool repeat; /* a summary of repeats after the first event */
	bool kill;
	int err;   /* the errno answered */
	long exec; /* see struct violation */
};

void seccomp_monitor_attribute(struct seccomp_monitor *m, seccomp_attrib_fn fn, void *ctx)
{
	m->attrib = fn;
	m->attrib_ctx = ctx;
}

static int audit_violation(struct audit *a, const struct violation_event *v, struct ab_err *e)
{
	struct json *j = audit_begin(a, "syscall");

	json_kv_str(j, "name", v->name);
	json_kv_int(j, "nr", v->nr);
	json_kv_int(j, "pid", v->pid);
	if (v->argi >= 0) {
		json_key(j, "args");
		json_obj_begin(j);
		char key[4] = {'a', (char)('0' + v->argi), '\0'};
		json_kv_uint(j, key, v->arg);
		json_obj_end(j);
	}
	json_kv_str(j, "action", v->kill ? "kill" : "errno");
	if (!v->kill)
		json_kv_str(j, "errno",
			    v->err == ENOSYS   ? "ENOSYS"
			    : v->err == ENOMEM ? "ENOMEM"
					       : "EPERM");
	json_kv_uint(j, "count", v->count);
	json_kv_bool(j, "repeat", v->repeat);
	audit_kv_exec(j, v->exec);
	return audit_emit(a, e);
}

/* Returns the entry for this violation, or NULL when it is the first of its kind. */
static struct violation *remember(struct seccomp_monitor *m, int nr, uint64_t arg, int pid,
				  long exec)
{
	for (size_t i = 0; i < m->n_seen; i++) {
		if (m->seen[i].nr == nr && m->seen[i].arg == arg && m->seen[i].exec == exec) {
			m->seen[i].count++;
			m->seen[i].last_pid = pid;
			return &m->seen[i];
		}
	}
	if (m->n_seen < MONITOR_KEYS)
		m->seen[m->n_seen++] = (struct violation){nr, arg, 0, pid, exec};
	else
		m->overflow++;
	return NULL;
}

static int answer_errno(const struct seccomp_monitor *m, const char *name)
{
	if (!strcmp(name, "mmap")) /* a shared anonymous mapping past the limit */
		return ENOMEM;
	if (seccomp_uncounted_memory(name))
		return ENOSYS;
	if (seccomp_mode_filtered(name)) /* allowed calls refused for their mode argument */
		return EPERM;
	return m->strict && !strv_has(m->deny, name) ? ENOSYS : EPERM;
}

/* Uncounted memory the run may have after all: its cgroup counts it, or there is no memory
 * limit; under strict, only what the allowlist has (memfd_create, mmap). The decision rests on
 * the call's number and, for mmap, its flags as the filter saw them in a register: letting the
 * kernel go on with it races with nothing. */
static bool lets_through(const struct seccomp_monitor *m, const char *name)
{
	if (m->memory_uncounted || !seccomp_uncounted_memory(name) || strv_has(m->deny, name))
		return false;
	return !m->strict || !strcmp(name, "memfd_create") || !strcmp(name, "mmap");
}

/* A shared anonymous mapping under a memory limit no cgroup counts: let through while the run's
 * such mappings so far stay within the limit, all processes together (small ones for counters
 * between processes are common; an unmap is not seen, so what was mapped stays counted). Its
 * length is a register the kernel goes on with, as the flags are. */
static bool shared_within_budget(struct seccomp_monitor *m, const char *name,
				 const struct seccomp_notif *req)
{
	uint64_t len = req->data.args[1];

	if (!m->memory_uncounted || strcmp(name, "mmap") || strv_has(m->deny, name) ||
	    len > m->shared_left)
		return false;
	m->shared_left -= len;
	return true;
}

int seccomp_monitor_handle(struct seccomp_monitor *m, struct audit *a, struct ab_err *e)
{
	struct seccomp_notif *req = m->req;
	const char *name;
	char *owned;
	int argi, err, rc = 0;
	uint64_t arg;
	long exec;

	memset(req, 0, m->req_size); /* the kernel refuses a buffer that is not zeroed */
	if (ioctl(m->fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
		return 0; /* the caller died meanwhile (ENOENT) or a signal interrupted it */
	owned = seccomp_syscall_resolve_num_arch(req->data.arch, req->data.nr);
	name = owned ? owned : "unknown";
	if (lets_through(m, name) || shared_within_budget(m, name, req)) {
		respond(m, SECCOMP_USER_NOTIF_FLAG_CONTINUE, 0);
		free(owned);
		return 0;
	}
	audit_denied(a, "syscall"); /* each refusal, though repeats share one event */
	argi = key_arg(name);
	arg = argi >= 0 ? req->data.args[argi] : 0;
	err = answer_errno(m, name);
	/* placed while the caller waits in the call: its parent chain is still what it was */
	exec = m->attrib ? m->attrib(m->attrib_ctx, (int)req->pid) : -2;
	if (!remember(m, req->data.nr, arg, (int)req->pid, exec)) {
		struct violation_event v = {.name = name,
					    .nr = req->data.nr,
					    .pid = (int)req->pid,
					    .argi = argi,
					    .arg = arg,
					    .count = 1,
					    .kill = m->kill,
					    .err = err,
					    .exec = exec};
		rc = audit_violation(a, &v, e);
	}
	if (m->kill)
		kill((pid_t)req->pid, SIGKILL);
	respond(m, 0, -err);
	free(owned);
	return rc;
}

int seccomp_monitor_flush(struct seccomp_monitor *m, struct audit *a, struct ab_err *e)
{
	int rc = 0;

	for (size_t i = 0; i < m->n_seen; i++) {
		const struct violation *seen = &m->seen[i];
		char *name;
		if (!seen->count)
			continue;
		name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, seen->nr);
		struct violation_event v = {.name = name ? name : "unknown",
					    .nr = seen->nr,
					    .pid = seen->last_pid,
					    .argi = key_arg(name ? name : ""),
					    .arg = seen->arg,
					    .count = seen->count,
					    .repeat = true,
					    .kill = m->kill,
					    .err = answer_errno(m, name ? name : ""),
					    .exec = seen->exec};
		if (audit_violation(a, &v, e) < 0)
			rc = -1;
		free(name);
	}
	if (m->overflow) {
		struct json *j = audit_begin(a, "syscall");
		json_kv_str(j, "name", "other");
		json_kv_uint(j, "count", m->overflow);
		if (audit_emit(a, e) < 0)
			rc = -1;
	}
	return rc;
}

void seccomp_monitor_close(struct seccomp_monitor *m)
{
	if (!m)
		return;
	free(m->req);
	free(m->resp);
	close(m->fd);
	free(m);
}

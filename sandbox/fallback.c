/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The run without namespaces (see include/fallback.h). */
#include "fallback.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "caps.h"
#include "channel.h"
#include "fsops.h"
#include "landlock.h"
#include "pid1.h"
#include "rlimits.h"
#include "run_audit.h"
#include "supervise.h"

/* What only a mount namespace can provide is refused, not dropped. */
static int fallback_check(const struct run *r, struct ab_err *e)
{
	for (size_t i = 0; i < r->plan.n; i++) {
		const struct mount_op *op = &r->plan.ops[i];
		if (op->kind == MOP_TMPFS && !op->implicit)
			return ab_fail(e, 0,
				       "tmpfs %s needs a mount namespace, which fallback = "
				       "landlock does not have",
				       op->dest),
			       ab_hint(e, "remove the entry, or run where user namespaces work");
		if (op->kind == MOP_TRUST)
			return ab_fail(e, 0,
				       "[http] rules need a mount namespace to show the run's CA "
				       "(%s), which fallback = landlock does not have",
				       op->dest),
			       ab_hint(e, "remove the [http] rules, or run where user namespaces "
					  "work");
		if (op->kind == MOP_HIDE && mount_plan_binds(&r->plan, op->dest))
			return ab_fail(e, 0, "hide %s cannot be enforced without a mount namespace",
				       op->dest),
			       ab_hint(e,
				       "list only what may be seen, or run where user namespaces "
				       "work");
	}
	/* the proxy filters only a network namespace whose sole way out it is: on the host's
	 * network the command would reach everything directly, whatever the rules say */
	if (r->p->net_mode == NET_PROXY)
		return ab_fail(e, 0,
			       "[network] mode = proxy needs a network namespace, which fallback = "
			       "landlock does not have"),
		       ab_hint(e, "use [network] mode = none, or run where user namespaces work");
	return 0;
}

static int fallback_setup(struct run *r, struct ab_err *e)
{
	const struct policy *p = r->p;

	if (chdir(r->workdir) < 0)
		return ab_fail(e, errno, "workdir %s", r->workdir);
	if (limits_apply(&p->limits, e) < 0 || caps_drop(e) < 0 ||
	    landlock_apply_host(&r->plan, r->landlock_abi, r->tmpdir, p->net_mode == NET_NONE, e) <
		0)
		return -1;
	return seccomp_install(p, p->net_mode == NET_NONE, &r->listener, &r->seccomp_unnamed, e);
}

static _Noreturn void fallback_child(struct run *r)
{
	struct ab_err e = {0};

	struct msg m;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != r->supervisor)
		_exit(125);
	pid1_close_inherited(r->sock[1]);
	/* GO comes once the supervisor has put this process in the run's cgroup */
	if (channel_recv(r->sock[1], &m) != 1 || m.type != MSG_GO)
		_exit(125);
	if (fallback_setup(r, &e) < 0) {
		channel_send(r->sock[1], MSG_ERROR, e.errnum, e.msg);
		_exit(125);
	}
	if (pid1_send_ready(r) < 0)
		_exit(125);
	pid1_exec_command(r);
}

void fallback_remove_tmpdir(const char *path)
{
	struct ab_err ignored = {0};

	fs_remove_tree(AT_FDCWD, path, &ignored);
}

int fallback_run(struct run *r, struct audit *a, struct sandbox_result *res, struct ab_err *e)
{
	char tmpl[PATH_MAX];
	pid_t pid;
	int rc;

	(void)a;
	if (fallback_check(r, e) < 0 || run_audit_prelude(r, a, e) < 0)
		return -1;
	snprintf(tmpl, sizeof(tmpl), "%s/agentbox-XXXXXX",
		 r->p->vars.tmpdir ? r->p->vars.tmpdir : "/tmp");
	if (!mkdtemp(tmpl) || !(r->tmpdir = strdup(tmpl)))
		return ab_fail(e, errno, "cannot create a private temporary directory in %s",
			       r->p->vars.tmpdir),
		       ab_hint(e, "set TMPDIR to a writable directory");
	if (env_override(&r->env, "TMPDIR", r->tmpdir) < 0 ||
	    (!r->home_visible && env_override(&r->env, "HOME", r->tmpdir) < 0))
		return ab_fail(e, ENOMEM, "environment");
	ab_say("warning: user namespaces are unavailable; running with "
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
	    channel_send(r->sock[0], MSG_GO, 0, NULL) < 0) {
		if (!e->msg[0])
			ab_fail(e, errno, "cannot start the sandbox");
		supervise_kill(r);
		return -1;
	}
	if (supervise_wait_ready(r, a, e) < 0)
		return -1;
	rc = supervise_run(r, a, res, e);
	supervise_signal(r, SIGKILL); /* stragglers in the process group */
	return rc;
}

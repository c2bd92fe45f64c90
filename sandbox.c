/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The story of a run, top to bottom:
 *   plan the view (prepare) → clone into new namespaces → write the id maps → pid 1 sets up the
 *   view and confinement and forks the command (pid1.c) → the supervisor relays signals and
 *   enforces the limits (supervise.c) → pid 1 reports the command's status and exits, taking
 *   the pid namespace with it. Without user namespaces, fallback.c tells the same story.
 * The supervisor never enters a namespace; pid 1 never talks to anything but the supervisor. */
#include "sandbox.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "channel.h"
#include "credential_source.h"
#include "sandbox/fallback.h"
#include "sandbox/idmap.h"
#include "landlock.h"
#include "overlay.h"
#include "overlay_ids.h"
#include "sandbox/pid1.h"
#include "run.h"
#include "run_audit.h"
#include "sandbox/supervise.h"
#include "tls_ca.h"
#include "trust.h"
#include "sandbox/userns.h"

extern char **environ;

const int sandbox_forwarded[SANDBOX_N_FORWARDED] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
						    SIGUSR1, SIGUSR2, SIGWINCH};

/* The filter's buffer (32 KiB) lies outside struct run: zeroing it with the rest of the run
 * on the stack cost ten page faults before the clone, for a program of a few hundred
 * instructions. In .bss only the pages written are ever mapped. */
static struct seccomp_program filter_buffer;

static int supervisor_maps(struct run *r, struct ab_err *e)
{
	char proc[32];

	if (!r->maps_by_supervisor)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)r->pid1);
	return idmap_write(r->p, proc, r->host_uid, r->host_gid, true, e);
}

static int clone_sandbox(struct run *r, struct ab_err *e)
{
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
			      CLONE_NEWUTS | CLONE_NEWCGROUP;
	pid_t pid;

	if (r->p->net_mode != NET_HOST)
		flags |= CLONE_NEWNET;
	/* fork-like clone (no new stack): the child runs pid1_main on a copy of this process */
	pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0)
		return userns_diagnose(errno, e);
	if (pid == 0)
		pid1_main(r);
	r->pid1 = pid;
	close(r->sock[1]);
	r->sock[1] = -1;
	return 0;
}

/* What agentbox sets replaces the profile's value, but for JAVA_TOOL_OPTIONS, a list of options
 * in which the last setting of a property wins: the profile's options stay, agentbox's follow
 * them (the proxy's, the run's trust store). */
static int set_env(void *ctx, const char *name, const char *value)
{
	if (!strcmp(name, "JAVA_TOOL_OPTIONS"))
		return env_append(ctx, name, value);
	return env_override(ctx, name, value);
}

static int prepare(struct run *r, const struct mount_protect *protect, struct audit *a,
		   struct ab_err *e)
{
	const struct policy *p = r->p;
	const char *cwd = p->vars.cwd, *home = p->vars.home;

	if (trust_prepare(p, e) < 0 || seccomp_prepare(p, e) < 0 ||
	    mount_plan_build(p, protect, trust_intercepts(p), &r->plan, e) < 0)
		return -1;
	/* the default workdir is the caller's cwd when the view shows it, else / */
	r->workdir =
	    strdup(p->workdir ? p->workdir : (cwd && mount_plan_shows(&r->plan, cwd) ? cwd : "/"));
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
	/* root that gives the command other ids gives it those ids on the host too: the command
	 * is then not root anywhere */
	r->maps_by_supervisor = r->outer_uid == 0 && (p->uid >= 0 || p->gid >= 0);
	r->host_uid = r->maps_by_supervisor && p->uid >= 0 ? (uid_t)p->uid : r->outer_uid;
	r->host_gid = r->maps_by_supervisor && p->gid >= 0 ? (gid_t)p->gid : r->outer_gid;
	/* overlayfs copies up with the owner and group: entries with other ids fail on write */
	if (!r->fallback && overlay_in_plan(&r->plan) &&
	    overlay_ids_check(&r->plan, r->host_uid, r->host_gid, e) < 0)
		return -1;
	if (overlay_prepare(p, audit_run_id(a), &r->plan, &r->changes, &r->changes_lock, e) < 0 ||
	    (!r->fallback && protect_watch_start(&r->plan, &r->watch, e) < 0) ||
	    disk_limit_open(&r->plan, p->limits.disk, &r->disk, e) < 0)
		return -1;
	/* Landlock forbids mount changes to everything below it: no nested sandbox under it.
	 * Without namespaces (fallback) Landlock is the confinement, nesting or not. */
	r->landlock_abi = p->nesting && !r->fallback ? 0 : landlock_abi();
	r->plan.guard_proc = r->host_uid == 0;
	r->plan.limit_userns = !p->nesting;
	r->cgroup_mode = cgroup_probe(&p->limits);
	if (env_build(p, environ, home, audit_run_id(a), &r->env, e) < 0)
		return -1;
	for (size_t i = 0; i < r->env.overruled.n; i++)
		ab_say("warning: [env] pass = %s is kept out by deny = %s; a token belongs in a "
		       "[credential] section (docs/profile.md), anything else needs that deny "
		       "pattern narrowed\n",
		       r->env.overruled.v[i], r->env.overruled_by.v[i]);
	/* in proxy mode the command is pointed at the proxy, whatever the profile passed */
	if (trust_note_user_anchors(r, e) < 0)
		return -1;
	if (r->jvm_user_store)
		ab_say("warning: %s names a javax.net.ssl.trustStore of its own: kept, so Java "
		       "clients do not trust the run's CA and fail on the hosts [http] rules "
		       "intercept; drop the option to use " TRUST_JVM_STORE ", which holds the "
		       "system's CAs, the run's and those of the PEM files SSL_CERT_FILE or "
		       "NODE_EXTRA_CA_CERTS name\n",
		       r->jvm_user_store);
	if ((p->net_mode == NET_PROXY && egress_proxy_env(set_env, &r->env) < 0) ||
	    (trust_intercepts(p) && trust_env(set_env, &r->env, !r->jvm_user_store) < 0))
		return ab_fail(e, ENOMEM, "environment");
	if (creds_prepare(p, &r->creds, &r->env, e) < 0)
		return -1;
	/* a shared terminal is safe only while the filter refuses TIOCSTI and TIOCLINUX */
	r->own_session = !isatty(STDIN_FILENO) || !seccomp_blocks_tty_injection(p);
	return 0;
}

static int open_channels(struct run *r, struct ab_err *e)
{
	sigemptyset(&r->sigs);
	sigaddset(&r->sigs, SIGCHLD);
	for (size_t i = 0; i < SANDBOX_N_FORWARDED; i++)
		sigaddset(&r->sigs, sandbox_forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &r->sigs, &r->oldmask) < 0)
		return ab_fail(e, errno, "sigprocmask");
	r->sigfd = signalfd(-1, &r->sigs, SFD_CLOEXEC);
	if (r->sigfd < 0)
		return ab_fail(e, errno, "signalfd");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, r->sock) < 0)
		return ab_fail(e, errno, "socketpair");
	/* a session learns each exec's pid from the kernel, not from anything inside */
	if (r->session &&
	    setsockopt(r->sock[0], SOL_SOCKET, SO_PASSCRED, &(int){1}, sizeof(int)) < 0)
		return ab_fail(e, errno, "SO_PASSCRED");
	return 0;
}

static void say_line(void *ctx, const char *line)
{
	(void)ctx;
	ab_say("%s\n", line);
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
	/* on stderr, as the overlay's line below: a session's are its execs' (session_serve.c) */
	if (!r->session)
		proxy_say_refusals(r->proxy, -2, say_line, NULL);
	proxy_stop(r->proxy);
	trust_end(r);
	strv_free(&r->user_anchors); /* after the thread that reads them (trust_end) */
	tls_ca_free(r->tls_ca);	     /* after the proxy and the thread that made it */
	creds_free(r->creds);
	cgroup_release(&r->cgroup);
	if (r->tmpdir) {
		fallback_remove_tmpdir(r->tmpdir);
		free(r->tmpdir);
	}
	if (r->changes)
		ab_say("the overlay's changes are in %s (agentbox changes|diff|"
		       "promote|discard %s)\n",
		       r->changes, r->changes);
	free(r->changes);
	if (r->changes_lock >= 0)
		close(r->changes_lock);
	if (r->changes_fs >= 0)
		close(r->changes_fs);
	protect_watch_report(r->watch);
	protect_watch_close(r->watch);
	sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
}

void sandbox_init(struct run *r, const struct policy *p)
{
	*r = (struct run){.p = p,
			  .sock = {-1, -1},
			  .sigfd = -1,
			  .listener = -1,
			  .proxy_fds = {-1, -1, -1, -1, -1, -1},
			  .changes_lock = -1,
			  .changes_fs = -1,
			  .outer_uid = getuid(),
			  .outer_gid = getgid(),
			  .filter = &filter_buffer};
	sigprocmask(SIG_SETMASK, NULL, &r->oldmask);
	/* the CLI blocks SIGPIPE for its audit writes; the command starts with it as usual */
	sigdelset(&r->oldmask, SIGPIPE);
}

/* The maps and the cgroup, then GO: pid 1 may go on. */
static int go(struct run *r, struct audit *a, struct ab_err *e)
{
	const char *id = audit_run_id(a);

	if (supervisor_maps(r, e) < 0 ||
	    cgroup_apply(&r->cgroup, r->cgroup_mode, &r->p->limits, r->pid1, id, e) < 0 ||
	    channel_send(r->sock[0], MSG_GO, 0, NULL) < 0)
		return -1;
	return 0;
}

/* clone → maps and cgroup → GO → trust → filter → READY: on failure the sandbox is gone. */
static int start_namespaces(struct run *r, struct audit *a, struct ab_err *e)
{
	if (clone_sandbox(r, e) < 0)
		return -1;
	if (trust_start(r, e) < 0 || run_audit_prelude(r, a, e) < 0) {
		supervise_kill(r);
		return -1;
	}
	if ((r->cgroup_mode != CGROUP_NONE || r->maps_by_supervisor) && go(r, a, e) < 0) {
		if (!e->msg[0])
			ab_fail(e, errno, "cannot start the sandbox");
		supervise_kill(r);
		return -1;
	}
	/* the credentials' values after the CA: pid 1 never had either */
	if (trust_send(r, a, e) < 0 || creds_read(r->creds, &r->env, a, e) < 0) {
		supervise_kill(r);
		return -1;
	}
	return supervise_send_filter(r, e) < 0 || supervise_wait_ready(r, a, e) < 0 ? -1 : 0;
}

int sandbox_start(struct run *r, struct audit *a, const struct mount_protect *protect,
		  struct ab_err *e)
{
	if (prepare(r, protect, a, e) < 0 || open_channels(r, e) < 0)
		return -1;
	if (r->fallback)
		return ab_fail(e, 0, "a session needs user namespaces, which this host lacks"),
		       ab_hint(e, "allow unprivileged user namespaces, or run each command with "
				  "agentbox -p PROFILE -- COMMAND");
	return start_namespaces(r, a, e);
}

int sandbox_save_changes(struct run *r, struct audit *a, struct ab_err *e)
{
	/* changes-size: the upper layers were on a tmpfs; whatever ended the run, keep them */
	if (r->changes_fs >= 0 &&
	    overlay_save(r->changes, r->changes_fs, r->p->limits.changes_size, a, e) < 0)
		return -1;
	return 0;
}

void sandbox_close(struct run *r)
{
	close_run(r);
}

int sandbox_run(const struct policy *p, struct audit *a, const struct mount_protect *protect,
		struct sandbox_result *res, struct ab_err *e)
{
	struct run r;
	int rc = -1;

	memset(res, 0, offsetof(struct sandbox_result, error));
	res->error[0] = res->changes[0] = '\0';
	sandbox_init(&r, p);
	if (prepare(&r, protect, a, e) < 0 || open_channels(&r, e) < 0)
		goto out;
	if (r.fallback) {
		rc = fallback_run(&r, a, res, e);
		goto out;
	}
	if (start_namespaces(&r, a, e) < 0)
		goto out;
	rc = supervise_run(&r, a, res, e);
	if (sandbox_save_changes(&r, a, e) < 0)
		rc = -1;
out:
	if (r.changes)
		snprintf(res->changes, sizeof(res->changes), "%s", r.changes);
	close_run(&r);
	return rc;
}

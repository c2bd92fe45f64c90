/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* One run's state, shared by the files that tell its story (sandbox/): sandbox.c (the plan and
 * the start), pid1.c (inside), supervise.c (outside, while it runs), run_audit.c (what the trail
 * says of it), fallback.c (the run without namespaces), trust.c (its trust files) and
 * session_serve.c (one sandbox, many commands). Not an interface for anything else: the rest of
 * agentbox sees sandbox.h (and run_audit.h, whose prelude reads a run). */
#ifndef AGENTBOX_RUN_H
#define AGENTBOX_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"
#include "disklimit.h"
#include "egress.h"
#include "env.h"
#include "mounts.h"
#include "policy.h"
#include "protect_watch.h"
#include "proxy.h"
#include "seccomp.h"
#include "seccomp_monitor.h"

struct tls_ca;
struct creds;

struct run {
	const struct policy *p;
	struct mount_plan plan;
	struct env_result env;
	struct strv user_anchors;   /* CA files the command's trust variables named (trust.h) */
	const char *jvm_user_store; /* the Java options variable naming the user's own store */
	char *workdir;
	bool own_session; /* stdin is not a terminal: the command gets a session of its own */
	bool session;	  /* agentbox session: pid 1 runs the execs the supervisor sends */
	int sock[2];	  /* [0] supervisor's end, [1] pid 1's end */
	int sigfd;
	int listener; /* seccomp notifications: pid 1 installs, the supervisor answers */
	int landlock_abi;
	bool seccomp_unnamed; /* filter without a listener (nested under another sandbox) */
	bool fallback;	      /* no namespaces: Landlock, seccomp and rlimits only */
	bool home_visible;    /* the caller's HOME is bound: it stays HOME */
	enum cgroup_mode cgroup_mode;
	struct cgroup_run cgroup;
	char *tmpdir;		     /* fallback: the private directory standing in for /tmp */
	char *changes;		     /* overlays: the changes directory */
	int changes_lock;	     /* overlays: held while the run lives */
	int changes_fs;		     /* changes-size: the tmpfs holding the upper layers, or -1 */
	struct protect_watch *watch; /* protected paths rw trees lack; NULL when none */
	pid_t supervisor;
	int proxy_fds[EGRESS_SOCKETS]; /* proxy mode: made in the sandbox's network namespace */
	struct proxy *proxy;
	struct tls_ca *tls_ca; /* [http] rules: the run's interception CA (supervisor only) */
	bool trust_started;    /* trust_start began making the CA: trust_end waits for it */
	struct creds *creds;   /* [credential]s: placeholders; values in the supervisor only */
	uid_t outer_uid;       /* the caller's ids, which the sandbox maps */
	gid_t outer_gid;
	uid_t host_uid; /* what the command's ids are on the host */
	gid_t host_gid;
	bool maps_by_supervisor; /* root giving the command other host ids: needs CAP_SETUID */
	sigset_t sigs, oldmask;
	pid_t pid1;
	struct seccomp_monitor *monitor;
	struct disk_limit *disk;	/* [limits] disk, NULL without */
	struct seccomp_program *filter; /* compiled by the supervisor, loaded by pid 1 */
};

#endif

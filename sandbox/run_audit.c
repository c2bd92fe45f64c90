/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A run's first audit events (see include/run_audit.h). */
#include "run_audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "landlock.h"
#include "result.h"
#include "run_dir.h"

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
		   {"memory", l->memory},	  {"processes", l->processes},
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

int run_audit_warn(struct audit *a, const char *what, const char *message, struct ab_err *e)
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
		rc |=
		    run_audit_warn(a, "seccomp",
				   p->seccomp_deny.n ? "preset none: only the profile's deny list "
						       "is filtered"
						     : "preset none: no system call filter",
				   e);
	if (p->net_mode == NET_HOST)
		rc |= run_audit_warn(
		    a, "network", "mode host: the host's network is shared, nothing filtered", e);
	if (r->fallback)
		rc |= run_audit_warn(
		    a, "fallback",
		    "user namespaces are unavailable: fallback = landlock runs "
		    "the command with Landlock, seccomp and rlimits only (no private "
		    "/proc, pid or network namespace; the host's processes are visible; "
		    "hostname, uid/gid and symlink entries do not apply; a process that "
		    "starts its own session escapes the final kill)",
		    e);
	if (p->nesting && !r->fallback)
		rc |= run_audit_warn(a, "nesting",
				     "nesting = true: the command may create namespaces and "
				     "mounts (inside its own user namespace); Landlock is off",
				     e);
	else if (!r->landlock_abi)
		rc |=
		    run_audit_warn(a, "landlock", "Landlock is not available: namespaces only", e);
	for (size_t i = 0; i < r->env.overruled.n; i++) {
		char msg[640];
		snprintf(msg, sizeof(msg),
			 "[env] pass = %.200s is kept out by deny = %.200s; a token belongs in a "
			 "[credential] section",
			 r->env.overruled.v[i], r->env.overruled_by.v[i]);
		rc |= run_audit_warn(a, "env", msg, e);
	}
	if (r->jvm_user_store) {
		char msg[320];
		snprintf(msg, sizeof(msg),
			 "%s names a javax.net.ssl.trustStore of its own: kept, so Java clients "
			 "are not pointed at " TRUST_JVM_STORE " and do not trust the run's CA",
			 r->jvm_user_store);
		rc |= run_audit_warn(a, "trust", msg, e);
	}
	if ((p->limits.memory || p->limits.processes) && r->cgroup_mode == CGROUP_NONE)
		rc |= run_audit_warn(a, "limits",
				     "no writable cgroup: memory and processes are rlimits only "
				     "(memory per process: data and stack; processes per uid, not "
				     "enforced for root)",
				     e);
	return rc ? -1 : 0;
}

/* The run's first events. Written once the sandbox is cloned, while pid 1 builds the view. */
int run_audit_prelude(const struct run *r, struct audit *a, struct ab_err *e)
{
	if (audit_start(r, a, e) < 0 || audit_warnings(r, a, e) < 0 ||
	    audit_mounts(&r->plan, a, e) < 0 || audit_env(&r->env, r->p, a, e) < 0)
		return -1;
	return 0;
}

/* res NULL: the run failed before it had a result, for cause */
static int exit_event(struct audit *a, const struct sandbox_result *res, int status,
		      const char *cause, struct ab_err *e)
{
	struct json *j = audit_begin(a, "exit");

	result_outcome(j, status, res, cause); /* the fields --result shares */
	if (res && res->error[0])
		json_kv_str(j, "error", res->error);
	if (res) {
		json_key(j, "rusage");
		json_obj_begin(j);
		json_kv_int(j, "max_rss_kb", res->ru.ru_maxrss);
		json_kv_int(j, "user_ms",
			    res->ru.ru_utime.tv_sec * 1000 + res->ru.ru_utime.tv_usec / 1000);
		json_kv_int(j, "sys_ms",
			    res->ru.ru_stime.tv_sec * 1000 + res->ru.ru_stime.tv_usec / 1000);
		json_obj_end(j);
	}
	json_key(j, "denials");
	audit_denials(a, j);
	json_key(j, "counts");
	audit_counts(a, j);
	json_key(j, "suppressed");
	audit_suppressed(a, j);
	audit_chain(a, j);
	return audit_emit(a, e);
}

int run_audit_exit(struct audit *a, const struct sandbox_result *res, int status, struct ab_err *e)
{
	return exit_event(a, res, status, res->cause, e);
}

void run_audit_failed(struct audit *a, const struct ab_err *failure)
{
	struct ab_err ignored;
	struct json *j = audit_begin(a, "error");

	json_kv_str(j, "message", failure->msg);
	if (failure->errnum)
		json_kv_int(j, "errno", failure->errnum);
	audit_emit(a, &ignored);
	exit_event(a, NULL, 125, failure->cause ? failure->cause : "setup-error", &ignored);
}

int run_audit_exec(struct audit *a, unsigned exec, const struct strv *argv, const char *cwd,
		   uint64_t timeout_ms, const struct sandbox_result *res, uint64_t syscall_denials,
		   struct ab_err *e)
{
	struct json *j = audit_begin(a, "exec");

	json_kv_uint(j, "exec", exec);
	json_key(j, "argv");
	json_arr_begin(j);
	for (size_t i = 0; i < argv->n; i++)
		json_str(j, argv->v[i]); /* redacted like every string of the trail */
	json_arr_end(j);
	json_kv_str(j, "cwd", cwd);
	json_key(j, "timeout_ms"); /* the one that applied: the profile's, or a lower one asked */
	if (timeout_ms)
		json_uint(j, timeout_ms);
	else
		json_null(j);
	result_outcome(j, res->status, res, NULL); /* the fields --result shares */
	if (res->error[0])
		json_kv_str(j, "error", res->error);
	json_key(j, "denials");
	json_obj_begin(j);
	json_kv_uint(j, "syscall", syscall_denials);
	json_obj_end(j);
	return audit_emit(a, e);
}

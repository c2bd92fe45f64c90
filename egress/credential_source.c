/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Credentials' real values, read outside the sandbox (include/credential_source.h). */
#include "credential_source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "credential_file.h"

extern char **environ;

/* cmd: sources get this long to answer (gh auth token takes milliseconds) */
#define CRED_CMD_TIMEOUT_MS 30000
#define CRED_CMD_MAX_ARGS 32
/* Shorter values would be found all over the environment, the audit trail and responses: not
 * a secret that can be kept apart (and not one worth keeping). */
#define CRED_MIN_VALUE 8

/* Names the section's FILE:LINE as the profile's own errors do: the value is checked only when
 * the run reads it, long after the profile was. */
static int fail(const struct policy_credential *pc, struct ab_err *e, const char *hint)
{
	ab_hint(e, "%s", hint);
	if (pc->at.file && pc->at.line)
		return ab_context(e, "%s:%u: [credential %s] source %s", pc->at.file, pc->at.line,
				  pc->name, pc->source);
	return ab_context(e, "[credential %s] source %s", pc->name, pc->source);
}

/* ---------- before the clone ---------- */

static int check_file(const struct policy_credential *pc, struct ab_err *e)
{
	const char *path = pc->source_arg;
	struct stat st;

	if (lstat(path, &st) < 0)
		return ab_fail(e, errno, "cannot read it"),
		       fail(pc, e, "create the file, or fix the path in source");
	if (!S_ISREG(st.st_mode))
		return ab_fail(e, 0, "not a regular file (a symlink is refused)"),
		       fail(pc, e, "point source at the file itself");
	if (st.st_uid != getuid())
		return ab_fail(e, 0, "owned by uid %u, not by you (uid %u)", (unsigned)st.st_uid,
			       (unsigned)getuid()),
		       fail(pc, e, "keep the secret in a file of your own");
	if (st.st_mode & 077)
		return ab_fail(e, 0, "readable or writable by group or others (mode %03o)",
			       (unsigned)(st.st_mode & 0777)),
		       fail(pc, e, "chmod 600 the file");
	if (st.st_size == 0)
		return ab_fail(e, 0, "the file is empty"), fail(pc, e, "put the secret in it");
	return 0;
}

static int check_source(const struct policy_credential *pc, struct ab_err *e)
{
	if (pc->source_kind == CRED_SOURCE_ENV) {
		const char *v = getenv(pc->source_arg);
		if (!v || !*v)
			return ab_fail(e, 0, "the variable is %s", v ? "empty" : "not set"),
			       fail(pc, e, "export it before running agentbox");
		if (strlen(v) < CRED_MIN_VALUE)
			return ab_fail(e, 0, "shorter than %d bytes", CRED_MIN_VALUE),
			       fail(pc, e, "check the variable: that is not a real secret");
		if (strlen(v) > CRED_MAX_VALUE)
			return ab_fail(e, 0, "longer than %d bytes", CRED_MAX_VALUE),
			       fail(pc, e, "check the variable");
		return 0;
	}
	if (pc->source_kind == CRED_SOURCE_FILE)
		return check_file(pc, e);
	return 0; /* cmd: runs after the clone */
}

/* Removes NAME=... (wiped first: pid 1 is a copy of this memory). */
static void env_drop(struct env_result *env, size_t i)
{
	explicit_bzero(env->vars.v[i], strlen(env->vars.v[i]));
	strv_remove(&env->vars, i);
}

static bool named_by_a_credential(const struct policy *p, const char *entry)
{
	for (size_t i = 0; i < p->n_creds; i++) {
		size_t n = p->creds[i].env ? strlen(p->creds[i].env) : 0;
		if (n && !strncmp(entry, p->creds[i].env, n) && entry[n] == '=')
			return true;
	}
	return false;
}

/* Every variable holding an env: source's value loses it; the credential's own env variable is
 * set after this. A variable that held the value is given the placeholder. */
static int env_scrub(const struct policy *p, const struct creds *cs, struct env_result *env)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cred *c = &cs->v[i];
		const char *v;
		if (c->pc->source_kind != CRED_SOURCE_ENV || !(v = getenv(c->pc->source_arg)))
			continue;
		for (size_t k = 0; k < env->vars.n;) {
			char *eq = strchr(env->vars.v[k], '=');
			char name[256];
			if (!eq || !strstr(eq + 1, v)) {
				k++;
				continue;
			}
			snprintf(name, sizeof(name), "%.*s", (int)(eq - env->vars.v[k]),
				 env->vars.v[k]);
			env_drop(env, k);
			if (!named_by_a_credential(p, name) && env_override(env, name, c->ph) < 0)
				return -1;
			k = 0; /* env_override appends: start over */
		}
	}
	return 0;
}

int creds_prepare(const struct policy *p, struct creds **out, struct env_result *env,
		  struct ab_err *e)
{
	struct creds *cs;

	*out = NULL;
	for (size_t i = 0; i < p->n_creds; i++)
		if (check_source(&p->creds[i], e) < 0)
			return -1;
	if (creds_new(p, &cs, e) < 0)
		return -1;
	if (!cs)
		return 0;
	if (env_scrub(p, cs, env) < 0) {
		creds_free(cs);
		return ab_fail(e, ENOMEM, "environment");
	}
	for (size_t i = 0; i < cs->n; i++) {
		const struct policy_credential *pc = cs->v[i].pc;
		char path[128];
		if ((pc->env && env_override(env, pc->env, cs->v[i].ph) < 0) ||
		    (pc->file_env && (cred_file_path(pc, path, sizeof(path)) < 0 ||
				      env_override(env, pc->file_env, path) < 0))) {
			creds_free(cs);
			return ab_fail(e, ENOMEM, "environment");
		}
	}
	*out = cs;
	return 0;
}

/* ---------- after the clone ---------- */

static int read_fd(int fd, char *buf, size_t cap, size_t *n, int timeout_ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*n = 0;
	for (;;) {
		ssize_t r;
		if (timeout_ms >= 0) {
			long left;
			struct pollfd pfd = {fd, POLLIN, 0};
			clock_gettime(CLOCK_MONOTONIC, &t);
			left = timeout_ms -
			       ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0)
				return errno = ETIMEDOUT, -1;
			if (poll(&pfd, 1, (int)left) < 0) {
				if (errno == EINTR)
					continue;
				return -1;
			}
		}
		r = read(fd, buf + *n, cap - *n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0 || (*n += (size_t)r) == cap)
			return 0;
	}
}

/* The value without its trailing newline (a file written by echo, a command's output). */
static size_t trim(const char *buf, size_t n)
{
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	return n;
}

static int from_file(const struct policy_credential *pc, char *buf, size_t *n, struct ab_err *e)
{
	int fd = open(pc->source_arg, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	int rc;

	if (fd < 0)
		return ab_fail(e, errno, "cannot open it"), fail(pc, e, "check the file");
	/* checked again on what was opened: the file may have changed since */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077)) {
		close(fd);
		return ab_fail(e, 0, "not a regular file of yours, readable by you only"),
		       fail(pc, e, "chmod 600 the file, and own it");
	}
	rc = read_fd(fd, buf, CRED_MAX_VALUE + 1, n, -1);
	close(fd);
	if (rc < 0)
		return ab_fail(e, errno, "cannot read it"), fail(pc, e, "check the file");
	return 0;
}

static int from_cmd(const struct policy_credential *pc, char *buf, size_t *n, struct ab_err *e)
{
	char *copy = strdup(pc->source_arg), *argv[CRED_CMD_MAX_ARGS + 1], *save = NULL;
	size_t argc = 0;
	int out[2] = {-1, -1}, st = 0, rc = -1;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;
	pid_t pid;

	if (!copy)
		return ab_fail(e, ENOMEM, "cmd");
	/* no shell: the words as written */
	for (char *w = strtok_r(copy, " \t", &save); w && argc < CRED_CMD_MAX_ARGS;
	     w = strtok_r(NULL, " \t", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	if (pipe2(out, O_CLOEXEC) < 0) {
		free(copy);
		return ab_fail(e, errno, "pipe");
	}
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	/* the supervisor blocks the signals it forwards: the command gets the usual mask */
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	errno = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(out[1]);
	if (errno) {
		ab_fail(e, errno, "cannot run %s", argv[0]);
		fail(pc, e, "install it, or give its full path");
		goto out;
	}
	if (read_fd(out[0], buf, CRED_MAX_VALUE + 1, n, CRED_CMD_TIMEOUT_MS) < 0) {
		ab_fail(e, errno, "reading its output");
		kill(pid, SIGKILL);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (e->msg[0]) {
		fail(pc, e, "make the command print the secret and exit within 30 s");
		goto out;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		ab_fail(e, 0, "the command %s %d", WIFEXITED(st) ? "exited with" : "died of signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		fail(pc, e, "run it yourself to see why (e.g. gh auth login first)");
		goto out;
	}
	rc = 0;
out:
	close(out[0]);
	free(copy);
	return rc;
}

static int read_one(struct cred *c, const struct env_result *env, struct audit *a, struct ab_err *e)
{
	const struct policy_credential *pc = c->pc;
	char *buf = malloc(CRED_MAX_VALUE + 2);
	size_t n = 0;
	int rc = -1;

	if (!buf)
		return ab_fail(e, ENOMEM, "credential");
	if (pc->source_kind == CRED_SOURCE_ENV) {
		const char *v = getenv(pc->source_arg);
		n = v ? strlen(v) : 0;
		if (n <= CRED_MAX_VALUE)
			memcpy(buf, v ? v : "", n);
		rc = 0;
	} else if (pc->source_kind == CRED_SOURCE_FILE) {
		rc = from_file(pc, buf, &n, e);
	} else {
		rc = from_cmd(pc, buf, &n, e);
	}
	if (rc == 0 && n > CRED_MAX_VALUE)
		rc = ab_fail(e, 0, "longer than %d bytes", CRED_MAX_VALUE),
		fail(pc, e, "give a source that holds the secret alone");
	n = rc == 0 ? trim(buf, n) : 0;
	if (rc == 0 && !n)
		rc = ab_fail(e, 0, "it gave an empty value"),
		fail(pc, e, "give a source that holds the secret");
	if (rc == 0 && n < CRED_MIN_VALUE)
		rc = ab_fail(e, 0, "shorter than %d bytes", CRED_MIN_VALUE),
		fail(pc, e, "check the source: that is not a real secret");
	if (rc == 0 && (memchr(buf, '\0', n) || memchr(buf, '\n', n) || memchr(buf, '\r', n)))
		rc = ab_fail(e, 0, "the value holds a NUL or a line break"),
		fail(pc, e, "a header cannot carry it; check the source");
	for (size_t i = 0; rc == 0 && i < env->vars.n; i++)
		if (memmem(env->vars.v[i], strlen(env->vars.v[i]), buf, n))
			rc = ab_fail(e, 0, "the command's environment holds its value (%.*s)",
				     (int)strcspn(env->vars.v[i], "="), env->vars.v[i]),
			fail(pc, e, "keep the variable out of [env] pass and set");
	if (rc == 0 && (creds_set_value(c, buf, n) < 0 || audit_add_secret(a, buf, n) < 0))
		rc = ab_fail(e, ENOMEM, "credential %s", pc->name);
	explicit_bzero(buf, CRED_MAX_VALUE + 2);
	free(buf);
	return rc;
}

int creds_read(struct creds *cs, const struct env_result *env, struct audit *a, struct ab_err *e)
{
	/* about to hold secrets: no core dump, no /proc/PID/mem for the caller's processes (set
	 * already when the run intercepts, which a credential's host names make it do) */
	if (cs && cs->n && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return ab_fail(e, errno, "PR_SET_DUMPABLE");
	for (size_t i = 0; cs && i < cs->n; i++)
		if (read_one(&cs->v[i], env, a, e) < 0)
			return -1;
	return 0;
}

void creds_scrub_environ(const struct policy *p)
{
	for (size_t i = 0; i < p->n_creds; i++) {
		const char *name = p->creds[i].source_arg;
		size_t n = strlen(name);
		if (p->creds[i].source_kind != CRED_SOURCE_ENV)
			continue;
		for (char **v = environ; v && *v; v++)
			if (!strncmp(*v, name, n) && (*v)[n] == '=')
				explicit_bzero(*v + n + 1, strlen(*v + n + 1));
	}
}

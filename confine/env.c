/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "env.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* The first glob of globs that matches name, or NULL. */
static const char *first_match(const struct strv *globs, const char *name)
{
	for (size_t i = 0; i < globs->n; i++)
		if (fnmatch(globs->v[i], name, 0) == 0)
			return globs->v[i];
	return NULL;
}

static bool matches(const struct strv *globs, const char *name)
{
	return first_match(globs, name) != NULL;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* A name pass writes out, refused by a deny pattern: the profile's author asked for it by
 * name, and would not know why it is missing. */
static int note_overruled(const struct policy *p, const char *name, struct env_result *out)
{
	const char *by = first_match(&p->env_deny, name);

	if (!strv_has(&p->env_pass, name) || !by || !is_glob(by) || strv_has(&p->env_deny, name))
		return 0;
	return strv_push(&out->overruled, name) < 0 || strv_push(&out->overruled_by, by) < 0 ? -1
											     : 0;
}

static ssize_t find(const struct strv *vars, const char *name, size_t len)
{
	for (size_t i = 0; i < vars->n; i++)
		if (!strncmp(vars->v[i], name, len) && vars->v[i][len] == '=')
			return (ssize_t)i;
	return -1;
}

/* Sets NAME=VALUE (entry), replacing an earlier value of NAME. */
static int put(struct strv *vars, const char *entry)
{
	size_t len = strcspn(entry, "=");
	ssize_t i = find(vars, entry, len);
	char *copy;

	if (i < 0)
		return strv_push(vars, entry);
	if (!(copy = strdup(entry)))
		return -1;
	free(vars->v[i]);
	vars->v[i] = copy;
	return 0;
}

static int put_default(struct strv *vars, const char *name, const char *value)
{
	char buf[4096];

	if (!value || find(vars, name, strlen(name)) >= 0)
		return 0;
	if ((size_t)snprintf(buf, sizeof(buf), "%s=%s", name, value) >= sizeof(buf))
		return 0; /* a default too long to be sane is left out */
	return strv_push(vars, buf);
}

static int pass_caller(const struct policy *p, char *const *caller, struct env_result *out)
{
	char name[256];

	for (size_t i = 0; caller && caller[i]; i++) {
		size_t len = strcspn(caller[i], "=");
		if (!caller[i][len] || len == 0 || len >= sizeof(name))
			continue;
		memcpy(name, caller[i], len);
		name[len] = '\0';
		if (!matches(&p->env_pass, name))
			continue;
		if (matches(&p->env_deny, name)) {
			if (strv_push(&out->denied, name) < 0 || note_overruled(p, name, out) < 0)
				return -1;
			continue;
		}
		if (put(&out->vars, caller[i]) < 0 || strv_push(&out->passed, name) < 0)
			return -1;
	}
	return 0;
}

static const char *caller_value(char *const *caller, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; caller && caller[i]; i++)
		if (!strncmp(caller[i], name, len) && caller[i][len] == '=')
			return caller[i] + len + 1;
	return NULL;
}

int env_build(const struct policy *p, char *const *caller, const char *home, const char *run_id,
	      struct env_result *out, struct ab_err *e)
{
	const char *term = caller_value(caller, "TERM");
	int rc = 0;

	memset(out, 0, sizeof(*out));
	rc |= pass_caller(p, caller, out);
	for (size_t i = 0; rc == 0 && i < p->env_set.n; i++)
		rc |= put(&out->vars, p->env_set.v[i]);
	rc |= put_default(&out->vars, "PATH", DEFAULT_PATH);
	rc |= put_default(&out->vars, "HOME", home);
	rc |= put_default(&out->vars, "TMPDIR", "/tmp");
	rc |= put_default(&out->vars, "LANG", "C.UTF-8");
	if (term && !matches(&p->env_deny, "TERM"))
		rc |= put_default(&out->vars, "TERM", term);
	if (rc == 0) {
		char id[64];
		snprintf(id, sizeof(id), "AGENTBOX_RUN_ID=%s", run_id);
		rc = put(&out->vars, id);
	}
	if (rc < 0) {
		env_result_free(out);
		return ab_fail(e, ENOMEM, "building the environment");
	}
	return 0;
}

void env_result_free(struct env_result *r)
{
	strv_free(&r->vars);
	strv_free(&r->passed);
	strv_free(&r->denied);
	strv_free(&r->overruled);
	strv_free(&r->overruled_by);
}

int env_override(struct env_result *r, const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *entry = malloc(n);
	int rc;

	if (!entry)
		return -1;
	snprintf(entry, n, "%s=%s", name, value);
	rc = put(&r->vars, entry);
	free(entry);
	return rc;
}

int env_overlaid(const struct strv *vars, const struct strv *over, struct strv *out)
{
	struct strv v = {0};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < vars->n; i++)
		rc = strv_push(&v, vars->v[i]);
	for (size_t i = 0; rc == 0 && i < over->n; i++)
		rc = strchr(over->v[i], '=') ? put(&v, over->v[i]) : -1;
	if (rc < 0)
		strv_free(&v);
	else
		*out = v;
	return rc;
}

const char *env_get(const struct env_result *r, const char *name)
{
	size_t len = strlen(name);
	ssize_t i = find(&r->vars, name, len);

	return i < 0 ? NULL : r->vars.v[i] + len + 1;
}

int env_append(struct env_result *r, const char *name, const char *value)
{
	const char *old = env_get(r, name);
	size_t n = strlen(name) + (old ? strlen(old) + 1 : 0) + strlen(value) + 2;
	char *entry;
	int rc;

	if (!old || !old[0])
		return env_override(r, name, value);
	if (!(entry = malloc(n)))
		return -1;
	snprintf(entry, n, "%s=%s %s", name, old, value);
	rc = put(&r->vars, entry);
	free(entry);
	return rc;
}

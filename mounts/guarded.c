/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What stays read-only whatever the workspace is (see include/guarded.h). */
#include "guarded.h"

#include "policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under $HOME: files a login shell and git read and run, and directories ssh, the shell's PATH
 * and agentbox read. */
static const char *const home_files[] = {".bashrc",  ".bash_profile", ".bash_login", ".bash_logout",
					 ".profile", ".zshrc",	      ".zshenv",     ".zprofile",
					 ".zlogin",  ".gitconfig",    NULL};
static const char *const home_dirs[] = {".ssh", ".local/bin", ".config/agentbox", NULL};

static int add(struct strv *out, const char *dir, const char *name, struct ab_err *e)
{
	char path[4096];
	int n;

	if (!dir || dir[0] != '/')
		return 0;
	n = name ? snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", name)
		 : snprintf(path, sizeof(path), "%s", dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return ab_fail(e, ENAMETOOLONG, "a guarded path under %s", dir);
	/* trailing slashes of PATH entries would make two names for one directory */
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	if (strv_has(out, path))
		return 0;
	return strv_push(out, path) < 0 ? ab_fail(e, ENOMEM, "guarded paths") : 0;
}

/* Each absolute entry of a colon-separated list. */
static int add_list(struct strv *out, const char *list, const char *name, struct ab_err *e)
{
	char *copy, *save = NULL;
	int r = 0;

	if (!list || !*list)
		return 0;
	if (!(copy = strdup(list)))
		return ab_fail(e, ENOMEM, "guarded paths");
	for (char *d = strtok_r(copy, ":", &save); d && r == 0; d = strtok_r(NULL, ":", &save))
		r = add(out, d, name, e);
	free(copy);
	return r;
}

int guarded_paths(const char *(*env)(const char *name), struct strv *files, struct strv *out,
		  struct ab_err *e)
{
	const char *home = env("HOME"), *config = env("XDG_CONFIG_HOME"),
		   *state = env("XDG_STATE_HOME");
	char buf[4096];
	int r = 0;

	for (size_t i = 0; home_files[i] && r == 0; i++)
		r = add(files, home, home_files[i], e);
	for (size_t i = 0; home_dirs[i] && r == 0; i++)
		r = add(out, home, home_dirs[i], e);
	if (r == 0 && config && config[0] == '/')
		r = add(out, config, "git", e) < 0 ? -1 : add(out, config, "agentbox", e);
	else if (r == 0 && home && home[0] == '/')
		r = add(out, home, ".config/git", e);
	if (r == 0 && state && state[0] == '/')
		r = add(out, state, "agentbox", e);
	else if (r == 0 && home && home[0] == '/' &&
		 (size_t)snprintf(buf, sizeof(buf), "%s/.local/state", home) < sizeof(buf))
		r = add(out, buf, "agentbox", e);
	if (r == 0)
		r = add_list(out, env("AGENTBOX_PROFILE_PATH"), NULL, e);
	if (r == 0)
		r = add_list(out, env("PATH"), NULL, e);
	return r;
}

static const char *env_here(const char *name)
{
	return getenv(name);
}

int guarded_paths_here(struct strv *files, struct strv *dirs, struct ab_err *e)
{
	return guarded_paths(env_here, files, dirs, e);
}

/* path is name, or below it */
static bool at_or_below(const char *path, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(path, name, n) && (path[n] == '\0' || path[n] == '/');
}

static bool protected_at(const char *path)
{
	for (size_t i = 0; policy_protected_names[i][0]; i++)
		if (at_or_below(path, policy_protected_names[i]))
			return true;
	return false;
}

bool guarded_nested_git(const char *rel)
{
	for (const char *p = strchr(rel, '/'); p; p = strchr(p + 1, '/'))
		if (!strncmp(p + 1, ".git", 4) && (p[5] == '/' || p[5] == '\0'))
			return true;
	return false;
}

const char *guarded_refusal(const char *rel, bool dir, const char *host, const struct strv *files,
			    const struct strv *dirs)
{
	if (protected_at(rel))
		return "a protected path: it runs or steers code outside the sandbox later";
	if (!strcmp(rel, ".git") && !dir)
		return "a repository's .git replaced by a file or link points git elsewhere";
	for (size_t i = 0; i < files->n; i++)
		if (at_or_below(host, files->v[i]))
			return "a guarded start-up file";
	for (size_t i = 0; i < dirs->n; i++)
		if (at_or_below(host, dirs->v[i]))
			return "inside a guarded directory (agentbox's inputs, ~/.ssh, PATH)";
	return NULL;
}

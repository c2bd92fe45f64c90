/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* struct policy: its names for the words of a profile, the names kept read-only in writable
 * trees, and its lifetime. Reading profiles into it is policy_load.c's (with policy_parse.h);
 * --explain is policy_explain.c's. */
#include "policy.h"

#include <stdlib.h>
#include <string.h>

/* ---------- names ---------- */

const char *fs_kind_name(enum fs_kind k)
{
	static const char *const names[] = {"ro", "rw", "tmpfs", "hide", "symlink", "overlay"};
	return names[k];
}

/* What runs on its own later, outside the sandbox: git hooks and config, what git reads as
 * configuration or repositories of their own (info, linked worktrees, submodules' git
 * directories, another common directory, other object stores), shell and direnv start-up files,
 * editor tasks, and package managers' project configuration that names programs they run
 * (npm's script-shell and node-options, yarn's yarnPath, pnpm's hooks file). */
const char policy_protected_names[][POLICY_PROTECTED_NAME_SIZE] = {
    ".git/hooks",
    ".git/config",
    ".git/info",
    ".git/worktrees",
    ".git/modules",
    ".git/commondir",
    ".git/config.worktree",
    ".git/objects/info/alternates",
    ".git/objects/info/http-alternates",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".envrc",
    ".vscode/tasks.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "",
};

const char *net_mode_name(enum net_mode m)
{
	static const char *const names[] = {"none", "proxy", "host"};
	return names[m];
}

const char *seccomp_preset_name(enum seccomp_preset p)
{
	static const char *const names[] = {"default", "strict", "none"};
	return names[p];
}

/* ---------- lifetime ---------- */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

struct policy *policy_new(const struct policy_vars *vars)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->vars.home = dup_or_null(vars->home);
	p->vars.cwd = dup_or_null(vars->cwd);
	p->vars.user = dup_or_null(vars->user);
	p->vars.uid = dup_or_null(vars->uid);
	p->vars.tmpdir = dup_or_null(vars->tmpdir);
	p->uid = p->gid = -1;
	p->audit_event_budget = POLICY_DEFAULT_EVENT_BUDGET;
	return p;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	free((char *)p->vars.home);
	free((char *)p->vars.cwd);
	free((char *)p->vars.user);
	free((char *)p->vars.uid);
	free((char *)p->vars.tmpdir);
	strv_free(&p->profiles);
	strv_free(&p->profile_sha256);
	free(p->hostname);
	free(p->workdir);
	free(p->changes);
	strv_free(&p->protect);
	strv_free(&p->unprotect);
	for (size_t i = 0; i < p->n_fs; i++) {
		free(p->fs[i].path);
		free(p->fs[i].target);
	}
	free(p->fs);
	egress_rules_free(&p->net);
	free(p->net_ca);
	strv_free(&p->net_methods);
	strv_free(&p->seccomp_deny);
	strv_free(&p->seccomp_allow);
	strv_free(&p->env_pass);
	strv_free(&p->env_set);
	strv_free(&p->env_deny);
	for (size_t i = 0; i < p->n_creds; i++)
		policy_credential_free(&p->creds[i]);
	free(p->creds);
	free(p->audit_file);
	strv_free(&p->audit_redact);
	strv_free(&p->command);
	strv_free(&p->scalar_keys);
	free(p->scalar_layers);
	strv_free(&p->set_keys);
	free(p->set_at);
	strv_free(&p->item_keys);
	free(p->item_at);
	free(p);
}

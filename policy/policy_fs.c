/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* [filesystem]: what the command sees of the host's files: binds, tmpfs, hidden paths,
 * symlinks, overlays, protected paths. */
#include "policy_parse.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int fs_add(const struct setting *s, enum fs_kind kind, bool optional, char *path,
		  char *target, struct ab_err *e)
{
	struct policy *p = s->p;
	struct fs_entry *nf;

	if (!strcmp(path, "/") && kind != FS_RO) {
		free(path);
		free(target);
		if (kind != FS_RW)
			return ab_fail(e, 0, "'%s' cannot be applied to /", s->key),
			       policy_at_error(&s->at, e);
		/* the host writable everywhere its user may write is no sandbox of files; it comes
		 * by accident, from a ${CWD} or ${HOME} that is / */
		return ab_fail(e, 0, "'%s = /' would make the whole file system writable", s->key),
		       ab_hint(e, "make the project's directory writable instead (a profile's "
				  "${CWD} is the directory agentbox was started in)"),
		       policy_at_error(&s->at, e);
	}
	for (size_t i = 0; i < p->n_fs; i++) {
		struct fs_entry *old = &p->fs[i];
		if (strcmp(old->path, path))
			continue;
		if (old->at.layer == s->at.layer) {
			ab_fail(e, 0, "%s is already listed as '%s'", path,
				fs_kind_name(old->kind));
			if (old->at.line)
				ab_hint(e, "one path takes one entry (see line %u)", old->at.line);
			free(path);
			free(target);
			return policy_at_error(&s->at, e);
		}
		/* a later layer overrides: drop the older entry */
		free(old->path);
		free(old->target);
		memmove(old, old + 1, (p->n_fs - i - 1) * sizeof(*old));
		p->n_fs--;
		break;
	}
	nf = realloc(p->fs, (p->n_fs + 1) * sizeof(*nf));
	if (!nf) {
		free(path);
		free(target);
		return policy_oom(e);
	}
	p->fs = nf;
	p->fs[p->n_fs++] = (struct fs_entry){kind, path, target, optional, s->at};
	return 0;
}

/* A path is taken as written: agentbox expands no glob, and one that reached the view as a
 * literal name would be a missing path at run time, far from this line. */
static int fs_path(const struct setting *s, const char *item, enum fs_kind kind, bool optional,
		   struct ab_err *e)
{
	char *norm;

	if (strpbrk(item, "*?"))
		return ab_fail(e, 0, "'%s': paths are not globs", item),
		       ab_hint(e, "name each path, or the directory that holds them"),
		       policy_at_error(&s->at, e);
	if (path_normalize(item, &norm, e) < 0)
		return policy_at_error(&s->at, e);
	return fs_add(s, kind, optional, norm, NULL, e);
}

static int on_ro(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_RO, false, e);
}
static int on_rw(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_RW, false, e);
}
static int on_ro_try(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_RO, true, e);
}
static int on_rw_try(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_RW, true, e);
}
static int on_overlay(const struct setting *s, const char *v, struct ab_err *e)
{
	if (strpbrk(v, "\n\t"))
		return ab_fail(e, 0, "an overlay path cannot hold a tab or a newline"),
		       policy_at_error(&s->at, e);
	return fs_path(s, v, FS_OVERLAY, false, e);
}

static int on_protect(const struct setting *s, const char *v, struct ab_err *e)
{
	char *norm;
	int r;

	if (path_normalize(v, &norm, e) < 0)
		return policy_at_error(&s->at, e);
	r = policy_push_item(&s->p->protect, norm, e);
	free(norm);
	return r;
}
static int on_unprotect(const struct setting *s, const char *v, struct ab_err *e)
{
	for (size_t i = 0; policy_protected_names[i][0]; i++)
		if (!strcmp(v, policy_protected_names[i]))
			return policy_push_item(&s->p->unprotect, v, e);
	return ab_fail(e, 0, "'%s' is not one of the protected names", v),
	       ab_hint(e, "see docs/profile.md for the list (.git/hooks, .bashrc, .envrc, ...)"),
	       policy_at_error(&s->at, e);
}

static int on_changes(const struct setting *s, const char *value, struct ab_err *e)
{
	return policy_set_path(s, value, &s->p->changes, e);
}
static int on_tmpfs(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_TMPFS, false, e);
}
static int on_hide(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_HIDE, false, e);
}

static int on_symlink(const struct setting *s, const char *value, struct ab_err *e)
{
	char *exp, *sp, *target, *link;

	if (policy_expand_one(s, value, &exp, e) < 0)
		return -1;
	sp = strpbrk(exp, " \t");
	if (!sp || !*exp) {
		free(exp);
		return ab_fail(e, 0, "symlink needs 'TARGET LINK'"),
		       ab_hint(e, "write e.g. 'symlink = usr/lib /lib'"),
		       policy_at_error(&s->at, e);
	}
	*sp++ = '\0';
	sp += strspn(sp, " \t");
	if (strpbrk(sp, " \t") || path_normalize(sp, &link, e) < 0) {
		if (strpbrk(sp, " \t"))
			ab_fail(e, 0, "symlink takes exactly 'TARGET LINK'");
		free(exp);
		return policy_at_error(&s->at, e);
	}
	if (!(target = strdup(exp))) {
		free(exp);
		free(link);
		return policy_oom(e);
	}
	free(exp);
	return fs_add(s, FS_SYMLINK, false, link, target, e);
}

static const struct key_spec keys[] = {
    {"filesystem", "ro", LIST, on_ro},
    {"filesystem", "rw", LIST, on_rw},
    {"filesystem", "ro-try", LIST, on_ro_try},
    {"filesystem", "rw-try", LIST, on_rw_try},
    {"filesystem", "tmpfs", LIST, on_tmpfs},
    {"filesystem", "hide", LIST, on_hide},
    {"filesystem", "overlay", LIST, on_overlay},
    {"filesystem", "changes", SINGLE, on_changes},
    {"filesystem", "protect", LIST, on_protect},
    {"filesystem", "unprotect", LIST, on_unprotect},
    {"filesystem", "symlink", SINGLE, on_symlink},
};
const struct key_table policy_fs_keys = {keys, sizeof(keys) / sizeof(keys[0])};

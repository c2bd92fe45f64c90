/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* `--check --paths`: the host paths a profile names that a run would fail on (policy_warn.h),
 * all of them at once rather than the first at run time. stat(2) and access(2) only: a
 * credential's source file is never opened. */
#include "policy_warn.h"
#include "policy_parse.h"
#include "policy_warn_list.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* A bind's source: there, and readable (a directory: listable); rw: writable too. */
static void bind_source(struct warn_list *w, const struct fs_entry *f)
{
	const char *kind = fs_kind_name(f->kind);
	struct stat st;
	int mode = R_OK;

	if (stat(f->path, &st) < 0) {
		if (errno == ENOENT)
			warn_add(w, &f->at,
				 "[filesystem] %s = %s: not on this host; fix: create it%s", kind,
				 f->path,
				 f->kind == FS_RO   ? ", or use ro-try to skip it when missing"
				 : f->kind == FS_RW ? ", or use rw-try to skip it when missing"
						    : "");
		else
			warn_add(w, &f->at,
				 "[filesystem] %s = %s: cannot be reached (%s); fix: check the "
				 "permissions of its directories",
				 kind, f->path, strerror(errno));
		return;
	}
	if (S_ISDIR(st.st_mode))
		mode |= X_OK;
	if (f->kind == FS_RW)
		mode |= W_OK;
	if (access(f->path, mode) < 0)
		warn_add(w, &f->at, "[filesystem] %s = %s: you cannot %s it (%s); fix: %s", kind,
			 f->path, f->kind == FS_RW ? "read and write" : "read", strerror(errno),
			 f->kind == FS_RW ? "fix its permissions, or show it ro"
					  : "fix its permissions, or drop the entry");
}

/* The entry that decides what is at path: the deepest one above it, or NULL (agentbox's own
 * root). The private /tmp is agentbox's unless the profile lists /tmp. */
static const struct fs_entry *deepest_above(const struct policy *p, const char *path)
{
	const struct fs_entry *best = NULL;

	for (size_t i = 0; i < p->n_fs; i++) {
		const struct fs_entry *f = &p->fs[i];
		if (f->kind == FS_SYMLINK || !strcmp(f->path, path) || !under(path, f->path))
			continue;
		if (!best || strlen(f->path) > strlen(best->path))
			best = f;
	}
	return best;
}

static bool listed(const struct policy *p, const char *path)
{
	for (size_t i = 0; i < p->n_fs; i++)
		if (!strcmp(p->fs[i].path, path))
			return true;
	return false;
}

/* A tmpfs inside a tree shown from the host needs its mount point there: agentbox creates
 * mount points on its own tmpfs only (mounts.c), the private /tmp among them. */
static void tmpfs_point(struct warn_list *w, const struct policy *p, const struct fs_entry *f)
{
	const struct fs_entry *above = deepest_above(p, f->path);
	bool own_tmp =
	    under(f->path, "/tmp") && !listed(p, "/tmp") && (!above || under("/tmp", above->path));
	struct stat st;

	if (!above || own_tmp || above->kind == FS_TMPFS || above->kind == FS_HIDE ||
	    above->optional)
		return;
	if (stat(f->path, &st) == 0 || errno != ENOENT)
		return;
	warn_add(w, &f->at,
		 "[filesystem] tmpfs = %s: no such directory in %s, which the sandbox shows from "
		 "the host (agentbox makes mount points only on its own tmpfs); fix: create it on "
		 "the host, or drop the entry",
		 f->path, above->path);
}

/* What credential_source.c will insist on: a regular file of the caller's, owner-only. */
static void credential_file(struct warn_list *w, const struct policy *p,
			    const struct policy_credential *c)
{
	char key[64];
	const struct origin *at;
	struct stat st;

	snprintf(key, sizeof(key), "credential %s.source", c->name);
	at = policy_key_at(p, key);
	if (lstat(c->source_arg, &st) < 0)
		warn_add(w, at,
			 "[credential %s] source = %s: cannot be reached (%s); fix: create it "
			 "(chmod 600)",
			 c->name, c->source, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		warn_add(w, at,
			 "[credential %s] source = %s: not a regular file; fix: point it at the "
			 "file itself",
			 c->name, c->source);
	else if (st.st_uid != getuid() || (st.st_mode & 077))
		warn_add(
		    w, at,
		    "[credential %s] source = %s: not yours alone (owner or mode); fix: chown it "
		    "to you and chmod 600 it",
		    c->name, c->source);
}

int policy_path_warnings(const struct policy *p, struct strv *out, struct ab_err *e)
{
	struct warn_list w = {0};

	for (size_t i = 0; i < p->n_fs; i++) {
		const struct fs_entry *f = &p->fs[i];
		if ((f->kind == FS_RO || f->kind == FS_RW || f->kind == FS_OVERLAY) && !f->optional)
			bind_source(&w, f);
		else if (f->kind == FS_TMPFS)
			tmpfs_point(&w, p, f);
	}
	for (size_t i = 0; i < p->n_creds; i++)
		if (p->creds[i].source_kind == CRED_SOURCE_FILE)
			credential_file(&w, p, &p->creds[i]);
	if (p->net_ca && access(p->net_ca, R_OK) < 0)
		warn_add(&w, &p->net_ca_at,
			 "[network] ca = %s: cannot be read (%s); fix: check the path", p->net_ca,
			 strerror(errno));
	return warn_list_out(&w, out, e);
}

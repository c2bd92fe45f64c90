/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Ownership that overlayfs could not copy up (see include/overlay_ids.h). */
#include "overlay_ids.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsops.h"

#define MAX_DEPTH 256

struct id_walk {
	uid_t uid;
	gid_t gid;
	gid_t groups[NGROUPS_MAX];
	int n_groups;
	char path[PATH_MAX]; /* the entry being looked at, for the message */
	size_t len;
	unsigned depth;
	struct ab_err *e;
};

static int walk_dir(struct id_walk *w, int dirfd);

/* Whether the command could write the entry: the permission bits as the sandbox's process
 * sees them (its uid, its groups; no capability overrides them there, even for root). */
static bool writable(const struct id_walk *w, const struct stat *st)
{
	if (st->st_uid == w->uid)
		return st->st_mode & S_IWUSR;
	if (st->st_gid == w->gid)
		return st->st_mode & S_IWGRP;
	for (int i = 0; i < w->n_groups; i++)
		if (st->st_gid == w->groups[i])
			return st->st_mode & S_IWGRP;
	return st->st_mode & S_IWOTH;
}

static int check_entry(int dirfd, const char *name, void *ctx)
{
	struct id_walk *w = ctx;
	size_t len = w->len, n = strlen(name);
	struct stat st;
	int fd, rc = 0;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : ab_fail(w->e, errno, "%s/%s", w->path, name);
	if (len + 1 + n >= sizeof(w->path))
		return ab_fail(w->e, ENAMETOOLONG, "%s/%s", w->path, name);
	w->path[len] = '/';
	memcpy(w->path + len + 1, name, n + 1);
	w->len = len + 1 + n;
	/* only what the caller could change matters: a foreign file it cannot write stays as it
	 * is (the kernel refuses the write before any copy-up) */
	if ((st.st_uid != w->uid || st.st_gid != w->gid) && !S_ISLNK(st.st_mode) &&
	    writable(w, &st))
		rc = ab_fail(w->e, 0,
			     "%s belongs to uid %u, gid %u: inside the overlay it can be read but "
			     "not changed (the sandbox maps only uid %u and gid %u)",
			     w->path, (unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)w->uid,
			     (unsigned)w->gid),
		ab_hint(w->e, "chgrp/chown it (and the tree) to your own ids, or bind this tree "
			      "with rw instead of overlay");
	if (rc == 0 && S_ISDIR(st.st_mode) && w->depth < MAX_DEPTH) {
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) { /* an unreadable directory: nothing in it the command could open */
			w->depth++;
			rc = walk_dir(w, fd);
			w->depth--;
			close(fd);
		}
	}
	w->len = len;
	w->path[len] = '\0';
	return rc;
}

static int walk_dir(struct id_walk *w, int dirfd)
{
	return fs_each_entry(dirfd, check_entry, w, w->e);
}

int overlay_ids_check(const struct mount_plan *plan, uid_t uid, gid_t gid, struct ab_err *e)
{
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *o = &plan->ops[i];
		static struct id_walk w; /* NGROUPS_MAX ids: not on the stack */
		int fd, rc;
		if (o->kind != MOP_OVERLAY || o->skipped)
			continue;
		memset(&w, 0, sizeof(w));
		w.uid = uid;
		w.gid = gid;
		w.e = e;
		if ((w.n_groups = getgroups(NGROUPS_MAX, w.groups)) < 0)
			return ab_fail(e, errno, "getgroups");
		if ((size_t)snprintf(w.path, sizeof(w.path), "%s",
				     strcmp(o->source, "/") ? o->source : "") >= sizeof(w.path))
			return ab_fail(e, ENAMETOOLONG, "overlay %s", o->source);
		w.len = strlen(w.path);
		fd = open(o->source, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return ab_fail(e, errno, "overlay %s", o->source);
		rc = walk_dir(&w, fd);
		close(fd);
		if (rc < 0)
			return -1;
	}
	return 0;
}

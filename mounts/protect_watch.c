/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The protected paths an rw tree lacks (include/mounts.h: protect_missing), watched with inotify
 * from the supervisor. The kernel has no way to refuse the creation of one name in a writable
 * directory that has no entry for it to mount on, and an entry made for the purpose would sit in
 * the user's tree; so the creation is seen as it happens instead: what appears is renamed aside
 * at once (NAME.agentbox-refused, never deleted: the host's user may have made it) and the run
 * stops. A directory on the way (a new .vscode, a new .git) is watched in turn. */
#include "protect_watch.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "json.h"
#include "strv.h"

/* the path is /proc/self/fd/N: the magic link must be followed to the directory it holds */
#define WATCH_EVENTS (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)
#define REFUSED_SUFFIX ".agentbox-refused"

struct watched_dir {
	int wd, fd; /* the inotify watch; the directory, O_PATH */
	char *path;
};

struct watched_name {
	size_t dir; /* in dirs */
	char *name, *rest;
	const char *why;
	bool descended; /* a directory on the way, watched itself now */
};

struct protect_watch {
	int ifd;
	struct watched_dir *dirs;
	size_t n_dirs;
	struct watched_name *names;
	size_t n_names;
	struct strv moved; /* "PATH\tMOVED": what was renamed aside */
};

/* A directory, with no symlink on its (canonical) path. */
static int open_dir(int at, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					  (path[0] == '/' ? 0 : RESOLVE_BENEATH)};
	return (int)syscall(SYS_openat2, at, path, &how, sizeof(how));
}

/* The watched directory fd (opened by the caller) is, or joins, dirs; its index, or -1. */
static int watch_dir(struct protect_watch *w, int fd, const char *path, struct ab_err *e)
{
	char proc[64];
	struct watched_dir *v;
	int wd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if ((wd = inotify_add_watch(w->ifd, proc, WATCH_EVENTS)) < 0) {
		close(fd);
		return ab_fail(e, errno, "cannot watch %s for protected paths", path);
	}
	for (size_t i = 0; i < w->n_dirs; i++)
		if (w->dirs[i].wd == wd) { /* the same directory by another path */
			close(fd);
			return (int)i;
		}
	if (!(v = realloc(w->dirs, (w->n_dirs + 1) * sizeof(*v)))) {
		close(fd);
		return ab_fail(e, ENOMEM, "protect watch");
	}
	w->dirs = v;
	v[w->n_dirs] = (struct watched_dir){.wd = wd, .fd = fd, .path = strdup(path)};
	if (!v[w->n_dirs].path) {
		close(fd);
		return ab_fail(e, ENOMEM, "protect watch");
	}
	return (int)w->n_dirs++;
}

static int add_name(struct protect_watch *w, size_t dir, const char *name, const char *rest,
		    const char *why, struct ab_err *e)
{
	struct watched_name n = {
	    .dir = dir, .why = why, .name = strdup(name), .rest = strdup(rest)};
	struct watched_name *v =
	    n.name && n.rest ? realloc(w->names, (w->n_names + 1) * sizeof(*v)) : NULL;

	if (!v) { /* only whole entries are listed: each is looked at again at the end */
		free(n.name);
		free(n.rest);
		return ab_fail(e, ENOMEM, "protect watch");
	}
	w->names = v;
	v[w->n_names++] = n;
	return 0;
}

/* The host path of name in watched directory d. */
static void entry_path(const struct watched_dir *d, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", strcmp(d->path, "/") ? d->path : "", name);
}

/* Renames what appeared at name aside, and says so: the run stops (e, cause protected-path). */
static int refuse(struct protect_watch *w, const struct watched_name *n, struct audit *a,
		  struct ab_err *e)
{
	const struct watched_dir *d = &w->dirs[n->dir];
	char aside[NAME_MAX + 1], path[PATH_MAX], moved_to[PATH_MAX], line[2 * PATH_MAX + 2];
	bool moved = false;
	struct json *j;

	for (int i = 0; i < 100 && !moved; i++) {
		if (i == 0)
			snprintf(aside, sizeof(aside), "%.200s" REFUSED_SUFFIX, n->name);
		else
			snprintf(aside, sizeof(aside), "%.200s" REFUSED_SUFFIX "-%d", n->name, i);
		if (syscall(SYS_renameat2, d->fd, n->name, d->fd, aside, RENAME_NOREPLACE) == 0)
			moved = true;
		else if (errno != EEXIST)
			break; /* gone already, or not ours to move: the run stops all the same */
	}
	entry_path(d, n->name, path, sizeof(path));
	entry_path(d, aside, moved_to, sizeof(moved_to));
	j = audit_begin(a, "protect");
	json_kv_str(j, "decision", "deny");
	json_kv_str(j, "path", path);
	json_kv_str(j, "why", n->why);
	json_kv_str(j, "moved_to", moved ? moved_to : NULL);
	if (audit_emit(a, e) < 0)
		return -1;
	if (moved) {
		snprintf(line, sizeof(line), "%s\t%s", path, moved_to);
		(void)strv_push(&w->moved, line);
	}
	ab_fail(e, 0, "%s appeared in an rw tree while the command ran: a protected path (%s); %s",
		path, n->why,
		moved ? "it was renamed aside and the run stopped" : "the run stopped");
	ab_hint(e,
		"unprotect its name in [filesystem] if the command must write it, or use overlay "
		"instead of rw (promote then refuses it)");
	e->cause = "protected-path";
	return -1;
}

static int appeared(struct protect_watch *w, size_t k, struct audit *a, struct ab_err *e);

/* A directory on the way to a protected path appeared: watch it for the next component, and
 * look at once, since it may have been made before the watch. */
static int descend(struct protect_watch *w, size_t k, struct audit *a, struct ab_err *e)
{
	const struct watched_name n = w->names[k];
	char path[PATH_MAX], first[NAME_MAX + 1];
	size_t len = strcspn(n.rest, "/");
	int fd, dir;

	entry_path(&w->dirs[n.dir], n.name, path, sizeof(path));
	if ((fd = open_dir(w->dirs[n.dir].fd, n.name)) < 0)
		return refuse(w, &w->names[k], a, e); /* replaced meanwhile by something else */
	if ((dir = watch_dir(w, fd, path, e)) < 0)
		return -1;
	w->names[k].descended = true;
	snprintf(first, sizeof(first), "%.*s", (int)len, n.rest);
	if (add_name(w, (size_t)dir, first, n.rest + len + (n.rest[len] == '/'), n.why, e) < 0)
		return -1;
	return appeared(w, w->n_names - 1, a, e);
}

/* Name k may be there now: a protected path is refused, a directory on its way descended into. */
static int appeared(struct protect_watch *w, size_t k, struct audit *a, struct ab_err *e)
{
	const struct watched_name *n = &w->names[k];
	struct stat st;

	if (fstatat(w->dirs[n->dir].fd, n->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : refuse(w, n, a, e);
	if (n->rest[0] && S_ISDIR(st.st_mode))
		return n->descended ? 0 : descend(w, k, a, e);
	return refuse(w, n, a, e);
}

int protect_watch_start(const struct mount_plan *plan, struct protect_watch **out, struct ab_err *e)
{
	struct protect_watch *w;

	*out = NULL;
	for (size_t i = 0; i < plan->n_missing && !*out; i++)
		if (!plan->missing[i].overlay && !(*out = calloc(1, sizeof(**out))))
			return ab_fail(e, ENOMEM, "protect watch");
	if (!(w = *out))
		return 0; /* nothing to watch: no inotify instance either */
	if ((w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
		return ab_fail(e, errno, "cannot watch the rw trees for protected paths (inotify)"),
		       ab_hint(e,
			       "each run with an rw tree uses one inotify instance: past "
			       "fs.inotify.max_user_instances (128 by default) runs of one user at "
			       "once, raise it (sysctl), or use overlay trees");
	for (size_t i = 0; i < plan->n_missing; i++) {
		const struct protect_missing *m = &plan->missing[i];
		int fd, dir;
		struct stat st;
		if (m->overlay)
			continue;
		if ((fd = open_dir(AT_FDCWD, m->dir)) < 0 && errno == ENOSYS)
			return ab_fail(e, ENOSYS, "cannot open %s to watch for protected paths",
				       m->dir),
			       ab_hint(e, "openat2 is refused here: inside another sandbox, give "
					  "the outer "
					  "one [sandbox] nesting = true");
		if (fd < 0)
			return ab_fail(e, errno, "cannot open %s to watch for protected paths",
				       m->dir);
		if ((dir = watch_dir(w, fd, m->dir, e)) < 0 ||
		    add_name(w, (size_t)dir, m->name, m->rest, m->why, e) < 0)
			return -1;
		/* watched from here on; what came before the watch is looked at now */
		if (fstatat(w->dirs[dir].fd, m->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return ab_fail(e, 0, "%s/%s appeared while the sandbox was being made",
				       m->dir, m->name),
			       ab_hint(e, "run again; if something on the host makes it, unprotect "
					  "its name in [filesystem]");
	}
	return 0;
}

int protect_watch_fd(const struct protect_watch *w)
{
	return w->ifd;
}

/* Every name, looked at again: the queue overflowed, or the run is ending. */
static int look_again(struct protect_watch *w, struct audit *a, struct ab_err *e)
{
	for (size_t k = 0; k < w->n_names; k++)
		if (appeared(w, k, a, e) < 0)
			return -1;
	return 0;
}

static int on_event(struct protect_watch *w, const struct inotify_event *ev, struct audit *a,
		    struct ab_err *e)
{
	if (ev->mask & IN_Q_OVERFLOW)
		return look_again(w, a, e);
	if (!ev->len)
		return 0;
	for (size_t k = 0; k < w->n_names; k++)
		if (w->dirs[w->names[k].dir].wd == ev->wd && !strcmp(w->names[k].name, ev->name))
			return appeared(w, k, a, e);
	return 0;
}

int protect_watch_check(struct protect_watch *w, struct audit *a, struct ab_err *e)
{
	char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(w->ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (on_event(w, ev, a, e) < 0)
				return -1;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		return ab_fail(e, errno, "reading the protect watch");
	return 0;
}

int protect_watch_settle(struct protect_watch *w, struct audit *a, struct ab_err *e)
{
	return protect_watch_check(w, a, e) < 0 ? -1 : look_again(w, a, e);
}

void protect_watch_report(const struct protect_watch *w)
{
	for (size_t i = 0; w && i < w->moved.n; i++) {
		const char *tab = strchr(w->moved.v[i], '\t');
		ab_say("%.*s was renamed %s: look at it before you delete it or move it back\n",
		       (int)(tab - w->moved.v[i]), w->moved.v[i], tab + 1);
	}
}

void protect_watch_close(struct protect_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_dirs; i++) {
		close(w->dirs[i].fd);
		free(w->dirs[i].path);
	}
	for (size_t i = 0; i < w->n_names; i++) {
		free(w->names[i].name);
		free(w->names[i].rest);
	}
	free(w->dirs);
	free(w->names);
	strv_free(&w->moved);
	if (w->ifd >= 0)
		close(w->ifd);
	free(w);
}

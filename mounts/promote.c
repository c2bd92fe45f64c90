/* `agentbox promote`: a run's changes applied to the host, all or nothing as to conflicts.
 * promote refuses a path when the host changed it after the run started: its entry's ctime (or,
 * for a path the host does not have, its nearest existing directory's) is not older than the
 * start. ctime cannot be set from user space, so this catches every write, rename or delete on
 * the host since then, without hashing the tree at start. Host paths are walked one component
 * at a time, no symlink followed (fs_open_nolinks): neither the upper layer nor the host tree
 * can redirect a read or a write, and a change whose host path crosses a symlink stops the
 * promote before the first write, as a conflict does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsops.h"
#include "guarded.h"
#include "overlay_internal.h"
#include "printable.h"

static const char *const kind_names[] = {"added", "modified", "deleted"};

/* A name the command chose, made safe in buf for a message (printable.h). */
static const char *safe(const char *s, char *buf, size_t size)
{
	printable(s, buf, size);
	return buf;
}

static bool changed_since(const struct stat *st, const struct timespec *t0)
{
	return st->st_ctim.tv_sec > t0->tv_sec ||
	       (st->st_ctim.tv_sec == t0->tv_sec && st->st_ctim.tv_nsec >= t0->tv_nsec);
}

/* Whether anything in the host directory at dirfd/name changed since t0. */
static bool subtree_changed(int dirfd, const char *name, const struct timespec *t0)
{
	struct stat st;
	struct dirent *d;
	bool changed = false;
	DIR *dir;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno != ENOENT;
	if (changed_since(&st, t0))
		return true;
	if (!S_ISDIR(st.st_mode))
		return false;
	fd = fs_open_nolinks(dirfd, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return true; /* cannot tell: treat as changed */
	}
	while (!changed && (d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			changed = subtree_changed(fd, d->d_name, t0);
	closedir(dir);
	return changed;
}

/* Opens the directory holding rel in the host tree, one component at a time, never following
 * a symlink. *name is set to rel's last component. Missing directories are created when
 * create is set (they are in the changes). */
static int open_parent(const struct run_info *r, unsigned tree, const char *rel, bool create,
		       const char **name, struct ab_err *e)
{
	char buf[PATH_MAX];
	char *part, *next;
	int fd = overlay_open_root(r, tree), sub;

	if (fd < 0)
		return ab_fail(e, errno, "cannot open %s", r->trees.v[tree]),
		       ab_hint(e,
			       "a directory on that path became a symlink after the run started");
	snprintf(buf, sizeof(buf), "%s", rel);
	*name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	for (part = buf; (next = strchr(part, '/')); part = next + 1) {
		*next = '\0';
		if (create && mkdirat(fd, part, 0755) < 0 && errno != EEXIST) {
			close(fd);
			return ab_fail(e, errno, "cannot create %s/%s", r->trees.v[tree], buf);
		}
		sub = fs_open_nolinks(fd, part, O_PATH | O_DIRECTORY);
		close(fd);
		if (sub < 0)
			return ab_fail(e, errno, "%s/%s", r->trees.v[tree], buf),
			       ab_hint(e,
				       "a host directory on the path became a symlink or a file");
		fd = sub;
	}
	return fd;
}

/* Whether the host changed rel (or, when it has no rel, its nearest directory) since the run
 * started; a change that replaces a directory needs all of it unchanged. */
static bool conflicts(const struct run_info *r, const struct change *c)
{
	char buf[PATH_MAX];
	struct stat st;
	int fd = overlay_open_root(r, c->tree), sub;
	char *part, *next;
	bool changed;

	if (fd < 0)
		return true;
	snprintf(buf, sizeof(buf), "%s", c->rel);
	for (part = buf;; part = next + 1) {
		next = strchr(part, '/');
		if (next)
			*next = '\0';
		if (fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			/* not on the host: its nearest directory must be unchanged */
			changed = errno != ENOENT || fstat(fd, &st) < 0 ||
				  changed_since(&st, &r->started);
			break;
		}
		if (!next || !S_ISDIR(st.st_mode)) {
			changed = (S_ISDIR(st.st_mode) && !S_ISDIR(c->mode))
				      ? subtree_changed(fd, part, &r->started)
				      : changed_since(&st, &r->started);
			break;
		}
		sub = fs_open_nolinks(fd, part, O_PATH | O_DIRECTORY);
		close(fd);
		if (sub < 0)
			return true;
		fd = sub;
	}
	close(fd);
	return changed;
}

/* A fresh name for a file being written next to its target. */
static void temp_name(char *buf, size_t size)
{
	unsigned rnd = 0;

	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (unsigned)time(NULL) ^ (unsigned)getpid();
	snprintf(buf, size, ".agentbox-promote.%ld.%08x", (long)getpid(), rnd);
}

/* Puts tmp in place of name. A directory there (the command replaced it) is swapped out
 * whole and removed after, so a failure never loses it. */
static int replace_with(int parent, const char *tmp, const char *name, struct ab_err *e)
{
	struct stat st;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		if (renameat2(parent, tmp, parent, name, RENAME_EXCHANGE) < 0) {
			int err = errno;
			unlinkat(parent, tmp, 0);
			return ab_fail(e, err, "cannot replace the directory %s", name);
		}
		return fs_remove_tree(parent, tmp, e);
	}
	if (renameat(parent, tmp, parent, name) < 0) {
		int err = errno;
		unlinkat(parent, tmp, 0);
		return ab_fail(e, err, "cannot rename into %s", name);
	}
	return 0;
}

/* A temporary name in the host directory, then renamed over the target: a reader sees the old
 * file or the new one, never half of it. Modes lose setuid, setgid and sticky bits. */
static int install_file(int parent, const char *name, const struct run_info *r,
			const struct change *c, struct ab_err *e)
{
	char tmp[64];
	int in = overlay_open_upper(r, c->tree, c->rel, O_RDONLY | O_NONBLOCK), out;
	struct stat st;

	if (in < 0)
		return ab_fail(e, errno, "cannot read %s/upper/%u/%s", r->dir, c->tree, c->rel);
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return ab_fail(e, EINVAL, "%s/upper/%u/%s is no longer a regular file", r->dir,
			       c->tree, c->rel);
	}
	temp_name(tmp, sizeof(tmp));
	out = openat(parent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return ab_fail(e, errno, "cannot create a file next to %s", name);
	}
	if (fs_copy_fd(in, out) < 0 || fchmod(out, c->mode & 0777) < 0 || fsync(out) < 0) {
		int err = errno;
		close(in);
		close(out);
		unlinkat(parent, tmp, 0);
		return ab_fail(e, err, "cannot write %s", name);
	}
	close(in);
	close(out);
	return replace_with(parent, tmp, name, e);
}

static int install_link(int parent, const char *name, const struct run_info *r,
			const struct change *c, struct ab_err *e)
{
	char target[PATH_MAX], tmp[64];
	int fd = overlay_open_upper(r, c->tree, c->rel, O_PATH);
	ssize_t n = fd < 0 ? -1 : readlinkat(fd, "", target, sizeof(target) - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return ab_fail(e, errno, "readlink %s/upper/%u/%s", r->dir, c->tree, c->rel);
	target[n] = '\0';
	temp_name(tmp, sizeof(tmp));
	if (symlinkat(target, parent, tmp) < 0)
		return ab_fail(e, errno, "cannot create the symlink %s", name);
	return replace_with(parent, tmp, name, e);
}

static int install_dir(int parent, const char *name, mode_t mode, struct ab_err *e)
{
	struct stat st;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (fs_remove_tree(parent, name, e) < 0)
		return -1;
	/* writable for now, so what goes in it can be written; promote sets the mode last */
	if (mkdirat(parent, name, (mode & 0777) | 0700) < 0)
		return ab_fail(e, errno, "cannot create the directory %s", name);
	return 0;
}

/* 1: applied, 0: skipped (a special file), -1: error. */
static int apply(const struct run_info *r, const struct change *c, struct ab_err *e)
{
	const char *name = NULL;
	int parent, rc;

	if (c->kind != CH_DELETED && !S_ISDIR(c->mode) && !S_ISLNK(c->mode) && !S_ISREG(c->mode))
		return 0;
	parent = open_parent(r, c->tree, c->rel, c->kind != CH_DELETED, &name, e);
	if (parent < 0)
		return c->kind == CH_DELETED && e->errnum == ENOENT ? 1 : -1; /* already gone */
	if (c->kind == CH_DELETED)
		rc = fs_remove_tree(parent, name, e);
	else if (S_ISDIR(c->mode))
		rc = install_dir(parent, name, c->mode, e);
	else if (S_ISLNK(c->mode))
		rc = install_link(parent, name, r, c, e);
	else
		rc = install_file(parent, name, r, c, e);
	close(parent);
	return rc < 0 ? -1 : 1;
}

/* New directories were made writable for their contents; now they get their own modes,
 * deepest first. */
static void set_dir_modes(const struct run_info *r, const struct changes *c, char **paths, int n)
{
	for (size_t i = c->n; i-- > 0;) {
		const struct change *ch = &c->v[i];
		struct ab_err ignored = {0};
		const char *name;
		int parent;
		if (ch->kind == CH_DELETED || !S_ISDIR(ch->mode) ||
		    !overlay_selected(r, ch, paths, n))
			continue;
		parent = open_parent(r, ch->tree, ch->rel, false, &name, &ignored);
		if (parent < 0)
			continue;
		if (fchmodat(parent, name, ch->mode & 0777, 0) < 0)
			ab_say("cannot set the mode of %s/%s: %s\n", r->trees.v[ch->tree], ch->rel,
			       strerror(errno));
		close(parent);
	}
}

/* All or nothing: every selected change is checked before the first write. A change the host
 * made after the run started is a conflict; a change whose host path crosses a symlink is
 * refused, and so is the whole promote: applying it means replacing the host's link (one
 * committed in a cloned repository, say, to a directory outside) with the command's directory,
 * and applying the rest without it would half-apply what the command did. Each is said and
 * audited; 1 when any stopped the promote. */
static int check_all(const struct run_info *r, const struct changes *c, char **paths, int n,
		     struct audit *a, struct ab_err *e)
{
	char host[PATH_MAX], shown[PATH_MAX * 4];
	size_t conflicted = 0, linked = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct change *ch = &c->v[i];
		bool below_link;
		if (!overlay_selected(r, ch, paths, n))
			continue;
		if (!(below_link = ch->beyond_link) && !conflicts(r, ch))
			continue;
		overlay_host_path(r, ch->tree, ch->rel, host, sizeof(host));
		safe(host, shown, sizeof(shown));
		ab_say("%s: %s%s\n", below_link ? "refused" : "conflict", shown,
		       below_link
			   ? ": the host path crosses a symlink (never followed, nor replaced "
			     "with the command's directory)"
			   : " changed on the host after the run started");
		below_link ? linked++ : conflicted++;
		if (overlay_audit_change(a, "promote", r, host, kind_names[ch->kind],
					 below_link ? "refused" : "conflict", e) < 0)
			return -1;
	}
	if (conflicted)
		ab_say("nothing promoted: %zu conflict%s; review the host's "
		       "changes, then promote only the other paths or discard this run\n",
		       conflicted, conflicted == 1 ? "" : "s");
	if (linked)
		ab_say("%s%zu change%s below a symlink on the host; promote only the "
		       "other paths, or copy %s from %s/upper by hand after checking %s\n",
		       conflicted ? "and " : "nothing promoted: ", linked, linked == 1 ? "" : "s",
		       linked == 1 ? "it" : "them", r->dir, linked == 1 ? "it" : "them");
	return conflicted || linked ? 1 : 0;
}

/* Protected and guarded paths are refused (listed, audited); the rest is applied. */
int overlay_promote(const struct run_info *r, const struct changes *c, char **paths, int n,
		    struct audit *a, struct ab_err *e)
{
	char host[PATH_MAX], shown[PATH_MAX * 4];
	size_t done = 0, skipped = 0, refused = 0;
	struct strv gfiles = {0}, gdirs = {0};
	int result = check_all(r, c, paths, n, a, e);

	if (result != 0)
		return result;
	if (guarded_paths_here(&gfiles, &gdirs, e) < 0)
		goto out;
	for (size_t i = 0; i < c->n; i++) {
		const struct change *ch = &c->v[i];
		const char *why;
		int rc;
		if (!overlay_selected(r, ch, paths, n))
			continue;
		overlay_host_path(r, ch->tree, ch->rel, host, sizeof(host));
		why = guarded_refusal(ch->rel, ch->kind != CH_DELETED && S_ISDIR(ch->mode), host,
				      &gfiles, &gdirs);
		if (why) {
			ab_say("refused: %s: %s\n", safe(host, shown, sizeof(shown)), why);
			refused++;
			if ((result = overlay_audit_change(a, "promote", r, host,
							   kind_names[ch->kind], "refused", e)) < 0)
				goto out;
			continue;
		}
		if ((rc = apply(r, ch, e)) < 0) {
			result = ab_context(e, "promote %s (%zu change%s applied before it)", host,
					    done, done == 1 ? "" : "s");
			goto out;
		}
		rc ? done++ : skipped++;
		if (!rc)
			ab_say("not promoted: %s is a special file\n",
			       safe(host, shown, sizeof(shown)));
		if ((result = overlay_audit_change(a, "promote", r, host, kind_names[ch->kind],
						   rc ? "applied" : "skipped", e)) < 0)
			goto out;
	}
	set_dir_modes(r, c, paths, n);
	printf("promoted %zu change%s", done, done == 1 ? "" : "s");
	if (skipped)
		printf(", skipped %zu special file%s", skipped, skipped == 1 ? "" : "s");
	if (refused)
		printf(", refused %zu protected path%s", refused, refused == 1 ? "" : "s");
	printf("\n");
out:
	strv_free(&gfiles);
	strv_free(&gdirs);
	return result;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
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
#include "mounts_internal.h"
#include "overlay_internal.h"
#include "printable.h"
#include "promote_log.h"

static const char *const kind_names[] = {"added", "modified", "deleted"};

/* ---------- the log of earlier promotes (promote_log.h) ---------- */

static const char hexdigits[] = "0123456789abcdef";

static bool hex_decode(const char *hex, char *out, size_t size)
{
	size_t n = strlen(hex);

	if (!strcmp(hex, "-")) {
		out[0] = '\0';
		return true;
	}
	if (!n || n % 2 || n / 2 >= size)
		return false;
	for (size_t i = 0; i < n / 2; i++) {
		const char *hi = strchr(hexdigits, hex[2 * i]),
			   *lo = strchr(hexdigits, hex[2 * i + 1]);
		if (!hex[2 * i] || !hex[2 * i + 1] || !hi || !lo)
			return false;
		out[i] = (char)((hi - hexdigits) << 4 | (lo - hexdigits));
		if (!out[i])
			return false; /* a path holds no NUL */
	}
	out[n / 2] = '\0';
	return true;
}

bool promote_log_line(const char *line)
{
	return !strncmp(line, "promoted ", 9) || !strncmp(line, "settled ", 8);
}

static int add_mark(struct promote_mark **v, size_t *n, unsigned tree, const char *rel,
		    struct timespec ctime, struct ab_err *e)
{
	struct promote_mark *grown = realloc(*v, (*n + 1) * sizeof(**v));

	if (!grown)
		return ab_fail(e, ENOMEM, "promote");
	*v = grown;
	grown[*n] = (struct promote_mark){tree, strdup(rel), ctime};
	if (!grown[*n].rel)
		return ab_fail(e, ENOMEM, "promote");
	(*n)++;
	return 0;
}

/* One line of the log into log; a line that does not parse ends the load (an edited record). */
static int parse_mark(const struct run_info *r, struct promote_log *log, const char *line,
		      struct ab_err *e)
{
	static char hex[2 * PATH_MAX + 2], rel[PATH_MAX];
	long long sec = 0;
	long nsec = 0;
	unsigned tree;
	bool settled = line[0] == 's';
	int fields = settled ? sscanf(line, "settled %u %8193s %lld.%ld", &tree, hex, &sec, &nsec)
			     : sscanf(line, "promoted %u %8193s", &tree, hex);

	if (strlen(line) > sizeof(hex) + 64 || fields != (settled ? 4 : 2) || tree >= r->trees.n ||
	    !hex_decode(hex, rel, sizeof(rel)) || nsec < 0 || nsec > 999999999)
		return ab_fail(e, 0, "%s/" RUN_FILE ": a promote line that does not parse", r->dir),
		       ab_hint(e, "the record was edited; promote what is left by hand");
	if (settled)
		return add_mark(&log->settled, &log->n_settled, tree, rel,
				(struct timespec){(time_t)sec, nsec}, e);
	return add_mark(&log->promoted, &log->n_promoted, tree, rel, (struct timespec){0}, e);
}

int promote_log_load(const struct run_info *r, struct promote_log *log, struct ab_err *e)
{
	int fd = dup(r->fd), rc = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	*log = (struct promote_log){.fd = -1};
	/* the dup shares r->fd's offset, which open_run left at the end */
	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return ab_fail(e, errno, "%s/" RUN_FILE, r->dir);
	}
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (promote_log_line(line))
			rc = parse_mark(r, log, line, e);
	}
	free(line);
	fclose(f);
	if (rc < 0)
		promote_log_free(log);
	return rc;
}

void promote_log_free(struct promote_log *log)
{
	for (size_t i = 0; i < log->n_promoted; i++)
		free(log->promoted[i].rel);
	for (size_t i = 0; i < log->n_settled; i++)
		free(log->settled[i].rel);
	free(log->promoted);
	free(log->settled);
	if (log->fd >= 0)
		close(log->fd);
	*log = (struct promote_log){.fd = -1};
}

static bool was_promoted(const struct promote_log *log, const struct change *c)
{
	for (size_t i = 0; i < log->n_promoted; i++)
		if (log->promoted[i].tree == c->tree && !strcmp(log->promoted[i].rel, c->rel))
			return true;
	return false;
}

int promote_log_pending(const struct run_info *r, struct changes *c, bool keep, struct ab_err *e)
{
	struct promote_log log;
	size_t kept = 0;

	if (promote_log_load(r, &log, e) < 0)
		return -1;
	for (size_t i = 0; i < c->n; i++) {
		if (was_promoted(&log, &c->v[i]) && keep)
			c->v[i].promoted = true, c->v[kept++] = c->v[i];
		else if (was_promoted(&log, &c->v[i]))
			free(c->v[i].rel);
		else
			c->v[kept++] = c->v[i];
	}
	c->n = kept;
	promote_log_free(&log);
	return 0;
}

/* The record, opened again for appending: the same file open_run checked, or nothing. */
static int log_open(const struct run_info *r, struct promote_log *log, struct ab_err *e)
{
	char path[PATH_MAX + 8];
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/" RUN_FILE, r->dir);
	log->fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (log->fd < 0 || fstat(log->fd, &a) < 0 || fstat(r->fd, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return ab_fail(e, log->fd < 0 ? errno : EINVAL, "cannot record the promote in %s",
			       path),
		       ab_hint(e, "nothing was promoted; the changes record must stay writable");
	return 0;
}

/* Appends a mark for rel's first len bytes, one line in one write (and to log, for the rest
 * of this promote). */
static int log_mark(struct promote_log *log, bool settled, unsigned tree, const char *rel,
		    size_t len, struct timespec ctime, struct ab_err *e)
{
	static char line[2 * PATH_MAX + 96];
	char part[PATH_MAX];
	size_t n;

	if (len >= sizeof(part))
		return ab_fail(e, ENAMETOOLONG, "promote");
	memcpy(part, rel, len);
	part[len] = '\0';
	n = (size_t)snprintf(line, sizeof(line), "%s %u ", settled ? "settled" : "promoted", tree);
	if (!len)
		line[n++] = '-';
	for (size_t i = 0; i < len; i++) {
		line[n++] = hexdigits[(unsigned char)rel[i] >> 4];
		line[n++] = hexdigits[(unsigned char)rel[i] & 15];
	}
	if (settled)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %lld.%09ld",
				      (long long)ctime.tv_sec, ctime.tv_nsec);
	line[n++] = '\n';
	if (fs_write_all(log->fd, line, n) < 0)
		return ab_fail(e, errno, "cannot record the promote of %s", part);
	return settled ? add_mark(&log->settled, &log->n_settled, tree, part, ctime, e)
		       : add_mark(&log->promoted, &log->n_promoted, tree, part, ctime, e);
}

/* The last settled mark for rel's first len bytes, or NULL. */
static const struct promote_mark *settled_at(const struct promote_log *log, unsigned tree,
					     const char *rel, size_t len)
{
	for (size_t i = log->n_settled; i-- > 0;) {
		const struct promote_mark *m = &log->settled[i];
		if (m->tree == tree && strlen(m->rel) == len && !strncmp(m->rel, rel, len))
			return m;
	}
	return NULL;
}

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

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Whether the host changed the entry at rel's first len bytes since the run started: its
 * ctime is not older than the start, nor the one an earlier promote of this run left. */
static bool host_changed(const struct run_info *r, const struct promote_log *log, unsigned tree,
			 const char *rel, size_t len, const struct stat *st)
{
	const struct promote_mark *m;

	if (!changed_since(st, &r->started))
		return false;
	m = settled_at(log, tree, rel, len);
	return !m || !same_time(m->ctime, st->st_ctim);
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
static bool conflicts(const struct run_info *r, const struct promote_log *log,
		      const struct change *c)
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
		size_t at = (size_t)(part - buf);
		if (fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			/* not on the host: its nearest directory must be unchanged */
			changed = errno != ENOENT || fstat(fd, &st) < 0 ||
				  host_changed(r, log, c->tree, c->rel, at ? at - 1 : 0, &st);
			break;
		}
		if (!next || !S_ISDIR(st.st_mode)) {
			changed =
			    (S_ISDIR(st.st_mode) && !S_ISDIR(c->mode))
				? subtree_changed(fd, part, &r->started)
				: host_changed(r, log, c->tree, c->rel, at + strlen(part), &st);
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

/* Where rel's i-th directory ends: 0 for the tree's root, then each '/'. */
static size_t dir_len(const char *rel, size_t i)
{
	const char *p = rel;

	for (size_t k = 0; k < i && p; k++)
		p = strchr(k ? p + 1 : p, '/');
	return i && p ? (size_t)(p - rel) : 0;
}

/* The ctimes of the host directories on rel's way, the tree's root first and rel's parent
 * last, as far as they exist; their number. ct has room for one per component of rel. */
static size_t dir_ctimes(const struct run_info *r, unsigned tree, const char *rel,
			 struct timespec *ct)
{
	char buf[PATH_MAX];
	struct stat st;
	size_t n = 0;
	int fd = overlay_open_root(r, tree), sub;
	char *part = buf, *next;

	snprintf(buf, sizeof(buf), "%s", rel);
	while (fd >= 0 && fstat(fd, &st) == 0) {
		ct[n++] = st.st_ctim;
		if (!(next = strchr(part, '/')))
			break;
		*next = '\0';
		sub = fs_open_nolinks(fd, part, O_PATH | O_DIRECTORY);
		close(fd);
		fd = sub;
		part = next + 1;
	}
	if (fd >= 0)
		close(fd);
	return n;
}

/* apply, and the log: the change as promoted, and each directory on its way that promote
 * changed (made, or wrote in) and the host had not changed before, as settled. */
static int apply_logged(const struct run_info *r, const struct change *c, struct promote_log *log,
			struct ab_err *e)
{
	size_t parts = 1, before, after;
	struct timespec *t0, *t1;
	bool *clean;
	int rc = -1;

	for (const char *p = c->rel; (p = strchr(p, '/')); p++)
		parts++;
	t0 = calloc(parts, sizeof(*t0)), t1 = calloc(parts, sizeof(*t1));
	clean = calloc(parts, sizeof(*clean));
	if (!t0 || !t1 || !clean) {
		ab_fail(e, ENOMEM, "promote");
		goto out;
	}
	before = dir_ctimes(r, c->tree, c->rel, t0);
	for (size_t i = 0; i < before; i++) {
		struct stat st = {.st_ctim = t0[i]};
		clean[i] = !host_changed(r, log, c->tree, c->rel, dir_len(c->rel, i), &st);
	}
	if ((rc = apply(r, c, e)) <= 0)
		goto out;
	after = dir_ctimes(r, c->tree, c->rel, t1);
	for (size_t i = 0; i < after; i++) {
		if (i < before && (!clean[i] || same_time(t0[i], t1[i])))
			continue;
		if (log_mark(log, true, c->tree, c->rel, dir_len(c->rel, i), t1[i], e) < 0)
			rc = -1;
	}
	if (rc > 0 &&
	    log_mark(log, false, c->tree, c->rel, strlen(c->rel), (struct timespec){0}, e) < 0)
		rc = -1;
out:
	free(t0);
	free(t1);
	free(clean);
	return rc;
}

/* New directories were made writable for their contents; now they get their own modes,
 * deepest first (each settled again: promote made it). */
static void set_dir_modes(const struct run_info *r, const struct changes *c, char **paths, int n,
			  struct promote_log *log)
{
	for (size_t i = c->n; i-- > 0;) {
		const struct change *ch = &c->v[i];
		struct ab_err ignored = {0};
		const char *name;
		int parent;
		/* a refused directory was not made on the host: no mode to set there */
		if (ch->kind == CH_DELETED || !S_ISDIR(ch->mode) || ch->refused ||
		    !overlay_selected(r, ch, paths, n))
			continue;
		parent = open_parent(r, ch->tree, ch->rel, false, &name, &ignored);
		if (parent < 0)
			continue;
		struct stat st;
		if (fchmodat(parent, name, ch->mode & 0777, 0) < 0)
			ab_say("cannot set the mode of %s/%s: %s\n", r->trees.v[ch->tree], ch->rel,
			       strerror(errno));
		else if (was_promoted(log, ch) &&
			 fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			 log_mark(log, true, ch->tree, ch->rel, strlen(ch->rel), st.st_ctim,
				  &ignored) < 0)
			ab_say("%s\n", ignored.msg);
		close(parent);
	}
}

#define BELOW_LINK "the host path crosses a symlink"

/* All or nothing: every selected change is checked before the first write. A change the host
 * made after the run started is a conflict; a change whose host path crosses a symlink is
 * refused, and so is the whole promote: applying it means replacing the host's link (one
 * committed in a cloned repository, say, to a directory outside) with the command's directory,
 * and applying the rest without it would half-apply what the command did. Each is said and
 * audited; 1 when any stopped the promote. */
static int check_all(const struct run_info *r, const struct promote_log *log, struct changes *c,
		     char **paths, int n, struct audit *a, struct ab_err *e)
{
	char host[PATH_MAX], shown[PATH_MAX * 4];
	size_t conflicted = 0, linked = 0;

	for (size_t i = 0; i < c->n; i++) {
		struct change *ch = &c->v[i];
		bool below_link;
		if (!overlay_selected(r, ch, paths, n))
			continue;
		if (!(below_link = ch->beyond_link) && !conflicts(r, log, ch))
			continue;
		ch->conflict = !below_link;
		ch->refused = below_link ? BELOW_LINK : NULL;
		ch->result = below_link ? "refused" : "conflict";
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

/* At or below a path the run's profile protected and its tree lacked ([filesystem] protect
 * among them: the names every tree has are guarded_refusal's). */
static bool run_protected(const struct run_info *r, const struct change *ch)
{
	char entry[PATH_MAX + 16];

	snprintf(entry, sizeof(entry), "%u/%s", ch->tree, ch->rel);
	for (size_t i = 0; i < r->protected.n; i++)
		if (mount_path_under(entry, r->protected.v[i]))
			return true;
	return false;
}

/* Why promote refuses ch (guarded, or protected by the run's profile), or NULL. */
static const char *refusal(const struct run_info *r, const struct change *ch,
			   const struct strv *gfiles, const struct strv *gdirs)
{
	char host[PATH_MAX];
	const char *why;

	overlay_host_path(r, ch->tree, ch->rel, host, sizeof(host));
	why = guarded_refusal(ch->rel, ch->kind != CH_DELETED && S_ISDIR(ch->mode), host, gfiles,
			      gdirs);
	if (!why && run_protected(r, ch))
		why = "a path the run's profile protects";
	/* its deletion plants nothing: a removed nested repository goes as a whole */
	if (!why && ch->kind != CH_DELETED && guarded_nested_git(ch->rel))
		why = "inside a repository below the tree's root (a nested .git): git on the host "
		      "would run its config and hooks";
	return why;
}

int overlay_assess(const struct run_info *r, struct changes *c, char **paths, int n,
		   struct ab_err *e)
{
	struct strv gfiles = {0}, gdirs = {0};
	struct promote_log log;

	if (promote_log_load(r, &log, e) < 0)
		return -1;
	if (guarded_paths_here(&gfiles, &gdirs, e) < 0) {
		promote_log_free(&log);
		return -1;
	}
	for (size_t i = 0; i < c->n; i++) {
		struct change *ch = &c->v[i];
		if (ch->promoted || !overlay_selected(r, ch, paths, n))
			continue;
		ch->refused = ch->beyond_link ? BELOW_LINK : refusal(r, ch, &gfiles, &gdirs);
		ch->conflict = !ch->beyond_link && conflicts(r, &log, ch);
	}
	promote_log_free(&log);
	strv_free(&gfiles);
	strv_free(&gdirs);
	return 0;
}

/* Protected and guarded paths are refused (listed, audited); the rest is applied. */
int overlay_promote(const struct run_info *r, struct changes *c, char **paths, int n,
		    struct audit *a, struct ab_err *e)
{
	char host[PATH_MAX], shown[PATH_MAX * 4];
	size_t done = 0;
	struct strv gfiles = {0}, gdirs = {0};
	struct promote_log log;
	int result = promote_log_load(r, &log, e);

	if (result == 0)
		result = check_all(r, &log, c, paths, n, a, e);
	if (result != 0) {
		promote_log_free(&log);
		return result;
	}
	if ((result = log_open(r, &log, e)) < 0 ||
	    (result = guarded_paths_here(&gfiles, &gdirs, e)) < 0)
		goto out;
	for (size_t i = 0; i < c->n; i++) {
		struct change *ch = &c->v[i];
		const char *why;
		int rc;
		if (!overlay_selected(r, ch, paths, n))
			continue;
		overlay_host_path(r, ch->tree, ch->rel, host, sizeof(host));
		if ((why = refusal(r, ch, &gfiles, &gdirs))) {
			ch->refused = why;
			ch->result = "refused";
			ab_say("refused: %s: %s\n", safe(host, shown, sizeof(shown)), why);
			if ((result = overlay_audit_change(a, "promote", r, host,
							   kind_names[ch->kind], "refused", e)) < 0)
				goto out;
			continue;
		}
		if ((rc = apply_logged(r, ch, &log, e)) < 0) {
			result = ab_context(e, "promote %s (%zu change%s applied before it)", host,
					    done, done == 1 ? "" : "s");
			goto out;
		}
		done += rc > 0;
		ch->result = rc ? "applied" : "skipped";
		ch->promoted = rc > 0;
		if (!rc)
			ab_say("not promoted: %s is a special file\n",
			       safe(host, shown, sizeof(shown)));
		if ((result = overlay_audit_change(a, "promote", r, host, kind_names[ch->kind],
						   rc ? "applied" : "skipped", e)) < 0)
			goto out;
	}
	set_dir_modes(r, c, paths, n, &log);
out:
	promote_log_free(&log);
	strv_free(&gfiles);
	strv_free(&gdirs);
	return result;
}

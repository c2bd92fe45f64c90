/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The changes of a run: its upper layers walked, each entry compared with what the host has at
 * the same path (looked up beneath the tree, no symlink followed), whiteouts and opaque
 * directories read as deletions, older runs' stand-ins left out (overlay_internal.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fsops.h"
#include "overlay_internal.h"

/* A copy of ch (and of its rel) added to c. */
static int push_change(struct changes *c, const struct change *ch, struct ab_err *e)
{
	struct change *n = realloc(c->v, (c->n + 1) * sizeof(*n));

	if (!n)
		return ab_fail(e, ENOMEM, "changes");
	c->v = n;
	n[c->n] = *ch;
	n[c->n].rel = strdup(ch->rel);
	if (!n[c->n].rel)
		return ab_fail(e, ENOMEM, "changes");
	c->n++;
	return 0;
}

void overlay_changes_free(struct changes *c)
{
	for (size_t i = c->opened.n; i-- > 0;)
		if (chmod(c->opened.v[i], c->opened_modes[i]) < 0)
			ab_say("cannot restore the mode of %s\n", c->opened.v[i]);
	strv_free(&c->opened);
	free(c->opened_modes);
	c->opened_modes = NULL;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].rel);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

static bool join(char *out, size_t size, const char *a, const char *b)
{
	int n = *a ? snprintf(out, size, "%s/%s", a, b) : snprintf(out, size, "%s", b);
	return n >= 0 && (size_t)n < size;
}

bool overlay_host_path(const struct run_info *r, unsigned tree, const char *rel, char *out,
		       size_t size)
{
	const char *root = r->trees.v[tree];
	return join(out, size, strcmp(root, "/") ? root : "", rel);
}

struct walk {
	const struct run_info *run;
	unsigned tree;
	int host; /* the tree's root on the host */
	struct changes *out;
	struct ab_err *e;
	unsigned depth; /* directories open above the entry walked */
	bool opaque;	/* below an opaque directory: the host's entries are all hidden */
};

/* Deeper than this, the walk stops with an error, not a crash: each level keeps its directory
 * open (two fds), and no project nests this far. */
#define WALK_DEPTH_MAX 400

/* An entry's paths, on the heap: a level's stack stays small however deep the tree goes. */
struct walk_paths {
	char child[PATH_MAX], host[PATH_MAX];
};

enum host_has { HOST_NOTHING, HOST_ENTRY, HOST_BEYOND_LINK };

/* What the host has at rel, looked up beneath the tree with no symlink on the way: an entry
 * (in *st, the entry itself when it is a symlink), nothing (or a directory on the way that
 * the caller cannot search, as the command could not), or a symlink on the way, never
 * followed (the path would lead out of the tree). -1 on other errors. */
static int host_lookup(const struct walk *w, const char *rel, struct stat *st)
{
	int fd = fs_open_nolinks(w->host, rel, O_PATH), rc;

	if (fd < 0 && errno == ELOOP)
		return HOST_BEYOND_LINK;
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
		return HOST_NOTHING;
	if (fd < 0)
		return ab_fail(w->e, errno, "%s", rel);
	rc = fstat(fd, st);
	close(fd);
	return rc < 0 ? ab_fail(w->e, errno, "%s", rel) : HOST_ENTRY;
}

static int walk_upper(struct walk *w, int dirfd, const char *rel);

/* A directory of the upper layer the command made unreadable: opened up, and remembered. */
static int open_up(struct walk *w, int dirfd, const char *name, const char *child, mode_t mode)
{
	char path[PATH_MAX * 2];
	struct changes *c = w->out;
	mode_t *modes = realloc(c->opened_modes, (c->opened.n + 1) * sizeof(*modes));

	if (!modes)
		return ab_fail(w->e, ENOMEM, "changes");
	c->opened_modes = modes;
	if ((size_t)snprintf(path, sizeof(path), "%s/upper/%u/%s", w->run->dir, w->tree, child) >=
	    sizeof(path))
		return ab_fail(w->e, ENAMETOOLONG, "%s", child);
	if (fchmodat(dirfd, name, (mode & 07777) | 0700, 0) < 0)
		return ab_fail(w->e, errno, "cannot open up %s", child);
	if (strv_push(&c->opened, path) < 0) {
		fchmodat(dirfd, name, mode & 07777, 0);
		return ab_fail(w->e, ENOMEM, "changes");
	}
	modes[c->opened.n - 1] = mode & 07777;
	return 0;
}

/* The host's entries under an opaque directory that the upper layer does not have were
 * deleted by the command. */
static int opaque_deletions(struct walk *w, int upperfd, const char *rel)
{
	char child[PATH_MAX];
	struct change c = {.kind = CH_DELETED, .tree = w->tree, .rel = child};
	int fd = fs_open_nolinks(w->host, rel, O_RDONLY | O_DIRECTORY), rc = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir;

	if (fd < 0 && errno == EACCES)
		return 0; /* a directory the caller cannot read: its entries are not known */
	if (fd < 0 || !(dir = fdopendir(fd))) {
		rc = ab_fail(w->e, errno, "%s", rel);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while (rc == 0 && (d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (fstatat(upperfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if (!join(child, sizeof(child), rel, d->d_name))
			rc = ab_fail(w->e, ENAMETOOLONG, "%s", rel);
		else if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			rc = ab_fail(w->e, errno, "%s", child);
		else
			c.host_mode = st.st_mode, c.host_size = st.st_size,
			rc = push_change(w->out, &c, w->e);
	}
	closedir(dir);
	return rc;
}

/* A protected path's stand-in: a directory the read-only bind on it kept empty. */
static bool is_placeholder(const struct walk *w, const char *rel, const struct stat *st)
{
	char entry[PATH_MAX + 16];

	if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode))
		return false;
	snprintf(entry, sizeof(entry), "%u/%s", w->tree, rel);
	for (size_t i = 0; i < w->run->placeholders.n; i++)
		if (!strcmp(w->run->placeholders.v[i], entry))
			return true;
	return false;
}

static int walk_entry_at(struct walk *w, int dirfd, const char *rel, const char *name,
			 struct walk_paths *p)
{
	char *child = p->child, *host = p->host, opaque[2] = "";
	struct stat st, hst = {0};
	struct change c = {.tree = w->tree, .rel = child};
	int on_host, fd, rc = 0;

	if (!join(child, sizeof(p->child), rel, name) ||
	    !overlay_host_path(w->run, w->tree, child, host, sizeof(p->host)))
		return ab_fail(w->e, ENAMETOOLONG, "%s", rel);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ab_fail(w->e, errno, "%s", child);
	if (is_placeholder(w, child, &st))
		return 0;
	if ((on_host = host_lookup(w, child, &hst)) < 0)
		return -1;
	c.kind = on_host == HOST_ENTRY ? CH_MODIFIED : CH_ADDED;
	c.host_mode = on_host == HOST_ENTRY ? hst.st_mode : 0;
	c.host_size = on_host == HOST_ENTRY ? hst.st_size : 0;
	c.beyond_link = on_host == HOST_BEYOND_LINK;
	if (S_ISCHR(st.st_mode) && st.st_rdev == 0) { /* a whiteout */
		c.kind = CH_DELETED;
		return on_host != HOST_NOTHING ? push_change(w->out, &c, w->e) : 0;
	}
	c.mode = st.st_mode;
	c.size = st.st_size;
	if (!S_ISDIR(st.st_mode))
		return push_change(w->out, &c, w->e);
	if (on_host != HOST_ENTRY || !S_ISDIR(hst.st_mode))
		rc = push_change(w->out, &c, w->e);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* a directory the command made unreadable (mode 000) is ours: opened up while this
	 * command reads the changes (diff and promote read the files below it too) */
	if (fd < 0 && errno == EACCES) {
		if (open_up(w, dirfd, name, child, st.st_mode) < 0)
			return -1;
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return ab_fail(w->e, errno, "%s", child);
	/* below an opaque directory every directory replaces the host's whole: overlayfs marks
	 * only the top one (rm -rf d; mkdir -p d/sub hides the host's d/sub/old.txt too) */
	bool was_opaque = w->opaque, host_dir = on_host == HOST_ENTRY && S_ISDIR(hst.st_mode);
	/* one the host lacks hides nothing, and nothing of the host is below it: no lookup */
	w->opaque =
	    was_opaque ||
	    (host_dir && fgetxattr(fd, "user.overlay.opaque", opaque, 1) == 1 && opaque[0] == 'y');
	if (rc == 0 && host_dir && w->opaque)
		rc = opaque_deletions(w, fd, child);
	if (rc == 0 && w->depth >= WALK_DEPTH_MAX)
		rc = ab_fail(
		    w->e, 0,
		    "%s: more than %d directories deep, which no review shows; fix: discard "
		    "the run",
		    child, WALK_DEPTH_MAX);
	if (rc == 0) {
		w->depth++;
		rc = walk_upper(w, fd, child);
		w->depth--;
	}
	w->opaque = was_opaque;
	close(fd);
	return rc;
}

static int walk_entry(struct walk *w, int dirfd, const char *rel, const char *name)
{
	struct walk_paths *p = malloc(sizeof(*p));
	int rc;

	if (!p)
		return ab_fail(w->e, ENOMEM, "changes");
	rc = walk_entry_at(w, dirfd, rel, name, p);
	free(p);
	return rc;
}

struct walk_dir {
	struct walk *w;
	const char *rel;
};

static int walk_one(int dirfd, const char *name, void *ctx)
{
	const struct walk_dir *d = ctx;
	return walk_entry(d->w, dirfd, d->rel, name);
}

/* Pre-order: a directory comes before what is in it. */
static int walk_upper(struct walk *w, int dirfd, const char *rel)
{
	struct walk_dir d = {w, rel};
	return fs_each_entry(dirfd, walk_one, &d, w->e);
}

static int cmp_change(const void *a, const void *b)
{
	const struct change *x = a, *y = b;
	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	return strcmp(x->rel, y->rel);
}

int overlay_list_changes(const struct run_info *r, struct changes *out, struct ab_err *e)
{
	char upper[PATH_MAX + 32];

	memset(out, 0, sizeof(*out));
	for (unsigned t = 0; t < r->trees.n; t++) {
		struct walk w = {r, t, overlay_open_root(r, t), out, e, 0, false};
		int fd, rc;
		if (w.host < 0)
			return ab_fail(e, errno, "cannot open %s", r->trees.v[t]),
			       ab_hint(e, "the tree is gone from the host, or a directory on its "
					  "path became a symlink after the run started");
		snprintf(upper, sizeof(upper), "%s/upper/%u", r->dir, t);
		fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			close(w.host);
			return ab_fail(e, errno, "cannot open %s", upper);
		}
		rc = walk_upper(&w, fd, "");
		close(fd);
		close(w.host);
		if (rc < 0)
			return -1;
	}
	/* sorted by path: parents first, and the same order every time */
	if (out->n > 1) /* qsort's base may not be null, and no change means none */
		qsort(out->v, out->n, sizeof(*out->v), cmp_change);
	return 0;
}

/* PATH arguments (host paths) select the changes at or below them; none selects all. */
bool overlay_selected(const struct run_info *r, const struct change *c, char **paths, int n)
{
	char host[PATH_MAX];

	if (n == 0)
		return true;
	if (!overlay_host_path(r, c->tree, c->rel, host, sizeof(host)))
		return false;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(paths[i]);
		if (!strncmp(host, paths[i], len) && (host[len] == '\0' || host[len] == '/'))
			return true;
	}
	return false;
}

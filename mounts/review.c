/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The review commands: `agentbox changes|diff|promote|discard` read a run's changes record
 * (overlay.c wrote it), list what the command changed from the upper layers, and print or
 * discard it; promote.c applies it. Names the command chose are printed made safe
 * (printable.h). */
#include "overlay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fsops.h"
#include "overlay_internal.h"
#include "printable.h"
#include "promote_log.h"

extern char **environ;

#define EXIT_FAILED 125

/* ---------- reading a run ---------- */

static void run_info_free(struct run_info *r)
{
	strv_free(&r->trees);
	strv_free(&r->placeholders);
	strv_free(&r->protected);
	close(r->fd);
}

static bool is_run_id(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n < 64 && strspn(s, "0123456789abcdef") == n;
}

/* A tree as agentbox records it: absolute, canonical (no ., .., empty component or trailing
 * slash). An edited record naming anything else is refused, not followed. */
static bool canonical_tree(const char *t)
{
	if (t[0] != '/')
		return false;
	if (!strcmp(t, "/"))
		return true;
	for (const char *c = t; *c;) {
		const char *next = strchr(c + 1, '/');
		size_t n = next ? (size_t)(next - c - 1) : strlen(c + 1);
		if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
			return false;
		c = next ? next : c + 1 + n;
	}
	return true;
}

/* The record and its directory are the caller's own, and nobody else may write them: promote
 * follows what the record says. */
static int check_record(const struct run_info *r, struct ab_err *e)
{
	struct stat st, dir;

	if (fstat(r->fd, &st) < 0 || stat(r->dir, &dir) < 0)
		return ab_fail(e, errno, "%s", r->dir);
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || dir.st_uid != geteuid() || (dir.st_mode & 022))
		return ab_fail(e, 0,
			       "%s: the changes record is not the caller's own, or others may "
			       "write it",
			       r->dir),
		       ab_hint(e, "promote only changes directories agentbox made for you");
	return 0;
}

static int parse_run_line(struct run_info *r, const char *line, struct ab_err *e)
{
	long long sec;
	long nsec;
	unsigned n;
	int off = 0;

	if (promote_log_line(line)) /* promote_log_load reads those */
		return 0;
	if (sscanf(line, "run %63s", r->id) == 1)
		return 0;
	if (sscanf(line, "started %lld.%ld", &sec, &nsec) == 2) {
		r->started = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = nsec};
		return 0;
	}
	if (sscanf(line, "tree %u %n", &n, &off) == 1 && off > 0 && n == r->trees.n &&
	    canonical_tree(line + off))
		return strv_push(&r->trees, line + off) < 0 ? ab_fail(e, ENOMEM, "run") : 0;
	if ((sscanf(line, "placeholder %u %n", &n, &off) == 1 ||
	     sscanf(line, "protected %u %n", &n, &off) == 1) &&
	    off > 0) {
		char entry[PATH_MAX + 16];
		snprintf(entry, sizeof(entry), "%u/%s", n, line + off);
		return strv_push(line[1] == 'l' ? &r->placeholders : &r->protected, entry) < 0
			   ? ab_fail(e, ENOMEM, "run")
			   : 0;
	}
	return ab_fail(e, 0, "%s/" RUN_FILE ": unexpected line '%.60s'", r->dir, line);
}

/* RUN_ID (under the runs directory) or a path to a changes directory. */
static int open_run(const char *arg, struct run_info *r, struct ab_err *e)
{
	char path[PATH_MAX + 8], *line = NULL;
	bool magic = false;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int fd, rc = 0;

	memset(r, 0, sizeof(*r));
	if (strchr(arg, '/') || !is_run_id(arg)) {
		if (!realpath(arg, r->dir))
			return ab_fail(e, errno, "changes directory %s", arg);
	} else {
		char runs[PATH_MAX];
		if (fs_state_dir("runs", runs, sizeof(runs), e) < 0)
			return -1;
		if ((size_t)snprintf(r->dir, sizeof(r->dir), "%s/%s", runs, arg) >= sizeof(r->dir))
			return ab_fail(e, ENAMETOOLONG, "run %s", arg);
	}
	snprintf(path, sizeof(path), "%s/" RUN_FILE, r->dir);
	r->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	fd = r->fd >= 0 ? dup(r->fd) : -1;
	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		if (r->fd >= 0)
			close(r->fd);
		return ab_fail(e, err, "%s is not a changes directory (no readable %s)", arg, path),
		       ab_hint(e, "give a run id from the audit trail, or the --changes directory");
	}
	rc = check_record(r, e);
	/* a promote's lines (hex) can be longer than any path */
	while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (strlen(line) > 2 * PATH_MAX + 64)
			rc = ab_fail(e, 0, "%s: a line too long", path);
		else if (!magic)
			magic = !strcmp(line, RUN_MAGIC);
		else
			rc = parse_run_line(r, line, e);
	}
	free(line);
	fclose(f);
	if (rc == 0 && (!magic || !r->trees.n))
		rc = ab_fail(e, 0, "%s is not a complete changes record", path);
	if (rc < 0) {
		run_info_free(r);
	}
	return rc;
}

/* ---------- listing the changes ---------- */

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

static void changes_free(struct changes *c)
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
			c.host_mode = st.st_mode, rc = push_change(w->out, &c, w->e);
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

static int walk_entry(struct walk *w, int dirfd, const char *rel, const char *name)
{
	char child[PATH_MAX], host[PATH_MAX], opaque[2] = "";
	struct stat st, hst = {0};
	struct change c = {.tree = w->tree, .rel = child};
	int on_host, fd, rc = 0;

	if (!join(child, sizeof(child), rel, name) ||
	    !overlay_host_path(w->run, w->tree, child, host, sizeof(host)))
		return ab_fail(w->e, ENAMETOOLONG, "%s", rel);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ab_fail(w->e, errno, "%s", child);
	if (is_placeholder(w, child, &st))
		return 0;
	if ((on_host = host_lookup(w, child, &hst)) < 0)
		return -1;
	c.kind = on_host == HOST_ENTRY ? CH_MODIFIED : CH_ADDED;
	c.host_mode = on_host == HOST_ENTRY ? hst.st_mode : 0;
	c.beyond_link = on_host == HOST_BEYOND_LINK;
	if (S_ISCHR(st.st_mode) && st.st_rdev == 0) { /* a whiteout */
		c.kind = CH_DELETED;
		return on_host != HOST_NOTHING ? push_change(w->out, &c, w->e) : 0;
	}
	c.mode = st.st_mode;
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
	if (rc == 0 && on_host == HOST_ENTRY && S_ISDIR(hst.st_mode) &&
	    fgetxattr(fd, "user.overlay.opaque", opaque, 1) == 1 && opaque[0] == 'y')
		rc = opaque_deletions(w, fd, child);
	if (rc == 0)
		rc = walk_upper(w, fd, child);
	close(fd);
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

static int list_changes(const struct run_info *r, struct changes *out, struct ab_err *e)
{
	char upper[PATH_MAX + 32];

	memset(out, 0, sizeof(*out));
	for (unsigned t = 0; t < r->trees.n; t++) {
		struct walk w = {r, t, overlay_open_root(r, t), out, e};
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

/* ---------- audit ---------- */

int overlay_audit_change(struct audit *a, const char *action, const struct run_info *r,
			 const char *path, const char *change, const char *result, struct ab_err *e)
{
	struct json *j;

	if (!audit_enabled(a))
		return 0;
	j = audit_begin(a, "changes");
	json_kv_str(j, "action", action);
	json_kv_str(j, "changes", r->dir);
	json_kv_str(j, "of_run", r->id[0] ? r->id : NULL);
	if (path)
		json_kv_str(j, "path", path);
	if (change)
		json_kv_str(j, "change", change);
	if (result)
		json_kv_str(j, "result", result);
	return audit_emit(a, e);
}

/* ---------- changes, diff ---------- */

#define BEYOND_LINK "host path crosses a symlink: not read"

/* A name the command chose, printed so it cannot fake or hide a line (printable.h). */
static void print_escaped(const char *s)
{
	print_printable(stdout, s);
}

static int show_changes(const struct run_info *r, const struct changes *c, char **paths, int n)
{
	static const char letters[] = "AMD";
	char host[PATH_MAX];

	for (size_t i = 0; i < c->n; i++) {
		if (!overlay_selected(r, &c->v[i], paths, n) ||
		    !overlay_host_path(r, c->v[i].tree, c->v[i].rel, host, sizeof(host)))
			continue;
		printf("%c ", letters[c->v[i].kind]);
		print_escaped(host);
		printf("%s%s\n", S_ISDIR(c->v[i].mode) ? "/" : "",
		       c->v[i].beyond_link ? " (" BEYOND_LINK ")" : "");
	}
	return fflush(stdout) == 0 ? 0 : -1;
}

/* diff -u of two open regular files (-1: /dev/null), which diff reads through the fds as
 * /dev/fd/3 and /dev/fd/4, never by path: a path can lead elsewhere by the time diff opens it
 * (a symlink on the host or swapped in by a live session's command). */
static int run_diff(const char *label, int old_fd, int new_fd)
{
	char a[PATH_MAX * 4 + 4], b[PATH_MAX * 4 + 4];
	char *argv[] = {"diff",
			"-u",
			"--label",
			a,
			"--label",
			b,
			old_fd >= 0 ? "/dev/fd/3" : "/dev/null",
			new_fd >= 0 ? "/dev/fd/4" : "/dev/null",
			NULL};
	posix_spawn_file_actions_t fa;
	int status, rc = 0;
	pid_t pid;

	/* the labels are diff's header lines: a name with "\n+++ " in it must not forge one */
	a[0] = 'a';
	b[0] = 'b';
	printable(label, a + 1, sizeof(a) - 1);
	printable(label, b + 1, sizeof(b) - 1);
	fflush(stdout);
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	/* both fds are 5 or above (open_regular): the dups cannot clobber each other, and they
	 * clear close-on-exec in diff */
	if (old_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, old_fd, 3);
	if (rc == 0 && new_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, new_fd, 4);
	if (rc == 0)
		rc = posix_spawnp(&pid, "diff", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	/* diff: 0 same, 1 different, 2 trouble */
	return WIFEXITED(status) && WEXITSTATUS(status) <= 1 ? 0 : -1;
}

/* c's file on the host (host) or in the upper layer, opened beneath its tree with no symlink
 * on the way, checked regular, at fd 5 or above; -1 otherwise. O_NONBLOCK: a FIFO swapped in
 * cannot hang the open. A live session's command can swap any component of the upper path; a
 * symlink on the host path (one committed in a cloned repository) leads out of the tree. */
static int open_regular(const struct run_info *r, const struct change *c, bool host)
{
	int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY, high, err;
	int fd = host ? overlay_open_host(r, c->tree, c->rel, flags)
		      : overlay_open_upper(r, c->tree, c->rel, flags);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return errno = EINVAL, -1;
	}
	high = fcntl(fd, F_DUPFD_CLOEXEC, 5);
	err = errno;
	close(fd);
	return errno = err, high;
}

/* diff of c's host side (with_host) and upper side (with_upper), each read through its fd or
 * /dev/null; either that is no longer a regular file is refused. */
static int diff_file(const struct run_info *r, const struct change *c, const char *host,
		     bool with_host, bool with_upper, struct ab_err *e)
{
	int hfd = with_host ? open_regular(r, c, true) : -1;
	int ufd = with_upper && (!with_host || hfd >= 0) ? open_regular(r, c, false) : -1;
	int rc;

	if ((with_host && hfd < 0) || (with_upper && ufd < 0)) {
		int err = errno;
		if (hfd >= 0)
			close(hfd);
		return ab_fail(e, err, "%s: the %s file is no longer a regular file", host,
			       with_host && hfd < 0 ? "host's" : "changed"),
		       ab_hint(e, "it changed while agentbox read it; stop the session first");
	}
	rc = run_diff(host, hfd, ufd);
	if (hfd >= 0)
		close(hfd);
	if (ufd >= 0)
		close(ufd);
	if (rc < 0)
		return ab_fail(e, 0, "diff failed on %s", host),
		       ab_hint(e, "diff (Debian's diffutils) must be on PATH");
	return 0;
}

/* What the host has at a path, said without following it. */
static const char *host_kind(mode_t mode)
{
	return S_ISDIR(mode) ? "directory" : S_ISLNK(mode) ? "symlink" : "special file";
}

static void print_line(const char *before, const char *path, const char *after)
{
	printf("%s", before);
	print_escaped(path);
	printf("%s\n", after);
}

/* The host's side of c when it is not a regular file to diff: said, never read. Returns
 * whether c's host side is a regular file diff may read. */
static bool host_side(const struct change *c, const char *host)
{
	if (c->beyond_link) {
		print_line("", host, " (" BEYOND_LINK ")");
		return false;
	}
	if (c->kind == CH_ADDED)
		return false;
	if (S_ISREG(c->host_mode))
		return true;
	if (c->kind == CH_DELETED) {
		printf("deleted %s ", host_kind(c->host_mode));
		print_line("", host, S_ISDIR(c->host_mode) ? "/" : "");
	} else {
		printf("replaces a host %s (not read): ", host_kind(c->host_mode));
		print_line("", host, S_ISDIR(c->host_mode) ? "/" : "");
	}
	return false;
}

static int diff_one(const struct run_info *r, const struct change *c, struct ab_err *e)
{
	char host[PATH_MAX], target[PATH_MAX];
	bool with_host;
	ssize_t n;
	int fd;

	if (!overlay_host_path(r, c->tree, c->rel, host, sizeof(host)))
		return ab_fail(e, ENAMETOOLONG, "%s", c->rel);
	with_host = host_side(c, host);
	if (c->kind == CH_DELETED)
		return with_host ? diff_file(r, c, host, true, false, e) : 0;
	if (S_ISDIR(c->mode)) {
		print_line("new directory ", host, "/");
		return 0;
	}
	if (S_ISLNK(c->mode)) {
		if ((fd = overlay_open_upper(r, c->tree, c->rel, O_PATH)) < 0)
			return ab_fail(e, errno, "%s", host);
		n = readlinkat(fd, "", target, sizeof(target) - 1);
		close(fd);
		if (n < 0)
			return ab_fail(e, errno, "readlink %s", host);
		target[n] = '\0';
		printf("symlink ");
		print_escaped(host);
		printf(" -> ");
		print_escaped(target);
		printf("\n");
		return 0;
	}
	if (!S_ISREG(c->mode)) {
		print_line("special file ", host, " (not promoted)");
		return 0;
	}
	return diff_file(r, c, host, with_host, true, e);
}

/* ---------- discard ---------- */

static int discard(const struct run_info *r, struct ab_err *e)
{
	char parent[PATH_MAX];
	const char *base = strrchr(r->dir, '/');
	int fd;

	if (!base || base == r->dir)
		return ab_fail(e, EINVAL, "refusing to discard %s", r->dir);
	snprintf(parent, sizeof(parent), "%.*s", (int)(base - r->dir), r->dir);
	fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open %s", parent);
	if (fs_remove_tree(fd, base + 1, e) < 0) {
		close(fd);
		return ab_context(e, "discard %s", r->dir);
	}
	close(fd);
	printf("discarded %s\n", r->dir);
	return 0;
}

/* ---------- the subcommands ---------- */

static const char *const commands[] = {"changes", "diff", "promote", "discard"};

bool overlay_is_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i]))
			return true;
	return false;
}

static int usage(const char *cmd)
{
	ab_print("usage: agentbox %s [--audit DEST] RUN_ID|DIR%s\n", cmd,
		 strcmp(cmd, "discard") ? " [PATH...]" : "");
	return EXIT_FAILED;
}

static int report(struct ab_err *e)
{
	ab_say("%s\n", e->msg);
	return EXIT_FAILED;
}

/* PATH arguments as absolute paths without a trailing slash. */
static int absolute_paths(char **paths, int n, struct ab_err *e)
{
	for (int i = 0; i < n; i++) {
		char buf[PATH_MAX], *cwd = NULL;
		size_t len;
		if (paths[i][0] != '/') {
			if (!(cwd = getcwd(NULL, 0)))
				return ab_fail(e, errno, "getcwd");
			snprintf(buf, sizeof(buf), "%s/%s", cwd, paths[i]);
			free(cwd);
		} else {
			snprintf(buf, sizeof(buf), "%s", paths[i]);
		}
		len = strlen(buf);
		while (len > 1 && buf[len - 1] == '/')
			buf[--len] = '\0';
		if (!(paths[i] = strdup(buf)))
			return ab_fail(e, ENOMEM, "paths");
	}
	return 0;
}

static int dispatch(const char *cmd, const struct run_info *r, char **paths, int n, struct audit *a,
		    struct ab_err *e)
{
	struct changes c;
	int rc = 0;

	if ((!strcmp(cmd, "discard") || !strcmp(cmd, "promote")) &&
	    flock(r->fd, LOCK_EX | LOCK_NB) < 0)
		return ab_fail(e, errno, "the run that made %s is still going", r->dir),
		       ab_hint(e, "wait for it to end");
	if (!strcmp(cmd, "discard")) {
		if (discard(r, e) < 0)
			return -1;
		return overlay_audit_change(a, "discard", r, NULL, NULL, "applied", e);
	}
	/* what earlier promotes applied is no longer a change to show, diff or promote */
	if (list_changes(r, &c, e) < 0 || promote_log_pending(r, &c, e) < 0) {
		changes_free(&c);
		return -1;
	}
	if (!strcmp(cmd, "changes")) {
		rc = show_changes(r, &c, paths, n) < 0 ? ab_fail(e, errno, "stdout") : 0;
	} else if (!strcmp(cmd, "diff")) {
		for (size_t i = 0; rc == 0 && i < c.n; i++)
			if (overlay_selected(r, &c.v[i], paths, n))
				rc = diff_one(r, &c.v[i], e);
	} else {
		rc = overlay_promote(r, &c, paths, n, a, e);
	}
	if (rc == 0 && strcmp(cmd, "promote"))
		rc = overlay_audit_change(a, !strcmp(cmd, "changes") ? "list" : "diff", r, NULL,
					  NULL, NULL, e);
	changes_free(&c);
	return rc;
}

int overlay_command(int argc, char **argv)
{
	const char *cmd = argv[1], *dest = NULL;
	struct ab_err e = {0};
	struct audit *a = NULL;
	struct run_info r;
	int i = 2, rc;

	if (i + 1 < argc && !strcmp(argv[i], "--audit")) {
		dest = argv[i + 1];
		i += 2;
	}
	if (i >= argc || argv[i][0] == '-' || (!strcmp(cmd, "discard") && argc != i + 1))
		return usage(cmd);
	if (open_run(argv[i], &r, &e) < 0)
		return report(&e);
	if (absolute_paths(argv + i + 1, argc - i - 1, &e) < 0 ||
	    audit_open(&a, dest, NULL, AUDIT_FAILURE_STOP, &e) < 0) {
		run_info_free(&r);
		return report(&e);
	}
	rc = dispatch(cmd, &r, argv + i + 1, argc - i - 1, a, &e);
	if (rc < 0)
		rc = report(&e);
	audit_close(a);
	run_info_free(&r);
	return rc;
}

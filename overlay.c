/* Quarantined writes. An overlay tree is the host directory as overlayfs's lower layer, with
 * the upper layer in a changes directory the command never sees:
 *
 *   DIR/run          "agentbox-changes 1", "run ID", "started SEC.NSEC", "tree N HOSTPATH",
 *                    "placeholder N PATH" (a protected path's empty stand-in, not a change)
 *   DIR/upper/N/     what the command changed in tree N (overlayfs's own format: files and
 *                    directories as written, whiteouts for deletions, opaque directories)
 *   DIR/work/N/      overlayfs's scratch space
 *
 * promote refuses a path when the host changed it after the run started: its entry's ctime (or,
 * for a path the host does not have, its nearest existing directory's) is not older than the
 * start. ctime cannot be set from user space, so this catches every write, rename or delete on
 * the host since then, without hashing the tree at start. Host paths are walked one component
 * at a time with O_NOFOLLOW: neither the upper layer nor the host tree can redirect a write. */
#include "overlay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fsops.h"
#include "guarded.h"
#include "printable.h"

extern char **environ;

#define EXIT_FAILED 125
#define RUN_FILE "run"
#define RUN_MAGIC "agentbox-changes 1"

/* ---------- the changes directory ---------- */

/* For a placeholder in an overlay tree: the tree's number, and *rel its path below the
 * tree's root. -1 for any other op. */
static int placeholder_tree(const struct mount_plan *plan, const struct mount_op *op,
			    const char **rel)
{
	const struct mount_op *tree = op->placeholder ? mount_plan_tree(plan, op) : NULL;
	int n = 0;

	if (!tree || tree->kind != MOP_OVERLAY)
		return -1;
	for (const struct mount_op *o = plan->ops; o != tree; o++)
		n += o->kind == MOP_OVERLAY;
	*rel = op->dest + (strcmp(tree->dest, "/") ? strlen(tree->dest) + 1 : 1);
	return n;
}

static int write_run_file(const char *dir, const char *run_id, const struct mount_plan *plan,
			  int *lock, struct ab_err *e)
{
	char path[PATH_MAX + 8];
	struct timespec now;
	unsigned n = 0;
	FILE *f;
	int fd;

	/* the coarse clock is what file timestamps are taken from: every later change is >= */
	clock_gettime(CLOCK_REALTIME_COARSE, &now);
	snprintf(path, sizeof(path), "%s/" RUN_FILE, dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return ab_fail(e, errno, "cannot create %s", path);
	}
	fprintf(f, RUN_MAGIC "\nrun %s\nstarted %lld.%09ld\n", run_id, (long long)now.tv_sec,
		now.tv_nsec);
	for (size_t i = 0; i < plan->n; i++)
		if (plan->ops[i].kind == MOP_OVERLAY)
			fprintf(f, "tree %u %s\n", n++, plan->ops[i].source);
	for (size_t i = 0; i < plan->n; i++) {
		const char *rel;
		int t = placeholder_tree(plan, &plan->ops[i], &rel);
		if (t >= 0)
			fprintf(f, "placeholder %d %s\n", t, rel);
	}
	if (fclose(f) != 0)
		return ab_fail(e, errno, "cannot write %s", path);
	/* held until the run ends: promote and discard wait for that */
	*lock = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (*lock < 0 || flock(*lock, LOCK_SH) < 0)
		return ab_fail(e, errno, "cannot lock %s", path);
	return 0;
}

static int layer_dirs(const char *dir, struct mount_op *op, unsigned n, struct ab_err *e)
{
	char upper[PATH_MAX], work[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(upper, sizeof(upper), "%s/upper/%u", dir, n) >= sizeof(upper) ||
	    (size_t)snprintf(work, sizeof(work), "%s/work/%u", dir, n) >= sizeof(work))
		return ab_fail(e, ENAMETOOLONG, "the changes directory %s", dir);
	if (fs_mkdirs(upper, e) < 0 || fs_mkdirs(work, e) < 0)
		return -1;
	/* the tree's root shows the upper layer's root: give it the host root's mode */
	if (stat(op->source, &st) < 0 || chmod(upper, st.st_mode & 0777) < 0)
		return ab_fail(e, errno, "cannot set the mode of %s", upper);
	if (!(op->upper = strdup(upper)) || !(op->work = strdup(work)))
		return ab_fail(e, ENOMEM, "overlay");
	return 0;
}

/* A file stand-in with its content (mount_op.stub), new. */
static int write_stub(const char *path, const char *stub)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644), rc = 0;

	if (fd < 0)
		return -1;
	if (*stub && fs_write_all(fd, stub, strlen(stub)) < 0)
		rc = -1;
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

/* A protected path the host tree does not have is made, empty, in the upper layer, where the
 * read-only bind on it keeps it empty; the directories above it that only the host has are
 * made there too, with the host's modes. The bind's source becomes the upper layer's entry. */
static int upper_placeholder(const struct mount_plan *plan, struct mount_op *op, struct ab_err *e)
{
	const struct mount_op *tree;
	char upper[PATH_MAX], host[PATH_MAX];
	const char *rel;
	int t = placeholder_tree(plan, op, &rel);
	size_t root;

	if (t < 0)
		return 0;
	tree = mount_plan_tree(plan, op);
	root = strlen(tree->upper);
	if ((size_t)snprintf(upper, sizeof(upper), "%s/%s", tree->upper, rel) >= sizeof(upper))
		return ab_fail(e, ENAMETOOLONG, "placeholder %s", op->dest);
	for (char *s = upper + root + 1; (s = strchr(s, '/')); s++) {
		struct stat st;
		int err = 0;
		*s = '\0';
		snprintf(host, sizeof(host), "%s%s", strcmp(tree->source, "/") ? tree->source : "",
			 upper + root);
		if (lstat(host, &st) < 0)
			err = errno;
		else if (!S_ISDIR(st.st_mode))
			err = ENOTDIR;
		else if (mkdir(upper, st.st_mode & 0777) < 0 && errno != EEXIST)
			err = errno;
		if (err)
			return ab_fail(e, err, "placeholder %s", upper);
		*s = '/';
	}
	if (op->stub ? write_stub(upper, op->stub) < 0 : mkdir(upper, 0755) < 0)
		return ab_fail(e, errno, "cannot create the placeholder %s", upper);
	free(op->source);
	if (!(op->source = strdup(upper)))
		return ab_fail(e, ENOMEM, "overlay");
	return 0;
}

bool overlay_in_plan(const struct mount_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		if (plan->ops[i].kind == MOP_OVERLAY)
			return true;
	return false;
}

/* The command must not see the changes directory: it could rewrite the record promote trusts,
 * or the upper layer behind overlayfs's back. */
static int check_unseen(const char *dir, const struct mount_plan *plan, struct ab_err *e)
{
	const char *seen = NULL;
	char real[PATH_MAX];

	if (!realpath(dir, real))
		return ab_fail(e, errno, "%s", dir);
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		size_t n;
		if (op->skipped || !op->source ||
		    (op->kind != MOP_BIND_RO && op->kind != MOP_BIND_RW && op->kind != MOP_OVERLAY))
			continue;
		n = strlen(op->source);
		if ((n == 1 || (!strncmp(real, op->source, n) && (real[n] == '/' || !real[n]))) &&
		    (!seen || n > strlen(seen)))
			seen = op->source;
	}
	if (seen)
		return ab_fail(e, 0,
			       "the changes directory %s would be inside %s, which the sandbox "
			       "shows",
			       real, seen),
		       ab_hint(e,
			       "give --changes a directory outside every path the profile binds");
	return 0;
}

/* Every setup failure ends the run with 125; say what to do about the ones that have no fix
 * of their own yet. */
static int changes_error(struct ab_err *e)
{
	if (!strstr(e->msg, "; fix: "))
		ab_hint(e, "give --changes a new directory on a filesystem you can write");
	return -1;
}

static int make_changes_dir(const struct policy *p, const char *run_id, char *path, size_t size,
			    struct ab_err *e)
{
	char runs[PATH_MAX];

	if (p->changes) {
		snprintf(path, size, "%s", p->changes);
		if (mkdir(path, 0700) < 0)
			return ab_fail(e, errno, "cannot create the changes directory %s", path),
			       ab_hint(e, "give --changes a directory that does not exist yet");
		return 0;
	}
	if (fs_state_dir("runs", runs, sizeof(runs), e) < 0 || fs_mkdirs(runs, e) < 0)
		return -1;
	if ((size_t)snprintf(path, size, "%s/%s", runs, run_id) >= size)
		return ab_fail(e, ENAMETOOLONG, "the changes directory");
	if (mkdir(path, 0700) < 0)
		return ab_fail(e, errno, "cannot create the changes directory %s", path);
	return 0;
}

int overlay_prepare(const struct policy *p, const char *run_id, struct mount_plan *plan, char **dir,
		    int *lock, struct ab_err *e)
{
	char path[PATH_MAX];
	unsigned n = 0;

	*dir = NULL;
	*lock = -1;
	if (!overlay_in_plan(plan))
		return 0;
	if (make_changes_dir(p, run_id, path, sizeof(path), e) < 0)
		return changes_error(e);
	if (check_unseen(path, plan, e) < 0) {
		rmdir(path);
		return -1;
	}
	if (write_run_file(path, run_id, plan, lock, e) < 0)
		return changes_error(e);
	for (size_t i = 0; i < plan->n; i++)
		if (plan->ops[i].kind == MOP_OVERLAY && layer_dirs(path, &plan->ops[i], n++, e) < 0)
			return changes_error(e);
	for (size_t i = 0; i < plan->n; i++)
		if (upper_placeholder(plan, &plan->ops[i], e) < 0)
			return changes_error(e);
	if (!(*dir = strdup(path)) || !(plan->changes_dir = strdup(path)))
		return ab_fail(e, ENOMEM, "overlay");
	return 0;
}

/* The budget was used up when the tmpfs has no block or no inode left. */
static int audit_full(int fs, uint64_t size, struct audit *a, struct ab_err *e)
{
	struct statfs sf;
	struct json *j;

	if (fstatfs(fs, &sf) < 0 || (sf.f_bavail > 0 && sf.f_ffree > 0))
		return 0;
	fprintf(stderr,
		"agentbox: the overlay's changes reached [limits] changes-size (%llu bytes): "
		"writes beyond it failed with ENOSPC\n",
		(unsigned long long)size);
	j = audit_begin(a, "limit");
	json_kv_str(j, "limit", "changes-size");
	json_kv_uint(j, "size", size);
	return audit_emit(a, e);
}

int overlay_save(const char *dir, int fs, uint64_t size, struct audit *a, struct ab_err *e)
{
	char path[PATH_MAX + 8];
	int from = openat(fs, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), to, rc;
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};

	snprintf(path, sizeof(path), "%s/upper", dir);
	to = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (from < 0 || to < 0)
		rc = ab_fail(e, errno, "cannot open %s", from < 0 ? "the changes' tmpfs" : path);
	else
		rc = fs_copy_tree(from, to, size, e);
	if (from >= 0)
		close(from);
	if (to >= 0)
		close(to);
	if (rc < 0) {
		ab_context(e, "cannot save the overlay's changes to %s (what was copied is kept)",
			   dir);
		if (!strstr(e->msg, "; fix: "))
			ab_hint(e, "free space on that filesystem");
		return -1;
	}
	return audit_full(fs, size, a, e);
}

/* ---------- reading a run ---------- */

struct run_info {
	int fd; /* the record, open: the running sandbox's supervisor holds a lock on it */
	char dir[PATH_MAX];
	char id[64];
	struct timespec started;
	struct strv trees; /* host paths, by tree number */
	struct strv placeholders; /* "N/PATH": protected paths' stand-ins in the upper layer */
};

static void run_info_free(struct run_info *r)
{
	strv_free(&r->trees);
	strv_free(&r->placeholders);
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
		return ab_fail(e, 0, "%s: the changes record is not the caller's own, or others may "
				     "write it", r->dir),
		       ab_hint(e, "promote only changes directories agentbox made for you");
	return 0;
}

static int parse_run_line(struct run_info *r, const char *line, struct ab_err *e)
{
	long long sec;
	long nsec;
	unsigned n;
	int off = 0;

	if (sscanf(line, "run %63s", r->id) == 1)
		return 0;
	if (sscanf(line, "started %lld.%ld", &sec, &nsec) == 2) {
		r->started = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = nsec};
		return 0;
	}
	if (sscanf(line, "tree %u %n", &n, &off) == 1 && off > 0 && n == r->trees.n &&
	    canonical_tree(line + off))
		return strv_push(&r->trees, line + off) < 0 ? ab_fail(e, ENOMEM, "run") : 0;
	if (sscanf(line, "placeholder %u %n", &n, &off) == 1 && off > 0) {
		char entry[PATH_MAX + 16];
		snprintf(entry, sizeof(entry), "%u/%s", n, line + off);
		return strv_push(&r->placeholders, entry) < 0 ? ab_fail(e, ENOMEM, "run") : 0;
	}
	return ab_fail(e, 0, "%s/" RUN_FILE ": unexpected line '%.60s'", r->dir, line);
}

/* RUN_ID (under the runs directory) or a path to a changes directory. */
static int open_run(const char *arg, struct run_info *r, struct ab_err *e)
{
	char path[PATH_MAX + 8], line[PATH_MAX + 32];
	bool magic = false;
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
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!magic)
			magic = !strcmp(line, RUN_MAGIC);
		else
			rc = parse_run_line(r, line, e);
	}
	fclose(f);
	if (rc == 0 && (!magic || !r->trees.n))
		rc = ab_fail(e, 0, "%s is not a complete changes record", path);
	if (rc < 0) {
		run_info_free(r);
	}
	return rc;
}

/* ---------- listing the changes ---------- */

enum change_kind { CH_ADDED, CH_MODIFIED, CH_DELETED };

struct change {
	enum change_kind kind;
	unsigned tree;
	char *rel;   /* below the tree's root, no leading slash */
	mode_t mode; /* the upper entry's (added, modified) */
};

struct changes {
	struct change *v;
	size_t n;
	/* upper directories the command made unreadable, opened up (u+rwx) while this command
	 * reads them, and their modes, put back by changes_free, deepest first */
	struct strv opened;
	mode_t *opened_modes;
};

static const char *const kind_names[] = {"added", "modified", "deleted"};

static int push_change(struct changes *c, enum change_kind kind, unsigned tree, const char *rel,
		       mode_t mode, struct ab_err *e)
{
	struct change *n = realloc(c->v, (c->n + 1) * sizeof(*n));

	if (!n)
		return ab_fail(e, ENOMEM, "changes");
	c->v = n;
	n[c->n] = (struct change){kind, tree, strdup(rel), mode};
	if (!n[c->n].rel)
		return ab_fail(e, ENOMEM, "changes");
	c->n++;
	return 0;
}

static void changes_free(struct changes *c)
{
	for (size_t i = c->opened.n; i-- > 0;)
		if (chmod(c->opened.v[i], c->opened_modes[i]) < 0)
			fprintf(stderr, "agentbox: cannot restore the mode of %s\n", c->opened.v[i]);
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

static bool host_path(const struct run_info *r, unsigned tree, const char *rel, char *out,
		      size_t size)
{
	const char *root = r->trees.v[tree];
	return join(out, size, strcmp(root, "/") ? root : "", rel);
}

struct walk {
	const struct run_info *run;
	unsigned tree;
	struct changes *out;
	struct ab_err *e;
};

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
	char host[PATH_MAX], child[PATH_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int rc = 0;

	if (!host_path(w->run, w->tree, rel, host, sizeof(host)) || !(dir = opendir(host)))
		return 0; /* nothing on the host to delete */
	while (rc == 0 && (d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (fstatat(upperfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if (!join(child, sizeof(child), rel, d->d_name))
			rc = ab_fail(w->e, ENAMETOOLONG, "%s", rel);
		else
			rc = push_change(w->out, CH_DELETED, w->tree, child, 0, w->e);
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
	struct stat st, hst;
	bool on_host;
	int fd, rc;

	if (!join(child, sizeof(child), rel, name) ||
	    !host_path(w->run, w->tree, child, host, sizeof(host)))
		return ab_fail(w->e, ENAMETOOLONG, "%s", rel);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ab_fail(w->e, errno, "%s", child);
	if (is_placeholder(w, child, &st))
		return 0;
	on_host = lstat(host, &hst) == 0;
	if (S_ISCHR(st.st_mode) && st.st_rdev == 0) /* a whiteout */
		return on_host ? push_change(w->out, CH_DELETED, w->tree, child, 0, w->e) : 0;
	if (!S_ISDIR(st.st_mode))
		return push_change(w->out, on_host ? CH_MODIFIED : CH_ADDED, w->tree, child,
				   st.st_mode, w->e);
	if (!on_host || !S_ISDIR(hst.st_mode))
		rc = push_change(w->out, on_host ? CH_MODIFIED : CH_ADDED, w->tree, child,
				 st.st_mode, w->e);
	else
		rc = 0;
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
	if (rc == 0 && on_host && S_ISDIR(hst.st_mode) &&
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
		struct walk w = {r, t, out, e};
		int fd, rc;
		snprintf(upper, sizeof(upper), "%s/upper/%u", r->dir, t);
		fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return ab_fail(e, errno, "cannot open %s", upper);
		rc = walk_upper(&w, fd, "");
		close(fd);
		if (rc < 0)
			return -1;
	}
	/* sorted by path: parents first, and the same order every time */
	qsort(out->v, out->n, sizeof(*out->v), cmp_change);
	return 0;
}

/* PATH arguments (host paths) select the changes at or below them; none selects all. */
static bool selected(const struct run_info *r, const struct change *c, char **paths, int n)
{
	char host[PATH_MAX];

	if (n == 0)
		return true;
	if (!host_path(r, c->tree, c->rel, host, sizeof(host)))
		return false;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(paths[i]);
		if (!strncmp(host, paths[i], len) && (host[len] == '\0' || host[len] == '/'))
			return true;
	}
	return false;
}

/* ---------- audit ---------- */

static int audit_change(struct audit *a, const char *action, const struct run_info *r,
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

/* A name the command chose, printed so it cannot fake or hide a line (printable.h). */
static void print_escaped(const char *s)
{
	print_printable(stdout, s);
}

/* The same for a message: s made safe in buf. */
static const char *safe(const char *s, char *buf, size_t size)
{
	printable(s, buf, size);
	return buf;
}

static int show_changes(const struct run_info *r, const struct changes *c, char **paths, int n)
{
	static const char letters[] = "AMD";
	char host[PATH_MAX];

	for (size_t i = 0; i < c->n; i++) {
		if (!selected(r, &c->v[i], paths, n) ||
		    !host_path(r, c->v[i].tree, c->v[i].rel, host, sizeof(host)))
			continue;
		printf("%c ", letters[c->v[i].kind]);
		print_escaped(host);
		printf("%s\n", S_ISDIR(c->v[i].mode) ? "/" : "");
	}
	return fflush(stdout) == 0 ? 0 : -1;
}

static int run_diff(const char *label, const char *old, const char *new)
{
	char a[PATH_MAX * 4 + 4], b[PATH_MAX * 4 + 4];
	char *argv[] = {"diff", "-u", "--label", a, "--label", b, (char *)old, (char *)new, NULL};
	int status;
	pid_t pid;

	/* the labels are diff's header lines: a name with "\n+++ " in it must not forge one */
	a[0] = 'a';
	b[0] = 'b';
	printable(label, a + 1, sizeof(a) - 1);
	printable(label, b + 1, sizeof(b) - 1);
	fflush(stdout);
	if (posix_spawnp(&pid, "diff", NULL, NULL, argv, environ) != 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	/* diff: 0 same, 1 different, 2 trouble */
	return WIFEXITED(status) && WEXITSTATUS(status) <= 1 ? 0 : -1;
}

static int diff_one(const struct run_info *r, const struct change *c, struct ab_err *e)
{
	char host[PATH_MAX], upper[PATH_MAX * 2], target[PATH_MAX];
	ssize_t n;

	if (!host_path(r, c->tree, c->rel, host, sizeof(host)))
		return ab_fail(e, ENAMETOOLONG, "%s", c->rel);
	snprintf(upper, sizeof(upper), "%s/upper/%u/%s", r->dir, c->tree, c->rel);
	if (c->kind == CH_DELETED)
		return run_diff(host, host, "/dev/null") < 0
			   ? ab_fail(e, 0, "diff failed on %s", host)
			   : 0;
	if (S_ISDIR(c->mode)) {
		printf("new directory ");
		print_escaped(host);
		printf("/\n");
		return 0;
	}
	if (S_ISLNK(c->mode)) {
		n = readlink(upper, target, sizeof(target) - 1);
		if (n < 0)
			return ab_fail(e, errno, "readlink %s", upper);
		target[n] = '\0';
		printf("symlink ");
		print_escaped(host);
		printf(" -> ");
		print_escaped(target);
		printf("\n");
		return 0;
	}
	if (!S_ISREG(c->mode)) {
		printf("special file ");
		print_escaped(host);
		printf(" (not promoted)\n");
		return 0;
	}
	if (run_diff(host, c->kind == CH_ADDED ? "/dev/null" : host, upper) < 0)
		return ab_fail(e, 0, "diff failed on %s", host),
		       ab_hint(e, "diff (Debian's diffutils) must be on PATH");
	return 0;
}

/* ---------- promote ---------- */

/* A tree's root, with no symlink anywhere on its path: the path was canonical at the start, so
 * a symlink now means something on the host was swapped in after. */
static int open_root(const struct run_info *r, unsigned tree)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, AT_FDCWD, r->trees.v[tree], &how, sizeof(how));
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
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
	int fd = open_root(r, tree), sub;

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
		sub = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
	int fd = open_root(r, c->tree), sub;
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
		sub = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
static int install_file(int parent, const char *name, const char *upper, mode_t mode,
			struct ab_err *e)
{
	char tmp[64];
	int in = open(upper, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), out;
	struct stat st;

	if (in < 0)
		return ab_fail(e, errno, "cannot read %s", upper);
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(in);
		return ab_fail(e, EINVAL, "%s is no longer a regular file", upper);
	}
	temp_name(tmp, sizeof(tmp));
	out = openat(parent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return ab_fail(e, errno, "cannot create a file next to %s", name);
	}
	if (fs_copy_fd(in, out) < 0 || fchmod(out, mode & 0777) < 0 || fsync(out) < 0) {
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

static int install_link(int parent, const char *name, const char *upper, struct ab_err *e)
{
	char target[PATH_MAX], tmp[64];
	ssize_t n = readlink(upper, target, sizeof(target) - 1);

	if (n < 0)
		return ab_fail(e, errno, "readlink %s", upper);
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
	char upper[PATH_MAX * 2];
	const char *name = NULL;
	int parent, rc;

	if (c->kind != CH_DELETED && !S_ISDIR(c->mode) && !S_ISLNK(c->mode) && !S_ISREG(c->mode))
		return 0;
	parent = open_parent(r, c->tree, c->rel, c->kind != CH_DELETED, &name, e);
	if (parent < 0)
		return c->kind == CH_DELETED && e->errnum == ENOENT ? 1 : -1; /* already gone */
	snprintf(upper, sizeof(upper), "%s/upper/%u/%s", r->dir, c->tree, c->rel);
	if (c->kind == CH_DELETED)
		rc = fs_remove_tree(parent, name, e);
	else if (S_ISDIR(c->mode))
		rc = install_dir(parent, name, c->mode, e);
	else if (S_ISLNK(c->mode))
		rc = install_link(parent, name, upper, e);
	else
		rc = install_file(parent, name, upper, c->mode, e);
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
		if (ch->kind == CH_DELETED || !S_ISDIR(ch->mode) || !selected(r, ch, paths, n))
			continue;
		parent = open_parent(r, ch->tree, ch->rel, false, &name, &ignored);
		if (parent < 0)
			continue;
		if (fchmodat(parent, name, ch->mode & 0777, 0) < 0)
			fprintf(stderr, "agentbox: cannot set the mode of %s/%s: %s\n",
				r->trees.v[ch->tree], ch->rel, strerror(errno));
		close(parent);
	}
}

/* Protected and guarded paths are refused (listed, audited); the rest is applied. */
static int promote(const struct run_info *r, const struct changes *c, char **paths, int n,
		   struct audit *a, struct ab_err *e)
{
	char host[PATH_MAX], shown[PATH_MAX * 4];
	size_t done = 0, skipped = 0, conflicted = 0, refused = 0;
	struct strv gfiles = {0}, gdirs = {0};
	int result = 0;

	/* all or nothing: every selected change is checked before the first write */
	for (size_t i = 0; i < c->n; i++) {
		if (!selected(r, &c->v[i], paths, n) || !conflicts(r, &c->v[i]))
			continue;
		host_path(r, c->v[i].tree, c->v[i].rel, host, sizeof(host));
		fprintf(stderr,
			"agentbox: conflict: %s changed on the host after the run started\n",
			safe(host, shown, sizeof(shown)));
		conflicted++;
		if (audit_change(a, "promote", r, host, kind_names[c->v[i].kind], "conflict", e) <
		    0)
			return -1;
	}
	if (conflicted) {
		fprintf(stderr,
			"agentbox: nothing promoted: %zu conflict%s; review the host's "
			"changes, then promote only the other paths or discard this run\n",
			conflicted, conflicted == 1 ? "" : "s");
		return 1;
	}
	if (guarded_paths_here(&gfiles, &gdirs, e) < 0)
		goto out;
	for (size_t i = 0; i < c->n; i++) {
		const struct change *ch = &c->v[i];
		const char *why;
		int rc;
		if (!selected(r, ch, paths, n))
			continue;
		host_path(r, ch->tree, ch->rel, host, sizeof(host));
		why = guarded_refusal(ch->rel, ch->kind != CH_DELETED && S_ISDIR(ch->mode), host,
				      &gfiles, &gdirs);
		if (why) {
			fprintf(stderr, "agentbox: refused: %s: %s\n", safe(host, shown, sizeof(shown)),
				why);
			refused++;
			if ((result = audit_change(a, "promote", r, host, kind_names[ch->kind],
						   "refused", e)) < 0)
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
			fprintf(stderr, "agentbox: not promoted: %s is a special file\n",
				safe(host, shown, sizeof(shown)));
		if ((result = audit_change(a, "promote", r, host, kind_names[ch->kind],
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
	fprintf(stderr, "usage: agentbox %s [--audit DEST] RUN_ID|DIR%s\n", cmd,
		strcmp(cmd, "discard") ? " [PATH...]" : "");
	return EXIT_FAILED;
}

static int report(struct ab_err *e)
{
	fprintf(stderr, "agentbox: %s\n", e->msg);
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
		return audit_change(a, "discard", r, NULL, NULL, "applied", e);
	}
	if (list_changes(r, &c, e) < 0) {
		changes_free(&c);
		return -1;
	}
	if (!strcmp(cmd, "changes")) {
		rc = show_changes(r, &c, paths, n) < 0 ? ab_fail(e, errno, "stdout") : 0;
	} else if (!strcmp(cmd, "diff")) {
		for (size_t i = 0; rc == 0 && i < c.n; i++)
			if (selected(r, &c.v[i], paths, n))
				rc = diff_one(r, &c.v[i], e);
	} else {
		rc = promote(r, &c, paths, n, a, e);
	}
	if (rc == 0 && strcmp(cmd, "promote"))
		rc = audit_change(a, !strcmp(cmd, "changes") ? "list" : "diff", r, NULL, NULL, NULL,
				  e);
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

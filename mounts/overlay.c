/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Quarantined writes, set up for a run. An overlay tree is the host directory as overlayfs's lower
 * layer, with the upper layer in a changes directory the command never sees:
 *
 *   DIR/run          "agentbox-changes 1", "run ID", "started SEC.NSEC", "tree N HOSTPATH",
 *                    "protected N PATH" (a protected path the tree lacked: promote refuses
 *                    it; runs before the stand-ins were dropped wrote "placeholder N PATH"
 *                    for the stand-in they made, which is no change)
 *   DIR/upper/N/     what the command changed in tree N (overlayfs's own format: files and
 *                    directories as written, whiteouts for deletions, opaque directories)
 *   DIR/work/N/      overlayfs's scratch space
 *
 * review.c reads the record back for `changes`, `diff` and `discard`; promote.c applies the
 * changes to the host. */
#include "overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "fsops.h"
#include "overlay_internal.h"

/* ---------- a run's trees, reopened for review ---------- */

int overlay_open_root(const struct run_info *r, unsigned tree)
{
	return fs_open_nolinks(AT_FDCWD, r->trees.v[tree], O_PATH | O_DIRECTORY);
}

/* fs_open_nolinks of rel beneath dir, dir closed; errno is the open's. */
static int open_below(int dir, const char *rel, int flags)
{
	int fd, err;

	if (dir < 0)
		return -1;
	fd = fs_open_nolinks(dir, rel, flags);
	err = errno;
	close(dir);
	errno = err;
	return fd;
}

int overlay_open_host(const struct run_info *r, unsigned tree, const char *rel, int flags)
{
	return open_below(overlay_open_root(r, tree), rel, flags);
}

int overlay_open_upper(const struct run_info *r, unsigned tree, const char *rel, int flags)
{
	char root[PATH_MAX];

	if ((size_t)snprintf(root, sizeof(root), "%s/upper/%u", r->dir, tree) >= sizeof(root))
		return errno = ENAMETOOLONG, -1;
	return open_below(open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rel, flags);
}

/* ---------- the changes directory ---------- */

/* The number of the overlay tree whose host root is root, or -1. */
static int overlay_number(const struct mount_plan *plan, const char *root)
{
	int n = 0;

	for (size_t i = 0; i < plan->n; i++) {
		if (plan->ops[i].kind != MOP_OVERLAY)
			continue;
		if (!strcmp(plan->ops[i].source, root))
			return n;
		n++;
	}
	return -1;
}

/* The run's start as promote compares host ctimes with it (>=: changed since): the first value of
 * the coarse clock, which file timestamps come from, after the current one. A host change made
 * before this call (even with a fine-grained timestamp, as some file systems give) is then
 * strictly older, and every later one is not: without the wait, a file saved in the run's first
 * tick was a conflict. Costs at most one tick (1-10 ms), and only overlay runs pay it. */
static void run_start_time(struct timespec *t)
{
	struct timespec t0, pause = {0, 500 * 1000};

	clock_gettime(CLOCK_REALTIME_COARSE, &t0);
	for (int i = 0; i < 100; i++) {
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_REALTIME_COARSE, t);
		if (t->tv_sec != t0.tv_sec || t->tv_nsec != t0.tv_nsec)
			return;
	}
	*t = t0; /* a clock that never moved: as before, a change in this tick is a conflict */
}

static int write_run_file(const char *dir, const char *run_id, const struct mount_plan *plan,
			  int *lock, struct ab_err *e)
{
	char path[PATH_MAX + 8];
	struct timespec now;
	unsigned n = 0;
	FILE *f;
	int fd;

	run_start_time(&now);
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
	for (size_t i = 0; i < plan->n_missing; i++) {
		const struct protect_missing *m = &plan->missing[i];
		int t = m->overlay ? overlay_number(plan, m->root) : -1;
		if (t >= 0)
			fprintf(f, "protected %d %s\n", t, m->rel);
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
	ab_say("the overlay's changes reached [limits] changes-size (%llu bytes): "
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

	snprintf(path, sizeof(path), "%s/upper", dir);
	to = fs_open_nolinks(AT_FDCWD, path, O_RDONLY | O_DIRECTORY);
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

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The disk budget of a run's writable host trees (see include/disklimit.h). */
#include "disklimit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* One file system: a tree's fd, and how much of it was in use when the run started. */
struct disk_fs {
	int fd;
	fsid_t id;
	uint64_t used0;
};

struct disk_limit {
	int tfd;
	uint64_t budget;
	struct disk_fs *fs;
	size_t n;
};

static uint64_t used_bytes(const struct statfs *st)
{
	uint64_t blocks = st->f_blocks > st->f_bfree ? st->f_blocks - st->f_bfree : 0;
	return blocks * (uint64_t)st->f_frsize;
}

static bool same_fs(const fsid_t *a, const fsid_t *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* Adds path's file system unless another tree is on it already. */
static int add_tree(struct disk_limit *d, const char *path, struct ab_err *e)
{
	struct statfs st;
	struct disk_fs *grown;
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return ab_fail(e, errno, "disk limit: cannot open %s", path);
	if (fstatfs(fd, &st) < 0) {
		int err = errno;
		close(fd);
		return ab_fail(e, err, "disk limit: cannot stat the file system of %s", path);
	}
	for (size_t i = 0; i < d->n; i++) {
		if (same_fs(&d->fs[i].id, &st.f_fsid)) {
			close(fd);
			return 0;
		}
	}
	if (!(grown = realloc(d->fs, (d->n + 1) * sizeof(*d->fs)))) {
		close(fd);
		return ab_fail(e, ENOMEM, "disk limit");
	}
	d->fs = grown;
	d->fs[d->n++] = (struct disk_fs){fd, st.f_fsid, used_bytes(&st)};
	return 0;
}

/* Trees the command writes on the host: rw binds, and overlay upper layers unless they are on
 * the changes-size tmpfs (capped already). */
static int add_trees(struct disk_limit *d, const struct mount_plan *plan, struct ab_err *e)
{
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *o = &plan->ops[i];
		const char *path = o->kind == MOP_BIND_RW			   ? o->source
				   : o->kind == MOP_OVERLAY && !plan->changes_size ? o->upper
										   : NULL;
		if (!o->skipped && path && add_tree(d, path, e) < 0)
			return -1;
	}
	return 0;
}

static int arm(struct disk_limit *d, struct ab_err *e)
{
	const struct timespec tick = {0, DISK_LIMIT_TICK_MS * 1000000L};
	struct itimerspec its = {tick, tick};

	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->tfd < 0 || timerfd_settime(d->tfd, 0, &its, NULL) < 0)
		return ab_fail(e, errno, "disk limit: cannot arm its timer");
	return 0;
}

int disk_limit_open(const struct mount_plan *plan, uint64_t budget, struct disk_limit **out,
		    struct ab_err *e)
{
	struct disk_limit *d;

	*out = NULL;
	if (!budget)
		return 0;
	if (!(d = calloc(1, sizeof(*d))))
		return ab_fail(e, ENOMEM, "disk limit");
	d->tfd = -1;
	d->budget = budget;
	if (add_trees(d, plan, e) < 0 || (d->n && arm(d, e) < 0)) {
		disk_limit_close(d);
		return ab_hint(e, "make the rw paths readable, or drop [limits] disk");
	}
	if (!d->n) {
		disk_limit_close(d); /* nothing writable on disk: tmpfs sizes cap the rest */
		return 0;
	}
	*out = d;
	return 0;
}

int disk_limit_fd(const struct disk_limit *d)
{
	return d->tfd;
}

int disk_limit_check(struct disk_limit *d, uint64_t *grown, struct ab_err *e)
{
	uint64_t ticks, total = 0;

	if (read(d->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return ab_fail(e, errno, "disk limit: timer");
	for (size_t i = 0; i < d->n; i++) {
		struct statfs st;
		uint64_t now;
		if (fstatfs(d->fs[i].fd, &st) < 0)
			return ab_fail(e, errno, "disk limit: cannot stat a file system");
		now = used_bytes(&st);
		total += now > d->fs[i].used0 ? now - d->fs[i].used0 : 0;
	}
	*grown = total;
	return total > d->budget;
}

void disk_limit_close(struct disk_limit *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		close(d->fs[i].fd);
	if (d->tfd >= 0)
		close(d->tfd);
	free(d->fs);
	free(d);
}

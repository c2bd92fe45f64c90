/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define V1_ROOT "/sys/fs/cgroup"

const char *cgroup_mode_name(enum cgroup_mode m)
{
	static const char *const names[] = {"rlimits", "cgroup1", "cgroup2"};
	return names[m];
}

/* The caller's own cgroup v2 directory, when /sys/fs/cgroup is cgroup2. */
static bool own_v2_dir(char *out, size_t size)
{
	struct statfs sf;
	char line[PATH_MAX];
	FILE *f;
	bool ok = false;

	if (statfs(V1_ROOT, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC)
		return false;
	if (!(f = fopen("/proc/self/cgroup", "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		ok = (size_t)snprintf(out, size, V1_ROOT "%s", line + 3) < size;
		break;
	}
	fclose(f);
	return ok;
}

static bool writable_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(path, W_OK) == 0;
}

enum cgroup_mode cgroup_probe(const struct limits *l)
{
	char dir[PATH_MAX];

	if (!l->memory && !l->processes)
		return CGROUP_NONE;
	if (own_v2_dir(dir, sizeof(dir)) && writable_dir(dir))
		return CGROUP_V2;
	if ((!l->processes || writable_dir(V1_ROOT "/pids")) &&
	    (!l->memory || writable_dir(V1_ROOT "/memory")))
		return CGROUP_V1;
	return CGROUP_NONE;
}

static int write_at(const char *dir, const char *file, const char *value, struct ab_err *e)
{
	char path[PATH_MAX + 64];
	int fd;
	ssize_t w;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return ab_fail(e, errno, "cgroup: open %s", path);
	w = write(fd, value, strlen(value));
	if (w != (ssize_t)strlen(value)) {
		int err = w < 0 ? errno : EIO;
		close(fd);
		return ab_fail(e, err, "cgroup: write %s to %s", value, path);
	}
	close(fd);
	return 0;
}

/* Runs whose supervisor was SIGKILLed leave their cgroup behind: remove the empty ones (a
 * cgroup in use refuses rmdir). A concurrent run's cgroup is empty for a moment before its
 * pid 1 joins, so only those older than a few seconds are taken for stale. */
static void sweep_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *de;
	struct stat st;
	char path[PATH_MAX];
	time_t now = time(NULL);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "agentbox-", 9) &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", parent, de->d_name) <
			sizeof(path) &&
		    stat(path, &st) == 0 && now - st.st_ctime > 5)
			rmdir(path);
	closedir(d);
}

static int make_dir(struct cgroup_run *cg, const char *parent, const char *run_id, struct ab_err *e)
{
	char *dir;

	sweep_stale(parent);
	if (asprintf(&dir, "%s/agentbox-%s", parent, run_id) < 0)
		return ab_fail(e, ENOMEM, "cgroup path");
	if (strlen(dir) >= PATH_MAX) {
		free(dir);
		return ab_fail(e, ENAMETOOLONG, "cgroup path");
	}
	if (mkdir(dir, 0755) < 0) {
		ab_fail(e, errno, "cgroup: mkdir %s", dir);
		free(dir);
		return -1;
	}
	cg->dirs[cg->n++] = dir;
	return 0;
}

static int apply_v1(struct cgroup_run *cg, const struct limits *l, const char *pid,
		    const char *run_id, struct ab_err *e)
{
	char v[32];

	if (l->processes) {
		if (make_dir(cg, V1_ROOT "/pids", run_id, e) < 0)
			return -1;
		snprintf(v, sizeof(v), "%llu", (unsigned long long)l->processes);
		if (write_at(cg->dirs[cg->n - 1], "pids.max", v, e) < 0 ||
		    write_at(cg->dirs[cg->n - 1], "cgroup.procs", pid, e) < 0)
			return -1;
	}
	if (l->memory) {
		if (make_dir(cg, V1_ROOT "/memory", run_id, e) < 0)
			return -1;
		snprintf(v, sizeof(v), "%llu", (unsigned long long)l->memory);
		cg->memory_dir = cg->dirs[cg->n - 1];
		if (write_at(cg->memory_dir, "memory.limit_in_bytes", v, e) < 0 ||
		    write_at(cg->memory_dir, "cgroup.procs", pid, e) < 0)
			return -1;
	}
	return 0;
}

static int apply_v2(struct cgroup_run *cg, const struct limits *l, const char *pid,
		    const char *run_id, struct ab_err *e)
{
	char own[PATH_MAX], v[32];

	if (!own_v2_dir(own, sizeof(own)) || make_dir(cg, own, run_id, e) < 0)
		return e->msg[0] ? -1 : ab_fail(e, ENOENT, "cgroup v2 directory");
	if (l->processes) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)l->processes);
		if (write_at(cg->dirs[0], "pids.max", v, e) < 0)
			return ab_hint(e, "enable the pids controller for delegated cgroups");
	}
	if (l->memory) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)l->memory);
		cg->memory_dir = cg->dirs[0];
		if (write_at(cg->dirs[0], "memory.max", v, e) < 0 ||
		    write_at(cg->dirs[0], "memory.swap.max", "0", e) < 0)
			return ab_hint(e, "enable the memory controller for delegated cgroups");
	}
	return write_at(cg->dirs[0], "cgroup.procs", pid, e);
}

int cgroup_apply(struct cgroup_run *cg, enum cgroup_mode mode, const struct limits *l, pid_t pid,
		 const char *run_id, struct ab_err *e)
{
	char pidbuf[24];
	int rc;

	memset(cg, 0, sizeof(*cg));
	cg->mode = mode;
	if (mode == CGROUP_NONE)
		return 0;
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	rc = mode == CGROUP_V1 ? apply_v1(cg, l, pidbuf, run_id, e)
			       : apply_v2(cg, l, pidbuf, run_id, e);
	return rc < 0 ? ab_context(e, "%s limits", cgroup_mode_name(mode)) : 0;
}

bool cgroup_memory_killed(const struct cgroup_run *cg)
{
	char path[PATH_MAX + 32], buf[512];
	const char *key;
	FILE *f;
	bool killed = false;

	if (!cg->memory_dir)
		return false;
	key = cg->mode == CGROUP_V1 ? "oom_kill " : "oom_kill ";
	snprintf(path, sizeof(path), "%s/%s", cg->memory_dir,
		 cg->mode == CGROUP_V1 ? "memory.oom_control" : "memory.events");
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, key, strlen(key)) && strtoull(buf + strlen(key), NULL, 10) > 0)
			killed = true;
	fclose(f);
	return killed;
}

void cgroup_release(struct cgroup_run *cg)
{
	/* the pid namespace is gone, but its last tasks may still be leaving the cgroup */
	for (size_t i = 0; i < cg->n; i++) {
		for (int tries = 0; tries < 100 && rmdir(cg->dirs[i]) < 0 && errno == EBUSY;
		     tries++)
			nanosleep(&(struct timespec){0, 2000000}, NULL);
		free(cg->dirs[i]);
		cg->dirs[i] = NULL;
	}
	cg->n = 0;
	cg->memory_dir = NULL;
}

/* Placeholders for protected paths a rw tree does not have.
 *
 * Each rw tree has a record, $XDG_STATE_HOME/agentbox/protect/SHA256(ROOT), a line per
 * placeholder path below ROOT. Every run that protects something in the tree holds a shared
 * lock on the record while it lives; a placeholder is recorded before it is made. At its end a
 * run takes the lock exclusively if it can: then no other run has the tree mounted, and the
 * placeholders still empty are removed, the record emptied. A run that cannot is not the last,
 * and leaves that to whoever is; a killed run leaves it to the next run's end. Removing a
 * placeholder another run still has mounted would lift that run's protection (the kernel
 * detaches a mount whose mount point is unlinked elsewhere), which is what the lock prevents. */
#include "protect.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "digest.h"
#include "fsops.h"

#define RECORD_MAX (1 << 20) /* larger is not a record agentbox wrote: left alone */

/* A directory, with no symlink on the path; below dirfd only, when path is relative. */
static int open_dir(int dirfd, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					  (path[0] == '/' ? 0 : RESOLVE_BENEATH)};
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

static int open_record(const char *root, struct ab_err *e)
{
	char dir[PATH_MAX], path[PATH_MAX + SHA256_HEX_LEN + 2], hex[SHA256_HEX_LEN + 1];
	int fd;

	if (fs_state_dir("protect", dir, sizeof(dir), e) < 0 || fs_mkdirs(dir, e) < 0)
		return ab_context(e, "the record of protected placeholders");
	if (sha256_hex(root, strlen(root), hex) < 0)
		return ab_fail(e, 0, "sha256");
	snprintf(path, sizeof(path), "%s/%s", dir, hex);
	fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open %s", path);
	if (flock(fd, LOCK_SH) < 0) {
		int err = errno;
		close(fd);
		return ab_fail(e, err, "cannot lock %s", path);
	}
	return fd;
}

/* The tree's record, locked shared: opened on the first placeholder in that tree. */
static int hold_tree(struct protect_hold *h, const char *root, struct ab_err *e)
{
	int *records;
	char **roots;

	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->roots[i], root))
			return h->records[i];
	records = realloc(h->records, (h->n + 1) * sizeof(*records));
	if (records)
		h->records = records;
	roots = realloc(h->roots, (h->n + 1) * sizeof(*roots));
	if (roots)
		h->roots = roots;
	if (!records || !roots || !(h->roots[h->n] = strdup(root)))
		return ab_fail(e, ENOMEM, "protect");
	if ((h->records[h->n] = open_record(root, e)) < 0) {
		free(h->roots[h->n]);
		return -1;
	}
	return h->records[h->n++];
}

static int make_placeholder(const struct mount_op *op, const char *root, int record,
			    struct ab_err *e)
{
	const char *rel = op->source + (strcmp(root, "/") ? strlen(root) + 1 : 1);
	const char *name = strrchr(op->source, '/') + 1;
	char parent[PATH_MAX], line[PATH_MAX + 1];
	int n = snprintf(line, sizeof(line), "%s\n", rel), fd;

	/* recorded first: a run killed between the two leaves a line for nothing, not the
	 * reverse */
	if (n < 0 || (size_t)n >= sizeof(line) || fs_write_all(record, line, (size_t)n) < 0)
		return ab_fail(e, errno, "cannot record the placeholder %s", op->source);
	/* the parent was resolved when the plan was made: a link there now is a swap */
	snprintf(parent, sizeof(parent), "%.*s", (int)(name - 1 - op->source), op->source);
	fd = open_dir(AT_FDCWD, parent[0] ? parent : "/");
	if (fd < 0)
		return ab_fail(e, errno, "cannot open %s", parent);
	if (mkdirat(fd, name, 0755) < 0 && errno != EEXIST) { /* another run made it meanwhile */
		int err = errno;
		close(fd);
		return ab_fail(e, err, "cannot create the placeholder %s", op->source),
		       ab_hint(e,
			       "an empty directory there keeps the command from creating that "
			       "protected path: make its directory writable, use overlay instead "
			       "of rw, or unprotect it");
	}
	close(fd);
	return 0;
}

int protect_prepare(const struct mount_plan *plan, struct protect_hold *h, struct ab_err *e)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		const struct mount_op *tree = op->protects ? mount_plan_tree(plan, op) : NULL;
		int record;
		if (!tree || tree->kind != MOP_BIND_RW)
			continue;
		if ((record = hold_tree(h, tree->source, e)) < 0)
			return -1;
		/* an existing one may be another run's placeholder, removed by the last run out
		 * before this one took the lock: then pid 1 cannot open it, and the run stops */
		if (op->placeholder && make_placeholder(op, tree->source, record, e) < 0)
			return -1;
	}
	return 0;
}

/* rel, if it is still a placeholder: an empty directory. */
static void remove_placeholder(int rootfd, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	const char *name = slash ? slash + 1 : rel;
	char parent[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - rel) : 1, slash ? rel : ".");
	fd = open_dir(rootfd, parent);
	if (fd < 0)
		return;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
		unlinkat(fd, name, AT_REMOVEDIR); /* fails when not empty: kept */
	close(fd);
}

/* The last run out: every recorded placeholder that is still one goes, newest first. */
static void clear_record(int record, const char *root)
{
	char *buf = malloc(RECORD_MAX + 1);
	ssize_t n = buf ? pread(record, buf, RECORD_MAX + 1, 0) : -1;
	int rootfd = open_dir(AT_FDCWD, root);

	if (n >= 0 && n <= RECORD_MAX && rootfd >= 0) {
		buf[n] = '\0';
		for (char *line = buf + n; line > buf;) {
			do /* back to the start of the line before this one */
				line--;
			while (line > buf && line[-1] != '\n');
			line[strcspn(line, "\n")] = '\0';
			if (*line && *line != '/')
				remove_placeholder(rootfd, line);
		}
		if (ftruncate(record, 0) < 0)
			fprintf(stderr, "agentbox: cannot empty the record of placeholders in %s\n",
				root);
	}
	if (rootfd >= 0)
		close(rootfd);
	free(buf);
}

void protect_release(struct protect_hold *h)
{
	for (size_t i = 0; i < h->n; i++) {
		if (flock(h->records[i], LOCK_EX | LOCK_NB) == 0)
			clear_record(h->records[i], h->roots[i]);
		close(h->records[i]);
		free(h->roots[i]);
	}
	free(h->records);
	free(h->roots);
	memset(h, 0, sizeof(*h));
}

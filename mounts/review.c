/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The review commands: `agentbox changes|diff|promote|discard` read a run's changes record
 * (overlay.c wrote it), list what the command changed from the upper layers, and print or
 * discard it; promote.c applies it. Names the command chose are printed made safe
 * (printable.h). */
#include "overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsops.h"
#include "overlay_internal.h"
#include "printable.h"
#include "promote_log.h"

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

/* ---------- discard ---------- */

static int discard(const struct run_info *r, bool json, struct ab_err *e)
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
	if (!json)
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
	ab_print("usage: agentbox %s [--json%s] [--audit DEST] RUN_ID|DIR%s\n", cmd,
		 strcmp(cmd, "diff") ? "" : " [--max-bytes N]",
		 strcmp(cmd, "discard") ? " [PATH...]" : "");
	return EXIT_FAILED;
}

/* --max-bytes N: a decimal count of bytes, up to the default. */
static bool byte_count(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > REVIEW_DIFF_MAX)
		return false;
	*out = (size_t)v;
	return true;
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

static void promote_summary(const struct changes *c)
{
	size_t done = 0, skipped = 0, refused = 0;

	for (size_t i = 0; i < c->n; i++) {
		const char *res = c->v[i].result ? c->v[i].result : "";
		done += !strcmp(res, "applied");
		skipped += !strcmp(res, "skipped");
		refused += !strcmp(res, "refused");
	}
	printf("promoted %zu change%s", done, done == 1 ? "" : "s");
	if (skipped)
		printf(", skipped %zu special file%s", skipped, skipped == 1 ? "" : "s");
	if (refused)
		printf(", refused %zu protected path%s", refused, refused == 1 ? "" : "s");
	printf("\n");
}

/* discard --json says what it threw away: what is pending, when it can still be listed (a
 * run whose tree is gone is discarded all the same). */
static void list_for_discard(const struct run_info *r, struct changes *c, bool *listed)
{
	struct ab_err ignored = {0};

	*listed = overlay_list_changes(r, c, &ignored) == 0 &&
		  promote_log_pending(r, c, false, &ignored) == 0;
	for (size_t i = 0; *listed && i < c->n; i++)
		c->v[i].result = "discarded";
}

static int discard_cmd(const struct run_info *r, bool json, struct changes *c, bool *listed,
		       struct audit *a, struct ab_err *e)
{
	if (json)
		list_for_discard(r, c, listed);
	if (discard(r, json, e) < 0)
		return -1;
	/* the upper directories opened up to list them are gone with the rest */
	strv_free(&c->opened);
	return overlay_audit_change(a, "discard", r, NULL, NULL, "applied", e);
}

/* cmd on r: 0 done, 1 a conflict held the promote, -1 an error (e). c is what was listed
 * (*listed), for --json. */
static int run_cmd(const char *cmd, const struct run_info *r, char **paths, int n, bool json,
		   struct changes *c, bool *listed, struct audit *a, struct ab_err *e)
{
	bool all = json && !strcmp(cmd, "changes");
	int rc = 0;

	if ((!strcmp(cmd, "discard") || !strcmp(cmd, "promote")) &&
	    flock(r->fd, LOCK_EX | LOCK_NB) < 0)
		return ab_fail(e, 0, "the run that made %s is still going", r->dir),
		       ab_hint(e,
			       "wait for it to end; a session ends with agentbox session stop %s",
			       r->id);
	if (!strcmp(cmd, "discard"))
		return discard_cmd(r, json, c, listed, a, e);
	/* what earlier promotes applied is no longer a change to show, diff or promote (changes
	 * --json lists it, marked promoted) */
	if (overlay_list_changes(r, c, e) < 0 || promote_log_pending(r, c, all, e) < 0)
		return -1;
	*listed = true;
	if (json && overlay_assess(r, c, paths, n, e) < 0)
		return -1;
	if (!strcmp(cmd, "changes")) {
		if (!json && show_changes(r, c, paths, n) < 0)
			rc = ab_fail(e, errno, "stdout");
	} else if (!strcmp(cmd, "diff")) {
		for (size_t i = 0; !json && rc == 0 && i < c->n; i++)
			if (overlay_selected(r, &c->v[i], paths, n))
				rc = overlay_diff_one(r, &c->v[i], e);
	} else {
		rc = overlay_promote(r, c, paths, n, a, e);
		if (rc == 0 && !json)
			promote_summary(c);
	}
	if (rc == 0 && strcmp(cmd, "promote"))
		rc = overlay_audit_change(a, !strcmp(cmd, "changes") ? "list" : "diff", r, NULL,
					  NULL, NULL, e);
	return rc;
}

static int dispatch(const char *cmd, const struct run_info *r, char **paths, int n, bool json,
		    size_t diff_max, struct audit *a, struct ab_err *e)
{
	struct changes c = {0};
	bool listed = false;
	int rc = run_cmd(cmd, r, paths, n, json, &c, &listed, a, e);

	if (json)
		rc = overlay_json_print(cmd, r, listed ? &c : NULL, paths, n, diff_max, rc, e);
	overlay_changes_free(&c);
	return rc;
}

int overlay_command(int argc, char **argv)
{
	const char *cmd = argv[1], *dest = NULL;
	struct ab_err e = {0};
	struct audit *a = NULL;
	struct run_info r;
	size_t diff_max = REVIEW_DIFF_MAX;
	bool json = false, max = false;
	int i = 2, rc;

	for (;;) {
		if (i + 1 < argc && !strcmp(argv[i], "--audit"))
			dest = argv[i + 1], i += 2;
		else if (i < argc && !strcmp(argv[i], "--json"))
			json = true, i++;
		else if (i + 1 < argc && !strcmp(argv[i], "--max-bytes") &&
			 byte_count(argv[i + 1], &diff_max))
			max = true, i += 2;
		else
			break;
	}
	if (i >= argc || argv[i][0] == '-' || (!strcmp(cmd, "discard") && argc != i + 1) ||
	    (max && (!json || strcmp(cmd, "diff"))))
		return usage(cmd);
	if (open_run(argv[i], &r, &e) < 0) {
		if (json)
			overlay_json_error(cmd, &e);
		return report(&e);
	}
	if (absolute_paths(argv + i + 1, argc - i - 1, &e) < 0 ||
	    audit_open(&a, dest, NULL, AUDIT_FAILURE_STOP, &e) < 0) {
		run_info_free(&r);
		return report(&e);
	}
	rc = dispatch(cmd, &r, argv + i + 1, argc - i - 1, json, diff_max, a, &e);
	if (rc < 0)
		rc = report(&e);
	audit_close(a);
	run_info_free(&r);
	return rc;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* `agentbox diff`: each change against the host, by diff -u reading both sides through fds, and
 * what is not a regular file said, never read (overlay_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "overlay_internal.h"
#include "printable.h"
#include "utf8.h"

extern char **environ;

#define BEYOND_LINK "host path crosses a symlink: not read"
/* diff's output is printed in pieces of at most this many bytes */
#define DIFF_PIECE 4096

/* A name the command chose, printed so it cannot fake or hide a line (printable.h). */
static void print_escaped(const char *s)
{
	print_printable(stdout, s);
}

/* diff -u of two open regular files (-1: /dev/null), which diff reads through the fds as
 * /dev/fd/3 and /dev/fd/4, never by path: a path can lead elsewhere by the time diff opens it
 * (a symlink on the host or swapped in by a live session's command). Its output goes to out
 * (-1: this process's stdout). */
static int spawn_diff(const char *label, int old_fd, int new_fd, int out, pid_t *pid)
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
	int rc = 0;

	/* the labels are diff's header lines: a name with "\n+++ " in it must not forge one */
	a[0] = 'a';
	b[0] = 'b';
	printable(label, a + 1, sizeof(a) - 1);
	printable(label, b + 1, sizeof(b) - 1);
	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	/* out first: it may be 3 or 4. Both files are 5 or above (open_regular): the dups cannot
	 * clobber each other, and they clear close-on-exec in diff */
	if (out >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, out, 1);
	if (rc == 0 && old_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, old_fd, 3);
	if (rc == 0 && new_fd >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, new_fd, 4);
	if (rc == 0)
		rc = posix_spawnp(pid, "diff", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return rc != 0 ? -1 : 0;
}

/* diff's status: 0 when it said same or different, -1 when it had trouble (2) or died. */
static int wait_diff(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) <= 1 ? 0 : -1;
}

/* n bytes of diff's output, NULs among them, printed made printable (printable_line). */
static void print_piece(const char *s, size_t n)
{
	char part[DIFF_PIECE + 1], safe[4 * DIFF_PIECE + 1];

	while (n) {
		const char *nul = memchr(s, '\0', n);
		size_t k = nul ? (size_t)(nul - s) : n;
		memcpy(part, s, k);
		part[k] = '\0';
		printable_line(part, safe, sizeof(safe));
		fputs(safe, stdout);
		if (nul)
			fputs("\\x00", stdout);
		s += k + (nul != NULL);
		n -= k + (nul != NULL);
	}
}

/* diff's output, line by line (a longer line in pieces), each made printable: a changed line
 * of the command's cannot erase, move or hide itself or another on the reader's terminal, as
 * its file's name cannot. The lines' own ends and tabs stay. */
static void print_lines(int fd)
{
	char in[DIFF_PIECE];
	size_t have = 0;
	ssize_t got;

	while ((got = read(fd, in + have, sizeof(in) - have)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		have += (size_t)got;
		size_t start = 0;
		for (char *nl; (nl = memchr(in + start, '\n', have - start));
		     start = (size_t)(nl - in) + 1) {
			print_piece(in + start, (size_t)(nl - in) - start);
			putchar('\n');
		}
		if (start == 0 && have == sizeof(in)) { /* a line longer than the buffer */
			print_piece(in, have);
			start = have;
		}
		memmove(in, in + start, have - start);
		have -= start;
	}
	print_piece(in, have);
}

static int run_diff(const char *label, int old_fd, int new_fd)
{
	int p[2], rc;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	rc = spawn_diff(label, old_fd, new_fd, p[1], &pid);
	close(p[1]);
	if (rc == 0)
		print_lines(p[0]);
	close(p[0]);
	return rc < 0 ? -1 : wait_diff(pid);
}

/* diff's output read into *out (malloc'd, *len bytes and a NUL); *over when it passed cap (diff
 * is then stopped and *out holds nothing useful). */
static int capture_diff(const char *label, int old_fd, int new_fd, size_t cap, char **out,
			size_t *len, bool *over)
{
	char *buf = malloc(cap + 2);
	int p[2], rc;
	ssize_t got = 1;
	pid_t pid;

	*out = NULL, *len = 0, *over = false;
	if (!buf || pipe2(p, O_CLOEXEC) < 0) {
		free(buf);
		return -1;
	}
	rc = spawn_diff(label, old_fd, new_fd, p[1], &pid);
	close(p[1]);
	if (rc < 0) {
		close(p[0]);
		free(buf);
		return -1;
	}
	while (*len <= cap && got != 0)
		if ((got = read(p[0], buf + *len, cap + 1 - *len)) > 0)
			*len += (size_t)got;
		else if (got < 0 && errno != EINTR)
			break;
	close(p[0]);
	buf[*len] = '\0';
	if ((*over = *len > cap))
		kill(pid, SIGKILL);
	rc = wait_diff(pid);
	if (got < 0 || (rc < 0 && !*over)) {
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

/* c's file on the host (host) or in the upper layer, opened beneath its tree with no symlink
 * on the way, checked regular, at fd 5 or above; -1 otherwise. O_NONBLOCK: a FIFO swapped in
 * cannot hang the open. A live session's command can swap any component of the upper path; a
 * symlink on the host path (one committed in a cloned repository) leads out of the tree. */
/* After diff ran on the two fds (either may be -1): both closed, its failure said. */
static int diff_ran(int rc, int hfd, int ufd, const char *host, struct ab_err *e)
{
	if (hfd >= 0)
		close(hfd);
	if (ufd >= 0)
		close(ufd);
	if (rc < 0)
		return ab_fail(e, 0, "diff failed on %s", host),
		       ab_hint(e, "diff (Debian's diffutils) must be on PATH");
	return 0;
}

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

	if ((with_host && hfd < 0) || (with_upper && ufd < 0)) {
		int err = errno;
		if (hfd >= 0)
			close(hfd);
		return ab_fail(e, err, "%s: the %s file is no longer a regular file", host,
			       with_host && hfd < 0 ? "host's" : "changed"),
		       ab_hint(e, "it changed while agentbox read it; stop the session first");
	}
	return diff_ran(run_diff(host, hfd, ufd), hfd, ufd, host, e);
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

int overlay_link_target(const struct run_info *r, const struct change *c, char *out, size_t size)
{
	int fd = overlay_open_upper(r, c->tree, c->rel, O_PATH);
	ssize_t n = fd < 0 ? -1 : readlinkat(fd, "", out, size - 1);
	int err = errno;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return errno = err, -1;
	out[n] = '\0';
	return 0;
}

int overlay_diff_one(const struct run_info *r, const struct change *c, struct ab_err *e)
{
	char host[PATH_MAX], target[PATH_MAX];
	bool with_host;

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
		if (overlay_link_target(r, c, target, sizeof(target)) < 0)
			return ab_fail(e, errno, "readlink %s", host);
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
	/* promote applies a mode too: a change of it alone shows in no diff of the contents */
	if (with_host && (c->mode & 07777) != (c->host_mode & 07777)) {
		printf("mode %04o -> %04o ", (unsigned)(c->host_mode & 07777),
		       (unsigned)(c->mode & 07777));
		print_line("", host, "");
	}
	return diff_file(r, c, host, with_host, true, e);
}

/* ---------- as JSON ---------- */

/* Files larger than this are not diffed for --json: their diff would pass any cap anyway. */
#define DIFF_FILE_MAX (8 * 1024 * 1024)

static void note(struct json *j, const char *diff, size_t len, const char *why)
{
	json_key(j, "diff");
	if (diff)
		json_strn(j, diff, len);
	else
		json_null(j);
	json_kv_str(j, "note", why);
}

/* The diff of c's host side (with_host) against its upper side (with_upper) as "diff", or a
 * note: too large, binary (diff says so, or its text is not UTF-8). */
static int diff_text(const struct run_info *r, const struct change *c, const char *host,
		     bool with_host, bool with_upper, size_t cap, struct json *j, struct ab_err *e)
{
	int hfd, ufd, rc;
	char *out;
	size_t len;
	bool over;

	if (cap == 0) {
		note(j, NULL, 0, "output limit reached");
		return 0;
	}
	if ((with_host && c->host_size > DIFF_FILE_MAX) ||
	    (with_upper && c->size > DIFF_FILE_MAX)) {
		note(j, NULL, 0, "too large");
		return 0;
	}
	hfd = with_host ? open_regular(r, c, true) : -1;
	ufd = with_upper && (!with_host || hfd >= 0) ? open_regular(r, c, false) : -1;
	if ((with_host && hfd < 0) || (with_upper && ufd < 0)) {
		if (hfd >= 0)
			close(hfd);
		note(j, NULL, 0, "changed while agentbox read it: no longer a regular file");
		return 0;
	}
	rc = capture_diff(host, hfd, ufd, cap, &out, &len, &over);
	if (diff_ran(rc, hfd, ufd, host, e) < 0)
		return -1;
	if (over)
		note(j, NULL, 0, cap < REVIEW_DIFF_ONE ? "output limit reached" : "too large");
	else if (!strncmp(out, "Binary files ", 13) || !utf8_valid(out, len) || memchr(out, 0, len))
		note(j, NULL, 0, "binary");
	else
		note(j, out, len, NULL);
	free(out);
	return 0;
}

int overlay_diff_json(const struct run_info *r, const struct change *c, size_t cap, struct json *j,
		      struct ab_err *e)
{
	char host[PATH_MAX];
	bool host_reg = !c->beyond_link && c->kind != CH_ADDED && S_ISREG(c->host_mode);

	if (!overlay_host_path(r, c->tree, c->rel, host, sizeof(host)))
		return ab_fail(e, ENAMETOOLONG, "%s", c->rel);
	if (c->beyond_link)
		note(j, NULL, 0, BEYOND_LINK);
	else if (c->kind == CH_DELETED && host_reg)
		return diff_text(r, c, host, true, false, cap, j, e);
	else if (c->kind == CH_DELETED)
		note(j, NULL, 0, "not a regular file: not read");
	else if (!S_ISREG(c->mode))
		note(j, NULL, 0, "not a regular file");
	else
		return diff_text(r, c, host, host_reg, true, cap, j, e);
	return 0;
}

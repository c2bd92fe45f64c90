/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The profile parser's unit tests share this: the test variables, an in-memory file system
 * that serves profiles through a struct policy_io (includes, cycles and missing files need
 * no disk), loading a profile text or files, and the checks on a load's errors and results. */
#ifndef AGENTBOX_TEST_POLICY_TESTLIB_H
#define AGENTBOX_TEST_POLICY_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define MAIN "/p/main.ini"

static const struct policy_vars test_vars = {
    .home = "/home/alice",
    .cwd = "/work/proj",
    .user = "alice",
    .uid = "1000",
    .tmpdir = "/var/tmp/alice",
};

/* ---------- an in-memory file system for profiles ---------- */

struct mfile {
	const char *path; /* absolute and normalised */
	const char *data; /* NULL: the file exists but cannot be read */
	size_t len;	  /* 0: strlen(data) */
};

struct mfs {
	const struct mfile *files;
	size_t n;
	unsigned reads;
};

/* Lexical realpath: resolves ".", ".." and "//"; NULL for a relative path. */
static inline char *mfs_normalize(const char *path)
{
	size_t o = 0;
	const char *p = path;
	char *out;

	if (path[0] != '/' || !(out = malloc(strlen(path) + 2)))
		return NULL;
	while (*p) {
		const char *seg;
		size_t n;
		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - seg);
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, seg, n);
		o += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

static inline const struct mfile *mfs_find(const struct mfs *fs, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->files[i].path, path))
			return &fs->files[i];
	return NULL;
}

static inline char *mfs_canonical(void *ctx, const char *path)
{
	struct mfs *fs = ctx;
	char *norm = mfs_normalize(path);

	if (!norm || !mfs_find(fs, norm)) {
		free(norm);
		errno = ENOENT;
		return NULL;
	}
	return norm;
}

static inline int mfs_read(void *ctx, const char *path, char **data, size_t *len, struct ab_err *e)
{
	struct mfs *fs = ctx;
	const struct mfile *f = mfs_find(fs, path);
	size_t n;

	fs->reads++;
	if (!f)
		return ab_fail(e, ENOENT, "cannot open profile %s", path);
	if (!f->data)
		return ab_fail(e, EACCES, "cannot open profile %s", path);
	n = f->len ? f->len : strlen(f->data);
	if (!(*data = malloc(n + 1)))
		return ab_fail(e, ENOMEM, "out of memory");
	memcpy(*data, f->data, n);
	(*data)[n] = '\0';
	*len = n;
	return 0;
}

/* Loads files[0] (which may include the others) into a new policy. */
static inline int load_files(struct policy **out, const struct mfile *files, size_t n,
			     struct ab_err *e)
{
	struct mfs fs = {files, n, 0};
	struct policy_io io = {mfs_read, mfs_canonical, &fs};
	struct policy *p = policy_new(&test_vars);

	assert_non_null(p);
	memset(e, 0, sizeof(*e));
	*out = p;
	return policy_load(p, files[0].path, &io, e);
}

#define NFILES(a) (sizeof(a) / sizeof((a)[0]))

static inline int load_text(struct policy **out, const char *text, struct ab_err *e)
{
	const struct mfile f[] = {{MAIN, text, 0}};
	return load_files(out, f, 1, e);
}

static inline struct policy *must_load_files(const struct mfile *files, size_t n)
{
	struct policy *p;
	struct ab_err e;

	if (load_files(&p, files, n, &e) != 0) {
		print_error("unexpected error: %s\n", e.msg);
		fail();
	}
	return p;
}

static inline struct policy *must_load(const char *text)
{
	const struct mfile f[] = {{MAIN, text, 0}};
	return must_load_files(f, 1);
}

/* The message contains where, and what after it. */
static inline void expect_msg(const struct ab_err *e, const char *where, const char *what)
{
	const char *w = strstr(e->msg, where);

	if (!w || !strstr(w, what)) {
		print_error("error message: \"%s\"\nexpected \"%s\" and then \"%s\"\n", e->msg,
			    where, what);
		fail();
	}
}

static inline void expect_files_error(const struct mfile *files, size_t n, const char *where,
				      const char *what)
{
	struct policy *p;
	struct ab_err e;

	if (load_files(&p, files, n, &e) != -1) {
		print_error("loaded without error; expected \"%s ... %s\"\n", where, what);
		fail();
	}
	expect_msg(&e, where, what);
	policy_free(p);
}

static inline void expect_error(const char *text, const char *where, const char *what)
{
	const struct mfile f[] = {{MAIN, text, 0}};
	expect_files_error(f, 1, where, what);
}

static inline const struct fs_entry *find_fs(const struct policy *p, const char *path)
{
	const struct fs_entry *found = NULL;

	for (size_t i = 0; i < p->n_fs; i++) {
		if (strcmp(p->fs[i].path, path))
			continue;
		assert_null(found); /* one path, one entry */
		found = &p->fs[i];
	}
	if (!found) {
		print_error("no filesystem entry for %s\n", path);
		fail();
	}
	return found;
}

static inline void expect_fs(const struct policy *p, const char *path, enum fs_kind kind,
			     bool optional, const char *file, unsigned line)
{
	const struct fs_entry *f = find_fs(p, path);

	assert_int_equal(f->kind, kind);
	assert_int_equal(f->optional, optional);
	assert_string_equal(f->at.file, file);
	assert_int_equal(f->at.line, line);
}

/* sv holds exactly the n strings given, in order. */
static inline void expect_strv(const struct strv *sv, size_t n, ...)
{
	va_list ap;

	if (sv->n != n) {
		print_error("list has %zu items, expected %zu\n", sv->n, n);
		for (size_t i = 0; i < sv->n; i++)
			print_error("  [%zu] %s\n", i, sv->v[i]);
		fail();
	}
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(sv->v[i], va_arg(ap, const char *));
	va_end(ap);
	assert_null(sv->v ? sv->v[n] : NULL);
}

#endif

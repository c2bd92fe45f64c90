/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the profile parser, with includes served from an in-memory file set.
 *
 * Input format: the bytes up to the first separator line are "main.ini". A separator is a line
 * "--- NAME" (at the start of the input or right after a '\n'); the bytes after it, up to the
 * next separator, are the file NAME. At most FUZZ_MAX_FILES files; after the last one,
 * separators are ordinary content. Example:
 *
 *     [sandbox]
 *     include = base.ini
 *     --- base.ini
 *     [filesystem]
 *     ro = /usr
 *
 * Names are normalised lexically ("./a.ini", "/a.ini" and "x/../a.ini" are all "a.ini"), and
 * canonical() returns that name, so include cycles are detected as with real files. The policy is
 * loaded from "main.ini", finished and explained; the explanation must be a complete, pure-ASCII
 * JSON text whenever policy_finish succeeded, and its warnings (policy_warn.h) each a line that
 * names where. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "policy.h"
#include "policy_warn.h"

#define FUZZ_MAX_FILES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct vfile {
	char *name; /* normalised */
	const char *data;
	size_t len;
};

struct vfs {
	struct vfile files[FUZZ_MAX_FILES];
	size_t n;
};

static const struct policy_vars fuzz_vars = {
    .home = "/home/fuzz",
    .cwd = "/work/fuzz",
    .user = "fuzz",
    .uid = "1000",
    .tmpdir = "/tmp",
};

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_policy: check failed: %s (%s:%d)\n", #cond,          \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Lexical normalisation without a leading slash: "." and empty segments dropped, ".." pops
 * (never above the root). Returns a malloc'd string, possibly empty. */
static char *vnormalize(const char *path, size_t len)
{
	char *out = malloc(len + 1);
	size_t o = 0, i = 0;

	if (!out)
		return NULL;
	while (i < len) {
		size_t seg, n;
		while (i < len && path[i] == '/')
			i++;
		seg = i;
		while (i < len && path[i] != '/')
			i++;
		n = i - seg;
		if (n == 0 || (n == 1 && path[seg] == '.'))
			continue;
		if (n == 2 && path[seg] == '.' && path[seg + 1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* the slash before the popped segment */
			continue;
		}
		if (o > 0)
			out[o++] = '/';
		memcpy(out + o, path + seg, n);
		o += n;
	}
	out[o] = '\0';
	return out;
}

static const struct vfile *vfind(const struct vfs *fs, const char *path)
{
	char *name = vnormalize(path, strlen(path));
	const struct vfile *found = NULL;

	if (!name)
		return NULL;
	for (size_t i = 0; i < fs->n && !found; i++)
		if (!strcmp(fs->files[i].name, name))
			found = &fs->files[i];
	free(name);
	return found;
}

static int vread(void *ctx, const char *path, char **data, size_t *len, struct ab_err *e)
{
	const struct vfile *f = vfind(ctx, path);

	if (!f)
		return ab_fail(e, ENOENT, "cannot open profile %s", path);
	/* exactly len bytes, not NUL-terminated: the contract is "*len bytes", so an over-read
	 * past them is caught by ASan */
	if (!(*data = malloc(f->len ? f->len : 1)))
		return ab_fail(e, ENOMEM, "out of memory");
	memcpy(*data, f->data, f->len);
	*len = f->len;
	return 0;
}

static char *vcanonical(void *ctx, const char *path)
{
	const struct vfile *f = vfind(ctx, path);

	if (!f) {
		errno = ENOENT;
		return NULL;
	}
	return strdup(f->name);
}

/* Finds the next separator at or after pos: returns the offset of "--- " (at a line start). */
static size_t next_sep(const char *d, size_t size, size_t pos)
{
	for (size_t i = pos; i + 4 <= size; i++)
		if ((i == 0 || d[i - 1] == '\n') && !memcmp(d + i, "--- ", 4))
			return i;
	return size;
}

static int vsplit(struct vfs *fs, const char *d, size_t size)
{
	size_t pos = 0, sep = next_sep(d, size, 0);

	fs->n = 0;
	if (!(fs->files[0].name = strdup("main.ini")))
		return -1;
	fs->files[0].data = d;
	fs->files[0].len =
	    sep > 0 && sep < size ? sep - 1 : sep; /* the '\n' before belongs to "---" */
	fs->n = 1;
	while (sep < size && fs->n < FUZZ_MAX_FILES) {
		struct vfile *f = &fs->files[fs->n];
		const char *name = d + sep + 4, *nl = memchr(name, '\n', size - (sep + 4));
		size_t name_len = nl ? (size_t)(nl - name) : size - (sep + 4);
		pos = nl ? (size_t)(nl - d) + 1 : size;
		sep = next_sep(d, size, pos);
		if (!(f->name = vnormalize(name, name_len)))
			return -1;
		f->data = d + pos;
		f->len = (sep > pos && sep < size ? sep - 1 : sep) - pos;
		if (fs->n + 1 == FUZZ_MAX_FILES)
			f->len = size - pos; /* the last file takes the rest, separators and all */
		fs->n++;
	}
	return 0;
}

static void vfree(struct vfs *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->files[i].name);
	fs->n = 0;
}

static void check_ascii_json(const char *t)
{
	CHECK(t[0] == '{');
	for (const unsigned char *c = (const unsigned char *)t; *c; c++)
		CHECK(*c >= 0x20 && *c < 0x7f);
}

/* Each warning is one line that begins with where: a file that was read, and its line. */
static void check_warnings(const struct policy *p)
{
	struct strv w = {0};
	struct ab_err e = {0};

	CHECK(policy_warnings(p, &w, &e) == 0);
	for (size_t i = 0; i < w.n; i++) {
		bool named = false;
		CHECK(!strchr(w.v[i], '\n'));
		for (size_t f = 0; f < p->profiles.n && !named; f++) {
			size_t n = strlen(p->profiles.v[f]);
			named = !strncmp(w.v[i], p->profiles.v[f], n) && w.v[i][n] == ':';
		}
		CHECK(named);
	}
	strv_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vfs fs = {0};
	struct policy_io io = {vread, vcanonical, &fs};
	struct ab_err e = {0};
	struct policy *p;

	if (size > POLICY_MAX_FILE_BYTES)
		return 0;
	if (vsplit(&fs, (const char *)data, size) < 0) {
		vfree(&fs);
		return 0;
	}
	if (!(p = policy_new(&fuzz_vars))) {
		vfree(&fs);
		return 0;
	}
	if (policy_load(p, "main.ini", &io, &e) == 0) {
		CHECK(p->profiles.n >= 1 && p->profiles.n == p->profile_sha256.n);
		if (policy_finish(p, &e) == 0) {
			struct json j;
			const char *t;
			json_init(&j);
			policy_explain(p, &j);
			t = json_text(&j);
			CHECK(t != NULL);
			check_ascii_json(t);
			json_free(&j);
			check_warnings(p);
		} else {
			CHECK(memchr(e.msg, '\0', sizeof(e.msg)) && e.msg[0]);
		}
	} else {
		/* every failure explains itself, in a terminated message */
		CHECK(memchr(e.msg, '\0', sizeof(e.msg)) && e.msg[0]);
	}
	policy_free(p);
	vfree(&fs);
	return 0;
}

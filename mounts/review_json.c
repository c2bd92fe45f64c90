/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* `agentbox changes|diff|promote|discard --json`: the same review as one JSON document on
 * stdout, for a harness (docs/sessions.md has the shape). File names are bytes: each is written
 * as a string, and when it is not valid UTF-8 also as "..._b64", its exact bytes (json.h), so
 * no reader has to undo the \xHH escapes meant for people. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "overlay_internal.h"

#define JSON_FORMAT 1

static const char *const kind_names[] = {"added", "modified", "deleted"};

static const char *type_name(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink" : "other";
}

static void kv_mode(struct json *j, const char *key, mode_t m)
{
	char oct[8];

	snprintf(oct, sizeof(oct), "%04o", (unsigned)(m & 07777));
	json_kv_str(j, key, oct);
}

/* One side of a change: its type, mode and (regular files) size; null when it has none. */
static void side(struct json *j, const char *prefix, bool has, mode_t m, off_t size)
{
	char key[32];

	snprintf(key, sizeof(key), "%stype", prefix);
	json_kv_str(j, key, has ? type_name(m) : NULL);
	snprintf(key, sizeof(key), "%smode", prefix);
	if (has)
		kv_mode(j, key, m);
	else
		json_kv_str(j, key, NULL);
	snprintf(key, sizeof(key), "%ssize", prefix);
	json_key(j, key);
	if (has && S_ISREG(m))
		json_int(j, (int64_t)size);
	else
		json_null(j);
}

static void change_fields(struct json *j, const struct run_info *r, const struct change *c,
			  const char *cmd)
{
	char host[PATH_MAX], target[PATH_MAX];
	bool upper = c->kind != CH_DELETED, on_host = c->kind != CH_ADDED && !c->beyond_link;

	overlay_host_path(r, c->tree, c->rel, host, sizeof(host));
	json_kv_bytes(j, "root", r->trees.v[c->tree]);
	json_kv_bytes(j, "path", host);
	json_kv_bytes(j, "rel", c->rel);
	json_kv_str(j, "kind", kind_names[c->kind]);
	/* the entry the change leaves: the upper one, or for a deletion the host's (unknown below
	 * a host symlink: never read) */
	side(j, "", upper || on_host, upper ? c->mode : c->host_mode,
	     upper ? c->size : c->host_size);
	side(j, "host_", on_host, c->host_mode, c->host_size);
	if (upper && S_ISLNK(c->mode) && overlay_link_target(r, c, target, sizeof(target)) == 0)
		json_kv_bytes(j, "target", target);
	json_kv_bool(j, "promoted", c->promoted);
	json_kv_bool(j, "conflict", c->conflict);
	json_kv_str(j, "refused", c->refused);
	if (!strcmp(cmd, "promote") || !strcmp(cmd, "discard"))
		/* selected, but not reached: a conflict or a refusal elsewhere held the promote */
		json_kv_str(j, "result", c->result ? c->result : "held");
}

struct tally {
	size_t kinds[3], listed, promoted, conflicts, refused;
	size_t applied, skipped, rejected, conflicted, held, discarded;
};

static void count(struct tally *t, const struct change *c)
{
	const char *res = c->result ? c->result : "held";

	t->listed++;
	t->kinds[c->kind]++;
	t->promoted += c->promoted;
	t->conflicts += c->conflict;
	t->refused += c->refused != NULL;
	t->applied += !strcmp(res, "applied");
	t->skipped += !strcmp(res, "skipped");
	t->rejected += !strcmp(res, "refused");
	t->conflicted += !strcmp(res, "conflict");
	t->held += !strcmp(res, "held");
	t->discarded += !strcmp(res, "discarded");
}

static void counts(struct json *j, const char *cmd, const struct tally *t)
{
	json_key(j, "counts");
	json_obj_begin(j);
	json_kv_uint(j, "changes", t->listed);
	for (int k = 0; k < 3; k++)
		json_kv_uint(j, kind_names[k], t->kinds[k]);
	json_kv_uint(j, "pending", t->listed - t->promoted);
	json_kv_uint(j, "promoted", t->promoted);
	json_kv_uint(j, "conflicts", t->conflicts);
	json_kv_uint(j, "refused", t->refused);
	json_obj_end(j);
	if (!strcmp(cmd, "promote") || !strcmp(cmd, "discard")) {
		json_key(j, "results");
		json_obj_begin(j);
		if (!strcmp(cmd, "discard")) {
			json_kv_uint(j, "discarded", t->discarded);
		} else {
			json_kv_uint(j, "applied", t->applied);
			json_kv_uint(j, "skipped", t->skipped);
			json_kv_uint(j, "refused", t->rejected);
			json_kv_uint(j, "conflict", t->conflicted);
			json_kv_uint(j, "held", t->held);
		}
		json_obj_end(j);
	}
}

/* The selected changes as objects (diff: with their diffs); -1 when a diff failed (e). */
static int change_list(struct json *j, const char *cmd, const struct run_info *r,
		       const struct changes *c, char **paths, int n, size_t left, struct tally *t,
		       struct ab_err *e)
{
	int rc = 0;

	json_key(j, "changes");
	if (!c) {
		json_null(j);
		return 0;
	}
	json_arr_begin(j);
	for (size_t i = 0; i < c->n; i++) {
		if (!overlay_selected(r, &c->v[i], paths, n))
			continue;
		json_obj_begin(j);
		change_fields(j, r, &c->v[i], cmd);
		count(t, &c->v[i]);
		if (!strcmp(cmd, "diff") && rc == 0) {
			size_t before = j->len;
			rc = overlay_diff_json(
			    r, &c->v[i], left < REVIEW_DIFF_ONE ? left : REVIEW_DIFF_ONE, j, e);
			left -= j->len - before < left ? j->len - before : left;
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	return rc;
}

int overlay_json_print(const char *cmd, const struct run_info *r, const struct changes *c,
		       char **paths, int n, size_t diff_max, int rc, struct ab_err *e)
{
	struct tally t = {0};
	struct json j;
	int out;

	json_init(&j);
	json_obj_begin(&j);
	json_kv_int(&j, "version", JSON_FORMAT);
	json_kv_str(&j, "command", cmd);
	json_kv_str(&j, "run", r->id[0] ? r->id : NULL);
	json_kv_bytes(&j, "changes_dir", r->dir);
	json_key(&j, "roots");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->trees.n; i++) {
		json_obj_begin(&j);
		json_kv_bytes(&j, "path", r->trees.v[i]);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	if (change_list(&j, cmd, r, c, paths, n, diff_max, &t, e) < 0)
		rc = -1;
	counts(&j, cmd, &t);
	json_kv_str(&j, "status", rc < 0 ? "error" : rc > 0 ? "conflict" : "ok");
	json_kv_str(&j, "error", rc < 0 ? e->msg : NULL);
	json_obj_end(&j);
	if (!json_text(&j)) {
		json_free(&j);
		return ab_fail(e, ENOMEM, "--json");
	}
	out = printf("%s\n", json_text(&j)) < 0 || fflush(stdout) != 0;
	json_free(&j);
	if (out)
		return ab_fail(e, errno, "stdout");
	return rc;
}

void overlay_json_error(const char *cmd, const struct ab_err *e)
{
	struct json j;

	json_init(&j);
	json_obj_begin(&j);
	json_kv_int(&j, "version", JSON_FORMAT);
	json_kv_str(&j, "command", cmd);
	json_kv_str(&j, "status", "error");
	json_kv_str(&j, "error", e->msg);
	json_obj_end(&j);
	if (json_text(&j))
		printf("%s\n", json_text(&j));
	json_free(&j);
}

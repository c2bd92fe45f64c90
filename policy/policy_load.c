/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Profile parsing: INI (inih) → struct policy. Strict by design: an unknown section or key, a bad
 * value, a missing include or a scalar set twice in one file is an error naming FILE:LINE. */
#include "policy_parse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "fsops.h"

#ifndef AGENTBOX_PROFILE_DIR
#define AGENTBOX_PROFILE_DIR "/usr/local/share/agentbox/profiles"
#endif

/* inih's line buffer in Debian's build: 200 bytes including "\r\n\0". */
#define INI_LINE_LIMIT 196

/* Files read per policy, counting repeats: a file may be included from several places, but
 * a few includes per file nested 16 deep would otherwise mean millions of reads. */
#define POLICY_MAX_FILES 256

/* ---------- the loader ---------- */

struct raw_entry {
	char *section, *key, *value;
	unsigned line;
};

struct file_parse {
	const char *data;
	size_t len, pos;
	unsigned line;
	struct raw_entry *entries;
	size_t n;
	bool failed;
	struct ab_err *e;
	const char *path;
};

struct loader {
	struct policy *p;
	const struct policy_io *io;
	struct strv stack; /* canonical paths being loaded, for cycle detection */
};

static bool section_known(const char *section);

/* inih reports keys, not headers: a misspelt [section] with no keys would pass unseen. */
static int check_section_header(struct file_parse *fp, const char *line)
{
	const char *p = line + strspn(line, " \t"), *close;
	char name[64];

	if (*p != '[' || !(close = strchr(p, ']')))
		return 0;
	if ((size_t)(close - p - 1) >= sizeof(name) ||
	    (memcpy(name, p + 1, (size_t)(close - p - 1)), name[close - p - 1] = '\0',
	     !section_known(name))) {
		ab_fail(fp->e, 0, "%s:%u: unknown section [%.*s]", fp->path, fp->line,
			(int)(close - p - 1 < 60 ? close - p - 1 : 60), p + 1);
		ab_hint(fp->e, "sections are [sandbox], [filesystem], [network], [limits], "
			       "[seccomp], [env], [audit], [http] and [credential NAME]");
		fp->failed = true;
		return -1;
	}
	return 0;
}

static char *line_reader(char *str, int num, void *stream)
{
	struct file_parse *fp = stream;
	const char *start, *nl;
	size_t n;

	if (fp->failed || fp->pos >= fp->len)
		return NULL;
	start = fp->data + fp->pos;
	nl = memchr(start, '\n', fp->len - fp->pos);
	n = nl ? (size_t)(nl - start) + 1 : fp->len - fp->pos;
	fp->line++;
	if (memchr(start, '\0', n)) {
		ab_fail(fp->e, 0, "%s:%u: NUL byte in the profile", fp->path, fp->line);
		fp->failed = true;
		return NULL;
	}
	if (n > INI_LINE_LIMIT || n + 1 > (size_t)num) {
		ab_fail(fp->e, 0, "%s:%u: line is %zu bytes, longer than the %d-byte limit",
			fp->path, fp->line, n, INI_LINE_LIMIT);
		ab_hint(fp->e, "split it: every list key can be repeated on its own line");
		fp->failed = true;
		return NULL;
	}
	memcpy(str, start, n);
	str[n] = '\0';
	fp->pos += n;
	if (check_section_header(fp, str) < 0)
		return NULL;
	return str;
}

static int collect(void *user, const char *section, const char *key, const char *value)
{
	struct file_parse *fp = user;
	struct raw_entry *ne;

	if (fp->failed)
		return 0;
	ne = realloc(fp->entries, (fp->n + 1) * sizeof(*ne));
	if (!ne) {
		fp->failed = true;
		policy_oom(fp->e);
		return 0;
	}
	fp->entries = ne;
	ne = &fp->entries[fp->n];
	ne->section = strdup(section);
	ne->key = strdup(key);
	ne->value = strdup(value ? value : "");
	ne->line = fp->line;
	fp->n++;
	if (!ne->section || !ne->key || !ne->value) {
		fp->failed = true;
		policy_oom(fp->e);
		return 0;
	}
	return 1;
}

static void free_entries(struct file_parse *fp)
{
	for (size_t i = 0; i < fp->n; i++) {
		free(fp->entries[i].section);
		free(fp->entries[i].key);
		free(fp->entries[i].value);
	}
	free(fp->entries);
}

/* Parses text into raw entries; keys are not interpreted yet. */
static int parse_ini(const char *path, const char *data, size_t len, struct file_parse *fp,
		     struct ab_err *e)
{
	int r;

	memset(fp, 0, sizeof(*fp));
	fp->data = data;
	fp->len = len;
	fp->e = e;
	fp->path = path;
	ini_allow_multiline = false;
	r = ini_parse_stream(line_reader, fp, collect, fp);
	if (fp->failed)
		return -1;
	if (r > 0)
		return ab_fail(e, 0, "%s:%d: cannot parse this line", path, r),
		       ab_hint(e, "write '[section]' or 'key = value'");
	if (r < 0)
		return policy_oom(e);
	return 0;
}

/* ----- keys: each to its section's table ----- */

/* [sandbox] include is the loader's own (apply_file). */
static const struct key_table *const tables[] = {
    &policy_sandbox_keys, &policy_fs_keys,  &policy_net_keys,	&policy_limits_keys,
    &policy_seccomp_keys, &policy_env_keys, &policy_audit_keys, &policy_http_keys,
};

/* Splits a comma list, expands variables in each item and hands it to fn. */
static int each_item(const struct setting *s, const char *value, item_fn fn, struct ab_err *e)
{
	char *copy = strdup(value), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return policy_oom(e);
	if (!*value) {
		free(copy);
		return ab_fail(e, 0, "'%s' has an empty value", s->key), policy_at_error(&s->at, e);
	}
	for (tok = copy; r == 0 && tok; tok = save) {
		char *end, *expanded;
		save = strchr(tok, ',');
		if (save)
			*save++ = '\0';
		while (isspace((unsigned char)*tok))
			tok++;
		end = tok + strlen(tok);
		while (end > tok && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*tok) {
			r = ab_fail(e, 0, "empty item in the list for '%s'", s->key);
			r = policy_at_error(&s->at, e);
			break;
		}
		if (expand_vars(tok, &s->p->vars, s->profile_dir, &expanded, e) < 0) {
			r = policy_at_error(&s->at, e);
			break;
		}
		r = fn(s, expanded, e);
		if (r == 0)
			r = policy_note_item(s, expanded, e);
		free(expanded);
	}
	free(copy);
	return r;
}

static bool section_known(const char *section)
{
	if (!strcmp(section, "sandbox") || policy_credential_section(section))
		return true;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (size_t i = 0; i < tables[t]->n; i++)
			if (!strcmp(tables[t]->v[i].section, section))
				return true;
	return false;
}

static int apply_setting(struct setting *s, const char *value, struct ab_err *e)
{
	if (!*s->section)
		return ab_fail(e, 0, "'%s' is outside any section", s->key),
		       ab_hint(e, "put it under a [section] header"), policy_at_error(&s->at, e);
	if (!section_known(s->section))
		return ab_fail(e, 0, "unknown section [%s]", s->section),
		       ab_hint(e, "sections are [sandbox], [filesystem], [network], [limits], "
				  "[seccomp], [env], [audit], [http] and [credential NAME]"),
		       policy_at_error(&s->at, e);
	if (policy_credential_section(s->section))
		return policy_credential_key(s, value, e) < 0 ? -1 : policy_note_key(s, e);
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (size_t i = 0; i < tables[t]->n; i++) {
			const struct key_spec *k = &tables[t]->v[i];
			if (strcmp(k->section, s->section) || strcmp(k->key, s->key))
				continue;
			if ((k->shape == LIST ? each_item(s, value, k->fn, e)
					      : k->fn(s, value, e)) < 0)
				return -1;
			return policy_note_key(s, e);
		}
	}
	ab_fail(e, 0, "unknown key '%s' in [%s]", s->key, s->section);
	ab_hint(e, "see docs/profile.md for the keys of [%s]", s->section);
	return policy_at_error(&s->at, e);
}

/* ----- files and includes ----- */

static int default_read(void *ctx, const char *path, char **data, size_t *len, struct ab_err *e)
{
	struct stat st;
	size_t off;
	int fd;

	(void)ctx;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat refuses it below */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ab_fail(e, errno, "cannot open profile %s", path);
	if (fstat(fd, &st) < 0) {
		int err = errno;
		close(fd);
		return ab_fail(e, err, "cannot read profile %s", path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return ab_fail(e, EINVAL, "profile %s is not a regular file", path);
	}
	if (st.st_size > POLICY_MAX_FILE_BYTES) {
		close(fd);
		return ab_fail(e, 0, "profile %s is %lld bytes; the limit is %d", path,
			       (long long)st.st_size, POLICY_MAX_FILE_BYTES);
	}
	if (!(*data = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return policy_oom(e);
	}
	off = fs_read_all(fd, *data, (size_t)st.st_size);
	close(fd);
	if (off != (size_t)st.st_size) {
		free(*data);
		return ab_fail(e, errno, "cannot read profile %s", path);
	}
	(*data)[off] = '\0';
	*len = off;
	return 0;
}

static char *default_canonical(void *ctx, const char *path)
{
	(void)ctx;
	return realpath(path, NULL);
}

static const struct policy_io default_io = {default_read, default_canonical, NULL};

static int load_file(struct loader *L, const char *path, struct ab_err *e);

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

char *policy_exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return dir_of(buf);
}

static char *find_profile(const char *name, const struct policy_vars *vars, const char *exe_dir,
			  const struct strv *skip, struct ab_err *e);

/* A bare name missing next to the including file: the profile search path, as -p NAME, past
 * the files being loaded (a profile that shadows a bundled one of its name includes it). */
static char *search_include(struct loader *L, const char *name, const char *beside,
			    struct ab_err *e)
{
	struct ab_err ignored = {0};
	char *dir = policy_exe_dir(), *found;

	found = find_profile(name, &L->p->vars, dir, &L->stack, &ignored);
	free(dir);
	if (!found)
		ab_fail(e, 0, "cannot find profile %s, nor %s on the profile search path", beside,
			name),
		    ab_hint(e, "put it next to the including file, or in $AGENTBOX_PROFILE_PATH, "
			       "~/.config/agentbox/profiles or /etc/agentbox/profiles; or give its "
			       "path");
	return found;
}

static bool on_stack(const struct loader *L, const char *canon)
{
	for (size_t i = 0; i < L->stack.n; i++)
		if (!strcmp(L->stack.v[i], canon))
			return true;
	return false;
}

/* Where an include line points: an absolute path as it is; a path with a '/' from the
 * including file's directory; a bare name there if it exists, else on the profile search path
 * (so `include = python.ini` finds a bundled profile from anywhere, while a profile's own
 * pieces beside it stay its own). A bare name that is the including file itself (or one that
 * includes it) is the next profile of that name on the search path: a profile shadowing a
 * bundled one of its name builds on it; with none, the cycle it is. */
static char *include_path(struct loader *L, const struct setting *s, char *exp, struct ab_err *e)
{
	size_t n = strlen(s->profile_dir) + strlen(exp) + 2;
	struct ab_err ignored = {0};
	char *beside, *canon, *found;
	bool self;

	if (exp[0] == '/')
		return exp;
	if (!(beside = malloc(n))) {
		free(exp);
		return policy_oom(e), NULL;
	}
	snprintf(beside, n, "%s/%s", s->profile_dir, exp);
	errno = 0;
	canon = strchr(exp, '/') ? NULL : L->io->canonical(L->io->ctx, beside);
	/* a relative path, a file beside, or one there but not usable (load_file says why) */
	if (strchr(exp, '/') || (canon && !on_stack(L, canon)) || (!canon && errno != ENOENT)) {
		free(canon);
		free(exp);
		return beside;
	}
	self = canon != NULL;
	free(canon);
	found = search_include(L, exp, beside, self ? &ignored : e);
	free(exp);
	if (!found && self)
		return beside;
	free(beside);
	return found;
}

static int load_include(struct loader *L, const struct setting *s, const char *value,
			struct ab_err *e)
{
	char *exp, *full;
	int r;

	if (policy_expand_one(s, value, &exp, e) < 0)
		return -1;
	if (!(full = include_path(L, s, exp, e)))
		return policy_at_error(&s->at, e);
	r = load_file(L, full, e);
	free(full);
	if (r < 0)
		return policy_at_error(&s->at, e);
	return 0;
}

static int enter_file(struct loader *L, const char *path, char **canon, struct ab_err *e)
{
	if (L->stack.n >= POLICY_MAX_INCLUDE_DEPTH)
		return ab_fail(e, 0, "includes nest deeper than %d files at %s",
			       POLICY_MAX_INCLUDE_DEPTH, path);
	if (L->p->profiles.n >= POLICY_MAX_FILES)
		return ab_fail(e, 0, "more than %d profile files read, at %s", POLICY_MAX_FILES,
			       path),
		       ab_hint(e, "include each file from one place");
	*canon = L->io->canonical(L->io->ctx, path);
	if (!*canon)
		return ab_fail(e, errno, "cannot find profile %s", path),
		       ab_hint(e, "check the path; includes are relative to the including file");
	for (size_t i = 0; i < L->stack.n; i++) {
		if (!strcmp(L->stack.v[i], *canon)) {
			ab_fail(e, 0, "include cycle: %s includes itself", *canon);
			free(*canon);
			return ab_hint(e, "remove one of the include lines");
		}
	}
	if (strv_push(&L->stack, *canon) < 0 || strv_push(&L->p->profiles, *canon) < 0) {
		free(*canon);
		return policy_oom(e);
	}
	return 0;
}

/* Includes first (in order), then this file's own keys in a layer above them: the including
 * file overrides what it includes wherever the include line stands. */
static int apply_file(struct loader *L, const struct file_parse *fp, const char *file,
		      const char *dir, struct ab_err *e)
{
	unsigned layer = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < fp->n; i++) {
			const struct raw_entry *re = &fp->entries[i];
			bool is_include =
			    !strcmp(re->section, "sandbox") && !strcmp(re->key, "include");
			struct setting s = {
			    L->p, {file, re->line, layer}, dir, re->section, re->key};
			int r;
			if (is_include != (pass == 0))
				continue;
			r = is_include ? load_include(L, &s, re->value, e)
				       : apply_setting(&s, re->value, e);
			if (r < 0)
				return -1;
		}
		layer = ++L->p->next_layer;
	}
	return 0;
}

static int load_file(struct loader *L, const char *path, struct ab_err *e)
{
	struct file_parse fp = {0};
	char *data = NULL, *canon = NULL, *dir = NULL;
	const char *file;
	size_t len;
	int r = -1;

	if (enter_file(L, path, &canon, e) < 0)
		return -1;
	file = L->p->profiles.v[L->p->profiles.n - 1];
	free(canon);
	if (L->io->read(L->io->ctx, file, &data, &len, e) < 0)
		goto out;
	{
		char digest[SHA256_HEX_LEN + 1];
		if (sha256_hex(data, len, digest) < 0 ||
		    strv_push(&L->p->profile_sha256, digest) < 0) {
			policy_oom(e);
			goto out;
		}
	}
	if (!(dir = dir_of(file))) {
		policy_oom(e);
		goto out;
	}
	if (parse_ini(file, data, len, &fp, e) < 0)
		goto out;
	r = apply_file(L, &fp, file, dir, e);
out:
	free_entries(&fp);
	free(data);
	free(dir);
	strv_remove(&L->stack, L->stack.n - 1);
	return r;
}

int policy_load(struct policy *p, const char *path, const struct policy_io *io, struct ab_err *e)
{
	struct loader L = {p, io ? io : &default_io, {0}};
	int r = load_file(&L, path, e);
	strv_free(&L.stack);
	return r;
}

int policy_override(struct policy *p, const char *section, const char *key, const char *value,
		    const char *what, struct ab_err *e)
{
	/* the command line is one layer above every file */
	static const unsigned cli_layer = UINT_MAX;
	struct setting s = {p, {what, 0, cli_layer}, NULL, section, key};

	return apply_setting(&s, value, e);
}

/* The keys whose lines a mode conflict names. */
static const char *const net_rule_keys[] = {"network.allow", "network.deny", "network.resolve",
					    "network.grantable", NULL};
static const char *const net_limit_keys[] = {"network.methods",
					     "network.max-connections",
					     "network.rate",
					     "network.max-bytes-out",
					     "network.max-bytes-in",
					     "network.max-connections-per-host",
					     "network.rate-per-host",
					     "network.max-bytes-out-per-host",
					     "network.max-bytes-in-per-host",
					     "network.ask-timeout",
					     NULL};

int policy_finish(struct policy *p, struct ab_err *e)
{
	if (!p->hostname && !(p->hostname = strdup("agentbox")))
		return policy_oom(e);
	if (!p->limits.tmpfs_size)
		p->limits.tmpfs_size = POLICY_DEFAULT_TMPFS_SIZE;
	if (p->nesting && p->seccomp_preset == SECCOMP_PRESET_STRICT)
		return ab_fail(e, 0, "nesting = true cannot work with [seccomp] preset = strict"),
		       ab_hint(e, "use preset = default with nesting"),
		       policy_key_error(p, (const char *[]){"sandbox.nesting", NULL}, e);
	if (p->net_mode != NET_PROXY && (p->net.allow.text.n || p->net.deny.text.n ||
					 p->net.pins.text.n || p->net.grantable.text.n))
		return ab_fail(e, 0,
			       "[network] has allow/deny/resolve/grantable rules but mode is %s",
			       net_mode_name(p->net_mode)),
		       ab_hint(e, "set [network] mode = proxy (or --net proxy) for rules to apply"),
		       policy_key_error(p, net_rule_keys, e);
	if (p->net_mode != NET_PROXY &&
	    (p->net_methods.n || p->net_max_connections || p->net_rate || p->net_max_bytes_out ||
	     p->net_max_bytes_in || p->net_host_max_connections || p->net_host_rate ||
	     p->net_host_max_bytes_out || p->net_host_max_bytes_in || p->net_ask_timeout_ms))
		return ab_fail(e, 0, "[network] has egress limits but mode is %s",
			       net_mode_name(p->net_mode)),
		       ab_hint(e, "set [network] mode = proxy (or --net proxy) for them to apply"),
		       policy_key_error(p, net_limit_keys, e);
	if (p->net_mode != NET_PROXY && (p->net.http.n || p->net.http_grantable.n))
		return ab_fail(e, 0, "[http] has rules but [network] mode is %s",
			       net_mode_name(p->net_mode)),
		       ab_hint(
			   e,
			   "set [network] mode = proxy (or --net proxy): the proxy enforces them"),
		       policy_key_error(
			   p, (const char *[]){"http.allow", "http.deny", "http.grantable", NULL},
			   e);
	if (p->net_mode != NET_PROXY && p->net_ca)
		return ab_fail(e, 0, "[network] ca is set but mode is %s",
			       net_mode_name(p->net_mode)),
		       ab_hint(e, "set [network] mode = proxy (or --net proxy): the proxy verifies "
				  "intercepted connections with it"),
		       policy_key_error(p, (const char *[]){"network.ca", NULL}, e);
	if (p->net_mode != NET_PROXY && p->net_capture == CAPTURE_ON)
		return ab_fail(e, 0, "[network] capture = on but mode is %s",
			       net_mode_name(p->net_mode)),
		       ab_hint(
			   e,
			   "set [network] mode = proxy (or --net proxy): capture feeds the proxy"),
		       policy_key_error(p, (const char *[]){"network.capture", NULL}, e);
	if (policy_credentials_finish(p, e) < 0)
		return -1;
	return policy_rules_finish(p, e);
}

/* ---------- profile search ---------- */

static bool skipped(const char *path, const struct strv *skip)
{
	char *canon;
	bool found = false;

	if (!skip || !skip->n || !(canon = realpath(path, NULL)))
		return false;
	for (size_t i = 0; i < skip->n && !found; i++)
		found = !strcmp(skip->v[i], canon);
	free(canon);
	return found;
}

/* DIR/NAME.ini when it is a regular file and not one of skip (canonical paths). */
static char *try_dir(const char *dir, const char *name, const struct strv *skip)
{
	size_t n = strlen(dir) + strlen(name) + 6;
	char *path = malloc(n);
	struct stat st;

	if (!path)
		return NULL;
	snprintf(path, n, "%s/%s.ini", dir, name);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && !skipped(path, skip))
		return path;
	free(path);
	return NULL;
}

static char *search_list(const char *list, const char *name, const struct strv *skip)
{
	char *copy = strdup(list), *save = NULL, *found = NULL;

	if (!copy)
		return NULL;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save))
		if (d[0] == '/')
			found = try_dir(d, name, skip);
	free(copy);
	return found;
}

/* The search of -p NAME; skip: files that do not count (an include's own chain). */
static char *find_profile(const char *name, const struct policy_vars *vars, const char *exe_dir,
			  const struct strv *skip, struct ab_err *e)
{
	char base[256], conf[PATH_MAX];
	const char *env = getenv("AGENTBOX_PROFILE_PATH");
	size_t n = strlen(name);
	char *found = NULL;

	if (strchr(name, '/')) {
		if (!(found = strdup(name)))
			policy_oom(e);
		return found;
	}
	if (n > 4 && !strcmp(name + n - 4, ".ini"))
		n -= 4;
	if (n == 0 || n >= sizeof(base))
		return ab_fail(e, 0, "'%s' is not a profile name", name), NULL;
	memcpy(base, name, n);
	base[n] = '\0';
	if (env && *env)
		found = search_list(env, base, skip);
	if (!found && vars->home) {
		snprintf(conf, sizeof(conf), "%s/.config/agentbox/profiles", vars->home);
		found = try_dir(conf, base, skip);
	}
	if (!found)
		found = try_dir("/etc/agentbox/profiles", base, skip);
	if (!found)
		found = try_dir(AGENTBOX_PROFILE_DIR, base, skip);
#ifdef AGENTBOX_BUILD_DIR
	if (!found && exe_dir && !strcmp(exe_dir, AGENTBOX_BUILD_DIR))
		found = try_dir(AGENTBOX_SOURCE_PROFILES, base, skip);
#else
	(void)exe_dir;
#endif
	if (!found)
		ab_fail(e, 0, "profile '%s' not found", name),
		    ab_hint(e,
			    "give a path (./%s) or put %s.ini in "
			    "~/.config/agentbox/profiles or $AGENTBOX_PROFILE_PATH",
			    name, base);
	return found;
}

char *policy_find_profile(const char *name, const struct policy_vars *vars, const char *exe_dir,
			  struct ab_err *e)
{
	return find_profile(name, vars, exe_dir, NULL, e);
}

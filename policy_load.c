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
#include "egress_rule.h"
#include "redact.h"
#include "syscall_names.h"

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
			       "[seccomp], [env] and [audit]");
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
		ab_fail(fp->e, 0, "%s:%u: line is %zu bytes, longer than the %d-byte limit", fp->path,
			fp->line, n, INI_LINE_LIMIT);
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
		oom(fp->e);
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
		oom(fp->e);
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
		return oom(e);
	return 0;
}

/* ----- handlers for each kind of value ----- */

/* Splits a comma list, expands variables in each item and hands it to fn. */
static int each_item(const struct setting *s, const char *value, item_fn fn, struct ab_err *e)
{
	char *copy = strdup(value), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return oom(e);
	if (!*value) {
		free(copy);
		return ab_fail(e, 0, "'%s' has an empty value", s->key), at_error(&s->at, e);
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
			r = at_error(&s->at, e);
			break;
		}
		if (expand_vars(tok, &s->p->vars, s->profile_dir, &expanded, e) < 0) {
			r = at_error(&s->at, e);
			break;
		}
		r = fn(s, expanded, e);
		free(expanded);
	}
	free(copy);
	return r;
}

static int on_hostname(const struct setting *s, const char *value, struct ab_err *e)
{
	size_t n = strlen(value);

	if (n == 0 || n > 64 || strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789-.") != n)
		return ab_fail(e, 0, "'%s' is not a valid host name", value),
		       ab_hint(e, "use at most 64 letters, digits, '-' and '.'"), at_error(&s->at, e);
	return set_string(s, &s->p->hostname, value, e);
}

static int on_workdir(const struct setting *s, const char *value, struct ab_err *e)
{
	return set_path(s, value, &s->p->workdir, e);
}

static int on_fallback(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"none", "landlock", NULL};
	int i;
	if (choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->fallback = (enum fallback_mode)i;
	return 0;
}

static int on_nesting(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"false", "true", NULL};
	int i;
	if (choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->nesting = i == 1;
	return 0;
}

static int set_id(const struct setting *s, const char *value, int64_t *field, struct ab_err *e)
{
	uint64_t v;

	if (parse_count(value, &v, e) < 0 || v > 65534)
		return ab_fail(e, 0, "'%s' is not an id from 0 to 65534", value), at_error(&s->at, e);
	if (claim_scalar(s, e) < 0)
		return -1;
	*field = (int64_t)v;
	return 0;
}

static int on_uid(const struct setting *s, const char *v, struct ab_err *e)
{
	return set_id(s, v, &s->p->uid, e);
}

static int on_gid(const struct setting *s, const char *v, struct ab_err *e)
{
	return set_id(s, v, &s->p->gid, e);
}

static int fs_add(const struct setting *s, enum fs_kind kind, bool optional, char *path,
		  char *target, struct ab_err *e)
{
	struct policy *p = s->p;
	struct fs_entry *nf;

	if (!strcmp(path, "/") && kind != FS_RO && kind != FS_RW) {
		free(path);
		free(target);
		return ab_fail(e, 0, "'%s' cannot be applied to /", s->key), at_error(&s->at, e);
	}
	for (size_t i = 0; i < p->n_fs; i++) {
		struct fs_entry *old = &p->fs[i];
		if (strcmp(old->path, path))
			continue;
		if (old->at.layer == s->at.layer) {
			ab_fail(e, 0, "%s is already listed as '%s'", path, fs_kind_name(old->kind));
			if (old->at.line)
				ab_hint(e, "one path takes one entry (see line %u)", old->at.line);
			free(path);
			free(target);
			return at_error(&s->at, e);
		}
		/* a later layer overrides: drop the older entry */
		free(old->path);
		free(old->target);
		memmove(old, old + 1, (p->n_fs - i - 1) * sizeof(*old));
		p->n_fs--;
		break;
	}
	nf = realloc(p->fs, (p->n_fs + 1) * sizeof(*nf));
	if (!nf) {
		free(path);
		free(target);
		return oom(e);
	}
	p->fs = nf;
	p->fs[p->n_fs++] = (struct fs_entry){kind, path, target, optional, s->at};
	return 0;
}

static int fs_path(const struct setting *s, const char *item, enum fs_kind kind, bool optional,
		   struct ab_err *e)
{
	char *norm;

	if (path_normalize(item, &norm, e) < 0)
		return at_error(&s->at, e);
	return fs_add(s, kind, optional, norm, NULL, e);
}

static int on_ro(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_RO, false, e);
}
static int on_rw(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_RW, false, e);
}
static int on_ro_try(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_RO, true, e);
}
static int on_rw_try(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_RW, true, e);
}
static int on_overlay(const struct setting *s, const char *v, struct ab_err *e)
{
	if (strpbrk(v, "\n\t"))
		return ab_fail(e, 0, "an overlay path cannot hold a tab or a newline"),
		       at_error(&s->at, e);
	return fs_path(s, v, FS_OVERLAY, false, e);
}

static int on_protect(const struct setting *s, const char *v, struct ab_err *e)
{
	char *norm;
	int r;

	if (path_normalize(v, &norm, e) < 0)
		return at_error(&s->at, e);
	r = push_item(&s->p->protect, norm, e);
	free(norm);
	return r;
}
static int on_unprotect(const struct setting *s, const char *v, struct ab_err *e)
{
	for (size_t i = 0; policy_protected_names[i]; i++)
		if (!strcmp(v, policy_protected_names[i]))
			return push_item(&s->p->unprotect, v, e);
	for (size_t i = 0; policy_protected_if_present[i]; i++)
		if (!strcmp(v, policy_protected_if_present[i]))
			return push_item(&s->p->unprotect, v, e);
	return ab_fail(e, 0, "'%s' is not one of the protected names", v),
	       ab_hint(e, "see docs/profile.md for the list (.git/hooks, .bashrc, .envrc, ...)"),
	       at_error(&s->at, e);
}

static int on_changes(const struct setting *s, const char *value, struct ab_err *e)
{
	return set_path(s, value, &s->p->changes, e);
}
static int on_tmpfs(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_TMPFS, false, e);
}
static int on_hide(const struct setting *s, const char *v, struct ab_err *e)
{
	return fs_path(s, v, FS_HIDE, false, e);
}

static int on_symlink(const struct setting *s, const char *value, struct ab_err *e)
{
	char *exp, *sp, *target, *link;

	if (expand_one(s, value, &exp, e) < 0)
		return -1;
	sp = strpbrk(exp, " \t");
	if (!sp || !*exp) {
		free(exp);
		return ab_fail(e, 0, "symlink needs 'TARGET LINK'"),
		       ab_hint(e, "write e.g. 'symlink = usr/lib /lib'"), at_error(&s->at, e);
	}
	*sp++ = '\0';
	sp += strspn(sp, " \t");
	if (strpbrk(sp, " \t") || path_normalize(sp, &link, e) < 0) {
		if (strpbrk(sp, " \t"))
			ab_fail(e, 0, "symlink takes exactly 'TARGET LINK'");
		free(exp);
		return at_error(&s->at, e);
	}
	if (!(target = strdup(exp))) {
		free(exp);
		free(link);
		return oom(e);
	}
	free(exp);
	return fs_add(s, FS_SYMLINK, false, link, target, e);
}

static int net_rule(const struct setting *s, const char *item, struct strv *sv, struct ab_err *e)
{
	struct egress_rule r;

	if (egress_rule_parse(item, &r, e) < 0)
		return at_error(&s->at, e);
	return push_item(sv, item, e);
}

static int on_allow(const struct setting *s, const char *v, struct ab_err *e)
{
	return net_rule(s, v, &s->p->net_allow, e);
}
static int on_deny(const struct setting *s, const char *v, struct ab_err *e)
{
	return net_rule(s, v, &s->p->net_deny, e);
}

static int on_resolve(const struct setting *s, const char *item, struct ab_err *e)
{
	struct egress_pin pin;

	if (egress_pin_parse(item, &pin, e) < 0)
		return at_error(&s->at, e);
	return push_item(&s->p->net_resolve, item, e);
}

static int on_method(const struct setting *s, const char *item, struct ab_err *e)
{
	size_t n = strlen(item);

	if (n == 0 || n > 15 || strspn(item, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != n)
		return ab_fail(e, 0, "'%s' is not an HTTP method", item),
		       ab_hint(e, "write methods in capitals, e.g. GET, HEAD"), at_error(&s->at, e);
	return push_item(&s->p->net_methods, item, e);
}

static int on_net_mode(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"none", "proxy", "host", NULL};
	int i;
	if (choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->net_mode = (enum net_mode)i;
	return 0;
}

static int on_capture(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"auto", "on", "off", NULL};
	int i;
	if (choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->net_capture = (enum net_capture)i;
	return 0;
}

#define NET_LIMIT_HANDLER(fn, field, parser)                                                      \
	static int fn(const struct setting *s, const char *v, struct ab_err *e)                   \
	{                                                                                          \
		return set_limit(s, v, &s->p->field, parser, e);                                   \
	}
NET_LIMIT_HANDLER(on_max_connections, net_max_connections, parse_count)
NET_LIMIT_HANDLER(on_rate, net_rate, parse_count)
NET_LIMIT_HANDLER(on_max_bytes_out, net_max_bytes_out, parse_size)
NET_LIMIT_HANDLER(on_max_bytes_in, net_max_bytes_in, parse_size)
NET_LIMIT_HANDLER(on_host_max_connections, net_host_max_connections, parse_count)
NET_LIMIT_HANDLER(on_host_rate, net_host_rate, parse_count)
NET_LIMIT_HANDLER(on_host_max_bytes_out, net_host_max_bytes_out, parse_size)
NET_LIMIT_HANDLER(on_host_max_bytes_in, net_host_max_bytes_in, parse_size)

#define LIMIT_HANDLER(fn, field, parser)                                                          \
	static int fn(const struct setting *s, const char *v, struct ab_err *e)                   \
	{                                                                                          \
		return set_limit(s, v, &s->p->limits.field, parser, e);                            \
	}
LIMIT_HANDLER(on_timeout, timeout_ms, parse_duration_ms)
LIMIT_HANDLER(on_memory, memory, parse_size)
LIMIT_HANDLER(on_processes, processes, parse_count)
LIMIT_HANDLER(on_open_files, open_files, parse_count)
LIMIT_HANDLER(on_file_size, file_size, parse_size)
LIMIT_HANDLER(on_tmpfs_size, tmpfs_size, parse_size)
LIMIT_HANDLER(on_changes_size, changes_size, parse_size)
LIMIT_HANDLER(on_disk, disk, parse_size)

static int on_cpu(const struct setting *s, const char *value, struct ab_err *e)
{
	if (set_limit(s, value, &s->p->limits.cpu_s, parse_duration_ms, e) < 0)
		return -1;
	/* RLIMIT_CPU is whole seconds; round up without wrapping near UINT64_MAX */
	s->p->limits.cpu_s = s->p->limits.cpu_s / 1000 + (s->p->limits.cpu_s % 1000 != 0);
	return 0;
}

static int syscall_name(const struct setting *s, const char *item, struct strv *sv,
			struct ab_err *e)
{
	if (!syscall_name_known(item))
		return ab_fail(e, 0, "unknown system call '%s'", item),
		       ab_hint(e, "check the name in syscalls(2)"), at_error(&s->at, e);
	return push_item(sv, item, e);
}

static int on_sc_deny(const struct setting *s, const char *v, struct ab_err *e)
{
	return syscall_name(s, v, &s->p->seccomp_deny, e);
}
static int on_sc_allow(const struct setting *s, const char *v, struct ab_err *e)
{
	return syscall_name(s, v, &s->p->seccomp_allow, e);
}

static int on_preset(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"default", "strict", "none", NULL};
	int i;
	if (choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->seccomp_preset = (enum seccomp_preset)i;
	return 0;
}

static int on_sc_action(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"errno", "kill", NULL};
	int i;
	if (choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->seccomp_action = (enum seccomp_action)i;
	return 0;
}

static bool env_name_ok(const char *n, size_t len)
{
	if (len == 0 || (!isalpha((unsigned char)n[0]) && n[0] != '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isalnum((unsigned char)n[i]) && n[i] != '_')
			return false;
	return true;
}

static int env_glob(const struct setting *s, const char *item, struct strv *sv, struct ab_err *e)
{
	if (strchr(item, '='))
		return ab_fail(e, 0, "'%s' is not a variable name or glob", item),
		       ab_hint(e, "use [env] set = NAME=VALUE to set a value"), at_error(&s->at, e);
	return push_item(sv, item, e);
}

static int on_env_pass(const struct setting *s, const char *v, struct ab_err *e)
{
	return env_glob(s, v, &s->p->env_pass, e);
}
static int on_env_deny(const struct setting *s, const char *v, struct ab_err *e)
{
	return env_glob(s, v, &s->p->env_deny, e);
}

static int on_env_set(const struct setting *s, const char *value, struct ab_err *e)
{
	struct strv *sv = &s->p->env_set;
	const char *eq = strchr(value, '=');
	size_t nlen = eq ? (size_t)(eq - value) : 0;
	char *exp;

	if (!eq || !env_name_ok(value, nlen))
		return ab_fail(e, 0, "'%s' is not NAME=VALUE", value), at_error(&s->at, e);
	if (expand_vars(value, &s->p->vars, s->profile_dir, &exp, e) < 0)
		return at_error(&s->at, e);
	for (size_t i = 0; i < sv->n; i++) {
		if (strncmp(sv->v[i], value, nlen + 1))
			continue;
		strv_remove(sv, i); /* a later setting of the same name wins */
		break;
	}
	if (strv_push(sv, exp) < 0) {
		free(exp);
		return oom(e);
	}
	free(exp);
	return 0;
}

static int on_redact(const struct setting *s, const char *value, struct ab_err *e)
{
	if (!*value)
		return ab_fail(e, 0, "'redact' has an empty value"), at_error(&s->at, e);
	if (redact_pattern_check(value, e) < 0)
		return at_error(&s->at, e);
	return push_item(&s->p->audit_redact, value, e);
}

static int on_event_budget(const struct setting *s, const char *v, struct ab_err *e)
{
	return set_limit(s, v, &s->p->audit_event_budget, parse_count, e);
}

static int on_audit_failure(const struct setting *s, const char *v, struct ab_err *e)
{
	static const char *const names[] = {"stop", "continue", NULL};
	int i;
	if (choose(s, v, names, &i, e) < 0)
		return -1;
	s->p->audit_on_failure = (enum audit_failure)i;
	return 0;
}

static int on_audit_file(const struct setting *s, const char *value, struct ab_err *e)
{
	char *exp, *norm = NULL;
	int r;

	if (expand_one(s, value, &exp, e) < 0)
		return -1;
	if (!strcmp(exp, "-") || !strncmp(exp, "fd:", 3)) {
		uint64_t fd;
		if (exp[0] == 'f' && parse_count(exp + 3, &fd, e) < 0) {
			free(exp);
			return ab_hint(e, "write fd:N"), at_error(&s->at, e);
		}
		r = set_string(s, &s->p->audit_file, exp, e);
		free(exp);
		return r;
	}
	r = path_normalize(exp, &norm, e);
	free(exp);
	if (r < 0)
		return at_error(&s->at, e);
	r = set_string(s, &s->p->audit_file, norm, e);
	free(norm);
	return r;
}

/* ----- the key table: the public names of the profile format ----- */

enum value_shape {
	LIST,   /* comma-separated, each item expanded */
	SINGLE, /* handler takes the raw value (expands itself) */
};

struct key_spec {
	const char *section, *key;
	enum value_shape shape;
	item_fn fn;
};

static const struct key_spec keys[] = {
	{"sandbox", "hostname", SINGLE, on_hostname},
	{"sandbox", "workdir", SINGLE, on_workdir},
	{"sandbox", "fallback", SINGLE, on_fallback},
	{"sandbox", "nesting", SINGLE, on_nesting},
	{"sandbox", "uid", SINGLE, on_uid},
	{"sandbox", "gid", SINGLE, on_gid},
	{"filesystem", "ro", LIST, on_ro},
	{"filesystem", "rw", LIST, on_rw},
	{"filesystem", "ro-try", LIST, on_ro_try},
	{"filesystem", "rw-try", LIST, on_rw_try},
	{"filesystem", "tmpfs", LIST, on_tmpfs},
	{"filesystem", "hide", LIST, on_hide},
	{"filesystem", "overlay", LIST, on_overlay},
	{"filesystem", "changes", SINGLE, on_changes},
	{"filesystem", "protect", LIST, on_protect},
	{"filesystem", "unprotect", LIST, on_unprotect},
	{"filesystem", "symlink", SINGLE, on_symlink},
	{"network", "mode", SINGLE, on_net_mode},
	{"network", "allow", LIST, on_allow},
	{"network", "deny", LIST, on_deny},
	{"network", "resolve", LIST, on_resolve},
	{"network", "methods", LIST, on_method},
	{"network", "capture", SINGLE, on_capture},
	{"network", "max-connections", SINGLE, on_max_connections},
	{"network", "rate", SINGLE, on_rate},
	{"network", "max-bytes-out", SINGLE, on_max_bytes_out},
	{"network", "max-bytes-in", SINGLE, on_max_bytes_in},
	{"network", "max-connections-per-host", SINGLE, on_host_max_connections},
	{"network", "rate-per-host", SINGLE, on_host_rate},
	{"network", "max-bytes-out-per-host", SINGLE, on_host_max_bytes_out},
	{"network", "max-bytes-in-per-host", SINGLE, on_host_max_bytes_in},
	{"limits", "timeout", SINGLE, on_timeout},
	{"limits", "cpu", SINGLE, on_cpu},
	{"limits", "memory", SINGLE, on_memory},
	{"limits", "processes", SINGLE, on_processes},
	{"limits", "open-files", SINGLE, on_open_files},
	{"limits", "file-size", SINGLE, on_file_size},
	{"limits", "tmpfs-size", SINGLE, on_tmpfs_size},
	{"limits", "changes-size", SINGLE, on_changes_size},
	{"limits", "disk", SINGLE, on_disk},
	{"seccomp", "preset", SINGLE, on_preset},
	{"seccomp", "deny", LIST, on_sc_deny},
	{"seccomp", "allow", LIST, on_sc_allow},
	{"seccomp", "action", SINGLE, on_sc_action},
	{"env", "pass", LIST, on_env_pass},
	{"env", "set", SINGLE, on_env_set},
	{"env", "deny", LIST, on_env_deny},
	{"audit", "file", SINGLE, on_audit_file},
	{"audit", "redact", SINGLE, on_redact},
	{"audit", "on-failure", SINGLE, on_audit_failure},
	{"audit", "event-budget", SINGLE, on_event_budget},
};

static bool section_known(const char *section)
{
	if (!strcmp(section, "sandbox"))
		return true;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(keys[i].section, section))
			return true;
	return false;
}

static int apply_setting(struct setting *s, const char *value, struct ab_err *e)
{
	if (!*s->section)
		return ab_fail(e, 0, "'%s' is outside any section", s->key),
		       ab_hint(e, "put it under a [section] header"), at_error(&s->at, e);
	if (!section_known(s->section))
		return ab_fail(e, 0, "unknown section [%s]", s->section),
		       ab_hint(e, "sections are [sandbox], [filesystem], [network], [limits], "
			          "[seccomp], [env] and [audit]"),
		       at_error(&s->at, e);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct key_spec *k = &keys[i];
		if (strcmp(k->section, s->section) || strcmp(k->key, s->key))
			continue;
		if (k->shape == LIST)
			return each_item(s, value, k->fn, e);
		return k->fn(s, value, e);
	}
	ab_fail(e, 0, "unknown key '%s' in [%s]", s->key, s->section);
	ab_hint(e, "see docs/profile.md for the keys of [%s]", s->section);
	return at_error(&s->at, e);
}

/* ----- files and includes ----- */

static int default_read(void *ctx, const char *path, char **data, size_t *len, struct ab_err *e)
{
	struct stat st;
	ssize_t got;
	size_t off = 0;
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
		return oom(e);
	}
	while (off < (size_t)st.st_size) {
		got = read(fd, *data + off, (size_t)st.st_size - off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		off += (size_t)got;
	}
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

static int load_include(struct loader *L, const struct setting *s, const char *value,
			struct ab_err *e)
{
	char *exp, *full;
	int r;

	if (expand_one(s, value, &exp, e) < 0)
		return -1;
	if (exp[0] == '/') {
		full = exp;
	} else {
		size_t n = strlen(s->profile_dir) + strlen(exp) + 2;
		full = malloc(n);
		if (!full) {
			free(exp);
			return oom(e);
		}
		snprintf(full, n, "%s/%s", s->profile_dir, exp);
		free(exp);
	}
	r = load_file(L, full, e);
	free(full);
	if (r < 0)
		return at_error(&s->at, e);
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
		return oom(e);
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
			bool is_include = !strcmp(re->section, "sandbox") && !strcmp(re->key, "include");
			struct setting s = {L->p, {file, re->line, layer}, dir, re->section, re->key};
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
		if (sha256_hex(data, len, digest) < 0 || strv_push(&L->p->profile_sha256, digest) < 0) {
			oom(e);
			goto out;
		}
	}
	if (!(dir = dir_of(file))) {
		oom(e);
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

int policy_finish(struct policy *p, struct ab_err *e)
{
	if (!p->hostname && !(p->hostname = strdup("agentbox")))
		return oom(e);
	if (!p->limits.tmpfs_size)
		p->limits.tmpfs_size = POLICY_DEFAULT_TMPFS_SIZE;
	if (p->nesting && p->seccomp_preset == SECCOMP_PRESET_STRICT)
		return ab_fail(e, 0, "nesting = true cannot work with [seccomp] preset = strict"),
		       ab_hint(e, "use preset = default with nesting");
	if (p->net_mode != NET_PROXY && (p->net_allow.n || p->net_deny.n || p->net_resolve.n))
		return ab_fail(e, 0, "[network] has allow/deny/resolve rules but mode is %s",
			       net_mode_name(p->net_mode)),
		       ab_hint(e, "set [network] mode = proxy (or --net proxy) for rules to apply");
	if (p->net_mode != NET_PROXY &&
	    (p->net_methods.n || p->net_max_connections || p->net_rate || p->net_max_bytes_out ||
	     p->net_max_bytes_in || p->net_host_max_connections || p->net_host_rate ||
	     p->net_host_max_bytes_out || p->net_host_max_bytes_in))
		return ab_fail(e, 0, "[network] has egress limits but mode is %s",
			       net_mode_name(p->net_mode)),
		       ab_hint(e, "set [network] mode = proxy (or --net proxy) for them to apply");
	if (p->net_mode != NET_PROXY && p->net_capture == CAPTURE_ON)
		return ab_fail(e, 0, "[network] capture = on but mode is %s",
			       net_mode_name(p->net_mode)),
		       ab_hint(e, "set [network] mode = proxy (or --net proxy): capture feeds the proxy");
	return 0;
}

/* ---------- profile search ---------- */

static char *try_dir(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 6;
	char *path = malloc(n);
	struct stat st;

	if (!path)
		return NULL;
	snprintf(path, n, "%s/%s.ini", dir, name);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return path;
	free(path);
	return NULL;
}

static char *search_list(const char *list, const char *name)
{
	char *copy = strdup(list), *save = NULL, *found = NULL;

	if (!copy)
		return NULL;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save))
		if (d[0] == '/')
			found = try_dir(d, name);
	free(copy);
	return found;
}

char *policy_find_profile(const char *name, const struct policy_vars *vars, const char *exe_dir,
			  struct ab_err *e)
{
	char base[256], conf[PATH_MAX];
	const char *env = getenv("AGENTBOX_PROFILE_PATH");
	size_t n = strlen(name);
	char *found = NULL;

	if (strchr(name, '/')) {
		if (!(found = strdup(name)))
			oom(e);
		return found;
	}
	if (n > 4 && !strcmp(name + n - 4, ".ini"))
		n -= 4;
	if (n == 0 || n >= sizeof(base))
		return ab_fail(e, 0, "'%s' is not a profile name", name), NULL;
	memcpy(base, name, n);
	base[n] = '\0';
	if (env && *env)
		found = search_list(env, base);
	if (!found && vars->home) {
		snprintf(conf, sizeof(conf), "%s/.config/agentbox/profiles", vars->home);
		found = try_dir(conf, base);
	}
	if (!found)
		found = try_dir("/etc/agentbox/profiles", base);
	if (!found)
		found = try_dir(AGENTBOX_PROFILE_DIR, base);
#ifdef AGENTBOX_BUILD_DIR
	if (!found && exe_dir && !strcmp(exe_dir, AGENTBOX_BUILD_DIR))
		found = try_dir(AGENTBOX_SOURCE_PROFILES, base);
#else
	(void)exe_dir;
#endif
	if (!found)
		ab_fail(e, 0, "profile '%s' not found", name),
			ab_hint(e, "give a path (./%s) or put %s.ini in "
				   "~/.config/agentbox/profiles or $AGENTBOX_PROFILE_PATH",
				name, base);
	return found;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The value helpers the keys of every section share: paths, variables, scalars set once per
 * layer, list items, limits (policy_parse.h). */
#include "policy_parse.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int policy_oom(struct ab_err *e)
{
	return ab_fail(e, ENOMEM, "out of memory");
}

/* ---------- values: paths, variables ---------- */

int path_normalize(const char *in, char **out, struct ab_err *e)
{
	size_t len = strlen(in);
	char *res, *w;
	const char *p = in;

	if (in[0] != '/')
		return ab_fail(e, 0, "'%s' is not an absolute path", in),
		       ab_hint(e, "start it with / or a variable such as ${CWD}");
	if (len >= PATH_MAX)
		return ab_fail(e, 0, "path is longer than %d bytes", PATH_MAX);
	if (!(res = malloc(len + 2)))
		return policy_oom(e);
	w = res;
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
			free(res);
			return ab_fail(e, 0, "'%s' has a '..' component", in),
			       ab_hint(e, "write the path without '..'");
		}
		*w++ = '/';
		memcpy(w, seg, n);
		w += n;
	}
	if (w == res)
		*w++ = '/';
	*w = '\0';
	*out = res;
	return 0;
}

static const char *var_value(const char *name, size_t n, const struct policy_vars *v,
			     const char *profile_dir)
{
	static const struct {
		const char *name;
		size_t off;
	} table[] = {
	    {"HOME", offsetof(struct policy_vars, home)},
	    {"CWD", offsetof(struct policy_vars, cwd)},
	    {"USER", offsetof(struct policy_vars, user)},
	    {"UID", offsetof(struct policy_vars, uid)},
	    {"TMPDIR", offsetof(struct policy_vars, tmpdir)},
	};

	if (n == 11 && !strncmp(name, "PROFILE_DIR", n))
		return profile_dir;
	/* $USER unset: the user database, asked only here (nsswitch costs a dozen system calls
	 * on every start otherwise) */
	if (n == 4 && !strncmp(name, "USER", n) && !v->user) {
		struct passwd *pw = getpwuid(getuid());
		return pw ? pw->pw_name : NULL;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strlen(table[i].name) == n && !strncmp(name, table[i].name, n))
			return *(const char *const *)((const char *)v + table[i].off);
	return NULL;
}

struct buf {
	char *s;
	size_t len, cap;
};

static int buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *ns = realloc(b->s, cap);
		if (!ns)
			return -1;
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int expand_vars(const char *in, const struct policy_vars *vars, const char *profile_dir, char **out,
		struct ab_err *e)
{
	struct buf b = {0};
	const char *p = in;
	int r = 0;

	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0')) {
		if (!vars->home)
			return ab_fail(e, 0, "'~' used but HOME is not known"),
			       ab_hint(e, "set HOME");
		r = buf_add(&b, vars->home, strlen(vars->home));
		p++;
	}
	while (r == 0 && *p) {
		const char *dollar = strstr(p, "${"), *close, *val;
		if (!dollar) {
			r = buf_add(&b, p, strlen(p));
			break;
		}
		if ((r = buf_add(&b, p, (size_t)(dollar - p))) < 0)
			break;
		if (!(close = strchr(dollar + 2, '}'))) {
			free(b.s);
			return ab_fail(e, 0, "unterminated '${' in '%s'", in);
		}
		val = var_value(dollar + 2, (size_t)(close - dollar - 2), vars, profile_dir);
		if (!val) {
			free(b.s);
			return ab_fail(e, 0, "undefined variable '%.*s'", (int)(close - dollar + 1),
				       dollar),
			       ab_hint(e, "use ${HOME}, ${CWD}, ${USER}, ${UID}, ${TMPDIR} or "
					  "${PROFILE_DIR}");
		}
		r = buf_add(&b, val, strlen(val));
		p = close + 1;
	}
	if (r < 0 || (!b.s && buf_add(&b, "", 0) < 0)) {
		free(b.s);
		return policy_oom(e);
	}
	*out = b.s;
	return 0;
}

int policy_at_error(const struct origin *at, struct ab_err *e)
{
	if (at->line)
		return ab_context(e, "%s:%u", at->file, at->line);
	return ab_context(e, "%s", at->file);
}

int policy_note_key(const struct setting *s, struct ab_err *e)
{
	struct policy *p = s->p;
	char name[64];
	struct origin *na;
	size_t i;

	snprintf(name, sizeof(name), "%s.%s", s->section, s->key);
	for (i = 0; i < p->set_keys.n && strcmp(p->set_keys.v[i], name); i++)
		;
	if (i == p->set_keys.n) {
		if (!(na = realloc(p->set_at, (i + 1) * sizeof(*na))))
			return policy_oom(e);
		p->set_at = na;
		if (strv_push(&p->set_keys, name) < 0)
			return policy_oom(e);
	}
	p->set_at[i] = s->at;
	return 0;
}

int policy_note_item(const struct setting *s, const char *item, struct ab_err *e)
{
	struct policy *p = s->p;
	struct origin *na = realloc(p->item_at, (p->item_keys.n + 1) * sizeof(*na));
	size_t n = strlen(s->section) + strlen(s->key) + strlen(item) + 3;
	char *name = malloc(n);
	int r;

	if (na)
		p->item_at = na;
	if (!na || !name) {
		free(name);
		return policy_oom(e);
	}
	snprintf(name, n, "%s.%s\n%s", s->section, s->key, item);
	na[p->item_keys.n] = s->at;
	r = strv_push(&p->item_keys, name);
	free(name);
	return r < 0 ? policy_oom(e) : 0;
}

const struct origin *policy_item_at(const struct policy *p, const char *key, const char *item)
{
	size_t kn = strlen(key);

	for (size_t i = 0; i < p->item_keys.n; i++) {
		const char *k = p->item_keys.v[i];
		if (!strncmp(k, key, kn) && k[kn] == '\n' && !strcmp(k + kn + 1, item))
			return &p->item_at[i];
	}
	return NULL;
}

const struct origin *policy_key_at(const struct policy *p, const char *key)
{
	for (size_t i = 0; i < p->set_keys.n; i++)
		if (!strcmp(p->set_keys.v[i], key))
			return &p->set_at[i];
	return NULL;
}

int policy_key_error(const struct policy *p, const char *const *keys, struct ab_err *e)
{
	const struct origin *at;

	for (; *keys; keys++)
		if ((at = policy_key_at(p, *keys)))
			return policy_at_error(at, e);
	return -1;
}

/* ----- scalars: "set twice in one file" is an error, a later layer overrides ----- */

int policy_claim_scalar(const struct setting *s, struct ab_err *e)
{
	struct policy *p = s->p;
	char name[64];
	unsigned *nl;

	snprintf(name, sizeof(name), "%s.%s", s->section, s->key);
	for (size_t i = 0; i < p->scalar_keys.n; i++) {
		if (strcmp(p->scalar_keys.v[i], name))
			continue;
		if (p->scalar_layers[i] == s->at.layer)
			return ab_fail(e, 0, "'%s' is set twice in [%s]", s->key, s->section),
			       ab_hint(e, "keep one of the two lines"), policy_at_error(&s->at, e);
		p->scalar_layers[i] = s->at.layer;
		return 0;
	}
	nl = realloc(p->scalar_layers, (p->scalar_keys.n + 1) * sizeof(*nl));
	if (!nl)
		return policy_oom(e);
	p->scalar_layers = nl;
	nl[p->scalar_keys.n] = s->at.layer;
	if (strv_push(&p->scalar_keys, name) < 0)
		return policy_oom(e);
	return 0;
}

int policy_set_string(const struct setting *s, char **field, const char *v, struct ab_err *e)
{
	char *copy;

	if (policy_claim_scalar(s, e) < 0)
		return -1;
	if (!(copy = strdup(v)))
		return policy_oom(e);
	free(*field);
	*field = copy;
	return 0;
}

int policy_choose(const struct setting *s, const char *v, const char *const *names, int *out,
		  struct ab_err *e)
{
	*out = -1; /* written on every path, so that -O2 sees no unset value in the callers */
	for (int i = 0; names[i]; i++) {
		if (!strcmp(v, names[i])) {
			if (policy_claim_scalar(s, e) < 0)
				return -1;
			*out = i;
			return 0;
		}
	}
	ab_fail(e, 0, "'%s' is not a valid %s", v, s->key);
	ab_hint(e, "use one of: ");
	for (int i = 0; names[i]; i++) {
		size_t len = strlen(e->msg);
		snprintf(e->msg + len, sizeof(e->msg) - len, "%s%s", i ? ", " : "", names[i]);
	}
	return policy_at_error(&s->at, e);
}

/* A scalar path: variables expanded, normalised, absolute. */
int policy_set_path(const struct setting *s, const char *value, char **field, struct ab_err *e)
{
	char *exp, *norm;
	int r;

	if (policy_expand_one(s, value, &exp, e) < 0)
		return -1;
	r = path_normalize(exp, &norm, e);
	free(exp);
	if (r < 0)
		return policy_at_error(&s->at, e);
	r = policy_set_string(s, field, norm, e);
	free(norm);
	return r;
}

/* Limits: each field parsed by one of three parsers, 0 rejected (omit the key instead). */
int policy_set_limit(const struct setting *s, const char *value, uint64_t *field,
		     int (*parse)(const char *, uint64_t *, struct ab_err *), struct ab_err *e)
{
	uint64_t v;
	char *exp;
	int r;

	if (policy_expand_one(s, value, &exp, e) < 0)
		return -1;
	r = parse(exp, &v, e);
	free(exp);
	if (r < 0)
		return policy_at_error(&s->at, e);
	if (v == 0)
		return ab_fail(e, 0, "'%s' must be greater than 0", s->key),
		       ab_hint(e, "leave the key out for no limit"), policy_at_error(&s->at, e);
	if (policy_claim_scalar(s, e) < 0)
		return -1;
	*field = v;
	return 0;
}

/* ----- list items ----- */

int policy_expand_one(const struct setting *s, const char *value, char **out, struct ab_err *e)
{
	if (!*value)
		return ab_fail(e, 0, "'%s' has an empty value", s->key), policy_at_error(&s->at, e);
	if (expand_vars(value, &s->p->vars, s->profile_dir, out, e) < 0)
		return policy_at_error(&s->at, e);
	return 0;
}

int policy_push_item(struct strv *sv, const char *item, struct ab_err *e)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], item))
			return 0; /* already there: lists are sets */
	if (strv_push(sv, item) < 0)
		return policy_oom(e);
	return 0;
}

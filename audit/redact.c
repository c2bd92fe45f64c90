/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "redact.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct rule {
	regex_t re;
	int group; /* the submatch replaced: 0 for the whole match */
};

/* The built-in shapes are matched by hand (no regex to compile at every start); only the
 * profile's own patterns are regexes. */
struct redactor {
	struct rule *rules;
	size_t n;
	struct literal {
		char *s;
		size_t n;
	} * lits; /* secrets known by value (credentials): wiped when freed */
	size_t n_lits;
};

static int compile(struct rule *r, const char *pattern, int group, int flags, struct ab_err *e)
{
	int rc = regcomp(&r->re, pattern, REG_EXTENDED | flags);

	if (rc != 0) {
		char msg[128];
		regerror(rc, &r->re, msg, sizeof(msg));
		return ab_fail(e, 0, "bad redact pattern '%s': %s", pattern, msg);
	}
	r->group = group;
	return 0;
}

int redact_pattern_check(const char *pattern, struct ab_err *e)
{
	struct rule r;

	if (compile(&r, pattern, 0, 0, e) < 0)
		return ab_hint(e, "write a POSIX extended regular expression");
	regfree(&r.re);
	return 0;
}

int redactor_new(struct redactor **out, const struct strv *extra, struct ab_err *e)
{
	struct redactor *r = calloc(1, sizeof(*r));

	if (!r || !(r->rules = calloc((extra ? extra->n : 0) + 1, sizeof(*r->rules)))) {
		free(r);
		return ab_fail(e, ENOMEM, "redactor");
	}
	for (size_t i = 0; extra && i < extra->n; i++, r->n++)
		if (compile(&r->rules[r->n], extra->v[i], 0, 0, e) < 0)
			goto fail;
	*out = r;
	return 0;
fail:
	redactor_free(r);
	return -1;
}

int redactor_add_literal(struct redactor *r, const char *s, size_t n)
{
	struct literal *nl = realloc(r->lits, (r->n_lits + 1) * sizeof(*nl));
	char *copy = nl ? malloc(n) : NULL;

	if (nl)
		r->lits = nl;
	if (!copy || !n)
		return free(copy), n ? -1 : 0;
	memcpy(copy, s, n);
	r->lits[r->n_lits].s = copy;
	r->lits[r->n_lits++].n = n;
	return 0;
}

void redactor_free(struct redactor *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		regfree(&r->rules[i].re);
	free(r->rules);
	for (size_t i = 0; i < r->n_lits; i++) {
		explicit_bzero(r->lits[i].s, r->lits[i].n);
		free(r->lits[i].s);
	}
	free(r->lits);
	free(r);
}

struct span {
	size_t start, end;
};

struct spans {
	struct span *v;
	size_t n, cap;
};

static int add_span(struct spans *sp, size_t start, size_t end)
{
	if (sp->n == sp->cap) {
		size_t cap = sp->cap ? sp->cap * 2 : 8;
		struct span *nv = realloc(sp->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		sp->v = nv;
		sp->cap = cap;
	}
	sp->v[sp->n++] = (struct span){start, end};
	return 0;
}

/* ---------- the built-in shapes ---------- */

static bool in_set(char c, const char *set)
{
	return c && strchr(set, c) != NULL;
}

static bool alnum(char c)
{
	return isalnum((unsigned char)c);
}

static bool upper_digit(char c)
{
	return isdigit((unsigned char)c) || (c >= 'A' && c <= 'Z');
}

/* Length of the run at s[i] of bytes that satisfy ok or lie in extra. */
static size_t run(const char *s, size_t i, bool (*ok)(char), const char *extra)
{
	size_t j = i;
	while (s[j] && (ok(s[j]) || (extra && in_set(s[j], extra))))
		j++;
	return j - i;
}

/* A token: a literal prefix, then at least min bytes of its alphabet (at most max; 0: any). */
struct token {
	const char *prefix;
	bool (*ok)(char);
	const char *extra;
	size_t min, max;
};

static const struct token tokens[] = {
    {"AKIA", upper_digit, NULL, 16, 16}, {"ASIA", upper_digit, NULL, 16, 16},
    {"ghp_", alnum, NULL, 20, 0},	 {"gho_", alnum, NULL, 20, 0},
    {"ghu_", alnum, NULL, 20, 0},	 {"ghs_", alnum, NULL, 20, 0},
    {"ghr_", alnum, NULL, 20, 0},	 {"github_pat_", alnum, "_", 20, 0},
    {"glpat-", alnum, "_-", 20, 0},	 {"xoxa-", alnum, "-", 10, 0},
    {"xoxb-", alnum, "-", 10, 0},	 {"xoxp-", alnum, "-", 10, 0},
    {"xoxo-", alnum, "-", 10, 0},	 {"xoxs-", alnum, "-", 10, 0},
    {"xoxr-", alnum, "-", 10, 0},	 {"sk-", alnum, "_-", 20, 0},
};

static const char *const credential_headers[] = {"proxy-authorization", "authorization",
						 "set-cookie", "cookie"};

static int token_at(const char *s, size_t i, struct spans *sp)
{
	for (size_t t = 0; t < sizeof(tokens) / sizeof(tokens[0]); t++) {
		size_t pl, n;
		if (s[i] != tokens[t].prefix[0]) /* the common case, without a call */
			continue;
		pl = strlen(tokens[t].prefix);
		if (strncmp(s + i, tokens[t].prefix, pl))
			continue;
		n = run(s, i + pl, tokens[t].ok, tokens[t].extra);
		if (n < tokens[t].min)
			continue;
		if (tokens[t].max && n > tokens[t].max)
			n = tokens[t].max;
		return add_span(sp, i, i + pl + n);
	}
	return 0;
}

/* eyJ<header>.<payload>.<signature> */
static int jwt_at(const char *s, size_t i, struct spans *sp)
{
	size_t j = i + 3, n;

	if (strncmp(s + i, "eyJ", 3))
		return 0;
	for (int part = 0; part < 2; part++) {
		if ((n = run(s, j, alnum, "_-")) < 4 || s[j + n] != '.')
			return 0;
		j += n + 1;
	}
	if ((n = run(s, j, alnum, "_-")) < 1)
		return 0;
	return add_span(sp, i, j + n);
}

/* -----BEGIN ... PRIVATE KEY----- */
static int pem_at(const char *s, size_t i, struct spans *sp)
{
	static const char head[] = "-----BEGIN ", tail[] = "PRIVATE KEY-----";
	size_t j = i + sizeof(head) - 1;

	if (strncmp(s + i, head, sizeof(head) - 1))
		return 0;
	for (; s[j] == ' ' || (s[j] >= 'A' && s[j] <= 'Z'); j++)
		if (!strncmp(s + j, tail, sizeof(tail) - 1))
			return add_span(sp, i, j + sizeof(tail) - 1);
	return 0;
}

/* scheme://USERINFO@host */
static int userinfo_at(const char *s, size_t i, struct spans *sp)
{
	size_t j = i + 3, k;

	if (strncmp(s + i, "://", 3))
		return 0;
	for (k = j; s[k] && !in_set(s[k], "/@\"") && !isspace((unsigned char)s[k]); k++)
		;
	return s[k] == '@' && k > j ? add_span(sp, j, k) : 0;
}

/* ?key=VALUE or &key=VALUE */
static int query_at(const char *s, size_t i, struct spans *sp)
{
	size_t k = i + 1, v;

	if (s[i] != '?' && s[i] != '&')
		return 0;
	while (s[k] && !in_set(s[k], "=&#?\"") && !isspace((unsigned char)s[k]))
		k++;
	if (k == i + 1 || s[k] != '=')
		return 0;
	for (v = ++k; s[v] && !in_set(s[v], "&#\"") && !isspace((unsigned char)s[v]); v++)
		;
	return v > k ? add_span(sp, k, v) : 0;
}

/* Authorization: VALUE (up to the end or a quote) */
static int header_at(const char *s, size_t i, struct spans *sp)
{
	for (size_t h = 0; h < sizeof(credential_headers) / sizeof(credential_headers[0]); h++) {
		size_t n, j, v;
		if (tolower((unsigned char)s[i]) != credential_headers[h][0])
			continue;
		n = strlen(credential_headers[h]);
		j = i + n;
		if (strncasecmp(s + i, credential_headers[h], n))
			continue;
		while (isspace((unsigned char)s[j]))
			j++;
		if (s[j] != ':' && s[j] != '=')
			continue;
		for (j++; isspace((unsigned char)s[j]); j++)
			;
		for (v = j; s[v] && s[v] != '"'; v++)
			;
		return v > j ? add_span(sp, j, v) : 0;
	}
	return 0;
}

/* a, c, p or s in either case: the first letters of credential_headers */
static bool may_start_header(char c)
{
	switch (c | 0x20) {
	case 'a':
	case 'c':
	case 'p':
	case 's':
		return true;
	default:
		return false;
	}
}

/* Each shape starts with a known byte: most positions need no matcher at all. */
static int builtin_spans(const char *s, struct spans *sp)
{
	int rc = 0;

	for (size_t i = 0; s[i] && rc == 0; i++) {
		switch (s[i]) {
		case 'A':
		case 'g':
		case 'x':
		case 's':
			rc = token_at(s, i, sp);
			break;
		case 'e':
			rc = jwt_at(s, i, sp);
			break;
		case '-':
			rc = pem_at(s, i, sp);
			break;
		case ':':
			rc = userinfo_at(s, i, sp);
			break;
		case '?':
		case '&':
			rc = query_at(s, i, sp);
			break;
		default:
			break;
		}
		if (rc == 0 && may_start_header(s[i]))
			rc = header_at(s, i, sp);
	}
	return rc;
}

/* Every match of one rule in s, found in the original text so that no rule's replacement can
 * break up another rule's secret. */
static int collect(const struct rule *rule, const char *s, struct spans *sp)
{
	size_t off = 0, len = strlen(s);
	regmatch_t m[4];

	while (off < len && regexec(&rule->re, s + off, 4, m, off ? REG_NOTBOL : 0) == 0) {
		regmatch_t g = m[rule->group];
		if (g.rm_so >= 0 && g.rm_eo > g.rm_so &&
		    add_span(sp, off + (size_t)g.rm_so, off + (size_t)g.rm_eo) < 0)
			return -1;
		off += m[0].rm_eo > 0 ? (size_t)m[0].rm_eo : 1;
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* s with the union of the spans replaced, each merged run once. */
static char *replace_spans(const char *s, struct spans *sp)
{
	size_t len = strlen(s), rlen = strlen(REDACTED), out_len = 0, pos = 0;
	char *out = malloc(len + sp->n * rlen + 1);

	if (!out)
		return NULL;
	if (sp->n > 1) /* qsort's base may not be null, and an empty set has none */
		qsort(sp->v, sp->n, sizeof(*sp->v), by_start);
	for (size_t i = 0; i < sp->n;) {
		size_t start = sp->v[i].start, end = sp->v[i].end;
		while (++i < sp->n && sp->v[i].start <= end)
			if (sp->v[i].end > end)
				end = sp->v[i].end;
		if (start < pos)
			start = pos;
		memcpy(out + out_len, s + pos, start - pos);
		out_len += start - pos;
		memcpy(out + out_len, REDACTED, rlen);
		out_len += rlen;
		pos = end > pos ? end : pos;
	}
	memcpy(out + out_len, s + pos, len - pos);
	out[out_len + len - pos] = '\0';
	return out;
}

char *redact(const struct redactor *r, const char *s, size_t n, bool *oom)
{
	struct spans sp = {0};
	char *copy, *out = NULL;

	*oom = false;
	if (!r || !n || memchr(s, '\0', n))
		return NULL; /* NUL-embedded strings cannot be matched; none are logged */
	if (!(copy = strndup(s, n))) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < r->n_lits; i++) {
		for (const char *h = copy;
		     (h = memmem(h, n - (size_t)(h - copy), r->lits[i].s, r->lits[i].n));
		     h += r->lits[i].n)
			if (add_span(&sp, (size_t)(h - copy), (size_t)(h - copy) + r->lits[i].n) <
			    0) {
				*oom = true;
				goto out;
			}
	}
	if (builtin_spans(copy, &sp) < 0) {
		*oom = true;
		goto out;
	}
	for (size_t i = 0; i < r->n; i++) {
		if (collect(&r->rules[i], copy, &sp) < 0) {
			*oom = true;
			goto out;
		}
	}
	if (sp.n && !(out = replace_spans(copy, &sp)))
		*oom = true;
	if (out && !strcmp(out, copy)) {
		free(out); /* only [REDACTED] replaced by itself: unchanged */
		out = NULL;
	}
out:
	free(sp.v);
	free(copy);
	return out;
}

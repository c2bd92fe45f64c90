#include "redact.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

struct rule {
	regex_t re;
	int group; /* the submatch replaced: 0 for the whole match */
};

struct redactor {
	struct rule *rules;
	size_t n;
};

static const struct {
	const char *pattern;
	int group;
	int flags;
} builtin[] = {
	/* URL userinfo: scheme://user:password@host */
	{"[A-Za-z][A-Za-z0-9+.-]*://([^/@[:space:]\"]+)@", 1, 0},
	/* URL query values */
	{"[?&][^=&#?[:space:]\"]+=([^&#[:space:]\"]+)", 1, 0},
	/* credential-bearing HTTP headers */
	{"(proxy-authorization|authorization|cookie|set-cookie)[[:space:]]*[:=][[:space:]]*([^\"]+)",
	 2, REG_ICASE},
	{"(AKIA|ASIA)[0-9A-Z]{16}", 0, 0},
	{"gh[pousr]_[A-Za-z0-9]{20,}", 0, 0},
	{"github_pat_[A-Za-z0-9_]{20,}", 0, 0},
	{"glpat-[A-Za-z0-9_-]{20,}", 0, 0},
	{"xox[abposr]-[A-Za-z0-9-]{10,}", 0, 0},
	{"sk-[A-Za-z0-9_-]{20,}", 0, 0},
	{"-----BEGIN [A-Z ]*PRIVATE KEY-----", 0, 0},
	{"eyJ[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]+", 0, 0},
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
	size_t nb = sizeof(builtin) / sizeof(builtin[0]);
	struct redactor *r = calloc(1, sizeof(*r));

	if (!r || !(r->rules = calloc(nb + (extra ? extra->n : 0), sizeof(*r->rules)))) {
		free(r);
		return ab_fail(e, ENOMEM, "redactor");
	}
	for (size_t i = 0; i < nb; i++, r->n++)
		if (compile(&r->rules[i], builtin[i].pattern, builtin[i].group, builtin[i].flags, e) < 0)
			goto fail;
	for (size_t i = 0; extra && i < extra->n; i++, r->n++)
		if (compile(&r->rules[r->n], extra->v[i], 0, 0, e) < 0)
			goto fail;
	*out = r;
	return 0;
fail:
	redactor_free(r);
	return -1;
}

void redactor_free(struct redactor *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		regfree(&r->rules[i].re);
	free(r->rules);
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
	for (size_t i = 0; i < r->n; i++) {
		if (collect(&r->rules[i], copy, &sp) < 0) {
			*oom = true;
			goto out;
		}
	}
	if (sp.n && !(out = replace_spans(copy, &sp)))
		*oom = true;
out:
	free(sp.v);
	free(copy);
	return out;
}

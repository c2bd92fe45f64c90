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

/* Replaces every match of one rule in *s (NUL-terminated, malloc'd). */
static int apply_rule(const struct rule *rule, char **s)
{
	size_t off = 0;
	regmatch_t m[4];

	while ((*s)[off] && regexec(&rule->re, *s + off, 4, m, off ? REG_NOTBOL : 0) == 0) {
		regmatch_t g = m[rule->group];
		size_t len = strlen(*s), start, end, rlen = strlen(REDACTED);
		char *n;

		if (g.rm_so < 0 || g.rm_eo <= g.rm_so) {
			off += m[0].rm_eo > 0 ? (size_t)m[0].rm_eo : 1;
			continue;
		}
		start = off + (size_t)g.rm_so;
		end = off + (size_t)g.rm_eo;
		if (!(n = malloc(len - (end - start) + rlen + 1)))
			return -1;
		memcpy(n, *s, start);
		memcpy(n + start, REDACTED, rlen);
		memcpy(n + start + rlen, *s + end, len - end + 1);
		free(*s);
		*s = n;
		off = start + rlen + (m[0].rm_eo > g.rm_eo ? (size_t)(m[0].rm_eo - g.rm_eo) : 0);
	}
	return 0;
}

char *redact(const struct redactor *r, const char *s, size_t n, bool *oom)
{
	char *copy;

	*oom = false;
	if (!r || !n || memchr(s, '\0', n))
		return NULL; /* NUL-embedded strings cannot be matched; none are logged */
	if (!(copy = strndup(s, n))) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < r->n; i++) {
		if (apply_rule(&r->rules[i], &copy) < 0) {
			free(copy);
			*oom = true;
			return NULL;
		}
	}
	if (strlen(copy) == n && !memcmp(copy, s, n)) {
		free(copy);
		return NULL;
	}
	return copy;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Per-request HTTP rules: `METHOD HOST/PATH-GLOB[?QUERY-GLOB]` parsed and compiled, and the
 * deny-first decision over the canonical request-target (http_target.c). Pure: no sockets, no
 * policy. */
#include "http_rules.h"
#include "http_bytes.h"
#include "http_glob.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define RULE_MAX 4096 /* bytes of one rule's text */

/* ---- rules ---- */

static int glob_push(struct http_glob *g, uint16_t el)
{
	uint16_t *nv = realloc(g->el, (g->n + 1) * sizeof(*nv));
	if (!nv)
		return -1;
	g->el = nv;
	g->el[g->n++] = el;
	return 0;
}

static int oom(struct ab_err *e)
{
	return ab_fail(e, ENOMEM, "http rule");
}

/* '*' and '**' out of s[0..n) at *i, into g. */
static int glob_star(const char *s, size_t n, size_t *i, struct http_glob *g, const char *rule,
		     struct ab_err *e)
{
	if (*i + 1 < n && s[*i + 1] == '*') {
		if (*i + 2 < n && s[*i + 2] == '*')
			return ab_fail(e, 0, "http rule '%s': '***' is not a glob", rule),
			       ab_hint(e, "'*' matches within one path segment, '**' across "
					  "segments");
		(*i)++;
		return glob_push(g, HTTP_GLOB_STARS) < 0 ? oom(e) : 0;
	}
	return glob_push(g, HTTP_GLOB_STAR) < 0 ? oom(e) : 0;
}

/* The glob's literal bytes, the stars taken out, are UTF-8 (as a canonical path is). */
static bool glob_utf8_ok(const struct http_glob *g)
{
	unsigned char *bytes = malloc(g->n + 1);
	size_t nb = 0;
	bool ok;

	if (!bytes)
		return false;
	for (size_t i = 0; i < g->n; i++)
		if (g->el[i] < 256)
			bytes[nb++] = (unsigned char)g->el[i];
	ok = http_utf8_valid(bytes, nb);
	free(bytes);
	return ok;
}

/* The glob's elements from seg to its end are "." or "..". */
static bool glob_dot_segment(const struct http_glob *g, size_t seg)
{
	size_t len = g->n - seg;

	return (len == 1 || len == 2) && g->el[seg] == '.' && g->el[g->n - 1] == '.';
}

static int dot_segment_error(const char *rule, struct ab_err *e)
{
	ab_fail(e, 0, "http rule '%s': a '.' or '..' segment", rule);
	return ab_hint(e, "requests are compared with dot segments removed: write the path they "
			  "lead to");
}

/* The path glob, decoded as request paths are (a literal '*' is written %2A), then checked to
 * be canonical: a rule that could never match a canonical path is an error, not a silent
 * no-op. */
static int compile_path(const char *s, size_t n, struct http_glob *g, const char *rule,
			struct ab_err *e)
{
	const char *why;
	size_t seg = 0; /* index of the current segment's first element */

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int b = c;

		if (c == '*') {
			if (glob_star(s, n, &i, g, rule, e) < 0)
				return -1;
			continue;
		}
		if (c == '%' && (b = http_pct_byte(s + i, n - i)) < 0)
			return ab_fail(e, 0,
				       "http rule '%s': a '%%' not followed by two hex digits",
				       rule),
			       ab_hint(e, "write a literal '%%' as %%25");
		if (c == '%' && http_kept_escaped(b)) {
			/* %2F and %25 as the canonical path keeps them (http_target.h) */
			char esc[3];
			http_put_escape(esc, b);
			i += 2;
			if (glob_push(g, (uint16_t)esc[0]) < 0 ||
			    glob_push(g, (uint16_t)esc[1]) < 0 ||
			    glob_push(g, (uint16_t)esc[2]) < 0)
				return oom(e);
			continue;
		}
		if (c == '%')
			i += 2;
		else if (c < 0x80 && !http_target_byte_ok(c) && c != '\\')
			return ab_fail(e, 0,
				       "http rule '%s': a space, control byte or '#' in the path",
				       rule),
			       ab_hint(e, "percent-encode it (a space is %%20)");
		if ((c == '%' || c == '\\') && (why = http_decoded_byte_refused(b)))
			return ab_fail(e, 0, "http rule '%s': %s, such requests are refused", rule,
				       why),
			       ab_hint(e, "a rule can only name paths a request may have");
		if (b == '/' && c == '/') {
			size_t len = g->n - seg;
			if (g->n > 0 && len == 0)
				return ab_fail(e, 0, "http rule '%s': '//' in the path", rule),
				       ab_hint(e, "requests are compared with repeated slashes "
						  "merged: write one '/'");
			if (glob_dot_segment(g, seg))
				return dot_segment_error(rule, e);
		}
		if (glob_push(g, (uint16_t)b) < 0)
			return oom(e);
		if (b == '/' && c == '/')
			seg = g->n;
	}
	if (glob_dot_segment(g, seg))
		return dot_segment_error(rule, e);
	if (!glob_utf8_ok(g))
		return ab_fail(e, 0, "http rule '%s': the path is not UTF-8", rule),
		       ab_hint(e, "write the profile in UTF-8 or percent-encode the path's bytes");
	return 0;
}

/* The query glob: normalised as request queries are, '*' and '**' kept as globs. */
static int compile_query(const char *s, size_t n, struct http_glob *g, const char *rule,
			 struct ab_err *e)
{
	char *norm = malloc(3 * n + 1);
	const char *why;
	size_t start = 0;

	if (!norm)
		return oom(e);
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '*')
			continue;
		/* the literal run s[start..i) */
		if ((why = http_normalise_query(s + start, i - start, norm, true))) {
			free(norm);
			return ab_fail(e, 0, "http rule '%s': %s", rule, why),
			       ab_hint(e, "percent-encode it (a space is %%20, a '%%' is %%25)");
		}
		for (const char *p = norm; *p; p++)
			if (glob_push(g, (unsigned char)*p) < 0)
				return free(norm), oom(e);
		if (i < n && glob_star(s, n, &i, g, rule, e) < 0)
			return free(norm), -1;
		start = i + 1;
	}
	free(norm);
	return 0;
}

static bool method_ok(const char *m, size_t n)
{
	if (n == 1 && m[0] == '*')
		return true;
	if (n == 0 || n >= sizeof(((struct http_rule *)0)->method))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isupper((unsigned char)m[i]) && !isdigit((unsigned char)m[i]) && m[i] != '-' &&
		    m[i] != '_')
			return false;
	return true;
}

static int parse_host(const char *h, size_t n, struct http_rule *r, const char *rule,
		      struct ab_err *e)
{
	char host[300];

	if (n == 1 && h[0] == '*') {
		r->any_host = true;
		return 0;
	}
	if (n == 0 || n >= sizeof(host))
		return ab_fail(e, 0, "http rule '%s': no host before the path", rule),
		       ab_hint(e, "write METHOD HOST/PATH, e.g. GET api.github.com/repos/**, or "
				  "'*' for any host");
	memcpy(host, h, n);
	host[n] = '\0';
	if (egress_rule_parse(host, &r->host, e) < 0)
		return ab_context(e, "http rule '%s'", rule);
	if (r->host.port)
		return ab_fail(e, 0, "http rule '%s': a port in the host", rule),
		       ab_hint(e,
			       "HTTP rules apply on every port [network] allows for the host: "
			       "drop the ':%u'",
			       r->host.port);
	return 0;
}

/* path with each %2F read as '/' (repeated slashes merged) into out, as http_target.c reads a
 * request's (as_slashes); out stays empty when path writes no %2F. A '%' in a compiled path
 * always begins "%2F" or "%25" (compile_path keeps only those escaped). */
static int slash_glob(const struct http_glob *path, struct http_glob *out)
{
	bool any = false;

	for (size_t i = 0; i + 2 < path->n && !any; i++)
		any = path->el[i] == '%' && path->el[i + 1] == '2' && path->el[i + 2] == 'F';
	for (size_t i = 0; any && i < path->n; i++) {
		uint16_t el = path->el[i];
		/* %2F becomes '/'; %25 stays, its two digits following as they are */
		if (el == '%' && i + 2 < path->n && path->el[i + 1] == '2' &&
		    path->el[i + 2] == 'F')
			el = '/', i += 2;
		if (el == '/' && out->n && out->el[out->n - 1] == '/')
			continue;
		if (glob_push(out, el) < 0)
			return -1;
	}
	return 0;
}

/* The length of a leading "http://" or "https://" (any case), or 0. */
static size_t url_scheme(const char *s, size_t n)
{
	if (n > 7 && !strncasecmp(s, "http://", 7))
		return 7;
	if (n > 8 && !strncasecmp(s, "https://", 8))
		return 8;
	return 0;
}

static int parse_rule(const char *text, struct http_rule *r, struct ab_err *e)
{
	const char *m, *hp, *slash, *q, *end;
	size_t scheme;
	size_t mlen;

	for (m = text; *m == ' ' || *m == '\t'; m++)
		;
	for (end = m + strlen(m); end > m && (end[-1] == ' ' || end[-1] == '\t'); end--)
		;
	if (!(r->text = strndup(m, (size_t)(end - m))))
		return oom(e);
	if ((size_t)(end - m) > RULE_MAX)
		return ab_fail(e, 0, "http rule '%.40s...': longer than %d bytes", r->text,
			       RULE_MAX);
	mlen = strcspn(m, " \t");
	for (hp = m + mlen; hp < end && (*hp == ' ' || *hp == '\t'); hp++)
		;
	if (hp >= end)
		return ab_fail(e, 0, "http rule '%s': no HOST/PATH after the method", r->text),
		       ab_hint(e, "write METHOD HOST/PATH-GLOB, e.g. GET api.github.com/repos/**");
	if (!method_ok(m, mlen))
		return ab_fail(e, 0, "http rule '%s': '%.*s' is not a method", r->text, (int)mlen,
			       m),
		       ab_hint(e, "write an upper-case method (GET, POST; methods are "
				  "case-sensitive) or '*' for any");
	memcpy(r->method, m, mlen);
	r->method[mlen] = '\0';
	if ((size_t)(end - hp) != strcspn(hp, " \t"))
		return ab_fail(e, 0, "http rule '%s': a blank inside HOST/PATH", r->text),
		       ab_hint(e, "write one METHOD and one HOST/PATH-GLOB; a space in a path "
				  "is %%20");
	if ((scheme = url_scheme(hp, (size_t)(end - hp))))
		return ab_fail(e, 0, "http rule '%s': a URL, not HOST/PATH", r->text),
		       ab_hint(e, "drop the scheme: %.*s %.*s (a rule covers http and https alike)",
			       (int)mlen, m, (int)(end - hp - (ptrdiff_t)scheme), hp + scheme);
	if (!(slash = memchr(hp, '/', (size_t)(end - hp))))
		return ab_fail(e, 0, "http rule '%s': no path", r->text),
		       ab_hint(e, "write HOST/PATH-GLOB: %.*s/** for every path", (int)(end - hp),
			       hp);
	if (parse_host(hp, (size_t)(slash - hp), r, r->text, e) < 0)
		return -1;
	q = memchr(slash, '?', (size_t)(end - slash));
	if (compile_path(slash, (size_t)((q ? q : end) - slash), &r->path, r->text, e) < 0)
		return -1;
	if (slash_glob(&r->path, &r->slashed) < 0)
		return oom(e);
	r->has_query = q != NULL;
	if (q && compile_query(q + 1, (size_t)(end - q - 1), &r->query, r->text, e) < 0)
		return -1;
	return 0;
}

static void rule_free(struct http_rule *r)
{
	free(r->path.el);
	free(r->slashed.el);
	free(r->query.el);
	free(r->text);
	free(r->by);
}

int http_rules_add(struct http_rules *rs, bool deny, const char *text, struct ab_err *e)
{
	struct http_rule r = {.deny = deny}, *nv;

	if (parse_rule(text, &r, e) < 0) {
		rule_free(&r);
		return -1;
	}
	if (!(nv = realloc(rs->v, (rs->n + 1) * sizeof(*nv)))) {
		rule_free(&r);
		return oom(e);
	}
	rs->v = nv;
	rs->v[rs->n++] = r;
	return 0;
}

void http_rules_free(struct http_rules *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		rule_free(&rs->v[i]);
	free(rs->v);
	rs->v = NULL;
	rs->n = 0;
}

char *http_rules_take(struct http_rules *rs, size_t i)
{
	char *text = rs->v[i].text;

	rs->v[i].text = NULL;
	rule_free(&rs->v[i]);
	memmove(&rs->v[i], &rs->v[i + 1], (rs->n - i - 1) * sizeof(*rs->v));
	rs->n--;
	return text;
}

bool http_rules_has(const struct http_rules *rs, bool deny, const char *text)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].deny == deny && !strcmp(rs->v[i].text, text))
			return true;
	return false;
}

static int glob_copy(struct http_glob *to, const struct http_glob *from)
{
	to->n = from->n;
	to->el = NULL;
	if (!from->n)
		return 0;
	if (!(to->el = malloc(from->n * sizeof(*to->el))))
		return -1;
	memcpy(to->el, from->el, from->n * sizeof(*to->el));
	return 0;
}

int http_rules_copy(struct http_rules *rs, const struct http_rule *r, const char *by)
{
	struct http_rule c = *r, *nv;
	bool ok;

	c.path.el = c.slashed.el = c.query.el = NULL;
	c.text = c.by = NULL;
	ok = glob_copy(&c.path, &r->path) == 0 && glob_copy(&c.slashed, &r->slashed) == 0 &&
	     glob_copy(&c.query, &r->query) == 0 && (c.text = strdup(r->text)) &&
	     (!by || (c.by = strdup(by)));
	c.implied = by != NULL;
	if (!ok || !(nv = realloc(rs->v, (rs->n + 1) * sizeof(*nv)))) {
		rule_free(&c);
		return -1;
	}
	rs->v = nv;
	rs->v[rs->n++] = c;
	return 0;
}

int http_rules_move(struct http_rules *to, struct http_rules *from)
{
	struct http_rule *nv;

	if (!from->n)
		return 0;
	if (!(nv = realloc(to->v, (to->n + from->n) * sizeof(*nv))))
		return -1;
	to->v = nv;
	memcpy(to->v + to->n, from->v, from->n * sizeof(*nv));
	to->n += from->n;
	free(from->v);
	from->v = NULL;
	from->n = 0;
	return 0;
}

/* ---- matching ---- */

struct req_host {
	char name[256];
	int family; /* AF_INET/AF_INET6 when the host is an address literal */
	uint8_t addr[16];
};

static bool req_host_parse(const char *host, struct req_host *h)
{
	size_t n = strlen(host);
	char buf[64];
	const char *why;

	h->family = 0;
	if (n > 2 && n < sizeof(buf) && host[0] == '[' && host[n - 1] == ']') {
		memcpy(buf, host + 1, n - 2);
		buf[n - 2] = '\0';
		h->family = AF_INET6;
		return inet_pton(AF_INET6, buf, h->addr) == 1;
	}
	if (inet_pton(AF_INET, host, h->addr) == 1)
		h->family = AF_INET;
	else if (inet_pton(AF_INET6, host, h->addr) == 1)
		h->family = AF_INET6;
	return h->family || egress_host_name(host, h->name, &why);
}

static bool host_match(const struct http_rule *r, const struct req_host *h)
{
	size_t n, hn;

	if (r->any_host)
		return true;
	if (r->host.kind == RULE_ADDRESS)
		return h->family == r->host.family &&
		       !memcmp(h->addr, r->host.addr, h->family == AF_INET ? 4 : 16);
	if (h->family)
		return false;
	n = strlen(h->name), hn = strlen(r->host.host);
	if (r->host.kind != RULE_SUBDOMAINS && !strcmp(h->name, r->host.host))
		return true;
	return r->host.kind != RULE_HOST && n > hn && h->name[n - hn - 1] == '.' &&
	       !strcmp(h->name + n - hn, r->host.host);
}

/* Methods are case-sensitive (RFC 9110), but some frameworks upper-case what they read: a deny
 * rule takes the method in any case. */
static bool method_match(const struct http_rule *r, const char *method, bool fold)
{
	const char *m = r->method;

	if (!strcmp(m, "*"))
		return true;
	if (!fold)
		return !strcmp(m, method);
	for (;
	     *m && http_ascii_lower((unsigned char)*m) == http_ascii_lower((unsigned char)*method);
	     m++, method++)
		;
	return *m == *method;
}

/* The request read one way: as written (slashed false), or with each %2F read as '/' by the
 * rule and the request alike. Without a %2F on either side the two readings are one. */
static bool target_match_as(const struct http_rule *r, const struct http_target *t, unsigned how,
			    bool slashed)
{
	const struct http_glob *g = slashed && r->slashed.n ? &r->slashed : &r->path;
	const char *path = slashed && t->as_slashes ? t->as_slashes : t->path;

	if (!http_glob_match(g, path, '/', how))
		return false;
	return !r->has_query || http_glob_match(&r->query, t->query ? t->query : "", '&', how);
}

/* A deny rule covers the request if either reading matches: an origin reads it one way. */
static bool deny_target(const struct http_rule *r, const struct http_target *t, unsigned how)
{
	return target_match_as(r, t, how, false) || target_match_as(r, t, how, true);
}

/* An allow rule covers it only if both do: whichever way the origin reads it, it is named. */
static bool allow_target(const struct http_rule *r, const struct http_target *t, unsigned how)
{
	return target_match_as(r, t, how, false) && target_match_as(r, t, how, true);
}

static bool non_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return true;
	return false;
}

/* The first deny rule for this host and method that matches the request read as how says
 * (MATCH_FOLD: any letter case, as an origin may read it), or NULL; *concerned: the first deny
 * rule for this host and method, whatever its path. */
static const struct http_rule *deny_match(const struct http_rules *rs, const struct req_host *h,
					  const char *method, const struct http_target *t,
					  unsigned how, const struct http_rule **concerned)
{
	*concerned = NULL;
	for (size_t i = 0; i < rs->n; i++) {
		const struct http_rule *r = &rs->v[i];
		if (!r->deny || !host_match(r, h) || !method_match(r, method, true))
			continue;
		if (!*concerned)
			*concerned = r;
		if (deny_target(r, t, how))
			return r;
	}
	return NULL;
}

enum http_rule_tier http_rule_tier(const struct http_rule *r)
{
	return r->fallback  ? HTTP_TIER_FALLBACK
	       : r->implied ? HTTP_TIER_IMPLIED
			    : HTTP_TIER_WRITTEN;
}

/* The first allow rule naming the host of the first tier that names it, or NULL. */
static const struct http_rule *naming_rule(const struct http_rules *rs, const struct req_host *h)
{
	const struct http_rule *best = NULL;

	for (size_t i = 0; i < rs->n; i++) {
		const struct http_rule *r = &rs->v[i];
		if (!r->deny && host_match(r, h) &&
		    (!best || http_rule_tier(r) < http_rule_tier(best)))
			best = r;
	}
	return best;
}

/* Whether r is an allow rule naming the host in the tier of naming (its naming_rule). */
static bool deciding(const struct http_rule *r, const struct http_rule *naming,
		     const struct req_host *h)
{
	return !r->deny && naming && http_rule_tier(r) == http_rule_tier(naming) &&
	       host_match(r, h);
}

/* The first allow rule of the deciding tier matching the request strictly (how 0), or naming
 * every non-ASCII byte of its path (MATCH_NAMED); *naming: the first rule of that tier, NULL when
 * no allow rule names the host. */
static const struct http_rule *allow_match(const struct http_rules *rs, const struct req_host *h,
					   const char *method, const struct http_target *t,
					   unsigned how, const struct http_rule **naming)
{
	*naming = naming_rule(rs, h);
	for (size_t i = 0; *naming && i < rs->n; i++) {
		const struct http_rule *r = &rs->v[i];
		if (deciding(r, *naming, h) && method_match(r, method, false) &&
		    allow_target(r, t, how))
			return r;
	}
	return NULL;
}

enum http_verdict http_rules_decide_why(const struct http_rules *rs, const char *method,
					const char *host, const struct http_target *t,
					const char **rule, const char **why)
{
	const struct http_rule *r, *concerned, *naming;
	struct req_host h;

	*rule = *why = NULL;
	if (rs->n == 0)
		return HTTP_PASS;
	if (!req_host_parse(host, &h)) {
		*rule = HTTP_RULES_BAD_HOST;
		return HTTP_DENY;
	}
	if ((r = deny_match(rs, &h, method, t, MATCH_FOLD, &concerned))) {
		*rule = r->text;
		if (!target_match_as(r, t, MATCH_FOLD, false))
			*why = HTTP_RULES_WHY_SLASH;
		else if (!method_match(r, method, false) || !target_match_as(r, t, 0, false))
			*why = HTTP_RULES_WHY_CASE;
		return HTTP_DENY;
	}
	/* A letter outside ASCII may be one to the origin (fullwidth 'a', dotless i, the Kelvin
	 * sign, read as a, i, k by Unicode case folding or compatibility normalisation): a path
	 * holding one gets past the deny rules only when an allow rule writes it out. */
	if (concerned && non_ascii(t->path)) {
		if ((r = allow_match(rs, &h, method, t, MATCH_NAMED, &naming))) {
			*rule = r->text;
			return HTTP_ALLOW;
		}
		/* the rule at stake: one its letters could spell, else the first */
		r = deny_match(rs, &h, method, t, MATCH_FOLD | MATCH_WILD, &concerned);
		*rule = (r ? r : concerned)->text;
		*why = HTTP_RULES_WHY_NON_ASCII;
		return HTTP_DENY;
	}
	if ((r = allow_match(rs, &h, method, t, 0, &naming))) {
		*rule = r->text;
		return HTTP_ALLOW;
	}
	if (!naming)
		return HTTP_PASS;
	*rule = HTTP_RULES_NO_ALLOW;
	if (naming->by && http_rule_tier(naming) == HTTP_TIER_IMPLIED)
		*rule = naming->by, *why = HTTP_RULES_WHY_CREDENTIAL;
	return HTTP_DENY;
}

enum http_verdict http_rules_decide(const struct http_rules *rs, const char *method,
				    const char *host, const struct http_target *t,
				    const char **rule)
{
	const char *why;

	return http_rules_decide_why(rs, method, host, t, rule, &why);
}

/* The path as a rule with each %2F read as '/' reads it (the path itself without a %2F). */
static const struct http_glob *slashed(const struct http_rule *r)
{
	return r->slashed.n ? &r->slashed : &r->path;
}

bool http_rule_covers(const struct http_rule *outer, const struct http_rule *inner)
{
	static const uint16_t stars = HTTP_GLOB_STARS;
	const struct http_glob any = {(uint16_t *)&stars, 1};

	if (strcmp(outer->method, "*") && strcmp(outer->method, inner->method))
		return false;
	if (!outer->any_host &&
	    (inner->any_host || !egress_rule_covers(&outer->host, &inner->host)))
		return false;
	/* an allow rule reads a request strictly, and with MATCH_NAMED where a deny rule is at
	 * stake: within in both readings of both ways */
	for (unsigned how = 0; how <= MATCH_NAMED; how += MATCH_NAMED)
		if (!http_glob_within(&inner->path, &outer->path, '/', how) ||
		    !http_glob_within(slashed(inner), slashed(outer), '/', how) ||
		    (outer->has_query && !http_glob_within(inner->has_query ? &inner->query : &any,
							   &outer->query, '&', how)))
			return false;
	return true;
}

bool http_rules_cover(const struct http_rules *rs, const char *host)
{
	struct req_host h;

	if (rs->n == 0)
		return false;
	if (!req_host_parse(host, &h))
		return true; /* fail closed: intercept, and decide will deny */
	for (size_t i = 0; i < rs->n; i++)
		if (host_match(&rs->v[i], &h))
			return true;
	return false;
}

void http_rules_deciding(const struct http_rules *rs, const char *host, char *out, size_t size)
{
	const struct http_rule *naming;
	struct req_host h;
	size_t len = 0;

	if (!size)
		return;
	out[0] = '\0';
	if (!req_host_parse(host, &h) || !(naming = naming_rule(rs, &h)))
		return;
	for (size_t i = 0; i < rs->n && len < size; i++) {
		int n;
		if (!deciding(&rs->v[i], naming, &h))
			continue;
		n = snprintf(out + len, size - len, "%s%s", len ? ", " : "", rs->v[i].text);
		len = n < 0 ? size : len + (size_t)n;
	}
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Warnings about a valid profile (policy_warn.h): rules that never take effect because another
 * always decides first, globs written with syntax agentbox's globs lack, pins no rule lets
 * through. Read from the typed values the parser made (struct egress_rule, struct http_rule)
 * and from where each item was written (policy_item_at), never from the profile's text. */
#include "policy_warn.h"
#include "policy_parse.h"
#include "policy_warn_list.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress_rule.h"
#include "http_rules.h"

/* Where an item was written, as "FILE:LINE" (or the option's name) into buf. */
static const char *where(const struct origin *at, char *buf, size_t size)
{
	if (!at)
		snprintf(buf, size, "the profile");
	else if (at->line)
		snprintf(buf, size, "%s:%u", at->file, at->line);
	else
		snprintf(buf, size, "%s", at->file);
	return buf;
}

/* ---------- [network]: a deny rule that covers an allow rule ---------- */

static const struct egress_rule *first_cover(const struct egress_rule_list *l,
					     const struct egress_rule *inner, size_t *index)
{
	for (size_t i = 0; i < l->text.n; i++)
		if (egress_rule_covers(&l->v[i], inner)) {
			*index = i;
			return &l->v[i];
		}
	return NULL;
}

/* allow and grantable rules (what a session's harness may allow) alike */
static void net_shadowed(struct warn_list *w, const struct policy *p)
{
	const struct egress_rules *net = &p->net;
	const struct egress_rule_list *lists[] = {&net->allow, &net->grantable};
	const char *const keys[] = {"allow", "grantable"};
	char at[512], item[32];
	size_t d;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < lists[k]->text.n; i++) {
			if (!first_cover(&net->deny, &lists[k]->v[i], &d))
				continue;
			snprintf(item, sizeof(item), "network.%s", keys[k]);
			warn_add(w, policy_item_at(p, item, lists[k]->text.v[i]),
				 "[network] %s = %s never takes effect: deny = %s (%s) refuses "
				 "every connection it allows, and deny rules are read first; fix: "
				 "drop one of the two, or narrow the deny",
				 keys[k], lists[k]->text.v[i], net->deny.text.v[d],
				 where(policy_item_at(p, "network.deny", net->deny.text.v[d]), at,
				       sizeof(at)));
		}
}

/* The deny rules that refuse host at both 80 and 443, the ports an [http] rule or a credential
 * needs (policy_rules.c); false when one of them is left open. */
static bool web_denied(const struct egress_rules *net, const struct egress_rule *host, size_t *d80,
		       size_t *d443)
{
	struct egress_rule h80 = *host, h443 = *host;

	h80.port = 80;
	h443.port = 443;
	return first_cover(&net->deny, &h80, d80) && first_cover(&net->deny, &h443, d443);
}

/* "deny = A (FILE:LINE)", and " and deny = B (FILE:LINE)" when the two ports differ */
static const char *denials(const struct policy *p, size_t d80, size_t d443, char *buf, size_t size)
{
	const struct strv *t = &p->net.deny.text;
	char a[512], b[512];

	where(policy_item_at(p, "network.deny", t->v[d80]), a, sizeof(a));
	where(policy_item_at(p, "network.deny", t->v[d443]), b, sizeof(b));
	if (d80 == d443)
		snprintf(buf, size, "[network] deny = %s (%s)", t->v[d80], a);
	else
		snprintf(buf, size, "[network] deny = %s (%s) and deny = %s (%s)", t->v[d80], a,
			 t->v[d443], b);
	return buf;
}

/* An [http] allow rule, or a credential's host, whose connections [network] deny refuses. */
static void web_unreachable(struct warn_list *w, const struct policy *p)
{
	const struct http_rules *rs = &p->net.http;
	char why[1200];
	size_t d80, d443;

	for (size_t i = 0; i < rs->n; i++) {
		const struct http_rule *r = &rs->v[i];
		if (r->deny || r->implied || r->any_host ||
		    !web_denied(&p->net, &r->host, &d80, &d443))
			continue;
		warn_add(
		    w, policy_item_at(p, "http.allow", r->text),
		    "[http] allow = %s never takes effect: %s refuses the connections it needs "
		    "(ports 80 and 443); fix: drop one of the two, or narrow the deny",
		    r->text, denials(p, d80, d443, why, sizeof(why)));
	}
	for (size_t c = 0; c < p->n_creds; c++) {
		const struct policy_credential *pc = &p->creds[c];
		char key[64];
		snprintf(key, sizeof(key), "credential %s.hosts", pc->name);
		for (size_t k = 0; k < pc->hosts.text.n; k++) {
			if (!web_denied(&p->net, &pc->hosts.v[k], &d80, &d443))
				continue;
			warn_add(
			    w, policy_item_at(p, key, pc->hosts.text.v[k]),
			    "[credential %s] hosts = %s: %s refuses every connection to it, so the "
			    "credential is never sent there; fix: drop the host, or narrow the "
			    "deny",
			    pc->name, pc->hosts.text.v[k], denials(p, d80, d443, why, sizeof(why)));
		}
	}
}

/* ---------- [http]: a deny rule that covers an allow rule ---------- */

/* Element for element, ASCII letters in either case (deny rules read the request so). */
static bool glob_same(const struct http_glob *a, const struct http_glob *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		uint16_t x = a->el[i], y = b->el[i];
		if (x != y && (x >= 256 || y >= 256 || tolower(x) != tolower(y)))
			return false;
	}
	return true;
}

/* a slash and two stars: every path */
static bool glob_all(const struct http_glob *g)
{
	return g->n == 2 && g->el[0] == '/' && g->el[1] == HTTP_GLOB_STARS;
}

/* Every request allow names, deny names too: it never allows anything. */
static bool http_covers(const struct http_rule *deny, const struct http_rule *allow)
{
	if (strcmp(deny->method, "*") &&
	    (!strcmp(allow->method, "*") || strcasecmp(deny->method, allow->method)))
		return false;
	if (!deny->any_host && (allow->any_host || !egress_rule_covers(&deny->host, &allow->host)))
		return false;
	if (!glob_all(&deny->path) && !glob_same(&deny->path, &allow->path))
		return false;
	return !deny->has_query || (allow->has_query && glob_same(&deny->query, &allow->query));
}

static const struct http_rule *http_denier(const struct http_rules *rs,
					   const struct http_rule *allow)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].deny && http_covers(&rs->v[i], allow))
			return &rs->v[i];
	return NULL;
}

static void http_shadowed(struct warn_list *w, const struct policy *p)
{
	const struct http_rules *rs = &p->net.http;
	const struct http_rule *d;
	char at[512], key[64];

	for (size_t i = 0; i < rs->n; i++) {
		if (rs->v[i].deny || rs->v[i].implied || !(d = http_denier(rs, &rs->v[i])))
			continue;
		warn_add(
		    w, policy_item_at(p, "http.allow", rs->v[i].text),
		    "[http] allow = %s never takes effect: deny = %s (%s) refuses every request it "
		    "names, and deny rules are read first; fix: drop one of the two, or narrow the "
		    "deny",
		    rs->v[i].text, d->text,
		    where(policy_item_at(p, "http.deny", d->text), at, sizeof(at)));
	}
	for (size_t c = 0; c < p->n_creds; c++) {
		const struct policy_credential *pc = &p->creds[c];
		snprintf(key, sizeof(key), "credential %s.rules", pc->name);
		for (size_t i = 0; i < pc->rules.n; i++) {
			const struct http_rule *r = &pc->rules.v[i];
			if (r->implied || !(d = http_denier(rs, r)))
				continue;
			warn_add(
			    w, policy_item_at(p, key, r->text),
			    "[credential %s] rules = %s never takes effect: [http] deny = %s (%s) "
			    "refuses every request it names, so the credential is never sent "
			    "there; "
			    "fix: drop one of the two, or narrow the deny",
			    pc->name, r->text, d->text,
			    where(policy_item_at(p, "http.deny", d->text), at, sizeof(at)));
		}
	}
}

/* ---------- [network] resolve: a pin for a name no rule lets through ---------- */

/* Some rule of l lets name through, at its port (any port when it names none). */
static bool lets_through(const struct egress_rule_list *l, const struct egress_rule *name)
{
	for (size_t i = 0; i < l->text.n; i++) {
		struct egress_rule n = *name;
		if (!n.port)
			n.port = l->v[i].port;
		if (egress_rule_covers(&l->v[i], &n))
			return true;
	}
	return false;
}

static void pins_unused(struct warn_list *w, const struct policy *p)
{
	const struct egress_rules *net = &p->net;
	char at[512];
	size_t d;

	for (size_t i = 0; i < net->pins.text.n; i++) {
		const struct egress_rule *name = &net->pins.v[i].name;
		const struct origin *o = policy_item_at(p, "network.resolve", net->pins.text.v[i]);
		if (first_cover(&net->deny, name, &d))
			warn_add(
			    w, o,
			    "[network] resolve = %s never takes effect: deny = %s (%s) refuses %s; "
			    "fix: drop one of the two",
			    net->pins.text.v[i], net->deny.text.v[d],
			    where(policy_item_at(p, "network.deny", net->deny.text.v[d]), at,
				  sizeof(at)),
			    name->host);
		else if (!lets_through(&net->allow, name) && !lets_through(&net->implied, name) &&
			 !lets_through(&net->grantable,
				       name)) /* a session's harness may allow it */
			warn_add(w, o,
				 "[network] resolve = %s never takes effect: no allow rule lets %s "
				 "through; fix: add allow = %s, or drop the resolve",
				 net->pins.text.v[i], name->host, name->host);
	}
}

/* ---------- globs: [...] and {a,b}, which agentbox's globs do not have ---------- */

/* A glob's elements (a compiled HTTP glob, or a string's bytes). */
struct seq {
	const uint16_t *el;
	const char *s;
	size_t n;
};

static unsigned el_at(const struct seq *q, size_t i)
{
	return q->el ? q->el[i] : (unsigned char)q->s[i];
}

/* [a-z], [!x], [^x], [[:alpha:]]: what shells and fnmatch read as a class. */
static bool class_like(const struct seq *q, size_t from, size_t to)
{
	unsigned first = el_at(q, from);

	if (first == '!' || first == '^' || first == ':')
		return true;
	for (size_t i = from; i + 2 < to; i++) {
		unsigned a = el_at(q, i), b = el_at(q, i + 2);
		if (el_at(q, i + 1) == '-' && a < 128 && b < 128 && isalnum((int)a) &&
		    isalnum((int)b) && a < b)
			return true;
	}
	return false;
}

/* The first class or {a,b} alternative in q (its start and length). A list item (stray) was
 * cut at its commas: any brace of it is one. */
static bool find_glob_syntax(const struct seq *q, bool classes, bool stray, size_t *start,
			     size_t *len)
{
	for (size_t i = 0; i < q->n; i++) {
		unsigned open = el_at(q, i), close = open == '[' ? ']' : '}';
		bool comma = false;
		size_t j;
		if (stray && (open == '{' || open == '}')) {
			*start = i;
			*len = 1;
			return true;
		}
		if ((open != '[' || !classes) && open != '{')
			continue;
		for (j = i + 1;
		     j < q->n && j - i < 128 && el_at(q, j) != close && el_at(q, j) != open; j++)
			comma |= el_at(q, j) == ',';
		if (j >= q->n || el_at(q, j) != close || j == i + 1)
			continue;
		if (open == '{' ? comma : class_like(q, i + 1, j)) {
			*start = i;
			*len = j - i + 1;
			return true;
		}
	}
	return false;
}

/* q[start, start + len) as written: stars as * and ** */
static const char *show(const struct seq *q, size_t start, size_t len, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = start; i < start + len && o + 3 < size; i++) {
		unsigned c = el_at(q, i);
		if (c == HTTP_GLOB_STARS)
			buf[o++] = '*';
		buf[o++] = c >= 256 ? '*' : (char)c;
	}
	buf[o] = '\0';
	return buf;
}

static void http_glob_syntax(struct warn_list *w, const struct policy *p, const char *key,
			     const char *section, const struct http_rule *r)
{
	const struct http_glob *globs[] = {&r->path, &r->query};
	char shown[300];
	size_t start, len;

	for (size_t g = 0; g < 2; g++) {
		struct seq q = {globs[g]->el, NULL, globs[g]->n};
		if (!find_glob_syntax(&q, true, false, &start, &len))
			continue;
		warn_add(
		    w, policy_item_at(p, key, r->text),
		    "%s = %s: '%s' is matched as those very characters, as agentbox's globs have "
		    "only * and ** (no [...] classes, no {a,b} alternatives); fix: write a rule "
		    "for "
		    "each alternative, or use *",
		    section, r->text, show(&q, start, len, shown, sizeof(shown)));
		return;
	}
}

static void rules_glob_syntax(struct warn_list *w, const struct policy *p)
{
	char key[64], section[64];

	for (size_t i = 0; i < p->net.http.n; i++) {
		const struct http_rule *r = &p->net.http.v[i];
		if (!r->implied)
			http_glob_syntax(w, p, r->deny ? "http.deny" : "http.allow",
					 r->deny ? "[http] deny" : "[http] allow", r);
	}
	for (size_t c = 0; c < p->n_creds; c++) {
		snprintf(key, sizeof(key), "credential %s.rules", p->creds[c].name);
		snprintf(section, sizeof(section), "[credential %s] rules", p->creds[c].name);
		for (size_t i = 0; i < p->creds[c].rules.n; i++)
			if (!p->creds[c].rules.v[i].implied)
				http_glob_syntax(w, p, key, section, &p->creds[c].rules.v[i]);
	}
}

/* A path is taken as written (policy_fs.c): a class or alternative in it is part of a name. */
static void fs_glob_syntax(struct warn_list *w, const struct policy *p)
{
	char shown[300];
	size_t start, len;

	for (size_t i = 0; i < p->n_fs; i++) {
		const struct fs_entry *f = &p->fs[i];
		struct seq q = {NULL, f->path, strlen(f->path)};
		if (f->kind == FS_SYMLINK || !find_glob_syntax(&q, true, true, &start, &len))
			continue;
		warn_add(
		    w, &f->at,
		    "[filesystem] %s%s = %s: '%s' is part of the name, as agentbox expands no glob "
		    "in "
		    "a path (no [...] classes, no {a,b} alternatives; a comma ends a list item)%s; "
		    "fix: list each path",
		    fs_kind_name(f->kind), f->optional ? "-try" : "", f->path,
		    show(&q, start, len, shown, sizeof(shown)),
		    f->optional ? ", and a missing -try path is skipped silently" : "");
	}
}

/* [env] globs are fnmatch(3)'s: *, ? and [...], but no {a,b}. */
static void env_glob_syntax(struct warn_list *w, const struct policy *p)
{
	const struct strv *lists[] = {&p->env_pass, &p->env_deny};
	const char *keys[] = {"env.pass", "env.deny"};
	char shown[300];
	size_t start, len;

	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++) {
			const char *g = lists[l]->v[i];
			struct seq q = {NULL, g, strlen(g)};
			if (!find_glob_syntax(&q, false, true, &start, &len))
				continue;
			warn_add(
			    w, policy_item_at(p, keys[l], g),
			    "[env] %s = %s: '%s' is matched as itself, as name globs have *, ? and "
			    "[...] but no {a,b} alternatives (a comma ends a list item); fix: list "
			    "each "
			    "name or pattern",
			    keys[l] + 4, g, show(&q, start, len, shown, sizeof(shown)));
		}
}

/* ---------- [env] and [seccomp]: an item its own deny list overrules ---------- */

static void env_overruled(struct warn_list *w, const struct policy *p)
{
	char at[512];

	for (size_t i = 0; i < p->env_pass.n; i++) {
		const char *name = p->env_pass.v[i];
		if (!strv_has(&p->env_deny, name))
			continue;
		warn_add(w, policy_item_at(p, "env.pass", name),
			 "[env] pass = %s never takes effect: deny = %s (%s) keeps it out; fix: "
			 "drop one "
			 "of the two (a token belongs in a [credential] section)",
			 name, name, where(policy_item_at(p, "env.deny", name), at, sizeof(at)));
	}
}

static void seccomp_overruled(struct warn_list *w, const struct policy *p)
{
	char at[512];

	for (size_t i = 0; i < p->seccomp_allow.n; i++) {
		const char *name = p->seccomp_allow.v[i];
		const struct origin *o = policy_item_at(p, "seccomp.allow", name);
		if (strv_has(&p->seccomp_deny, name))
			warn_add(w, o,
				 "[seccomp] allow = %s never takes effect: deny = %s (%s) refuses "
				 "it, and "
				 "deny wins; fix: drop one of the two",
				 name, name,
				 where(policy_item_at(p, "seccomp.deny", name), at, sizeof(at)));
		else if (p->seccomp_preset == SECCOMP_PRESET_NONE)
			warn_add(w, o,
				 "[seccomp] allow = %s has no effect with preset = none (%s): "
				 "there is no "
				 "preset to exempt it from; fix: drop it, or choose a preset",
				 name, where(policy_key_at(p, "seccomp.preset"), at, sizeof(at)));
	}
}

int policy_warnings(const struct policy *p, struct strv *out, struct ab_err *e)
{
	struct warn_list w = {0};

	net_shadowed(&w, p);
	web_unreachable(&w, p);
	http_shadowed(&w, p);
	pins_unused(&w, p);
	rules_glob_syntax(&w, p);
	fs_glob_syntax(&w, p);
	env_glob_syntax(&w, p);
	env_overruled(&w, p);
	seccomp_overruled(&w, p);
	return warn_list_out(&w, out, e);
}

/* ---------- the list ---------- */

void warn_add(struct warn_list *w, const struct origin *at, const char *fmt, ...)
{
	static const struct origin unknown = {"the profile", 0, UINT_MAX};
	struct warn_item *nv;
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!(nv = realloc(w->v, (w->n + 1) * sizeof(*nv)))) {
		w->oom = true;
		return;
	}
	w->v = nv;
	nv[w->n].at = at ? *at : unknown;
	if (!(nv[w->n].text = strdup(text))) {
		w->oom = true;
		return;
	}
	w->n++;
}

static bool before(const struct origin *a, const struct origin *b)
{
	return a->layer < b->layer || (a->layer == b->layer && a->line < b->line);
}

int warn_list_out(struct warn_list *w, struct strv *out, struct ab_err *e)
{
	char line[2600], at[512];
	int rc = w->oom ? -1 : 0;

	/* insertion sort: stable, and a profile's warnings are few */
	for (size_t i = 1; i < w->n; i++) {
		struct warn_item key = w->v[i];
		size_t j = i;
		for (; j > 0 && before(&key.at, &w->v[j - 1].at); j--)
			w->v[j] = w->v[j - 1];
		w->v[j] = key;
	}
	for (size_t i = 0; i < w->n; i++) {
		snprintf(line, sizeof(line), "%s: %s", where(&w->v[i].at, at, sizeof(at)),
			 w->v[i].text);
		if (rc == 0 && strv_push(out, line) < 0)
			rc = -1;
		free(w->v[i].text);
	}
	free(w->v);
	memset(w, 0, sizeof(*w));
	return rc < 0 ? ab_fail(e, ENOMEM, "the profile's warnings") : 0;
}

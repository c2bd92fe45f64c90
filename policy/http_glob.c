/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The [http] rules' globs (see http_glob.h): matched against a request's path or query, and
 * one compared with another, both over the same steps so that "within" means what matching
 * does. Pure. */
#include "http_glob.h"

#include <stdlib.h>
#include <string.h>

/* Follows the moves that consume nothing: a glob matching the empty string. Forward only, so
 * one pass suffices. */
static void closure(const struct http_glob *g, unsigned char *st)
{
	for (size_t i = 0; i < g->n; i++)
		if (st[i] && g->el[i] >= 256)
			st[i + 1] = 1;
}

unsigned http_ascii_lower(unsigned c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* One byte c of the text: the states st lead to, in next; false when there are none. */
static bool glob_step(const struct http_glob *g, const unsigned char *st, unsigned char *next,
		      unsigned c, uint16_t sep, unsigned how)
{
	bool star_ok = !(how & MATCH_NAMED) || c < 0x80, wild = how & MATCH_WILD && c >= 0xc0;
	bool any = false;

	memset(next, 0, g->n + 1);
	for (size_t i = 0; i < g->n; i++) {
		unsigned el;

		if (!st[i])
			continue;
		el = how & MATCH_FOLD ? http_ascii_lower(g->el[i]) : g->el[i];
		if (star_ok && (el == HTTP_GLOB_STARS || (el == HTTP_GLOB_STAR && c != sep)))
			next[i] = 1, any = true;
		else if (el == c || (wild && el < 256 && el != '/'))
			next[i + 1] = 1, any = true;
		/* "/" "**" "/" also matches one "/": zero segments, as in .gitignore */
		if (el == c && el == '/' && sep == '/' && i + 2 < g->n &&
		    g->el[i + 1] == HTTP_GLOB_STARS && g->el[i + 2] == '/')
			next[i + 3] = 1;
	}
	return any;
}

/* Whether the states st have matched the whole text: the glob's end, or a final "/" "**"
 * before its "/" (the bare parent). */
static bool accepts(const struct http_glob *g, const unsigned char *st, uint16_t sep)
{
	return st[g->n] || (sep == '/' && g->n >= 2 && st[g->n - 2] && g->el[g->n - 2] == '/' &&
			    g->el[g->n - 1] == HTTP_GLOB_STARS);
}

/* A set-of-states simulation: time O(glob * text), no backtracking for hostile input to
 * exploit. */
bool http_glob_match(const struct http_glob *g, const char *text, uint16_t sep, unsigned how)
{
	unsigned char *mem = calloc(2 * (g->n + 1), 1), *st = mem, *next, *tmp;
	bool any, ok;

	if (!mem) /* fail closed: a deny rule (read folded) matches, an allow rule does not */
		return how & MATCH_FOLD;
	next = st + g->n + 1;
	st[0] = 1;
	closure(g, st);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		unsigned c = how & MATCH_FOLD ? http_ascii_lower(*p) : *p;

		if (how & MATCH_WILD && (c & 0xc0) == 0x80)
			continue; /* read with its character's first byte */
		any = glob_step(g, st, next, c, sep, how);
		tmp = st, st = next, next = tmp;
		if (!any)
			break;
		closure(g, st);
	}
	ok = accepts(g, st, sep);
	free(mem);
	return ok;
}

/* ---------- one glob within another ---------- */

/* The pairs of state sets (inner's, outer's) the search may visit, and the slots of their
 * hash table (a power of two, over twice as many). */
#define WITHIN_MAX_PAIRS 512
#define WITHIN_SLOTS 1024

struct within {
	const struct http_glob *in, *out;
	size_t width; /* one pair: in->n + 1 bytes, then out->n + 1 */
	unsigned char *pairs;
	size_t n;
	uint32_t slot[WITHIN_SLOTS]; /* a pair's index + 1; 0: free */
};

static uint32_t pair_hash(const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Adds the pair p unless it was seen: 0, or -1 when the search is past its bound. */
static int visit(struct within *w, const unsigned char *p)
{
	uint32_t i = pair_hash(p, w->width) & (WITHIN_SLOTS - 1);

	for (; w->slot[i]; i = (i + 1) & (WITHIN_SLOTS - 1))
		if (!memcmp(w->pairs + (w->slot[i] - 1) * w->width, p, w->width))
			return 0;
	if (w->n == WITHIN_MAX_PAIRS)
		return -1;
	memcpy(w->pairs + w->n * w->width, p, w->width);
	w->slot[i] = (uint32_t)++w->n;
	return 0;
}

/* The bytes that tell texts apart: each literal of either glob, the separator, and one byte of
 * each class the stars treat alike (another ASCII byte, another non-ASCII one); any other byte
 * steps both globs as one of these does. Returns their count. */
static size_t alphabet(const struct http_glob *a, const struct http_glob *b, uint16_t sep,
		       unsigned *out)
{
	bool seen[256] = {false};
	size_t n = 0;
	unsigned other_low = 0, other_high = 0;

	seen[0] = true; /* a text never holds a NUL */
	seen[sep & 0xff] = true;
	out[n++] = sep;
	for (const struct http_glob *g = a; g; g = g == a ? b : NULL)
		for (size_t i = 0; i < g->n; i++)
			if (g->el[i] < 256 && !seen[g->el[i]]) {
				seen[g->el[i]] = true;
				out[n++] = g->el[i];
			}
	for (unsigned c = 1; c < 256; c++)
		if (!seen[c] && c < 0x80 && !other_low)
			other_low = c;
		else if (!seen[c] && c >= 0x80 && !other_high)
			other_high = c;
	if (other_low)
		out[n++] = other_low;
	if (other_high)
		out[n++] = other_high;
	return n;
}

static bool same_glob(const struct http_glob *a, const struct http_glob *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->el, b->el, a->n * sizeof(*a->el)));
}

/* Breadth first over the pairs of state sets both globs reach on the same text: inner within
 * outer unless some pair has inner matched and outer not. */
static bool search(struct within *w, const unsigned *syms, size_t n_syms, uint16_t sep,
		   unsigned how, unsigned char *next)
{
	const struct http_glob *in = w->in, *out = w->out;
	size_t split = in->n + 1;

	memset(next, 0, w->width);
	next[0] = next[split] = 1;
	closure(in, next);
	closure(out, next + split);
	if (visit(w, next) < 0)
		return false;
	for (size_t i = 0; i < w->n; i++) {
		const unsigned char *p = w->pairs + i * w->width;
		if (accepts(in, p, sep) && !accepts(out, p + split, sep))
			return false;
		for (size_t k = 0; k < n_syms; k++) {
			if (!glob_step(in, p, next, syms[k], sep, how))
				continue; /* inner matches nothing from here */
			closure(in, next);
			if (glob_step(out, p + split, next + split, syms[k], sep, how))
				closure(out, next + split);
			if (visit(w, next) < 0)
				return false;
		}
	}
	return true;
}

bool http_glob_within(const struct http_glob *inner, const struct http_glob *outer, uint16_t sep,
		      unsigned how)
{
	unsigned syms[2 * HTTP_GLOB_WITHIN_MAX + 3];
	struct within *w;
	unsigned char *next;
	bool ok;

	if (same_glob(inner, outer))
		return true;
	if (inner->n > HTTP_GLOB_WITHIN_MAX || outer->n > HTTP_GLOB_WITHIN_MAX ||
	    !(w = calloc(1, sizeof(*w))))
		return false;
	w->in = inner;
	w->out = outer;
	w->width = inner->n + 1 + outer->n + 1;
	w->pairs = malloc(WITHIN_MAX_PAIRS * w->width);
	next = malloc(w->width);
	ok = w->pairs && next &&
	     search(w, syms, alphabet(inner, outer, sep, syms), sep, how & MATCH_NAMED, next);
	free(next);
	free(w->pairs);
	free(w);
	return ok;
}

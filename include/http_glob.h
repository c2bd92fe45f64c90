/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The [http] rules' path and query globs (http_glob.c), compiled by http_rules.c to elements:
 * matched against a text (a set-of-states simulation, no backtracking), and compared with each
 * other (whether every text one matches the other matches too: what a rule a harness adds at
 * run time must be within, live_rules.h). Pure. */
#ifndef AGENTBOX_HTTP_GLOB_H
#define AGENTBOX_HTTP_GLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A glob compiled to elements: 0-255 a literal byte, or one of these. */
enum { HTTP_GLOB_STAR = 256, HTTP_GLOB_STARS = 257 };

struct http_glob {
	uint16_t *el;
	size_t n;
};

/* How a glob reads a text: MATCH_FOLD compares ASCII letters in any case (glob and text alike);
 * MATCH_NAMED lets the stars take ASCII bytes only, so every non-ASCII byte of the text must be
 * written in the glob; MATCH_WILD takes each non-ASCII character of the text for any one byte
 * but '/' (the ASCII letter an origin may read it as: only to name the rule at stake). */
enum { MATCH_FOLD = 1, MATCH_NAMED = 2, MATCH_WILD = 4 };

unsigned http_ascii_lower(unsigned c);

/* Whether g matches all of text: '*' stops at sep, '**' does not; a final "/" "**" also matches
 * the bare parent, and "/" "**" "/" one "/". */
bool http_glob_match(const struct http_glob *g, const char *text, uint16_t sep, unsigned how);

/* Whether every text inner matches (read as how: 0 or MATCH_NAMED) outer matches too. Exact
 * for globs of up to HTTP_GLOB_WITHIN_MAX elements within a bounded search; past either bound,
 * only an identical glob is within: false is the safe answer. */
#define HTTP_GLOB_WITHIN_MAX 256
bool http_glob_within(const struct http_glob *inner, const struct http_glob *outer, uint16_t sep,
		      unsigned how);

#endif

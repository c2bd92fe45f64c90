/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A small JSON reader for untrusted input (the MCP server's messages, policy --explain text):
 * the whole text is parsed into a tree, strictly (RFC 8259: no trailing commas, comments,
 * leading zeros, lone surrogates, strings that are not UTF-8, raw control characters in strings,
 * or text after the value),
 * with nesting bounded by JSON_READ_MAX_DEPTH and each object's members by
 * JSON_READ_MAX_MEMBERS, and duplicate keys refused (two readers must never disagree on which
 * one counts). The caller bounds the text's length; the tree is at most a few times that. */
#ifndef AGENTBOX_JSON_READ_H
#define AGENTBOX_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define JSON_READ_MAX_DEPTH 64
#define JSON_READ_MAX_MEMBERS 4096

enum jnode_type { JNODE_NULL, JNODE_BOOL, JNODE_NUMBER, JNODE_STRING, JNODE_ARRAY, JNODE_OBJECT };

struct jnode {
	enum jnode_type type;
	char *key;	/* a member of an object: its name (NUL-terminated) */
	size_t key_len; /* which may hold NULs: key_len is the real length */
	char *str;	/* JNODE_STRING: the decoded UTF-8; JNODE_NUMBER: the text */
	size_t len;
	bool b;		    /* JNODE_BOOL */
	struct jnode *kids; /* JNODE_ARRAY: the items; JNODE_OBJECT: the members */
	size_t n;
};

/* Parses text[0..len) into *out (freed with jnode_free). On error: -1, e says where and why. */
int json_read(const char *text, size_t len, struct jnode *out, struct ab_err *e);
void jnode_free(struct jnode *n);

/* The member named key of an object (NULL when n is not an object or has none). */
const struct jnode *jnode_get(const struct jnode *n, const char *key);
/* The member's string (NUL-terminated; NULL when absent or not a string, or holds a NUL). */
const char *jnode_str(const struct jnode *n, const char *key);
/* Whether n is an integer in [min, max] (no fraction or exponent); sets *v. */
bool jnode_int(const struct jnode *n, int64_t min, int64_t max, int64_t *v);
/* Whether n is a number, and its value. */
bool jnode_double(const struct jnode *n, double *v);

#endif

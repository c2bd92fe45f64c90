/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The byte classes and escapes the rules' compiler (http_rules.c) shares with the canonical
 * request-target (http_target.c, which defines them), so that a rule and a request read a byte
 * the same way. Private to policy/. */
#ifndef AGENTBOX_HTTP_BYTES_H
#define AGENTBOX_HTTP_BYTES_H

#include <stdbool.h>
#include <stddef.h>

/* Writes b as %XX (upper-case hex) at out; 3. */
size_t http_put_escape(char *out, int b);

/* Whether an escape of b stays escaped in a canonical path: %2F (an encoded '/', data within
 * a segment) and %25 (so that a literal '%' never spells one). */
bool http_kept_escaped(int b);

/* The byte a %XX at s (s[0] == '%', n bytes available) stands for, or -1. */
int http_pct_byte(const char *s, size_t n);

/* Strict UTF-8 (lib/utf8.h): no overlong forms (a lax decoder reads %C0%AE as '.'), no
 * surrogates, nothing above U+10FFFF. */
bool http_utf8_valid(const unsigned char *s, size_t n);

/* A byte that may stand unescaped in a request-target as agentbox reads it: visible ASCII but
 * '#' (a fragment is never sent) and '\' (some servers read it as '/', others not). */
bool http_target_byte_ok(unsigned char c);

/* Why a decoded byte is refused, or NULL: %5C for servers that read '\\' as '/', and a NUL,
 * which ends the path early in C-based origins. */
const char *http_decoded_byte_refused(int b);

/* A query's escapes validated; an escaped unreserved character decoded (RFC 3986 6.2.2.2: %41
 * is A), every other escape kept with upper-case hex so that %2f and %2F compare equal. Not
 * decoded further: %26 and & mean different things to the origin. out has room for 3n+1.
 * allow_utf8: raw UTF-8 bytes may stand unescaped (a rule's glob). NULL, or why it is refused. */
const char *http_normalise_query(const char *raw, size_t n, char *out, bool allow_utf8);

#endif

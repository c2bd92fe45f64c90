/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The one canonical form of a request-target the [http] rules are matched against and the
 * proxy sends upstream (policy/http_target.c). Pure. */
#ifndef AGENTBOX_HTTP_TARGET_H
#define AGENTBOX_HTTP_TARGET_H

#include <stddef.h>

/* A request-target in canonical form: path percent-decoded once, dot segments removed, repeated
 * slashes merged; query (NULL when the target has none) with its escapes normalised but not
 * decoded. Both NUL-terminated; the path holds no NUL (refused).
 *
 * Two escapes stay escaped in the path, upper-cased: %2F, an encoded '/' (data inside one
 * segment, such as npm's /@scope%2Fname, not a separator), and %25, so that a literal '%' can
 * never spell one. as_slashes is the path with each %2F read as '/' (repeated slashes merged),
 * as an origin that decodes it before routing reads it: what deny rules are matched against
 * too. NULL when the path holds no %2F. */
struct http_target {
	char *path;
	char *query;
	char *as_slashes;
};

/* Canonicalises an origin-form target (target[0..len), NUL bytes included, are the bytes from
 * the request line). -1 with *why (a static string) when the target is refused: the caller
 * answers 400. Out of memory is a refusal too ("out of memory"): fail closed. */
int http_target_canon(const char *target, size_t len, struct http_target *t, const char **why);
void http_target_free(struct http_target *t);

/* The canonical target as it must be sent upstream (so the origin sees exactly what was
 * matched): the path with every byte outside RFC 3986 pchar / '/' percent-encoded, then
 * '?query' when there is one. malloc'd; NULL when out of memory. */
char *http_target_format(const struct http_target *t);

#endif

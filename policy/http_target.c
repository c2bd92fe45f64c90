/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The canonical form of a request-target (http_target.h): the path percent-decoded once, dot
 * segments removed, slashes merged; the query's escapes normalised. Computed exactly once per
 * request, and the same form is what goes upstream (http_target_format), so the origin cannot
 * read a path other than the one the rules saw. Pure. */
#include "http_target.h"

#include "http_bytes.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int http_pct_byte(const char *s, size_t n)
{
	int hi, lo;

	if (n < 3 || (hi = hexval((unsigned char)s[1])) < 0 ||
	    (lo = hexval((unsigned char)s[2])) < 0)
		return -1;
	return hi << 4 | lo;
}

static bool unreserved(int c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

bool http_utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = s[i] < 0x80 ? 1 : utf8_decode(s + i, n - i, &cp);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

/* A byte that may stand unescaped in a request-target as agentbox reads it: visible ASCII but
 * '#' (a fragment is never sent) and '\' (some servers read it as '/', others not). */
bool http_target_byte_ok(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '#' && c != '\\';
}

/* Why a decoded byte is refused, or NULL. A %2F decoded into the path would be a separator the
 * client did not send (servers differ on whether it splits segments: /a%2F..%2Fb), %5C likewise
 * for servers that read '\' as '/', and a NUL ends the path early in C-based origins. */
const char *http_decoded_byte_refused(int b)
{
	if (b == '\\')
		return "a '\\' (or %5C) in the path is ambiguous";
	if (b == 0)
		return "an encoded NUL (%00) in the path";
	return NULL;
}

/* The path raw[0..n) percent-decoded once into out (room for n + 1). */
bool http_kept_escaped(int b)
{
	return b == '/' || b == '%';
}

size_t http_put_escape(char *out, int b)
{
	static const char hex[] = "0123456789ABCDEF";

	out[0] = '%';
	out[1] = hex[b >> 4];
	out[2] = hex[b & 15];
	return 3;
}

static const char *decode_path(const char *raw, size_t n, char *out, size_t *outlen)
{
	size_t o = 0;
	const char *why;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)raw[i];
		int b = c;

		if (c == '%') {
			if ((b = http_pct_byte(raw + i, n - i)) < 0)
				return "a '%' not followed by two hex digits";
			i += 2;
			if ((why = http_decoded_byte_refused(b)))
				return why;
			if (http_kept_escaped(b)) {
				o += http_put_escape(out + o, b);
				continue;
			}
		} else if (c == '\\') {
			return http_decoded_byte_refused(c);
		} else if (!http_target_byte_ok(c)) {
			return "a byte that is not visible ASCII in the request-target";
		}
		out[o++] = (char)b;
	}
	out[o] = '\0';
	*outlen = o;
	return http_utf8_valid((const unsigned char *)out, o) ? NULL
							      : "the decoded path is not UTF-8";
}

/* A piece between separators, '/' or %2F, that is a dot segment: "/a%2F..%2Fadmin" is
 * "/admin" to an origin that decodes %2F before it removes dot segments, and a segment to one
 * that does not. Refused rather than guessed. */
static const char *encoded_slash_dots(const char *path)
{
	const char *p = path;

	if (!strstr(path, "%2F"))
		return NULL;
	while (*p) {
		size_t len = 0;
		while (p[len] && p[len] != '/' && strncmp(p + len, "%2F", 3))
			len++;
		/* "..;" and ".;" as remove_dots refuses them: read as ".." and "." by servlet
		 * containers behind an origin that decodes the %2F */
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.') ||
		    (len > 1 && p[0] == '.' &&
		     (p[1] == ';' || (len > 2 && p[1] == '.' && p[2] == ';'))))
			return "a dot segment beside an encoded '/' (%2F) is ambiguous";
		p += len;
		p += *p == '/' ? 1 : *p ? 3 : 0;
	}
	return NULL;
}

/* The path with each %2F read as '/', repeated slashes merged. */
static char *as_slashes(const char *path)
{
	char *out = malloc(strlen(path) + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (const char *p = path; *p;) {
		char c = *p;
		if (!strncmp(p, "%2F", 3))
			c = '/', p += 3;
		else
			p++;
		if (c != '/' || o == 0 || out[o - 1] != '/')
			out[o++] = c;
	}
	out[o] = '\0';
	return out;
}
static bool is_dot_segment(const char *s, size_t n)
{
	return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/* RFC 3986 5.2.4 on a decoded path, with repeated slashes merged (nginx's default, and the only
 * reading under which a deny rule for the paths under /admin also stops the same paths written
 * //admin) and a climb above '/' refused rather than silently dropped. path is rewritten in place
 * (it only shrinks). */
static const char *remove_dots(char *path, size_t n)
{
	size_t o = 0;
	bool trailing = false;

	for (size_t i = 1; i <= n;) {
		size_t end = i, len;

		while (end < n && path[end] != '/')
			end++;
		len = end - i;
		trailing = end == n && (len == 0 || is_dot_segment(path + i, len));
		/* Servlet containers read "..;x" as "..": refused rather than guessed. */
		if (len > 1 && path[i] == '.' &&
		    (path[i + 1] == ';' || (len > 2 && path[i + 1] == '.' && path[i + 2] == ';')))
			return "a dot segment with a path parameter (..;)";
		if (len == 2 && path[i] == '.' && path[i + 1] == '.') {
			if (o == 0)
				return "the path climbs above '/'";
			while (o > 0 && path[--o] != '/')
				;
		} else if (len > 0 && !is_dot_segment(path + i, len)) {
			path[o++] = '/';
			memmove(path + o, path + i, len);
			o += len;
		}
		i = end + 1;
	}
	if (o == 0 || trailing)
		path[o++] = '/';
	path[o] = '\0';
	return NULL;
}

const char *http_normalise_query(const char *raw, size_t n, char *out, bool allow_utf8)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)raw[i];
		int b;

		if (c == '%') {
			if ((b = http_pct_byte(raw + i, n - i)) < 0)
				return "a '%' not followed by two hex digits in the query";
			i += 2;
			if (unreserved(b)) {
				out[o++] = (char)b;
				continue;
			}
		} else if (c >= 0x80 && allow_utf8) {
			b = c; /* a rule's raw UTF-8: as a client sends it, escaped */
		} else if (c <= 0x20 || c >= 0x7f || c == '#') {
			return "a byte that is not visible ASCII in the query";
		} else {
			out[o++] = (char)c;
			continue;
		}
		o += http_put_escape(out + o, b);
	}
	out[o] = '\0';
	return NULL;
}

int http_target_canon(const char *target, size_t len, struct http_target *t, const char **why)
{
	const char *q = memchr(target, '?', len);
	size_t plen = q ? (size_t)(q - target) : len, dlen = 0;

	t->path = t->query = t->as_slashes = NULL;
	if (len == 0 || target[0] != '/') {
		*why = "not an origin-form request-target (it must start with '/')";
		return -1;
	}
	/* room for each byte or escape as it came, and "/" for a path that is all dots */
	if (!(t->path = malloc(plen + 2)) || (q && !(t->query = malloc(3 * (len - plen) + 1)))) {
		*why = "out of memory";
		goto fail;
	}
	if ((*why = decode_path(target, plen, t->path, &dlen)) ||
	    (*why = remove_dots(t->path, dlen)) || (*why = encoded_slash_dots(t->path)))
		goto fail;
	if (strstr(t->path, "%2F") && !(t->as_slashes = as_slashes(t->path))) {
		*why = "out of memory";
		goto fail;
	}
	if (q && (*why = http_normalise_query(q + 1, len - plen - 1, t->query, false)))
		goto fail;
	return 0;
fail:
	http_target_free(t);
	return -1;
}

void http_target_free(struct http_target *t)
{
	free(t->path);
	free(t->query);
	free(t->as_slashes);
	t->path = t->query = t->as_slashes = NULL;
}

/* What may go upstream unescaped: unreserved, '/', and the pchar delimiters but ';', which
 * servlet containers take for a path parameter ("/admin;x" is "/admin" to them): sent as %3B
 * it is the literal path the rules matched. */
static bool path_byte_plain(unsigned char c)
{
	return unreserved(c) || (c && strchr("/:@!$&'()*+,=", c));
}

char *http_target_format(const struct http_target *t)
{
	size_t n = strlen(t->path), qn = t->query ? strlen(t->query) + 1 : 0, o = 0;
	char *out = malloc(3 * n + qn + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t->path[i];
		if (path_byte_plain(c) || c == '%') { /* '%': an escape kept as it is */
			out[o++] = (char)c;
		} else {
			o += http_put_escape(out + o, c);
		}
	}
	if (t->query) {
		out[o++] = '?';
		memcpy(out + o, t->query, qn - 1);
		o += qn - 1;
	}
	out[o] = '\0';
	return out;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Safe text for people (see include/printable.h). */
#include "printable.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "utf8.h"

/* The length of the valid UTF-8 sequence at s that may pass as it is, or 0 when its first byte
 * must be escaped: malformed, overlong, a surrogate, past U+10FFFF, a C1 control, or a
 * bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069). In a line of
 * agentbox's own (printable_line), the backslash and the tab pass. */
static size_t passing_utf8(const unsigned char *s, bool line)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return (s[0] >= 0x20 && s[0] != 0x7f && (s[0] != '\\' || line)) ||
		       (line && s[0] == '\t');
	/* the terminating NUL ends a cut sequence, as a missing byte would */
	len = utf8_decode(s, strnlen((const char *)s, 4), &cp);
	if (!len || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return len;
}

static size_t escape(const char *s, char *out, size_t size, bool line)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t need = 0, w = 0;
	bool full = size == 0;

	while (*p) {
		size_t n = passing_utf8(p, line);
		char esc[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};
		size_t len = n ? n : sizeof(esc);
		/* once a piece does not fit, nothing after it is written either */
		if (!full && w + len < size) {
			memcpy(out + w, n ? (const char *)p : esc, len);
			w += len;
		} else {
			full = true;
		}
		need += len;
		p += n ? n : 1;
	}
	if (size)
		out[w] = '\0';
	return need;
}

size_t printable(const char *s, char *out, size_t size)
{
	return escape(s, out, size, false);
}

size_t printable_line(const char *s, char *out, size_t size)
{
	return escape(s, out, size, true);
}

void print_printable(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char piece[256], buf[sizeof(piece) * 4];

	/* in pieces of whole sequences, each escaped at most four times its size */
	while (*p) {
		size_t take = 0, n;
		while (p[take] && take < sizeof(piece) - 4) {
			n = passing_utf8(p + take, false);
			take += n ? n : 1;
		}
		memcpy(piece, p, take);
		piece[take] = '\0';
		printable(piece, buf, sizeof(buf));
		fputs(buf, f);
		p += take;
	}
}

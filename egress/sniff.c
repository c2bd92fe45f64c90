/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "sniff.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http_proxy.h"

/* ---------- what a captured connection's first bytes name ---------- */

const char *sniff_proto_name(enum sniff_proto proto)
{
	switch (proto) {
	case SNIFF_TLS:
		return "tls";
	case SNIFF_HTTP:
		return "http";
	case SNIFF_OTHER:
		break;
	}
	return "other";
}

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* A ClientHello's server_name, walked with every length checked against what holds it. */
static enum parse_result sniff_tls(const unsigned char *b, size_t len, struct sniff *s)
{
	size_t rec, hs, at, end, ext_end;

	s->proto = SNIFF_TLS;
	if (len < 5)
		return PARSE_MORE;
	rec = get16(b + 3);
	if (b[1] != 3 || rec < 4 || rec > 16384)
		return s->proto = SNIFF_OTHER, PARSE_DONE;
	if (len < 5 + rec)
		return PARSE_MORE;
	/* one ClientHello within this record; one split over records cannot be checked, so it
	 * counts as unreadable */
	hs = (size_t)b[6] << 16 | get16(b + 7);
	if (b[5] != 1 || hs > rec - 4)
		return s->odd = true, PARSE_DONE;
	end = 9 + hs;
	at = 9 + 2 + 32;			      /* version, random */
	if (at >= end || (at += 1 + b[at]) + 2 > end) /* session id */
		return s->odd = true, PARSE_DONE;
	if ((at += 2 + get16(b + at)) >= end || (at += 1 + b[at]) > end) /* suites, comp */
		return s->odd = true, PARSE_DONE;
	if (at == end) /* no extensions at all, so no name */
		return PARSE_DONE;
	if (at + 2 > end)
		return s->odd = true, PARSE_DONE;
	ext_end = at + 2 + get16(b + at);
	if (ext_end > end)
		return s->odd = true, PARSE_DONE;
	for (at += 2; at + 4 <= ext_end; at += 4 + get16(b + at + 2)) {
		size_t el = get16(b + at + 2), p = at + 4, nl;
		if (p + el > ext_end)
			return s->odd = true, PARSE_DONE;
		if (get16(b + at) != 0) /* server_name */
			continue;
		/* list length, then the first entry: type 0 (host_name), length, name */
		if (el < 5 || b[p + 2] != 0 || (nl = get16(b + p + 3)) == 0 || nl > el - 5 ||
		    nl >= sizeof(s->name))
			return s->odd = true, PARSE_DONE;
		memcpy(s->name, b + p + 5, nl);
		s->name[nl] = '\0';
		for (size_t i = 0; i < nl; i++)
			if ((unsigned char)s->name[i] <= ' ' || (unsigned char)s->name[i] >= 0x7f)
				return s->name[0] = '\0', s->odd = true, PARSE_DONE;
		return PARSE_DONE;
	}
	return PARSE_DONE;
}

/* An origin-form request's method and Host header (its port dropped). */
static enum parse_result sniff_http(const char *b, size_t len, struct sniff *s)
{
	const char *end = http_find_head_end(b, len), *sp, *line;
	unsigned port, hosts = 0;

	s->proto = SNIFF_HTTP;
	if (!end)
		return len >= EGRESS_MAX_HEAD ? (s->odd = true, PARSE_DONE) : PARSE_MORE;
	s->head_len = (size_t)(end - b);
	sp = memchr(b, ' ', (size_t)(end - b));
	if (!sp || (size_t)(sp - b) >= sizeof(s->method))
		return s->proto = SNIFF_OTHER, PARSE_DONE;
	memcpy(s->method, b, (size_t)(sp - b));
	s->method[sp - b] = '\0';
	/* a server routes on an absolute-form target rather than on Host; CONNECT and h2c's
	 * preface name a destination this check cannot follow */
	if (!strcmp(s->method, "CONNECT") || !strcmp(s->method, "PRI"))
		return s->odd = true, PARSE_DONE;
	if (sp[1] != '/' && sp[1] != '*') {
		const char *auth = sp + 1, *stop;
		if ((size_t)(end - auth) < 8 || strncasecmp(auth, "http://", 7))
			return s->odd = true, PARSE_DONE;
		auth += 7;
		stop = auth + strcspn(auth, "/ ?#\r");
		if (stop > end || !http_split_authority(auth, (size_t)(stop - auth), 80, s->name,
							sizeof(s->name), &port))
			return s->name[0] = '\0', s->odd = true, PARSE_DONE;
	}
	for (line = memchr(b, '\n', (size_t)(end - b)); line && line + 1 < end;
	     line = memchr(line + 1, '\n', (size_t)(end - line - 1))) {
		const char *v = line + 1, *eol = memchr(v, '\r', (size_t)(end - v));
		char host[256];
		if (!eol || (size_t)(eol - v) < 5 || strncasecmp(v, "host:", 5))
			continue;
		for (v += 5; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		while (eol > v && (eol[-1] == ' ' || eol[-1] == '\t'))
			eol--;
		/* a second Host, or one that differs from the target's: servers differ in which
		 * they believe, so neither can be trusted */
		if (!http_split_authority(v, (size_t)(eol - v), 80, host, sizeof(host), &port) ||
		    hosts++ > 0 || (s->name[0] && strcasecmp(host, s->name)))
			return s->name[0] = '\0', s->odd = true, PARSE_DONE;
		snprintf(s->name, sizeof(s->name), "%s", host);
	}
	/* an ambiguous body length could carry a second request the sniffer never sees */
	if (http_framing_refusal(b, s->head_len))
		return s->name[0] = '\0', s->odd = true, PARSE_DONE;
	return PARSE_DONE;
}

/* White space to a lenient server's split of a request line (Python's str.split also splits on
 * VT, FF and the separators 0x1c-0x1f). */
static bool loose_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1f);
}

static bool names_http(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i + 5 <= n; i++)
		if (!strncasecmp((const char *)b + i, "HTTP/", 5))
			return true;
	return false;
}

/* First bytes that are not a strict request line may still be one to a lenient server (Python
 * splits it on any white space and skips leading separators; Go takes any token as the method,
 * lower case or longer than 15 bytes): a token after optional separators, then white space,
 * makes the first line a candidate, awaited up to EGRESS_MAX_HEAD; if it names "HTTP/" in any
 * case it is refused (odd), so that no HTTP passes these checks unread. Anything else is another
 * protocol, decided at its first byte that no request line has there. */
static enum parse_result sniff_text(const unsigned char *buf, size_t len, struct sniff *s)
{
	const unsigned char *lf;
	size_t i = 0, tok;

	while (i < len && loose_space(buf[i]) && buf[i] != ' ' && buf[i] != '\t')
		i++;
	for (tok = i; i < len && http_token_byte(buf[i]); i++)
		;
	if (i == len)
		return len < EGRESS_MAX_HEAD ? PARSE_MORE : (s->odd = true, PARSE_DONE);
	if (i == tok || !loose_space(buf[i]))
		return PARSE_DONE; /* not a request line: other */
	lf = memchr(buf, '\n', len);
	if (!lf)
		return len < EGRESS_MAX_HEAD ? PARSE_MORE : (s->odd = true, PARSE_DONE);
	s->odd = names_http(buf, (size_t)(lf - buf));
	return PARSE_DONE;
}

enum parse_result egress_sniff_final(const unsigned char *buf, size_t len, struct sniff *s)
{
	if (egress_sniff(buf, len, s) != PARSE_MORE)
		return PARSE_DONE;
	memset(s, 0, sizeof(*s));
	s->proto = SNIFF_OTHER;
	/* a line without its end can be no more than one request, with no header to name another
	 * host: other, unless it names HTTP/ (it could be one to a lenient server) */
	s->odd = !len || buf[0] == 0x16 || memchr(buf, '\n', len) || names_http(buf, len);
	return PARSE_DONE;
}

enum parse_result egress_sniff(const unsigned char *buf, size_t len, struct sniff *s)
{
	memset(s, 0, sizeof(*s));
	s->proto = SNIFF_OTHER;
	if (len == 0)
		return PARSE_MORE;
	if (buf[0] == 0x16)
		return sniff_tls(buf, len, s);
	/* servers skip empty lines before a request: so would a request past this check */
	if (buf[0] == '\r' || buf[0] == '\n' || buf[0] == ' ' || buf[0] == '\t')
		return s->odd = true, PARSE_DONE;
	for (size_t i = 0; i < len && i < sizeof(s->method); i++) {
		if (buf[i] == ' ' && i > 0)
			return sniff_http((const char *)buf, len, s);
		if (buf[i] < 'A' || buf[i] > 'Z')
			return sniff_text(buf, len, s);
	}
	return len < sizeof(s->method) ? PARSE_MORE : sniff_text(buf, len, s);
}

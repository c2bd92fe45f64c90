/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "http_proxy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------- HTTP proxy requests ---------- */

const char *http_find_head_end(const char *buf, size_t len)
{
	for (size_t i = 3; i < len; i++)
		if (buf[i - 3] == '\r' && buf[i - 2] == '\n' && buf[i - 1] == '\r' &&
		    buf[i] == '\n')
			return buf + i + 1;
	return NULL;
}

/* host[:port] or [v6][:port]; default port when none. */
bool http_split_authority(const char *a, size_t n, unsigned defport, char *host, size_t hsize,
			  unsigned *port)
{
	const char *colon = NULL, *end = a + n;
	size_t hl;

	if (n && a[0] == '[') {
		const char *close = memchr(a, ']', n);
		if (!close)
			return false;
		if (close + 1 < end && close[1] != ':')
			return false;
		colon = close + 1 < end ? close + 1 : NULL;
		hl = (size_t)(close + 1 - a);
	} else {
		colon = memchr(a, ':', n);
		hl = colon ? (size_t)(colon - a) : n;
	}
	if (hl == 0 || hl >= hsize)
		return false;
	memcpy(host, a, hl);
	host[hl] = '\0';
	for (size_t i = 0; i < hl; i++)
		if ((unsigned char)host[i] <= ' ' || host[i] == '/' || host[i] == '@')
			return false;
	*port = defport;
	if (colon) {
		char pbuf[8];
		size_t pl = (size_t)(end - colon - 1);
		char *pe;
		unsigned long v;
		if (pl == 0 || pl >= sizeof(pbuf))
			return false;
		memcpy(pbuf, colon + 1, pl);
		pbuf[pl] = '\0';
		v = strtoul(pbuf, &pe, 10);
		if (*pe || v < 1 || v > 65535 || !isdigit((unsigned char)pbuf[0]))
			return false;
		*port = (unsigned)v;
	}
	return true;
}

/* How many header lines of the head are named name (name ends with ':'); *value, *vlen: the
 * last one's value, trimmed. */
static unsigned header_count(const char *head, const char *end, const char *name,
			     const char **value, size_t *vlen)
{
	size_t n = strlen(name);
	unsigned count = 0;

	for (const char *line = memchr(head, '\n', (size_t)(end - head)); line && line + 1 < end;
	     line = memchr(line + 1, '\n', (size_t)(end - line - 1))) {
		const char *v = line + 1, *eol = memchr(v, '\r', (size_t)(end - v));
		if (!eol || (size_t)(eol - v) < n || strncasecmp(v, name, n))
			continue;
		for (v += n; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		while (eol > v && (eol[-1] == ' ' || eol[-1] == '\t'))
			eol--;
		*value = v;
		*vlen = (size_t)(eol - v);
		count++;
	}
	return count;
}

bool http_token_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Bytes and lines a server may read otherwise than the proxy does: a bare LF or a CR that ends
 * no line (some servers end a line there, which would hide a header from these checks), obs-fold,
 * a control byte (NUL among them), or a header name that is not a token right before its ':'
 * (`Transfer-Encoding : chunked` is a smuggling shape, RFC 9112 5.1). */
static const char *line_refusal(const char *head, const char *end)
{
	bool line_start = false; /* the request line is not a header line */

	for (const char *p = head; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '\n' && (p == head || p[-1] != '\r'))
			return "a header line ends in a bare LF";
		if (c == '\r' && (p + 1 == end || p[1] != '\n'))
			return "a CR not followed by LF in the request head";
		if ((c < ' ' && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
			return "a control character in the request head";
		if (c == '\n' && p + 1 < end && (p[1] == ' ' || p[1] == '\t'))
			return "a folded header line (obs-fold)";
		if (line_start && c != '\r') {
			const char *q = p;
			while (q < end && http_token_byte((unsigned char)*q))
				q++;
			if (q == p || q == end || *q != ':')
				return "a malformed header line";
		}
		line_start = c == '\n';
	}
	return NULL;
}

const char *http_framing_refusal(const char *head, size_t head_len)
{
	const char *end = head + head_len, *v = NULL, *eol;
	size_t vlen = 0;
	unsigned cl, te;
	const char *why = line_refusal(head, end);

	if (why)
		return why;
	/* the body's length must mean one thing to every server on the way (request smuggling) */
	cl = header_count(head, end, "content-length:", &v, &vlen);
	if (cl > 1)
		return "more than one Content-Length";
	if (cl == 1 && (vlen == 0 || strspn(v, "0123456789") != vlen))
		return "a Content-Length that is not a number";
	te = header_count(head, end, "transfer-encoding:", &v, &vlen);
	if (te && cl)
		return "both Content-Length and Transfer-Encoding";
	if (te > 1 || (te == 1 && (vlen != 7 || strncasecmp(v, "chunked", 7))))
		return "a Transfer-Encoding other than one 'chunked'";
	/* RFC 9112 6.1: an HTTP/1.0 recipient does not know chunked, so the framing is faulty. The
	 * version ends a request line and starts a status line (no method starts with "HTTP/":
	 * '/' is not a token byte) */
	eol = memchr(head, '\r', head_len);
	if (te && eol && eol - head >= 8 &&
	    !memcmp(memcmp(head, "HTTP/", 5) ? eol - 8 : head, "HTTP/1.0", 8))
		return "Transfer-Encoding in an HTTP/1.0 message";
	return NULL;
}

enum parse_result http_parse_request(const char *buf, size_t len, struct http_request *req)
{
	const char *end = http_find_head_end(buf, len), *sp1, *sp2, *eol;

	memset(req, 0, sizeof(*req));
	if (!end) {
		req->why = "request head too large";
		return len >= EGRESS_MAX_HEAD ? PARSE_BAD : PARSE_MORE;
	}
	req->head_len = (size_t)(end - buf);
	req->why = "malformed request line";
	eol = memchr(buf, '\r', req->head_len);
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(req->method))
		return PARSE_BAD;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	/* the length first: the buffer need not hold 7 bytes after the second space */
	if (!sp2 || eol - sp2 != 9 || memcmp(sp2 + 1, "HTTP/1.", 7))
		return PARSE_BAD;
	memcpy(req->method, buf, (size_t)(sp1 - buf));
	for (const char *m = req->method; *m; m++)
		if (!isupper((unsigned char)*m))
			return PARSE_BAD;
	req->is_connect = !strcmp(req->method, "CONNECT");
	if (req->is_connect) {
		if (!http_split_authority(sp1 + 1, (size_t)(sp2 - sp1 - 1), 0, req->host,
					  sizeof(req->host), &req->port) ||
		    !req->port)
			return req->why = "CONNECT needs host:port", PARSE_BAD;
		return PARSE_DONE;
	}
	{
		const char *target = sp1 + 1, *auth, *slash;
		size_t tl = (size_t)(sp2 - target);
		if (tl < 8 || strncasecmp(target, "http://", 7)) {
			req->why = "only absolute http:// URLs and CONNECT are proxied";
			return PARSE_BAD;
		}
		if (tl >= sizeof(req->url))
			return req->why = "URL too long", PARSE_BAD;
		memcpy(req->url, target, tl);
		req->url[tl] = '\0';
		auth = target + 7;
		slash = memchr(auth, '/', (size_t)(sp2 - auth));
		if (!slash)
			slash = sp2;
		if (memchr(auth, '@', (size_t)(slash - auth)))
			return req->why = "credentials in the URL are not proxied", PARSE_BAD;
		if (!http_split_authority(auth, (size_t)(slash - auth), 80, req->host,
					  sizeof(req->host), &req->port))
			return req->why = "bad host in URL", PARSE_BAD;
	}
	if ((req->why = http_framing_refusal(buf, req->head_len)))
		return PARSE_BAD;
	return PARSE_DONE;
}

static bool drop_header(const char *line, size_t n)
{
	static const char *const dropped[] = {
	    "proxy-", "connection:", "keep-alive:", "upgrade:", "http2-settings:", NULL};

	for (size_t i = 0; dropped[i]; i++)
		if (n >= strlen(dropped[i]) && !strncasecmp(line, dropped[i], strlen(dropped[i])))
			return true;
	return false;
}

/* Appends a head's header lines (after its request line) less the hop-by-hop ones, then
 * "Connection: close" (with close) and the blank line; out has room for head_len + 32 more
 * bytes. */
static size_t closing_headers(const char *buf, size_t head_len, char *out, size_t len,
			      bool drop_host, bool close)
{
	const char *line = (const char *)memchr(buf, '\n', head_len) + 1, *end = buf + head_len - 2;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) + 1 : (size_t)(end - line);
		if (!drop_header(line, n) &&
		    !(drop_host && n >= 5 && !strncasecmp(line, "host:", 5))) {
			memcpy(out + len, line, n);
			len += n;
		}
		line += n;
	}
	if (!close) {
		memcpy(out + len, "\r\n", 2);
		return len + 2;
	}
	memcpy(out + len, "Connection: close\r\n\r\n", 21);
	return len + 21;
}

char *http_upstream_head(const char *buf, const struct http_request *req, const char *target,
			 size_t *out_len)
{
	const char *path = target ? target : strchr(req->url + 7, '/');
	size_t cap = req->head_len + strlen(req->url) + (target ? strlen(target) : 0) + 64, len;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	/* the server is told the host the rules allowed, whatever Host the client wrote */
	len = (size_t)snprintf(out, cap, "%s %s HTTP/1.1\r\nHost: %s", req->method,
			       path ? path : "/", req->host);
	if (req->port != 80)
		len += (size_t)snprintf(out + len, cap - len, ":%u", req->port);
	memcpy(out + len, "\r\n", 2);
	*out_len = closing_headers(buf, req->head_len, out, len + 2, true, true);
	return out;
}

static char *origin_head(const char *buf, size_t head_len, const char *target, bool close,
			 size_t *out_len)
{
	const char *eol = memchr(buf, '\n', head_len), *sp1, *sp2;
	size_t first = (size_t)(eol - buf) + 1, tl = target ? strlen(target) : 0;
	char *out = malloc(head_len + tl + 32);

	if (!out)
		return NULL;
	sp1 = memchr(buf, ' ', first);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1)) : NULL;
	if (target && sp2) { /* the request line with the target replaced */
		size_t m = (size_t)(sp1 + 1 - buf);
		memcpy(out, buf, m);
		memcpy(out + m, target, tl);
		memcpy(out + m + tl, sp2, (size_t)(eol + 1 - sp2));
		first = m + tl + (size_t)(eol + 1 - sp2);
	} else {
		memcpy(out, buf, first);
	}
	*out_len = closing_headers(buf, head_len, out, first, false, close);
	return out;
}

char *http_closing_head(const char *buf, size_t head_len, const char *target, size_t *out_len)
{
	return origin_head(buf, head_len, target, true, out_len);
}

char *http_kept_head(const char *buf, size_t head_len, const char *target, size_t *out_len)
{
	return origin_head(buf, head_len, target, false, out_len);
}

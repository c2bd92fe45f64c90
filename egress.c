#include "egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <idn2.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---------- decisions ---------- */

int egress_rules_build(const struct policy *p, struct egress_rules *out, struct ab_err *e)
{
	memset(out, 0, sizeof(*out));
	out->allow = calloc(p->net_allow.n + 1, sizeof(*out->allow));
	out->deny = calloc(p->net_deny.n + 1, sizeof(*out->deny));
	out->pins = calloc(p->net_resolve.n + 1, sizeof(*out->pins));
	if (!out->allow || !out->deny || !out->pins) {
		egress_rules_free(out);
		return ab_fail(e, ENOMEM, "egress rules");
	}
	for (size_t i = 0; i < p->net_allow.n; i++, out->n_allow++)
		if (egress_rule_parse(p->net_allow.v[i], &out->allow[i], e) < 0 ||
		    strv_push(&out->allow_text, p->net_allow.v[i]) < 0)
			goto fail;
	for (size_t i = 0; i < p->net_deny.n; i++, out->n_deny++)
		if (egress_rule_parse(p->net_deny.v[i], &out->deny[i], e) < 0 ||
		    strv_push(&out->deny_text, p->net_deny.v[i]) < 0)
			goto fail;
	for (size_t i = 0; i < p->net_resolve.n; i++, out->n_pins++)
		if (egress_pin_parse(p->net_resolve.v[i], &out->pins[i], e) < 0 ||
		    strv_push(&out->pin_text, p->net_resolve.v[i]) < 0)
			goto fail;
	return 0;
fail:
	egress_rules_free(out);
	return -1;
}

void egress_rules_free(struct egress_rules *r)
{
	free(r->allow);
	free(r->deny);
	free(r->pins);
	strv_free(&r->allow_text);
	strv_free(&r->deny_text);
	strv_free(&r->pin_text);
	memset(r, 0, sizeof(*r));
}

static bool in_prefix(const uint8_t *a, const uint8_t *net, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (memcmp(a, net, full))
		return false;
	return !rest || ((a[full] ^ net[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

/* A literal address, or NULL family when host is a name. */
static int literal(const char *host, uint8_t addr[16])
{
	char buf[64];
	size_t n = strlen(host);

	if (n >= 2 && host[0] == '[' && host[n - 1] == ']' && n - 2 < sizeof(buf)) {
		memcpy(buf, host + 1, n - 2);
		buf[n - 2] = '\0';
		return inet_pton(AF_INET6, buf, addr) == 1 ? AF_INET6 : 0;
	}
	if (inet_pton(AF_INET, host, addr) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, host, addr) == 1)
		return AF_INET6;
	return 0;
}

static bool address_match(const struct egress_rule *r, int family, const uint8_t *addr)
{
	return (r->kind == RULE_ADDRESS || r->kind == RULE_CIDR) && r->family == family &&
	       in_prefix(addr, r->addr, r->prefix);
}

static bool name_match(const struct egress_rule *r, const char *host)
{
	size_t hl = strlen(host), sl = strlen(r->host);
	bool below = hl > sl + 1 && host[hl - sl - 1] == '.' && !strcmp(host + hl - sl, r->host);

	switch (r->kind) {
	case RULE_HOST:
		return !strcmp(host, r->host);
	case RULE_SUBDOMAINS:
		return below;
	case RULE_DOMAIN:
		return below || !strcmp(host, r->host);
	default:
		return false;
	}
}

static bool rule_match(const struct egress_rule *r, const char *host, int family,
		       const uint8_t *addr, unsigned port)
{
	if (r->port && r->port != port)
		return false;
	return family ? address_match(r, family, addr) : name_match(r, host);
}

bool egress_name_allowed(const struct egress_rules *r, const char *name, const char **rule)
{
	uint8_t addr[16];

	*rule = NULL;
	if (literal(name, addr))
		return false;
	for (size_t i = 0; i < r->n_deny; i++) {
		if (!r->deny[i].port && name_match(&r->deny[i], name)) {
			*rule = r->deny_text.v[i];
			return false;
		}
	}
	for (size_t i = 0; i < r->n_allow; i++) {
		if (name_match(&r->allow[i], name)) {
			*rule = r->allow_text.v[i];
			return true;
		}
	}
	return false;
}

bool egress_decide(const struct egress_rules *r, const char *host, unsigned port,
		   const char **rule)
{
	char name[256];
	uint8_t addr[16];
	const char *why;
	int family;

	*rule = NULL;
	if (!egress_host_name(host, name, &why))
		return false;
	family = literal(name, addr);
	for (size_t i = 0; i < r->n_deny; i++) {
		if (rule_match(&r->deny[i], name, family, addr, port)) {
			*rule = r->deny_text.v[i];
			return false;
		}
	}
	for (size_t i = 0; i < r->n_allow; i++) {
		if (rule_match(&r->allow[i], name, family, addr, port)) {
			*rule = r->allow_text.v[i];
			return true;
		}
	}
	return false;
}

const struct egress_pin *egress_pinned(const struct egress_rules *r, const char *host,
				       unsigned port, const char **text)
{
	char name[256];
	const char *why;

	*text = NULL;
	if (!egress_host_name(host, name, &why))
		return NULL;
	for (size_t i = 0; i < r->n_pins; i++) {
		const struct egress_rule *n = &r->pins[i].name;
		if ((!n->port || n->port == port) && !strcmp(n->host, name)) {
			*text = r->pin_text.v[i];
			return &r->pins[i];
		}
	}
	return NULL;
}

/* Ranges an allowed name must not lead to. */
static const struct {
	uint8_t net[4];
	unsigned prefix;
	const char *why;
} v4_refused[] = {
	{{0, 0, 0, 0}, 8, "an unspecified address"},
	{{10, 0, 0, 0}, 8, "a private address"},
	{{100, 64, 0, 0}, 10, "a shared or cloud metadata address"},
	{{127, 0, 0, 0}, 8, "a loopback address"},
	{{169, 254, 0, 0}, 16, "a link-local or cloud metadata address"},
	{{172, 16, 0, 0}, 12, "a private address"},
	{{192, 0, 0, 0}, 24, "a reserved address"},
	{{192, 168, 0, 0}, 16, "a private address"},
	{{198, 18, 0, 0}, 15, "a reserved address"},
	{{224, 0, 0, 0}, 4, "a multicast address"},
	{{240, 0, 0, 0}, 4, "a reserved address"},
};

static const char *v4_refusal(const uint8_t *a)
{
	for (size_t i = 0; i < sizeof(v4_refused) / sizeof(v4_refused[0]); i++)
		if (in_prefix(a, v4_refused[i].net, v4_refused[i].prefix))
			return v4_refused[i].why;
	return NULL;
}

static const char *v6_refusal(const uint8_t *a)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const uint8_t zero[16] = {0};

	if (!memcmp(a, zero, 16))
		return "an unspecified address";
	/* IPv4 hidden in IPv6: mapped, NAT64, compatible, 6to4 */
	if (!memcmp(a, mapped, 12) || !memcmp(a, nat64, 12) || !memcmp(a, zero, 12))
		return !memcmp(a, zero, 15) && a[15] == 1 ? "a loopback address" : v4_refusal(a + 12);
	if (a[0] == 0x20 && a[1] == 0x02)
		return v4_refusal(a + 2);
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "a link-local address";
	if ((a[0] & 0xfe) == 0xfc)
		return "a private or cloud metadata address";
	if (a[0] == 0xff)
		return "a multicast address";
	return NULL;
}

const char *egress_address_denied(const struct egress_rules *r, int family, const void *addr,
				  unsigned port)
{
	for (size_t i = 0; i < r->n_deny; i++)
		if ((!r->deny[i].port || r->deny[i].port == port) &&
		    address_match(&r->deny[i], family, addr))
			return r->deny_text.v[i];
	return NULL;
}

const char *egress_address_refused(const struct egress_rules *r, int family, const void *addr,
				   unsigned port)
{
	const char *why = family == AF_INET ? v4_refusal(addr) : v6_refusal(addr);

	if (!why)
		return NULL;
	for (size_t i = 0; i < r->n_allow; i++)
		if ((!r->allow[i].port || r->allow[i].port == port) &&
		    address_match(&r->allow[i], family, addr))
			return NULL; /* an explicit address or CIDR rule grants it */
	return why;
}

/* ---------- HTTP proxy requests ---------- */

static const char *find_head_end(const char *buf, size_t len)
{
	for (size_t i = 3; i < len; i++)
		if (buf[i - 3] == '\r' && buf[i - 2] == '\n' && buf[i - 1] == '\r' && buf[i] == '\n')
			return buf + i + 1;
	return NULL;
}

/* host[:port] or [v6][:port]; default port when none. */
static bool split_authority(const char *a, size_t n, unsigned defport, char *host, size_t hsize,
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

const char *http_framing_refusal(const char *head, size_t head_len)
{
	const char *end = head + head_len, *v = NULL;
	size_t vlen = 0;
	unsigned cl, te;

	/* every line ends in CRLF, none continues the one before (obs-fold): a server that reads
	 * a bare LF or a folded line differently from another sees other headers */
	for (const char *p = head; p < end; p++) {
		if (*p == '\n' && (p == head || p[-1] != '\r'))
			return "a header line ends in a bare LF";
		if (*p == '\n' && p + 1 < end && (p[1] == ' ' || p[1] == '\t'))
			return "a folded header line (obs-fold)";
	}
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
	return NULL;
}

enum parse_result http_parse_request(const char *buf, size_t len, struct http_request *req)
{
	const char *end = find_head_end(buf, len), *sp1, *sp2, *eol;

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
		if (!split_authority(sp1 + 1, (size_t)(sp2 - sp1 - 1), 0, req->host,
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
		if (!split_authority(auth, (size_t)(slash - auth), 80, req->host, sizeof(req->host),
				     &req->port))
			return req->why = "bad host in URL", PARSE_BAD;
	}
	if ((req->why = http_framing_refusal(buf, req->head_len)))
		return PARSE_BAD;
	return PARSE_DONE;
}

/* ---------- what a captured connection's first bytes name ---------- */

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* A ClientHello's server_name, walked with every length checked against what holds it. */
static enum parse_result sniff_tls(const unsigned char *b, size_t len, struct sniff *s)
{
	size_t rec, hs, at, end, ext_end;

	s->proto = "tls";
	if (len < 5)
		return PARSE_MORE;
	rec = get16(b + 3);
	if (b[1] != 3 || rec < 4 || rec > 16384)
		return s->proto = "other", PARSE_DONE;
	if (len < 5 + rec)
		return PARSE_MORE;
	/* one ClientHello within this record; one split over records cannot be checked, so it
	 * counts as unreadable */
	hs = (size_t)b[6] << 16 | get16(b + 7);
	if (b[5] != 1 || hs > rec - 4)
		return s->odd = true, PARSE_DONE;
	end = 9 + hs;
	at = 9 + 2 + 32; /* version, random */
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
		if (el < 5 || b[p + 2] != 0 || (nl = get16(b + p + 3)) == 0 ||
		    nl > el - 5 || nl >= sizeof(s->name))
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
	const char *end = find_head_end(b, len), *sp, *line;
	unsigned port, hosts = 0;

	s->proto = "http";
	if (!end)
		return len >= EGRESS_MAX_HEAD ? (s->odd = true, PARSE_DONE) : PARSE_MORE;
	s->head_len = (size_t)(end - b);
	sp = memchr(b, ' ', (size_t)(end - b));
	if (!sp || (size_t)(sp - b) >= sizeof(s->method))
		return s->proto = "other", PARSE_DONE;
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
		if (stop > end || !split_authority(auth, (size_t)(stop - auth), 80, s->name,
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
		if (!split_authority(v, (size_t)(eol - v), 80, host, sizeof(host), &port) ||
		    hosts++ > 0 || (s->name[0] && strcasecmp(host, s->name)))
			return s->name[0] = '\0', s->odd = true, PARSE_DONE;
		snprintf(s->name, sizeof(s->name), "%s", host);
	}
	/* an ambiguous body length could carry a second request the sniffer never sees */
	if (http_framing_refusal(b, s->head_len))
		return s->name[0] = '\0', s->odd = true, PARSE_DONE;
	return PARSE_DONE;
}

enum parse_result egress_sniff(const unsigned char *buf, size_t len, struct sniff *s)
{
	memset(s, 0, sizeof(*s));
	s->proto = "other";
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
			return PARSE_DONE;
	}
	return len < sizeof(s->method) ? PARSE_MORE : PARSE_DONE;
}

static bool drop_header(const char *line, size_t n)
{
	static const char *const dropped[] = {"proxy-", "connection:", "keep-alive:", NULL};

	for (size_t i = 0; dropped[i]; i++)
		if (n >= strlen(dropped[i]) && !strncasecmp(line, dropped[i], strlen(dropped[i])))
			return true;
	return false;
}

/* Appends a head's header lines (after its request line) less the hop-by-hop ones, then
 * "Connection: close" and the blank line; out has room for head_len + 32 more bytes. */
static size_t closing_headers(const char *buf, size_t head_len, char *out, size_t len,
			      bool drop_host)
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
	memcpy(out + len, "Connection: close\r\n\r\n", 21);
	return len + 21;
}

char *http_upstream_head(const char *buf, const struct http_request *req, size_t *out_len)
{
	const char *path = strchr(req->url + 7, '/');
	size_t cap = req->head_len + strlen(req->url) + 64, len;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	/* the server is told the host the rules allowed, whatever Host the client wrote */
	len = (size_t)snprintf(out, cap, "%s %s HTTP/1.1\r\nHost: %s", req->method,
			       path ? path : "/", req->host);
	if (req->port != 80)
		len += (size_t)snprintf(out + len, cap - len, ":%u", req->port);
	memcpy(out + len, "\r\n", 2);
	*out_len = closing_headers(buf, req->head_len, out, len + 2, true);
	return out;
}

char *http_closing_head(const char *buf, size_t head_len, size_t *out_len)
{
	const char *eol = memchr(buf, '\n', head_len);
	size_t first = (size_t)(eol - buf) + 1;
	char *out = malloc(head_len + 32);

	if (!out)
		return NULL;
	memcpy(out, buf, first);
	*out_len = closing_headers(buf, head_len, out, first, false);
	return out;
}

/* ---------- SOCKS5 ---------- */

enum parse_result socks_parse_greeting(const unsigned char *buf, size_t len, size_t *used,
				       bool *no_auth)
{
	if (len < 2)
		return PARSE_MORE;
	if (buf[0] != 5 || buf[1] == 0)
		return PARSE_BAD;
	if (len < 2u + buf[1])
		return PARSE_MORE;
	*no_auth = memchr(buf + 2, 0, buf[1]) != NULL;
	*used = 2u + buf[1];
	return PARSE_DONE;
}

enum parse_result socks_parse_request(const unsigned char *buf, size_t len,
				      struct socks_request *req)
{
	size_t need;

	memset(req, 0, sizeof(*req));
	req->reply = 1; /* general failure */
	if (len < 5)
		return PARSE_MORE;
	if (buf[0] != 5 || buf[2] != 0)
		return PARSE_BAD;
	if (buf[1] != 1) {
		req->reply = 7; /* command not supported: BIND and UDP ASSOCIATE are refused */
		return PARSE_BAD;
	}
	switch (buf[3]) {
	case 1:
		need = 4 + 4 + 2;
		break;
	case 3:
		need = 4 + 1 + (size_t)buf[4] + 2;
		break;
	case 4:
		need = 4 + 16 + 2;
		break;
	default:
		req->reply = 8; /* address type not supported */
		return PARSE_BAD;
	}
	if (len < need)
		return PARSE_MORE;
	if (buf[3] == 1) {
		inet_ntop(AF_INET, buf + 4, req->host, sizeof(req->host));
	} else if (buf[3] == 4) {
		char a[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, buf + 4, a, sizeof(a));
		snprintf(req->host, sizeof(req->host), "[%s]", a);
	} else {
		if (buf[4] == 0)
			return PARSE_BAD;
		/* no control bytes into headers or the audit; bytes >= 0x80 are a Unicode name,
		 * which egress_host_name converts (or refuses, when not UTF-8) */
		for (size_t i = 0; i < buf[4]; i++)
			if (buf[5 + i] <= ' ' || buf[5 + i] == 0x7f)
				return PARSE_BAD;
		memcpy(req->host, buf + 5, buf[4]);
		req->host[buf[4]] = '\0';
	}
	req->port = (unsigned)(buf[need - 2] << 8 | buf[need - 1]);
	req->len = need;
	return req->port ? PARSE_DONE : PARSE_BAD;
}

/* ---------- the sandbox's network namespace ---------- */

int egress_prepare(const struct policy *p, struct ab_err *e)
{
	struct egress_rules r;

	if (p->net_mode != NET_PROXY)
		return 0;
	if (egress_rules_build(p, &r, e) < 0)
		return -1;
	egress_rules_free(&r);
	return 0;
}

static int listen_local(unsigned port, struct ab_err *e)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return ab_fail(e, errno, "proxy listener socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 512) < 0) {
		int err = errno;
		close(fd);
		return ab_fail(e, err, "proxy listener on 127.0.0.1:%u", port);
	}
	return fd;
}

static int loopback_up(struct ab_err *e)
{
	struct ifreq ifr = {0};
	int fd, rc = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ab_fail(e, errno, "socket for loopback setup");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		rc = ab_fail(e, errno, "cannot read loopback flags");
	} else {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			rc = ab_fail(e, errno, "cannot bring loopback up");
	}
	close(fd);
	return rc;
}

static void close_sockets(int fds[EGRESS_SOCKETS])
{
	for (int i = 0; i < EGRESS_SOCKETS; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int egress_setup_namespace(const struct policy *p, int fds[EGRESS_SOCKETS], struct ab_err *e)
{
	int missing;

	for (int i = 0; i < EGRESS_SOCKETS; i++)
		fds[i] = -1;
	if (loopback_up(e) < 0)
		return -1;
	if (p->net_mode != NET_PROXY)
		return 0;
	if ((fds[EGRESS_HTTP] = listen_local(EGRESS_HTTP_PORT, e)) < 0 ||
	    (fds[EGRESS_SOCKS] = listen_local(EGRESS_SOCKS_PORT, e)) < 0)
		goto fail;
	if (p->net_capture == CAPTURE_OFF || capture_setup(fds + EGRESS_CAPTURE, &missing, e) == 0)
		return 0;
	if (missing && p->net_capture == CAPTURE_AUTO) {
		*e = (struct ab_err){0}; /* the supervisor says so in the audit trail */
		return 0;
	}
	ab_context(e, "transparent capture");
	ab_hint(e, missing ? "this kernel cannot redirect connections in the sandbox's network "
			     "namespace (nf_tables with NAT); set [network] capture = off"
			   : "set [network] capture = off to run without it");
fail:
	close_sockets(fds);
	return -1;
}

int egress_proxy_env(int (*set)(void *ctx, const char *name, const char *value), void *ctx)
{
	static const char http[] = "http://127.0.0.1:3128", socks[] = "socks5h://127.0.0.1:1080";
	static const char no_proxy[] = "localhost,127.0.0.1,::1";
	static const char *const vars[][2] = {
		{"HTTP_PROXY", http},       {"HTTPS_PROXY", http},
		{"http_proxy", http},       {"https_proxy", http},
		{"ALL_PROXY", socks},       {"all_proxy", socks},
		{"NO_PROXY", no_proxy},     {"no_proxy", no_proxy},
		{"npm_config_proxy", http}, {"npm_config_https_proxy", http},
		{"PIP_PROXY", http},        {"YARN_HTTP_PROXY", http},
		{"YARN_HTTPS_PROXY", http}, {"NODE_USE_ENV_PROXY", "1"},
		{"JAVA_TOOL_OPTIONS", "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 "
				      "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 "
				      "-Dhttp.nonProxyHosts=localhost|127.0.0.1"},
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (set(ctx, vars[i][0], vars[i][1]) < 0)
			return -1;
	return 0;
}

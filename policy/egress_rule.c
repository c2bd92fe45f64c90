/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Egress rules as profiles write them: host names (IDN in punycode), wildcards, addresses,
 * ranges and ports, and resolve pins. Pure: no sockets, no policy. */
#include "egress_rule.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <idn2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int parse_port(const char *s, unsigned *port, struct ab_err *e)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return ab_fail(e, 0, "'%s' is not a port number (1-65535)", s);
	v = strtoul(s, &end, 10);
	if (*end || v < 1 || v > 65535)
		return ab_fail(e, 0, "'%s' is not a port number (1-65535)", s);
	*port = (unsigned)v;
	return 0;
}

static int parse_prefix(const char *s, unsigned max, unsigned *prefix, struct ab_err *e)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return ab_fail(e, 0, "'/%s' is not a prefix length (0-%u)", s, max);
	v = strtoul(s, &end, 10);
	if (*end || v > max)
		return ab_fail(e, 0, "'/%s' is not a prefix length (0-%u)", s, max);
	*prefix = (unsigned)v;
	return 0;
}

/* addr is an IP literal, optionally with /PREFIX. */
static int parse_address(char *addr, int family, struct egress_rule *r, struct ab_err *e)
{
	char *slash = strchr(addr, '/');
	unsigned max = family == AF_INET ? 32 : 128;

	if (slash) {
		*slash = '\0';
		if (parse_prefix(slash + 1, max, &r->prefix, e) < 0)
			return -1;
		r->kind = RULE_CIDR;
	} else {
		r->kind = RULE_ADDRESS;
		r->prefix = max;
	}
	if (inet_pton(family, addr, r->addr) != 1)
		return ab_fail(e, 0, "'%s' is not an IPv%d address", addr,
			       family == AF_INET ? 4 : 6);
	r->family = family;
	return 0;
}

static bool label_ok(const char *l, size_t n)
{
	if (n == 0 || n > 63 || l[0] == '-' || l[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)l[i]) && l[i] != '-' && l[i] != '_')
			return false;
	return true;
}

static bool labels_ok(const char *name)
{
	for (const char *l = name; l;) {
		const char *dot = strchr(l, '.');
		size_t n = dot ? (size_t)(dot - l) : strlen(l);
		if (!label_ok(l, n))
			return false;
		l = dot ? dot + 1 : NULL;
	}
	return true;
}

static bool ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/* A Unicode name (UTF-8, no trailing dot) to its ASCII form in out (254 bytes or more), as
 * IDNA2008 with UTS #46 non-transitional mapping has it: case folded, full-width dots and the like
 * mapped, each label punycode (xn--). The mapping, not our own lower-casing, is what makes the
 * upper- and lower-case forms of a non-ASCII letter one name; STD3 rules are left off so that '_'
 * stays allowed as in ASCII names, and the result must pass the ASCII label checks instead (a
 * mapping can yield '/'). NULL on success, else why not. in may be out. */
static const char *idn_ascii(const char *in, char *out)
{
	char *a = NULL;
	const char *why = NULL;
	int rc = idn2_to_ascii_8z(in, &a, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);

	if (rc == IDN2_ENCODING_ERROR)
		why = "not valid UTF-8";
	else if (rc != IDN2_OK)
		why = idn2_strerror(rc);
	else if (strlen(a) > 253 || !labels_ok(a))
		why = "its ASCII form is not a host name";
	else if (strspn(a, "0123456789.") == strlen(a))
		/* "1\u034f27.0.0.1" maps to 127.0.0.1 (an ignored character dropped): an address
		 * must be written as one, not reached as a name */
		why = "its ASCII form is an IPv4 address";
	else
		strcpy(out, a);
	idn2_free(a);
	return why;
}

static int parse_hostname(const char *text, char *name, struct egress_rule *r, struct ab_err *e)
{
	size_t len;
	const char *why;

	r->kind = RULE_HOST;
	if (strncmp(name, "**.", 3) == 0) {
		r->kind = RULE_DOMAIN;
		name += 3;
	} else if (strncmp(name, "*.", 2) == 0) {
		r->kind = RULE_SUBDOMAINS;
		name += 2;
	}
	len = strlen(name);
	if (len && name[len - 1] == '.')
		name[--len] = '\0';
	if (len == 0)
		return ab_fail(e, 0, "'%s' is not a host name", text);
	if (!ascii(name)) {
		if ((why = idn_ascii(name, r->host)))
			return ab_fail(e, 0, "'%s' is not an international host name: %s", text,
				       why),
			       ab_hint(e, "check the name, or write it in punycode (xn--...)");
		return 0;
	}
	if (len > 253)
		return ab_fail(e, 0, "'%s' is not a host name", text);
	for (size_t i = 0; i < len; i++)
		name[i] = (char)tolower((unsigned char)name[i]);
	if (!labels_ok(name))
		return ab_fail(e, 0, "'%s' is not a host name", text),
		       ab_hint(e, "use HOST, *.SUFFIX or **.SUFFIX, with an optional :PORT");
	memcpy(r->host, name, len + 1);
	return 0;
}

/* HOST/PATH or HOST:PORT/PATH, where HOST is a name: a '/' that is not an address's prefix
 * length, written by someone who meant a URL's path. */
static bool names_a_path(const char *text)
{
	const char *slash = strchr(text, '/');
	size_t host = strcspn(text, ":/");

	if (!slash || text[0] == '[' || strchr(text, ':') != strrchr(text, ':'))
		return false; /* none, or an IPv6 address's prefix */
	if (strspn(slash + 1, "0123456789") == strlen(slash + 1))
		return false; /* a prefix length, even after a name: the address parser says */
	for (size_t i = 0; i < host; i++)
		if (isalpha((unsigned char)text[i]) || text[i] == '*')
			return true;
	return text[host] == ':'; /* an address's port and a path; '/' first: its prefix */
}

int egress_rule_parse(const char *text, struct egress_rule *r, struct ab_err *e)
{
	char buf[300];
	char *host = buf, *colon;

	memset(r, 0, sizeof(*r));
	if (strlen(text) >= sizeof(buf) || !*text)
		return ab_fail(e, 0, "'%.40s' is not a network rule", text);
	if (strstr(text, "://"))
		return ab_fail(e, 0, "'%s' is a URL; a network rule names a host", text),
		       ab_hint(
			   e, "write the host, with a port if you like (pypi.org or pypi.org:443); "
			      "[http] rules take a method and a path");
	strcpy(buf, text);
	if (names_a_path(buf))
		return ab_fail(e, 0, "'%s' has a path; a network rule names a host", text),
		       ab_hint(e, "write the host, with a port if you like (pypi.org or "
				  "pypi.org:443); a path belongs in an [http] rule");

	if (buf[0] == '[') {
		char *close = strchr(buf, ']');
		if (!close)
			return ab_fail(e, 0, "'%s': missing ']'", text);
		*close = '\0';
		if (close[1] == ':') {
			if (parse_port(close + 2, &r->port, e) < 0)
				return -1;
		} else if (close[1] == '/') {
			/* [fd00::]/8: move the prefix inside for parse_address */
			size_t n = strlen(close + 1);
			memmove(close, close + 1, n + 1);
		} else if (close[1] && !strchr(buf, ':')) { /* [a-z].example.com */
			return ab_fail(e, 0, "'%s': brackets hold an IPv6 address", text),
			       ab_hint(e, "a host pattern has no character classes: write each "
					  "host, or *.SUFFIX for all names below SUFFIX");
		} else if (close[1]) {
			return ab_fail(e, 0, "'%s': unexpected text after ']'", text);
		}
		return parse_address(buf + 1, AF_INET6, r, e);
	}
	colon = strchr(buf, ':');
	if (colon && strchr(colon + 1, ':'))
		return parse_address(buf, AF_INET6, r, e); /* bare IPv6, no port */
	if (colon) {
		*colon = '\0';
		if (parse_port(colon + 1, &r->port, e) < 0)
			return -1;
	}
	if (strchr(host, '/') || strspn(host, "0123456789.") == strlen(host))
		return parse_address(host, AF_INET, r, e);
	return parse_hostname(text, host, r, e);
}

int egress_pin_parse(const char *text, struct egress_pin *pin, struct ab_err *e)
{
	const char *eq = strchr(text, '=');
	char name[300];

	memset(pin, 0, sizeof(*pin));
	if (!eq || (size_t)(eq - text) >= sizeof(name))
		return ab_fail(e, 0, "'%.60s' is not NAME[:PORT]=ADDRESS[:PORT]", text),
		       ab_hint(e, "e.g. resolve = pypi.org:443=127.0.0.1:8443");
	memcpy(name, text, (size_t)(eq - text));
	name[eq - text] = '\0';
	if (egress_rule_parse(name, &pin->name, e) < 0)
		return -1;
	if (pin->name.kind != RULE_HOST)
		return ab_fail(e, 0, "'%s': resolve maps one host name, not a pattern or address",
			       name),
		       ab_hint(e, "write one entry per name, e.g. pypi.org:443=127.0.0.1:8443");
	if (egress_rule_parse(eq + 1, &pin->to, e) < 0)
		return -1;
	if (pin->to.kind != RULE_ADDRESS)
		return ab_fail(e, 0, "'%s': resolve needs an IP address (bracketed for IPv6)",
			       eq + 1),
		       ab_hint(e, "pin the name to an address, e.g. mirror.example=10.0.0.5 or "
				  "mirror.example=[2001:db8::5]");
	return 0;
}

bool egress_host_name(const char *host, char name[256], const char **why)
{
	size_t n = strlen(host);

	*why = "empty or over-long host name";
	if (n == 0 || n >= 256)
		return false;
	for (size_t i = 0; i <= n; i++)
		name[i] = (char)tolower((unsigned char)host[i]);
	if (n > 1 && name[n - 1] == '.')
		name[n - 1] = '\0';
	*why = ascii(name) ? NULL : idn_ascii(name, name);
	return !*why;
}

/* name is a subdomain of suffix (not suffix itself) */
static bool below(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s + 1 && name[n - s - 1] == '.' && !strcmp(name + n - s, suffix);
}

static bool names_cover(const struct egress_rule *o, const struct egress_rule *in)
{
	bool same = !strcmp(o->host, in->host), under = below(in->host, o->host);

	switch (o->kind) {
	case RULE_HOST:
		return in->kind == RULE_HOST && same;
	case RULE_SUBDOMAINS:
		/* *.s covers a name below s, and *.t or **.t for t below s; *.s itself */
		return under || (same && in->kind == RULE_SUBDOMAINS);
	case RULE_DOMAIN:
		return same || under;
	default:
		return false;
	}
}

static bool addresses_cover(const struct egress_rule *o, const struct egress_rule *in)
{
	unsigned full = o->prefix / 8, rest = o->prefix % 8;

	if (in->family != o->family || in->prefix < o->prefix || memcmp(in->addr, o->addr, full))
		return false;
	return !rest || ((in->addr[full] ^ o->addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

bool egress_rule_covers(const struct egress_rule *outer, const struct egress_rule *inner)
{
	bool named = outer->kind <= RULE_DOMAIN, in_named = inner->kind <= RULE_DOMAIN;

	if (outer->port && outer->port != inner->port)
		return false;
	if (named != in_named)
		return false;
	return named ? names_cover(outer, inner) : addresses_cover(outer, inner);
}

/* v grows with text: one slot more than text holds after a push */
static void *grow(void *v, size_t n, size_t size)
{
	return realloc(v, (n + 1) * size);
}

int egress_rule_list_add(struct egress_rule_list *l, const struct egress_rule *r, const char *text)
{
	struct egress_rule *v = grow(l->v, l->text.n, sizeof(*v));

	if (!v)
		return -1;
	l->v = v;
	if (strv_push(&l->text, text) < 0)
		return -1;
	v[l->text.n - 1] = *r;
	return 0;
}

int egress_pin_list_add(struct egress_pin_list *l, const struct egress_pin *pin, const char *text)
{
	struct egress_pin *v = grow(l->v, l->text.n, sizeof(*v));

	if (!v)
		return -1;
	l->v = v;
	if (strv_push(&l->text, text) < 0)
		return -1;
	v[l->text.n - 1] = *pin;
	return 0;
}

char *egress_rule_list_take(struct egress_rule_list *l, size_t i)
{
	char *text = l->text.v[i];
	size_t after = l->text.n - i - 1;

	memmove(&l->v[i], &l->v[i + 1], after * sizeof(*l->v));
	/* the terminating NULL moves down with the rest */
	memmove(&l->text.v[i], &l->text.v[i + 1], (after + 1) * sizeof(*l->text.v));
	l->text.n--;
	return text;
}

void egress_rule_list_free(struct egress_rule_list *l)
{
	free(l->v);
	strv_free(&l->text);
	memset(l, 0, sizeof(*l));
}

void egress_pin_list_free(struct egress_pin_list *l)
{
	free(l->v);
	strv_free(&l->text);
	memset(l, 0, sizeof(*l));
}

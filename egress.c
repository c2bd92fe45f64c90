#include "egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		return ab_fail(e, 0, "'%s' is not an IPv%d address", addr, family == AF_INET ? 4 : 6);
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

static int parse_hostname(const char *text, char *name, struct egress_rule *r, struct ab_err *e)
{
	size_t len;

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
	if (len == 0 || len > 253)
		return ab_fail(e, 0, "'%s' is not a host name", text);
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)name[i] >= 0x80)
			return ab_fail(e, 0, "'%s' is not ASCII", text),
			       ab_hint(e, "write international names in punycode (xn--...)");
		name[i] = (char)tolower((unsigned char)name[i]);
	}
	for (const char *l = name; l;) {
		const char *dot = strchr(l, '.');
		size_t n = dot ? (size_t)(dot - l) : strlen(l);
		if (!label_ok(l, n))
			return ab_fail(e, 0, "'%s' is not a host name", text),
			       ab_hint(e, "use HOST, *.SUFFIX or **.SUFFIX, with an optional :PORT");
		l = dot ? dot + 1 : NULL;
	}
	memcpy(r->host, name, len + 1);
	return 0;
}

int egress_rule_parse(const char *text, struct egress_rule *r, struct ab_err *e)
{
	char buf[300];
	char *host = buf, *colon;

	memset(r, 0, sizeof(*r));
	if (strlen(text) >= sizeof(buf) || !*text)
		return ab_fail(e, 0, "'%.40s' is not a network rule", text);
	strcpy(buf, text);

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

/* ---------- the sandbox's network namespace ---------- */

#include <errno.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int egress_prepare(const struct policy *p, struct ab_err *e)
{
	if (p->net_mode == NET_PROXY)
		return ab_fail(e, 0, "[network] mode = proxy is not available in this build yet"),
		       ab_hint(e, "use mode = none (no network) or host (unfiltered)");
	return 0;
}

int egress_setup_namespace(const struct policy *p, struct ab_err *e)
{
	struct ifreq ifr = {0};
	int fd, rc = 0;

	(void)p;
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

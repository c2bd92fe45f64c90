/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <idn2.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---------- decisions ---------- */

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

/* What a rule is matched against: a name (family 0) or an address, at a port. */
struct egress_query {
	const char *name;
	int family;
	const uint8_t *addr;
	unsigned port;
};

static bool rule_match(const struct egress_rule *r, const struct egress_query *q)
{
	if (r->port && r->port != q->port)
		return false;
	return q->family ? address_match(r, q->family, q->addr) : name_match(r, q->name);
}

/* A name at some port: a rule with a port leaves the other ports open. */
static bool name_any_port(const struct egress_rule *r, const struct egress_query *q)
{
	return !r->port && name_match(r, q->name);
}

static bool name_some_port(const struct egress_rule *r, const struct egress_query *q)
{
	return name_match(r, q->name);
}

static bool address_at_port(const struct egress_rule *r, const struct egress_query *q)
{
	return (!r->port || r->port == q->port) && address_match(r, q->family, q->addr);
}

typedef bool rule_pred(const struct egress_rule *r, const struct egress_query *q);

/* The text of l's first rule that matches, or NULL. */
static const char *first_match(const struct egress_rule_list *l, rule_pred *match,
			       const struct egress_query *q)
{
	for (size_t i = 0; i < l->text.n; i++)
		if (match(&l->v[i], q))
			return l->text.v[i];
	return NULL;
}

/* The allow rules as written, then those the [http] rules and credentials imply. */
static const char *first_allow(const struct egress_rules *r, rule_pred *match,
			       const struct egress_query *q)
{
	const char *text = first_match(&r->allow, match, q);
	return text ? text : first_match(&r->implied, match, q);
}

bool egress_name_allowed(const struct egress_rules *r, const char *name, const char **rule)
{
	uint8_t addr[16];
	struct egress_query q = {name, 0, NULL, 0};

	*rule = NULL;
	if (literal(name, addr))
		return false;
	if ((*rule = first_match(&r->deny, name_any_port, &q)))
		return false;
	return (*rule = first_allow(r, name_some_port, &q)) != NULL;
}

bool egress_decide(const struct egress_rules *r, const char *host, unsigned port, const char **rule)
{
	char name[256];
	uint8_t addr[16];
	const char *why;
	struct egress_query q = {name, 0, addr, port};

	*rule = NULL;
	if (!egress_host_name(host, name, &why))
		return false;
	q.family = literal(name, addr);
	if ((*rule = first_match(&r->deny, rule_match, &q)))
		return false;
	return (*rule = first_allow(r, rule_match, &q)) != NULL;
}

const char *egress_grantable(const struct egress_rules *r, const char *host, unsigned port)
{
	char name[256];
	uint8_t addr[16];
	const char *why;
	struct egress_query q = {name, 0, addr, port};

	if (!egress_host_name(host, name, &why))
		return NULL;
	q.family = literal(name, addr);
	return first_match(&r->grantable, rule_match, &q);
}

const char *egress_name_grantable(const struct egress_rules *r, const char *name)
{
	uint8_t addr[16];
	struct egress_query q = {name, 0, NULL, 0};

	return literal(name, addr) ? NULL : first_match(&r->grantable, name_some_port, &q);
}

const struct egress_pin *egress_pinned(const struct egress_rules *r, const char *host,
				       unsigned port, const char **text)
{
	char name[256];
	const char *why;

	*text = NULL;
	if (!egress_host_name(host, name, &why))
		return NULL;
	for (size_t i = 0; i < r->pins.text.n; i++) {
		const struct egress_rule *n = &r->pins.v[i].name;
		if ((!n->port || n->port == port) && !strcmp(n->host, name)) {
			*text = r->pins.text.v[i];
			return &r->pins.v[i];
		}
	}
	return NULL;
}

/* Ranges an allowed name must not lead to. */
static const struct {
	uint8_t net[4];
	unsigned prefix;
	char why[40]; /* not a pointer: a table of pointers is written at every start (relocated) */
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
		return !memcmp(a, zero, 15) && a[15] == 1 ? "a loopback address"
							  : v4_refusal(a + 12);
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
	struct egress_query q = {NULL, family, addr, port};

	return first_match(&r->deny, address_at_port, &q);
}

const char *egress_address_refused(const struct egress_rules *r, int family, const void *addr,
				   unsigned port)
{
	const char *why = family == AF_INET ? v4_refusal(addr) : v6_refusal(addr);
	struct egress_query q = {NULL, family, addr, port};

	/* an explicit address or CIDR rule grants it */
	return why && !first_allow(r, address_at_port, &q) ? why : NULL;
}

/* ---------- the sandbox's network namespace ---------- */

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
	    {"HTTP_PROXY", http},
	    {"HTTPS_PROXY", http},
	    {"http_proxy", http},
	    {"https_proxy", http},
	    {"ALL_PROXY", socks},
	    {"all_proxy", socks},
	    {"NO_PROXY", no_proxy},
	    {"no_proxy", no_proxy},
	    {"npm_config_proxy", http},
	    {"npm_config_https_proxy", http},
	    {"PIP_PROXY", http},
	    {"YARN_HTTP_PROXY", http},
	    {"YARN_HTTPS_PROXY", http},
	    {"NODE_USE_ENV_PROXY", "1"},
	    {"JAVA_TOOL_OPTIONS", "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 "
				  "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 "
				  "-Dhttp.nonProxyHosts=localhost|127.0.0.1"},
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (set(ctx, vars[i][0], vars[i][1]) < 0)
			return -1;
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The egress filter: domain/address rules, and (in proxy mode) the sandbox side of the proxy that
 * enforces them. The protocols the proxy speaks are http_proxy.h, socks5.h and sniff.h. */
#ifndef AGENTBOX_EGRESS_H
#define AGENTBOX_EGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "capture.h"
#include "egress_rule.h"
#include "error.h"
#include "http_rules.h"
#include "policy.h"

/* ---------- decisions (pure) ---------- */

/* A name (or address literal) and port against the rules: deny first, then allow, no match
 * denies. Returns true when allowed; *rule is the text of the deciding rule, or NULL. */
bool egress_decide(const struct egress_rules *r, const char *host, unsigned port,
		   const char **rule);

/* Whether a name (in egress_host_name's form) is allowed at some port: what the DNS stub asks
 * before it gives the name an address. A deny rule with a port does not deny the name (it may be
 * allowed at another port); an address literal is never a name. */
bool egress_name_allowed(const struct egress_rules *r, const char *name, const char **rule);

/* The text of the first [network] grantable rule matching host at port (as egress_decide
 * matches), or NULL: a connection the rules refused that a session's harness may be asked about
 * (proxy.h, proxy_ask_hook). */
const char *egress_grantable(const struct egress_rules *r, const char *host, unsigned port);
/* The same for a name at some port (egress_host_name's form): what the DNS stub gives an
 * address while a harness is asked. */
const char *egress_name_grantable(const struct egress_rules *r, const char *name);

/* The pin for a name at a port, or NULL (DNS decides). *text is the pin as written. */
const struct egress_pin *egress_pinned(const struct egress_rules *r, const char *host,
				       unsigned port, const char **text);

/* An address a name resolved to, against the address and CIDR deny rules (a name must not
 * reach what its address is denied by). Returns the deny rule's text, or NULL. */
const char *egress_address_denied(const struct egress_rules *r, int family, const void *addr,
				  unsigned port);

/* The SSRF guard for an address a name resolved to: loopback, link-local, multicast,
 * unspecified, cloud metadata, private and shared ranges (and their IPv4-mapped forms) are
 * refused unless an address or CIDR allow rule covers them. Returns NULL when the address may
 * be dialled, else why not. */
const char *egress_address_refused(const struct egress_rules *r, int family, const void *addr,
				   unsigned port);

/* ---------- the sandbox side ---------- */

/* In the sandbox's new network namespace (pid 1): loopback up; in proxy mode also the two
 * listeners (HTTP on 127.0.0.1:EGRESS_HTTP_PORT, SOCKS5 on EGRESS_SOCKS_PORT) and, unless
 * [network] capture = off, the transparent capture's sockets (capture.h), all of whose fds go to
 * the supervisor. Unused slots are -1. With capture = auto a kernel that cannot capture leaves
 * the capture slots at -1; with capture = on it is an error. */
#define EGRESS_HTTP_PORT 3128
#define EGRESS_SOCKS_PORT 1080
enum egress_socket {
	EGRESS_HTTP,
	EGRESS_SOCKS,
	EGRESS_CAPTURE, /* the first of CAPTURE_SOCKETS, in capture.h's order */
	EGRESS_SOCKETS = EGRESS_CAPTURE + CAPTURE_SOCKETS
};
int egress_setup_namespace(const struct policy *p, int fds[EGRESS_SOCKETS], struct ab_err *e);

/* The proxy variables real tools read (HTTP_PROXY, ALL_PROXY, npm, pip, yarn, Java, ...). */
int egress_proxy_env(int (*set)(void *ctx, const char *name, const char *value), void *ctx);

#endif

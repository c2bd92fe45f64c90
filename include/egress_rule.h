/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Egress rules and resolve pins as profiles write them (egress_rule.c): parsed once, by the
 * profile parser, into the typed values the egress filter decides with. */
#ifndef AGENTBOX_EGRESS_RULE_H
#define AGENTBOX_EGRESS_RULE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "strv.h"

enum egress_rule_kind {
	RULE_HOST,	 /* example.com: that name only */
	RULE_SUBDOMAINS, /* *.example.com: subdomains, not the apex */
	RULE_DOMAIN,	 /* **.example.com: the apex and its subdomains */
	RULE_ADDRESS,	 /* 192.0.2.1, [2001:db8::1] */
	RULE_CIDR,	 /* 10.0.0.0/8, [fd00::]/8 */
};

struct egress_rule {
	enum egress_rule_kind kind;
	char host[254]; /* lower case, no trailing dot, no wildcard prefix, IDN in punycode */
	int family;	/* AF_INET or AF_INET6 for addresses and ranges */
	uint8_t addr[16];
	unsigned prefix; /* CIDR prefix length */
	unsigned port;	 /* 0: any port */
};

/* Parses HOST, *.SUFFIX, **.SUFFIX, IPv4, [IPv6], CIDR, each with an optional :PORT. */
int egress_rule_parse(const char *text, struct egress_rule *r, struct ab_err *e);

/* `resolve = NAME[:PORT]=ADDRESS[:PORT]`: NAME (at PORT, or any port) is dialled at ADDRESS
 * (and PORT) instead of what DNS says. A local mirror, or a test registry under its real name.
 * The rules still decide on NAME and the requested port. */
struct egress_pin {
	struct egress_rule name; /* RULE_HOST */
	struct egress_rule to;	 /* RULE_ADDRESS; port 0 keeps the requested port */
};

int egress_pin_parse(const char *text, struct egress_pin *pin, struct ab_err *e);

/* Whether outer matches every host and port inner matches (a rule as inner: a name rule by its
 * names, an address rule by its addresses; names and addresses never cover each other). */
bool egress_rule_covers(const struct egress_rule *outer, const struct egress_rule *inner);

/* Rules as parsed and as written, index for index (text.v[i] is v[i] as the profile wrote it,
 * for --explain and the audit). The count is text.n. */
struct egress_rule_list {
	struct egress_rule *v;
	struct strv text;
};
struct egress_pin_list {
	struct egress_pin *v;
	struct strv text;
};

/* Append r (or pin) and its text; -1 when out of memory (the list unchanged). */
int egress_rule_list_add(struct egress_rule_list *l, const struct egress_rule *r, const char *text);
int egress_pin_list_add(struct egress_pin_list *l, const struct egress_pin *pin, const char *text);
/* Takes rule i out of l, keeping the order of the rest; its text is the caller's now (what a
 * connection's event may still point to). */
char *egress_rule_list_take(struct egress_rule_list *l, size_t i);
void egress_rule_list_free(struct egress_rule_list *l);
void egress_pin_list_free(struct egress_pin_list *l);

/* A requested host (name or address literal) in the form the rules compare and the per-host
 * limits count: lower case, without a trailing dot, a Unicode (UTF-8) name in its ASCII form
 * (IDNA2008 punycode, as rules written in Unicode are kept). False, with *why, when it cannot
 * be one (e.g. invalid UTF-8). */
bool egress_host_name(const char *host, char name[256], const char **why);

#endif

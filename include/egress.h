/* The egress filter: domain/address rules, and (in proxy mode) the proxy that enforces them. */
#ifndef AGENTBOX_EGRESS_H
#define AGENTBOX_EGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "policy.h"

enum egress_rule_kind {
	RULE_HOST,        /* example.com: that name only */
	RULE_SUBDOMAINS,  /* *.example.com: subdomains, not the apex */
	RULE_DOMAIN,      /* **.example.com: the apex and its subdomains */
	RULE_ADDRESS,     /* 192.0.2.1, [2001:db8::1] */
	RULE_CIDR,        /* 10.0.0.0/8, [fd00::]/8 */
};

struct egress_rule {
	enum egress_rule_kind kind;
	char host[254];   /* lower case, no trailing dot, no wildcard prefix */
	int family;       /* AF_INET or AF_INET6 for addresses and ranges */
	uint8_t addr[16];
	unsigned prefix;  /* CIDR prefix length */
	unsigned port;    /* 0: any port */
};

/* Parses HOST, *.SUFFIX, **.SUFFIX, IPv4, [IPv6], CIDR, each with an optional :PORT. */
int egress_rule_parse(const char *text, struct egress_rule *r, struct ab_err *e);

/* In the supervisor, before the sandbox starts: refuses what this build cannot enforce. */
int egress_prepare(const struct policy *p, struct ab_err *e);

/* In the sandbox's new network namespace (pid 1): loopback up, nothing else. */
int egress_setup_namespace(const struct policy *p, struct ab_err *e);

#endif

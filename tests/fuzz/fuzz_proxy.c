/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The proxy's parsers take bytes straight from the sandboxed command: the HTTP request head
 * (and the upstream head built from it), the SOCKS5 greeting and request, the sniffer of a
 * captured connection's first bytes (TLS server name, HTTP Host), and the rule decision and SSRF
 * check on whatever host they yield. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "egress.h"
#include "http_proxy.h"
#include "sniff.h"
#include "socks5.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The rules as a profile's are read: parsed once, completed by policy_finish. */
static const struct egress_rules *rules(void)
{
	static struct policy *p;

	if (!p) {
		static const char *const allow[] = {"example.com", "**.example.org:443",
						    "10.0.0.0/8", "[fd00::]/8"};
		struct policy_vars vars = {"/home/u", "/w", "u", "1000", "/tmp"};
		struct ab_err e;
		p = policy_new(&vars);
		if (!p || policy_override(p, "network", "mode", "proxy", "fuzz", &e) < 0 ||
		    policy_override(p, "network", "deny", "*.bad.example.com", "fuzz", &e) < 0)
			abort();
		for (size_t i = 0; i < sizeof(allow) / sizeof(allow[0]); i++)
			if (policy_override(p, "network", "allow", allow[i], "fuzz", &e) < 0)
				abort();
		if (policy_finish(p, &e) < 0)
			abort();
	}
	return &p->net;
}

static void check_host(const char *host, unsigned port)
{
	const char *rule;
	uint8_t a[16];

	(void)egress_decide(rules(), host, port, &rule);
	if (inet_pton(AF_INET, host, a) == 1)
		(void)egress_address_refused(rules(), AF_INET, a, port);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request req;
	struct socks_request sreq;
	struct sniff sniff;
	size_t used;
	bool no_auth;

	/* a captured connection's first bytes: a name, if any, is a bounded, printable string */
	if (egress_sniff(data, size, &sniff) == PARSE_DONE && sniff.name[0]) {
		if (strlen(sniff.name) >= sizeof(sniff.name) || sniff.odd)
			abort();
		check_host(sniff.name, 443);
	}

	if (http_parse_request((const char *)data, size, &req) == PARSE_DONE) {
		check_host(req.host, req.port);
		if (!req.is_connect) {
			size_t n;
			char *head = http_upstream_head((const char *)data, &req, NULL, &n);
			if (!head || n < 4 || memcmp(head + n - 4, "\r\n\r\n", 4))
				abort(); /* the upstream head must be complete */
			free(head);
		}
	}
	if (socks_parse_greeting(data, size, &used, &no_auth) == PARSE_DONE && used > size)
		abort();
	if (socks_parse_request(data, size, &sreq) == PARSE_DONE) {
		if (sreq.len > size)
			abort();
		check_host(sreq.host, sreq.port);
	}
	return 0;
}

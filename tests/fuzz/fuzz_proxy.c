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

static struct egress_rules *rules(void)
{
	static struct egress_rules r;
	static int ready;

	if (!ready) {
		struct policy_vars vars = {"/home/u", "/w", "u", "1000", "/tmp"};
		struct policy *p = policy_new(&vars);
		struct ab_err e;
		strv_push(&p->net_allow, "example.com");
		strv_push(&p->net_allow, "**.example.org:443");
		strv_push(&p->net_allow, "10.0.0.0/8");
		strv_push(&p->net_allow, "[fd00::]/8");
		strv_push(&p->net_deny, "*.bad.example.com");
		if (egress_rules_build(p, &r, &e) < 0)
			abort();
		policy_free(p);
		ready = 1;
	}
	return &r;
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

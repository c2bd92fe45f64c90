/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* libFuzzer target: the [network] allow/deny rule parser (egress_rule_parse).
 *
 * The input, cut at its first NUL and NUL-terminated in a buffer of exactly its size, is parsed
 * as a rule. A failure must leave a terminated message; a success must give a well-formed rule
 * (a lower-case host name of valid labels, or an address of a known family with a prefix in
 * range), and the rule written back in canonical form must parse to the same rule. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress.h"
#include "error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_egress_rule: check failed: %s (%s:%d)\n", #cond,     \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static void check_rule(const struct egress_rule *r)
{
	CHECK(r->port <= 65535);
	switch (r->kind) {
	case RULE_HOST:
	case RULE_SUBDOMAINS:
	case RULE_DOMAIN: {
		size_t n = strnlen(r->host, sizeof(r->host));
		CHECK(n > 0 && n < sizeof(r->host));
		CHECK(r->host[0] != '.' && r->host[n - 1] != '.' && !strstr(r->host, ".."));
		for (size_t i = 0; i < n; i++)
			CHECK(islower((unsigned char)r->host[i]) ||
			      isdigit((unsigned char)r->host[i]) || r->host[i] == '-' ||
			      r->host[i] == '_' || r->host[i] == '.');
		CHECK(r->family == 0);
		break;
	}
	case RULE_ADDRESS:
	case RULE_CIDR: {
		unsigned max = r->family == AF_INET ? 32 : 128;
		CHECK(r->family == AF_INET || r->family == AF_INET6);
		CHECK(r->prefix <= max);
		CHECK(r->kind == RULE_CIDR || r->prefix == max);
		CHECK(r->host[0] == '\0');
		break;
	}
	default:
		CHECK(!"unknown rule kind");
	}
}

/* The rule as text that egress_rule_parse accepts. */
static void format_rule(const struct egress_rule *r, char *out, size_t size)
{
	char addr[INET6_ADDRSTRLEN], port[16] = "";
	static const char *const prefix[] = {
	    [RULE_HOST] = "", [RULE_SUBDOMAINS] = "*.", [RULE_DOMAIN] = "**."};

	if (r->port)
		snprintf(port, sizeof(port), ":%u", r->port);
	switch (r->kind) {
	case RULE_HOST:
	case RULE_SUBDOMAINS:
	case RULE_DOMAIN:
		snprintf(out, size, "%s%s%s", prefix[r->kind], r->host, port);
		break;
	case RULE_ADDRESS:
	case RULE_CIDR:
		CHECK(inet_ntop(r->family, r->addr, addr, sizeof(addr)) != NULL);
		if (r->family == AF_INET && r->kind == RULE_CIDR)
			snprintf(out, size, "%s/%u%s", addr, r->prefix, port);
		else if (r->family == AF_INET)
			snprintf(out, size, "%s%s", addr, port);
		else if (r->kind == RULE_CIDR)
			snprintf(out, size, "[%s/%u]%s", addr, r->prefix, port);
		else
			snprintf(out, size, "[%s]%s", addr, port);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = strnlen((const char *)data, size);
	char *text = malloc(n + 1), canon[400];
	struct egress_rule r, again;
	struct ab_err e = {0};

	CHECK(text != NULL);
	memcpy(text, data, n);
	text[n] = '\0';
	if (egress_rule_parse(text, &r, &e) < 0) {
		CHECK(memchr(e.msg, '\0', sizeof(e.msg)) && e.msg[0]);
		free(text);
		return 0;
	}
	check_rule(&r);
	format_rule(&r, canon, sizeof(canon));
	if (egress_rule_parse(canon, &again, &e) < 0) {
		fprintf(stderr,
			"fuzz_egress_rule: '%s' parsed, its canonical form '%s' did not: %s\n",
			text, canon, e.msg);
		abort();
	}
	CHECK(again.kind == r.kind && again.port == r.port && again.family == r.family &&
	      again.prefix == r.prefix && !strcmp(again.host, r.host) &&
	      !memcmp(again.addr, r.addr, sizeof(r.addr)));
	free(text);
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The transparent capture's DNS stub, served by the proxy's loop: each query is answered from the
 * egress rules (an allowed name gets an address of the reserved range, dns.h) and audited; none
 * is ever passed to a real resolver. */
#include <arpa/inet.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dns.h"
#include "egress.h"
#include "proxy_conn.h"

/* DNS queries audited in one run; past it the stub answers REFUSED, so none goes unrecorded. */
#define DNS_MAX_QUERIES 100000

static const char *rcode_name(int rcode)
{
	static const char *const names[] = {"NOERROR",	"FORMERR", "SERVFAIL",
					    "NXDOMAIN", "NOTIMP",  "REFUSED"};
	return rcode >= 0 && rcode <= DNS_REFUSED ? names[rcode] : "?";
}

static void audit_dns(struct proxy *px, const struct dns_query *q, int rcode, const char *rule,
		      const uint8_t *addr, const char *reason)
{
	struct json *j = audit_begin(px->a, "dns");
	char text[INET_ADDRSTRLEN];
	struct ab_err e;

	audit_decision(px->a, rcode == DNS_NOERROR ? "allow" : "deny");
	json_kv_str(j, "name", q->name[0] ? q->name : NULL);
	json_kv_uint(j, "type", q->qtype);
	json_kv_str(j, "rcode", rcode_name(rcode));
	json_kv_str(j, "rule", rule);
	if (addr && inet_ntop(AF_INET, addr, text, sizeof(text)))
		json_kv_str(j, "address", text);
	if (reason)
		json_kv_str(j, "reason", reason);
	if (audit_emit(px->a, &e) < 0)
		proxy_audit_note(px, &e);
}

/* The answer to one query: an allowed name's A record is an address of the reserved range; any
 * other type of an allowed name has no data; a name no rule allows does not exist. No query is
 * ever passed to a real resolver. */
static int dns_decide(struct proxy *px, const struct dns_query *q, const uint8_t **addr,
		      uint8_t buf[4])
{
	const char *rule = NULL, *bad, *reason = NULL;
	char name[256];
	int rcode = DNS_NOERROR;
	bool asked = false;

	*addr = NULL;
	if (q->qclass != DNS_CLASS_IN) {
		rcode = DNS_REFUSED, reason = "not class IN";
	} else if (q->odd_name || !egress_host_name(q->name, name, &bad)) {
		rcode = DNS_NXDOMAIN, reason = "not a host name";
	} else if (!cred_check_dns(px, q->name)) {
		rcode = DNS_REFUSED, reason = "a credential's placeholder in the name";
	} else if (!egress_name_allowed(px->rules, name, &rule) &&
		   !(asked = ask_name(px, name, &rule))) {
		rcode = DNS_NXDOMAIN, reason = rule ? "denied by rule" : "no allow rule matches";
	} else if (q->qtype == DNS_TYPE_A) {
		if (dns_map_address(&px->names, name, buf) == 0)
			*addr = buf;
		else
			rcode = DNS_SERVFAIL, reason = "the stub's table of names is full";
	}
	if (asked && !reason)
		reason = "a grantable rule covers it: its connections are put to the harness";
	audit_dns(px, q, rcode, rule, *addr, reason);
	return rcode;
}

static void dns_serve(struct proxy *px, int fd, const uint8_t *pkt, size_t len,
		      const struct sockaddr *peer, socklen_t peerlen)
{
	uint8_t out[512], buf[4];
	const uint8_t *addr = NULL;
	struct dns_query q;
	int rcode = dns_parse_query(pkt, len, &q);
	size_t n;

	if (rcode < 0)
		return;
	if (px->dns_queries >= DNS_MAX_QUERIES) {
		if (px->dns_queries++ == DNS_MAX_QUERIES)
			proxy_audit_limit(px, "dns-queries", NULL);
		rcode = DNS_REFUSED;
	} else if (rcode > 0) {
		px->dns_queries++;
		audit_dns(px, &q, rcode, NULL, NULL, "malformed or unsupported query");
	} else {
		px->dns_queries++;
		rcode = dns_decide(px, &q, &addr, buf);
	}
	n = dns_build_answer(&q, pkt, rcode, addr, out, sizeof(out));
	if (n == 0) /* a question too long to echo in 512 bytes */
		n = dns_build_answer(&(struct dns_query){.id = q.id, .rd = q.rd}, pkt, DNS_SERVFAIL,
				     NULL, out, sizeof(out));
	sendto(fd, out, n, MSG_DONTWAIT | MSG_NOSIGNAL, peer, peerlen); /* UDP: may be lost */
}

/* A bounded number of datagrams per round, so a flood cannot starve the connections. */
void dns_stub_read(struct proxy *px, int fd)
{
	uint8_t pkt[1500];

	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t peerlen = sizeof(peer);
		ssize_t n = recvfrom(fd, pkt, sizeof(pkt), MSG_DONTWAIT, (struct sockaddr *)&peer,
				     &peerlen);
		if (n < 0)
			return;
		dns_serve(px, fd, pkt, (size_t)n, (struct sockaddr *)&peer, peerlen);
	}
}

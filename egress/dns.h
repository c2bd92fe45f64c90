/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The DNS stub's protocol (pure): queries from inside the sandbox are parsed, answered from the
 * egress rules without asking any real resolver, and every allowed name gets an address of a
 * reserved range (198.18.0.0/15, RFC 2544) that the capture maps back to the name. A denied name
 * gets NXDOMAIN, so a query never carries data out. */
#ifndef AGENTBOX_DNS_H
#define AGENTBOX_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER 12
#define DNS_TTL 60
#define DNS_MAP_MAX 4096 /* names given an address in one run */

enum dns_rcode {
	DNS_NOERROR = 0,
	DNS_FORMERR = 1,
	DNS_SERVFAIL = 2,
	DNS_NXDOMAIN = 3,
	DNS_NOTIMP = 4,
	DNS_REFUSED = 5,
};

enum { DNS_TYPE_A = 1, DNS_TYPE_AAAA = 28, DNS_CLASS_IN = 1 };

struct dns_query {
	uint16_t id;
	bool rd;	/* recursion desired: echoed */
	char name[256]; /* lower case, dots between labels, no trailing dot; "." for the root */
	bool odd_name;	/* a label held a byte other than a letter, digit, '-' or '_' (shown
			   as '?' in name): no rule can allow it */
	uint16_t qtype, qclass;
	size_t question_end; /* offset just past the question, which an answer echoes */
};

/* Parses a query. Returns -1 when the packet gets no answer at all (shorter than a header, or a
 * response), 0 when q holds one question to answer, else the rcode to answer with (FORMERR,
 * NOTIMP); q->id and q->rd are set whenever the header was there. */
int dns_parse_query(const uint8_t *pkt, size_t len, struct dns_query *q);

/* Writes the response to q (which came in pkt) into out: rcode, and an A record with addr when
 * addr is not NULL (NOERROR with no record is "no data of that type"). Returns its length, or 0
 * when size is too small. */
size_t dns_build_answer(const struct dns_query *q, const uint8_t *pkt, int rcode,
			const uint8_t addr[4], uint8_t *out, size_t size);

/* ---------- names ⇄ reserved addresses ---------- */

struct dns_map {
	char **names; /* names[i] holds 198.18.0.1 + i */
	size_t n, cap;
};

/* The address of name, given on first use. -1 when the map is full (DNS_MAP_MAX) or out of
 * memory. */
int dns_map_address(struct dns_map *m, const char *name, uint8_t addr[4]);
/* The name an address of the range was given, or NULL. */
const char *dns_map_name(const struct dns_map *m, const uint8_t addr[4]);
/* Whether an address is in the reserved range at all. */
bool dns_map_reserved(const uint8_t addr[4]);
void dns_map_free(struct dns_map *m);

#endif

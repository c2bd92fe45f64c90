/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "dns.h"

#include <stdlib.h>
#include <string.h>

/* 198.18.0.0/15: set aside for benchmarks (RFC 2544), so never a real destination. */
#define RANGE_FIRST 0xC6120001u /* 198.18.0.1 */
#define RANGE_MASK 0xFFFE0000u
#define RANGE_NET 0xC6120000u

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ASCII only, whatever the locale */
static bool plain_byte(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* The question's name, label by label; a pointer (compression) is refused: a client never
 * compresses its one question, so one would only be there to confuse. */
static int parse_name(const uint8_t *pkt, size_t len, size_t *at, struct dns_query *q)
{
	size_t out = 0, i = *at;

	q->odd_name = false;
	for (;;) {
		uint8_t l;
		if (i >= len)
			return DNS_FORMERR;
		l = pkt[i++];
		if (l == 0)
			break;
		if (l > 63 || len - i < l || out + (out ? 1 : 0) + l > 253) /* a name's limit */
			return DNS_FORMERR;
		if (out)
			q->name[out++] = '.';
		for (uint8_t k = 0; k < l; k++) {
			uint8_t c = pkt[i++];
			q->odd_name |= !plain_byte(c);
			q->name[out++] = !plain_byte(c)		? '?'
					 : c >= 'A' && c <= 'Z' ? (char)(c + 32)
								: (char)c;
		}
	}
	if (out == 0)
		q->name[out++] = '.';
	q->name[out] = '\0';
	*at = i;
	return 0;
}

int dns_parse_query(const uint8_t *pkt, size_t len, struct dns_query *q)
{
	size_t at = DNS_HEADER;
	int rc;

	memset(q, 0, sizeof(*q));
	if (len < DNS_HEADER || (pkt[2] & 0x80)) /* too short, or a response */
		return -1;
	q->id = get16(pkt);
	q->rd = pkt[2] & 0x01;
	if (((pkt[2] >> 3) & 0x0f) != 0) /* only QUERY */
		return DNS_NOTIMP;
	/* one question, no answers or authorities; additional records (EDNS OPT) are ignored */
	if (get16(pkt + 4) != 1 || get16(pkt + 6) != 0 || get16(pkt + 8) != 0)
		return DNS_FORMERR;
	if ((rc = parse_name(pkt, len, &at, q)) != 0)
		return rc;
	if (len - at < 4)
		return DNS_FORMERR;
	q->qtype = get16(pkt + at);
	q->qclass = get16(pkt + at + 2);
	q->question_end = at + 4;
	return 0;
}

size_t dns_build_answer(const struct dns_query *q, const uint8_t *pkt, int rcode,
			const uint8_t addr[4], uint8_t *out, size_t size)
{
	size_t qlen = q->question_end ? q->question_end - DNS_HEADER : 0;
	size_t n = DNS_HEADER + qlen + (addr ? 16 : 0);

	if (size < n)
		return 0;
	memset(out, 0, DNS_HEADER);
	put16(out, q->id);
	out[2] = (uint8_t)(0x80 | 0x04 | (q->rd ? 0x01 : 0)); /* response, authoritative */
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f));	      /* recursion available */
	put16(out + 4, qlen ? 1 : 0);
	put16(out + 6, addr ? 1 : 0);
	memcpy(out + DNS_HEADER, pkt + DNS_HEADER, qlen);
	if (addr) {
		uint8_t *rr = out + DNS_HEADER + qlen;
		put16(rr, 0xC000 | DNS_HEADER); /* the name: a pointer to the question's */
		put16(rr + 2, DNS_TYPE_A);
		put16(rr + 4, DNS_CLASS_IN);
		put16(rr + 6, 0);
		put16(rr + 8, DNS_TTL);
		put16(rr + 10, 4);
		memcpy(rr + 12, addr, 4);
	}
	return n;
}

/* ---------- names ⇄ reserved addresses ---------- */

static void index_address(size_t i, uint8_t addr[4])
{
	uint32_t a = RANGE_FIRST + (uint32_t)i;

	addr[0] = (uint8_t)(a >> 24);
	addr[1] = (uint8_t)(a >> 16);
	addr[2] = (uint8_t)(a >> 8);
	addr[3] = (uint8_t)a;
}

static uint32_t address_value(const uint8_t addr[4])
{
	return (uint32_t)addr[0] << 24 | (uint32_t)addr[1] << 16 | (uint32_t)addr[2] << 8 | addr[3];
}

int dns_map_address(struct dns_map *m, const char *name, uint8_t addr[4])
{
	char *copy;

	/* a few hundred names in a run at most: a scan costs less than a hash table's code */
	for (size_t i = 0; i < m->n; i++) {
		if (!strcmp(m->names[i], name)) {
			index_address(i, addr);
			return 0;
		}
	}
	if (m->n >= DNS_MAP_MAX)
		return -1;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		char **names = realloc(m->names, cap * sizeof(*names));
		if (!names)
			return -1;
		m->names = names;
		m->cap = cap;
	}
	if (!(copy = strdup(name)))
		return -1;
	m->names[m->n] = copy;
	index_address(m->n++, addr);
	return 0;
}

bool dns_map_reserved(const uint8_t addr[4])
{
	return (address_value(addr) & RANGE_MASK) == RANGE_NET;
}

const char *dns_map_name(const struct dns_map *m, const uint8_t addr[4])
{
	uint32_t a = address_value(addr);

	if (!dns_map_reserved(addr) || a < RANGE_FIRST || a - RANGE_FIRST >= m->n)
		return NULL;
	return m->names[a - RANGE_FIRST];
}

void dns_map_free(struct dns_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->names[i]);
	free(m->names);
	*m = (struct dns_map){0};
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Unit tests for the DNS stub's protocol: query parsing (what is answered, what is refused),
 * the answers built, and the table of names and reserved addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "dns.h"

/* A query for name (dotted) of type qtype; returns its length. */
static size_t query(uint8_t *b, const char *name, uint16_t qtype)
{
	static const uint8_t header[DNS_HEADER] = {0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t at = DNS_HEADER;

	memcpy(b, header, DNS_HEADER);
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);
		b[at++] = (uint8_t)l;
		memcpy(b + at, name, l);
		at += l;
		name += l + (dot ? 1 : 0);
	}
	b[at++] = 0;
	b[at++] = (uint8_t)(qtype >> 8), b[at++] = (uint8_t)qtype;
	b[at++] = 0, b[at++] = 1;
	return at;
}

static void test_parse(void **state)
{
	uint8_t b[512];
	struct dns_query q;
	size_t n = query(b, "WWW.Example.com", DNS_TYPE_AAAA);

	(void)state;
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_string_equal(q.name, "www.example.com");
	assert_int_equal(q.qtype, DNS_TYPE_AAAA);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_int_equal(q.id, 0xbeef);
	assert_true(q.rd);
	assert_int_equal(q.question_end, n);
	assert_false(q.odd_name);
	/* a byte no host name has: shown as '?' and flagged */
	n = query(b, "a b.example", DNS_TYPE_A);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_string_equal(q.name, "a?b.example");
	assert_true(q.odd_name);
	/* truncated anywhere in the question: FORMERR; shorter than a header: no answer */
	for (size_t k = DNS_HEADER; k < n; k++)
		assert_int_equal(dns_parse_query(b, k, &q), DNS_FORMERR);
	assert_int_equal(dns_parse_query(b, DNS_HEADER - 1, &q), -1);
	/* a response is never answered */
	b[2] |= 0x80;
	assert_int_equal(dns_parse_query(b, n, &q), -1);
	/* two questions, an opcode other than QUERY, a compressed name */
	n = query(b, "x.example", DNS_TYPE_A);
	b[5] = 2;
	assert_int_equal(dns_parse_query(b, n, &q), DNS_FORMERR);
	b[5] = 1, b[2] = 0x28; /* opcode 5 (UPDATE) */
	assert_int_equal(dns_parse_query(b, n, &q), DNS_NOTIMP);
	assert_int_equal(q.id, 0xbeef);
	b[2] = 0x01, b[DNS_HEADER] = 0xc0;
	assert_int_equal(dns_parse_query(b, n, &q), DNS_FORMERR);
}

static void test_long_names(void **state)
{
	uint8_t b[600];
	char name[300];
	struct dns_query q;
	size_t n;

	(void)state;
	/* 4 labels of 63: 255 characters, over the 253 a name may have */
	snprintf(name, sizeof(name), "%063d.%063d.%063d.%063d", 0, 0, 0, 0);
	n = query(b, name, DNS_TYPE_A);
	assert_int_equal(dns_parse_query(b, n, &q), DNS_FORMERR);
	/* 253 characters: the longest */
	snprintf(name, sizeof(name), "%063d.%063d.%063d.%061d", 0, 0, 0, 0);
	n = query(b, name, DNS_TYPE_A);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_int_equal(strlen(q.name), 253);
	/* 254 characters (found by fuzz_dns: the first label was counted with a dot) */
	snprintf(name, sizeof(name), "%063d.%063d.%063d.%062d", 0, 0, 0, 0);
	n = query(b, name, DNS_TYPE_A);
	assert_int_equal(dns_parse_query(b, n, &q), DNS_FORMERR);
	snprintf(name, sizeof(name), "%063d.%063d.%063d.%061d", 0, 0, 0, 0);
	n = query(b, name, DNS_TYPE_A);
	/* a label over 63 */
	b[DNS_HEADER] = 64;
	assert_int_equal(dns_parse_query(b, n, &q), DNS_FORMERR);
}

static void test_answer(void **state)
{
	static const uint8_t addr[4] = {198, 18, 0, 7};
	uint8_t b[512], out[512];
	struct dns_query q;
	size_t n = query(b, "www.example.com", DNS_TYPE_A), m;

	(void)state;
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	m = dns_build_answer(&q, b, DNS_NOERROR, addr, out, sizeof(out));
	assert_int_equal(m, n + 16);
	assert_int_equal(out[0], 0xbe);
	assert_int_equal(out[2] & 0x80, 0x80); /* a response */
	assert_int_equal(out[3] & 0x0f, 0);    /* NOERROR */
	assert_int_equal(out[7], 1);	       /* one answer */
	assert_memory_equal(out + DNS_HEADER, b + DNS_HEADER, n - DNS_HEADER);
	assert_memory_equal(out + m - 4, addr, 4);
	/* NXDOMAIN: the question, no answer */
	m = dns_build_answer(&q, b, DNS_NXDOMAIN, NULL, out, sizeof(out));
	assert_int_equal(m, n);
	assert_int_equal(out[3] & 0x0f, DNS_NXDOMAIN);
	assert_int_equal(out[7], 0);
	/* too small a buffer: nothing */
	assert_int_equal(dns_build_answer(&q, b, DNS_NOERROR, addr, out, n), 0);
}

static void test_map(void **state)
{
	struct dns_map m = {0};
	uint8_t a[4], b[4], c[4];
	char name[32];

	(void)state;
	assert_int_equal(dns_map_address(&m, "one.example", a), 0);
	assert_int_equal(dns_map_address(&m, "two.example", b), 0);
	assert_int_equal(dns_map_address(&m, "one.example", c), 0);
	assert_memory_equal(a, c, 4);
	assert_memory_equal(a, ((uint8_t[]){198, 18, 0, 1}), 4);
	assert_memory_equal(b, ((uint8_t[]){198, 18, 0, 2}), 4);
	assert_string_equal(dns_map_name(&m, b), "two.example");
	/* in the range but never given, and outside it */
	assert_true(dns_map_reserved((uint8_t[]){198, 19, 255, 255}));
	assert_null(dns_map_name(&m, (uint8_t[]){198, 18, 0, 3}));
	assert_null(dns_map_name(&m, (uint8_t[]){198, 18, 0, 0}));
	assert_false(dns_map_reserved((uint8_t[]){198, 20, 0, 1}));
	assert_null(dns_map_name(&m, (uint8_t[]){10, 0, 0, 1}));
	/* the table is bounded */
	for (int i = 2; i < DNS_MAP_MAX; i++) {
		snprintf(name, sizeof(name), "n%d.example", i);
		assert_int_equal(dns_map_address(&m, name, a), 0);
	}
	assert_int_equal(dns_map_address(&m, "one-more.example", a), -1);
	assert_int_equal(dns_map_address(&m, "one.example", a), 0); /* known names still work */
	dns_map_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_long_names),
	    cmocka_unit_test(test_answer),
	    cmocka_unit_test(test_map),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

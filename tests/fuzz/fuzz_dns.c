/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The DNS stub's query parser and answer builder take datagrams straight from the sandboxed
 * command; the answer must echo exactly the question the parser measured, and the name table
 * must give one name one address and map it back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dns_map map;
	uint8_t out[512], addr[4], again[4];
	struct dns_query q;
	int rc = dns_parse_query(data, size, &q);
	size_t n;

	if (rc < 0)
		return 0;
	if (q.question_end > size || strlen(q.name) > 253)
		abort();
	n = dns_build_answer(&q, data, rc ? rc : DNS_NOERROR,
			     rc ? NULL : (const uint8_t *)"\1\2\3\4", out, sizeof(out));
	if (n && (n < DNS_HEADER || n > sizeof(out) || out[0] != data[0] || out[1] != data[1]))
		abort();
	if (rc == 0 && map.n < 64) {
		if (dns_map_address(&map, q.name, addr) < 0 ||
		    dns_map_address(&map, q.name, again) < 0 || memcmp(addr, again, 4) ||
		    !dns_map_reserved(addr) || strcmp(dns_map_name(&map, addr), q.name))
			abort();
	}
	return 0;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What the first bytes of a captured connection (or a tunnel) name (pure): a TLS ClientHello's
 * server name, or a plain HTTP request's Host. */
#ifndef AGENTBOX_SNIFF_H
#define AGENTBOX_SNIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "parse_result.h"

/* What the first bytes of a captured connection name: a TLS ClientHello's server name, or a
 * plain HTTP request's Host (without its port) and method. DONE once they tell, or once they
 * cannot (another protocol, a ClientHello split over records, a head past EGRESS_MAX_HEAD). */
/* What the first bytes are; zero (a struct sniff cleared) is other. */
enum sniff_proto { SNIFF_OTHER, SNIFF_TLS, SNIFF_HTTP };

struct sniff {
	enum sniff_proto proto;
	char name[256]; /* "" when none was sent (or it was unreadable: then odd is true) */
	char method[16];
	size_t head_len; /* plain HTTP: the request head, CRLF CRLF included */
	bool odd;
};
/* Its name in messages: "other", "tls", "http". */
const char *sniff_proto_name(enum sniff_proto proto);
enum parse_result egress_sniff(const unsigned char *buf, size_t len, struct sniff *s);
/* The same for first bytes that are all there will be (the client ended): where egress_sniff
 * would ask for more, an incomplete head is unreadable (odd), and a line of text without its
 * end is other unless it names "HTTP/". Always PARSE_DONE. */
enum parse_result egress_sniff_final(const unsigned char *buf, size_t len, struct sniff *s);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What the protocol parsers (http_proxy.c, socks5.c, sniff.c) say of the bytes they were given:
 * they need more, they are done, or they are refused. Header only. */
#ifndef AGENTBOX_PARSE_RESULT_H
#define AGENTBOX_PARSE_RESULT_H

enum parse_result { PARSE_MORE, PARSE_DONE, PARSE_BAD };

#endif

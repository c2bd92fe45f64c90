/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The SOCKS5 proxy's greeting and request (pure), as a client sends them to the proxy. */
#ifndef AGENTBOX_SOCKS5_H
#define AGENTBOX_SOCKS5_H

#include <stdbool.h>
#include <stddef.h>

#include "parse_result.h"

struct socks_request {
	char host[256];
	unsigned port;
	size_t len; /* bytes consumed */
	int reply;  /* PARSE_BAD: the SOCKS reply code to send */
};

/* Greeting: VER NMETHODS METHODS. *len is set to the bytes consumed on PARSE_DONE; *no_auth
 * to whether method 0 (no authentication) was offered. */
enum parse_result socks_parse_greeting(const unsigned char *buf, size_t len, size_t *used,
				       bool *no_auth);
/* Request: VER CMD RSV ATYP ADDR PORT; CONNECT only. */
enum parse_result socks_parse_request(const unsigned char *buf, size_t len,
				      struct socks_request *req);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
#include "socks5.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

enum parse_result socks_parse_greeting(const unsigned char *buf, size_t len, size_t *used,
				       bool *no_auth)
{
	if (len < 2)
		return PARSE_MORE;
	if (buf[0] != 5 || buf[1] == 0)
		return PARSE_BAD;
	if (len < 2u + buf[1])
		return PARSE_MORE;
	*no_auth = memchr(buf + 2, 0, buf[1]) != NULL;
	*used = 2u + buf[1];
	return PARSE_DONE;
}

enum parse_result socks_parse_request(const unsigned char *buf, size_t len,
				      struct socks_request *req)
{
	size_t need;

	memset(req, 0, sizeof(*req));
	req->reply = 1; /* general failure */
	if (len < 5)
		return PARSE_MORE;
	if (buf[0] != 5 || buf[2] != 0)
		return PARSE_BAD;
	if (buf[1] != 1) {
		req->reply = 7; /* command not supported: BIND and UDP ASSOCIATE are refused */
		return PARSE_BAD;
	}
	switch (buf[3]) {
	case 1:
		need = 4 + 4 + 2;
		break;
	case 3:
		need = 4 + 1 + (size_t)buf[4] + 2;
		break;
	case 4:
		need = 4 + 16 + 2;
		break;
	default:
		req->reply = 8; /* address type not supported */
		return PARSE_BAD;
	}
	if (len < need)
		return PARSE_MORE;
	if (buf[3] == 1) {
		inet_ntop(AF_INET, buf + 4, req->host, sizeof(req->host));
	} else if (buf[3] == 4) {
		char a[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, buf + 4, a, sizeof(a));
		snprintf(req->host, sizeof(req->host), "[%s]", a);
	} else {
		if (buf[4] == 0)
			return PARSE_BAD;
		/* no control bytes into headers or the audit; bytes >= 0x80 are a Unicode name,
		 * which egress_host_name converts (or refuses, when not UTF-8) */
		for (size_t i = 0; i < buf[4]; i++)
			if (buf[5 + i] <= ' ' || buf[5 + i] == 0x7f)
				return PARSE_BAD;
		memcpy(req->host, buf + 5, buf[4]);
		req->host[buf[4]] = '\0';
	}
	req->port = (unsigned)(buf[need - 2] << 8 | buf[need - 1]);
	req->len = need;
	return req->port ? PARSE_DONE : PARSE_BAD;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The proxy's front ends: what a client sends first, read into its connection until the host it
 * wants is known. The HTTP proxy's request head, the SOCKS5 greeting and request, and a captured
 * connection's redirected destination and first bytes, which must agree with it. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns.h"
#include "egress.h"
#include "http_proxy.h"
#include "proxy.h"
#include "proxy_conn.h"
#include "sniff.h"
#include "socks5.h"

#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80 /* linux/netfilter_ipv4.h, which clashes with netinet/in.h */
#endif
#define IP6T_SO_ORIGINAL_DST 80

/* ---------- reading the client's request ---------- */

static void bad_request(struct conn *c, const char *why)
{
	if (c->proto == PROTO_SOCKS) {
		unsigned char r[10] = {5, 1, 0, 1};
		conn_to_client(c, r, sizeof(r), true);
	} else {
		char resp[512];
		int n = snprintf(resp, sizeof(resp),
				 "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"
				 "Content-Length: %zu\r\n\r\n%s\n",
				 strlen(why) + 1, why);
		conn_to_client(c, resp, (size_t)n, true);
	}
	conn_audit(c, "deny", why);
}

static void consume(struct conn *c, size_t n)
{
	memmove(c->head, c->head + n, c->head_len - n);
	c->head_len -= n;
}

static void parse_http(struct conn *c)
{
	struct http_request req;
	enum parse_result r = http_parse_request(c->head, c->head_len, &req);

	if (r == PARSE_MORE)
		return;
	if (r == PARSE_BAD) {
		bad_request(c, req.why);
		return;
	}
	c->proto = req.is_connect ? PROTO_CONNECT : PROTO_HTTP;
	snprintf(c->method, sizeof(c->method), "%s", req.method);
	snprintf(c->url, sizeof(c->url), "%s", req.url);
	snprintf(c->host, sizeof(c->host), "%s", req.host);
	c->port = req.port;
	if (req.is_connect)
		consume(c, req.head_len); /* what follows is tunnel data */
	dial_decide(c);
}

static void parse_socks(struct conn *c)
{
	if (c->st == ST_SOCKS_GREETING) {
		size_t used;
		bool no_auth;
		enum parse_result r =
		    socks_parse_greeting((unsigned char *)c->head, c->head_len, &used, &no_auth);
		if (r == PARSE_MORE)
			return;
		if (r == PARSE_BAD || !no_auth) {
			static const unsigned char none[] = {5, 0xff};
			conn_to_client(c, none, sizeof(none), true);
			conn_audit(c, "deny",
				   "SOCKS5 greeting without the no-authentication method");
			return;
		}
		consume(c, used);
		conn_to_client(c, (const unsigned char[]){5, 0}, 2, false);
		c->st = ST_SOCKS_REQUEST;
	}
	if (c->st == ST_SOCKS_REQUEST) {
		struct socks_request req;
		enum parse_result r =
		    socks_parse_request((unsigned char *)c->head, c->head_len, &req);
		if (r == PARSE_MORE)
			return;
		if (r == PARSE_BAD) {
			unsigned char rep[10] = {5, (unsigned char)req.reply, 0, 1};
			conn_to_client(c, rep, sizeof(rep), true);
			conn_audit(c, "deny",
				   req.reply == 7 ? "SOCKS5 command not supported"
						  : "malformed SOCKS5 request");
			return;
		}
		snprintf(c->host, sizeof(c->host), "%s", req.host);
		c->port = req.port;
		consume(c, req.len);
		dial_decide(c);
	}
}

/* ---------- captured connections ---------- */

/* Where a captured connection was going, from the NAT the rules made: an address the DNS stub
 * gave a name stands for that name; any other address stands for itself. False for a connection
 * made to the capture listener itself. */
bool front_original_destination(struct conn *c, int family)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	socklen_t len = family == AF_INET ? sizeof(s4) : sizeof(s6);
	char text[INET6_ADDRSTRLEN];
	const void *raw;

	if (family == AF_INET ? getsockopt(c->cl.fd, SOL_IP, SO_ORIGINAL_DST, &s4, &len)
			      : getsockopt(c->cl.fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &s6, &len))
		return false;
	raw = family == AF_INET ? (const void *)&s4.sin_addr : (const void *)&s6.sin6_addr;
	/* the rules never redirect loopback: this was a connect() to the listener itself */
	if (family == AF_INET ? ((const uint8_t *)raw)[0] == 127
			      : IN6_IS_ADDR_LOOPBACK(&s6.sin6_addr))
		return false;
	c->port = ntohs(family == AF_INET ? s4.sin_port : s6.sin6_port);
	inet_ntop(family, raw, text, sizeof(text));
	snprintf(c->host, sizeof(c->host), family == AF_INET ? "%s" : "[%s]", text);
	if (family == AF_INET && dns_map_reserved(raw)) {
		const char *name = dns_map_name(&c->px->names, raw);
		c->unmapped = !name;
		c->mapped = name != NULL;
		if (name)
			snprintf(c->host, sizeof(c->host), "%s", name);
	}
	return true;
}

/* The name a client's first bytes give (TLS server name, HTTP Host or absolute target) must be
 * the host the connection was allowed for, else an allowed front could carry traffic for
 * another host. An address literal was allowed as an address: nothing to compare. NULL when
 * they agree, else why not (in why). */
const char *front_flight_mismatch(struct conn *c, const struct sniff *s, char *why, size_t size)
{
	const char *want = c->name[0] ? c->name : c->host, *bad;
	char sni[256];
	uint8_t raw[16];

	if (s->name[0])
		snprintf(c->sni, sizeof(c->sni), "%s", s->name);
	if (s->odd) {
		snprintf(why, size, "the %s destination in its first bytes cannot be checked",
			 sniff_proto_name(s->proto));
		return why;
	}
	if (!s->name[0] || dial_host_literal(want, raw))
		return NULL;
	if (egress_host_name(s->name, sni, &bad) && !strcmp(sni, want))
		return NULL;
	snprintf(why, size, "the connection was allowed for %.200s, but its %s names %.200s", want,
		 s->proto != SNIFF_TLS ? "HTTP request" : "TLS server name", s->name);
	return why;
}

/* The rules decide on the name the address stands for, once the first bytes (if any came in
 * time) agree with it. */
void front_capture_decide(struct conn *c, const struct sniff *s)
{
	char why[512];

	if (s) {
		c->sniff_http = s->proto == SNIFF_HTTP;
		c->sniff_head = s->head_len;
		snprintf(c->method, sizeof(c->method), "%s", c->sniff_http ? s->method : "");
		snprintf(c->sni, sizeof(c->sni), "%s", s->name);
	}
	if (c->unmapped) {
		snprintf(why, sizeof(why),
			 "%s is in the DNS stub's range but no name was given it in this run",
			 c->host);
		conn_refuse(c, why);
		return;
	}
	if (s && front_flight_mismatch(c, s, why, sizeof(why))) {
		conn_refuse(c, why);
		return;
	}
	/* decided on the name alone: whatever the client sends first is still checked */
	c->late_sniff = !s;
	dial_decide(c);
}

static void parse_capture(struct conn *c)
{
	struct sniff s;

	/* a client that has begun has SNIFF_MS no more: its head must come whole */
	c->deadline_ms = (uint64_t)c->t0.tv_sec * 1000 + (uint64_t)c->t0.tv_nsec / 1000000 +
			 PROXY_HEAD_TIMEOUT_MS;
	if (egress_sniff((unsigned char *)c->head, c->head_len, &s) == PARSE_MORE) {
		if (c->head_len < EGRESS_MAX_HEAD)
			return;
		s.odd = true; /* a head that fills the buffer cannot be checked */
	}
	front_capture_decide(c, &s);
}

void front_read_head(struct conn *c)
{
	ssize_t n = read(c->cl.fd, c->head + c->head_len, EGRESS_MAX_HEAD - c->head_len);

	if (n == 0 && c->st == ST_SNIFF && c->head_len) {
		/* a captured client that sent its bytes and ended: they are all it will send */
		struct sniff s;
		egress_sniff_final((unsigned char *)c->head, c->head_len, &s);
		front_capture_decide(c, &s);
		return;
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c, "client closed before its request");
		return;
	}
	if (n < 0)
		return;
	c->head_len += (size_t)n;
	if (c->st == ST_SNIFF)
		parse_capture(c);
	else if (c->proto == PROTO_SOCKS)
		parse_socks(c);
	else
		parse_http(c);
	if (!c->dead && !c->close_after_flush && !c->audited && c->head_len == EGRESS_MAX_HEAD &&
	    (c->st == ST_HTTP_HEAD || c->st == ST_SOCKS_GREETING || c->st == ST_SOCKS_REQUEST))
		bad_request(c, "request head too large");
}

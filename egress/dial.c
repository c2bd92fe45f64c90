/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The proxy's decisions and dials: a request's host against the rules and the run's and host's
 * limits, then its address (literal, pinned, or resolved off the loop and checked by the SSRF
 * guard), the connect, and the first bytes of a tunnel held until they agree with its host. */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress.h"
#include "hostlimits.h"
#include "http_proxy.h"
#include "proxy.h"
#include "proxy_conn.h"
#include "sniff.h"

struct lookup {
	struct conn *c;
	char host[256 + 1]; /* a name and, when the client wrote one, the trailing dot */
	struct addrinfo *res;
	int err;
	int fd; /* where to report */
};

/* ---------- run limits ---------- */

/* A new allowed connection: NULL when it may go on, else why not. */
/* The run's limits on a new allowed connection: NULL when it may go on, else why not, and *limit
 * names the limit for the audit trail. */
static const char *admit_run(struct proxy *px, const char **limit)
{
	const struct policy *p = px->p;
	uint64_t now = proxy_now_ms();

	*limit = "connections";
	if (p->net_max_connections && px->upstreams >= p->net_max_connections)
		return "max-connections reached";
	/* a spent byte budget refuses at once, rather than after the tunnel was promised */
	*limit = "bytes-out";
	if (p->net_max_bytes_out && px->bytes_out >= p->net_max_bytes_out)
		return "max-bytes-out reached";
	*limit = "bytes-in";
	if (p->net_max_bytes_in && px->bytes_in >= p->net_max_bytes_in)
		return "max-bytes-in reached";
	*limit = "rate";
	if (p->net_rate) {
		px->tokens += (double)(now - px->refilled_ms) * (double)p->net_rate / 1000.0;
		if (px->tokens > (double)p->net_rate)
			px->tokens = (double)p->net_rate;
		px->refilled_ms = now;
		if (px->tokens < 1.0)
			return "rate limit: too many new connections per second";
		px->tokens -= 1.0;
	}
	return NULL;
}

/* The per-host limit's name in the audit trail. */
static const char *host_limit_name(enum host_verdict v)
{
	switch (v) {
	case HOST_CONNECTIONS:
		return "connections-per-host";
	case HOST_RATE:
		return "rate-per-host";
	case HOST_BYTES_OUT:
		return "bytes-out-per-host";
	case HOST_BYTES_IN:
		return "bytes-in-per-host";
	case HOST_TABLE_FULL:
		return "hosts";
	case HOST_OK:
		break;
	}
	return NULL;
}

static void host_refusal(const struct conn *c, enum host_verdict v, char *why, size_t size)
{
	if (v == HOST_TABLE_FULL)
		snprintf(why, size,
			 "per-host limits: %d hosts are tracked and none is idle, so a "
			 "new host (%s) is refused",
			 HOSTLIMITS_MAX_HOSTS, c->name);
	else if (v == HOST_RATE)
		snprintf(why, size, "rate-per-host: too many new connections per second to %s",
			 c->name);
	else
		snprintf(why, size, "%s reached for %s", host_verdict_key(v), c->name);
}

/* Per-host limits, then the run's: true when the connection may go on (it then holds its
 * share of both), else it was refused and audited. */
static bool admit(struct conn *c)
{
	struct proxy *px = c->px;
	struct host_entry *h = NULL;
	const char *limit, *limited;
	char why[512];

	if (px->hosts.cap) {
		enum host_verdict v = hostlimits_check(&px->hosts, c->name, proxy_now_ms(), &h);
		if (v != HOST_OK) {
			host_refusal(c, v, why, sizeof(why));
			proxy_audit_limit(px, host_limit_name(v), c->name);
			conn_refuse(c, why);
			return false;
		}
	}
	if ((limited = admit_run(px, &limit))) {
		proxy_audit_limit(px, limit, NULL);
		conn_refuse(c, limited);
		return false;
	}
	c->counted = true;
	px->upstreams++;
	if (h) {
		hostlimits_take(&px->hosts, h);
		c->per_host = h;
	}
	return true;
}

bool dial_method_allowed(const struct policy *p, const char *method)
{
	for (size_t i = 0; i < p->net_methods.n; i++)
		if (!strcmp(p->net_methods.v[i], method))
			return true;
	return p->net_methods.n == 0;
}

/* ---------- decide, resolve, connect ---------- */

/* The client's request is plain HTTP, read whole before it goes up: the HTTP proxy's absolute
 * form, or a captured connection's. */
static bool plain_http(const struct conn *c)
{
	return c->proto == PROTO_HTTP || c->sniff_http;
}

static void start_connect(struct conn *c);

static void *resolve_thread(void *arg)
{
	struct lookup *l = arg;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
	ssize_t w;

	l->err = getaddrinfo(l->host, NULL, &hints, &l->res);
	do
		w = write(l->fd, &l, sizeof(l));
	while (w < 0 && errno == EINTR);
	return NULL;
}

static void start_lookup(struct conn *c)
{
	struct lookup *l = calloc(1, sizeof(*l));
	pthread_attr_t attr;
	pthread_t t;

	if (!l) {
		conn_close(c, "out of memory");
		return;
	}
	l->c = c;
	l->fd = c->px->resolved[1];
	/* the name the rules allowed (a Unicode name in its ASCII form), absolute if the client
	 * wrote it so: without the dot, a resolver's search list could add a suffix */
	snprintf(l->host, sizeof(l->host), "%s%s", c->name,
		 c->mapped || c->host[strlen(c->host) - 1] == '.' ? "." : "");
	c->st = ST_RESOLVE;
	c->lookup_pending = true;
	c->px->lookups++;
	proxy_watch(c->px, &c->cl, 0);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&t, &attr, resolve_thread, l) != 0) {
		c->lookup_pending = false;
		c->px->lookups--;
		free(l);
		conn_close(c, "cannot start a resolver thread");
	}
	pthread_attr_destroy(&attr);
}

/* The address to dial, at port; c->addr is its text for the audit. */
static void set_address(struct conn *c, const struct sockaddr *sa, socklen_t len, unsigned port)
{
	const void *raw = sa->sa_family == AF_INET
			      ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
			      : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	memcpy(&c->sa, sa, len);
	c->salen = len;
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)&c->sa)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)&c->sa)->sin6_port = htons((uint16_t)port);
	inet_ntop(sa->sa_family, raw, c->addr, sizeof(c->addr));
}

/* The same from raw address bytes (4 or 16 of them). */
static void set_raw_address(struct conn *c, int family, const void *raw, unsigned port)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
	struct sockaddr_in s4 = {.sin_family = AF_INET};

	if (family == AF_INET) {
		memcpy(&s4.sin_addr, raw, 4);
		set_address(c, (struct sockaddr *)&s4, sizeof(s4), port);
	} else {
		memcpy(&s6.sin6_addr, raw, 16);
		set_address(c, (struct sockaddr *)&s6, sizeof(s6), port);
	}
}

/* The lookup came back: the first address is checked by the SSRF guard and is the one dialled
 * (no second lookup, so no DNS-rebinding window). */
static void on_resolved(struct lookup *l)
{
	struct conn *c = l->c;
	const struct addrinfo *ai = l->res;
	const char *refused, *denied;
	const void *raw;
	char why[512];

	c->lookup_pending = false;
	c->px->lookups--;
	if (c->dead) {
		conn_bury(c);
		goto out;
	}
	if (l->err || !ai) {
		snprintf(why, sizeof(why), "cannot resolve: %s", gai_strerror(l->err));
		conn_refuse(c, why);
		goto out;
	}
	set_address(c, ai->ai_addr, ai->ai_addrlen, c->port);
	raw = ai->ai_family == AF_INET
		  ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
		  : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
	if ((denied = egress_address_denied(c->px->rules, ai->ai_family, raw, c->port))) {
		c->rule = denied;
		snprintf(why, sizeof(why), "%s resolves to %s, denied by rule '%s'", c->name,
			 c->addr, denied);
		conn_refuse(c, why);
		goto out;
	}
	refused = egress_address_refused(c->px->rules, ai->ai_family, raw, c->port);
	if (refused) {
		snprintf(why, sizeof(why),
			 "%s resolves to %s, %s (allow its address or range to "
			 "permit it)",
			 c->name, c->addr, refused);
		conn_refuse(c, why);
		goto out;
	}
	start_connect(c);
out:
	if (l->res)
		freeaddrinfo(l->res);
	free(l);
}

/* A name with a resolve entry is dialled where the entry says: the profile's author chose that
 * address, so the SSRF guard (which distrusts DNS answers) does not apply, but an address deny
 * rule still does. False when the name has no entry. */
static bool dial_pinned(struct conn *c)
{
	const struct egress_pin *pin = egress_pinned(c->px->rules, c->host, c->port, &c->pin);
	const char *denied;
	unsigned port;
	char why[512];

	if (!pin)
		return false;
	port = pin->to.port ? pin->to.port : c->port; /* deny rules judge where it really goes */
	set_raw_address(c, pin->to.family, pin->to.addr, port);
	if ((denied = egress_address_denied(c->px->rules, pin->to.family, pin->to.addr, port))) {
		c->rule = denied;
		snprintf(why, sizeof(why), "%s is resolved to %s by '%s', denied by rule '%s'",
			 c->name, c->addr, c->pin, denied);
		conn_refuse(c, why);
		return true;
	}
	start_connect(c);
	return true;
}

/* AF_INET or AF_INET6 with its bytes in raw when host is an address literal (IPv6 possibly in
 * brackets), else 0. */
int dial_host_literal(const char *host, uint8_t raw[16])
{
	char bare[256];
	size_t n = strlen(host);

	snprintf(bare, sizeof(bare), "%.*s", (int)(n >= 2 && host[0] == '[' ? n - 2 : n),
		 host[0] == '[' ? host + 1 : host);
	return inet_pton(AF_INET, bare, raw) == 1    ? AF_INET
	       : inet_pton(AF_INET6, bare, raw) == 1 ? AF_INET6
						     : 0;
}

void dial_decide(struct conn *c)
{
	char why[512];
	const char *bad;

	if (!egress_host_name(c->host, c->name, &bad)) {
		snprintf(why, sizeof(why), "the host name is refused: %s", bad);
		conn_refuse(c, why);
		return;
	}
	if (!cred_check_name(c))
		return;
	if (!egress_decide(c->px->rules, c->name, c->port, &c->rule)) {
		const char *grant =
		    c->rule ? NULL : egress_grantable(c->px->rules, c->name, c->port);
		const char *not_asked = grant ? ask_hold(c, grant) : "";
		if (!not_asked)
			return; /* held for the harness's answer (ask.c) */
		if (c->rule)
			snprintf(why, sizeof(why), "denied by rule '%s'", c->rule);
		else
			snprintf(why, sizeof(why), "no allow rule matches %s:%u%s%s", c->name,
				 c->port, not_asked[0] ? "; " : "", not_asked);
		conn_refuse(c, why);
		return;
	}
	dial_go(c);
}

void dial_go(struct conn *c)
{
	char why[512];
	uint8_t raw[16];
	int family;

	if (plain_http(c) && !dial_method_allowed(c->px->p, c->method)) {
		snprintf(why, sizeof(why), "method %s is not allowed ([network] methods)",
			 c->method);
		conn_refuse(c, why);
		return;
	}
	if (plain_http(c) && (!http_check_request(c, c->head, c->head_len) ||
			      !cred_check_plain(c, c->head, c->head_len)))
		return;
	/* a captured connection whose first bytes showed TLS or another protocol */
	/* a captured ClientHello named the host (c->sni): intercepted when rules cover it */
	if (c->proto == PROTO_CAPTURE && !c->late_sniff && !c->sniff_http &&
	    !(c->sni[0] && intercept_covers(c)) && !http_check_opaque(c, "captured TLS or other"))
		return;
	if (!admit(c))
		return;
	/* an address literal was allowed by an address rule: dial it as it is */
	if ((family = dial_host_literal(c->host, raw))) {
		set_raw_address(c, family, raw, c->port);
		start_connect(c);
	} else if (!dial_pinned(c)) {
		start_lookup(c);
	}
}

static void start_connect(struct conn *c)
{
	int fd = socket(c->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		conn_refuse(c, "cannot open an upstream socket");
		return;
	}
	c->up.fd = fd;
	if (connect(fd, (struct sockaddr *)&c->sa, c->salen) < 0 && errno != EINPROGRESS) {
		char why[128];
		snprintf(why, sizeof(why), "cannot connect to %s: %s", c->addr, strerror(errno));
		proxy_close_endpoint(c->px, &c->up);
		conn_refuse(c, why);
		return;
	}
	c->st = ST_CONNECT;
	c->deadline_ms = proxy_now_ms() + PROXY_CONNECT_TIMEOUT_MS;
	proxy_watch(c->px, &c->up, EPOLLOUT);
}

/* Plain HTTP: head (malloc'd, NULL when out of memory) is the client's first request head as it
 * goes upstream; it and the request's body go up, and nothing after them. false when the
 * connection was closed. */
static bool first_request(struct conn *c, char *head, size_t n)
{
	bool ok = head && relay_http_start(c, head, n, c->head, c->head_len);

	if (!head)
		conn_close(c, "out of memory");
	free(head);
	return ok;
}

/* TLS to a host the [http] rules cover: the held ClientHello is counted as sent, and TLS is
 * terminated here from now on. */
static void start_interception(struct conn *c)
{
	bool ended = c->late_eof;

	c->late_sniff = false;
	c->st = ST_RELAY;
	c->deadline_ms = 0;
	c->bytes_out += c->head_len;
	if (!relay_over_budget(c, true, c->head_len) || !intercept_start(c))
		return;
	c->to_up.eof |= ended;
}

/* The held first bytes (s) name the host the tunnel was allowed for and, plain HTTP, an allowed
 * method: else false, and the connection was closed (the tunnel was promised: it can only be
 * closed). */
static bool flight_allowed(struct conn *c, const struct sniff *s)
{
	char why[512];

	why[0] = '\0';
	if (s->proto == SNIFF_HTTP) /* the request's, in its events: a tunnel's said CONNECT */
		snprintf(c->method, sizeof(c->method), "%s", s->method);
	if (!front_flight_mismatch(c, s, why, sizeof(why)) && s->proto == SNIFF_HTTP &&
	    !dial_method_allowed(c->px->p, s->method))
		snprintf(why, sizeof(why), "method %s is not allowed ([network] methods)",
			 s->method);
	if (!why[0])
		return true;
	conn_audit(c, "deny", why);
	conn_close(c, why);
	return false;
}

/* The held first bytes are complete (or the client ended): checked, then sent up. */
static void late_flight(struct conn *c)
{
	struct sniff s;
	size_t n;

	if (egress_sniff((unsigned char *)c->head, c->head_len, &s) == PARSE_MORE) {
		if (c->head_len < EGRESS_MAX_HEAD && !c->late_eof)
			return;
		egress_sniff_final((unsigned char *)c->head, c->head_len, &s);
		s.odd |= !c->late_eof; /* a full buffer that still asks for more cannot be read */
	}
	if (!flight_allowed(c, &s))
		return;
	c->late_sniff = false;
	n = c->head_len;
	if (s.proto == SNIFF_HTTP) {
		/* plain HTTP in a tunnel or a captured connection: one request, its head closing
		 * the connection, as on the HTTP proxy's own path */
		size_t m = 0;
		char *head;
		if (!http_check_request(c, c->head, c->head_len) ||
		    !cred_check_plain(c, c->head, c->head_len))
			return;
		head = http_closing_head(c->head, s.head_len, c->target, &m);
		if (!first_request(c, head, m))
			return;
		n = c->to_up.len;
	} else if (s.proto == SNIFF_TLS && intercept_covers(c)) {
		start_interception(c);
		return;
	} else if (!http_check_opaque(c, sniff_proto_name(s.proto))) {
		return;
	} else if (!flow_put(&c->to_up, c->head, c->head_len)) {
		conn_close(c, "out of memory");
		return;
	}
	free(c->head);
	c->head = NULL;
	c->head_len = 0;
	c->bytes_out += n;
	if (relay_over_budget(c, true, n) && c->late_eof)
		c->to_up.eof = true;
}

void dial_read_late(struct conn *c)
{
	ssize_t n = read(c->cl.fd, c->head + c->head_len, EGRESS_MAX_HEAD - c->head_len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		conn_close(c, "client read failed");
		return;
	}
	if (n == 0)
		c->late_eof = true;
	c->head_len += (size_t)n;
	if (c->head_len == 0 && c->late_eof) { /* ended without a byte: nothing to check */
		c->late_sniff = false;
		c->to_up.eof = true;
		free(c->head);
		c->head = NULL;
		return;
	}
	late_flight(c);
}

/* Plain HTTP: its request's head goes up with its canonical target, asking the server to close
 * after it. false when the connection was closed. */
static bool send_request_head(struct conn *c)
{
	struct http_request req;
	size_t n;
	char *head;

	if (c->sniff_http) {
		head = http_closing_head(c->head, c->sniff_head, c->target, &n);
	} else {
		http_parse_request(c->head, c->head_len, &req);
		head = http_upstream_head(c->head, &req, c->target, &n);
	}
	return first_request(c, head, n);
}

/* Any other connection is a tunnel: the client is told it is open (as CONNECT and SOCKS5 expect;
 * a captured client expects nothing). A tunnel's first bytes (a TLS ClientHello) are checked
 * before they go up; a captured connection's were, unless it was decided before it sent any.
 * false when the connection was closed, or went on to interception. */
static bool open_tunnel(struct conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	static const unsigned char socks_ok[] = {5, 0, 0, 1, 0, 0, 0, 0, 0, 0};

	if (c->proto == PROTO_CONNECT)
		conn_to_client(c, established, sizeof(established) - 1, false);
	else if (c->proto == PROTO_SOCKS)
		conn_to_client(c, socks_ok, sizeof(socks_ok), false);
	if (c->dead)
		return false;
	c->late_sniff |= c->proto != PROTO_CAPTURE;
	if (!c->late_sniff && c->sni[0] && intercept_covers(c)) {
		start_interception(c); /* a captured ClientHello, checked already */
		return false;
	}
	if (!c->late_sniff && !flow_put(&c->to_up, c->head, c->head_len)) {
		conn_close(c, "out of memory");
		return false;
	}
	return true;
}

/* Upstream is connected: answer the client and start relaying. */
void dial_on_connected(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
		char why[128];
		snprintf(why, sizeof(why), "cannot connect to %s: %s", c->addr,
			 strerror(err ? err : errno));
		proxy_close_endpoint(c->px, &c->up);
		conn_refuse(c, why);
		return;
	}
	if (!(plain_http(c) ? send_request_head(c) : open_tunnel(c)))
		return;
	if (!c->late_sniff) {
		free(c->head);
		c->head = NULL;
		c->head_len = 0;
	}
	c->st = ST_RELAY;
	c->deadline_ms = 0;
	/* the head goes out too: counted, and against the run's budget */
	c->bytes_out += c->to_up.len;
	if (relay_over_budget(c, true, c->to_up.len) && c->late_sniff && c->head_len)
		late_flight(c);
}

void dial_on_lookups(struct proxy *px)
{
	struct lookup *l;

	while (read(px->resolved[0], &l, sizeof(l)) == (ssize_t)sizeof(l)) {
		struct conn *c = l->c;
		on_resolved(l);
		if (!c->dead && !c->lookup_pending)
			conn_update_interest(c);
	}
}

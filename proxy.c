/* The egress proxy engine: one epoll loop in the supervisor, non-blocking sockets, names resolved
 * by short-lived threads so the loop never blocks. Each connection moves through:
 *   head (HTTP request head or SOCKS5 greeting + request) → decision → resolve → SSRF guard →
 *   connect → relay → close, and is audited at its decision (deny) or at its close (allow). */
#include "proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "dns.h"
#include "egress.h"
#include "hostlimits.h"
#include "http_proxy.h"
#include "proxy_conn.h"
#include "sniff.h"
#include "socks5.h"

#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80 /* linux/netfilter_ipv4.h, which clashes with netinet/in.h */
#endif
#define IP6T_SO_ORIGINAL_DST 80

/* How long a captured connection may keep quiet before it is decided without its first bytes
 * (a protocol where the server speaks first). */
#define SNIFF_MS 200
/* DNS queries audited in one run; past it the stub answers REFUSED, so none goes unrecorded. */
#define DNS_MAX_QUERIES 100000

struct lookup {
	struct conn *c;
	char host[256 + 1]; /* a name and, when the client wrote one, the trailing dot */
	struct addrinfo *res;
	int err;
	int fd; /* where to report */
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---------- audit ---------- */

static void audit_note(struct proxy *px, struct ab_err *e)
{
	if (!px->audit_failed) {
		px->audit_failed = 1;
		px->audit_err = *e;
	}
}

static void audit_conn(struct conn *c, const char *decision, const char *reason)
{
	struct proxy *px = c->px;
	struct json *j = audit_begin(px->a, "net");
	struct timespec t1;
	struct ab_err e;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->audited = true;
	json_kv_str(j, "decision", decision);
	json_kv_str(j, "protocol", c->proto);
	json_kv_str(j, "host", c->host[0] ? c->host : NULL);
	json_kv_uint(j, "port", c->port);
	if (c->addr[0])
		json_kv_str(j, "address", c->addr);
	json_kv_str(j, "rule", c->rule);
	if (c->pin)
		json_kv_str(j, "resolve", c->pin);
	if (c->sni[0])
		json_kv_str(j, "sni", c->sni);
	if (c->method[0])
		json_kv_str(j, "method", c->method);
	if (c->url[0])
		json_kv_str(j, "url", c->url);
	if (reason)
		json_kv_str(j, "reason", reason);
	json_kv_uint(j, "bytes_out", c->bytes_out);
	json_kv_uint(j, "bytes_in", c->bytes_in);
	json_kv_uint(j, "duration_ms", (uint64_t)((t1.tv_sec - c->t0.tv_sec) * 1000 +
						   (t1.tv_nsec - c->t0.tv_nsec) / 1000000));
	if (audit_emit(px->a, &e) < 0)
		audit_note(px, &e);
}

/* ---------- connection lifetime ---------- */

/* An fd with nothing to wait for leaves the set, so a hung-up socket cannot spin the loop. */
static void watch(struct proxy *px, struct endpoint *ep, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = ep};

	if (ep->fd < 0 || ep->events == events)
		return;
	if (!events)
		epoll_ctl(px->epfd, EPOLL_CTL_DEL, ep->fd, NULL);
	else
		epoll_ctl(px->epfd, ep->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, ep->fd, &ev);
	ep->events = events;
}

static void close_endpoint(struct proxy *px, struct endpoint *ep)
{
	if (ep->fd < 0)
		return;
	if (ep->events)
		epoll_ctl(px->epfd, EPOLL_CTL_DEL, ep->fd, NULL);
	close(ep->fd);
	ep->fd = -1;
	ep->events = 0;
}

/* Freed only between dispatch rounds, so no pointer held during a round can dangle. */
static void bury(struct conn *c)
{
	c->next_dead = c->px->graveyard;
	c->px->graveyard = c;
}

static void free_graveyard(struct proxy *px)
{
	while (px->graveyard) {
		struct conn *c = px->graveyard;
		px->graveyard = c->next_dead;
		free(c->to_up.buf);
		free(c->to_client.buf);
		free(c->head);
		free(c);
	}
}

static void resume_listeners(struct proxy *px);

void close_conn(struct conn *c, const char *reason)
{
	struct proxy *px = c->px;

	if (c->dead)
		return;
	if (!c->audited)
		audit_conn(c, c->counted ? "allow" : "none", reason);
	if (c->counted)
		px->upstreams--;
	if (c->per_host)
		hostlimits_release(c->per_host);
	close_endpoint(px, &c->cl);
	close_endpoint(px, &c->up);
	flow_close_pipe(px, &c->to_up);
	flow_close_pipe(px, &c->to_client);
	c->dead = true;
	if (c->prev)
		c->prev->next = c->next;
	else
		px->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->n_conns--;
	if (!c->lookup_pending)
		bury(c);
	resume_listeners(c->px);
}

/* Queues bytes for the client and, with close_after, ends the connection once they are sent. */
static void to_client(struct conn *c, const void *data, size_t n, bool close_after)
{
	struct flow *f = &c->to_client;

	if (!flow_put(f, data, n)) {
		close_conn(c, "out of memory");
		return;
	}
	c->close_after_flush |= close_after;
	watch(c->px, &c->cl, EPOLLOUT);
}

static void refuse(struct conn *c, const char *why)
{
	if (!strcmp(c->proto, "capture") && !c->sniff_http) {
		/* a client that did not ask a proxy cannot be told why: the audit trail says */
		audit_conn(c, "deny", why);
		close_conn(c, why);
		return;
	}
	if (!strcmp(c->proto, "socks")) {
		static const unsigned char denied[] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};
		to_client(c, denied, sizeof(denied), true); /* 0x02: not allowed by ruleset */
	} else {
		/* host and reason are bounded (256 and 512 bytes): both buffers always fit them */
		char body[1024], resp[2048];
		int n;
		snprintf(body, sizeof(body), "agentbox denied %s:%u: %s\n", c->host, c->port, why);
		n = snprintf(resp, sizeof(resp),
			     "HTTP/1.1 403 Forbidden\r\nX-Agentbox-Denied: %s\r\n"
			     "Content-Type: text/plain\r\nConnection: close\r\n"
			     "Content-Length: %zu\r\n\r\n%s",
			     why, strlen(body), body);
		to_client(c, resp, n > 0 && (size_t)n < sizeof(resp) ? (size_t)n : strlen(resp),
			  true);
	}
	audit_conn(c, "deny", why);
}

static void bad_request(struct conn *c, const char *why)
{
	if (!strcmp(c->proto, "socks")) {
		unsigned char r[10] = {5, 1, 0, 1};
		to_client(c, r, sizeof(r), true);
	} else {
		char resp[512];
		int n = snprintf(resp, sizeof(resp),
				 "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n"
				 "Content-Length: %zu\r\n\r\n%s\n",
				 strlen(why) + 1, why);
		to_client(c, resp, (size_t)n, true);
	}
	audit_conn(c, "deny", why);
}

/* ---------- run limits ---------- */

/* host: the host a per-host limit counts, else NULL */
void audit_limit(struct proxy *px, const char *limit, const char *host)
{
	struct json *j = audit_begin(px->a, "limit");
	struct ab_err e;

	json_kv_str(j, "limit", limit);
	if (host)
		json_kv_str(j, "host", host);
	if (audit_emit(px->a, &e) < 0)
		audit_note(px, &e);
}

/* A new allowed connection: NULL when it may go on, else why not. */
/* The run's limits on a new allowed connection: NULL when it may go on, else why not, and *limit
 * names the limit for the audit trail. */
static const char *admit_run(struct proxy *px, const char **limit)
{
	const struct policy *p = px->p;
	uint64_t now = now_ms();

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
		enum host_verdict v = hostlimits_check(&px->hosts, c->name, now_ms(), &h);
		if (v != HOST_OK) {
			host_refusal(c, v, why, sizeof(why));
			audit_limit(px, host_limit_name(v), c->name);
			refuse(c, why);
			return false;
		}
	}
	if ((limited = admit_run(px, &limit))) {
		audit_limit(px, limit, NULL);
		refuse(c, limited);
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

static bool method_allowed(const struct policy *p, const char *method)
{
	for (size_t i = 0; i < p->net_methods.n; i++)
		if (!strcmp(p->net_methods.v[i], method))
			return true;
	return p->net_methods.n == 0;
}

/* ---------- decide, resolve, connect ---------- */

static void start_connect(struct conn *c);
static const char *flight_mismatch(struct conn *c, const struct sniff *s, char *why, size_t size);

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
		close_conn(c, "out of memory");
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
	watch(c->px, &c->cl, 0);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&t, &attr, resolve_thread, l) != 0) {
		c->lookup_pending = false;
		c->px->lookups--;
		free(l);
		close_conn(c, "cannot start a resolver thread");
	}
	pthread_attr_destroy(&attr);
}

/* The address to dial, at port; c->addr is its text for the audit. */
static void set_address(struct conn *c, const struct sockaddr *sa, socklen_t len, unsigned port)
{
	const void *raw = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
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
		bury(c);
		goto out;
	}
	if (l->err || !ai) {
		snprintf(why, sizeof(why), "cannot resolve: %s", gai_strerror(l->err));
		refuse(c, why);
		goto out;
	}
	set_address(c, ai->ai_addr, ai->ai_addrlen, c->port);
	raw = ai->ai_family == AF_INET
		      ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
		      : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
	if ((denied = egress_address_denied(&c->px->rules, ai->ai_family, raw, c->port))) {
		c->rule = denied;
		snprintf(why, sizeof(why), "%s resolves to %s, denied by rule '%s'", c->name,
			 c->addr, denied);
		refuse(c, why);
		goto out;
	}
	refused = egress_address_refused(&c->px->rules, ai->ai_family, raw, c->port);
	if (refused) {
		snprintf(why, sizeof(why),
			 "%s resolves to %s, %s (allow its address or range to "
			 "permit it)",
			 c->name, c->addr, refused);
		refuse(c, why);
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
	const struct egress_pin *pin = egress_pinned(&c->px->rules, c->host, c->port, &c->pin);
	const char *denied;
	unsigned port;
	char why[512];

	if (!pin)
		return false;
	port = pin->to.port ? pin->to.port : c->port; /* deny rules judge where it really goes */
	set_raw_address(c, pin->to.family, pin->to.addr, port);
	if ((denied = egress_address_denied(&c->px->rules, pin->to.family, pin->to.addr, port))) {
		c->rule = denied;
		snprintf(why, sizeof(why), "%s is resolved to %s by '%s', denied by rule '%s'",
			 c->name, c->addr, c->pin, denied);
		refuse(c, why);
		return true;
	}
	start_connect(c);
	return true;
}

/* AF_INET or AF_INET6 with its bytes in raw when host is an address literal (IPv6 possibly in
 * brackets), else 0. */
static int host_literal(const char *host, uint8_t raw[16])
{
	char bare[256];
	size_t n = strlen(host);

	snprintf(bare, sizeof(bare), "%.*s", (int)(n >= 2 && host[0] == '[' ? n - 2 : n),
		 host[0] == '[' ? host + 1 : host);
	return inet_pton(AF_INET, bare, raw) == 1    ? AF_INET
	       : inet_pton(AF_INET6, bare, raw) == 1 ? AF_INET6
						     : 0;
}

static void decide(struct conn *c)
{
	char why[512];
	uint8_t raw[16];
	int family;
	const char *bad;

	if (!egress_host_name(c->host, c->name, &bad)) {
		snprintf(why, sizeof(why), "the host name is refused: %s", bad);
		refuse(c, why);
		return;
	}
	if (!egress_decide(&c->px->rules, c->name, c->port, &c->rule)) {
		if (c->rule)
			snprintf(why, sizeof(why), "denied by rule '%s'", c->rule);
		else
			snprintf(why, sizeof(why), "no allow rule matches %s:%u", c->name, c->port);
		refuse(c, why);
		return;
	}
	if ((!strcmp(c->proto, "http") || c->sniff_http) && !method_allowed(c->px->p, c->method)) {
		snprintf(why, sizeof(why), "method %s is not allowed ([network] methods)", c->method);
		refuse(c, why);
		return;
	}
	if (!admit(c))
		return;
	/* an address literal was allowed by an address rule: dial it as it is */
	if ((family = host_literal(c->host, raw))) {
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
		refuse(c, "cannot open an upstream socket");
		return;
	}
	c->up.fd = fd;
	if (connect(fd, (struct sockaddr *)&c->sa, c->salen) < 0 && errno != EINPROGRESS) {
		char why[128];
		snprintf(why, sizeof(why), "cannot connect to %s: %s", c->addr, strerror(errno));
		close_endpoint(c->px, &c->up);
		refuse(c, why);
		return;
	}
	c->st = ST_CONNECT;
	c->deadline_ms = now_ms() + PROXY_CONNECT_TIMEOUT_MS;
	watch(c->px, &c->up, EPOLLOUT);
}

/* The held first bytes are complete (or the client ended): checked, then sent up. */
static void late_flight(struct conn *c)
{
	struct sniff s;
	char why[512];
	size_t n;

	if (egress_sniff((unsigned char *)c->head, c->head_len, &s) == PARSE_MORE) {
		if (c->head_len < EGRESS_MAX_HEAD && !c->late_eof)
			return;
		s.odd = true;
	}
	why[0] = '\0';
	if (!flight_mismatch(c, &s, why, sizeof(why)) && !strcmp(c->proto, "capture") &&
	    !strcmp(s.proto, "http") && !method_allowed(c->px->p, s.method))
		snprintf(why, sizeof(why), "method %s is not allowed ([network] methods)",
			 s.method);
	if (why[0]) {
		audit_conn(c, "deny", why); /* the tunnel was promised: it can only be closed */
		close_conn(c, why);
		return;
	}
	c->late_sniff = false;
	n = c->head_len;
	if (!strcmp(c->proto, "capture") && !strcmp(s.proto, "http")) {
		size_t m;
		char *head = http_closing_head(c->head, s.head_len, &m);
		bool ok = head && flow_put(&c->to_up, head, m) &&
			  flow_put(&c->to_up, c->head + s.head_len, c->head_len - s.head_len);
		free(head);
		n = c->to_up.len;
		if (!ok) {
			close_conn(c, "out of memory");
			return;
		}
	} else if (!flow_put(&c->to_up, c->head, c->head_len)) {
		close_conn(c, "out of memory");
		return;
	}
	free(c->head);
	c->head = NULL;
	c->head_len = 0;
	c->bytes_out += n;
	if (over_budget(c, true, n) && c->late_eof)
		c->to_up.eof = true;
}

static void read_late(struct conn *c)
{
	ssize_t n = read(c->cl.fd, c->head + c->head_len, EGRESS_MAX_HEAD - c->head_len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		close_conn(c, "client read failed");
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

/* Upstream is connected: answer the client and start relaying. */
static void on_connected(struct conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	static const unsigned char socks_ok[] = {5, 0, 0, 1, 0, 0, 0, 0, 0, 0};
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
		char why[128];
		snprintf(why, sizeof(why), "cannot connect to %s: %s", c->addr, strerror(err ? err : errno));
		close_endpoint(c->px, &c->up);
		refuse(c, why);
		return;
	}
	if (!strcmp(c->proto, "http") || c->sniff_http) {
		struct http_request req;
		size_t n, head_len = c->sniff_head;
		char *head;
		if (c->sniff_http) {
			head = http_closing_head(c->head, head_len, &n);
		} else {
			http_parse_request(c->head, c->head_len, &req);
			head = http_upstream_head(c->head, &req, &n);
			head_len = req.head_len;
		}
		/* body bytes that came with the head follow it */
		if (!head || !flow_put(&c->to_up, head, n) ||
		    !flow_put(&c->to_up, c->head + head_len, c->head_len - head_len)) {
			free(head);
			close_conn(c, "out of memory");
			return;
		}
		free(head);
	} else {
		if (!strcmp(c->proto, "connect"))
			to_client(c, established, sizeof(established) - 1, false);
		else if (!strcmp(c->proto, "socks"))
			to_client(c, socks_ok, sizeof(socks_ok), false);
		if (c->dead)
			return;
		/* a tunnel's first bytes (a TLS ClientHello) are checked before they go up; a
		 * captured connection's were, unless it was decided before it sent any */
		c->late_sniff |= strcmp(c->proto, "capture") != 0;
		if (!c->late_sniff && !flow_put(&c->to_up, c->head, c->head_len)) {
			close_conn(c, "out of memory");
			return;
		}
	}
	if (!c->late_sniff) {
		free(c->head);
		c->head = NULL;
		c->head_len = 0;
	}
	c->st = ST_RELAY;
	c->deadline_ms = 0;
	/* the head goes out too: counted, and against the run's budget */
	c->bytes_out += c->to_up.len;
	if (over_budget(c, true, c->to_up.len) && c->late_sniff && c->head_len)
		late_flight(c);
}

/* ---------- reading the client's request ---------- */

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
	c->proto = req.is_connect ? "connect" : "http";
	snprintf(c->method, sizeof(c->method), "%s", req.method);
	snprintf(c->url, sizeof(c->url), "%s", req.url);
	snprintf(c->host, sizeof(c->host), "%s", req.host);
	c->port = req.port;
	if (req.is_connect)
		consume(c, req.head_len); /* what follows is tunnel data */
	decide(c);
}

static void parse_socks(struct conn *c)
{
	if (c->st == ST_SOCKS_GREETING) {
		size_t used;
		bool no_auth;
		enum parse_result r = socks_parse_greeting((unsigned char *)c->head, c->head_len,
							   &used, &no_auth);
		if (r == PARSE_MORE)
			return;
		if (r == PARSE_BAD || !no_auth) {
			static const unsigned char none[] = {5, 0xff};
			to_client(c, none, sizeof(none), true);
			audit_conn(c, "deny", "SOCKS5 greeting without the no-authentication method");
			return;
		}
		consume(c, used);
		to_client(c, (const unsigned char[]){5, 0}, 2, false);
		c->st = ST_SOCKS_REQUEST;
	}
	if (c->st == ST_SOCKS_REQUEST) {
		struct socks_request req;
		enum parse_result r = socks_parse_request((unsigned char *)c->head, c->head_len, &req);
		if (r == PARSE_MORE)
			return;
		if (r == PARSE_BAD) {
			unsigned char rep[10] = {5, (unsigned char)req.reply, 0, 1};
			to_client(c, rep, sizeof(rep), true);
			audit_conn(c, "deny", req.reply == 7 ? "SOCKS5 command not supported"
							      : "malformed SOCKS5 request");
			return;
		}
		snprintf(c->host, sizeof(c->host), "%s", req.host);
		c->port = req.port;
		consume(c, req.len);
		decide(c);
	}
}

/* ---------- captured connections ---------- */

/* Where a captured connection was going, from the NAT the rules made: an address the DNS stub
 * gave a name stands for that name; any other address stands for itself. False for a connection
 * made to the capture listener itself. */
static bool original_destination(struct conn *c, int family)
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
static const char *flight_mismatch(struct conn *c, const struct sniff *s, char *why, size_t size)
{
	const char *want = c->name[0] ? c->name : c->host, *bad;
	char sni[256];
	uint8_t raw[16];

	if (s->name[0])
		snprintf(c->sni, sizeof(c->sni), "%s", s->name);
	if (s->odd) {
		snprintf(why, size, "the %s destination in its first bytes cannot be checked",
			 s->proto);
		return why;
	}
	if (!s->name[0] || host_literal(want, raw))
		return NULL;
	if (egress_host_name(s->name, sni, &bad) && !strcmp(sni, want))
		return NULL;
	snprintf(why, size, "the connection was allowed for %.200s, but its %s names %.200s", want,
		 strcmp(s->proto, "tls") ? "HTTP request" : "TLS server name", s->name);
	return why;
}

/* The rules decide on the name the address stands for, once the first bytes (if any came in
 * time) agree with it. */
static void capture_decide(struct conn *c, const struct sniff *s)
{
	char why[512];

	if (s) {
		c->sniff_http = !strcmp(s->proto, "http");
		c->sniff_head = s->head_len;
		snprintf(c->method, sizeof(c->method), "%s", c->sniff_http ? s->method : "");
		snprintf(c->sni, sizeof(c->sni), "%s", s->name);
	}
	if (c->unmapped) {
		snprintf(why, sizeof(why),
			 "%s is in the DNS stub's range but no name was given it in this run",
			 c->host);
		refuse(c, why);
		return;
	}
	if (s && flight_mismatch(c, s, why, sizeof(why))) {
		refuse(c, why);
		return;
	}
	/* decided on the name alone: whatever the client sends first is still checked */
	c->late_sniff = !s;
	decide(c);
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
	capture_decide(c, &s);
}

static void read_head(struct conn *c)
{
	ssize_t n = read(c->cl.fd, c->head + c->head_len, EGRESS_MAX_HEAD - c->head_len);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close_conn(c, "client closed before its request");
		return;
	}
	if (n < 0)
		return;
	c->head_len += (size_t)n;
	if (c->st == ST_SNIFF)
		parse_capture(c);
	else if (!strcmp(c->proto, "socks"))
		parse_socks(c);
	else
		parse_http(c);
	if (!c->dead && !c->close_after_flush && !c->audited && c->head_len == EGRESS_MAX_HEAD &&
	    (c->st == ST_HTTP_HEAD || c->st == ST_SOCKS_GREETING || c->st == ST_SOCKS_REQUEST))
		bad_request(c, "request head too large");
}

/* ---------- a connection's events ---------- */

static void update_interest(struct conn *c)
{
	uint32_t cl = 0, up = 0;

	if (c->st == ST_RELAY) {
		if (!flow_held(&c->to_up) && !c->to_up.eof)
			cl |= EPOLLIN;
		if (!flow_held(&c->to_client) && !c->to_client.eof)
			up |= EPOLLIN;
	} else if (c->st == ST_HTTP_HEAD || c->st == ST_SOCKS_GREETING ||
		   c->st == ST_SOCKS_REQUEST || c->st == ST_SNIFF) {
		cl |= EPOLLIN;
	} else if (c->st == ST_CONNECT) {
		up |= EPOLLOUT;
	}
	if (flow_held(&c->to_up))
		up |= EPOLLOUT;
	if (flow_held(&c->to_client))
		cl |= EPOLLOUT;
	if (c->close_after_flush)
		cl = EPOLLOUT;
	watch(c->px, &c->cl, cl);
	watch(c->px, &c->up, up);
}

static void on_conn_event(struct endpoint *ep, uint32_t events)
{
	struct conn *c = ep->c;

	if (c->close_after_flush) {
		struct flow *f = &c->to_client;
		ssize_t n = send(c->cl.fd, f->buf + f->off, f->len - f->off, MSG_NOSIGNAL);
		if (n > 0)
			f->off += (size_t)n;
		if (n < 0 && errno != EAGAIN)
			f->off = f->len;
		if (f->off >= f->len)
			close_conn(c, "refused");
		return;
	}
	switch (c->st) {
	case ST_HTTP_HEAD:
	case ST_SOCKS_GREETING:
	case ST_SOCKS_REQUEST:
	case ST_SNIFF:
		if (ep->side == CLIENT && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			read_head(c);
		if (!c->dead && c->to_client.len && ep->side == CLIENT && (events & EPOLLOUT))
			pump(c, &c->up, &c->cl, &c->to_client, &c->bytes_in);
		break;
	case ST_CONNECT:
		if (ep->side == UPSTREAM)
			on_connected(c);
		break;
	case ST_RELAY:
		if (c->late_sniff && ep->side == CLIENT &&
		    (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			read_late(c);
		if (c->dead)
			return;
		if ((!c->late_sniff && !pump(c, &c->cl, &c->up, &c->to_up, &c->bytes_out)) ||
		    !pump(c, &c->up, &c->cl, &c->to_client, &c->bytes_in))
			return;
		if (c->to_up.eof && c->to_client.eof && !flow_held(&c->to_up) &&
		    !flow_held(&c->to_client)) {
			close_conn(c, "closed");
			return;
		}
		break;
	case ST_RESOLVE:
		break;
	}
	if (!c->dead)
		update_interest(c);
}

/* ---------- the DNS stub ---------- */

static const char *rcode_name(int rcode)
{
	static const char *const names[] = {"NOERROR", "FORMERR", "SERVFAIL",
					    "NXDOMAIN", "NOTIMP", "REFUSED"};
	return rcode >= 0 && rcode <= DNS_REFUSED ? names[rcode] : "?";
}

static void audit_dns(struct proxy *px, const struct dns_query *q, int rcode, const char *rule,
		      const uint8_t *addr, const char *reason)
{
	struct json *j = audit_begin(px->a, "dns");
	char text[INET_ADDRSTRLEN];
	struct ab_err e;

	json_kv_str(j, "decision", rcode == DNS_NOERROR ? "allow" : "deny");
	json_kv_str(j, "name", q->name[0] ? q->name : NULL);
	json_kv_uint(j, "type", q->qtype);
	json_kv_str(j, "rcode", rcode_name(rcode));
	json_kv_str(j, "rule", rule);
	if (addr && inet_ntop(AF_INET, addr, text, sizeof(text)))
		json_kv_str(j, "address", text);
	if (reason)
		json_kv_str(j, "reason", reason);
	if (audit_emit(px->a, &e) < 0)
		audit_note(px, &e);
}

/* The answer to one query: an allowed name's A record is an address of the reserved range; any
 * other type of an allowed name has no data; a name no rule allows does not exist. No query is
 * ever passed to a real resolver. */
static int dns_decide(struct proxy *px, const struct dns_query *q, const uint8_t **addr,
		      uint8_t buf[4])
{
	const char *rule = NULL, *bad, *reason = NULL;
	char name[256];
	int rcode = DNS_NOERROR;

	*addr = NULL;
	if (q->qclass != DNS_CLASS_IN) {
		rcode = DNS_REFUSED, reason = "not class IN";
	} else if (q->odd_name || !egress_host_name(q->name, name, &bad)) {
		rcode = DNS_NXDOMAIN, reason = "not a host name";
	} else if (!egress_name_allowed(&px->rules, name, &rule)) {
		rcode = DNS_NXDOMAIN, reason = rule ? "denied by rule" : "no allow rule matches";
	} else if (q->qtype == DNS_TYPE_A) {
		if (dns_map_address(&px->names, name, buf) == 0)
			*addr = buf;
		else
			rcode = DNS_SERVFAIL, reason = "the stub's table of names is full";
	}
	audit_dns(px, q, rcode, rule, *addr, reason);
	return rcode;
}

static void dns_serve(struct proxy *px, int fd, const uint8_t *pkt, size_t len,
		      const struct sockaddr *peer, socklen_t peerlen)
{
	uint8_t out[512], buf[4];
	const uint8_t *addr = NULL;
	struct dns_query q;
	int rcode = dns_parse_query(pkt, len, &q);
	size_t n;

	if (rcode < 0)
		return;
	if (px->dns_queries >= DNS_MAX_QUERIES) {
		if (px->dns_queries++ == DNS_MAX_QUERIES)
			audit_limit(px, "dns-queries", NULL);
		rcode = DNS_REFUSED;
	} else if (rcode > 0) {
		px->dns_queries++;
		audit_dns(px, &q, rcode, NULL, NULL, "malformed or unsupported query");
	} else {
		px->dns_queries++;
		rcode = dns_decide(px, &q, &addr, buf);
	}
	n = dns_build_answer(&q, pkt, rcode, addr, out, sizeof(out));
	if (n == 0) /* a question too long to echo in 512 bytes */
		n = dns_build_answer(&(struct dns_query){.id = q.id, .rd = q.rd}, pkt,
				     DNS_SERVFAIL, NULL, out, sizeof(out));
	sendto(fd, out, n, MSG_DONTWAIT | MSG_NOSIGNAL, peer, peerlen); /* UDP: may be lost */
}

/* A bounded number of datagrams per round, so a flood cannot starve the connections. */
static void on_dns(struct proxy *px, int fd)
{
	uint8_t pkt[1500];

	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t peerlen = sizeof(peer);
		ssize_t n = recvfrom(fd, pkt, sizeof(pkt), MSG_DONTWAIT, (struct sockaddr *)&peer,
				     &peerlen);
		if (n < 0)
			return;
		dns_serve(px, fd, pkt, (size_t)n, (struct sockaddr *)&peer, peerlen);
	}
}

/* ---------- the loop ---------- */

/* Ticks every SNIFF_MS while a captured connection may be waiting for its first bytes, else
 * every second (the head and connect timeouts). */
static void set_timer(struct proxy *px, bool fast)
{
	struct itimerspec its = {{1, 0}, {1, 0}};

	if (fast == px->fast_timer)
		return;
	if (fast)
		its.it_interval = its.it_value = (struct timespec){0, SNIFF_MS * 1000000L};
	if (timerfd_settime(px->tfd, 0, &its, NULL) == 0)
		px->fast_timer = fast;
}

/* A captured connection: false when it was closed at once. */
static bool start_sniff(struct conn *c, int which)
{
	if (!original_destination(c, which == EGRESS_CAPTURE + CAPTURE_TCP4 ? AF_INET : AF_INET6)) {
		close_conn(c, "a connection to the capture listener itself (no redirected "
			      "destination)");
		return false;
	}
	c->deadline_ms = now_ms() + SNIFF_MS;
	set_timer(c->px, true);
	return true;
}

static void note_cap(struct proxy *px)
{
	if (!px->cap_hit) {
		px->cap_hit = true;
		audit_limit(px, "connections", NULL);
	}
}

/* Out of fds or memory, accept4 fails and leaves the connection queued, so the listener stays
 * readable: it leaves the set until a connection closes or the timer ticks, or the loop spins. */
static void pause_listeners(struct proxy *px)
{
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		if (px->listeners[i] >= 0)
			watch(px, &px->lep[i], 0);
	px->listeners_paused = true;
	note_cap(px);
}

static void resume_listeners(struct proxy *px)
{
	if (!px->listeners_paused)
		return;
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		if (px->listeners[i] >= 0)
			watch(px, &px->lep[i], EPOLLIN);
	px->listeners_paused = false;
}

static void on_accept(struct proxy *px, int which)
{
	for (;;) {
		int fd = accept4(px->listeners[which], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c = NULL;
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				pause_listeners(px);
			return;
		}
		if (px->n_conns >= PROXY_MAX_CONNECTIONS || !(c = calloc(1, sizeof(*c))) ||
		    !(c->head = malloc(EGRESS_MAX_HEAD))) {
			free(c);
			close(fd); /* over the limit: refused at once, the loop stays responsive */
			note_cap(px);
			continue;
		}
		c->px = px;
		c->cl = (struct endpoint){c, CLIENT, fd, 0};
		c->up = (struct endpoint){c, UPSTREAM, -1, 0};
		c->to_up.pipe[0] = c->to_up.pipe[1] = -1;
		c->to_client.pipe[0] = c->to_client.pipe[1] = -1;
		c->proto = which == EGRESS_HTTP ? "http" : which == EGRESS_SOCKS ? "socks" : "capture";
		c->st = which == EGRESS_HTTP	? ST_HTTP_HEAD
			: which == EGRESS_SOCKS ? ST_SOCKS_GREETING
						: ST_SNIFF;
		clock_gettime(CLOCK_MONOTONIC, &c->t0);
		c->deadline_ms = now_ms() + PROXY_HEAD_TIMEOUT_MS;
		c->next = px->conns;
		if (px->conns)
			px->conns->prev = c;
		px->conns = c;
		px->n_conns++;
		if (c->st == ST_SNIFF && !start_sniff(c, which))
			continue;
		watch(px, &c->cl, EPOLLIN);
	}
}

static void on_timer(struct proxy *px)
{
	uint64_t ticks, now = now_ms();
	struct conn *c = px->conns, *next;

	if (read(px->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	resume_listeners(px);
	bool sniffing = false;

	for (; c; c = next) {
		next = c->next;
		if (c->deadline_ms && now > c->deadline_ms) {
			if (c->st == ST_CONNECT)
				refuse(c, "upstream connect timed out");
			else if (c->st == ST_SNIFF && c->head_len == 0)
				capture_decide(c, NULL); /* the server may be the one to speak first */
			else if (c->st != ST_RESOLVE)
				close_conn(c, "request head timed out");
			if (!c->dead && !c->lookup_pending)
				update_interest(c);
		}
		sniffing |= !c->dead && c->st == ST_SNIFF && c->head_len == 0;
	}
	set_timer(px, sniffing);
}

static void on_lookups(struct proxy *px)
{
	struct lookup *l;

	while (read(px->resolved[0], &l, sizeof(l)) == (ssize_t)sizeof(l)) {
		struct conn *c = l->c;
		on_resolved(l);
		if (!c->dead && !c->lookup_pending)
			update_interest(c);
	}
}

static void on_listener(struct proxy *px, const struct endpoint *ep)
{
	for (int which = 0; which < EGRESS_SOCKETS; which++) {
		if (ep != &px->lep[which])
			continue;
		if (which == EGRESS_CAPTURE + CAPTURE_DNS4 || which == EGRESS_CAPTURE + CAPTURE_DNS6)
			on_dns(px, ep->fd);
		else
			on_accept(px, which);
	}
}

int proxy_dispatch(struct proxy *px, struct ab_err *e)
{
	struct epoll_event evs[64];
	int n = epoll_wait(px->epfd, evs, 64, 0);

	for (int i = 0; i < n; i++) {
		struct endpoint *ep = evs[i].data.ptr;
		if (ep == &px->timer_ep)
			on_timer(px);
		else if (ep == &px->resolved_ep)
			on_lookups(px);
		else if (!ep->c)
			on_listener(px, ep);
		else if (!ep->c->dead && ep->fd >= 0)
			on_conn_event(ep, evs[i].events);
	}
	free_graveyard(px);
	if (px->audit_failed) {
		*e = px->audit_err;
		return -1;
	}
	return 0;
}

int proxy_fd(const struct proxy *px)
{
	return px->epfd;
}

static int add_fixed(struct proxy *px, struct endpoint *ep, int fd)
{
	ep->fd = fd;
	ep->c = NULL;
	ep->events = 0;
	watch(px, ep, EPOLLIN);
	return ep->events ? 0 : -1;
}

static int add_listeners(struct proxy *px)
{
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		if (px->listeners[i] >= 0 && add_fixed(px, &px->lep[i], px->listeners[i]) < 0)
			return -1;
	return 0;
}

/* Each tunnel holds two fds: raise the supervisor's own soft limit (the sandbox has its own). */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Pipes may use only the fds that PROXY_MAX_CONNECTIONS tunnels (two sockets each, and a
 * resolver's socket while their names are looked up) and the supervisor's own leave free, so a
 * bulk transfer can never cost a new connection its fds. */
static size_t pipe_budget(void)
{
	const rlim_t reserved = 3 * (rlim_t)PROXY_MAX_CONNECTIONS + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur <= reserved)
		return 0;
	if (rl.rlim_cur == RLIM_INFINITY || (rl.rlim_cur - reserved) / 2 > RELAY_MAX_PIPES)
		return RELAY_MAX_PIPES;
	return (size_t)((rl.rlim_cur - reserved) / 2);
}

int proxy_start(struct proxy **out, const struct policy *p, const int fds[EGRESS_SOCKETS],
		struct audit *a, struct ab_err *e)
{
	struct itimerspec its = {{1, 0}, {1, 0}};
	const struct hostlimits_conf per_host = {p->net_host_max_connections, p->net_host_rate,
						 p->net_host_max_bytes_out,
						 p->net_host_max_bytes_in};
	struct proxy *px = calloc(1, sizeof(*px));

	if (!px) {
		for (int i = 0; i < EGRESS_SOCKETS; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return ab_fail(e, ENOMEM, "proxy");
	}
	px->a = a;
	px->p = p;
	px->tokens = (double)p->net_rate;
	px->refilled_ms = now_ms();
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		px->listeners[i] = fds[i];
	px->resolved[0] = px->resolved[1] = px->tfd = -1;
	px->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (px->epfd < 0 || !(px->chunk = malloc(RELAY_CHUNK)) ||
	    egress_rules_build(p, &px->rules, e) < 0 ||
	    pipe2(px->resolved, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    (px->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
	    timerfd_settime(px->tfd, 0, &its, NULL) < 0 || add_listeners(px) < 0 ||
	    add_fixed(px, &px->timer_ep, px->tfd) < 0 ||
	    add_fixed(px, &px->resolved_ep, px->resolved[0]) < 0 ||
	    (hostlimits_enabled(&per_host) &&
	     hostlimits_init(&px->hosts, &per_host, HOSTLIMITS_MAX_HOSTS) < 0)) {
		if (!e->msg[0])
			ab_fail(e, errno, "cannot start the egress proxy");
		proxy_stop(px);
		return -1;
	}
	/* resolver threads block in write() only if the pipe fills; make that impossible to
	 * deadlock by keeping the writer end blocking */
	fcntl(px->resolved[1], F_SETFL, 0);
	raise_fd_limit();
	px->max_pipes = pipe_budget();
	*out = px;
	return 0;
}

void proxy_stop(struct proxy *px)
{
	if (!px)
		return;
	while (px->conns)
		close_conn(px->conns, "the sandbox ended");
	on_lookups(px); /* lookups already done */
	free_graveyard(px);
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		if (px->listeners[i] >= 0)
			close(px->listeners[i]);
	dns_map_free(&px->names);
	if (px->tfd >= 0)
		close(px->tfd);
	if (px->epfd >= 0)
		close(px->epfd);
	egress_rules_free(&px->rules);
	hostlimits_free(&px->hosts);
	free(px->chunk);
	px->chunk = NULL;
	/* A resolver thread still running will write to the pipe: closing it could hand its fd
	 * number to something else. Left open (with the engine) for the few moments until exit. */
	if (px->lookups)
		return;
	if (px->resolved[0] >= 0)
		close(px->resolved[0]);
	if (px->resolved[1] >= 0)
		close(px->resolved[1]);
	free(px);
}

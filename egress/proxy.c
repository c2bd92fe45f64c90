/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The egress proxy engine: one epoll loop in the supervisor, non-blocking sockets, names resolved
 * by short-lived threads so the loop never blocks. Each connection moves through the states of
 * enum conn_state (proxy_conn.h):
 *   first bytes (HTTP request head, SOCKS5 greeting + request, a capture's sniff) → decision →
 *   resolve → SSRF guard → connect → relay or interception → close,
 * and is audited at its decision (deny) or at its close (allow). Here: the listeners, the loop,
 * a connection's lifetime and its events. The stages are front.c (first bytes), dial.c
 * (decision to connect), relay.c, intercept.c and, for the capture, dns_stub.c. */
#include "proxy.h"

#include <errno.h>
#include <fcntl.h>
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
#include "sock_owner.h"

/* How long a captured connection may keep quiet before it is decided without its first bytes
 * (a protocol where the server speaks first). */
#define SNIFF_MS 200

/* Pipes open at once, at most (2 fds each; fewer when the fd limit leaves less room, see
 * pipe_budget): past it, bulk flows copy. Bounds what pipes can hold to 64 MiB. */
#define RELAY_MAX_PIPES 64

/* Connections whose exec one dispatch round may look for (proxy_attribute): past it, a flood of
 * connections goes unplaced rather than hold the loop in /proc. */
#define PROXY_ATTRIB_PER_ROUND 16
/* After the command: how long connections still open may take to end on their own (an
 * upstream's close in flight), and at most how many rounds of the loop that takes. */
#define PROXY_SETTLE_MS 50
#define PROXY_SETTLE_ROUNDS 64

uint64_t proxy_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t proxy_ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (uint64_t)((t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000);
}

/* ---------- audit ---------- */

const char *conn_proto_name(enum conn_proto proto)
{
	switch (proto) {
	case PROTO_HTTP:
		return "http";
	case PROTO_CONNECT:
		return "connect";
	case PROTO_SOCKS:
		return "socks";
	case PROTO_CAPTURE:
		return "capture";
	}
	return "?";
}

void proxy_audit_note(struct proxy *px, struct ab_err *e)
{
	if (!px->audit_failed) {
		px->audit_failed = 1;
		px->audit_err = *e;
	}
}

void conn_audit(struct conn *c, const char *decision, const char *reason)
{
	struct proxy *px = c->px;
	struct json *j = audit_begin(px->a, "net");
	struct ab_err e;

	c->audited = true;
	audit_decision(px->a, decision);
	json_kv_str(j, "protocol", conn_proto_name(c->proto));
	json_kv_str(j, "host", c->host[0] ? c->host : NULL);
	json_kv_uint(j, "port", c->port);
	if (c->addr[0])
		json_kv_str(j, "address", c->addr);
	json_kv_str(j, "rule", c->rule);
	audit_kv_exec(j, c->exec);
	if (c->http_rule)
		json_kv_str(j, "http_rule", c->http_rule);
	if (c->pin)
		json_kv_str(j, "resolve", c->pin);
	if (c->sni[0])
		json_kv_str(j, "sni", c->sni);
	if (c->tls)
		json_kv_bool(j, "intercepted", true);
	if (c->method[0])
		json_kv_str(j, "method", c->method);
	if (c->url[0])
		json_kv_str(j, "url", c->url);
	if (reason)
		json_kv_str(j, "reason", reason);
	json_kv_uint(j, "bytes_out", c->bytes_out);
	json_kv_uint(j, "bytes_in", c->bytes_in);
	json_kv_uint(j, "duration_ms", proxy_ms_since(&c->t0));
	if (audit_emit(px->a, &e) < 0)
		proxy_audit_note(px, &e);
}

/* host: the host a per-host limit counts, else NULL */
void proxy_audit_limit(struct proxy *px, const char *limit, const char *host)
{
	struct json *j = audit_begin(px->a, "limit");
	struct ab_err e;

	json_kv_str(j, "limit", limit);
	if (host)
		json_kv_str(j, "host", host);
	if (audit_emit(px->a, &e) < 0)
		proxy_audit_note(px, &e);
}

/* ---------- connection lifetime ---------- */

/* An fd with nothing to wait for leaves the set, so a hung-up socket cannot spin the loop. */
void proxy_watch(struct proxy *px, struct endpoint *ep, uint32_t events)
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

void proxy_close_endpoint(struct proxy *px, struct endpoint *ep)
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
void conn_bury(struct conn *c)
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
		free(c->request);
		free(c->target);
		cred_conn_free(c);
		intercept_free(c);
		free(c);
	}
}

static void resume_listeners(struct proxy *px);

void conn_audit_end(struct conn *c, const char *reason)
{
	if (!c->audited && c->refused)
		conn_audit(c, "deny", c->refused);
	else if (!c->audited)
		conn_audit(c, c->counted ? "allow" : "none", reason);
}

void conn_release_limits(struct conn *c)
{
	if (c->counted)
		c->px->upstreams--;
	if (c->per_host)
		hostlimits_release(c->per_host);
	c->counted = false;
	c->per_host = NULL;
}

void conn_close(struct conn *c, const char *reason)
{
	struct proxy *px = c->px;

	if (c->dead)
		return;
	conn_audit_end(c, reason);
	ask_release(c);
	conn_release_limits(c);
	proxy_close_endpoint(px, &c->cl);
	proxy_close_endpoint(px, &c->up);
	flow_close_pipe(px, &c->to_up);
	flow_close_pipe(px, &c->to_client);
	c->dead = true;
	if (c->lingering)
		px->n_lingering--;
	if (c->prev)
		c->prev->next = c->next;
	else
		px->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->n_conns--;
	if (!c->lookup_pending)
		conn_bury(c);
	resume_listeners(c->px);
}

/* Queues bytes for the client and, with close_after, ends the connection once they are sent. */
void conn_to_client(struct conn *c, const void *data, size_t n, bool close_after)
{
	struct flow *f = &c->to_client;

	if (!flow_put(f, data, n)) {
		conn_close(c, "out of memory");
		return;
	}
	c->close_after_flush |= close_after;
	proxy_watch(c->px, &c->cl, EPOLLOUT);
}

void conn_refuse(struct conn *c, const char *why)
{
	if (c->proto == PROTO_CAPTURE && !c->sniff_http) {
		/* a client that did not ask a proxy cannot be told why: the audit trail says */
		conn_audit(c, "deny", why);
		conn_close(c, why);
		return;
	}
	if (c->proto == PROTO_SOCKS) {
		static const unsigned char denied[] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};
		conn_to_client(c, denied, sizeof(denied), true); /* 0x02: not allowed by ruleset */
	} else {
		char body[1024]; /* host and reason are bounded (256 and 512 bytes) */
		snprintf(body, sizeof(body), "agentbox denied %s:%u: %s\n", c->host, c->port, why);
		conn_http_refusal(c, 403, why, body);
	}
	conn_audit(c, "deny", why);
}

void conn_http_refusal(struct conn *c, int status, const char *denied, const char *body)
{
	char resp[2560];
	int n = snprintf(
	    resp, sizeof(resp),
	    "HTTP/1.1 %d %s\r\n%s%.1000s%sContent-Type: text/plain\r\nConnection: close\r\n"
	    "Content-Length: %zu\r\n\r\n%s",
	    status,
	    status == 403   ? "Forbidden"
	    : status == 431 ? "Request Header Fields Too Large"
	    : status == 502 ? "Bad Gateway"
			    : "Bad Request",
	    denied ? "X-Agentbox-Denied: " : "", denied ? denied : "", denied ? "\r\n" : "",
	    strlen(body), body);
	size_t len = n > 0 && (size_t)n < sizeof(resp) ? (size_t)n : strlen(resp);

	if (c->tls)
		intercept_refusal(c, status, denied, body, resp, len);
	else
		conn_to_client(c, resp, len, true);
}

/* ---------- a connection's events ---------- */

void conn_update_interest(struct conn *c)
{
	uint32_t cl = 0, up = 0;

	if (c->st == ST_RELAY && c->tls) {
		cl |= intercept_reads(c, true) ? EPOLLIN : 0;
		up |= intercept_reads(c, false) ? EPOLLIN : 0;
	} else if (c->st == ST_RELAY) {
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
	if (c->lingering)
		cl = EPOLLIN, up = 0;
	proxy_watch(c->px, &c->cl, cl);
	proxy_watch(c->px, &c->up, up);
}

/* A connection that is ending (close_after_flush, whatever its state): what is queued for the
 * client goes, then it closes. */
static void send_then_close(struct conn *c)
{
	struct flow *f = &c->to_client;
	ssize_t n = send(c->cl.fd, f->buf + f->off, f->len - f->off, MSG_NOSIGNAL);

	if (n > 0)
		f->off += (size_t)n;
	if (n < 0 && errno != EAGAIN)
		f->off = f->len;
	if (f->off >= f->len) /* an intercepted connection's end is its exchange's */
		conn_linger(c, c->tls ? intercept_end_reason(c) : "refused");
}

/* ST_RELAY: held first bytes, then intercepted or relayed bytes (see enum conn_state). false
 * when the connection was closed. */
static bool on_relay_event(struct conn *c, const struct endpoint *ep, uint32_t events)
{
	if (c->late_sniff && ep->side == CLIENT && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		dial_read_late(c);
	if (c->dead || (c->tls && !intercept_pump(c)))
		return false;
	if (c->tls)
		return true;
	if ((!c->late_sniff && !relay_pump(c, &c->cl, &c->up, &c->to_up, &c->bytes_out)) ||
	    !relay_pump(c, &c->up, &c->cl, &c->to_client, &c->bytes_in))
		return false;
	if (c->to_up.eof && c->to_client.eof && !flow_held(&c->to_up) &&
	    !flow_held(&c->to_client)) {
		conn_close(c, "closed");
		return false;
	}
	if (c->refused) /* it waits for the first response: while bytes move */
		c->deadline_ms = proxy_now_ms() + PROXY_HEAD_TIMEOUT_MS;
	return true;
}

static void on_conn_event(struct endpoint *ep, uint32_t events)
{
	struct conn *c = ep->c;

	if (c->lingering) {
		conn_linger_read(c);
		return;
	}
	if (c->close_after_flush) {
		send_then_close(c);
		return;
	}
	switch (c->st) {
	case ST_HTTP_HEAD:
	case ST_SOCKS_GREETING:
	case ST_SOCKS_REQUEST:
	case ST_SNIFF:
		if (ep->side == CLIENT && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			front_read_head(c);
		if (!c->dead && c->to_client.len && ep->side == CLIENT && (events & EPOLLOUT))
			relay_pump(c, &c->up, &c->cl, &c->to_client, &c->bytes_in);
		break;
	case ST_CONNECT:
		if (ep->side == UPSTREAM)
			dial_on_connected(c);
		break;
	case ST_RELAY:
		if (!on_relay_event(c, ep, events))
			return;
		break;
	case ST_ASK: /* the client is not read while held; a SOCKS5 greeting's answer goes */
		if (c->to_client.len && ep->side == CLIENT && (events & EPOLLOUT))
			relay_pump(c, &c->up, &c->cl, &c->to_client, &c->bytes_in);
		break;
	case ST_RESOLVE:
		break;
	}
	if (!c->dead)
		conn_update_interest(c);
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
	if (!front_original_destination(c, which == EGRESS_CAPTURE + CAPTURE_TCP4 ? AF_INET
										  : AF_INET6)) {
		conn_close(c, "a connection to the capture listener itself (no redirected "
			      "destination)");
		return false;
	}
	c->deadline_ms = proxy_now_ms() + SNIFF_MS;
	set_timer(c->px, true);
	return true;
}

static void note_cap(struct proxy *px)
{
	if (!px->cap_hit) {
		px->cap_hit = true;
		proxy_audit_limit(px, "connections", NULL);
	}
}

/* Out of fds or memory, accept4 fails and leaves the connection queued, so the listener stays
 * readable: it leaves the set until a connection closes or the timer ticks, or the loop spins. */
static void pause_listeners(struct proxy *px)
{
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		if (px->listeners[i] >= 0)
			proxy_watch(px, &px->lep[i], 0);
	px->listeners_paused = true;
	note_cap(px);
}

static void resume_listeners(struct proxy *px)
{
	if (!px->listeners_paused)
		return;
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		if (px->listeners[i] >= 0)
			proxy_watch(px, &px->lep[i], EPOLLIN);
	px->listeners_paused = false;
}

void proxy_attribute(struct proxy *px, pid_t pid1, long (*fn)(void *ctx, int pid), void *ctx)
{
	px->attrib = fn;
	px->attrib_ctx = ctx;
	px->attrib_pid1 = pid1;
}

/* Before the first byte is read: the process that connected is still there to be found. */
static long attribute(struct proxy *px, int fd)
{
	pid_t pid;

	if (!px->attrib)
		return -2;
	/* a flood of connections must not hold the loop in /proc: past the budget, unplaced */
	if (px->attrib_left == 0)
		return -1;
	px->attrib_left--;
	pid = sock_owner(px->attrib_pid1, fd);
	return pid > 0 ? px->attrib(px->attrib_ctx, pid) : -1;
}

/* At the cap, or out of fds, a connection that only lingers (its end told and audited; its
 * client's last bytes read so that it sees the answer, not a reset) gives its place to a new
 * one: the oldest goes. Else a command that keeps many ended connections open would shut itself
 * out for LINGER_MS. What its client sent is read first, as lingering reads it: closing a
 * socket with unread bytes sends a reset, which may cost the client the answer it has not read
 * yet. False when none lingers. */
static bool evict_lingering(struct proxy *px)
{
	struct conn *oldest = NULL;

	if (px->n_lingering == 0)
		return false; /* a flood at the cap with none lingering: no walk per connection */
	for (struct conn *c = px->conns; c; c = c->next)
		if (c->lingering && (!oldest || c->deadline_ms <= oldest->deadline_ms))
			oldest = c;
	if (!oldest)
		return false;
	conn_linger_read(oldest);     /* may close it already: at its end, or past the bound */
	conn_close(oldest, "closed"); /* a no-op then; audited when its lingering began */
	return true;
}

static void on_accept(struct proxy *px, int which)
{
	for (;;) {
		int fd = accept4(px->listeners[which], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c = NULL;
		if (fd < 0) {
			/* out of fds: a lingering connection gives its one back, as at the cap */
			if ((errno == EMFILE || errno == ENFILE) && evict_lingering(px))
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				pause_listeners(px);
			return;
		}
		if ((px->n_conns >= PROXY_MAX_CONNECTIONS && !evict_lingering(px)) ||
		    !(c = calloc(1, sizeof(*c))) || !(c->head = malloc(EGRESS_MAX_HEAD))) {
			free(c);
			close(fd); /* over the limit: refused at once, the loop stays responsive */
			note_cap(px);
			continue;
		}
		c->px = px;
		c->exec = attribute(px, fd);
		c->cl = (struct endpoint){c, CLIENT, fd, 0};
		c->up = (struct endpoint){c, UPSTREAM, -1, 0};
		c->to_up.pipe[0] = c->to_up.pipe[1] = -1;
		c->to_client.pipe[0] = c->to_client.pipe[1] = -1;
		c->proto = which == EGRESS_HTTP	   ? PROTO_HTTP
			   : which == EGRESS_SOCKS ? PROTO_SOCKS
						   : PROTO_CAPTURE;
		c->st = which == EGRESS_HTTP	? ST_HTTP_HEAD
			: which == EGRESS_SOCKS ? ST_SOCKS_GREETING
						: ST_SNIFF;
		clock_gettime(CLOCK_MONOTONIC, &c->t0);
		c->deadline_ms = proxy_now_ms() + PROXY_HEAD_TIMEOUT_MS;
		c->next = px->conns;
		if (px->conns)
			px->conns->prev = c;
		px->conns = c;
		px->n_conns++;
		if (c->st == ST_SNIFF && !start_sniff(c, which))
			continue;
		proxy_watch(px, &c->cl, EPOLLIN);
	}
}

static void on_timer(struct proxy *px)
{
	uint64_t ticks, now = proxy_now_ms();
	struct conn *c = px->conns, *next;

	if (read(px->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	resume_listeners(px);
	ask_tick(px, now);
	bool sniffing = false;

	for (; c; c = next) {
		next = c->next;
		if (c->deadline_ms && now > c->deadline_ms) {
			if (c->lingering)
				conn_close(c, "closed"); /* audited when it began */
			else if (c->st == ST_CONNECT)
				conn_refuse(c, "upstream connect timed out");
			else if (c->st == ST_SNIFF && c->head_len == 0)
				front_capture_decide(
				    c, NULL); /* the server may be the one to speak first */
			else if (c->st != ST_RESOLVE)
				conn_close(c, "request head timed out");
			if (!c->dead && !c->lookup_pending)
				conn_update_interest(c);
		}
		sniffing |= !c->dead && c->st == ST_SNIFF && c->head_len == 0;
	}
	set_timer(px, sniffing);
}

static void on_listener(struct proxy *px, const struct endpoint *ep)
{
	for (int which = 0; which < EGRESS_SOCKETS; which++) {
		if (ep != &px->lep[which])
			continue;
		if (which == EGRESS_CAPTURE + CAPTURE_DNS4 ||
		    which == EGRESS_CAPTURE + CAPTURE_DNS6)
			dns_stub_read(px, ep->fd);
		else
			on_accept(px, which);
	}
}

/* One round of what is ready within wait_ms: the count of events, or -1 when the audit trail
 * failed. */
static int dispatch_round(struct proxy *px, int wait_ms, struct ab_err *e)
{
	struct epoll_event evs[64];
	int n = epoll_wait(px->epfd, evs, 64, wait_ms);

	px->attrib_left = PROXY_ATTRIB_PER_ROUND;
	for (int i = 0; i < n; i++) {
		struct endpoint *ep = evs[i].data.ptr;
		if (ep == &px->timer_ep)
			on_timer(px);
		else if (ep == &px->resolved_ep)
			dial_on_lookups(px);
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
	return n > 0 ? n : 0;
}

int proxy_dispatch(struct proxy *px, struct ab_err *e)
{
	return dispatch_round(px, 0, e) < 0 ? -1 : 0;
}

int proxy_settle(struct proxy *px, struct ab_err *e)
{
	uint64_t end = proxy_now_ms() + PROXY_SETTLE_MS;

	/* bounded: an upstream that keeps sending, or never closes, must not hold the run open */
	for (int round = 0; px && px->conns && round < PROXY_SETTLE_ROUNDS; round++) {
		uint64_t now = proxy_now_ms();
		int n = dispatch_round(px, now >= end ? 0 : (int)(end - now), e);
		if (n < 0)
			return -1;
		if (n == 0)
			break; /* quiet for the rest of the grace */
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
	proxy_watch(px, ep, EPOLLIN);
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
		struct tls_ca *ca, const struct creds *creds, struct audit *a, struct ab_err *e)
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
	px->ca = ca;
	px->creds = creds;
	px->rules = &p->net;
	px->tokens = (double)p->net_rate;
	px->refilled_ms = proxy_now_ms();
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		px->listeners[i] = fds[i];
	px->resolved[0] = px->resolved[1] = px->tfd = -1;
	px->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (px->epfd < 0 || !(px->chunk = malloc(RELAY_CHUNK)) ||
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

void proxy_say_refusals(struct proxy *px, long exec, void (*say)(void *ctx, const char *line),
			void *ctx)
{
	if (px)
		ca_refusals_say(&px->ca_refusals, exec, say, ctx);
}

void proxy_stop(struct proxy *px)
{
	if (!px)
		return;
	while (px->conns)
		conn_close(px->conns, "the sandbox ended");
	dial_on_lookups(px); /* lookups already done */
	free_graveyard(px);
	for (int i = 0; i < EGRESS_SOCKETS; i++)
		if (px->listeners[i] >= 0)
			close(px->listeners[i]);
	dns_map_free(&px->names);
	if (px->tfd >= 0)
		close(px->tfd);
	if (px->epfd >= 0)
		close(px->epfd);
	hostlimits_free(&px->hosts);
	ca_refusals_free(&px->ca_refusals);
	intercept_stop(px);
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

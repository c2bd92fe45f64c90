/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's forwarded ports (see session_ports.h). A forward is a listening Unix socket in
 * the control socket's directory (0700, the caller's, hidden from every sandbox). A connection
 * to it: the peer checked as the control socket's are (refused: the control socket's bounded
 * refusal events), pid 1 asked for a socket connecting to 127.0.0.1:PORT (then [::1]:PORT when
 * nothing listens there), its connect seen to finish here, then the bytes relayed both ways
 * through one buffer per direction, each end's half-close passed on. */
#include "session_ports.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (32 * 1024)    /* each direction's buffer */
#define ACCEPTS_PER_ROUND 16 /* a burst of connections does not hold the loop */
#define MOVES_PER_ROUND 4    /* nor does a fast pair of ends */
#define TICK_MS 250	     /* the timer, while a connect is pending or a forward paused */
#define EVENTS 64

/* What an epoll event's pointer leads to: each of these begins with its tag. */
enum tag { TAG_FORWARD, TAG_CALLER, TAG_SERVER, TAG_TIMER };

struct conn;

/* One socket of a forwarded connection. */
struct end {
	enum tag tag;
	struct conn *c;
	int fd;
	uint32_t watched; /* the events epoll has for it; 0: not in the set */
};

/* Bytes one way: read into buf when it is empty, written out from off to len. */
struct flow {
	size_t off, len;
	bool eof;	/* its source has ended */
	bool shut;	/* and that end was passed on to its sink (shutdown SHUT_WR) */
	uint64_t bytes; /* written to its sink */
	char buf[CHUNK];
};

enum stage {
	ASKED,	  /* pid 1 was asked for the server's socket */
	DIALING,  /* its connect is under way */
	RELAYING, /* connected */
	ENDED,	  /* closed, its event written; freed at the end of the dispatch round */
};

struct conn {
	struct end caller, server;
	struct forward *fw;
	unsigned id;
	enum stage stage;
	bool tried6; /* 127.0.0.1 refused: ::1 asked */
	pid_t pid;   /* the caller, as the kernel gave it */
	uint64_t t0, deadline;
	struct conn *next_dead;
	struct flow in, out; /* in: caller to server (into the sandbox); out: server to caller */
};

struct forward {
	enum tag tag;
	int fd; /* -1: the slot is free */
	unsigned port;
	bool paused;	/* out of fds: not accepting until the timer's next tick */
	uint64_t conns; /* connections forwarded */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

struct timer {
	enum tag tag;
	int fd;
	bool armed;
};

struct session_ports {
	struct run *r;
	struct audit *a;
	const char *ns;
	struct session_refusals *refusals;
	char base[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* the control socket, no .sock */
	int ep;
	struct timer timer;
	struct forward fw[SESSION_PORTS_MAX];
	struct conn *conns[SESSION_PORT_CONNS_MAX];
	size_t n_conns;
	unsigned next_id;
	uint64_t last_end;
	struct conn *dead;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---------- events ---------- */

static int audit_forward(struct session_ports *p, const struct forward *f, const char *action,
			 const char *reason, struct ab_err *e)
{
	struct json *j = audit_begin(p->a, "session");

	json_kv_str(j, "action", action);
	json_kv_uint(j, "port", f->port);
	json_kv_str(j, "socket", f->path);
	if (reason) {
		json_kv_str(j, "reason", reason);
		json_kv_uint(j, "connections", f->conns);
	}
	return audit_emit(p->a, e);
}

/* One per forwarded connection, at its end; counted against [audit] event-budget, since a
 * caller's loop makes as many as it likes. */
static int audit_conn(struct session_ports *p, const struct conn *c, const char *outcome,
		      const char *error, struct ab_err *e)
{
	struct json *j = audit_begin(p->a, "session");

	json_kv_str(j, "action", "port-connection");
	json_kv_uint(j, "port", c->fw->port);
	json_kv_int(j, "pid", c->pid);
	json_kv_str(j, "outcome", outcome);
	if (error)
		json_kv_str(j, "error", error);
	json_kv_uint(j, "bytes_in", c->in.bytes);
	json_kv_uint(j, "bytes_out", c->out.bytes);
	json_kv_uint(j, "duration_ms", now_ms() - c->t0);
	audit_budgeted(p->a);
	return audit_emit(p->a, e);
}

/* ---------- the epoll set ---------- */

/* Level-triggered; an end wanting nothing leaves the set, so that a hang-up it reports (which
 * epoll reports whatever is asked) cannot spin the loop. */
static int watch(struct session_ports *p, struct end *x, uint32_t want)
{
	struct epoll_event ev = {.events = want, .data.ptr = x};
	int op = !want ? EPOLL_CTL_DEL : x->watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;

	if (want == x->watched || x->fd < 0)
		return 0;
	if (epoll_ctl(p->ep, op, x->fd, &ev) < 0)
		return -1;
	x->watched = want;
	return 0;
}

static void timer_set(struct session_ports *p, bool on)
{
	struct itimerspec its = {{0, TICK_MS * 1000000L}, {0, TICK_MS * 1000000L}};

	if (on == p->timer.armed)
		return;
	if (!on)
		its = (struct itimerspec){0};
	if (timerfd_settime(p->timer.fd, 0, &its, NULL) == 0)
		p->timer.armed = on;
}

static void close_end(struct session_ports *p, struct end *x)
{
	if (x->fd < 0)
		return;
	watch(p, x, 0);
	close(x->fd);
	x->fd = -1;
	x->watched = 0;
}

/* ---------- a connection ---------- */

/* A caller's bytes left unread at the close would reset its connection: one never relayed
 * ends with an end of stream instead (bounded: the caller may keep writing). */
static void drain(int fd)
{
	char sink[4096];

	for (int k = 0; k < 8; k++)
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			return;
}

static int conn_end(struct session_ports *p, struct conn *c, const char *outcome, const char *error,
		    struct ab_err *e)
{
	if (c->stage == ENDED)
		return 0;
	if (c->stage != RELAYING && c->caller.fd >= 0)
		drain(c->caller.fd);
	close_end(p, &c->caller);
	close_end(p, &c->server);
	c->stage = ENDED;
	for (size_t i = 0; i < p->n_conns; i++)
		if (p->conns[i] == c)
			p->conns[i] = p->conns[--p->n_conns];
	/* its events may still be in this round's batch: freed after it */
	c->next_dead = p->dead;
	p->dead = c;
	p->last_end = now_ms();
	return audit_conn(p, c, outcome, error, e);
}

static void bury(struct session_ports *p)
{
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next_dead;
		free(c);
	}
}

/* pid 1 is asked for a socket of the sandbox's network connecting to addr:port. */
static int ask(struct session_ports *p, struct conn *c, const char *addr, struct ab_err *e)
{
	struct msg m = {.type = MSG_PORT_CONNECT, .value = (int)c->fw->port, .id = c->id};

	snprintf(m.text, sizeof(m.text), "%s", addr);
	c->stage = ASKED;
	if (channel_send_data(p->r->sock[0], &m, NULL, 0, NULL, 0) < 0)
		return conn_end(p, c, "refused", "the sandbox did not take the request", e);
	timer_set(p, true);
	return 0;
}

/* The server could not be reached: ::1 is tried after 127.0.0.1 refused (a server bound to
 * localhost may listen on either), then the connection ends with why. */
static int unreached(struct session_ports *p, struct conn *c, int err, struct ab_err *e)
{
	unsigned port = c->fw->port;
	char why[256];

	close_end(p, &c->server);
	if (err == ECONNREFUSED && !c->tried6) {
		c->tried6 = true;
		return ask(p, c, "::1", e);
	}
	if (!c->tried6)
		snprintf(why, sizeof(why), "127.0.0.1:%u: %s", port, strerror(err));
	else if (err == ECONNREFUSED || err == EADDRNOTAVAIL || err == ENETUNREACH ||
		 err == EAFNOSUPPORT)
		snprintf(why, sizeof(why), "nothing listens on 127.0.0.1:%u or [::1]:%u", port,
			 port);
	else
		snprintf(why, sizeof(why), "nothing listens on 127.0.0.1:%u; [::1]:%u: %s", port,
			 port, strerror(err));
	return conn_end(p, c, "refused", why, e);
}

/* Moves what it can one way: reads when the buffer is empty, writes what it holds, passes the
 * source's end on once all of it is written. -1 with why on a failure. */
static int move(struct flow *f, int from, int to, const char *const names[2], char *why,
		size_t size)
{
	for (int k = 0; k < MOVES_PER_ROUND; k++) {
		ssize_t n;
		if (f->off == f->len && !f->eof) {
			n = read(from, f->buf, sizeof(f->buf));
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return 0;
			if (n < 0)
				return snprintf(why, size, "reading from the %s: %s", names[0],
						strerror(errno)),
				       -1;
			f->off = 0;
			f->len = (size_t)n;
			f->eof = n == 0;
		}
		if (f->off < f->len) {
			n = send(to, f->buf + f->off, f->len - f->off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return 0;
			if (n < 0)
				return snprintf(why, size, "writing to the %s: %s", names[1],
						strerror(errno)),
				       -1;
			f->off += (size_t)n;
			f->bytes += (uint64_t)n;
			if (f->off < f->len)
				return 0;
		}
		if (f->eof) {
			/* the sink may have gone already: what matters is that nothing follows */
			if (!f->shut)
				(void)shutdown(to, SHUT_WR);
			f->shut = true;
			return 0;
		}
	}
	return 0;
}

/* What an end waits for: input while the flow it feeds is empty and open, room to write while
 * the flow into it holds bytes. */
static uint32_t wants(const struct flow *from_it, const struct flow *into_it)
{
	return (from_it->off == from_it->len && !from_it->eof ? EPOLLIN : 0) |
	       (into_it->off < into_it->len ? EPOLLOUT : 0);
}

static int pump(struct session_ports *p, struct conn *c, struct ab_err *e)
{
	static const char *const inward[2] = {"caller", "server"}, *const outward[2] = {"server",
											"caller"};
	char why[256];

	if (move(&c->in, c->caller.fd, c->server.fd, inward, why, sizeof(why)) < 0 ||
	    move(&c->out, c->server.fd, c->caller.fd, outward, why, sizeof(why)) < 0)
		return conn_end(p, c, "error", why, e);
	if (c->in.shut && c->out.shut)
		return conn_end(p, c, "closed", NULL, e);
	if (watch(p, &c->caller, wants(&c->in, &c->out)) < 0 ||
	    watch(p, &c->server, wants(&c->out, &c->in)) < 0) {
		snprintf(why, sizeof(why), "epoll: %s", strerror(errno));
		return conn_end(p, c, "error", why, e);
	}
	return 0;
}

/* The server's socket became writable, or failed: its connect has finished. */
static int dialed(struct session_ports *p, struct conn *c, struct ab_err *e)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->server.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err)
		return unreached(p, c, err, e);
	c->stage = RELAYING;
	return pump(p, c, e);
}

static int conn_new(struct session_ports *p, struct forward *f, int fd, pid_t pid, struct ab_err *e)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd); /* the caller sees its connection closed; nothing was forwarded */
		return 0;
	}
	c->caller = (struct end){TAG_CALLER, c, fd, 0};
	c->server = (struct end){TAG_SERVER, c, -1, 0};
	c->fw = f;
	c->id = ++p->next_id;
	c->pid = pid;
	c->t0 = now_ms();
	c->deadline = c->t0 + SESSION_PORT_CONNECT_MS;
	p->conns[p->n_conns++] = c;
	f->conns++;
	return ask(p, c, "127.0.0.1", e);
}

/* ---------- a forward ---------- */

static void pause_forward(struct session_ports *p, struct forward *f, bool paused)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = f};

	if (f->paused == paused ||
	    epoll_ctl(p->ep, paused ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, f->fd, &ev) < 0)
		return;
	f->paused = paused;
	if (paused)
		timer_set(p, true);
}

static int on_accept(struct session_ports *p, struct forward *f, struct ab_err *e)
{
	for (int k = 0; k < ACCEPTS_PER_ROUND; k++) {
		int fd = accept4(f->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred uc = {0};
		enum session_refusal why;
		char detail[128];

		if (fd < 0) {
			/* out of fds, the listener stays ready: it waits for the timer instead */
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				pause_forward(p, f, true);
			return 0;
		}
		why = session_peer_check(p->ns, fd, &uc);
		snprintf(detail, sizeof(detail), "port %u", f->port);
		if (why == REFUSAL_NONE && p->n_conns >= SESSION_PORT_CONNS_MAX) {
			why = REFUSAL_TOO_MANY;
			snprintf(detail, sizeof(detail),
				 "port %u: %d forwarded connections are open, the most a session "
				 "keeps",
				 f->port, SESSION_PORT_CONNS_MAX);
		}
		if (why != REFUSAL_NONE) {
			drain(fd);
			close(fd);
			if (session_refusal(p->refusals, p->a, now_ms(), &uc, why, detail, e) < 0)
				return -1;
			continue;
		}
		if (conn_new(p, f, fd, uc.pid, e) < 0)
			return -1;
	}
	return 0;
}

static struct forward *find_forward(struct session_ports *p, unsigned port)
{
	for (size_t i = 0; i < SESSION_PORTS_MAX; i++)
		if (p->fw[i].fd >= 0 && p->fw[i].port == port)
			return &p->fw[i];
	return NULL;
}

/* Listening at its path, only the caller's (the directory is too), in the loop's set. */
static int forward_open(struct session_ports *p, struct forward *f, unsigned port, struct ab_err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = f};
	int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.port-%u.sock", p->base, port);
	int fd;

	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return ab_fail(e, ENAMETOOLONG,
			       "the forward's socket %s.port-%u.sock is longer than a socket "
			       "address holds (%zu bytes)",
			       p->base, port, sizeof(sa.sun_path) - 1),
		       ab_hint(e, "start the session with XDG_RUNTIME_DIR set to a shorter "
				  "directory of yours");
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return ab_fail(e, errno, "socket");
	/* the directory is the caller's alone: a name there is a forward of an earlier session
	 * that died with its supervisor. The backlog is the kernel's most: a client's burst of
	 * non-blocking connects must not fail (EAGAIN) before the loop comes round to accept. */
	if ((unlink(sa.sun_path) < 0 && errno != ENOENT) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0600) < 0 ||
	    listen(fd, SOMAXCONN) < 0 || epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		ab_fail(e, errno, "cannot listen at %s", sa.sun_path);
		close(fd);
		unlink(sa.sun_path);
		return -1;
	}
	*f = (struct forward){.tag = TAG_FORWARD, .fd = fd, .port = port};
	memcpy(f->path, sa.sun_path, sizeof(f->path));
	return 0;
}

/* Its connections cut, its socket gone, its event written. */
static int forward_close(struct session_ports *p, struct forward *f, const char *reason,
			 const char *cut, struct ab_err *e)
{
	int rc = 0;

	for (size_t i = p->n_conns; i-- > 0;)
		if (i < p->n_conns && p->conns[i]->fw == f &&
		    conn_end(p, p->conns[i], "cut", cut, e) < 0)
			rc = -1;
	close(f->fd);
	unlink(f->path);
	if (audit_forward(p, f, "port-close", reason, e) < 0)
		rc = -1;
	f->fd = -1;
	return rc;
}

/* ---------- the interface ---------- */

struct session_ports *session_ports_new(struct run *r, struct audit *a, const char *ns,
					struct session_refusals *refusals, const char *control,
					struct ab_err *e)
{
	struct session_ports *p = calloc(1, sizeof(*p));
	struct epoll_event ev = {.events = EPOLLIN};
	size_t n = strlen(control);

	if (!p) {
		ab_fail(e, ENOMEM, "forwarded ports");
		return NULL;
	}
	*p = (struct session_ports){.r = r, .a = a, .ns = ns, .refusals = refusals, .ep = -1};
	p->timer = (struct timer){TAG_TIMER, -1, false};
	for (size_t i = 0; i < SESSION_PORTS_MAX; i++)
		p->fw[i].fd = -1;
	if (n > 5 && !strcmp(control + n - 5, ".sock") && n - 5 < sizeof(p->base))
		snprintf(p->base, sizeof(p->base), "%.*s", (int)(n - 5), control);
	ev.data.ptr = &p->timer;
	if (!p->base[0] || (p->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (p->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
	    epoll_ctl(p->ep, EPOLL_CTL_ADD, p->timer.fd, &ev) < 0) {
		ab_fail(e, p->base[0] ? errno : EINVAL, "the forwarded ports' event loop");
		if (p->ep >= 0)
			close(p->ep);
		if (p->timer.fd >= 0)
			close(p->timer.fd);
		free(p);
		return NULL;
	}
	return p;
}

int session_ports_fd(const struct session_ports *p)
{
	return p ? p->ep : -1;
}

static int answer(struct msg *reply, int err, const char *text)
{
	reply->type = SESSION_REPLY_ERROR;
	reply->value = err;
	snprintf(reply->text, sizeof(reply->text), "%s", text);
	return 0;
}

int session_ports_request(struct session_ports *p, const struct session_request *q,
			  struct msg *reply, struct ab_err *e)
{
	struct forward *f = find_forward(p, q->port);
	struct ab_err why = {0};
	char text[128];

	*reply = (struct msg){.type = SESSION_REPLY_PORT, .value = (int)q->port};
	if (q->kind == SESSION_PORT_CLOSE) {
		if (!f) {
			snprintf(text, sizeof(text), "port %u is not forwarded", q->port);
			return answer(reply, ENOENT, text);
		}
		snprintf(reply->text, sizeof(reply->text), "%s", f->path);
		return forward_close(p, f, "close", "the port's forward was closed", e);
	}
	if (!f) {
		for (size_t i = 0; !f && i < SESSION_PORTS_MAX; i++)
			f = p->fw[i].fd < 0 ? &p->fw[i] : NULL;
		if (!f) {
			snprintf(text, sizeof(text),
				 "%d ports are forwarded already, the most a session keeps; fix: "
				 "close one with agentbox session port ID PORT --close",
				 SESSION_PORTS_MAX);
			return answer(reply, EMFILE, text);
		}
		if (forward_open(p, f, q->port, &why) < 0)
			return answer(reply, why.errnum, why.msg);
		if (audit_forward(p, f, "port-open", NULL, e) < 0)
			return -1;
	}
	snprintf(reply->text, sizeof(reply->text), "%s", f->path);
	return 0;
}

static struct conn *find_conn(struct session_ports *p, unsigned id)
{
	for (size_t i = 0; i < p->n_conns; i++)
		if (p->conns[i]->id == id)
			return p->conns[i];
	return NULL;
}

int session_ports_connected(struct session_ports *p, const struct msg *m, const int *fds, size_t n,
			    struct ab_err *e)
{
	struct conn *c = p ? find_conn(p, m->id) : NULL;
	int fd = n ? fds[0] : -1;
	char why[64];

	for (size_t i = 1; i < n; i++)
		close(fds[i]);
	if (!c || c->stage != ASKED) {
		/* cut meanwhile (its forward closed, or it timed out) */
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (m->value || fd < 0)
		return unreached(p, c, m->value ? m->value : EPROTO, e);
	c->server.fd = fd;
	c->stage = DIALING;
	if (watch(p, &c->server, EPOLLOUT) < 0) {
		snprintf(why, sizeof(why), "epoll: %s", strerror(errno));
		return conn_end(p, c, "error", why, e);
	}
	return 0;
}

/* Connects past their deadline end; paused forwards accept again. */
static int on_tick(struct session_ports *p, struct ab_err *e)
{
	uint64_t expirations, now = now_ms();
	bool again = false;
	char why[96];

	if (read(p->timer.fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return ab_fail(e, errno, "the forwarded ports' timer");
	for (size_t i = 0; i < p->n_conns;) {
		struct conn *c = p->conns[i];
		if (c->stage != ASKED && c->stage != DIALING) {
			i++;
			continue;
		}
		if (c->deadline > now) {
			again = true;
			i++;
			continue;
		}
		snprintf(why, sizeof(why), "no connection to %s:%u within %d s",
			 c->tried6 ? "[::1]" : "127.0.0.1", c->fw->port,
			 SESSION_PORT_CONNECT_MS / 1000);
		if (conn_end(p, c, "refused", why, e) < 0) /* it left the array: i is the next */
			return -1;
	}
	for (size_t i = 0; i < SESSION_PORTS_MAX; i++) {
		if (p->fw[i].fd < 0 || !p->fw[i].paused)
			continue;
		pause_forward(p, &p->fw[i], false);
		again = again || p->fw[i].paused; /* still out of luck: the next tick tries again */
	}
	timer_set(p, again);
	return 0;
}

int session_ports_dispatch(struct session_ports *p, struct ab_err *e)
{
	struct epoll_event ev[EVENTS];
	int n = epoll_wait(p->ep, ev, EVENTS, 0), rc = 0;

	if (n < 0)
		return errno == EINTR ? 0 : ab_fail(e, errno, "the forwarded ports' event loop");
	for (int i = 0; rc == 0 && i < n; i++) {
		enum tag *t = ev[i].data.ptr;
		struct end *x = (struct end *)t;
		if (*t == TAG_TIMER)
			rc = on_tick(p, e);
		else if (*t == TAG_FORWARD)
			rc = on_accept(p, (struct forward *)t, e);
		else if (x->c->stage == DIALING && *t == TAG_SERVER)
			rc = dialed(p, x->c, e);
		else if (x->c->stage == RELAYING)
			rc = pump(p, x->c, e);
	}
	bury(p);
	return rc;
}

uint64_t session_ports_active(const struct session_ports *p, uint64_t now, uint64_t last)
{
	uint64_t at = !p ? 0 : p->n_conns ? now : p->last_end;

	return at > last ? at : last;
}

int session_ports_free(struct session_ports *p, struct ab_err *e)
{
	int rc = 0;

	if (!p)
		return 0;
	for (size_t i = 0; i < SESSION_PORTS_MAX; i++)
		if (p->fw[i].fd >= 0 &&
		    forward_close(p, &p->fw[i], "session-end", "the session ended", e) < 0)
			rc = -1;
	bury(p);
	close(p->timer.fd);
	close(p->ep);
	free(p);
	return rc;
}

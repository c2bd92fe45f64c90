/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The proxy's relay: a connection's bytes from one side to the other once it is allowed, copied
 * through the loop's shared chunk or, for bulk flows, spliced through a pipe; counted against the
 * run's and the host's byte budgets on the way. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostlimits.h"
#include "http_stream.h"
#include "proxy.h"
#include "proxy_conn.h"

/* A direction that has moved this many bytes is bulk: it gets a pipe, and its bytes go from
 * socket to socket by splice(2), never through user space (the supervisor spends about a fifth
 * less CPU per GiB; docs/benchmarks.md). Below it (requests, handshakes, idle tunnels) a flow
 * holds no pipe and no fds of its own. */
#define RELAY_SPLICE_AFTER (128 * 1024)
/* Asked of each pipe: one splice moves up to this much (with the default 64 KiB, a tunnel relays
 * about a third slower). */
#define RELAY_PIPE_SIZE (1024 * 1024)

/* After a connection's last answer (a refusal, an intercepted exchange's end) the client may
 * still be sending what it had begun, the rest of a body the refusal cut short. Closed with
 * those bytes unread, the socket would send a reset, and the client's kernel drops on a reset
 * the answer it has not read yet: the client would see "connection reset", not the 403. So the
 * connection is half-closed and what still comes is read and dropped, up to these bounds, as
 * web servers do. */
#define LINGER_MS 2000
#define LINGER_MAX_BYTES (8u * 1024 * 1024)

/* Bytes the flow holds for its sink: buffered, or in its pipe. */
size_t flow_held(const struct flow *f)
{
	return f->len + f->piped;
}

/* Appends n bytes to what the flow holds; false when out of memory. */
bool flow_put(struct flow *f, const void *data, size_t n)
{
	char *buf = realloc(f->buf, f->len + n);

	if (!buf)
		return false;
	memcpy(buf + f->len, data, n);
	f->buf = buf;
	f->len += n;
	return true;
}

static void flow_drained(struct flow *f)
{
	free(f->buf);
	f->buf = NULL;
	f->len = f->off = 0;
}

/* Counts relayed bytes against the run's and the host's budgets; past one, the connection ends
 * (false). Each budget passed is audited once (for the run, for each host). */
bool relay_over_budget(struct conn *c, bool outbound, uint64_t n)
{
	struct proxy *px = c->px;
	uint64_t max = outbound ? px->p->net_max_bytes_out : px->p->net_max_bytes_in;
	uint64_t *total = outbound ? &px->bytes_out : &px->bytes_in;
	bool *hit = outbound ? &px->bytes_out_hit : &px->bytes_in_hit;
	struct host_entry *h = c->per_host;
	char why[512];

	*total += n;
	if (max && *total > max) {
		if (!*hit) {
			*hit = true;
			proxy_audit_limit(px, outbound ? "bytes-out" : "bytes-in", NULL);
		}
		conn_close(c, outbound ? "max-bytes-out reached" : "max-bytes-in reached");
		return false;
	}
	if (h && !hostlimits_count(&px->hosts, h, outbound, n)) {
		hit = outbound ? &h->out_hit : &h->in_hit;
		if (!*hit) {
			*hit = true;
			proxy_audit_limit(px, outbound ? "bytes-out-per-host" : "bytes-in-per-host",
					  h->name);
		}
		snprintf(why, sizeof(why), "%s reached for %s",
			 host_verdict_key(outbound ? HOST_BYTES_OUT : HOST_BYTES_IN), h->name);
		conn_close(c, why);
		return false;
	}
	return true;
}

/* Sends what the flow holds; false when the connection was closed. */
bool relay_flush(struct conn *c, struct endpoint *dst, struct flow *f)
{
	while (f->len > f->off && dst->fd >= 0) {
		ssize_t n = send(dst->fd, f->buf + f->off, f->len - f->off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return true;
			conn_close(c, "write failed");
			return false;
		}
		f->off += (size_t)n;
	}
	if (f->off == f->len)
		flow_drained(f);
	return true;
}

/* How many bytes one read may take from src: one past what the run's and the host's budgets
 * still allow, so the read that passes a budget passes it by exactly one byte (and the audit's
 * counts say where it tripped, whatever the read size or path). */
static size_t budget_left(const struct conn *c, bool outbound, size_t want)
{
	const struct proxy *px = c->px;
	uint64_t max = outbound ? px->p->net_max_bytes_out : px->p->net_max_bytes_in;
	uint64_t total = outbound ? px->bytes_out : px->bytes_in;
	const struct host_entry *h = c->per_host;
	uint64_t left = want;

	if (max)
		left = total >= max ? 1 : (max - total < left ? max - total + 1 : left);
	max = outbound ? px->hosts.conf.max_bytes_out : px->hosts.conf.max_bytes_in;
	total = h ? (outbound ? h->bytes_out : h->bytes_in) : 0;
	if (h && max)
		left = total >= max ? 1 : (max - total < left ? max - total + 1 : left);
	return left < want ? (size_t)left : want;
}

/* One read from src into the shared chunk, within the byte budget: its length, 0 at its end
 * (the flow's source is marked ended, as on an error), or -1 when nothing is there yet. */
ssize_t relay_read_chunk(struct conn *c, struct endpoint *src, struct flow *f)
{
	ssize_t n = read(src->fd, c->px->chunk, budget_left(c, src->side == CLIENT, RELAY_CHUNK));

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		f->eof = true;
	return n;
}

/* One read passed straight on through the shared chunk, only the part dst does not take now
 * kept. False when the connection was closed. */
static bool copy_in(struct conn *c, struct endpoint *src, struct endpoint *dst, struct flow *f,
		    uint64_t *counter)
{
	char *chunk = c->px->chunk;
	bool outbound = src->side == CLIENT;
	ssize_t n = relay_read_chunk(c, src, f);
	size_t sent = 0;

	if (n <= 0)
		return true;
	*counter += (uint64_t)n;
	if (!relay_over_budget(c, outbound, (uint64_t)n))
		return false;
	while (sent < (size_t)n && dst->fd >= 0) {
		ssize_t w = send(dst->fd, chunk + sent, (size_t)n - sent, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			conn_close(c, "write failed");
			return false;
		}
		if (w < 0)
			break;
		sent += (size_t)w;
	}
	if (sent < (size_t)n && !flow_put(f, chunk + sent, (size_t)n - sent)) {
		conn_close(c, "out of memory");
		return false;
	}
	return true;
}

/* A flow that has moved RELAY_SPLICE_AFTER bytes gets a pipe, while the engine's share of the fd
 * limit lasts. Without one (none left, pipe2 failed) it goes on copying: slower, as correct. */
static void flow_open_pipe(struct proxy *px, struct flow *f)
{
	if (px->pipes >= px->max_pipes || pipe2(f->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		f->pipe[0] = f->pipe[1] = -1;
		f->no_pipe = true; /* not asked again on every read */
		return;
	}
	px->pipes++;
	/* larger steps, fewer wake-ups; refused past the user's pipe quota (pipe-user-pages-soft):
	 * the pipe then keeps its default size, which only costs speed */
	if (fcntl(f->pipe[1], F_SETPIPE_SZ, RELAY_PIPE_SIZE) < 0)
		return;
}

void flow_close_pipe(struct proxy *px, struct flow *f)
{
	if (f->pipe[0] < 0)
		return;
	close(f->pipe[0]);
	close(f->pipe[1]);
	f->pipe[0] = f->pipe[1] = -1;
	f->piped = 0;
	px->pipes--;
}

/* Sends what the flow's pipe holds; false when the connection was closed. SIGPIPE, which a
 * splice to a reset socket raises (it has no MSG_NOSIGNAL), is blocked in agentbox. */
static bool splice_out(struct conn *c, struct endpoint *dst, struct flow *f)
{
	while (f->piped && dst->fd >= 0) {
		ssize_t n = splice(f->pipe[0], NULL, dst->fd, NULL, f->piped,
				   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0) { /* 0: the pipe gave less than it holds, which cannot be */
			conn_close(c, "write failed");
			return false;
		}
		f->piped -= (size_t)n;
	}
	return true;
}

/* The next byte to read is TCP urgent data (SIOCATMARK; false when the socket cannot say). */
static bool at_urgent_mark(int fd)
{
	int at = 0;

	return ioctl(fd, SIOCATMARK, &at) == 0 && at;
}

/* One splice from src into the flow's (empty) pipe, counted as a read would be. False when the
 * connection was closed. */
static bool splice_in(struct conn *c, struct endpoint *src, struct flow *f, uint64_t *counter)
{
	bool outbound = src->side == CLIENT;
	ssize_t n =
	    splice(src->fd, NULL, f->pipe[1], NULL, budget_left(c, outbound, RELAY_PIPE_SIZE),
		   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);

	/* splice stops at TCP urgent data, which read() steps over: at the mark it says EAGAIN
	 * (0 on some kernels) while bytes wait behind it, and the level-triggered poll would call
	 * it again at once, for ever. There (and at 0, the end or the mark, and at EINVAL, a
	 * socket splice cannot read) the flow copies from here on: its read tells the end from
	 * the rest, and steps over the urgent byte. */
	if (n == 0 ||
	    (n < 0 && (errno == EINVAL || (errno == EAGAIN && at_urgent_mark(src->fd))))) {
		flow_close_pipe(c->px, f);
		f->no_pipe = true;
		return true;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			f->eof = true; /* a read error ends the flow, as in copy_in */
		return true;
	}
	f->piped = (size_t)n;
	*counter += (uint64_t)n;
	return relay_over_budget(c, outbound, (uint64_t)n);
}

/* ---------- plain HTTP: one request per connection ---------- */

#define SECOND_REQUEST                                                                             \
	"a second request on one plain-HTTP connection (each request must come on a connection "   \
	"of "                                                                                      \
	"its own, where it is checked)"

static bool http_refuse(struct conn *c, const char *why)
{
	conn_audit(c, "deny", why);
	conn_close(c, why);
	return false;
}

/* A second request: nothing more of the client's goes up, but the first request's response still
 * comes back (its head asked the server to close after it; the connection ends then, or after
 * PROXY_HEAD_TIMEOUT_MS without a byte either way, audited as refused). The client's further
 * bytes are read and dropped, so that closing its socket later sends no reset that could cost
 * it that response; and no half-close is passed on upstream (some servers take it for an
 * abandoned request). */
static bool http_refuse_rest(struct conn *c)
{
	c->refused = SECOND_REQUEST;
	c->to_up.shut = true;
	c->deadline_ms = proxy_now_ms() + PROXY_HEAD_TIMEOUT_MS; /* idle: see on_conn_event */
	return true;
}

/* The client's bytes after its request's head: the body goes up, to its exact end; then only
 * empty lines may follow. */
static bool http_feed(struct conn *c, const char *buf, size_t n)
{
	struct http_event ev;
	size_t off = 0, used;

	while (off < n && !c->request_done) {
		used = http_stream_feed(c->request, buf + off, n - off, &ev);
		if (ev.type == HTTP_STREAM_BAD)
			return http_refuse(c, ev.why);
		if (ev.type == HTTP_STREAM_BODY &&
		    !cred_check_plain_body(c, buf + off, ev.n, ev.part))
			return false;
		if (ev.type == HTTP_STREAM_BODY && !flow_put(&c->to_up, buf + off, ev.n)) {
			conn_close(c, "out of memory");
			return false;
		}
		if (ev.type == HTTP_STREAM_END) {
			free(c->request);
			c->request = NULL;
			c->request_done = true;
		}
		off += used;
	}
	for (; off < n; off++)
		if (buf[off] != '\r' && buf[off] != '\n')
			return http_refuse_rest(c);
	return true;
}

bool relay_http_start(struct conn *c, const char *head, size_t head_n, const char *buf, size_t n)
{
	struct http_event ev;
	size_t used;

	c->request = malloc(sizeof(*c->request));
	if (!c->request) {
		conn_close(c, "out of memory");
		return false;
	}
	http_stream_init(c->request);
	used = http_stream_feed(c->request, buf, n, &ev);
	if (ev.type != HTTP_STREAM_HEAD)
		return http_refuse(c, ev.type == HTTP_STREAM_BAD ? ev.why
								 : "an incomplete request head");
	if (http_body_unexpected(&ev)) {
		http_check_refuse(c, 400, NULL, HTTP_BODY_UNEXPECTED);
		return false;
	}
	if (!flow_put(&c->to_up, head, head_n)) {
		conn_close(c, "out of memory");
		return false;
	}
	return http_feed(c, buf + used, n - used);
}

/* copy_in for a plain-HTTP client: its bytes go through http_feed, never straight up. Its end
 * is only marked: after a refusal, a half-closed client still gets the first response. */
static bool copy_in_http(struct conn *c, struct endpoint *src, struct endpoint *dst, struct flow *f,
			 uint64_t *counter)
{
	ssize_t n = relay_read_chunk(c, src, f);

	if (n <= 0)
		return true;
	if (c->refused)
		return true; /* dropped: see http_refuse_rest */
	*counter += (uint64_t)n;
	return relay_over_budget(c, true, (uint64_t)n) && http_feed(c, c->px->chunk, (size_t)n) &&
	       relay_flush(c, dst, f);
}

/* ---------- any flow ---------- */

/* Moves what it can along one flow: what is held first (the buffer, then the pipe, in the order
 * the bytes came), then one read passed straight on. Returns false when the connection was
 * closed. */
bool relay_pump(struct conn *c, struct endpoint *src, struct endpoint *dst, struct flow *f,
		uint64_t *counter)
{
	bool http = f == &c->to_up && (c->request || c->request_done);

	if (!relay_flush(c, dst, f) || (!f->len && !splice_out(c, dst, f)))
		return false;
	if (!flow_held(f) && !f->eof && src->fd >= 0) {
		if (!http && f->pipe[0] < 0 && !f->no_pipe && *counter >= RELAY_SPLICE_AFTER)
			flow_open_pipe(c->px, f);
		if (http	     ? !copy_in_http(c, src, dst, f, counter)
		    : f->pipe[0] < 0 ? !copy_in(c, src, dst, f, counter)
				     : !splice_in(c, src, f, counter) || !splice_out(c, dst, f))
			return false;
	}
	if (f->eof && !flow_held(f) && !f->shut && dst->fd >= 0) {
		shutdown(dst->fd, SHUT_WR); /* pass the half-close on */
		f->shut = true;
	}
	return true;
}

void conn_linger(struct conn *c, const char *reason)
{
	conn_audit_end(c, reason);
	/* a resolver thread still holding it would go on with the connection when it returns */
	if (c->lingering || c->lookup_pending || c->cl.fd < 0 || shutdown(c->cl.fd, SHUT_WR) < 0) {
		conn_close(c, reason);
		return;
	}
	proxy_close_endpoint(c->px, &c->up); /* nothing more goes either way */
	conn_release_limits(c);
	c->lingering = true;
	c->px->n_lingering++;
	c->close_after_flush = false;
	c->deadline_ms = proxy_now_ms() + LINGER_MS;
	conn_update_interest(c);
}

void conn_linger_read(struct conn *c)
{
	ssize_t n;

	while ((n = recv(c->cl.fd, c->px->chunk, RELAY_CHUNK, MSG_DONTWAIT)) > 0)
		if ((c->lingered += (uint64_t)n) > LINGER_MAX_BYTES)
			break;
	if (n < 0 && (errno == EAGAIN || errno == EINTR) && c->lingered <= LINGER_MAX_BYTES)
		return;
	conn_close(c, "closed"); /* its end, or enough: audited when the lingering began */
}

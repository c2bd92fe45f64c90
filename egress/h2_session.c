/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* h2 on an intercepted connection: when the client and the origin both chose h2 in ALPN
 * (intercept.c offers the origin what the client offered, never translates), the proxy is an h2
 * server to the client and an h2 client of the origin: two nghttp2 sessions on the plaintext of
 * the two TLS connections. Each stream is a request of its own, checked as an HTTP/1.1 request is
 * (h2_stream.c). Flow control is the memory bound: a byte one peer sent is acknowledged to it
 * (WINDOW_UPDATE) only once the other side's session took it, so a peer that does not read
 * holds at most a window's worth in the proxy; and output toward a side stops while its socket
 * has more than H2_BACKLOG waiting, so what its peer does not read stays in nghttp2, whose own
 * limits (unread SETTINGS and PING acks) then end the connection. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2_conn.h"

#define H2_BACKLOG (64 * 1024)

static struct h2_stream *stream_of(nghttp2_session *s, int32_t id)
{
	return id > 0 ? nghttp2_session_get_stream_user_data(s, id) : NULL;
}

/* A callback's verdict: the connection may have ended under it, and nghttp2 must then stop. */
static int verdict(const struct conn *c, bool ok)
{
	return ok && !c->dead && !c->tls->closing ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* ---------- the client's session (we are its server) ---------- */

static int cl_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct h2 *h = user;
	struct h2_stream *st;

	if (f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (f->headers.cat != NGHTTP2_HCAT_REQUEST) { /* trailers */
		if ((st = stream_of(s, f->hd.stream_id)))
			h2_fields_clear(&st->f);
		return 0;
	}
	if (!(st = h2_stream_new(h, f->hd.stream_id)))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st) == 0
		   ? 0
		   : NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* Both sessions: a field of the block being read, kept by its stream (counted past the cap). */
static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
	struct h2_stream *st = stream_of(s, f->hd.stream_id);

	(void)flags;
	(void)user;
	if (st)
		h2_fields_add(&st->f, name, nlen, value, vlen);
	return 0;
}

static int cl_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct h2 *h = user;
	struct h2_stream *st = stream_of(s, f->hd.stream_id);
	bool end = f->hd.flags & NGHTTP2_FLAG_END_STREAM;

	if (!st)
		return 0;
	h2_enter(h->c, st);
	if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
		return verdict(h->c, h2_request(h->c, st, end));
	if (f->hd.type == NGHTTP2_HEADERS)
		return verdict(h->c, h2_request_trailers(h->c, st));
	if (f->hd.type == NGHTTP2_DATA && end)
		return verdict(h->c, h2_request_end(h->c, st));
	return 0;
}

/* ---------- the upstream's session (we are its client) ---------- */

static int up_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct h2_stream *st = stream_of(s, f->hd.stream_id);

	(void)user;
	if (f->hd.type == NGHTTP2_HEADERS && st)
		h2_fields_clear(&st->f);
	return 0;
}

static int up_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct h2 *h = user;
	struct h2_stream *st = stream_of(s, f->hd.stream_id);
	bool end = f->hd.flags & NGHTTP2_FLAG_END_STREAM;

	if (!st)
		return 0;
	h2_enter(h->c, st);
	if (f->hd.type == NGHTTP2_HEADERS)
		return verdict(h->c, h2_response_head(h->c, st, end));
	if (f->hd.type == NGHTTP2_DATA && end)
		return verdict(h->c, h2_response_end(h->c, st));
	return 0;
}

/* ---------- both sessions ---------- */

/* DATA: the client's goes up as a request's body, the upstream's down as a response's. */
static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t n,
		   void *user)
{
	struct h2 *h = user;
	struct h2_stream *st = stream_of(s, id);

	(void)flags;
	if (!st) { /* nothing will take it: acknowledged at once */
		nghttp2_session_consume_connection(s, n);
		return 0;
	}
	h2_enter(h->c, st);
	return verdict(h->c, s == h->up ? h2_response_data(h->c, st, data, n)
					: h2_request_data(h->c, st, data, n));
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t error, void *user)
{
	struct h2 *h = user;
	struct h2_stream *st = stream_of(s, id);

	if (st)
		h2_stream_closed(h->c, st, s == h->up, error);
	return 0;
}

/* What nghttp2 says of a peer's protocol error, for the connection's event. A bad header field
 * is a stream's error (on_invalid names it for the stream's event), and its message quotes the
 * field's name and value, which may be a credential's real value from the upstream: it never
 * becomes the connection's reason, nor stays to be taken for the reason of a later failure. */
static int on_error(nghttp2_session *s, int code, const char *msg, size_t len, void *user)
{
	struct h2 *h = user;
	const char *colon = memchr(msg, ':', len);

	if (code == NGHTTP2_ERR_HTTP_HEADER || code == NGHTTP2_ERR_HTTP_MESSAGING)
		return 0;
	if (colon) /* the description; what follows may quote the peer's bytes */
		len = (size_t)(colon - msg);
	snprintf(h->why, sizeof(h->why), "HTTP/2 from the %s: %.*s",
		 s == h->cl ? "client" : "upstream", (int)(len < 200 ? len : 200), msg);
	return 0;
}

/* A frame nghttp2 refused (a malformed request, a stream error): its stream's event says so. */
static int on_invalid(nghttp2_session *s, const nghttp2_frame *f, int error, void *user)
{
	struct h2_stream *st = stream_of(s, f->hd.stream_id);

	(void)user;
	if (st && !st->reason) {
		snprintf(st->reason_buf, sizeof(st->reason_buf), "a malformed h2 %s: %s",
			 s == ((struct h2 *)user)->cl ? "request" : "response",
			 nghttp2_strerror(error));
		st->reason = st->reason_buf;
	}
	return 0;
}

/* nghttp2 ended a session itself (GOAWAY with an error: a flood, a protocol error): the
 * connection ends, its event a deny naming why. */
static int on_sent(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct h2 *h = user;

	if (f->hd.type != NGHTTP2_GOAWAY || f->goaway.error_code == NGHTTP2_NO_ERROR || h->broke)
		return 0;
	h->broke = true;
	if (!h->why[0])
		snprintf(h->why, sizeof(h->why), "HTTP/2 from the %s broke the protocol (%s)",
			 s == h->cl ? "client" : "upstream",
			 nghttp2_http2_strerror(f->goaway.error_code));
	return 0;
}

/* ---------- the pipes' data source ---------- */

/* DATA for the other session from a stream's pipe: what it holds, its end, then its trailers.
 * The bytes are acknowledged to their sender only now (no_auto_window_update). */
static ssize_t pipe_read(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			 nghttp2_data_source *src, void *user)
{
	struct h2 *h = user;
	struct h2_stream *st = src->ptr;
	bool to_up = s == h->up;
	struct h2_pipe *p = to_up ? &st->to_up : &st->to_cl;
	size_t n = p->buf.len - p->off;

	(void)id;
	if (n > len)
		n = len;
	if (n) /* an empty pipe's buf is NULL */
		memcpy(buf, p->buf.buf + p->off, n);
	p->off += n;
	if (n && !p->ours) {
		nghttp2_session_consume(to_up ? h->cl : h->up, to_up ? st->cl_id : st->up_id, n);
		p->acked += n;
	}
	if (p->off == p->buf.len) {
		free(p->buf.buf);
		p->buf = (struct plain){0};
		p->off = 0;
	}
	if (p->buf.len || !p->end)
		return n ? (ssize_t)n : NGHTTP2_ERR_DEFERRED;
	*flags |= NGHTTP2_DATA_FLAG_EOF;
	if (p->has_trailers) {
		*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(s, to_up ? st->up_id : st->cl_id, p->trailers.v,
					   p->trailers.n) != 0)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		h2_nv_free(&p->trailers);
		p->has_trailers = false;
	}
	return (ssize_t)n;
}

const nghttp2_data_source_read_callback h2_pipe_read = pipe_read;

/* ---------- the connection ---------- */

static nghttp2_session_callbacks *callbacks(bool server)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		return NULL;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, server ? cl_begin_headers
									   : up_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, server ? cl_frame : up_frame);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	nghttp2_session_callbacks_set_error_callback2(cb, on_error);
	nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, on_invalid);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_sent);
	return cb;
}

bool h2_start(struct conn *c)
{
	struct h2 *h = calloc(1, sizeof(*h));
	nghttp2_session_callbacks *scb = callbacks(true), *ccb = callbacks(false);
	bool ok = h && scb && ccb;

	if (ok) {
		h->c = c;
		h->mem_up.zero_on_free = true; /* a request's real credential values pass there */
		ok = h2_session_new(&h->cl, true, scb, h, &h->mem_cl) == 0 &&
		     h2_session_new(&h->up, false, ccb, h, &h->mem_up) == 0;
	}
	nghttp2_session_callbacks_del(scb);
	nghttp2_session_callbacks_del(ccb);
	if (!ok) {
		h2_free(h);
		conn_close(c, "out of memory");
		return false;
	}
	c->tls->h2 = h;
	return h2_flush(c);
}

void h2_free(struct h2 *h)
{
	if (!h)
		return;
	nghttp2_session_del(h->cl);
	nghttp2_session_del(h->up);
	while (h->streams)
		h2_stream_free(h, h->streams);
	free(h);
}

/* The streams still open get their events: the connection ends under them. */
static void abandon(struct conn *c, const char *reason)
{
	for (struct h2_stream *s = c->tls->h2->streams; s; s = s->next)
		if (!s->evented) {
			s->evented = true;
			exchange_event(c, &s->r, "allow", reason);
		}
}

/* A GOAWAY to the client (nghttp2's own when one is queued, naming the error), sent before
 * the connection ends. */
static void goaway(struct conn *c, uint32_t code)
{
	struct h2 *h = c->tls->h2;

	(void)nghttp2_session_terminate_session(h->cl, code);
	for (;;) {
		const uint8_t *data;
		ssize_t n = nghttp2_session_mem_send(h->cl, &data);
		if (n <= 0 || !intercept_send(c, true, (const char *)data, (size_t)n))
			break;
	}
	if (!c->dead)
		intercept_finish(c);
}

void h2_fail(struct conn *c, uint32_t code, const char *fmt, ...)
{
	struct h2 *h = c->tls->h2;
	va_list ap;

	if (c->dead || c->tls->closing)
		return;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(h->why, sizeof(h->why), fmt, ap);
		va_end(ap);
	}
	abandon(c, h->why);
	c->refused = h->why; /* the connection's event: a deny naming it */
	goaway(c, code);
}

/* One session's output into its side's TLS while that side's socket keeps up. */
static bool send_side(struct conn *c, bool to_client, bool *sent)
{
	struct h2 *h = c->tls->h2;
	nghttp2_session *s = to_client ? h->cl : h->up;
	const struct flow *f = to_client ? &c->to_client : &c->to_up;

	if (!to_client && h->up_gone)
		return !c->dead;
	while (!c->dead && flow_held(f) < H2_BACKLOG) {
		const uint8_t *data;
		ssize_t n = nghttp2_session_mem_send(s, &data);
		if (n < 0) {
			h2_fail(c, NGHTTP2_INTERNAL_ERROR, "HTTP/2 toward the %s failed: %s",
				to_client ? "client" : "upstream", nghttp2_strerror((int)n));
			return false;
		}
		if (n == 0)
			return true;
		*sent = true;
		if (!intercept_send(c, to_client, (const char *)data, (size_t)n))
			return false;
	}
	return !c->dead;
}

bool h2_more(const struct conn *c)
{
	const struct h2 *h = c->tls->h2;

	return (flow_held(&c->to_client) < H2_BACKLOG && nghttp2_session_want_write(h->cl)) ||
	       (!h->up_gone && flow_held(&c->to_up) < H2_BACKLOG &&
		nghttp2_session_want_write(h->up));
}

bool h2_flush(struct conn *c)
{
	struct h2 *h = c->tls->h2;
	bool sent;

	/* one side's output may free window for the other's (a pipe read is an acknowledgement) */
	do {
		sent = false;
		if (!send_side(c, true, &sent) || !send_side(c, false, &sent))
			return false;
	} while (sent);
	if (h->broke) {
		h2_fail(c, NGHTTP2_NO_ERROR, NULL); /* its GOAWAY is sent */
		return false;
	}
	if (!nghttp2_session_want_read(h->cl) && !nghttp2_session_want_write(h->cl)) {
		/* after the upstream's end the client, told GOAWAY, closes first: a close from here
		 * would meet its last acknowledgements unread, and the reset that makes would throw
		 * away what it had not read yet */
		if (h->up_gone)
			return !c->dead;
		abandon(c, "the client ended the connection");
		intercept_finish(c); /* the client said GOAWAY and nothing is open */
	} else if (!h->up_gone && !nghttp2_session_want_read(h->up) &&
		   !nghttp2_session_want_write(h->up)) {
		return h2_upstream_ended(c);
	}
	return !c->dead;
}

static bool from(struct conn *c, bool upstream, const char *buf, size_t n)
{
	struct h2 *h = c->tls->h2;
	ssize_t rc;

	if (upstream && h->up_gone) /* after its GOAWAY: nothing it says is waited for */
		return !c->dead;
	rc = nghttp2_session_mem_recv(upstream ? h->up : h->cl, (const uint8_t *)buf, n);

	if (c->dead || c->tls->closing)
		return !c->dead;
	if (rc < 0) {
		if (!h->why[0] || rc == NGHTTP2_ERR_FLOODED || (h->mem_cl.over || h->mem_up.over))
			snprintf(h->why, sizeof(h->why), "HTTP/2 from the %s broke a limit: %s%s",
				 upstream ? "upstream" : "client", nghttp2_strerror((int)rc),
				 h->mem_cl.over || h->mem_up.over ? " (its state passed 4 MiB)"
								  : "");
		h2_fail(c,
			rc == NGHTTP2_ERR_CALLBACK_FAILURE ? NGHTTP2_INTERNAL_ERROR
			: rc == NGHTTP2_ERR_FLOODED || rc == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS ||
				rc == NGHTTP2_ERR_NOMEM
			    ? NGHTTP2_ENHANCE_YOUR_CALM
			    : NGHTTP2_PROTOCOL_ERROR,
			NULL);
		return false;
	}
	return h2_flush(c);
}

bool h2_from_client(struct conn *c, const char *buf, size_t n)
{
	return from(c, false, buf, n);
}

bool h2_from_upstream(struct conn *c, const char *buf, size_t n)
{
	return from(c, true, buf, n);
}

bool h2_client_ended(struct conn *c)
{
	abandon(c, "the client closed the connection");
	intercept_finish(c);
	return !c->dead;
}

bool h2_upstream_ended(struct conn *c)
{
	struct h2 *h = c->tls->h2;
	struct h2_stream *s, *next;

	if (h->up_gone)
		return !c->dead;
	/* what came whole still goes to the client (it may be buffered here yet); the streams
	 * still waiting on the upstream are cut; no new one is taken, then the connection ends
	 * once the client's session is done (h2_flush) */
	h->up_gone = true;
	for (s = h->streams; s; s = next) {
		next = s->next;
		h2_stream_orphaned(c, s);
	}
	if (nghttp2_submit_goaway(h->cl, NGHTTP2_FLAG_NONE,
				  nghttp2_session_get_last_proc_stream_id(h->cl), NGHTTP2_NO_ERROR,
				  NULL, 0) != 0) {
		h2_fail(c, NGHTTP2_INTERNAL_ERROR, "cannot end an h2 connection: out of memory");
		return false;
	}
	return h2_flush(c);
}

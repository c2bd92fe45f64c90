/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* One h2 stream of an intercepted connection: its request head written as HTTP/1.1 text
 * (h2_fields.c), read by http_stream.c and decided by exchange.c as any intercepted request is
 * (Host, methods, [http] rules, credentials put in), then sent up as fields; its bodies scanned
 * for placeholders going up and scrubbed of real values coming down, with cred_check.c; its
 * response head checked and redacted by exchange.c. A refusal answers its stream alone (a 403
 * or 400 with agentbox's text, or a gRPC status) and the connection goes on. One "http" event
 * per stream, once both sessions are done with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "h2_conn.h"

/* The stream a refusal from the shared checks is about (exchange_refused, conn_http_refusal). */
static struct h2_stream *current(const struct conn *c)
{
	for (struct h2_stream *s = c->tls->h2->streams; s; s = s->next)
		if (&s->r == c->tls->cur)
			return s;
	return NULL;
}

void h2_enter(struct conn *c, struct h2_stream *s)
{
	c->tls->cur = &s->r;
	snprintf(c->method, sizeof(c->method), "%s", s->r.method);
	c->http_rule = s->r.rule;
	free(c->target); /* another stream's: a refusal of this one must not take it */
	c->target = NULL;
}

struct h2_stream *h2_stream_new(struct h2 *h, int32_t cl_id)
{
	struct h2_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cl_id = cl_id;
	s->r.stream = (uint32_t)cl_id;
	clock_gettime(CLOCK_MONOTONIC, &s->r.t0);
	s->next = h->streams;
	if (h->streams)
		h->streams->prev = s;
	h->streams = s;
	return s;
}

static void pipe_free(struct h2_pipe *p)
{
	free(p->buf.buf);
	h2_nv_free(&p->trailers);
	*p = (struct h2_pipe){0};
}

void h2_stream_free(struct h2 *h, struct h2_stream *s)
{
	if (h->c->tls->cur == &s->r)
		h->c->tls->cur = &h->c->tls->h1;
	if (s->prev)
		s->prev->next = s->next;
	else
		h->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	h2_fields_clear(&s->f);
	pipe_free(&s->to_up);
	pipe_free(&s->to_cl);
	xreq_free(&s->r);
	free(s);
}

static bool oom(struct conn *c)
{
	conn_close(c, "out of memory");
	return false;
}

/* Bytes one session received that the other will never send: acknowledged now. */
static void drop(nghttp2_session *from, int32_t id, size_t n)
{
	if (n && id)
		nghttp2_session_consume(from, id, n);
}

/* A pipe whose receiving session is done with its stream: what its sender sent that was never
 * passed on (still buffered, or held back by the scrub) is acknowledged now, else the
 * connection's window would shrink by it for good and, stream by stream, stall every other. */
static void settle(nghttp2_session *from, int32_t id, struct h2_pipe *p)
{
	if (!p->ours && p->in > p->acked)
		drop(from, id, (size_t)(p->in - p->acked));
	pipe_free(p);
}

static void resume(nghttp2_session *s, int32_t id)
{
	if (id)
		(void)nghttp2_session_resume_data(s, id);
}

/* ---------- refusals ---------- */

/* gRPC's status for agentbox's HTTP status (its HTTP mapping agrees): a client reads it. */
static int grpc_status(int status)
{
	return status == 403 ? 7 : status == 431 ? 8 : status == 502 ? 14 : 3;
}

/* grpc-message: percent-encoded outside printable ASCII, and '%' itself. */
static void grpc_message(const char *text, char *out, size_t size)
{
	size_t m = 0;

	for (const unsigned char *p = (const unsigned char *)text; *p && m + 4 < size; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '%' && *p != '\n')
			out[m++] = (char)*p;
		else if (*p != '\n')
			m += (size_t)snprintf(out + m, size - m, "%%%02X", *p);
	}
	out[m] = '\0';
}

#define NV(n, v)                                                                                   \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE     \
	}

/* agentbox's answer on the stream: a status with its text, or for gRPC a trailers-only
 * response whose grpc-status the client reports. */
static int answer(struct h2 *h, struct h2_stream *s, int status, const char *denied,
		  const char *body)
{
	nghttp2_data_provider dp = {.source.ptr = s, .read_callback = h2_pipe_read};
	const char *d = denied ? denied : "";
	char code[8], length[24], grpc[8], msg[1200];

	snprintf(code, sizeof(code), "%d", status);
	snprintf(length, sizeof(length), "%zu", strlen(body));
	snprintf(grpc, sizeof(grpc), "%d", grpc_status(status));
	grpc_message(body, msg, sizeof(msg));
	if (s->grpc) {
		nghttp2_nv nv[] = {NV(":status", "200"), NV("content-type", "application/grpc"),
				   NV("grpc-status", grpc), NV("grpc-message", msg),
				   NV("x-agentbox-denied", d)};
		return nghttp2_submit_response(h->cl, s->cl_id, nv, denied ? 5 : 4, NULL);
	}
	nghttp2_nv nv[] = {NV(":status", code), NV("content-type", "text/plain"),
			   NV("content-length", length), NV("x-agentbox-denied", d)};
	settle(h->up, s->up_id, &s->to_cl);
	s->to_cl.ours = true; /* nothing of it came from the upstream: nothing to acknowledge */
	s->to_cl.end = true;
	if (!plain_put(&s->to_cl.buf, body, strlen(body)))
		return NGHTTP2_ERR_NOMEM;
	return nghttp2_submit_response(h->cl, s->cl_id, nv, denied ? 4 : 3, &dp);
}

void h2_refusal(struct conn *c, int status, const char *denied, const char *body)
{
	struct h2 *h = c->tls->h2;
	struct h2_stream *s = current(c);

	if (!s || s->refused)
		return;
	s->refused = true;
	s->r.status = status;
	if (s->up_id && !s->up_closed)
		(void)nghttp2_submit_rst_stream(h->up, NGHTTP2_FLAG_NONE, s->up_id, NGHTTP2_CANCEL);
	settle(h->cl, s->cl_id, &s->to_up);
	if (s->responded) { /* too late for a status: the stream is cut */
		(void)nghttp2_submit_rst_stream(h->cl, NGHTTP2_FLAG_NONE, s->cl_id,
						NGHTTP2_INTERNAL_ERROR);
		return;
	}
	s->responded = true;
	s->r.resp_bytes += strlen(body);
	if (answer(h, s, status, denied, body) != 0)
		h2_fail(c, NGHTTP2_INTERNAL_ERROR, "cannot answer an h2 stream: out of memory");
}

void h2_refused(struct conn *c)
{
	struct h2_stream *s = current(c);

	if (s)
		s->evented = true;
}

/* A refusal before the checks could read the request: its method and path from the fields. */
static void name_unread(struct h2_stream *s)
{
	const char *m = h2_fields_get(&s->f, ":method"), *p = h2_fields_get(&s->f, ":path");

	snprintf(s->r.method, sizeof(s->r.method), "%s", m ? m : "");
	free(s->r.path);
	s->r.path = p ? strndup(p, 2048) : NULL;
}

static bool refuse_unread(struct conn *c, struct h2_stream *s, int status, const char *why)
{
	name_unread(s);
	h2_enter(c, s);
	http_check_refuse(c, status, NULL, why);
	return !c->dead;
}

/* ---------- the request ---------- */

/* The request's head as the shared checks read it: the event of h->parse. */
static bool parse_head(struct h2 *h, const char *text, size_t len, bool response, bool head_only,
		       struct http_event *ev)
{
	if (response)
		http_stream_init_response(&h->parse, head_only);
	else
		http_stream_init(&h->parse);
	return http_stream_feed(&h->parse, text, len, ev) == len && ev->type == HTTP_STREAM_HEAD;
}

static bool send_up(struct conn *c, struct h2_stream *s, char *head, size_t m, bool end)
{
	struct h2 *h = c->tls->h2;
	nghttp2_data_provider dp = {.source.ptr = s, .read_callback = h2_pipe_read};
	struct h2_nv nv;
	int32_t id;
	int rc = h2_nv_from_head(head, m, H2_HEAD_REQUEST, c->px->creds != NULL, &nv);

	explicit_bzero(head, m); /* it may hold a credential's value */
	free(head);
	if (rc < 0)
		return oom(c);
	s->to_up.end = end;
	id = nghttp2_submit_request(h->up, NULL, nv.v, nv.n, end ? NULL : &dp, s);
	h2_nv_free(&nv);
	if (id < 0) {
		h2_fail(c, NGHTTP2_INTERNAL_ERROR, "cannot send a request upstream: %s",
			nghttp2_strerror(id));
		return false;
	}
	s->up_id = id;
	return true;
}

bool h2_request(struct conn *c, struct h2_stream *s, bool end)
{
	struct h2 *h = c->tls->h2;
	const char *why, *type = h2_fields_get(&s->f, "content-type");
	struct http_event ev;
	size_t len, m;
	char *text, *head;
	bool ok;

	if (s->f.no_memory)
		return oom(c);
	s->grpc = type && !strncasecmp(type, "application/grpc", 16);
	if (h->up_gone) { /* nothing can take it: the client may send it again elsewhere */
		name_unread(s);
		s->refused = true;
		s->reason = "the upstream had closed the connection (REFUSED_STREAM)";
		(void)nghttp2_submit_rst_stream(h->cl, NGHTTP2_FLAG_NONE, s->cl_id,
						NGHTTP2_REFUSED_STREAM);
		return true;
	}
	if (s->f.too_big)
		return refuse_unread(c, s, 431,
				     "the request's header fields decode past 16 KiB (HPACK)");
	if (!(text = h2_fields_request_head(&s->f, &len, &why)))
		return why ? refuse_unread(c, s, 400, why) : oom(c);
	if (!parse_head(h, text, len, false, false, &ev)) {
		free(text);
		return refuse_unread(c, s, 400,
				     ev.type == HTTP_STREAM_BAD ? ev.why : "a malformed request");
	}
	h2_fields_clear(&s->f);
	ok = exchange_check_request(c, &ev, &head, &m);
	explicit_bzero(text, len);
	free(text);
	if (!ok)
		return !c->dead;
	s->no_body = http_method_bodiless(s->r.method, strlen(s->r.method));
	return send_up(c, s, head, m, end);
}

bool h2_request_data(struct conn *c, struct h2_stream *s, const uint8_t *data, size_t n)
{
	struct h2 *h = c->tls->h2;

	if (s->refused || !s->up_id || s->up_closed) {
		drop(h->cl, s->cl_id, n);
		return true;
	}
	if (s->no_body && n) {
		drop(h->cl, s->cl_id, n);
		http_check_refuse(c, 400, NULL, HTTP_BODY_UNEXPECTED);
		return !c->dead;
	}
	s->r.req_bytes += n;
	if (!cred_check_body(c, (const char *)data, n, HTTP_PART_DATA)) {
		drop(h->cl, s->cl_id, n);
		return !c->dead;
	}
	if (!plain_put(&s->to_up.buf, (const char *)data, n))
		return oom(c);
	s->to_up.in += n;
	resume(h->up, s->up_id);
	return true;
}

bool h2_request_end(struct conn *c, struct h2_stream *s)
{
	s->to_up.end = true;
	if (!s->refused)
		resume(c->tls->h2->up, s->up_id);
	return true;
}

bool h2_request_trailers(struct conn *c, struct h2_stream *s)
{
	size_t len;
	char *text;
	int rc;

	if (s->refused || !s->up_id || s->up_closed)
		return true;
	if (s->f.too_big || s->f.no_memory || !(text = h2_fields_trailer_text(&s->f, &len)))
		return s->f.too_big ? refuse_unread(c, s, 431,
						    "the request's trailers decode past "
						    "16 KiB (HPACK)")
				    : oom(c);
	h2_fields_clear(&s->f);
	s->r.req_bytes += len;
	if (!cred_check_body(c, text, len, HTTP_PART_TRAILER)) {
		free(text);
		return !c->dead;
	}
	rc = h2_nv_from_head(text, len, H2_HEAD_TRAILERS, c->px->creds != NULL, &s->to_up.trailers);
	free(text);
	if (rc < 0)
		return oom(c);
	s->to_up.has_trailers = true;
	return h2_request_end(c, s);
}

/* ---------- the response ---------- */

/* The upstream's stream cannot go on to the client: both are reset, the event says why. */
static bool cut(struct conn *c, struct h2_stream *s, const char *why)
{
	struct h2 *h = c->tls->h2;

	snprintf(s->reason_buf, sizeof(s->reason_buf), "%s", why);
	s->reason = s->reason_buf;
	s->refused = true;
	(void)nghttp2_submit_rst_stream(h->up, NGHTTP2_FLAG_NONE, s->up_id, NGHTTP2_CANCEL);
	(void)nghttp2_submit_rst_stream(h->cl, NGHTTP2_FLAG_NONE, s->cl_id, NGHTTP2_INTERNAL_ERROR);
	return true;
}

static bool response_trailers(struct conn *c, struct h2_stream *s)
{
	char *text, *redacted;
	size_t len, n = 0;
	int rc;

	if (!(text = h2_fields_trailer_text(&s->f, &len)))
		return oom(c);
	h2_fields_clear(&s->f);
	s->r.resp_bytes += len;
	redacted = cred_redact_response(c, text, len, &n, "the trailers");
	rc = h2_nv_from_head(redacted ? redacted : text, redacted ? n : len, H2_HEAD_TRAILERS,
			     false, &s->to_cl.trailers);
	free(redacted);
	free(text);
	if (rc < 0)
		return oom(c);
	s->to_cl.has_trailers = true;
	return h2_response_end(c, s);
}

/* The final or interim head to the client, as the checks left it. */
static bool send_head(struct conn *c, struct h2_stream *s, const char *head, size_t len,
		      bool interim, bool end)
{
	struct h2 *h = c->tls->h2;
	nghttp2_data_provider dp = {.source.ptr = s, .read_callback = h2_pipe_read};
	struct h2_nv nv;
	int rc;

	if (h2_nv_from_head(head, len, H2_HEAD_RESPONSE, false, &nv) < 0)
		return oom(c);
	if (interim) {
		rc = nghttp2_submit_headers(h->cl, NGHTTP2_FLAG_NONE, s->cl_id, NULL, nv.v, nv.n,
					    NULL);
	} else {
		s->responded = true;
		s->to_cl.end = end;
		rc = nghttp2_submit_response(h->cl, s->cl_id, nv.v, nv.n, end ? NULL : &dp);
	}
	h2_nv_free(&nv);
	if (rc != 0)
		h2_fail(c, NGHTTP2_INTERNAL_ERROR, "cannot answer an h2 stream: %s",
			nghttp2_strerror(rc));
	return rc == 0;
}

bool h2_response_head(struct conn *c, struct h2_stream *s, bool end)
{
	struct h2 *h = c->tls->h2;
	struct http_event ev;
	const char *why;
	char *text, *redacted = NULL;
	size_t len, n = 0;
	bool ok;

	if (s->refused)
		return true;
	if (s->f.no_memory)
		return oom(c);
	if (s->f.too_big)
		return cut(c, s, "the response's header fields decode past 16 KiB (HPACK)");
	if (!h2_fields_get(&s->f, ":status"))
		return response_trailers(c, s);
	if (!(text = h2_fields_response_head(&s->f, &len, &why)))
		return why ? cut(c, s, why) : oom(c);
	h2_fields_clear(&s->f);
	if (!parse_head(h, text, len, true, !strcmp(s->r.method, "HEAD"), &ev)) {
		free(text);
		return cut(c, s, "a malformed response from the upstream");
	}
	if (ev.status == 101 || (s->responded && ev.status >= 100)) {
		free(text);
		return cut(c, s, "the upstream sent a second response head, or a 101");
	}
	ok = exchange_check_response(c, &ev, &redacted, &n) &&
	     send_head(c, s, redacted ? redacted : ev.head, redacted ? n : ev.head_len,
		       ev.status < 200, end);
	free(redacted);
	free(text);
	return ok || !c->dead;
}

bool h2_response_data(struct conn *c, struct h2_stream *s, const uint8_t *data, size_t n)
{
	struct h2 *h = c->tls->h2;
	char piece[4096], *out;
	size_t m;

	if (s->refused || !s->responded || s->cl_closed) {
		drop(h->up, s->up_id, n);
		return true;
	}
	s->r.resp_bytes += n;
	s->to_cl.in += n; /* acknowledged as the client's session takes it, held-back bytes too */
	if (!cred_scrubs(c)) {
		if (!plain_put(&s->to_cl.buf, (const char *)data, n))
			return oom(c);
		resume(h->cl, s->cl_id);
		return true;
	}
	/* scrubbed in place: a copy, a piece at a time; what it holds back comes later */
	for (size_t off = 0, step; off < n; off += step) {
		step = n - off < sizeof(piece) ? n - off : sizeof(piece);
		memcpy(piece, data + off, step);
		if (cred_scrub_body(c, piece, step, false, &out, &m) < 0)
			return false;
		if (m && !plain_put(&s->to_cl.buf, out, m))
			return oom(c);
	}
	resume(h->cl, s->cl_id);
	return true;
}

bool h2_response_end(struct conn *c, struct h2_stream *s)
{
	char *out;
	size_t m;

	if (s->refused || s->cl_closed)
		return true;
	if (cred_scrubs(c)) { /* what the scrub held back, at the body's end */
		if (cred_scrub_body(c, NULL, 0, true, &out, &m) < 0)
			return false;
		if (m && !plain_put(&s->to_cl.buf, out, m))
			return oom(c);
	}
	s->to_cl.end = true;
	resume(c->tls->h2->cl, s->cl_id);
	return true;
}

/* ---------- the end ---------- */

static void reset_reason(struct h2_stream *s, const char *who, uint32_t error)
{
	if (s->reason)
		return;
	snprintf(s->reason_buf, sizeof(s->reason_buf), "the %s reset the stream (%s)", who,
		 nghttp2_http2_strerror(error));
	s->reason = s->reason_buf;
}

/* The event of a stream that ended before its request was read whole: a malformed one
 * (nghttp2's HTTP checks), or one the client reset early. Nothing of it went up. */
static void unread_event(struct conn *c, struct h2_stream *s)
{
	name_unread(s);
	exchange_event(c, &s->r, "deny",
		       s->reason ? s->reason : "the stream ended before its request was complete");
}

void h2_stream_closed(struct conn *c, struct h2_stream *s, bool upstream, uint32_t error)
{
	struct h2 *h = c->tls->h2;

	if (upstream) {
		s->up_closed = true;
		settle(h->cl, s->cl_id, &s->to_up);
		if (error && !s->refused && !s->cl_closed) {
			reset_reason(s, "upstream", error);
			(void)nghttp2_submit_rst_stream(h->cl, NGHTTP2_FLAG_NONE, s->cl_id, error);
		}
	} else {
		s->cl_closed = true;
		settle(h->up, s->up_id, &s->to_cl);
		if (error && !s->refused)
			reset_reason(s, "client", error);
		if (s->up_id && !s->up_closed)
			(void)nghttp2_submit_rst_stream(h->up, NGHTTP2_FLAG_NONE, s->up_id,
							NGHTTP2_CANCEL);
	}
	if (!s->cl_closed || (s->up_id && !s->up_closed))
		return;
	if (!s->evented && !s->up_id) /* its request never went up: refused by nghttp2 */
		unread_event(c, s);
	else if (!s->evented)
		exchange_event(c, &s->r, "allow", s->reason);
	h2_stream_free(h, s);
}

void h2_stream_orphaned(struct conn *c, struct h2_stream *s)
{
	struct h2 *h = c->tls->h2;

	if (!s->up_id || s->up_closed)
		return;
	(void)nghttp2_session_set_stream_user_data(h->up, s->up_id, NULL);
	if (!s->reason)
		s->reason = "the upstream closed before its response ended";
	if (!s->refused && !s->cl_closed)
		(void)nghttp2_submit_rst_stream(h->cl, NGHTTP2_FLAG_NONE, s->cl_id, NGHTTP2_CANCEL);
	h2_stream_closed(c, s, true, 0);
}

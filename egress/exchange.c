/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The HTTP exchanges on an intercepted connection: the client's plaintext cut into requests
 * (http_stream.c), each checked (its Host against the connection's host, [network] methods, the
 * [http] rules in http_check.c) before it goes up with the target the rules saw; the server's
 * plaintext cut into responses. One request at a time: the next one is held until the previous
 * one's response has ended, so a refusal is always the answer to its own request and no
 * response can be taken for another's. Each request is one "http" audit event. The responses
 * of a host a credential is bound to are scrubbed of its real value (cred_check.c) in every
 * part: heads, interim heads, bodies (a chunked one re-chunked), trailers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "egress_rule.h"
#include "http_proxy.h"
#include "intercept_conn.h"

struct intercept *exchange_new(void)
{
	struct intercept *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->req = malloc(sizeof(*x->req));
	x->resp = malloc(sizeof(*x->resp));
	if (!x->req || !x->resp) {
		exchange_free(x);
		return NULL;
	}
	http_stream_init(x->req);
	http_stream_init_response(x->resp, false);
	x->cur = &x->h1;
	return x;
}

void xreq_free(struct xreq *r)
{
	free(r->path);
	r->path = NULL;
	creds_stream_free(&r->body[0]);
	creds_stream_free(&r->body[1]);
	creds_scrub_free(&r->scrub);
}

void exchange_free(struct intercept *x)
{
	free(x->req);
	free(x->resp);
	free(x->held.buf);
	free(x->trailers.buf);
	xreq_free(&x->h1);
	free(x);
}

/* ---------- the request's event ---------- */

void exchange_event(struct conn *c, const struct xreq *r, const char *decision, const char *reason)
{
	struct json *j = audit_begin(c->px->a, "http");
	struct ab_err e;

	audit_decision(c->px->a, decision);
	json_kv_str(j, "method", r->method);
	json_kv_str(j, "host", c->name);
	json_kv_uint(j, "port", c->port);
	json_kv_str(j, "path", r->path);
	json_kv_str(j, "rule", r->rule);
	audit_kv_exec(j, c->exec);
	json_kv_str(j, "alpn", c->tls->h2 ? "h2" : "http/1.1");
	if (r->stream)
		json_kv_uint(j, "stream", r->stream);
	if (r->status)
		json_kv_uint(j, "status", (uint64_t)r->status);
	if (reason)
		json_kv_str(j, "reason", reason);
	json_kv_uint(j, "bytes_out", r->req_bytes);
	json_kv_uint(j, "bytes_in", r->resp_bytes);
	json_kv_uint(j, "duration_ms", proxy_ms_since(&r->t0));
	if (audit_emit(c->px->a, &e) < 0)
		proxy_audit_note(c->px, &e);
}

static void request_event(struct conn *c, const char *decision, const char *reason)
{
	exchange_event(c, c->tls->cur, decision, reason);
}

void exchange_refused(struct conn *c, const char *why)
{
	struct intercept *x = c->tls;
	char *path = c->target ? strdup(c->target) : NULL;

	x->cur->rule = c->http_rule;
	if (path) { /* the canonical target, when the rules read one */
		free(x->cur->path);
		x->cur->path = path;
	}
	request_event(c, "deny", why);
	if (x->h2)
		h2_refused(c);
	else
		x->in_request = false;
}

/* ---------- requests ---------- */

/* The Host header must name the connection's host (and port): the rules matched that host. */
static bool host_matches(const struct conn *c, const struct http_event *ev)
{
	char host[256], name[256];
	const char *bad;
	unsigned port;

	if (!ev->host)
		return ev->http10; /* HTTP/1.0 may leave it out: the connection's host it is */
	return http_split_authority(ev->host, ev->host_len, 443, host, sizeof(host), &port) &&
	       egress_host_name(host, name, &bad) && !strcmp(name, c->name) && port == c->port;
}

/* The current request's event starts: its method and target as they came (NULL: unread). */
static void begin(struct conn *c, const struct http_event *ev)
{
	struct xreq *r = c->tls->cur;
	size_t n = 0;

	r->status = 0;
	r->req_bytes = ev ? ev->head_len : 0;
	r->resp_bytes = 0;
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	if (ev)
		n = ev->method_len < sizeof(r->method) - 1 ? ev->method_len : sizeof(r->method) - 1;
	memcpy(r->method, ev ? ev->method : "", n);
	r->method[n] = '\0';
	snprintf(c->method, sizeof(c->method), "%s", r->method);
	free(r->path);
	r->path = ev ? strndup(ev->target, ev->target_len < 2048 ? ev->target_len : 2048) : NULL;
	r->rule = c->http_rule = NULL;
	free(c->target); /* the previous request's */
	c->target = NULL;
}

static void begin_h1(struct conn *c, const struct http_event *ev)
{
	struct intercept *x = c->tls;

	x->in_request = true;
	x->req_done = x->answered = x->until_close = false;
	begin(c, ev);
}

/* Headers a request to a credential's host goes up without: an encoding or a range could hide
 * its value from the scan of the response, or cut it into pieces. */
static bool unscannable(const char *line, size_t n)
{
	static const char *const names[] = {
	    "accept-encoding:", "grpc-accept-encoding:", "range:", "if-range:"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n >= strlen(names[i]) && !strncasecmp(line, names[i], strlen(names[i])))
			return true;
	return false;
}

/* A head without what unscannable names, asking for identity: the responses of a credential's
 * host are scanned as they come, whole. false: no memory. */
static bool ask_identity(char **head, size_t *n)
{
	const char *p = *head, *end = *head + *n, *eol;
	char *out = malloc(*n + sizeof("Accept-Encoding: identity\r\n"));
	size_t m = 0;

	if (!out)
		return false;
	for (; p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) && eol > p; p = eol + 2)
		if (p == *head || !unscannable(p, (size_t)(eol - p))) {
			memcpy(out + m, p, (size_t)(eol + 2 - p));
			m += (size_t)(eol + 2 - p);
		}
	memcpy(out + m, "Accept-Encoding: identity\r\n", 27);
	m += 27;
	memcpy(out + m, p, (size_t)(end - p)); /* the empty line */
	m += (size_t)(end - p);
	explicit_bzero(*head, *n); /* it may hold a credential's value */
	free(*head);
	*head = out;
	*n = m;
	return true;
}

bool exchange_check_request(struct conn *c, const struct http_event *ev, char **out, size_t *m)
{
	struct xreq *r = c->tls->cur;
	char why[512];
	char *head;

	begin(c, ev);
	if (ev->method_len >= sizeof(r->method) || !ev->target_len || ev->target[0] != '/') {
		http_check_refuse(c, 400, NULL,
				  "inside TLS a request names its target as a path (origin-form)");
		return false;
	}
	if (!host_matches(c, ev)) {
		snprintf(why, sizeof(why),
			 "the request's Host is not %.200s:%u, the host of its TLS "
			 "connection",
			 c->name, c->port);
		http_check_refuse(c, 400, NULL, why);
		return false;
	}
	if (http_body_unexpected(ev)) {
		http_check_refuse(c, 400, NULL, HTTP_BODY_UNEXPECTED);
		return false;
	}
	if (!dial_method_allowed(c->px->p, r->method)) {
		snprintf(why, sizeof(why), "method %s is not allowed ([network] methods)",
			 r->method);
		http_check_refuse(c, 403, why, why);
		return false;
	}
	if (!http_check_request(c, ev->head, ev->head_len))
		return false;
	r->rule = c->http_rule;
	if (c->target) {
		free(r->path);
		r->path = strdup(c->target);
	}
	*m = 0;
	head = http_kept_head(ev->head, ev->head_len, c->target, m);
	if (!head || !r->path) {
		free(head);
		conn_close(c, "out of memory");
		return false;
	}
	if (!cred_check_request(c, &head, m)) {
		free(head);
		return false;
	}
	if (cred_scrubs(c) && !ask_identity(&head, m)) {
		explicit_bzero(head, *m);
		free(head);
		conn_close(c, "out of memory");
		return false;
	}
	*out = head;
	return true;
}

/* A request's head: checked, then sent up. false when it was refused (or the connection closed). */
static bool request_head(struct conn *c, const struct http_event *ev)
{
	struct intercept *x = c->tls;
	char *head;
	size_t m;
	bool ok;

	x->in_request = true;
	x->req_done = x->answered = x->until_close = false;
	if (!exchange_check_request(c, ev, &head, &m))
		return false;
	x->scrubs = cred_scrubs(c);
	http_stream_expect_head(x->resp, !strcmp(x->cur->method, "HEAD"));
	ok = intercept_send(c, false, head, m);
	explicit_bzero(head, m); /* it may hold a credential's value */
	free(head);
	return ok;
}

/* The client's bytes after a complete request wait for its response. */
static bool hold(struct conn *c, const char *buf, size_t n)
{
	if (plain_put(&c->tls->held, buf, n))
		return true;
	conn_close(c, "out of memory");
	return false;
}

/* The request and its response are over: its event, then what the client sent next. */
static bool next_request(struct conn *c)
{
	struct intercept *x = c->tls;
	struct plain held = x->held;
	bool ok;

	if (!x->in_request || !x->req_done || !x->answered)
		return true;
	request_event(c, "allow", NULL);
	x->in_request = false;
	x->requests++;
	if (x->client_ended && !held.len) {
		intercept_finish(c);
		return !c->dead;
	}
	x->held = (struct plain){0};
	ok = !held.len || exchange_from_client(c, held.buf, held.len);
	free(held.buf);
	return ok;
}

bool exchange_accepts_client(const struct conn *c)
{
	const struct intercept *x = c->tls;

	return !x->closing && !x->held.len && !(x->in_request && x->req_done);
}

bool exchange_from_client(struct conn *c, const char *buf, size_t n)
{
	struct intercept *x = c->tls;
	size_t off = 0;

	for (;;) {
		struct http_event ev;
		size_t used;
		if (c->dead || x->closing)
			return !c->dead;
		if (x->in_request && x->req_done)
			return off == n || hold(c, buf + off, n - off);
		used = http_stream_feed(x->req, buf + off, n - off, &ev);
		if (ev.type == HTTP_STREAM_MORE)
			return true;
		if (ev.type == HTTP_STREAM_BAD) {
			if (!x->in_request)
				begin_h1(c, NULL);
			http_check_refuse(c, 400, NULL, ev.why);
			return !c->dead;
		}
		if (ev.type == HTTP_STREAM_HEAD && !request_head(c, &ev))
			return !c->dead;
		if (ev.type == HTTP_STREAM_BODY) {
			x->cur->req_bytes += ev.n;
			if (!cred_check_body(c, buf + off, ev.n, ev.part))
				return !c->dead;
			if (!intercept_send(c, false, buf + off, ev.n))
				return false;
		}
		if (ev.type == HTTP_STREAM_END) {
			x->req_done = true;
			if (!next_request(c))
				return false;
		}
		off += used;
	}
}

/* ---------- responses ---------- */

/* The upstream broke HTTP: what was relayed stands, the connection ends. */
static bool upstream_broke(struct conn *c, const char *why)
{
	if (c->tls->in_request)
		request_event(c, "allow", why);
	c->tls->in_request = false;
	conn_close(c, why);
	return false;
}

/* The value of a head's field NAME (lower case, with its colon) is not identity. */
static bool encoded(const struct http_event *ev, const char *name)
{
	const char *p = ev->head, *end = ev->head + ev->head_len, *eol;
	size_t len = strlen(name);

	for (; p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) && eol > p; p = eol + 2) {
		const char *v = p + len;
		if ((size_t)(eol - p) < len || strncasecmp(p, name, len))
			continue;
		while (v < eol && (*v == ' ' || *v == '\t'))
			v++;
		if (eol - v != 8 || strncasecmp(v, "identity", 8))
			return true;
	}
	return false;
}

/* A compressed body hides a real value from the scan: a credential's host was asked for
 * identity, and a response that is compressed all the same is refused (its encoding is not
 * echoed: the origin wrote it). gRPC compresses messages under its own header. */
static bool compressed(const struct http_event *ev)
{
	return encoded(ev, "content-encoding:") || encoded(ev, "grpc-encoding:");
}

bool exchange_check_response(struct conn *c, const struct http_event *ev, char **out, size_t *n)
{
	if (cred_scrubs(c) && (compressed(ev) || ev->status == 206)) {
		http_check_refuse(
		    c, 502, "credential",
		    ev->status == 206
			? "a partial response (206) from a credential's host could cut its "
			  "value into pieces the scan does not see; agentbox asked for "
			  "the whole"
			: "the response from a credential's host is compressed "
			  "(Content-Encoding) and its value could not be looked for in "
			  "it; agentbox asked for identity");
		return false;
	}
	if (ev->status >= 200)
		c->tls->cur->status = ev->status;
	c->tls->cur->resp_bytes += ev->head_len;
	*out = cred_redact_response(c, ev->head, ev->head_len, n,
				    ev->status < 200 ? "an interim response head"
						     : "the response head");
	return true;
}

static bool response_head(struct conn *c, const struct http_event *ev)
{
	struct intercept *x = c->tls;
	char *redacted;
	size_t n = 0;
	bool ok;

	if (ev->status == 101) /* its Upgrade was never sent: a server that switches anyway */
		return upstream_broke(c, "the upstream switched protocols (101) unasked");
	x->interim = ev->status < 200;
	if (!exchange_check_response(c, ev, &redacted, &n))
		return !c->dead;
	x->until_close = ev->framing == HTTP_FRAMING_CLOSE;
	x->rechunk = x->scrubs && ev->framing == HTTP_FRAMING_CHUNKED;
	ok = intercept_send(c, true, redacted ? redacted : ev->head, redacted ? n : ev->head_len);
	free(redacted);
	return ok;
}

/* Scrubbed body bytes to the client; re-chunked, they make a chunk of their own (the
 * origin's chunks were cut where a value might be). */
static bool send_scrubbed(struct conn *c, const char *data, size_t n)
{
	char size[24];
	struct plain chunk = {0};
	bool ok;

	if (!c->tls->rechunk || !n)
		return !n || intercept_send(c, true, data, n);
	snprintf(size, sizeof(size), "%zx\r\n", n);
	if (!plain_put(&chunk, size, strlen(size)) || !plain_put(&chunk, data, n) ||
	    !plain_put(&chunk, "\r\n", 2)) {
		free(chunk.buf);
		conn_close(c, "out of memory");
		return false;
	}
	ok = intercept_send(c, true, chunk.buf, chunk.len);
	free(chunk.buf);
	return ok;
}

static bool scrub_piece(struct conn *c, char *buf, size_t n, bool final)
{
	char *out;
	size_t m;

	return cred_scrub_body(c, buf, n, final, &out, &m) == 0 && send_scrubbed(c, out, m);
}

static bool response_body(struct conn *c, const struct http_event *ev, char *buf)
{
	struct intercept *x = c->tls;

	x->cur->resp_bytes += ev->n;
	if (!x->scrubs)
		return intercept_send(c, true, buf, ev->n);
	if (ev->part == HTTP_PART_FRAMING && x->rechunk)
		return true; /* ours replaces it */
	if (ev->part == HTTP_PART_TRAILER) {
		if (plain_put(&x->trailers, buf, ev->n))
			return true;
		conn_close(c, "out of memory");
		return false;
	}
	return scrub_piece(c, buf, ev->n, false);
}

/* A scrubbed body's end: what was held back, then the last chunk and the trailers. */
static bool response_end(struct conn *c)
{
	struct intercept *x = c->tls;
	struct plain t = x->trailers;
	char *redacted = NULL;
	size_t n = 0;
	bool ok;

	if (!x->scrubs)
		return true;
	if (!scrub_piece(c, NULL, 0, true))
		return false;
	creds_scrub_free(&x->cur->scrub);
	x->cur->scrub.found = 0;
	x->trailers = (struct plain){0};
	if (!x->rechunk)
		return true;
	if (t.len)
		redacted = cred_redact_response(c, t.buf, t.len, &n, "the trailers");
	ok = intercept_send(c, true, "0\r\n", 3) && intercept_send(c, true,
								   redacted ? redacted
								   : t.len  ? t.buf
									    : "\r\n",
								   redacted ? n
								   : t.len  ? t.len
									    : 2);
	free(redacted);
	free(t.buf);
	return ok;
}

static bool only_line_ends(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != '\r' && p[i] != '\n')
			return false;
	return true;
}

/* Bytes after a complete response, before the next request went up: nothing asked for them,
 * and they would be taken for the next response. The connection ends. */
static bool stray_bytes(struct conn *c)
{
	struct intercept *x = c->tls;

	request_event(c, "allow",
		      "the upstream sent bytes after the response that no request asked for: "
		      "the connection ends");
	x->in_request = false;
	free(x->held.buf);
	x->held = (struct plain){0};
	intercept_finish(c);
	return !c->dead;
}

bool exchange_from_upstream(struct conn *c, char *buf, size_t n)
{
	struct intercept *x = c->tls;
	size_t off = 0;

	for (;;) {
		struct http_event ev;
		size_t used;
		if (c->dead || x->closing)
			return !c->dead;
		if (!x->in_request || x->answered)
			return off == n || upstream_broke(c, "the upstream sent bytes no request "
							     "asked for");
		used = http_stream_feed(x->resp, buf + off, n - off, &ev);
		if (ev.type == HTTP_STREAM_MORE)
			return true;
		if (ev.type == HTTP_STREAM_BAD) {
			char why[256];
			snprintf(why, sizeof(why), "a malformed response from the upstream: %s",
				 ev.why);
			return upstream_broke(c, why);
		}
		if (ev.type == HTTP_STREAM_HEAD && !response_head(c, &ev))
			return false;
		if (ev.type == HTTP_STREAM_BODY && !response_body(c, &ev, buf + off))
			return false;
		if (ev.type == HTTP_STREAM_END && !x->interim) {
			if (!response_end(c))
				return false;
			x->answered = true;
			if (!only_line_ends(buf + off, n - off))
				return stray_bytes(c);
			if (!next_request(c))
				return false;
		}
		off += used;
	}
}

bool exchange_upstream_ended(struct conn *c)
{
	struct intercept *x = c->tls;

	free(x->held.buf); /* requests that came after: nothing can answer them now */
	x->held = (struct plain){0};
	if (x->in_request && x->cur->status && x->until_close) {
		if (!response_end(c))
			return false;
		x->answered = true;
		x->req_done = true; /* nothing more can go up */
		if (!next_request(c))
			return false;
	} else if (x->in_request) {
		request_event(c, "allow", "the upstream closed before its response ended");
		x->in_request = false;
	}
	if (!x->closing)
		intercept_finish(c);
	return !c->dead;
}

bool exchange_client_ended(struct conn *c)
{
	struct intercept *x = c->tls;

	x->client_ended = true;
	if (x->in_request && x->req_done)
		return true; /* its response still comes */
	if (x->in_request)
		request_event(c, "allow", "the client closed before its request ended");
	x->in_request = false;
	intercept_finish(c);
	return !c->dead;
}

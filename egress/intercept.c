/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* TLS interception: for a connection to a host the [http] rules cover, the proxy is the TLS
 * server the client talks to (a leaf certificate for that host, minted by the run's CA) and a
 * TLS client of the real host (verified against the system's trust store and [network] ca, with
 * host name checking), so that every request in between is read and checked (exchange.c).
 *
 * OpenSSL runs on memory BIOs: the sockets stay the relay's (non-blocking, their ciphertext in the
 * connection's flows, counted against the byte budgets as any tunnel's), and TLS is a step
 * between those bytes and the plaintext. No splice: every byte is decrypted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "egress_rule.h"
#include "intercept_conn.h"
#include "tls_ca.h"

/* One TLS record's plaintext at most: what one SSL_read gives. */
#define PLAIN_STEP 16384

static const unsigned char alpn_http11[] = "\x08http/1.1";
static const unsigned char alpn_h2[] = "\x02h2";
static const unsigned char alpn_both[] = "\x02h2\x08http/1.1";

/* ---------- the contexts, made at the first interception ---------- */

/* The client must ask for the host the connection was allowed for, by name. */
static int check_server_name(SSL *ssl, int *alert, void *arg)
{
	struct conn *c = SSL_get_app_data(ssl);
	const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name), *bad;
	char name[256];

	(void)arg;
	if (!sni) {
		snprintf(c->tls->why, sizeof(c->tls->why),
			 "the client sent no TLS server name (SNI), which interception needs");
	} else if (!egress_host_name(sni, name, &bad) || strcmp(name, c->name)) {
		snprintf(c->tls->why, sizeof(c->tls->why),
			 "the connection was allowed for %.100s, but its TLS server name is %.100s",
			 c->name, sni);
	} else {
		return SSL_TLSEXT_ERR_OK;
	}
	*alert = SSL_AD_UNRECOGNIZED_NAME;
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* The protocols of an ALPN extension's list (client_hello): which of h2 and http/1.1. */
static void read_offer(const unsigned char *ext, size_t len, struct intercept *x)
{
	size_t list = len >= 2 ? (size_t)ext[0] << 8 | ext[1] : 0;

	for (size_t i = 2; list && i < 2 + list && i < len;) {
		size_t n = ext[i];
		if (i + 1 + n > len)
			break;
		x->offer_h2 |= n == 2 && !memcmp(ext + i + 1, "h2", 2);
		x->offer_h11 |= n == 8 && !memcmp(ext + i + 1, "http/1.1", 8);
		i += 1 + n;
	}
}

/* The client's handshake waits for the origin's: the origin is offered what the client offered
 * (of h2 and http/1.1; http/1.1 when the client named neither or sent no ALPN), and the client
 * is answered with the origin's choice (select_alpn). Never a translation between the two. */
static int client_hello(SSL *ssl, int *alert, void *arg)
{
	struct conn *c = SSL_get_app_data(ssl);
	struct intercept *x = c->tls;
	const unsigned char *ext;
	size_t len;

	(void)alert;
	(void)arg;
	if (!x->offer_read) {
		x->offer_read = true;
		if (SSL_client_hello_get0_ext(
			ssl, TLSEXT_TYPE_application_layer_protocol_negotiation, &ext, &len))
			read_offer(ext, len, x);
		if (x->offer_h2 && x->offer_h11
			? SSL_set_alpn_protos(x->up, alpn_both, sizeof(alpn_both) - 1)
		    : x->offer_h2 ? SSL_set_alpn_protos(x->up, alpn_h2, sizeof(alpn_h2) - 1)
				  : 0)
			return SSL_CLIENT_HELLO_ERROR;
	}
	return x->up_ready ? SSL_CLIENT_HELLO_SUCCESS : SSL_CLIENT_HELLO_RETRY;
}

/* The origin's choice, when the client offered it: h2, else http/1.1. A client that offers
 * only protocols the origin does not speak (h2 to an HTTP/1.1 origin) is refused rather than
 * given a protocol it did not ask for. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned inlen, void *arg)
{
	struct conn *c = SSL_get_app_data(ssl);
	struct intercept *x = c->tls;
	const unsigned char *up = NULL, *want;
	unsigned up_len = 0;
	unsigned char *sel = NULL;

	(void)arg;
	SSL_get0_alpn_selected(x->up, &up, &up_len);
	want = up_len == 2 && !memcmp(up, "h2", 2) ? alpn_h2 : alpn_http11;
	if (SSL_select_next_proto(&sel, outlen, want, (unsigned)want[0] + 1, in, inlen) ==
	    OPENSSL_NPN_NEGOTIATED) {
		*out = sel;
		return SSL_TLSEXT_ERR_OK;
	}
	snprintf(x->why, sizeof(x->why),
		 x->offer_h2 ? "the client offers only h2 in ALPN and %.100s speaks only HTTP/1.1 "
			       "(agentbox does not translate between them)"
			     : "the client offers neither h2 nor http/1.1 in ALPN (%.100s: only "
			       "HTTP is intercepted)",
		 c->name);
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static SSL_CTX *server_context(void)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	if (!ctx)
		return NULL;
	/* no resumption: every connection's handshake meets the name check and a fresh leaf */
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    !SSL_CTX_set_num_tickets(ctx, 0)) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
	SSL_CTX_set_tlsext_servername_callback(ctx, check_server_name);
	SSL_CTX_set_client_hello_cb(ctx, client_hello, NULL);
	SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
	return ctx;
}

static SSL_CTX *client_context(const struct policy *p, const struct tls_ca *ca, char *why,
			       size_t size)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (!ctx)
		return NULL;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_set_alpn_protos(ctx, alpn_http11, sizeof(alpn_http11) - 1) != 0 ||
	    !SSL_CTX_set_default_verify_paths(ctx)) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* [network] ca as trust.c read it before the run started: never the path again */
	if (p->net_ca && tls_ca_load_upstream(ca, SSL_CTX_get_cert_store(ctx)) <= 0) {
		char detail[200];
		snprintf(why, size, "[network] ca %.200s cannot be loaded: %s", p->net_ca,
			 tls_error_reason(detail, sizeof(detail), "no certificate"));
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/* Both contexts, once per run; why says what failed. */
static bool contexts(struct proxy *px, char *why, size_t size)
{
	if (px->tls_server && px->tls_client)
		return true;
	snprintf(why, size, "cannot set up TLS interception");
	if (!OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL))
		return false;
	if (!px->tls_server && !(px->tls_server = server_context()))
		return false;
	if (!px->tls_client && !(px->tls_client = client_context(px->p, px->ca, why, size)))
		return false;
	return true;
}

void intercept_stop(struct proxy *px)
{
	SSL_CTX_free(px->tls_server);
	SSL_CTX_free(px->tls_client);
	px->tls_server = px->tls_client = NULL;
}

/* ---------- a connection ---------- */

bool intercept_covers(const struct conn *c)
{
	uint8_t raw[16];

	/* an address has no name a client would send (SNI) or a CA could vouch for */
	return c->px->ca && c->px->rules->http.n && !dial_host_literal(c->name, raw) &&
	       http_rules_cover(&c->px->rules->http, c->name);
}

/* An SSL on memory BIOs: the relay moves its ciphertext. */
static SSL *new_ssl(SSL_CTX *ctx, struct conn *c)
{
	SSL *ssl = SSL_new(ctx);
	BIO *in = BIO_new(BIO_s_mem()), *out = BIO_new(BIO_s_mem());

	if (!ssl || !in || !out) {
		SSL_free(ssl);
		BIO_free(in);
		BIO_free(out);
		return NULL;
	}
	SSL_set_bio(ssl, in, out);
	SSL_set_app_data(ssl, c);
	return ssl;
}

static bool setup_ssl(struct conn *c, char *why, size_t size)
{
	struct intercept *x = c->tls;
	struct ab_err e = {0};
	X509 *cert;
	EVP_PKEY *key;

	if (tls_ca_leaf(c->px->ca, c->name, &cert, &key, &e) < 0) {
		snprintf(why, size, "%.400s", e.msg);
		return false;
	}
	x->cl = new_ssl(c->px->tls_server, c);
	x->up = new_ssl(c->px->tls_client, c);
	if (!x->cl || !x->up || SSL_use_certificate(x->cl, cert) != 1 ||
	    SSL_use_PrivateKey(x->cl, key) != 1 || !SSL_set_tlsext_host_name(x->up, c->name) ||
	    !SSL_set1_host(x->up, c->name)) {
		tls_error_reason(why, size, "cannot set up TLS interception");
		return false;
	}
	SSL_set_accept_state(x->cl);
	SSL_set_connect_state(x->up);
	return true;
}

void intercept_free(struct conn *c)
{
	struct intercept *x = c->tls;

	if (!x)
		return;
	h2_free(x->h2);
	SSL_free(x->cl);
	SSL_free(x->up);
	free(x->to_up.buf);
	free(x->to_cl.buf);
	exchange_free(x);
	c->tls = NULL;
}

static void fail(struct conn *c, const char *why)
{
	conn_audit(c, "deny", why);
	conn_close(c, why);
}

bool intercept_start(struct conn *c)
{
	char why[512];

	if (!c->sni[0]) {
		fail(c, "the client sent no TLS server name (SNI), which interception needs");
		return false;
	}
	if (!contexts(c->px, why, sizeof(why))) {
		fail(c, why); /* e.g. [network] ca holds a certificate OpenSSL cannot load */
		return false;
	}
	if (!(c->tls = exchange_new())) {
		fail(c, "out of memory");
		return false;
	}
	if (!setup_ssl(c, why, sizeof(why))) {
		fail(c, why);
		return false;
	}
	/* the client's first bytes (its ClientHello) were held for the checks: TLS reads them */
	if (c->head_len && BIO_write(SSL_get_rbio(c->tls->cl), c->head, (int)c->head_len) <= 0) {
		fail(c, "out of memory");
		return false;
	}
	free(c->head);
	c->head = NULL;
	c->head_len = 0;
	c->to_up.no_pipe = c->to_client.no_pipe = true;
	return intercept_pump(c);
}

/* ---------- the bytes ---------- */

bool plain_put(struct plain *p, const char *data, size_t n)
{
	char *buf = realloc(p->buf, p->len + n);

	if (!buf)
		return false;
	memcpy(buf + p->len, data, n);
	p->buf = buf;
	p->len += n;
	return true;
}

/* What TLS wrote for a side into its flow (the relay sends it). */
static bool drain(struct conn *c, SSL *ssl, struct flow *f)
{
	BIO *out = SSL_get_wbio(ssl);
	char *data;
	long n = BIO_get_mem_data(out, &data);

	if (n <= 0)
		return true;
	if (!flow_put(f, data, (size_t)n)) {
		conn_close(c, "out of memory");
		return false;
	}
	(void)BIO_reset(out);
	return true;
}

/* Encrypts what waits for one side, once its handshake is done. */
static bool seal(struct conn *c, SSL *ssl, bool ready, struct plain *p, struct flow *f)
{
	char why[256];

	if (ready && p->len) {
		size_t done = 0;
		if (SSL_write_ex(ssl, p->buf, p->len, &done) != 1 || done != p->len) {
			fail(c, tls_error_reason(why, sizeof(why), "TLS write failed"));
			return false;
		}
		free(p->buf);
		p->buf = NULL;
		p->len = 0;
	}
	return drain(c, ssl, f);
}

bool intercept_send(struct conn *c, bool to_client, const char *data, size_t n)
{
	struct intercept *x = c->tls;

	if (!plain_put(to_client ? &x->to_cl : &x->to_up, data, n)) {
		conn_close(c, "out of memory");
		return false;
	}
	return to_client ? seal(c, x->cl, x->cl_ready, &x->to_cl, &c->to_client)
			 : seal(c, x->up, x->up_ready, &x->to_up, &c->to_up);
}

void intercept_finish(struct conn *c)
{
	struct intercept *x = c->tls;

	x->closing = true;
	if (x->cl_ready)
		(void)SSL_shutdown(x->cl); /* close_notify: the client knows nothing was cut */
	ERR_clear_error();
	if (!drain(c, x->cl, &c->to_client))
		return;
	c->close_after_flush = true;
	proxy_watch(c->px, &c->cl, EPOLLOUT);
}

/* Why a handshake failed, for the audit: a callback's reason, the upstream certificate's
 * verification, or OpenSSL's. */
static const char *handshake_reason(struct conn *c, bool upstream, char *why, size_t size)
{
	struct intercept *x = c->tls;
	char detail[200];
	long v = upstream ? SSL_get_verify_result(x->up) : X509_V_OK;

	if (!upstream && x->why[0])
		snprintf(why, size, "%s", x->why);
	else if (v != X509_V_OK)
		snprintf(why, size,
			 "the certificate of %.200s is not trusted: %s (add its CA with "
			 "[network] ca)",
			 c->name, X509_verify_cert_error_string(v));
	else if (upstream)
		snprintf(why, size, "TLS to %.200s failed: %s", c->name,
			 tls_error_reason(detail, sizeof(detail), "no detail"));
	else /* a client that does not trust the run's CA (or pins its certificates) says so */
		snprintf(why, size,
			 "the client refused the interception (its TLS failed: %s); it "
			 "must trust /run/agentbox/ca.crt and must not pin certificates",
			 tls_error_reason(detail, sizeof(detail), "no detail"));
	ERR_clear_error();
	return why;
}

/* Whether the client's handshake failed on an alert about the certificate it was shown (from
 * OpenSSL's queue, which is left as it is): Python and curl send unknown_ca, Java
 * certificate_unknown, Go bad_certificate. */
static bool refused_certificate(void)
{
	unsigned long err = ERR_peek_last_error();
	int alert = ERR_GET_REASON(err) - SSL_AD_REASON_OFFSET;

	return err && ERR_GET_LIB(err) == ERR_LIB_SSL &&
	       (alert == SSL_AD_BAD_CERTIFICATE || alert == SSL_AD_UNSUPPORTED_CERTIFICATE ||
		alert == SSL_AD_CERTIFICATE_REVOKED || alert == SSL_AD_CERTIFICATE_EXPIRED ||
		alert == SSL_AD_CERTIFICATE_UNKNOWN || alert == SSL_AD_UNKNOWN_CA);
}

/* Advances one side's handshake; false when it failed (the connection was closed). */
static bool handshake(struct conn *c, bool upstream)
{
	struct intercept *x = c->tls;
	SSL *ssl = upstream ? x->up : x->cl;
	bool *ready = upstream ? &x->up_ready : &x->cl_ready;
	char why[512];
	int rc, err;

	if (*ready)
		return true;
	rc = SSL_do_handshake(ssl);
	if (rc == 1) {
		*ready = true;
		return true;
	}
	err = SSL_get_error(ssl, rc);
	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ||
	    err == SSL_ERROR_WANT_CLIENT_HELLO_CB) { /* the last: waiting for the origin's */
		ERR_clear_error();
		return true;
	}
	if (!upstream && refused_certificate())
		ca_refusals_note(&c->px->ca_refusals, c->name, c->exec, false);
	(void)drain(c, x->cl, &c->to_client); /* the alert, when there is one */
	fail(c, handshake_reason(c, upstream, why, sizeof(why)));
	return false;
}

/* Ciphertext from one side's socket into its TLS: only when TLS has used what it had, and the
 * other side's flow is empty (backpressure, as in the relay). */
static bool cipher_in(struct conn *c, struct endpoint *src, SSL *ssl, struct flow *f,
		      uint64_t *counter)
{
	ssize_t n;

	if (src->fd < 0 || f->eof || BIO_ctrl_pending(SSL_get_rbio(ssl)) || flow_held(f))
		return true;
	n = relay_read_chunk(c, src, f);
	if (n <= 0)
		return true;
	*counter += (uint64_t)n;
	if (!relay_over_budget(c, src->side == CLIENT, (uint64_t)n))
		return false;
	if (BIO_write(SSL_get_rbio(ssl), c->px->chunk, (int)n) != (int)n) {
		conn_close(c, "out of memory");
		return false;
	}
	return true;
}

/* One side will send nothing more. */
static bool side_ended(struct conn *c, bool upstream)
{
	if (c->tls->h2)
		return upstream ? h2_upstream_ended(c) : h2_client_ended(c);
	return upstream ? exchange_upstream_ended(c) : exchange_client_ended(c);
}

/* Plaintext out of one side's TLS into the exchange. */
static bool plain_out(struct conn *c, bool upstream)
{
	struct intercept *x = c->tls;
	SSL *ssl = upstream ? x->up : x->cl;
	char buf[PLAIN_STEP], why[256], detail[128];

	while (!c->dead && !x->closing && (upstream || x->h2 || exchange_accepts_client(c))) {
		size_t n = 0;
		int err;
		if (SSL_read_ex(ssl, buf, sizeof(buf), &n) == 1) {
			x->client_spoke |= !upstream;
			if (!(x->h2 ? (upstream ? h2_from_upstream(c, buf, n)
						: h2_from_client(c, buf, n))
				    : (upstream ? exchange_from_upstream(c, buf, n)
						: exchange_from_client(c, buf, n))))
				return false;
			continue;
		}
		err = SSL_get_error(ssl, 0);
		ERR_clear_error();
		if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
			break;
		if (err == SSL_ERROR_ZERO_RETURN) /* close_notify */
			return side_ended(c, upstream);
		snprintf(why, sizeof(why), "TLS from the %s failed: %s",
			 upstream ? "upstream" : "client",
			 tls_error_reason(detail, sizeof(detail), "no detail"));
		fail(c, why);
		return false;
	}
	return !c->dead;
}

/* A socket's end, once its TLS has given all it held (told to the exchange once). */
static bool ended(struct conn *c)
{
	struct intercept *x = c->tls;

	if (!x->up_eof && c->to_client.eof && !BIO_ctrl_pending(SSL_get_rbio(x->up))) {
		x->up_eof = true;
		if (!side_ended(c, true))
			return false;
	}
	if (!x->closing && !x->cl_eof && c->to_up.eof && !BIO_ctrl_pending(SSL_get_rbio(x->cl))) {
		x->cl_eof = true;
		if (!side_ended(c, false))
			return false;
	}
	return true;
}

/* Plaintext both ways; again while a response's end let held client bytes go on. */
static bool plain(struct conn *c)
{
	struct intercept *x = c->tls;
	unsigned answered;

	do {
		answered = x->requests;
		/* the upstream's plaintext waits for the protocol the client's handshake settles
		 * (an h2 origin speaks first: its SETTINGS) */
		if (!x->cl_ready)
			break;
		if (!plain_out(c, false) || (x->up_ready && !plain_out(c, true)))
			return false;
	} while (!x->closing && x->requests != answered);
	return ended(c);
}

static bool chose_h2(const struct intercept *x)
{
	const unsigned char *p;
	unsigned n;

	SSL_get0_alpn_selected(x->cl, &p, &n);
	return n == 2 && !memcmp(p, "h2", 2);
}

bool intercept_pump(struct conn *c)
{
	struct intercept *x = c->tls;

	if (!relay_flush(c, &c->up, &c->to_up) || !relay_flush(c, &c->cl, &c->to_client))
		return false;
	if (!x->closing && (!cipher_in(c, &c->cl, x->cl, &c->to_up, &c->bytes_out) ||
			    !cipher_in(c, &c->up, x->up, &c->to_client, &c->bytes_in)))
		return false;
	/* the client's, which waits for the origin's (client_hello), then again once that is done
	 */
	if (!handshake(c, false) || !handshake(c, true) || !handshake(c, false))
		return false;
	if (x->cl_ready && !x->h2 && !x->closing && chose_h2(x) && !h2_start(c))
		return false;
	if (!x->closing && !plain(c))
		return false;
	if (x->h2 && !x->closing && !h2_flush(c))
		return false;
	if (c->dead || x->closing)
		return !c->dead;
	for (;;) {
		if (!seal(c, x->up, x->up_ready, &x->to_up, &c->to_up) ||
		    !seal(c, x->cl, x->cl_ready, &x->to_cl, &c->to_client) ||
		    !relay_flush(c, &c->up, &c->to_up) || !relay_flush(c, &c->cl, &c->to_client))
			return false;
		/* h2 held back output while a socket was behind: it may have caught up now, and
		 * nothing else would wake this connection for what waits (an acknowledgement the
		 * other peer needs before it sends more) */
		if (!x->h2 || c->dead || x->closing || !h2_more(c))
			return !c->dead;
		if (!h2_flush(c))
			return false;
	}
}

const char *intercept_end_reason(struct conn *c)
{
	const struct intercept *x = c->tls;

	/* Python and Java refuse a certificate with an alert (the handshake's failure names it);
	 * curl --pinnedpubkey, node with a ca: of its own and others finish the handshake and
	 * then hang up without a word */
	if (x->cl_ready && x->client_ended && !x->client_spoke) {
		ca_refusals_note(&c->px->ca_refusals, c->name, c->exec, true);
		return INTERCEPT_SILENT_CLIENT;
	}
	return "closed";
}

void intercept_refusal(struct conn *c, int status, const char *denied, const char *body,
		       const char *data, size_t n)
{
	if (c->tls->h2) { /* the stream's answer; the connection goes on */
		h2_refusal(c, status, denied, body);
		return;
	}
	c->tls->cur->status = status;
	c->tls->cur->resp_bytes += n;
	if (intercept_send(c, true, data, n))
		intercept_finish(c);
}

bool intercept_reads(const struct conn *c, bool client)
{
	const struct intercept *x = c->tls;

	if (x->closing)
		return false;
	return client ? !c->to_up.eof && !flow_held(&c->to_up) &&
			    (!x->cl_ready || x->h2 || exchange_accepts_client(c))
		      : !c->to_client.eof && !flow_held(&c->to_client);
}

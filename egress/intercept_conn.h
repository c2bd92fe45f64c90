/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* TLS interception's own header, internal to intercept.c (the TLS on both sides of a connection)
 * and exchange.c (the HTTP requests and responses in between); included by no other module. The
 * rest of the proxy engine reaches interception through proxy_conn.h. */
#ifndef AGENTBOX_INTERCEPT_CONN_H
#define AGENTBOX_INTERCEPT_CONN_H

#include <openssl/ssl.h>

#include "credential.h"
#include "http_stream.h"
#include "proxy_conn.h"

/* Plaintext bytes waiting for their side's TLS (a handshake still going) */
struct plain {
	char *buf;
	size_t len;
};

struct intercept {
	SSL *cl, *up;		 /* the TLS the client speaks to us, and ours to the real host */
	bool cl_ready, up_ready; /* their handshakes are done */
	bool cl_eof, up_eof;	 /* a socket's end was told to the exchange */
	struct plain to_up, to_cl;
	char why[320]; /* what a TLS callback refused, for the audit */
	/* the HTTP exchanges (exchange.c) */
	struct http_stream *req, *resp;
	struct creds_stream body[2]; /* the request body's leak scans (cred_check.c) */
	struct creds_scrub scrub;    /* the response body's scrub of real values (ditto) */
	struct plain trailers;	     /* ... its trailer section, scrubbed whole at its end */
	bool scrubs;		     /* the host is a credential's: its responses are scrubbed */
	bool rechunk;		     /* ... a chunked one is sent in chunks of our own */
	struct plain held; /* the client's bytes after a complete request, before its response */
	bool in_request;   /* a request is being read or answered */
	bool req_done;	   /* its body has ended */
	bool answered;	   /* its final response has ended */
	bool closing;	   /* the connection ends once what is queued for the client is sent */
	bool client_ended; /* the client closed: no request follows */
	bool client_spoke; /* the client sent application data (any byte, after its handshake) */
	bool interim;	   /* the response being read is a 1xx: the final one follows */
	bool until_close;  /* ... it runs until the upstream closes */
	char method[16];
	char *path; /* the request's canonical target, for its event */
	int status;
	uint64_t req_bytes, resp_bytes;
	struct timespec t0;
	unsigned requests; /* answered so far */
};

/* ---------- intercept.c ---------- */

/* Appends n bytes; false when out of memory. */
bool plain_put(struct plain *p, const char *data, size_t n);
/* Plaintext for the client (a response, a refusal) or for the upstream (a request): encrypted
 * as soon as that side's handshake is done. false when the connection was closed. */
bool intercept_send(struct conn *c, bool to_client, const char *data, size_t n);
/* The exchange is over: the client gets what is queued (and a TLS close), then the connection
 * ends. */
void intercept_finish(struct conn *c);

/* ---------- exchange.c ---------- */

struct intercept *exchange_new(void);
void exchange_free(struct intercept *x);
/* The client's plaintext: cut into requests, each checked before it goes up. false when the
 * connection was closed. */
bool exchange_from_client(struct conn *c, const char *buf, size_t n);
/* Whether the client's plaintext is read now: not while a complete request waits for its
 * response (the next one is held until then). */
bool exchange_accepts_client(const struct conn *c);
/* The upstream's plaintext: cut into responses, each one ending its request's event (a bound
 * host's scrubbed in buf). */
bool exchange_from_upstream(struct conn *c, char *buf, size_t n);
/* The upstream (or the client) will send nothing more: false when the connection was closed. */
bool exchange_upstream_ended(struct conn *c);
bool exchange_client_ended(struct conn *c);

#endif

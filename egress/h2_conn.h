/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* h2 on an intercepted connection, private to h2_session.c (the two nghttp2 sessions, their
 * bytes and callbacks) and h2_stream.c (one stream's request and response through exchange.c's
 * checks). The rest of interception reaches it through intercept_conn.h. */
#ifndef AGENTBOX_H2_CONN_H
#define AGENTBOX_H2_CONN_H

#include "h2_fields.h"
#include "h2_wire.h"
#include "intercept_conn.h"

/* One direction of a stream's body: what one session received and the other has not sent. */
struct h2_pipe {
	struct plain buf;
	size_t off;	   /* sent so far of buf */
	bool end;	   /* the sender ended its side of the stream */
	bool ours;	   /* agentbox wrote it (a refusal): no peer's bytes to acknowledge */
	bool has_trailers; /* trailers follow the body */
	struct h2_nv trailers;
	uint64_t in, acked; /* the sender's bytes taken in, and acknowledged to it so far */
};

struct h2_stream {
	int32_t cl_id, up_id; /* up_id: 0 until the request went up */
	struct xreq r;
	struct h2_fields f; /* the header block being read (either side's) */
	struct h2_pipe to_up, to_cl;
	bool refused;	/* agentbox answered it: what the client sends on it is dropped */
	bool evented;	/* its event is written */
	bool responded; /* a final response head went to the client */
	bool no_body;	/* GET, HEAD, ...: a body is refused */
	bool grpc;	/* application/grpc: refusals are gRPC statuses */
	bool cl_closed, up_closed; /* each session is done with it */
	const char *reason;	   /* for its event: how it ended, when not normally */
	char reason_buf[200];
	struct h2_stream *prev, *next;
};

struct h2 {
	nghttp2_session *cl, *up;
	struct h2_mem mem_cl, mem_up;
	struct conn *c;
	struct http_stream parse;  /* reads the heads the fields are written as */
	struct h2_stream *streams; /* all of them, until both sides are done */
	char why[256];		   /* the error that ends the connection */
	bool broke;		   /* nghttp2 ended a session for a peer's error */
	bool up_gone; /* the upstream closed or said GOAWAY: its session is not used any more */
};

/* ---------- h2_stream.c ---------- */

/* s is the request the checks, the refusals and the events are about now. */
void h2_enter(struct conn *c, struct h2_stream *s);
struct h2_stream *h2_stream_new(struct h2 *h, int32_t cl_id);
void h2_stream_free(struct h2 *h, struct h2_stream *s);
/* The client's request head (its fields in s->f) checked and sent up; false when the connection
 * ended. */
bool h2_request(struct conn *c, struct h2_stream *s, bool end_stream);
/* The upstream is gone: s, still waiting on it, is cut toward the client (and freed when the
 * client is done with it too). */
void h2_stream_orphaned(struct conn *c, struct h2_stream *s);
bool h2_request_data(struct conn *c, struct h2_stream *s, const uint8_t *data, size_t n);
bool h2_request_trailers(struct conn *c, struct h2_stream *s);
bool h2_request_end(struct conn *c, struct h2_stream *s);
/* The upstream's response head (interim or final) or trailers, in s->f. */
bool h2_response_head(struct conn *c, struct h2_stream *s, bool end_stream);
bool h2_response_data(struct conn *c, struct h2_stream *s, const uint8_t *data, size_t n);
bool h2_response_end(struct conn *c, struct h2_stream *s);
/* One side is done with s (error: its RST_STREAM code, 0 for a normal end). */
void h2_stream_closed(struct conn *c, struct h2_stream *s, bool upstream, uint32_t error);

/* ---------- h2_session.c ---------- */

/* The data source of a pipe (the other session reads it as DATA, then trailers). */
extern const nghttp2_data_source_read_callback h2_pipe_read;
/* The connection ends (a broken limit, a protocol error, no memory): fmt says why (NULL: the
 * session's why), its streams get their events, the client a GOAWAY with code. */
void h2_fail(struct conn *c, uint32_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The nghttp2 sessions of an intercepted h2 connection as agentbox configures them (h2_wire.c):
 * the options and SETTINGS that bound what a peer may make the proxy hold or do, and an
 * allocator that caps each session's memory. Pure of the proxy (no struct conn), so that the
 * fuzz target and the unit tests build sessions exactly as a run does. */
#ifndef AGENTBOX_H2_WIRE_H
#define AGENTBOX_H2_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include <nghttp2/nghttp2.h>

#define H2_MAX_STREAMS 100	      /* concurrent streams a client may open */
#define H2_STREAM_WINDOW (256 * 1024) /* bytes a peer may send on a stream unread */
#define H2_CONN_WINDOW (512 * 1024)   /* ... on the connection */
#define H2_SESSION_MEMORY (4u << 20)  /* what one session's library state may take */

/* A session's allocator: counts what nghttp2 holds and refuses past H2_SESSION_MEMORY (the
 * session then fails with NOMEM, and the connection ends); zero_on_free: the memory is zeroed
 * before it goes back (the upstream session holds real credential values). */
struct h2_mem {
	size_t used;
	bool zero_on_free;
	bool over; /* an allocation was refused */
	nghttp2_mem mem;
};

/* A new session: server (the client's side) or client (the upstream's), with agentbox's
 * options, its SETTINGS queued and the connection window set. 0 or an nghttp2 error code. */
int h2_session_new(nghttp2_session **s, bool server, const nghttp2_session_callbacks *cbs,
		   void *user, struct h2_mem *m);

#endif

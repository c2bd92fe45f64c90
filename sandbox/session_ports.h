/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's forwarded ports (session_ports.c): `agentbox session port ID PORT` gives the
 * caller a Unix socket on the host, in the control socket's private directory, that reaches
 * 127.0.0.1:PORT of the sandbox's network (a dev server a command started). Each connection to
 * it passes the control socket's peer check; pid 1 makes the TCP socket inside (the supervisor
 * cannot enter the sandbox's network namespace) and the supervisor relays the bytes. One epoll
 * fd for all of it, polled by session_serve.c's loop; each forward and each connection is a
 * `session` event (docs/audit.md). */
#ifndef AGENTBOX_SESSION_PORTS_H
#define AGENTBOX_SESSION_PORTS_H

#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "channel.h"
#include "error.h"
#include "run.h"
#include "session_proto.h"
#include "session_refusals.h"

#define SESSION_PORTS_MAX 16	      /* forwards open at once */
#define SESSION_PORT_CONNS_MAX 64     /* forwarded connections open at once, all forwards */
#define SESSION_PORT_CONNECT_MS 10000 /* for the server inside to take a connection */

struct session_ports;

/* ns: the supervisor's pid namespace (session_peer_check); refusals: the control socket's
 * window, shared; control: the control socket's path, which names the forwards' sockets
 * (CONTROL without .sock, then .port-PORT.sock). NULL with e set on failure. */
struct session_ports *session_ports_new(struct run *r, struct audit *a, const char *ns,
					struct session_refusals *refusals, const char *control,
					struct ab_err *e);
/* The fd to poll for input; then session_ports_dispatch. */
int session_ports_fd(const struct session_ports *p);
/* A port request (SESSION_PORT, SESSION_PORT_CLOSE) answered in *reply: the socket's path, or
 * an error. -1 only when the trail could not be written (e set): the session ends. */
int session_ports_request(struct session_ports *p, const struct session_request *q,
			  struct msg *reply, struct ab_err *e);
/* pid 1's MSG_PORT_CONNECTED with the fds that came with it (all taken). -1 as above. */
int session_ports_connected(struct session_ports *p, const struct msg *m, const int *fds, size_t n,
			    struct ab_err *e);
/* What is ready: accepts, connects that finished, bytes, timeouts. -1 as above. */
int session_ports_dispatch(struct session_ports *p, struct ab_err *e);
/* The later of last and the forwards' last activity: now while a connection is open, else
 * when the last one ended (a forwarded connection keeps a session from being idle). */
uint64_t session_ports_active(const struct session_ports *p, uint64_t now, uint64_t last);
/* Every connection cut and every forward closed (their events), their sockets removed, p
 * freed. -1 when an event could not be written (e set), all freed all the same. */
int session_ports_free(struct session_ports *p, struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Transparent capture, the sandbox side: inside the sandbox's own network namespace (pid 1,
 * before it drops its capabilities) every address is made local and nftables rules send every
 * TCP connection that does not go to loopback to one listener, and every UDP query to port 53
 * to the DNS stub's socket. The supervisor serves both (proxy.c, front.c, dns_stub.c), so a client
 * that ignores the proxy variables is filtered by the same rules instead of getting ENETUNREACH.
 * Nothing here opens a way out: the namespace still has no interface but loopback. */
#ifndef AGENTBOX_CAPTURE_H
#define AGENTBOX_CAPTURE_H

#include "error.h"

/* Where the redirected traffic lands, on 127.0.0.1 and ::1 inside the sandbox. */
#define CAPTURE_TCP_PORT 3129
#define CAPTURE_DNS_PORT 53

enum capture_socket {
	CAPTURE_TCP4, /* listener, 127.0.0.1:CAPTURE_TCP_PORT */
	CAPTURE_TCP6, /* listener, [::1]:CAPTURE_TCP_PORT */
	CAPTURE_DNS4, /* UDP, 127.0.0.1:53 */
	CAPTURE_DNS6, /* UDP, [::1]:53 */
	CAPTURE_SOCKETS
};

/* Sets up the routes, the rules and the sockets (all non-blocking, close-on-exec). On failure
 * every fd is -1 and, when the kernel lacks what capture needs (no nftables, no NAT), *missing
 * is true, so that capture = auto can go on without it. */
int capture_setup(int fds[CAPTURE_SOCKETS], int *missing, struct ab_err *e);

#endif

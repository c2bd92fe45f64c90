/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The egress proxy engine, in the supervisor: accepts on the listeners pid 1 made inside the
 * sandbox's network namespace, speaks HTTP (CONNECT and absolute-URI requests) and SOCKS5,
 * decides with the egress rules, resolves names off the event loop, refuses addresses the SSRF
 * guard names, dials the address it checked, relays, and audits every connection. */
#ifndef AGENTBOX_PROXY_H
#define AGENTBOX_PROXY_H

#include <sys/types.h>

#include "audit.h"
#include "egress.h"
#include "error.h"
#include "policy.h"

#define PROXY_MAX_CONNECTIONS 1024
#define PROXY_HEAD_TIMEOUT_MS 10000
#define PROXY_CONNECT_TIMEOUT_MS 30000

struct proxy;

struct tls_ca;
struct creds;

/* Takes ownership of the sockets pid 1 made (egress.h's order; -1 where there is none): the HTTP
 * and SOCKS5 listeners and, with transparent capture, its listeners and DNS stub sockets. ca:
 * the run's interception CA when [http] rules need one (the caller keeps it, and frees it after
 * proxy_stop), else NULL; creds: the run's credentials with their values (likewise), or NULL. */
int proxy_start(struct proxy **out, const struct policy *p, const int fds[EGRESS_SOCKETS],
		struct tls_ca *ca, const struct creds *creds, struct audit *a, struct ab_err *e);
/* In a session: each connection's events name the exec that made it (audit_kv_exec), found
 * from the process holding its other end (sock_owner.h, below pid1) and fn, which places a pid
 * as the filter's notifications are placed. */
void proxy_attribute(struct proxy *px, pid_t pid1, long (*fn)(void *ctx, int pid), void *ctx);
/* Poll it for readability, then call proxy_dispatch. */
int proxy_fd(const struct proxy *px);
/* Handles what is ready; -1 only when the audit trail failed (the run must stop). */
int proxy_dispatch(struct proxy *px, struct ab_err *e);
/* The command is gone: reads what its connections sent last (a close, an alert, the rest of a
 * request) so that each connection's event says how it really ended, not "the sandbox ended"
 * (a client that hung up after the handshake is a likely refusal of the run's CA). Connections
 * still open get a short grace (an upstream's close in flight, 50 ms at most, none when every
 * connection has ended); -1 only when the audit trail failed. */
int proxy_settle(struct proxy *px, struct ab_err *e);
/* The hosts whose clients refused the run's certificate (a pinned key, a CA list of their own),
 * one line each (say(ctx, line), no newline) with the fix, at most 8 and then how many more;
 * exec: those of that exec of a session (the connections' exec, audit_kv_exec's), -2 outside
 * one. Those said are forgotten. After proxy_settle, so that the last closes are read. */
void proxy_say_refusals(struct proxy *px, long exec, void (*say)(void *ctx, const char *line),
			void *ctx);
/* Closes every connection, auditing each, and frees the engine. */
void proxy_stop(struct proxy *px);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The egress proxy engine, in the supervisor: accepts on the listeners pid 1 made inside the
 * sandbox's network namespace, speaks HTTP (CONNECT and absolute-URI requests) and SOCKS5,
 * decides with the egress rules, resolves names off the event loop, refuses addresses the SSRF
 * guard names, dials the address it checked, relays, and audits every connection. */
#ifndef AGENTBOX_PROXY_H
#define AGENTBOX_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* ---------- in a session: live rules, and a harness asked (egress/ask.c) ---------- */

/* From now on the engine decides with rules (a session's, live_rules.h: the caller keeps them
 * alive until proxy_stop and changes them only between calls into the engine), then calls
 * proxy_ask_recheck after each change. */
void proxy_use_rules(struct proxy *px, const struct egress_rules *rules);

/* Connections held for an answer at once; past it, a refusal is immediate. */
#define PROXY_ASK_MAX_HELD 64

/* A question: a connection the rules refused (no deny rule: no allow rule matched) to a host
 * a [network] grantable rule covers. Connections to the same host and port while it is open
 * wait for the same answer. */
struct proxy_question {
	unsigned id;	  /* 1, 2, ... in the session */
	const char *host; /* as the rules compare it (lower case, punycode, an address) */
	unsigned port;
	long exec;	      /* the exec whose process connected (audit_kv_exec's) */
	const char *protocol; /* conn_proto_name's: "http", "connect", "socks", "capture" */
	const char *grant;    /* the grantable rule */
	uint64_t timeout_ms;
};

struct proxy_ask_hook {
	/* a new question: true when it was put to the harness, and its connection is held */
	bool (*ask)(void *ctx, const struct proxy_question *q);
	/* a question settled without the harness's answer: outcome "timeout", or "rule" (a change
	 * of the rules decided it: proxy_ask_recheck) */
	void (*settled)(void *ctx, unsigned id, const char *outcome);
	void *ctx;
};

/* Asks through hook from now on (NULL: nobody asked; every open question is answered "deny",
 * outcome "gone": the harness left). timeout_ms: how long a question waits (its connections
 * are then refused; settled "timeout"). */
void proxy_ask_hook(struct proxy *px, const struct proxy_ask_hook *hook, uint64_t timeout_ms);

enum proxy_answer { PROXY_ANSWER_ONCE, PROXY_ANSWER_RUN, PROXY_ANSWER_DENY };
/* The harness's answer to question id: its connections go on (rule: the rule a "run" added, for
 * their events; NULL for "once") or are refused. The number of connections it settled; 0 when
 * the question is not open (answered, or past its time). Each answer is a `policy` event. */
size_t proxy_answer(struct proxy *px, unsigned id, enum proxy_answer answer, const char *rule);
/* Whether question id is open; its host (as in proxy_question) and port. */
bool proxy_question_open(const struct proxy *px, unsigned id, char host[256], unsigned *port);
/* After a change of the rules: each open question the rules now decide (an allow rule matches,
 * or a deny rule) is settled so (hook's settled, outcome "rule"). */
void proxy_ask_recheck(struct proxy *px);

#endif

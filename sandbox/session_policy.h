/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A session's live policy and its ask hook, the supervisor's side (session_policy.c): the
 * control socket's requests that change the rules the proxy decides with (live_rules.h) and
 * the one client that is asked about connections the rules refused to a grantable host
 * (proxy.h, "in a session"), its questions sent as frames, its answers applied. Each change
 * and the subscription are `policy` events (docs/audit.md); the questions and answers are the
 * proxy's. */
#ifndef AGENTBOX_SESSION_POLICY_H
#define AGENTBOX_SESSION_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"
#include "error.h"
#include "run.h"
#include "session_proto.h"

struct session_policy;

/* After sandbox_start: with a proxy, its rules are the session's live copy from here on. NULL
 * with e set when out of memory. */
struct session_policy *session_policy_new(struct run *r, struct audit *a, struct ab_err *e);
/* Whether kind is one of this file's requests (policy, ask, answer). */
bool session_policy_kind(enum session_kind kind);
/* Whether client fd is the one asked: every request on its connection is this file's. */
bool session_policy_asked(const struct session_policy *sp, int fd);
/* Client fd's request q (a session_policy_kind, or any from the client asked), which came with
 * nfds fds, answered on fd. Returns 1 when the client stays (it is the one asked), 0 when it
 * was answered and is to be dropped, -1 when its connection cannot make it (bad set: the
 * caller refuses it, as any bad request: an answer from another client, anything but an
 * answer from the one asked, fds), -2 when the trail could not be written (e set: the session
 * ends). */
int session_policy_request(struct session_policy *sp, int fd, const struct session_request *q,
			   size_t nfds, struct ab_err *bad, struct ab_err *e);
/* Client fd is gone: when it was the one asked, every open question is denied at once. */
void session_policy_gone(struct session_policy *sp, int fd);
/* The session ends: the asked client's subscription with it (its event; every open question
 * denied), and the proxy asks nobody. -1 when an event could not be written (e set). */
int session_policy_end(struct session_policy *sp, struct ab_err *e);
/* After the proxy stopped (its connections' events may name a rule of the live copy). */
void session_policy_free(struct session_policy *sp);

#endif

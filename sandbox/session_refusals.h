/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Who may talk to a session's control socket (and to its forwarded ports' sockets,
 * session_ports.h), and how the refusals are written (session_refusals.c). Refused connections
 * are the one event anyone who can reach the socket causes at will: in each window the first
 * few are written one by one, the rest summed up in one event when the window closes; all of
 * them count against [audit] event-budget. */
#ifndef AGENTBOX_SESSION_REFUSALS_H
#define AGENTBOX_SESSION_REFUSALS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "audit.h"
#include "error.h"

#define SESSION_REFUSAL_WINDOW_MS 10000
#define SESSION_REFUSALS_WRITTEN 8

enum session_refusal {
	REFUSAL_NO_CREDENTIALS,
	REFUSAL_OTHER_USER,
	REFUSAL_OTHER_PID_NS,
	REFUSAL_TOO_MANY,
	REFUSAL_BAD_REQUEST,
	REFUSAL_NONE, /* accepted; also the number of reasons */
};

struct session_refusals {
	uint64_t start; /* the window's (monotonic ms), 0 when none is open */
	unsigned written;
	uint64_t held[REFUSAL_NONE]; /* past the first few: counted, for the window's end */
};

const char *session_refusal_reason(enum session_refusal why);
/* Only the owner, and only from outside the sandbox (ns: the supervisor's pid namespace, as
 * /proc/PID/ns/pid reads): a process inside runs with the owner's uid, but in the sandbox's
 * pid namespace (or one below it). *uc: the peer, as the kernel gave it. */
enum session_refusal session_peer_check(const char *ns, int fd, struct ucred *uc);
/* One refusal: its event, or counted for the window's summing event. */
int session_refusal(struct session_refusals *r, struct audit *a, uint64_t now,
		    const struct ucred *uc, enum session_refusal why, const char *detail,
		    struct ab_err *e);
/* Whether the open window has run out at now. */
bool session_refusals_due(const struct session_refusals *r, uint64_t now);
/* Closes the window: one event with the count of those not written one by one. */
int session_refusals_flush(struct session_refusals *r, struct audit *a, struct ab_err *e);

#endif

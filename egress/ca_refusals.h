/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The hosts whose clients refused the run's certificate (ca_refusals.c): a client that pins a
 * key or trusts a CA list of its own fails on an intercepted host by design, and the user reads
 * its error without the cause. Each host once (per exec, in a session), with how many
 * connections, for the lines agentbox says when the run or the exec ends. Pure; included by the
 * proxy engine (proxy_conn.h) and its unit test. */
#ifndef AGENTBOX_CA_REFUSALS_H
#define AGENTBOX_CA_REFUSALS_H

#include <stdbool.h>
#include <stddef.h>

/* Hosts kept at once (a wildcard rule lets a command name any number of them); past that the
 * lines say that more hosts refused, not how many. */
#define CA_REFUSALS_MAX 256
/* Lines said at most, one a host, then one "and N more hosts". */
#define CA_REFUSALS_LINES 8

struct ca_refusal {
	char host[256];
	long exec; /* the connection's exec (proxy_conn.h's conn.exec): -2 outside a session */
	unsigned long alerts; /* connections whose handshake the client ended on such an alert */
	unsigned long silent; /* connections it hung up after the handshake without a request */
};

struct ca_refusals {
	struct ca_refusal *v;
	size_t n, cap;
	bool lost; /* a refusal came past CA_REFUSALS_MAX hosts, or memory ran out */
};

/* A connection of exec to host ended with its client refusing the run's certificate: with an
 * alert about it, or (silent) likely, hanging up after the handshake without a request. */
void ca_refusals_note(struct ca_refusals *r, const char *host, long exec, bool silent);
/* Says exec's refusals (say(ctx, line), a line without its newline), at most
 * CA_REFUSALS_LINES hosts and then how many more, and forgets them. */
void ca_refusals_say(struct ca_refusals *r, long exec, void (*say)(void *ctx, const char *line),
		     void *ctx);
void ca_refusals_free(struct ca_refusals *r);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* An `agentbox mcp` server's client asked about connections (see mcp.h): when the client can
 * be asked (the elicitation capability, in form mode), the server subscribes to its session's
 * questions (docs/sessions.md, "Asked about a connection") and puts each to the client as an
 * elicitation/create request. The client's answer (once, run or deny; anything else denies)
 * goes back to the session; a question that ends without it (its time up, a change of the
 * rules) has its request cancelled. The client's responses are read whenever the server reads
 * its stdin, so that a run waiting on a held connection can be answered while it runs. */
#ifndef AGENTBOX_MCP_ASK_H
#define AGENTBOX_MCP_ASK_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "json_read.h"
#include "mcp_wire.h"

/* As many as a session holds connections for at once (one question each at most). */
#define MCP_ASK_OPEN 64

struct mcp_ask {
	int fd;			     /* the subscription, -1 when the client is not asked */
	unsigned open[MCP_ASK_OPEN]; /* questions put to the client, not yet settled */
	size_t nopen;
};

void mcp_ask_init(struct mcp_ask *a);
/* Whether an initialize's client capabilities let it be asked in form mode. */
bool mcp_ask_capable(const struct jnode *capabilities);
/* Subscribes to session id's questions: 0, or -1 with e set (the client is then not asked). */
int mcp_ask_start(struct mcp_ask *a, const char *id, struct ab_err *e);
/* Reads what the session sent: each question becomes a request to the client on w, each that
 * ended without the client's answer a notifications/cancelled of it. At the subscription's
 * end (the session ended), the client is asked no more. */
void mcp_ask_read(struct mcp_ask *a, struct mcp_wire *w);
/* Whether m is the client's response to one of those requests; if so, its answer went to the
 * session (or the question was no longer open). */
bool mcp_ask_response(struct mcp_ask *a, const struct jnode *m);
/* The same for a line read but not yet handled (while a run goes): it is looked at now, and
 * again in its turn, when mcp_ask_response finds its question answered already. */
void mcp_ask_line(struct mcp_ask *a, const char *text, size_t n);
void mcp_ask_stop(struct mcp_ask *a);

#endif

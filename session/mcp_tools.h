/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The tools an `agentbox mcp` server offers (see mcp.h): `run`, a command in the session, and
 * with overlays in the profile `changes` and `diff` (read-only; promoting stays a human's
 * step). What they are (descriptions, schemas) is in mcp_describe.h; the limits below are the
 * ones their input schemas state and the calls enforce. */
#ifndef AGENTBOX_MCP_TOOLS_H
#define AGENTBOX_MCP_TOOLS_H

#include <stdbool.h>

#include "error.h"
#include "json.h"
#include "json_read.h"
#include "mcp_ask.h"
#include "mcp_session.h"
#include "mcp_wire.h"

/* Plain integer literals: the schemas and messages spell them out with MCP_STR. */
#define MCP_STR_(x) #x
#define MCP_STR(x) MCP_STR_(x)
/* What the run tool keeps of each of stdout and stderr, head and tail together, by default and
 * at most (the call's max_output_bytes); the rest is read and counted. */
#define MCP_OUTPUT_CAP 65536
#define MCP_OUTPUT_MAX 1048576
/* A run's timeout when the call gives none, and the most a call may give, in seconds. */
#define MCP_RUN_TIMEOUT_DEFAULT 300
#define MCP_RUN_TIMEOUT_MAX 86400
/* The most words in a run's command and variables in its env. */
#define MCP_ARGV_MAX 4096
#define MCP_ENV_MAX 1024
/* The most paths a changes or diff call names. */
#define MCP_PATHS_MAX 60

/* One tools/call as it runs: the request it answers, and what its client says meanwhile. */
struct mcp_call {
	struct mcp_wire *wire;	   /* read on while the call runs, for a cancel */
	struct mcp_ask *ask;	   /* the client's answers to questions, read on likewise */
	const struct jnode *id;	   /* the request's id, which a notifications/cancelled names */
	const struct jnode *token; /* its _meta.progressToken, NULL for none */
	bool cancelled;		   /* out: the client cancelled it: it gets no response */
	char reason[256];	   /* out: the reason the cancel gave */
};

enum mcp_call_status { MCP_CALL_DONE, MCP_CALL_NO_TOOL, MCP_CALL_BAD_ARGS };

/* Looks at what the client sent since the last look: answers to questions go to the session
 * now, and a cancel of the call sets c->cancelled (true then). */
bool mcp_call_peek(struct mcp_call *c);

/* Calls tool name with args (an object, or NULL) and writes its result object (content,
 * structuredContent, isError) to j, unless c->cancelled. NO_TOOL or BAD_ARGS with e set when
 * the call is invalid (no such tool, arguments that do not fit its input schema): nothing was
 * run and j holds nothing. */
enum mcp_call_status mcp_tools_call(struct mcp_session *s, struct mcp_call *c, const char *name,
				    const struct jnode *args, struct json *j, struct ab_err *e);

/* The result of a call that failed: isError, and {"error": message} (the error shape every
 * tool's output schema allows). */
void mcp_tools_error(struct json *j, const char *message);

#endif

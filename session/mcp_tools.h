/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The tools an `agentbox mcp` server offers (see mcp.h): `run`, a command in the session, and
 * with overlays in the profile `changes` and `diff` (read-only; promoting stays a human's
 * step). Their descriptions are written from the session's policy. */
#ifndef AGENTBOX_MCP_TOOLS_H
#define AGENTBOX_MCP_TOOLS_H

#include "error.h"
#include "json.h"
#include "json_read.h"
#include "mcp_session.h"

/* What the run tool keeps of each of stdout and stderr; the rest is read and counted. */
#define MCP_OUTPUT_CAP (64 * 1024)
/* A run's timeout when the call gives none, and the most a call may give, in seconds. */
#define MCP_RUN_TIMEOUT_DEFAULT 300
#define MCP_RUN_TIMEOUT_MAX 86400

/* Writes the tools as a JSON array value. */
void mcp_tools_list(const struct mcp_session *s, struct json *j);

/* Calls tool name with args (an object, or NULL) and writes its result object (content,
 * structuredContent, isError) to j. -1 with e set when the call is invalid (no such tool,
 * arguments that do not fit its schema): a protocol error, nothing was run. */
int mcp_tools_call(struct mcp_session *s, const char *name, const struct jnode *args,
		   struct json *j, struct ab_err *e);

#endif

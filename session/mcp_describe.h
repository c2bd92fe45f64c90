/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What an `agentbox mcp` server's tools are (see mcp_tools.h), as tools/list gives them: the run
 * tool's description written from the session's policy, each tool's input schema (what the call
 * enforces, no more, no less), its output schema (the structured result, or the error shape)
 * and its annotations (openWorldHint from the network mode). */
#ifndef AGENTBOX_MCP_DESCRIBE_H
#define AGENTBOX_MCP_DESCRIBE_H

#include "json.h"
#include "mcp_session.h"

/* Writes the tools as a JSON array value. */
void mcp_describe(const struct mcp_session *s, struct json *j);

#endif

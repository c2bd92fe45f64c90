/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* `agentbox mcp -p PROFILE [OPTIONS]`: a Model Context Protocol server on stdin/stdout (JSON-RPC
 * 2.0, one message per line; stdout carries nothing else, logs go to stderr) that owns one task
 * session (session.h) for its client's lifetime: started with the options before the first
 * message is read, stopped when stdin ends or the server dies (mcp_session.h). Its tools are in
 * mcp_tools.h. See docs/mcp.md. */
#ifndef AGENTBOX_MCP_H
#define AGENTBOX_MCP_H

#include "error.h"

/* argv[1] is "mcp". Returns the exit status: 0 when the client hung up; 125 with e set when
 * the session could not start. */
int mcp_command(int argc, char **argv, struct ab_err *e);

#endif

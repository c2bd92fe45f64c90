/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The MCP server's stdio (see include/mcp.h): JSON-RPC messages as lines, read from stdin into
 * one bounded buffer and written to stdout whole. The protocol handles one message at a time;
 * while a tool call runs, the wire reads on (what fits) so that a notifications/cancelled
 * behind it is seen, leaving every line where it is for its turn. */
#ifndef AGENTBOX_MCP_WIRE_H
#define AGENTBOX_MCP_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "json_read.h"

/* The longest message read; a longer line is answered with an error and skipped. */
#define MCP_MAX_MESSAGE (1024 * 1024)

struct mcp_wire {
	char *in;	/* what was read and not yet handled */
	size_t len;	/* bytes in `in` */
	size_t head;	/* the first byte not yet handed out as a line */
	size_t scanned; /* no newline before this, from head on */
	size_t peek;	/* the lines before this were looked at for a cancel */
	bool discard;	/* the rest of an oversized line */
	bool broken;	/* stdout is gone */
};

enum mcp_wire_next { MCP_WIRE_NONE, MCP_WIRE_LINE, MCP_WIRE_TOO_LONG };

/* 0, or -1 when out of memory. */
int mcp_wire_init(struct mcp_wire *w);
void mcp_wire_free(struct mcp_wire *w);

/* Whether stdin may be read: the buffer has room. */
bool mcp_wire_room(const struct mcp_wire *w);
/* Reads what stdin has into the buffer: the bytes read, 0 at its end, -1 on error (errno). */
long mcp_wire_read(struct mcp_wire *w);
/* The next whole line (*text, *n; valid until the next call), or NONE when none is complete,
 * or TOO_LONG once for a line past MCP_MAX_MESSAGE (its bytes are skipped up to its newline). */
enum mcp_wire_next mcp_wire_next(struct mcp_wire *w, const char **text, size_t *n);

/* Starts looking at the lines after the message handed out last (for a cancel of it, and the
 * answers to the server's own requests) before their turn comes. */
void mcp_wire_peek_start(struct mcp_wire *w);
/* Hands each whole line read since then and not looked at yet to fn, in order; stops after a
 * line fn returns true for, and returns true then. The lines stay for their turn: what was
 * done with one early (a cancel, an answer) is found done when it comes. */
bool mcp_wire_peek(struct mcp_wire *w, bool (*fn)(void *ctx, const char *text, size_t n),
		   void *ctx);
/* Whether a line is a notifications/cancelled whose requestId is id; its reason, if it gives
 * one, into reason. */
bool mcp_wire_is_cancel(const char *text, size_t n, const struct jnode *id, char *reason,
			size_t size);

/* Writes text and a newline, waiting for room; a failed write marks the wire broken. */
void mcp_wire_send(struct mcp_wire *w, const char *text);
/* The same for a message that may be left out (a progress notification): when stdout has no
 * room now (the client is not reading), nothing is written and false is returned. */
bool mcp_wire_offer(struct mcp_wire *w, const char *text);

/* Writes id as a JSON-RPC id: a string, or a number's own text, or null. */
void mcp_wire_put_id(struct json *j, const struct jnode *id);

#endif

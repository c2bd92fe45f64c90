/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* A command's output as the MCP run tool keeps it (see mcp_tools.h): its first bytes (the head)
 * and its last (the tail, a ring), in bounded memory however much comes; what lies between is
 * read and counted, never kept, so a command that writes gigabytes never blocks on its pipe.
 * The kept text is cut on UTF-8 character boundaries. Pure: no I/O. */
#ifndef AGENTBOX_MCP_OUTPUT_H
#define AGENTBOX_MCP_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mcp_output {
	char *buf; /* head_cap + tail_cap bytes, taken at the first byte */
	size_t head_cap, tail_cap;
	size_t head_len;	   /* bytes in the head */
	size_t tail_pos;	   /* where the ring's next byte goes */
	uint64_t tail_seen, total; /* bytes that went to the tail; all bytes */
};

/* What is kept: head, then dropped bytes left out, then tail (tail_len 0 when nothing was
 * left out: head is then the whole output). Points into the mcp_output. */
struct mcp_kept {
	const char *head, *tail;
	size_t head_len, tail_len;
	uint64_t dropped;
};

void mcp_output_init(struct mcp_output *o, size_t head_cap, size_t tail_cap);
/* Out of memory, nothing is kept and all is counted as left out. */
void mcp_output_add(struct mcp_output *o, const char *p, size_t n);
/* Puts the ring in order (in place) and says what is kept; add no more until clear. */
void mcp_output_kept(struct mcp_output *o, struct mcp_kept *k);
/* Empty again, the memory kept. */
void mcp_output_clear(struct mcp_output *o);
void mcp_output_free(struct mcp_output *o);

/* The length of p[0..n) without a UTF-8 sequence cut short at its end. */
size_t mcp_utf8_whole(const char *p, size_t n);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The MCP server's lines in and out (see mcp_wire.h). */
#include "mcp_wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIRE_CHUNK (64 * 1024)
/* a whole message, then one more read */
#define WIRE_SIZE (MCP_MAX_MESSAGE + WIRE_CHUNK)

int mcp_wire_init(struct mcp_wire *w)
{
	*w = (struct mcp_wire){0};
	return (w->in = malloc(WIRE_SIZE)) ? 0 : -1;
}

void mcp_wire_free(struct mcp_wire *w)
{
	free(w->in);
	w->in = NULL;
}

bool mcp_wire_room(const struct mcp_wire *w)
{
	return w->len - w->head < WIRE_SIZE;
}

/* Moves what is not yet handed out to the start: the lines handed out are parsed already. */
static void compact(struct mcp_wire *w)
{
	memmove(w->in, w->in + w->head, w->len - w->head);
	w->len -= w->head;
	w->scanned -= w->head;
	w->peek = w->peek > w->head ? w->peek - w->head : 0;
	w->head = 0;
}

long mcp_wire_read(struct mcp_wire *w)
{
	ssize_t n;

	if (WIRE_SIZE - w->len < WIRE_CHUNK && w->head)
		compact(w);
	if (w->len == WIRE_SIZE)
		return errno = ENOBUFS, -1;
	n = read(0, w->in + w->len,
		 WIRE_SIZE - w->len < WIRE_CHUNK ? WIRE_SIZE - w->len : WIRE_CHUNK);
	if (n > 0)
		w->len += (size_t)n;
	return (long)n;
}

enum mcp_wire_next mcp_wire_next(struct mcp_wire *w, const char **text, size_t *n)
{
	for (;;) {
		char *nl = memchr(w->in + w->scanned, '\n', w->len - w->scanned);
		if (!nl) {
			bool skipping = w->discard;
			compact(w);
			w->scanned = w->len;
			if (w->len <= MCP_MAX_MESSAGE && !(w->discard && w->len))
				return MCP_WIRE_NONE;
			/* a line longer than any message: answered once, skipped to its end */
			w->discard = true;
			w->len = w->scanned = w->peek = 0;
			return skipping ? MCP_WIRE_NONE : MCP_WIRE_TOO_LONG;
		}
		size_t start = w->head, end = (size_t)(nl - w->in);
		w->head = w->scanned = end + 1;
		if (w->discard) {
			w->discard = false;
			continue;
		}
		if (end - start > MCP_MAX_MESSAGE)
			return MCP_WIRE_TOO_LONG;
		*text = w->in + start;
		*n = end - start;
		return MCP_WIRE_LINE;
	}
}

void mcp_wire_peek_start(struct mcp_wire *w)
{
	w->peek = w->head;
}

static bool same_id(const struct jnode *a, const struct jnode *b)
{
	double x, y;

	if (!a || !b || a->type != b->type)
		return false;
	if (a->type == JNODE_STRING)
		return a->len == b->len && !memcmp(a->str, b->str, a->len);
	return a->type == JNODE_NUMBER &&
	       (!strcmp(a->str, b->str) || (jnode_double(a, &x) && jnode_double(b, &y) && x == y));
}

bool mcp_wire_is_cancel(const char *text, size_t n, const struct jnode *id, char *reason,
			size_t size)
{
	static const char method[] = "notifications/cancelled";
	struct ab_err ignored;
	struct jnode m;
	const struct jnode *params;
	bool hit;

	/* most lines are not a cancel: no parse for them */
	if (!memmem(text, n, method, sizeof(method) - 1) || json_read(text, n, &m, &ignored) < 0)
		return false;
	params = jnode_get(&m, "params");
	hit = m.type == JNODE_OBJECT && !jnode_get(&m, "id") && jnode_str(&m, "method") &&
	      !strcmp(jnode_str(&m, "method"), method) &&
	      same_id(jnode_get(params, "requestId"), id);
	if (hit && size)
		snprintf(reason, size, "%s",
			 jnode_str(params, "reason") ? jnode_str(params, "reason") : "");
	jnode_free(&m);
	return hit;
}

bool mcp_wire_peek(struct mcp_wire *w, bool (*fn)(void *ctx, const char *text, size_t n), void *ctx)
{
	if (w->peek < w->head)
		w->peek = w->head;
	for (;;) {
		char *nl = memchr(w->in + w->peek, '\n', w->len - w->peek);
		if (!nl)
			return false;
		size_t start = w->peek, end = (size_t)(nl - w->in);
		w->peek = end + 1;
		if (end - start <= MCP_MAX_MESSAGE && fn(ctx, w->in + start, end - start))
			return true;
	}
}

static bool wait_writable(void)
{
	struct pollfd p = {1, POLLOUT, 0};
	int n;

	while ((n = poll(&p, 1, -1)) < 0 && errno == EINTR)
		;
	return n == 1 && !(p.revents & (POLLERR | POLLNVAL));
}

void mcp_wire_send(struct mcp_wire *w, const char *text)
{
	size_t n = strlen(text), off = 0;

	while (!w->broken && off <= n) {
		/* the text, then its newline */
		const char *p = off < n ? text + off : "\n";
		size_t want = off < n ? n - off : 1;
		ssize_t r = write(1, p, want);
		if (r < 0 && errno == EINTR)
			continue;
		/* a client may hand over a non-blocking stdout: wait for room, not give up */
		if (r < 0 && errno == EAGAIN && wait_writable())
			continue;
		if (r <= 0) {
			w->broken = true;
			return;
		}
		off += (size_t)r;
		if (off == n + 1)
			return;
	}
}

bool mcp_wire_offer(struct mcp_wire *w, const char *text)
{
	struct pollfd p = {1, POLLOUT, 0};

	if (w->broken || poll(&p, 1, 0) != 1 || (p.revents & (POLLERR | POLLHUP | POLLNVAL)))
		return false;
	mcp_wire_send(w, text);
	return !w->broken;
}

void mcp_wire_put_id(struct json *j, const struct jnode *id)
{
	if (!id)
		json_null(j);
	else if (id->type == JNODE_STRING)
		json_strn(j, id->str, id->len);
	else
		json_raw(j, id->str);
}

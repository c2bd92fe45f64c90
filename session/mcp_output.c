/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The head and the tail of a command's output (see mcp_output.h). */
#include "mcp_output.h"

#include <stdlib.h>
#include <string.h>

void mcp_output_init(struct mcp_output *o, size_t head_cap, size_t tail_cap)
{
	*o = (struct mcp_output){.head_cap = head_cap, .tail_cap = tail_cap};
}

void mcp_output_add(struct mcp_output *o, const char *p, size_t n)
{
	o->total += n;
	if (!o->buf && o->head_cap + o->tail_cap && !(o->buf = malloc(o->head_cap + o->tail_cap)))
		o->head_cap = o->tail_cap = 0; /* nothing kept: all of it counts as left out */
	size_t h = o->head_cap - o->head_len < n ? o->head_cap - o->head_len : n;
	if (h)
		memcpy(o->buf + o->head_len, p, h);
	o->head_len += h;
	p += h, n -= h;
	if (!n || !o->tail_cap)
		return;
	o->tail_seen += n;
	if (n > o->tail_cap) { /* only the last tail_cap bytes can stay */
		p += n - o->tail_cap;
		n = o->tail_cap;
	}
	char *ring = o->buf + o->head_cap;
	size_t first = o->tail_cap - o->tail_pos < n ? o->tail_cap - o->tail_pos : n;
	memcpy(ring + o->tail_pos, p, first);
	memcpy(ring, p + first, n - first);
	o->tail_pos = (o->tail_pos + n) % o->tail_cap;
}

static void reverse(char *p, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		char c = p[i];
		p[i] = p[n - 1 - i];
		p[n - 1 - i] = c;
	}
}

/* The continuation bytes a character cut at the start of p left; a tail starts after them. */
static size_t cut_start(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && i < 3 && ((unsigned char)p[i] & 0xC0) == 0x80)
		i++;
	return i;
}

size_t mcp_utf8_whole(const char *p, size_t n)
{
	for (size_t back = 1; back <= 4 && back <= n; back++) {
		unsigned char c = (unsigned char)p[n - back];
		if (c < 0x80)
			return n;
		if ((c & 0xC0) == 0x80)
			continue;
		size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
		return need > back ? n - back : n;
	}
	return n;
}

void mcp_output_kept(struct mcp_output *o, struct mcp_kept *k)
{
	size_t tail = o->tail_seen < o->tail_cap ? (size_t)o->tail_seen : o->tail_cap;
	char *ring;

	*k = (struct mcp_kept){.head = "", .tail = "", .dropped = o->total};
	if (!o->buf)
		return;
	ring = o->buf + o->head_cap;
	if (o->tail_seen > o->tail_cap && o->tail_pos) {
		/* oldest first: a rotation by three reversals, in place */
		reverse(ring, o->tail_pos);
		reverse(ring + o->tail_pos, o->tail_cap - o->tail_pos);
		reverse(ring, o->tail_cap);
		o->tail_pos = 0;
	}
	k->head = o->buf;
	k->dropped = 0;
	if (o->total == o->head_len + tail) {
		/* nothing left out: the head and the ring are one run of bytes */
		k->head_len = o->head_len + tail;
		return;
	}
	k->head_len = mcp_utf8_whole(o->buf, o->head_len);
	size_t skip = cut_start(ring, tail);
	k->tail = ring + skip;
	k->tail_len = tail - skip;
	k->dropped = o->total - k->head_len - k->tail_len;
}

void mcp_output_clear(struct mcp_output *o)
{
	o->head_len = o->tail_pos = 0;
	o->tail_seen = o->total = 0;
}

void mcp_output_free(struct mcp_output *o)
{
	free(o->buf);
	o->buf = NULL;
}

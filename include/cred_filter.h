/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Where in a body a form of a real value may start (cred_filter.c): the response scrub's first
 * pass, so that it costs little on bytes that start none. Pure. */
#ifndef AGENTBOX_CRED_FILTER_H
#define AGENTBOX_CRED_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cred_filter {
	uint8_t pair[65536 / 8]; /* bit a << 8 | b: bytes a, b may start a form */
	bool byte[256];		 /* a body's last byte may start one */
	/* the same, coarser, for 16 bytes at once: for the byte at position 0 or 1 of a pair, the
	 * buckets (bits) whose pairs have its low or high nibble there */
	uint8_t lo[2][16], hi[2][16];
	unsigned bucket; /* the next form's bucket */
};

/* A form starting find[0], find[1] (fold: in either case), each of them maybe %XX-encoded (a
 * '/' maybe JSON's \/), and (wraps) maybe a line break between them. */
void cred_filter_add(struct cred_filter *f, const char *find, bool fold, bool wraps);
void cred_filter_merge(struct cred_filter *into, const struct cred_filter *from);
/* The first i in [from, n) where a form may start, or n. */
size_t cred_filter_next(const struct cred_filter *f, const unsigned char *b, size_t from, size_t n);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Sizes (512M, 2G), durations (500ms, 30s, 5m) and counts as profiles and options write them.
 * A leaf: it includes nothing of ours but the error type. */
#ifndef AGENTBOX_UNITS_H
#define AGENTBOX_UNITS_H

#include <stdint.h>

#include "error.h"

/* Bytes; K, M, G, T are powers of 1024, with an optional B, iB or b; a fraction of a unit
 * (1.5G, up to 9 decimals) rounds down to whole bytes. */
int parse_size(const char *s, uint64_t *out, struct ab_err *e);
/* Milliseconds; ms, s (the default), m or h; a fraction of s, m or h (1.5s) rounds down to
 * whole milliseconds. */
int parse_duration_ms(const char *s, uint64_t *out, struct ab_err *e);
/* A whole number up to INT32_MAX. */
int parse_count(const char *s, uint64_t *out, struct ab_err *e);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* UTF-8 as RFC 3629 defines it: one decoder for the JSON writer and reader and for text shown
 * to people (json.c, json_read.c, printable.c). */
#ifndef AGENTBOX_UTF8_H
#define AGENTBOX_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes one sequence at s (n bytes left): its length, with *cp set, or 0 when it is not
 * well-formed (a lone continuation byte, a cut sequence, an overlong form, a surrogate or a
 * code point past U+10FFFF) or is ASCII (n == 0 or s[0] < 0x80: the caller's own case). */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* Whether all n bytes at s are well-formed UTF-8 (ASCII included). */
bool utf8_valid(const char *s, size_t n);

#endif

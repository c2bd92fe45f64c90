/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Text the command chose (file names, link targets, messages it caused), made safe to print
 * for a person: it cannot forge or hide a line, move the cursor, recolour the terminal or
 * reorder what is shown. C0 and C1 controls, DEL, the backslash, bidirectional overrides and
 * every byte that is not part of valid UTF-8 become \xHH; the rest passes. A leaf. */
#ifndef AGENTBOX_PRINTABLE_H
#define AGENTBOX_PRINTABLE_H

#include <stddef.h>
#include <stdio.h>

/* Writes the safe form of s into out (always NUL-terminated when size > 0, cut at a whole
 * escape); returns the length the whole safe form needs. */
size_t printable(const char *s, char *out, size_t size);
/* The same for a line of agentbox's own that may carry such text (an error naming a path):
 * backslashes and tabs pass, so that a name printable made safe already reads as it did. */
size_t printable_line(const char *s, char *out, size_t size);
/* Prints the safe form of s to f. */
void print_printable(FILE *f, const char *s);

#endif

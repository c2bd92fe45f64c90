/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* String vectors: the list type every module shares (profile lists, rule texts, argv). A leaf:
 * it includes nothing of ours. */
#ifndef AGENTBOX_STRV_H
#define AGENTBOX_STRV_H

#include <stdbool.h>
#include <stddef.h>

/* v[n] is NULL once anything was pushed. */
struct strv {
	char **v;
	size_t n;
};

/* Appends a copy of s; -1 when out of memory (sv unchanged but for its capacity). */
int strv_push(struct strv *sv, const char *s);
bool strv_has(const struct strv *sv, const char *s);
/* Removes (and frees) entry i. */
void strv_remove(struct strv *sv, size_t i);
void strv_free(struct strv *sv);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* What policy_warn.c and policy_warn_paths.c share: warnings gathered with where each was
 * written, put out in profile order. */
#ifndef AGENTBOX_POLICY_WARN_LIST_H
#define AGENTBOX_POLICY_WARN_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "policy.h"
#include "strv.h"

struct warn_item {
	struct origin at;
	char *text;
};

struct warn_list {
	struct warn_item *v;
	size_t n;
	bool oom;
};

/* One warning, written at at (NULL: unknown, put last). Out of memory is kept for the end. */
void warn_add(struct warn_list *w, const struct origin *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "FILE:LINE: text" for each, by layer then line, appended to out; w is freed. -1 (e says)
 * when out of memory. */
int warn_list_out(struct warn_list *w, struct strv *out, struct ab_err *e);

#endif

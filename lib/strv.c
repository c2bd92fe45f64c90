/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* String vectors: a growable, NULL-terminated array of owned strings. */
#include "strv.h"

#include <stdlib.h>
#include <string.h>

int strv_push(struct strv *sv, const char *s)
{
	char **nv = realloc(sv->v, (sv->n + 2) * sizeof(*nv));
	if (!nv)
		return -1;
	sv->v = nv;
	if (!(sv->v[sv->n] = strdup(s)))
		return -1;
	sv->v[++sv->n] = NULL;
	return 0;
}

bool strv_has(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return true;
	return false;
}

void strv_free(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

void strv_remove(struct strv *sv, size_t i)
{
	free(sv->v[i]);
	memmove(&sv->v[i], &sv->v[i + 1], (sv->n - i) * sizeof(*sv->v));
	sv->n--;
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Why an exec of a command failed with ENOENT: the program itself, or its interpreter. */
#ifndef AGENTBOX_EXEC_WHY_H
#define AGENTBOX_EXEC_WHY_H

#include <stddef.h>

/* The line to say (cause and fix) after execvp(name) failed with ENOENT under PATH path (NULL:
 * execvp's default). Safe in a vfork child: no allocation, no shared state. */
void exec_why_enoent(const char *name, const char *path, char *text, size_t size);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* System call names as libseccomp knows them for the native architecture. A leaf: the profile
 * parser checks [seccomp] names with it, the filter builder skips the names it lacks. */
#ifndef AGENTBOX_SYSCALL_NAMES_H
#define AGENTBOX_SYSCALL_NAMES_H

#include <stdbool.h>

bool syscall_name_known(const char *name);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* System call names (see include/syscall_names.h). */
#include "syscall_names.h"

#include <seccomp.h>

bool syscall_name_known(const char *name)
{
	return seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR;
}

#include "seccomp.h"

#include <seccomp.h>

bool seccomp_syscall_known(const char *name)
{
	return seccomp_syscall_resolve_name(name) != __NR_SCMP_ERROR;
}

/* System call filtering (libseccomp). */
#ifndef AGENTBOX_SECCOMP_H
#define AGENTBOX_SECCOMP_H

#include <stdbool.h>

/* True when name is a system call libseccomp knows for the native architecture. */
bool seccomp_syscall_known(const char *name);

#endif

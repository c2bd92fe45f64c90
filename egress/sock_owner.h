/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Which process of a sandbox holds the other end of a TCP connection the proxy accepted, so
 * that a session's trail can say which exec made it. Read from /proc: the connection's socket
 * in the sandbox's network namespace (/proc/PID1/net/tcp and tcp6), then the process among pid
 * 1's descendants with an fd on that socket. Best effort: a process that has exited, or that
 * passed the socket on and closed it, is not found. */
#ifndef AGENTBOX_SOCK_OWNER_H
#define AGENTBOX_SOCK_OWNER_H

#include <sys/types.h>

/* The pid (in the caller's pid namespace) of a process below pid1 (or pid1) holding the peer
 * of accepted socket fd; -1 when none is found. */
pid_t sock_owner(pid_t pid1, int fd);

#endif

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The supervisor and pid 1 (or the fallback child) talk over one SOCK_SEQPACKET pair:
 * fixed-size messages, with fds passed by SCM_RIGHTS. pid 1 never talks to anything else. */
#ifndef AGENTBOX_CHANNEL_H
#define AGENTBOX_CHANNEL_H

#include <stddef.h>
#include <sys/types.h>

#include "egress.h"
#include "error.h"

/* MSG_TRUST: the run's CA certificate (trust.h), one sealed memfd, supervisor to pid 1; then
 * MSG_TRUST_JVM: the JVM's trust store, likewise. */
/* A session (session.h) adds: MSG_EXEC, supervisor to pid 1: run a command (id: the exec's
 * number; the encoded request follows the message; its stdin, stdout and stderr come with it);
 * MSG_EXEC_STARTED, the exec's first process to the supervisor before it execs (the kernel's
 * SCM_CREDENTIALS name its pid); MSG_EXEC_EXIT, pid 1 to the supervisor (value: the wait
 * status); MSG_EXEC_SIGNAL, supervisor to pid 1 (value: the signal for the exec's group);
 * MSG_PORT_CONNECT, supervisor to pid 1: a TCP socket of the sandbox's network, connecting to
 * the loopback address in text (127.0.0.1 or ::1) at port value (id: the forwarded connection,
 * session_ports.h); MSG_PORT_CONNECTED, pid 1's answer: the socket, its connect begun, or an
 * errno in value and no socket. */
enum msg_type {
	MSG_GO = 1,
	MSG_READY,
	MSG_ERROR,
	MSG_EXIT,
	MSG_FILTER,
	MSG_FILTER_BUILTIN,
	MSG_TRUST,
	MSG_TRUST_JVM,
	MSG_EXEC,
	MSG_EXEC_STARTED,
	MSG_EXEC_EXIT,
	MSG_EXEC_SIGNAL,
	MSG_PORT_CONNECT,
	MSG_PORT_CONNECTED,
};

struct msg {
	int type;
	int value;   /* MSG_ERROR: errno; MSG_EXIT: the command's wait status; MSG_FILTER: the
		      * number of instructions that follow the message; MSG_FILTER_BUILTIN: the
		      * precompiled program's, which pid 1 has in its own copy of the binary */
	unsigned id; /* the exec a session's message is about; 0 otherwise */
	char text[AB_ERR_MAX];
};

#define MAX_PASSED_FDS 8

/* READY's value: what comes with it, in this order of fds. */
#define READY_UNNAMED 1u   /* the filter has no listener (nested) */
#define READY_LISTENER 2u  /* fd: the seccomp notification listener */
#define READY_PROXY 4u	   /* fds: the HTTP and SOCKS5 listeners */
#define READY_CHANGES 8u   /* fd: the tmpfs of the overlays' upper layers */
#define READY_CAPTURE 16u  /* fds: the capture listener and DNS socket on 127.0.0.1 */
#define READY_CAPTURE6 32u /* fds: the same on ::1 */

/* The proxy's sockets that come with a READY bit, in the order they are passed. */
struct channel_egress {
	unsigned bit;
	int slots[2];
};
#define CHANNEL_N_PASSED_EGRESS 3
extern const struct channel_egress channel_passed_egress[CHANNEL_N_PASSED_EGRESS];

/* Sends a message with n fds attached (n <= MAX_PASSED_FDS); 0 or -1. */
int channel_send_fds(int fd, int type, int value, const char *text, const int *fds, size_t n);
int channel_send(int fd, int type, int value, const char *text);
/* 1 when a message was read, 0 at end of stream, -1 on error. Passed fds (O_CLOEXEC) land in
 * fds[0..*n) when fds is not NULL; any beyond max are closed. */
int channel_recv_fds(int fd, struct msg *m, int *fds, size_t max, size_t *n);
int channel_recv(int fd, struct msg *m);

/* A message, len bytes of data after it, and n fds. */
int channel_send_data(int fd, const struct msg *m, const void *data, size_t len, const int *fds,
		      size_t n);
/* What a received message carried besides itself: up to cap bytes of data (*len set), fds as
 * channel_recv_fds, and with SO_PASSCRED on fd the sender's pid as the kernel saw it (in the
 * receiver's pid namespace; 0 when none came). */
struct channel_extra {
	void *data;
	size_t cap, len;
	int *fds;
	size_t max, n;
	pid_t sender;
};
/* 1, 0 or -1 as channel_recv_fds; data longer than cap is an error (-1, EMSGSIZE). */
int channel_recv_extra(int fd, struct msg *m, struct channel_extra *x);

#endif

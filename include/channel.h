/* The supervisor and pid 1 (or the fallback child) talk over one SOCK_SEQPACKET pair:
 * fixed-size messages, with fds passed by SCM_RIGHTS. pid 1 never talks to anything else. */
#ifndef AGENTBOX_CHANNEL_H
#define AGENTBOX_CHANNEL_H

#include <stddef.h>

#include "egress.h"
#include "error.h"

/* MSG_TRUST: the run's trust files (trust.h), two sealed memfds, supervisor to pid 1. */
enum msg_type { MSG_GO = 1, MSG_READY, MSG_ERROR, MSG_EXIT, MSG_FILTER, MSG_TRUST };

struct msg {
	int type;
	int value; /* MSG_ERROR: errno; MSG_EXIT: the command's wait status; MSG_FILTER: the
		    * number of instructions that follow the message */
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

#endif

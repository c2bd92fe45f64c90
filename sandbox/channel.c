/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* The supervisor's and pid 1's messages (see include/channel.h). */
#include "channel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const struct channel_egress channel_passed_egress[CHANNEL_N_PASSED_EGRESS] = {
    {READY_PROXY, {EGRESS_HTTP, EGRESS_SOCKS}},
    {READY_CAPTURE, {EGRESS_CAPTURE + CAPTURE_TCP4, EGRESS_CAPTURE + CAPTURE_DNS4}},
    {READY_CAPTURE6, {EGRESS_CAPTURE + CAPTURE_TCP6, EGRESS_CAPTURE + CAPTURE_DNS6}},
};

/* Sends a message, data after it, and n fds attached (SCM_RIGHTS). */
int channel_send_data(int fd, const struct msg *m, const void *data, size_t len, const int *fds,
		      size_t n)
{
	struct iovec iov[2] = {{(void *)m, sizeof(*m)}, {(void *)data, len}};
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_PASSED_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};

	if (n > 0 && n <= MAX_PASSED_FDS) {
		struct cmsghdr *c;
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)(sizeof(*m) + len) ? 0 : -1;
}

int channel_send_fds(int fd, int type, int value, const char *text, const int *fds, size_t n)
{
	struct msg m = {.type = type, .value = value};

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	return channel_send_data(fd, &m, NULL, 0, fds, n);
}

int channel_send(int fd, int type, int value, const char *text)
{
	return channel_send_fds(fd, type, value, text, NULL, 0);
}

static void take_control(struct msghdr *mh, struct channel_extra *x)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			x->sender = uc.pid;
			continue;
		}
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int passed;
			memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (x->fds && x->n < x->max)
				x->fds[x->n++] = passed;
			else
				close(passed);
		}
	}
}

int channel_recv_extra(int fd, struct msg *m, struct channel_extra *x)
{
	struct iovec iov[2] = {{m, sizeof(*m)}, {x->data, x->cap}};
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_PASSED_FDS) +
			 CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = iov,
			    .msg_iovlen = x->cap ? 2 : 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	ssize_t got;
	bool reset = false;

	x->n = 0;
	x->len = 0;
	x->sender = 0;
	/* ECONNRESET, once: pid 1 exited leaving a message of ours (the filter) unread; what it
	 * sent before that is still queued behind the error */
	do {
		got = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (got < 0 && errno == ECONNRESET && !reset) {
			reset = true;
			errno = EINTR;
		}
	} while (got < 0 && errno == EINTR);
	if (got <= 0)
		return got < 0 ? -1 : 0;
	take_control(&mh, x);
	if (got < (ssize_t)sizeof(*m) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		errno = EMSGSIZE;
		return -1;
	}
	x->len = (size_t)got - sizeof(*m);
	m->text[sizeof(m->text) - 1] = '\0';
	return 1;
}

int channel_recv_fds(int fd, struct msg *m, int *fds, size_t max, size_t *n)
{
	struct channel_extra x = {.fds = fds, .max = max};
	int rc = channel_recv_extra(fd, m, &x);

	if (n)
		*n = x.n;
	/* a plain message carries nothing after it */
	if (rc == 1 && x.len)
		return -1;
	return rc;
}

int channel_recv(int fd, struct msg *m)
{
	return channel_recv_fds(fd, m, NULL, 0, NULL);
}

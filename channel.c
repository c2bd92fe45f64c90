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

/* Sends a message with n fds attached (SCM_RIGHTS). */
int channel_send_fds(int fd, int type, int value, const char *text, const int *fds, size_t n)
{
	struct msg m = {.type = type, .value = value};
	struct iovec iov = {&m, sizeof(m)};
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_PASSED_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
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
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -1;
}

int channel_send(int fd, int type, int value, const char *text)
{
	return channel_send_fds(fd, type, value, text, NULL, 0);
}

int channel_recv_fds(int fd, struct msg *m, int *fds, size_t max, size_t *n)
{
	struct iovec iov = {m, sizeof(*m)};
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_PASSED_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	ssize_t got;
	bool reset = false;

	if (n)
		*n = 0;
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
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < k; i++) {
			int passed;
			memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds && *n < max)
				fds[(*n)++] = passed;
			else
				close(passed);
		}
	}
	if (got != (ssize_t)sizeof(*m))
		return -1;
	m->text[sizeof(m->text) - 1] = '\0';
	return 1;
}

int channel_recv(int fd, struct msg *m)
{
	return channel_recv_fds(fd, m, NULL, 0, NULL);
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* uring: io_uring performs its operations in the kernel, out of reach of a seccomp filter that
 * sees only the system calls that submit them; so io_uring_setup itself must fail.
 *   uring openat FILE MARKER   IORING_OP_OPENAT and IORING_OP_READ of FILE: SUCCESS when MARKER
 *                              is read
 *   uring connect              listens on 127.0.0.1 (a free port) and connects to it with
 *                              IORING_OP_CONNECT: SUCCESS when the connection is accepted
 * No liburing: the raw system calls and ring mappings, one submission at a time. */
#include "escape.h"

#include <arpa/inet.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static void ring_setup(struct ring *r)
{
	struct io_uring_params p;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (r->fd < 0)
		failed(errno, "io_uring_setup");
	info("io_uring_setup gave fd %d", r->fd);
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		failed(errno, "mmap of the rings");
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
}

/* Submits one prepared sqe and returns its result (a negative errno on failure). */
static int ring_run(struct ring *r, const struct io_uring_sqe *sqe)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	int res;

	r->sqes[idx] = *sqe;
	r->sq_array[idx] = idx;
	atomic_store_explicit((_Atomic unsigned *)r->sq_tail, tail + 1, memory_order_release);
	if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		failed(errno, "io_uring_enter");
	head = atomic_load_explicit((_Atomic unsigned *)r->cq_head, memory_order_acquire);
	if (head == atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire))
		failed(0, "no completion");
	res = r->cqes[head & *r->cq_mask].res;
	atomic_store_explicit((_Atomic unsigned *)r->cq_head, head + 1, memory_order_release);
	return res;
}

int main(int argc, char **argv)
{
	struct ring r;
	struct io_uring_sqe sqe;

	if (argc == 4 && !strcmp(argv[1], "openat")) {
		char buf[4096] = "";
		int fd, n;
		ring_setup(&r);
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = IORING_OP_OPENAT;
		sqe.fd = AT_FDCWD;
		sqe.addr = (unsigned long)argv[2];
		sqe.open_flags = O_RDONLY | O_CLOEXEC;
		if ((fd = ring_run(&r, &sqe)) < 0)
			failed(-fd, "IORING_OP_OPENAT %s", argv[2]);
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = IORING_OP_READ;
		sqe.fd = fd;
		sqe.addr = (unsigned long)buf;
		sqe.len = sizeof(buf) - 1;
		if ((n = ring_run(&r, &sqe)) < 0)
			failed(-n, "IORING_OP_READ");
		buf[n] = '\0';
		if (!strstr(buf, argv[3]))
			failed(0, "read %d bytes without the marker", n);
		success("opened and read %s through io_uring", argv[2]);
	}
	if (argc == 2 && !strcmp(argv[1], "connect")) {
		struct sockaddr_in a = {.sin_family = AF_INET,
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof(a);
		int srv, cli, rc;
		ring_setup(&r);
		srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (srv < 0 || cli < 0 || bind(srv, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    listen(srv, 1) < 0 || getsockname(srv, (struct sockaddr *)&a, &len) < 0)
			failed(errno, "a listening socket on 127.0.0.1");
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = IORING_OP_CONNECT;
		sqe.fd = cli;
		sqe.addr = (unsigned long)&a;
		sqe.off = sizeof(a);
		if ((rc = ring_run(&r, &sqe)) < 0)
			failed(-rc, "IORING_OP_CONNECT 127.0.0.1:%d", ntohs(a.sin_port));
		if (accept(srv, NULL, NULL) < 0)
			failed(errno, "accept");
		success("connected to 127.0.0.1:%d through io_uring", ntohs(a.sin_port));
	}
	usage("uring openat FILE MARKER | uring connect");
}

/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* sock: reach something over a socket.
 *   sock unix PATH            connect to a unix socket by path and read its greeting
 *   sock abstract NAME        the same for an abstract unix socket (no file: "\0NAME")
 *   sock tcp ADDR PORT        connect to ADDR (IPv4, IPv6 or IPv4-mapped IPv6 literal)
 *   sock udp ADDR PORT        send a DNS query for example.com and wait 1 s for an answer:
 *                             SUCCESS with an answer, RESULT SENT when the packet left but
 *                             nothing came back, FAILED when it could not be sent
 *   sock raw|raw6 [own]       an ICMP raw socket (AF_INET / AF_INET6, SOCK_RAW)
 *   sock packet [own]         an AF_PACKET socket (every frame on every interface)
 *   sock diag                 NETLINK_SOCK_DIAG: dump the unix sockets of the namespace
 * own: first a user and network namespace of its own (an unprivileged caller's positive
 * control: CAP_NET_RAW there). */
#include "escape.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

static _Noreturn void greet(int fd, const char *what)
{
	char buf[256];
	struct pollfd p = {fd, POLLIN, 0};
	ssize_t n = 0;

	if (poll(&p, 1, 2000) == 1)
		n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	success("connected to %s: '%s'", what, buf);
}

static _Noreturn void unix_connect(const char *name, int abstract)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		failed(errno, "socket(AF_UNIX)");
	if (strlen(name) + 2 > sizeof(a.sun_path))
		usage("name too long");
	strcpy(a.sun_path + (abstract ? 1 : 0), name);
	len =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name) + (abstract ? 1 : 1));
	if (connect(fd, (struct sockaddr *)&a, len) < 0)
		failed(errno, "connect %s%s", abstract ? "@" : "", name);
	greet(fd, name);
}

/* An address of either family from a literal. */
static socklen_t addr_of(const char *host, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		return sizeof(*a4);
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		return sizeof(*a6);
	}
	usage("not an address literal");
}

static _Noreturn void udp_dns(const char *host, int port)
{
	/* id 0x5eed, recursion desired, one question: example.com IN A */
	static const unsigned char q[] = {0x5e, 0xed, 1,   0,	0,   1,	  0,   0,   0,	 0,
					  0,	0,    7,   'e', 'x', 'a', 'm', 'p', 'l', 'e',
					  3,	'c',  'o', 'm', 0,   0,	  1,   0,   1};
	struct sockaddr_storage ss;
	socklen_t len = addr_of(host, port, &ss);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct pollfd p = {fd, POLLIN, 0};
	char buf[512];

	if (fd < 0)
		failed(errno, "socket(SOCK_DGRAM)");
	if (sendto(fd, q, sizeof(q), 0, (struct sockaddr *)&ss, len) < 0)
		failed(errno, "sendto %s:%d", host, port);
	if (poll(&p, 1, 1000) == 1) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n > 0)
			success("a %zd-byte answer from %s:%d", n, host, port);
		failed(errno, "recv from %s:%d", host, port);
	}
	printf("RESULT SENT the query left for %s:%d, no answer within 1 s\n", host, port);
	exit(0);
}

static _Noreturn void sock_diag(void)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req req;
	} msg;
	char buf[16384];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), n_sock = 0;
	ssize_t n;

	if (fd < 0)
		failed(errno, "socket(AF_NETLINK, NETLINK_SOCK_DIAG)");
	memset(&msg, 0, sizeof(msg));
	msg.nh.nlmsg_len = sizeof(msg);
	msg.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	msg.req.sdiag_family = AF_UNIX;
	msg.req.udiag_states = ~0u;
	msg.req.udiag_show = UDIAG_SHOW_NAME;
	if (send(fd, &msg, sizeof(msg), 0) < 0)
		failed(errno, "send the dump request");
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				goto done;
			if (h->nlmsg_type == NLMSG_ERROR)
				failed(EINVAL, "the dump answered an error");
			n_sock++;
		}
	}
done:
	success("sock_diag listed %d unix sockets", n_sock);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "unix"))
		unix_connect(argv[2], 0);
	if (argc == 3 && !strcmp(argv[1], "abstract"))
		unix_connect(argv[2], 1);
	if (argc == 4 && !strcmp(argv[1], "tcp")) {
		struct sockaddr_storage ss;
		socklen_t len = addr_of(argv[2], atoi(argv[3]), &ss);
		int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			failed(errno, "socket");
		if (connect(fd, (struct sockaddr *)&ss, len) < 0)
			failed(errno, "connect %s port %s", argv[2], argv[3]);
		greet(fd, argv[2]);
	}
	if (argc == 4 && !strcmp(argv[1], "udp"))
		udp_dns(argv[2], atoi(argv[3]));
	if (argc >= 2 &&
	    (!strcmp(argv[1], "raw") || !strcmp(argv[1], "raw6") || !strcmp(argv[1], "packet"))) {
		int fd;
		if (argc == 3 && !strcmp(argv[2], "own") && own_userns(CLONE_NEWNET) < 0)
			failed(errno, "control: a user and network namespace of its own");
		if (!strcmp(argv[1], "raw"))
			fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
		else if (!strcmp(argv[1], "raw6"))
			fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
		else
			fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
		if (fd < 0)
			failed(errno, "socket(%s)", argv[1]);
		success("a %s socket (fd %d)", argv[1], fd);
	}
	if (argc == 2 && !strcmp(argv[1], "diag"))
		sock_diag();
	usage("sock unix PATH | abstract NAME | tcp ADDR PORT | udp ADDR PORT | raw|raw6|packet "
	      "[own] "
	      "| diag");
}

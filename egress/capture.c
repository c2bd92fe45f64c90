/* SPDX-License-Identifier: LicenseRef-agentbox-unlicensed */
/* Transparent capture, the sandbox side: routes and nftables rules written over netlink by hand
 * (a few fixed messages do not justify libmnl and libnftnl), then the sockets they lead to. */
#include "capture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define TABLE "agentbox"
#define CHAIN "capture"

/* One netlink request being built; every append is bounds-checked and a message that did not
 * fit is never sent. */
struct nlbuf {
	_Alignas(struct nlmsghdr) char data[8192];
	size_t len;
	bool full;
	uint32_t seq, first_seq;
};

static void *nl_put(struct nlbuf *b, const void *data, size_t len)
{
	size_t aligned = NLMSG_ALIGN(len);
	void *at;

	if (b->full || sizeof(b->data) - b->len < aligned) {
		b->full = true;
		return NULL;
	}
	at = b->data + b->len;
	memset(at, 0, aligned);
	if (data)
		memcpy(at, data, len);
	b->len += aligned;
	return at;
}

static size_t nl_msg_begin(struct nlbuf *b, uint16_t type, uint16_t flags)
{
	struct nlmsghdr h = {.nlmsg_type = type,
			     .nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags),
			     .nlmsg_seq = ++b->seq};
	size_t at = b->len;

	nl_put(b, &h, sizeof(h));
	return at;
}

static void nl_msg_end(struct nlbuf *b, size_t at)
{
	if (!b->full)
		((struct nlmsghdr *)(b->data + at))->nlmsg_len = (uint32_t)(b->len - at);
}

static void nl_attr(struct nlbuf *b, uint16_t type, const void *data, size_t len)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type};

	if (nl_put(b, &a, sizeof(a)))
		nl_put(b, data, len);
}

static void nl_attr_u32(struct nlbuf *b, uint16_t type, uint32_t host_order)
{
	uint32_t be = htonl(host_order);
	nl_attr(b, type, &be, sizeof(be));
}

static void nl_attr_str(struct nlbuf *b, uint16_t type, const char *s)
{
	nl_attr(b, type, s, strlen(s) + 1);
}

static size_t nl_nest_begin(struct nlbuf *b, uint16_t type)
{
	size_t at = b->len;
	struct nlattr a = {.nla_type = (uint16_t)(type | NLA_F_NESTED)};

	nl_put(b, &a, sizeof(a));
	return at;
}

static void nl_nest_end(struct nlbuf *b, size_t at)
{
	if (!b->full)
		((struct nlattr *)(b->data + at))->nla_len = (uint16_t)(b->len - at);
}

/* ---------- sending, and reading every acknowledgement ---------- */

/* Sends the request and waits for an ack of each message; the first error wins. */
static int nl_talk(int protocol, struct nlbuf *b, const char *what, struct ab_err *e)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	_Alignas(struct nlmsghdr) char reply[8192];
	uint32_t acked = 0, want = b->seq - b->first_seq;
	int fd, err = 0;

	if (b->full)
		return ab_fail(e, EMSGSIZE, "%s: netlink request too large", what);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
	if (fd < 0)
		return ab_fail(e, errno, "%s: netlink socket", what);
	/* the kernel answers at once; a missing ack must not hang pid 1 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){5, 0},
		       sizeof(struct timeval)) < 0) {
		err = errno;
		goto out;
	}
	if (sendto(fd, b->data, b->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) !=
	    (ssize_t)b->len) {
		err = errno ? errno : EIO;
		goto out;
	}
	while (acked < want && !err) {
		ssize_t n = recv(fd, reply, sizeof(reply), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EPROTO;
			break;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
				err = EPROTO;
				break;
			}
			err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
			acked++;
			if (err)
				break;
		}
	}
out:
	close(fd);
	return err ? ab_fail(e, err, "%s", what) : 0;
}

/* ---------- routes: every address is local ---------- */

/* `ip route add local default dev lo`: a connect() to any address gets a route (instead of
 * ENETUNREACH) and its packets loop back, where the rules below catch them. */
static void add_local_default(struct nlbuf *b, int family, int lo)
{
	struct rtmsg rt = {.rtm_family = (unsigned char)family,
			   .rtm_table = RT_TABLE_LOCAL,
			   .rtm_protocol = RTPROT_BOOT,
			   .rtm_scope = RT_SCOPE_HOST,
			   .rtm_type = RTN_LOCAL};
	size_t msg = nl_msg_begin(b, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);

	nl_put(b, &rt, sizeof(rt));
	nl_attr(b, RTA_OIF, &lo, sizeof(lo));
	nl_msg_end(b, msg);
}

/* ---------- nftables: redirect what leaves loopback ---------- */

static size_t nft_msg_begin(struct nlbuf *b, uint16_t type, int family, uint16_t flags)
{
	struct nfgenmsg g = {.nfgen_family = (uint8_t)family, .version = NFNETLINK_V0};
	size_t at = nl_msg_begin(b, type, flags);

	if (type != NFNL_MSG_BATCH_BEGIN && type != NFNL_MSG_BATCH_END)
		((struct nlmsghdr *)(b->data + at))->nlmsg_type =
		    (uint16_t)((NFNL_SUBSYS_NFTABLES << 8) | type);
	else
		g.res_id = htons(NFNL_SUBSYS_NFTABLES);
	nl_put(b, &g, sizeof(g));
	return at;
}

static size_t expr_begin(struct nlbuf *b, const char *name)
{
	size_t elem = nl_nest_begin(b, NFTA_LIST_ELEM);

	nl_attr_str(b, NFTA_EXPR_NAME, name);
	nl_nest_begin(b, NFTA_EXPR_DATA);
	return elem;
}

/* closes NFTA_EXPR_DATA (which starts right after the name) and the element */
static void expr_end(struct nlbuf *b, size_t elem, const char *name)
{
	size_t data = elem + NLA_HDRLEN + NLA_ALIGN(NLA_HDRLEN + strlen(name) + 1);

	nl_nest_end(b, data);
	nl_nest_end(b, elem);
}

static void expr_data(struct nlbuf *b, uint16_t type, const void *value, size_t len)
{
	size_t nest = nl_nest_begin(b, type);

	nl_attr(b, NFTA_DATA_VALUE, value, len);
	nl_nest_end(b, nest);
}

/* register 1 = len bytes of the packet at offset in a header */
static void expr_payload(struct nlbuf *b, uint32_t base, uint32_t offset, uint32_t len)
{
	size_t x = expr_begin(b, "payload");

	nl_attr_u32(b, NFTA_PAYLOAD_DREG, NFT_REG_1);
	nl_attr_u32(b, NFTA_PAYLOAD_BASE, base);
	nl_attr_u32(b, NFTA_PAYLOAD_OFFSET, offset);
	nl_attr_u32(b, NFTA_PAYLOAD_LEN, len);
	expr_end(b, x, "payload");
}

/* register 1 = the transport protocol */
static void expr_l4proto(struct nlbuf *b)
{
	size_t x = expr_begin(b, "meta");

	nl_attr_u32(b, NFTA_META_KEY, NFT_META_L4PROTO);
	nl_attr_u32(b, NFTA_META_DREG, NFT_REG_1);
	expr_end(b, x, "meta");
}

/* the rule goes on only when register 1 equals value */
static void expr_cmp_eq(struct nlbuf *b, const void *value, size_t len)
{
	size_t x = expr_begin(b, "cmp");

	nl_attr_u32(b, NFTA_CMP_SREG, NFT_REG_1);
	nl_attr_u32(b, NFTA_CMP_OP, NFT_CMP_EQ);
	expr_data(b, NFTA_CMP_DATA, value, len);
	expr_end(b, x, "cmp");
}

static void expr_accept(struct nlbuf *b)
{
	size_t x = expr_begin(b, "immediate"), data, verdict;

	nl_attr_u32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
	data = nl_nest_begin(b, NFTA_IMMEDIATE_DATA);
	verdict = nl_nest_begin(b, NFTA_DATA_VERDICT);
	nl_attr_u32(b, NFTA_VERDICT_CODE, NF_ACCEPT);
	nl_nest_end(b, verdict);
	nl_nest_end(b, data);
	expr_end(b, x, "immediate");
}

/* redirect to port on the loopback address of the packet's family */
static void expr_redirect(struct nlbuf *b, uint16_t port)
{
	uint16_t be = htons(port);
	size_t x = expr_begin(b, "immediate");

	nl_attr_u32(b, NFTA_IMMEDIATE_DREG, NFT_REG_1);
	expr_data(b, NFTA_IMMEDIATE_DATA, &be, sizeof(be));
	expr_end(b, x, "immediate");
	x = expr_begin(b, "redir");
	nl_attr_u32(b, NFTA_REDIR_REG_PROTO_MIN, NFT_REG_1);
	nl_attr_u32(b, NFTA_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	expr_end(b, x, "redir");
}

static size_t rule_begin(struct nlbuf *b, int family, size_t *exprs)
{
	size_t msg =
	    nft_msg_begin(b, NFT_MSG_NEWRULE, family, NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK);

	nl_attr_str(b, NFTA_RULE_TABLE, TABLE);
	nl_attr_str(b, NFTA_RULE_CHAIN, CHAIN);
	*exprs = nl_nest_begin(b, NFTA_RULE_EXPRESSIONS);
	return msg;
}

static void rule_end(struct nlbuf *b, size_t msg, size_t exprs)
{
	nl_nest_end(b, exprs);
	nl_msg_end(b, msg);
}

/* The table, its NAT chain on the output hook, and three rules:
 *   udp dport 53             → redirect to the DNS stub (a resolv.conf may name a loopback
 *                              server such as 127.0.0.53, so this comes first)
 *   daddr is loopback        → accept (the proxies, the sandbox's own servers)
 *   tcp                      → redirect to the capture listener */
static void add_family_rules(struct nlbuf *b, int family)
{
	static const uint8_t loopback4 = 127, tcp = IPPROTO_TCP, udp = IPPROTO_UDP;
	static const struct in6_addr loopback6 = IN6ADDR_LOOPBACK_INIT;
	uint16_t dns_be = htons(53);
	size_t msg, nest, exprs;

	msg = nft_msg_begin(b, NFT_MSG_NEWTABLE, family, NLM_F_CREATE | NLM_F_ACK);
	nl_attr_str(b, NFTA_TABLE_NAME, TABLE);
	nl_msg_end(b, msg);

	msg = nft_msg_begin(b, NFT_MSG_NEWCHAIN, family, NLM_F_CREATE | NLM_F_ACK);
	nl_attr_str(b, NFTA_CHAIN_TABLE, TABLE);
	nl_attr_str(b, NFTA_CHAIN_NAME, CHAIN);
	nest = nl_nest_begin(b, NFTA_CHAIN_HOOK);
	nl_attr_u32(b, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
	nl_attr_u32(b, NFTA_HOOK_PRIORITY, (uint32_t)-100); /* NF_IP_PRI_NAT_DST */
	nl_nest_end(b, nest);
	nl_attr_str(b, NFTA_CHAIN_TYPE, "nat");
	nl_msg_end(b, msg);

	msg = rule_begin(b, family, &exprs);
	expr_l4proto(b);
	expr_cmp_eq(b, &udp, 1);
	expr_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2); /* dport */
	expr_cmp_eq(b, &dns_be, 2);
	expr_redirect(b, CAPTURE_DNS_PORT);
	rule_end(b, msg, exprs);

	msg = rule_begin(b, family, &exprs);
	if (family == NFPROTO_IPV4) {
		expr_payload(b, NFT_PAYLOAD_NETWORK_HEADER, 16, 1); /* first byte of daddr */
		expr_cmp_eq(b, &loopback4, 1);
	} else {
		expr_payload(b, NFT_PAYLOAD_NETWORK_HEADER, 24, 16); /* daddr */
		expr_cmp_eq(b, &loopback6, 16);
	}
	expr_accept(b);
	rule_end(b, msg, exprs);

	msg = rule_begin(b, family, &exprs);
	expr_l4proto(b);
	expr_cmp_eq(b, &tcp, 1);
	expr_redirect(b, CAPTURE_TCP_PORT);
	rule_end(b, msg, exprs);
}

static int add_rules(bool ipv6, struct ab_err *e)
{
	static struct nlbuf b; /* pid 1 is single-threaded; 8 KiB off its stack */
	size_t msg;

	memset(&b, 0, sizeof(b));
	msg = nft_msg_begin(&b, NFNL_MSG_BATCH_BEGIN, AF_UNSPEC, 0);
	nl_msg_end(&b, msg);
	b.first_seq = b.seq;
	add_family_rules(&b, NFPROTO_IPV4);
	if (ipv6)
		add_family_rules(&b, NFPROTO_IPV6);
	msg = nft_msg_begin(&b, NFNL_MSG_BATCH_END, AF_UNSPEC, 0);
	nl_msg_end(&b, msg);
	b.seq--; /* the batch's end is not acknowledged */
	return nl_talk(NETLINK_NETFILTER, &b, "nftables rules for transparent capture", e);
}

static int add_routes(bool ipv6, struct ab_err *e)
{
	struct nlbuf *b = &(struct nlbuf){0};
	int lo = (int)if_nametoindex("lo");

	if (lo <= 0)
		return ab_fail(e, errno, "capture: no loopback interface");
	add_local_default(b, AF_INET, lo);
	if (ipv6)
		add_local_default(b, AF_INET6, lo);
	return nl_talk(NETLINK_ROUTE, b, "local default route for transparent capture", e);
}

/* ---------- the sockets the rules lead to ---------- */

static int open_socket(int family, int type, uint16_t port, struct ab_err *e)
{
	struct sockaddr_in s4 = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in6 s6 = {
	    .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int one = 1, fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	const char *kind = type == SOCK_STREAM ? "capture listener" : "DNS stub socket";
	int rc;

	if (fd < 0)
		return ab_fail(e, errno, "%s", kind);
	rc = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (rc == 0 && family == AF_INET6)
		rc = setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (rc == 0)
		rc = family == AF_INET ? bind(fd, (struct sockaddr *)&s4, sizeof(s4))
				       : bind(fd, (struct sockaddr *)&s6, sizeof(s6));
	if (rc == 0 && type == SOCK_STREAM)
		rc = listen(fd, 512);
	if (rc < 0) {
		int err = errno;
		close(fd);
		return ab_fail(e, err, "%s on %s:%u", kind,
			       family == AF_INET ? "127.0.0.1" : "[::1]", port);
	}
	return fd;
}

/* IPv6 sockets, and ::1 on loopback (a kernel or sysctl that disables IPv6 leaves it off). */
static bool have_ipv6(void)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = bind(fd, (struct sockaddr *)&s6, sizeof(s6)) == 0;
	close(fd);
	return ok;
}

static void close_all(int fds[CAPTURE_SOCKETS])
{
	for (int i = 0; i < CAPTURE_SOCKETS; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int capture_setup(int fds[CAPTURE_SOCKETS], int *missing, struct ab_err *e)
{
	bool ipv6 = have_ipv6();

	*missing = 0;
	for (int i = 0; i < CAPTURE_SOCKETS; i++)
		fds[i] = -1;
	/* the sockets first: nothing is redirected until something listens */
	if ((fds[CAPTURE_TCP4] = open_socket(AF_INET, SOCK_STREAM, CAPTURE_TCP_PORT, e)) < 0 ||
	    (fds[CAPTURE_DNS4] = open_socket(AF_INET, SOCK_DGRAM, CAPTURE_DNS_PORT, e)) < 0 ||
	    (ipv6 &&
	     ((fds[CAPTURE_TCP6] = open_socket(AF_INET6, SOCK_STREAM, CAPTURE_TCP_PORT, e)) < 0 ||
	      (fds[CAPTURE_DNS6] = open_socket(AF_INET6, SOCK_DGRAM, CAPTURE_DNS_PORT, e)) < 0)))
		goto fail;
	/* the rules before the routes: a route without its rules would let a connect() reach
	 * whatever listens on that port inside, not the filter */
	if (add_rules(ipv6, e) < 0) {
		/* no nf_tables, no NAT, or a kernel that refuses them to this user namespace */
		*missing = e->errnum == ENOENT || e->errnum == EOPNOTSUPP ||
			   e->errnum == EPROTONOSUPPORT || e->errnum == EPERM ||
			   e->errnum == EAFNOSUPPORT;
		goto fail;
	}
	if (add_routes(ipv6, e) < 0)
		goto fail;
	return 0;
fail:
	close_all(fds);
	return -1;
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# net_dns_none: DNS is the classic exfiltration channel that firewalls forget: a query for
# <secret>.attacker.example reaches the attacker's name server through any resolver. Under the
# default network mode, none, the probe sends a DNS query to 8.8.8.8:53 and to a DNS server
# the test runs on the host's 127.0.0.1, and looks for a resolver configuration.
# Defence: the network namespace: mode none has only its own loopback and no route
# (ENETUNREACH); the host's 127.0.0.1 is another machine's; /etc/resolv.conf is not in the
# view.
# Control: with --net host the same probe gets an answer from the host's test DNS server, and
# its packet to 8.8.8.8 leaves (or is answered) when the host has a route.

setup() {
	serve "unused" udp4
}

control() {
	ab shell --net host -- "$BIN/sock" udp 127.0.0.1 "$PORT_udp4"
	result_is SUCCESS || control_failed "--net host got no answer from the host's DNS server" "$(evidence)"
	local local_answer=$RESULT
	ab shell --net host -- "$BIN/sock" udp 8.8.8.8 53
	control_ok "--net host: $local_answer; to 8.8.8.8: $RESULT"
}

attack() {
	ab shell -- "$BIN/sock" udp 8.8.8.8 53
	result_is SUCCESS && escaped "8.8.8.8 answered a DNS query from the sandbox" "$(evidence)"
	result_is SENT && escaped "a DNS query left the sandbox for 8.8.8.8" "$(evidence)"
	errno_is ENETUNREACH || escaped "no proof 8.8.8.8 was unreachable" "$(evidence)"
	ab shell -- "$BIN/sock" udp 127.0.0.1 "$PORT_udp4"
	result_is SUCCESS && escaped "the host's DNS server on 127.0.0.1 answered the sandbox" "$(evidence)"
	ab shell -- sh -c '[ -e /etc/resolv.conf ] && echo RESOLV-CONF; exit 0'
	case "$OUT" in *RESOLV-CONF*) escaped "/etc/resolv.conf is in the view" ;; esac
	blocked "8.8.8.8:53: ENETUNREACH; the host's DNS server on 127.0.0.1: no answer; no /etc/resolv.conf"
}

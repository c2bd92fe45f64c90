# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# net_loopback_v4mapped: services on the host's loopback trust local clients (databases, admin
# consoles, the cloud metadata proxy, language servers, Docker's API). A test server listens on
# 127.0.0.1 and ::1; the sandbox, under the default network mode none, connects to the host's
# 127.0.0.1 written as the IPv4-mapped IPv6 address ::ffff:127.0.0.1 (a filter written for
# 127.0.0.0/8 and ::1 would miss it).
# Defence: the network namespace: in mode none the sandbox's loopback is its own (ECONNREFUSED).
# Control: with --net host the same probe connects and gets the server's greeting.

setup() {
	GREETING="HELLO-$(unique)"
	serve "$GREETING" tcp4 tcp6
}

control() {
	ab shell --net host -- "$BIN/sock" tcp ::ffff:127.0.0.1 "$PORT_tcp"
	case "$RESULT" in *"$GREETING"*) control_ok "--net host: $RESULT" ;; esac
	control_failed "--net host did not reach the host's server at ::ffff:127.0.0.1" "$(evidence)"
}

attack() {
	ab shell -- "$BIN/sock" tcp ::ffff:127.0.0.1 "$PORT_tcp"
	case "$OUT" in *"$GREETING"*) escaped "the sandbox reached the host's server at ::ffff:127.0.0.1" "$(evidence)" ;; esac
	errno_is ECONNREFUSED || escaped "no proof the connection was refused" "$(evidence)"
	blocked "connect(::ffff:127.0.0.1 port $PORT_tcp): ECONNREFUSED (the sandbox's own loopback)"
}

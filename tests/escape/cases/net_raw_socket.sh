# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# net_raw_socket: raw IP sockets (AF_INET/AF_INET6, SOCK_RAW) forge packets of any kind and
# read traffic of their protocol: spoofing, scanning, sniffing ICMP.
# Defence: no capabilities: SOCK_RAW needs CAP_NET_RAW (over the network namespace), which is
# dropped from every set (the filter allows inet sockets as such, so the kernel refuses:
# EPERM).
# Control: the same probe on the host opens both (as root directly; as a user in a user and
# network namespace of its own, where it holds CAP_NET_RAW).

control() {
	local own=""
	is_root || own=own
	host "$BIN/sock" raw $own
	result_is SUCCESS || control_failed "no raw IPv4 socket on the host" "$(evidence)"
	host "$BIN/sock" raw6 $own
	result_is SUCCESS || control_failed "no raw IPv6 socket on the host" "$(evidence)"
	control_ok "on the host$( [ -n "$own" ] && echo " (own user+net namespace)"): raw IPv4 and IPv6 sockets"
}

attack() {
	ab shell -- "$BIN/sock" raw
	result_is SUCCESS && escaped "a raw IPv4 socket inside the sandbox" "$(evidence)"
	errno_is EPERM || escaped "no proof the raw IPv4 socket was refused" "$(evidence)"
	ab shell -- "$BIN/sock" raw6
	result_is SUCCESS && escaped "a raw IPv6 socket inside the sandbox" "$(evidence)"
	errno_is EPERM || escaped "no proof the raw IPv6 socket was refused" "$(evidence)"
	blocked "socket(AF_INET/AF_INET6, SOCK_RAW): EPERM (no CAP_NET_RAW)"
}

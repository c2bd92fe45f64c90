# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# net_packet_socket: AF_PACKET sees and sends whole frames on every interface of the namespace
# (under --net host: the host's), below every firewall.
# Defence: seccomp (socket families other than unix, inet, inet6 and netlink-route are
# refused, named in the audit); and no CAP_NET_RAW.
# Control: the same probe on the host opens one (as root directly; as a user in a user and
# network namespace of its own).

control() {
	local own=""
	is_root || own=own
	host "$BIN/sock" packet $own
	result_is SUCCESS || control_failed "no AF_PACKET socket on the host" "$(evidence)"
	control_ok "on the host$( [ -n "$own" ] && echo " (own user+net namespace)"): $RESULT"
}

attack() {
	ab shell --net host -- "$BIN/sock" packet
	result_is SUCCESS && escaped "an AF_PACKET socket inside the sandbox (--net host)" "$(evidence)"
	errno_is EPERM && audit_syscall socket a0 17 ||
		escaped "no proof the filter refused AF_PACKET" "$(evidence)"
	blocked "--net host: socket(AF_PACKET): EPERM (the filter, named in the audit)"
}

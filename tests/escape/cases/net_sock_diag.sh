# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# net_sock_diag: NETLINK_SOCK_DIAG lists the sockets of the namespace with their peers, paths,
# and owners (under --net host: every connection on the host, and who holds it).
# Defence: seccomp: netlink is allowed for NETLINK_ROUTE only (EPERM, named in the audit).
# Control: the same probe on the host dumps the unix sockets.

control() {
	host "$BIN/sock" diag
	result_is SUCCESS || control_failed "sock_diag failed on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell --net host -- "$BIN/sock" diag
	result_is SUCCESS && escaped "sock_diag worked inside the sandbox (--net host)" "$(evidence)"
	errno_is EPERM && audit_syscall socket a0 16 ||
		escaped "no proof the filter refused NETLINK_SOCK_DIAG" "$(evidence)"
	blocked "--net host: socket(AF_NETLINK, NETLINK_SOCK_DIAG): EPERM (the filter, named in the audit)"
}

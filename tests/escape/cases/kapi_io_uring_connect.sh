# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# kapi_io_uring_connect: the network half of io_uring: IORING_OP_CONNECT would open connections
# no filter on connect/socket sees. Run under offline-strict, whose allowlist must not contain
# io_uring either.
# Defence: seccomp: the strict preset's allowlist has no io_uring_* call (ENOSYS, named in the
# audit); the default preset refuses them (kapi_io_uring_openat).
# Control: the same probe on the host connects through io_uring to a listener of its own.

control() {
	host "$BIN/uring" connect
	# a kernel without io_uring answers ENOSYS; kernel.io_uring_disabled (2, or 1 for a user
	# outside io_uring_group) EPERM: then there is nothing io_uring could do inside either
	errno_is ENOSYS && not_applicable "this kernel has no io_uring (ENOSYS on the host)" "$(evidence)"
	errno_is EPERM && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ] &&
		not_applicable "io_uring is off (kernel.io_uring_disabled=$(cat /proc/sys/kernel/io_uring_disabled))" "$(evidence)"
	result_is SUCCESS || control_failed "io_uring did not work on the host (kernel.io_uring_disabled?)" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab offline-strict -- "$BIN/uring" connect
	result_is SUCCESS && escaped "io_uring worked inside the sandbox" "$(evidence)"
	errno_is ENOSYS && audit_syscall io_uring_setup ||
		escaped "no proof the strict filter refused io_uring_setup" "$(evidence)"
	blocked "under offline-strict io_uring_setup: ENOSYS (off the allowlist, named in the audit)"
}

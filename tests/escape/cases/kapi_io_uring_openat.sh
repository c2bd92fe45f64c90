# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# kapi_io_uring_openat: io_uring performs file operations inside the kernel; a filter sees only
# io_uring_enter, never the openat it carries. The probe opens and reads a file with
# IORING_OP_OPENAT and IORING_OP_READ, so io_uring_setup itself must fail.
# Defence: seccomp: io_uring_setup, io_uring_enter and io_uring_register are refused (named in
# the audit).
# Control: the same probe on the host opens and reads a file through io_uring.

setup() {
	echo "MARK-$NAME" >data.txt
}

control() {
	host "$BIN/uring" openat "$CASE/data.txt" "MARK-$NAME"
	# a kernel without io_uring answers ENOSYS; kernel.io_uring_disabled (2, or 1 for a user
	# outside io_uring_group) EPERM: then there is nothing io_uring could do inside either
	errno_is ENOSYS && not_applicable "this kernel has no io_uring (ENOSYS on the host)" "$(evidence)"
	errno_is EPERM && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ] &&
		not_applicable "io_uring is off (kernel.io_uring_disabled=$(cat /proc/sys/kernel/io_uring_disabled))" "$(evidence)"
	result_is SUCCESS || control_failed "io_uring did not work on the host (kernel.io_uring_disabled?)" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/uring" openat "$CASE/data.txt" "MARK-$NAME"
	result_is SUCCESS && escaped "io_uring worked inside the sandbox" "$(evidence)"
	errno_is EPERM && audit_syscall io_uring_setup ||
		escaped "no proof the filter refused io_uring_setup" "$(evidence)"
	blocked "io_uring_setup: EPERM (the filter, named in the audit)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# kapi_userfaultfd: userfaultfd lets a process stall the kernel on a page fault at a moment it
# chooses, the classic way to win kernel races; the probe opens one (user-mode faults only) and
# does the API handshake.
# Defence: seccomp: userfaultfd is refused (EPERM, named in the audit).
# Control: the same probe on the host succeeds.

control() {
	host "$BIN/kapi" userfaultfd
	errno_is ENOSYS && not_applicable "this kernel has no userfaultfd (ENOSYS on the host)" "$(evidence)"
	result_is SUCCESS || control_failed "the call failed on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/kapi" userfaultfd
	result_is SUCCESS && escaped "userfaultfd worked inside the sandbox" "$(evidence)"
	errno_is EPERM && audit_syscall userfaultfd ||
		escaped "no proof the filter refused userfaultfd" "$(evidence)"
	blocked "userfaultfd: EPERM (the filter, named in the audit)"
}

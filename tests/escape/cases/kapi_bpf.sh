# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# kapi_bpf: BPF programs and maps reach deep into the kernel (and, with privilege, other
# processes); the probe creates an array map.
# Defence: seccomp: bpf is refused (EPERM, named in the audit).
# Control: the same probe on the host creates the map as root; as a user, whom
# kernel.unprivileged_bpf_disabled refuses, the kernel answers an oversized attribute with E2BIG
# (the call reaches it).

control() {
	host "$BIN/kapi" bpf
	result_is SUCCESS && control_ok "$RESULT"
	is_root && control_failed "BPF_MAP_CREATE failed on the host as root" "$(evidence)"
	# unprivileged bpf is off on most hosts (kernel.unprivileged_bpf_disabled): the control is
	# then that the call reaches the kernel, which answers an oversized attribute with E2BIG
	result_is REACHED || control_failed "bpf did not reach the kernel on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/kapi" bpf
	result_is SUCCESS && escaped "bpf worked inside the sandbox" "$(evidence)"
	errno_is EPERM && audit_syscall bpf ||
		escaped "no proof the filter refused bpf" "$(evidence)"
	blocked "bpf: EPERM (the filter, named in the audit)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc_vmwrite_sibling: process_vm_writev into another process of the sandbox: writes its
# memory without stopping it.
# Defence: seccomp (process_vm_readv/writev are refused, named in the audit).
# Control: the same probe on the host changes its own child's memory.

control() {
	host "$BIN/memwrite" sibling vmwrite
	result_is SUCCESS || control_failed "process_vm_writev into a child on the host failed" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/memwrite" sibling vmwrite
	result_is SUCCESS && escaped "process_vm_writev changed a sibling's memory" "$(evidence)"
	errno_is EPERM && audit_syscall process_vm_writev &&
		blocked "process_vm_writev: EPERM, the filter's (named in the audit)"
	escaped "no proof the filter refused process_vm_writev" "$(evidence)"
}

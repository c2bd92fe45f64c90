# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# kapi_modify_ldt: install a segment descriptor in the process's LDT. The LDT code has a long
# record of kernel bugs, and nothing a sandboxed program needs it for (16-bit code, Wine).
# Defence: seccomp: modify_ldt is refused (EPERM, named in the audit), as are the other calls
# Docker's default profile refuses and the kernel would still run unprivileged (default_deny).
# Control: on the host the same write of an LDT entry succeeds.

control() {
	host "$BIN/ldt"
	errno_is ENOSYS && not_applicable "this kernel has no modify_ldt (CONFIG_MODIFY_LDT_SYSCALL off)" "$(evidence)"
	result_is SUCCESS || control_failed "modify_ldt did not work on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/ldt"
	result_is SUCCESS && escaped "modify_ldt worked inside the sandbox" "$(evidence)"
	errno_is EPERM && audit_syscall modify_ldt ||
		escaped "no proof the filter refused modify_ldt" "$(evidence)"
	blocked "modify_ldt: EPERM (the filter, named in the audit)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# kapi_keyctl: the command inherits the caller's session keyring (where Kerberos tickets,
# filesystem encryption keys and other credentials live), and the keyring code has been a long
# line of kernel bugs. The probe stores a key in its process keyring and reads it back.
# Defence: seccomp: add_key is refused (EPERM, named in the audit).
# Control: the same probe on the host succeeds.

control() {
	host "$BIN/kapi" keyctl
	errno_is ENOSYS && not_applicable "this kernel has no keyctl (ENOSYS on the host)" "$(evidence)"
	result_is SUCCESS || control_failed "the call failed on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/kapi" keyctl
	result_is SUCCESS && escaped "add_key worked inside the sandbox" "$(evidence)"
	errno_is EPERM && audit_syscall add_key ||
		escaped "no proof the filter refused add_key" "$(evidence)"
	blocked "add_key: EPERM (the filter, named in the audit)"
}

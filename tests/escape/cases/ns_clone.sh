# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# ns_clone: a nested user namespace gives a process every capability again (over its own
# namespaces), the start of most kernel attacks from a sandbox; a nested network namespace,
# routes of its own. The probe calls clone(CLONE_NEWUSER | CLONE_NEWNET), called directly (not
# through fork).
# Defence: seccomp: clone with a namespace flag is refused (EPERM, named in the audit); and
# user.max_user_namespaces is 0 inside the sandbox's user namespace (set by pid 1).
# Control: the same probe on the host makes the namespaces (the child is in another user
# namespace than its parent).

control() {
	host "$BIN/ns" clone
	result_is SUCCESS || control_failed "the host could not create the namespaces" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/ns" clone
	result_is SUCCESS && escaped "a nested user and network namespace was created" "$(evidence)"
	printf '%s\n' "$OUT" | grep -q 'user.max_user_namespaces = 0' ||
		escaped "user.max_user_namespaces is not 0 inside" "$(evidence)"
	errno_is EPERM && audit_syscall clone ||
		escaped "no proof the filter refused clone" "$(evidence)"
	blocked "clone: $(printf '%s' "$RESULT" | cut -d' ' -f3); user.max_user_namespaces = 0 inside"
}

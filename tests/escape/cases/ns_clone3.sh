# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# ns_clone3: a nested user namespace gives a process every capability again (over its own
# namespaces), the start of most kernel attacks from a sandbox; a nested network namespace,
# routes of its own. The probe calls clone3 with CLONE_NEWUSER | CLONE_NEWNET: its flags are
# passed in memory, where a seccomp filter cannot read them.
# Defence: seccomp: clone3 answers ENOSYS whatever its flags (libc then falls back to clone,
# whose flags the filter reads); not logged, as no violation; and user.max_user_namespaces is 0
# inside the sandbox's user namespace (set by pid 1).
# Control: the same probe on the host makes the namespaces (the child is in another user
# namespace than its parent).

control() {
	host "$BIN/ns" clone3
	result_is SUCCESS || control_failed "the host could not create the namespaces" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/ns" clone3
	result_is SUCCESS && escaped "a nested user and network namespace was created" "$(evidence)"
	printf '%s\n' "$OUT" | grep -q 'user.max_user_namespaces = 0' ||
		escaped "user.max_user_namespaces is not 0 inside" "$(evidence)"
	errno_is ENOSYS ||
		escaped "no proof the filter refused clone3" "$(evidence)"
	blocked "clone3: $(printf '%s' "$RESULT" | cut -d' ' -f3); user.max_user_namespaces = 0 inside"
}

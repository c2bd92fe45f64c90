# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# abi_x32: a system call with the x32 bit set (0x40000000 | nr) is a different number to a
# filter written for x86_64 numbers, and the same call to a kernel with x32 support.
# Defence: seccomp: the filter's architecture check kills the process on any call of another
# ABI (SECCOMP_RET_KILL_PROCESS: the command dies of SIGSYS, agentbox exits 159).
# Control: on the host the process survives the call: the kernel answers it (ENOSYS on a kernel
# built without x32, the pid with x32): only the filter kills.

control() {
	host "$BIN/abi" x32
	result_is SUCCESS || result_is RETURNED ||
		control_failed "the x32 call did not return on the host" "$(evidence)"
	control_ok "on the host the process survives the call: $RESULT"
}

attack() {
	ab minimal -- "$BIN/abi" x32
	result_is SUCCESS && escaped "the x32 call returned the pid inside the sandbox" "$(evidence)"
	result_is RETURNED && escaped "the x32 call returned inside the sandbox (not killed)" "$(evidence)"
	printf '%s\n' "$OUT" | grep -q 'INFO about to call' || escaped "the probe did not run" "$(evidence)"
	[ "$RC" = 159 ] || escaped "expected death by SIGSYS (exit 159)" "$(evidence)"
	blocked "killed by SIGSYS at the x32 call (exit 159)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# abi_int80: the 32-bit entry point (int $0x80) uses the i386 numbers: 20 is getpid there, but
# would be writev to an x86_64 filter, and every i386 number means something else.
# Defence: seccomp: the architecture check kills the process on any call of another ABI
# (SIGSYS, exit 159).
# Control: on the host the same int $0x80 getpid returns the pid (IA-32 emulation is on); n/a
# where the kernel has none.

# Without IA32 emulation (not built in, off by default, ia32_emulation=0, or a hypervisor
# without the gate) int $0x80 raises a general-protection fault before any filter is asked:
# the probe reports exactly that fault (SIGSEGV with SI_KERNEL) as RESULT NOGATE; any other
# crash fails the control.
ia32_absent() {
	[ "$RC" = 3 ] && result_is NOGATE
}

control() {
	host "$BIN/abi" int80
	ia32_absent && not_applicable "no IA32 emulation: int \$0x80 raises a general-protection fault on the host" "$(evidence)"
	result_is SUCCESS || control_failed "int \$0x80 getpid did not work on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab minimal -- "$BIN/abi" int80
	result_is SUCCESS && escaped "int \$0x80 getpid returned inside the sandbox" "$(evidence)"
	result_is RETURNED && escaped "int \$0x80 returned inside the sandbox (not killed)" "$(evidence)"
	printf '%s\n' "$OUT" | grep -q 'INFO about to call' || escaped "the probe did not run" "$(evidence)"
	[ "$RC" = 159 ] || escaped "expected death by SIGSYS (exit 159)" "$(evidence)"
	blocked "killed by SIGSYS at int \$0x80 (exit 159)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_memory_heap: allocate and touch memory until something gives (the probe caps itself at
# 1 GiB). The profile includes offline-strict and sets memory = 256M, so the test stays cheap.
# Defence: [limits] memory: RLIMIT_DATA (each process's data) always, and a memory cgroup of the run's
# own where one is writable (the kernel's OOM killer then ends the command).
# Control: the same probe on the host allocates and touches 512 MiB.

setup() {
	profile mem.ini offline-strict "[limits]" "memory = 256M"
}

control() {
	host "$BIN/res" heap 512
	result_is SUCCESS || control_failed "the host could not allocate 512 MiB" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab ./mem.ini -- "$BIN/res" heap 1024
	result_is SUCCESS && escaped "allocated 1 GiB under memory = 256M" "$(evidence)"
	errno_is ENOMEM &&
		blocked "malloc refused: $(printf '%s' "$RESULT" | cut -d' ' -f3-) (limits mode $(audit_get start limits.mode))"
	[ "$RC" = 137 ] && blocked "the OOM killer ended it (memory cgroup, limits mode $(audit_get start limits.mode))"
	escaped "no proof the memory limit stopped the probe" "$(evidence)"
}

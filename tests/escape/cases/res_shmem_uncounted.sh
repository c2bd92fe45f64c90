# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_shmem_uncounted: memory outside the address space: a memfd written through (no mapping)
# and a SysV segment detached after use stay allocated without counting against RLIMIT_AS. The
# profile includes shell (no file-size limit, which would cap one memfd) and sets memory = 256M;
# the probes ask for 512 MiB.
# Defence: with a memory cgroup, the cgroup counts the pages (the OOM killer or ENOMEM/ENOSPC
# ends it); without one (rlimits mode), seccomp refuses memfd_create and shmget (ENOSYS, named
# in the audit) under a memory limit.
# Control: on the host both probes hold 512 MiB; inside under shell (no memory limit) a memfd
# is allowed.

setup() {
	profile mem.ini shell "[limits]" "memory = 256M"
}

control() {
	host "$BIN/shmem" memfd 512
	result_is SUCCESS || control_failed "the host could not hold a 512 MiB memfd" "$(evidence)"
	host "$BIN/shmem" sysv 512
	result_is SUCCESS || control_failed "the host could not hold a 512 MiB SysV segment" "$(evidence)"
	ab shell -- "$BIN/shmem" memfd 64
	result_is SUCCESS || control_failed "a memfd failed without a memory limit" "$(evidence)"
	control_ok "512 MiB memfd and SysV segment on the host; memfd inside without a memory limit"
}

attack() {
	local kind mode
	for kind in memfd sysv; do
		ab ./mem.ini -- "$BIN/shmem" "$kind" 512
		mode=$(audit_get start limits.mode)
		result_is SUCCESS && escaped "$kind held 512 MiB under memory = 256M ($mode)" "$(evidence)"
		if [ "$mode" = rlimits ]; then
			errno_is ENOSYS || escaped "$kind: expected ENOSYS in rlimits mode" "$(evidence)"
			audit_syscall "$([ "$kind" = memfd ] && echo memfd_create || echo shmget)" ||
				escaped "$kind refusal not in the audit" "$(evidence)"
		else
			[ "$RC" = 137 ] || errno_is ENOMEM ENOSPC ||
				escaped "$kind: expected the memory cgroup to stop it ($mode)" "$(evidence)"
		fi
	done
	blocked "memfd and SysV shm beyond memory = 256M refused or stopped (limits mode $mode)"
}

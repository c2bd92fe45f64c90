# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_shmem_uncounted: memory RLIMIT_DATA does not count: a memfd written through (no mapping), a
# SysV segment detached after use, a shared anonymous mapping, a writable shared mapping of
# /dev/zero. The profile includes shell (no file-size limit, which would cap one memfd) and sets
# memory = 256M; the probes ask for 512 MiB.
# Defence: with a memory cgroup, the cgroup counts the pages (the OOM killer or ENOMEM/ENOSPC
# ends it); without one (rlimits mode), under a memory limit seccomp refuses memfd_create and
# shmget (ENOSYS), and lets shared anonymous mappings through only while the run's total stays
# within the limit (ENOMEM past it), each refusal named in the audit. /dev/zero is read-only
# inside (Landlock), whatever the mode: opening it for writing is EACCES.
# Control: on the host every probe holds 512 MiB; inside under shell (no memory limit) a memfd
# and a shared anonymous mapping are allowed, and under the limit a small shared anonymous
# mapping (a counter between processes) is too.

setup() {
	profile mem.ini shell "[limits]" "memory = 256M"
}

control() {
	local kind
	for kind in memfd sysv anon zero; do
		host "$BIN/shmem" "$kind" 512
		result_is SUCCESS || control_failed "the host could not hold 512 MiB ($kind)" "$(evidence)"
	done
	for kind in memfd anon; do
		ab shell -- "$BIN/shmem" "$kind" 64
		result_is SUCCESS || control_failed "$kind failed without a memory limit" "$(evidence)"
	done
	ab ./mem.ini -- "$BIN/shmem" anon 16
	result_is SUCCESS || control_failed "16 MiB shared anonymous under memory = 256M failed" "$(evidence)"
	control_ok "512 MiB by each probe on the host; memfd and shared anonymous memory inside without a memory limit, 16 MiB of shared anonymous under it"
}

# The refusal rlimits mode answers for KIND, and the call the audit names.
refusal() {
	case $1 in
	memfd) echo "ENOSYS memfd_create" ;;
	sysv) echo "ENOSYS shmget" ;;
	anon) echo "ENOMEM mmap" ;;
	esac
}

attack() {
	local kind mode want
	for kind in memfd sysv anon zero; do
		ab ./mem.ini -- "$BIN/shmem" "$kind" 512
		mode=$(audit_get start limits.mode)
		result_is SUCCESS && escaped "$kind held 512 MiB under memory = 256M ($mode)" "$(evidence)"
		if [ "$kind" = zero ]; then
			errno_is EACCES || escaped "zero: expected /dev/zero to be read-only ($mode)" "$(evidence)"
		elif [ "$mode" = rlimits ]; then
			want=$(refusal "$kind")
			errno_is "${want% *}" || escaped "$kind: expected ${want% *} in rlimits mode" "$(evidence)"
			audit_syscall "${want#* }" ||
				escaped "$kind refusal not in the audit" "$(evidence)"
		else
			[ "$RC" = 137 ] || errno_is ENOMEM ENOSPC ||
				escaped "$kind: expected the memory cgroup to stop it ($mode)" "$(evidence)"
		fi
	done
	blocked "memfd, SysV, shared anonymous and /dev/zero memory beyond memory = 256M refused or stopped (limits mode $mode)"
}

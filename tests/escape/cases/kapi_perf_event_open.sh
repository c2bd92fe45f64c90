# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# kapi_perf_event_open: perf events measure and sample processes and the kernel, a source of
# side channels and kernel bugs; the probe opens a software clock on itself.
# Defence: seccomp: perf_event_open is refused (EPERM, named in the audit).
# Control: the same probe on the host succeeds.

control() {
	host "$BIN/kapi" perf
	errno_is ENOSYS ENOENT && not_applicable "this kernel has no perf events (ENOSYS/ENOENT on the host)" "$(evidence)"
	# perf_event_paranoid 3 (Debian's default) refuses every unprivileged perf_event_open
	errno_is EACCES EPERM && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 0)" -ge 3 ] &&
		! is_root && not_applicable "perf events are off for users (kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))" "$(evidence)"
	result_is SUCCESS || control_failed "the call failed on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/kapi" perf
	result_is SUCCESS && escaped "perf_event_open worked inside the sandbox" "$(evidence)"
	errno_is EPERM && audit_syscall perf_event_open ||
		escaped "no proof the filter refused perf_event_open" "$(evidence)"
	blocked "perf_event_open: EPERM (the filter, named in the audit)"
}

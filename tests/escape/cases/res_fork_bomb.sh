# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_fork_bomb: every process forks as fast as it can (the probe caps itself at 300, so the
# positive control ends too), then holds on.
# Defence: [limits] processes = 64 (offline-strict): a pids cgroup of the run's own where one
# is writable (cgroup2 or cgroup1 `pids`), else RLIMIT_NPROC, which the kernel does not enforce
# for root; then the wall-clock timeout, whose end (pid 1's death ends the pid namespace) must
# leave no process behind. The case says which stopped the bomb.
# Control: the same bomb on the host reaches its cap of 300 processes (then kills them).

CAP=300

control() {
	host "$BIN/res" bomb "$CAP" reap "ctl-$(unique)"
	result_is SUCCESS || control_failed "the bomb did not reach $CAP processes on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	local mark i mode left
	mark=$(unique)
	ab offline-strict --timeout 3s -- "$BIN/res" bomb "$CAP" hold "$mark"
	mode=$(audit_get start limits.mode)
	for ((i = 0; i < 40; i++)); do
		pgrep -f "bomb $CAP hold $mark" >/dev/null || break
		sleep 0.05
	done
	left=$(pgrep -f "bomb $CAP hold $mark" | wc -l)
	if [ "$left" -gt 0 ]; then
		pkill -KILL -f "bomb $CAP hold $mark"
		escaped "$left bomb processes survived the end of the run (limits mode $mode)" "$(evidence)"
	fi
	[ "$RC" = 124 ] || escaped "the run did not end by its timeout" "$(evidence)"
	if errno_is EAGAIN; then
		blocked "stopped by the processes limit ($mode): $(printf '%s' "$RESULT" | cut -d' ' -f3-);" \
			"the 3 s timeout ended the rest; no process survived"
	fi
	if result_is SUCCESS && is_root && [ "$mode" = rlimits ]; then
		blocked "as root with no writable cgroup, RLIMIT_NPROC does not apply and the bomb reached" \
			"its cap of $CAP; the 3 s timeout ended it and no process survived"
	fi
	escaped "the processes limit did not stop the bomb (limits mode $mode)" "$(evidence)"
}

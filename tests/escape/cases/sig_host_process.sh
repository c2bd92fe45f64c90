# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# sig_host_process: signal processes outside the sandbox: a victim of the same user started on
# the host, the test shell itself, and every process at once (kill -1), which for an
# unconfined process of that user reaches all of its processes.
# Defence: the pid namespace (no host pid exists inside: ESRCH; kill -1 reaches only the
# sandbox's own processes), and Landlock's signal scope (ABI >= 6) for any process outside the
# sandbox's Landlock domain.
# Control: on the host kill -0 reaches the victim and the test shell.

setup() {
	bg sleep "1000.$(date +%s%N | tail -c 9)"
	VICTIM=$BG_PID
	SHELL_PID=$$
}

control() {
	host kill -0 "$VICTIM" "$SHELL_PID"
	[ "$RC" = 0 ] || control_failed "kill -0 of the victim and the shell failed on the host" "$(evidence)"
	control_ok "on the host kill -0 $VICTIM (victim) and $SHELL_PID (test shell) succeed"
}

attack() {
	ab shell -- sh -c '
		for p in "$@"; do
			kill -0 "$p" 2>&1 && echo "REACHED $p"
			kill -TERM "$p" 2>&1 && echo "KILLED $p"
		done
		kill -USR1 -1 2>&1; echo "broadcast=$?"' sh "$VICTIM" "$SHELL_PID"
	sleep 0.2
	kill -0 "$VICTIM" 2>/dev/null || escaped "the host victim died during the attack" "$(evidence)"
	case "$OUT" in *REACHED* | *KILLED*) escaped "a host pid was signalled" "$OUT" ;; esac
	[ "$(printf '%s\n' "$OUT" | grep -c 'No such process')" -ge 4 ] ||
		escaped "no proof the host pids were unknown (ESRCH)" "$(evidence)"
	blocked "kill -0/-TERM of the victim and the test shell: ESRCH; kill -USR1 -1 left the host victim alive"
}

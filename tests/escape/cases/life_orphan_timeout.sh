# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# life_orphan_timeout: leave a process behind: fork twice and start a new session (setsid), so
# the process is nobody's child and in no process group agentbox knows, then let the run end,
# by its timeout or by the command exiting at once. A survivor keeps running unconfined by any
# timeout, outside the user's view.
# Defence: the pid namespace: when the command ends (or the timeout kills pid 1), pid 1 exits
# and the kernel kills every process in the namespace, whatever its session.
# Control: on the host the same double fork leaves the process running (found with pgrep on a
# unique argument, then killed).

mark() {
	printf '1000.%s' "$(date +%s%N | tail -c 10)"
}

survivors() {
	local i
	for ((i = 0; i < 40; i++)); do
		pgrep -f "^sleep $1\$" >/dev/null || return 1
		sleep 0.05
	done
	return 0
}

control() {
	local m
	m=$(mark)
	host sh -c '(setsid sleep "$1" </dev/null >/dev/null 2>&1 &); exit 0' sh "$m"
	sleep 0.2
	pgrep -f "^sleep $m\$" >/dev/null || control_failed "the double-forked process is not running on the host"
	pkill -KILL -f "^sleep $m\$"
	control_ok "on the host the double-forked, setsid process survives its parent (found and killed)"
}

attack() {
	local m1 m2
	m1=$(mark)
	ab shell --timeout 1s -- sh -c '(setsid sleep "$1" </dev/null >/dev/null 2>&1 &); sleep 100' sh "$m1"
	if survivors "$m1"; then
		pkill -KILL -f "^sleep $m1\$"
		escaped "a double-forked process survived the timeout" "$(evidence)"
	fi
	[ "$RC" = 124 ] || escaped "the run did not end by its timeout" "$(evidence)"
	m2=$(mark)
	ab shell -- sh -c '(setsid sleep "$1" </dev/null >/dev/null 2>&1 &); sleep 0.2
		pgrep -f "^sleep $1\$" >/dev/null && echo RUNNING' sh "$m2"
	if survivors "$m2"; then
		pkill -KILL -f "^sleep $m2\$"
		escaped "a double-forked process survived the command's exit" "$(evidence)"
	fi
	case "$OUT" in *RUNNING*) ;; *) escaped "the orphan never ran inside (proves nothing)" "$(evidence)" ;; esac
	blocked "no survivor after the 1 s timeout (exit 124) nor after the command's own exit"
}

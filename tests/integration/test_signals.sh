#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Signals and process lifetime: a signal sent to agentbox reaches the command, pid 1 reaps
# orphans, and killing agentbox itself leaves nothing of the sandbox running.
. "$(dirname "$0")/lib.sh"

# forwarded SIGNAL STATUS: the command traps SIGNAL, writes a marker to the rw ${CWD} and exits
# with STATUS; the signal is sent to the agentbox process.
forwarded() {
	local sig=$1 status=$2 pid i
	cat >cmd.sh <<-EOF
		trap 'echo $sig > got-$sig; exit $status' $sig
		echo ready > ready-$sig
		i=0
		while [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
		exit 0
	EOF
	"$AGENTBOX" -p shell -- sh ./cmd.sh >"$META/out" 2>"$META/err" </dev/null &
	pid=$!
	echo "$pid" >>"$META/bgpids"
	wait_for_file "ready-$sig" 10 || fail "the command never started: $(cat "$META/err")"
	# positive control: nothing wrote the marker before the signal was sent
	assert_absent "$CASE/got-$sig" "positive control: the marker before SIG$sig"
	kill -"$sig" "$pid"
	wait "$pid"
	RC=$?
	OUT=$(cat "$META/out")
	ERR=$(cat "$META/err")
	assert_eq "$status" "$RC" "agentbox's exit status after SIG$sig (the command's trap exits $status)"
	assert_eq "$sig" "$(cat "got-$sig" 2>&1)" "the marker the command's SIG$sig trap writes"
}

t_sigterm_forwarded() {
	forwarded TERM 7
}

t_sighup_forwarded() {
	forwarded HUP 9
}

# Prints state and parent of every process in /proc whose state is Z, one per line.
ZOMBIE_SCAN='for f in /proc/[0-9]*/stat; do
	s=$(sed "s/.*) //" "$f" 2>/dev/null | cut -d" " -f1)
	[ "$s" = Z ] && echo "zombie ${f%/stat}"
done
:'

t_orphans_reaped() {
	# positive control: the scan does find a zombie when one exists (a parent that never waits:
	# the child exits while its parent has become `sleep 2`)
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c '
		sh -c "sleep 0.1 & exec sleep 2" &
		sleep 0.6
		'"$ZOMBIE_SCAN"
	assert_contains "$OUT" "zombie /proc/" "positive control: the scan finds an unreaped zombie"

	# the orphan: its parent exits at once, so it is reparented to pid 1, which must reap it
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c '
		sh -c "sleep 0.3 & echo \$! > orphan.pid"
		pid=$(cat orphan.pid)
		echo "orphan-ppid=$(sed "s/.*) //" /proc/$pid/stat | cut -d" " -f2)"
		sleep 1
		if [ -e /proc/$pid ]; then echo "orphan-still-there state=$(sed "s/.*) //" /proc/$pid/stat | cut -d" " -f1)"; fi
		'"$ZOMBIE_SCAN"'
		echo done'
	assert_contains "$OUT" "orphan-ppid=1" "the orphan's parent (pid 1 must adopt it)"
	assert_not_contains "$OUT" "orphan-still-there" "the exited orphan was not reaped"
	assert_not_contains "$OUT" "zombie /proc/" "zombies in the sandbox"
	assert_contains "$OUT" "done" "the script ran to its end"
}

t_supervisor_sigkill() {
	local marker pid i n
	marker="1000.$(unique)"
	"$AGENTBOX" -p minimal -- sleep "$marker" >"$META/out" 2>"$META/err" </dev/null &
	pid=$!
	echo "$pid" >>"$META/bgpids"
	# positive control: pgrep finds the sandboxed sleep itself (not only agentbox's argv)
	for ((i = 0; i < 100; i++)); do
		pgrep -f "^sleep $marker\$" >/dev/null && break
		sleep 0.05
	done
	pgrep -f "^sleep $marker\$" >/dev/null ||
		fail "positive control: the sandboxed 'sleep $marker' never appeared" "$(cat "$META/err")"
	n=$(pgrep -f "$marker" | wc -l)
	[ "$n" -ge 3 ] || fail "positive control: expected agentbox, its pid 1 and sleep to match, found: $(pgrep -af "$marker")"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	for ((i = 0; i < 40; i++)); do
		pgrep -f "$marker" >/dev/null || return 0
		sleep 0.05
	done
	fail "2 s after SIGKILL of agentbox these sandbox processes are alive: $(pgrep -af "$marker" | tr '\n' ';')"
}

run_case sigterm_forwarded t_sigterm_forwarded
run_case sighup_forwarded t_sighup_forwarded
run_case orphans_reaped t_orphans_reaped
run_case supervisor_sigkill t_supervisor_sigkill
finish

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# life_supervisor_kill_audit: stop the audit by killing agentbox itself (kill -9, from the host:
# the command cannot reach it, see sig_supervisor) while the command runs: the command would
# go on unwatched, and the trail would look complete.
# Defence: pid 1 has PR_SET_PDEATHSIG = SIGKILL: the supervisor's death kills pid 1 and with it
# the whole pid namespace; the trail then lacks its exit event, which `agentbox audit verify`
# reports (BROKEN, exit 1).
# Control: while agentbox runs, pgrep does find the sandboxed process by its unique argument,
# and a trail of a run that ended normally verifies OK.

control() {
	ab minimal -- true
	run "$AGENTBOX" audit verify "$AUDIT"
	[ "$RC" = 0 ] || control_failed "a normal run's trail does not verify" "$OUT"
	control_ok "a normal run's trail verifies: $OUT"
}

attack() {
	local m sup i seen=0 left
	m="1000.$(date +%s%N | tail -c 10)"
	ab_argv minimal
	"${AB[@]}" -- sleep "$m" >/dev/null 2>&1 </dev/null &
	sup=$!
	echo "$sup" >>"$META/bgpids"
	for ((i = 0; i < 100; i++)); do
		pgrep -f "^sleep $m\$" >/dev/null && { seen=1; break; }
		sleep 0.05
	done
	[ "$seen" = 1 ] || escaped "the sandboxed sleep never appeared (proves nothing)"
	kill -KILL "$sup"
	wait "$sup" 2>/dev/null
	for ((i = 0; i < 40; i++)); do
		pgrep -f "$m" >/dev/null || break
		sleep 0.05
	done
	left=$(pgrep -af "$m")
	if [ -n "$left" ]; then
		pkill -KILL -f "$m"
		escaped "after kill -9 of agentbox these sandbox processes lived on: $left"
	fi
	grep -q '"event":"exit"' "$AUDIT" && escaped "the killed run's trail has an exit event"
	grep -q '"event":"start"' "$AUDIT" || escaped "the killed run wrote no trail (proves nothing)"
	run "$AGENTBOX" audit verify "$AUDIT"
	[ "$RC" = 1 ] || escaped "audit verify did not fail on the truncated trail (exit $RC)" "$OUT"
	case "$OUT" in BROKEN*) ;; *) escaped "audit verify did not say BROKEN" "$OUT" ;; esac
	blocked "kill -9 of agentbox took the sandbox with it (no process left);" \
		"audit verify: $(printf '%s' "$OUT" | head -n 1)"
}

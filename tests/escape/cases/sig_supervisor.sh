# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# sig_supervisor: kill agentbox's own supervisor from inside, so that the run ends with no exit
# event, no limit enforcement and no final audit. The command is told the supervisor's host
# pid (written into its workspace once agentbox started).
# Defence: the pid namespace (the supervisor's pid does not exist inside: ESRCH) and
# Landlock's signal scope.
# Control: on the host, the same user's kill -0 reaches the running supervisor; after the
# attack agentbox exits normally and its audit trail ends with the exit event and verifies.

control() {
	local sup i
	"$AGENTBOX" -p minimal -- sleep 2 >/dev/null 2>&1 </dev/null &
	sup=$!
	echo "$sup" >>"$META/bgpids"
	sleep 0.2
	host kill -0 "$sup"
	[ "$RC" = 0 ] || control_failed "kill -0 of a running supervisor failed on the host" "$(evidence)"
	kill "$sup"
	control_ok "on the host kill -0 reaches the supervisor (pid $sup)"
}

attack() {
	local sup i
	ab_argv shell
	"${AB[@]}" -- sh -c 'i=0; while [ ! -s sup.pid ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
		p=$(cat sup.pid); echo "supervisor=$p"
		kill -0 "$p" 2>&1 && echo "REACHED"
		kill -KILL "$p" 2>&1 && echo "KILLED"
		exit 0' >"$META/att.out" 2>"$META/att.err" </dev/null &
	sup=$!
	echo "$sup" >>"$META/bgpids"
	echo "$sup" >sup.pid
	for ((i = 0; i < 100; i++)); do kill -0 "$sup" 2>/dev/null || break; sleep 0.05; done
	wait "$sup"
	RC=$?
	OUT=$(cat "$META/att.out")
	ERR=$(cat "$META/att.err")
	printf '%s\n%s\n' "$OUT" "$ERR" >>"$META/log"
	case "$OUT" in *REACHED* | *KILLED*) escaped "the sandbox signalled its supervisor" "$OUT" ;; esac
	[ "$RC" = 0 ] || escaped "agentbox did not exit normally (status $RC)" "$(evidence)"
	case "$OUT" in *"supervisor=$sup"*) ;; *) escaped "the command never got the supervisor's pid" "$(evidence)" ;; esac
	grep -q '"event":"exit"' "$AUDIT" || escaped "the audit trail has no exit event"
	"$AGENTBOX" audit verify "$AUDIT" >/dev/null || escaped "the audit trail does not verify"
	blocked "kill -0/-KILL of the supervisor's pid $sup: ESRCH inside; agentbox exited 0, its trail verifies"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc_exe_supervisor: overwrite the agentbox binary through /proc/PID/exe of a process running
# it (CVE-2019-5736: runc's container held /proc/self/exe of runc, waited for runc to exit, and
# rewrote it; the next `runc` on the host ran the attacker's code). The sandbox is told the
# supervisor's host pid and tries every /proc/N/exe it can see.
# Defence: the pid namespace (the supervisor is not in the sandbox's /proc), pid 1 non-dumpable
# (see proc1_exe), and the binary outside the view.
# Control: on the host, the same probe holds /proc/PID/exe of a running agentbox (a copy),
# waits for it to exit, reopens the binary for writing and changes it.

setup() {
	read -r DEV INO < <(stat -L -c '%d %i' "$AGENTBOX")
	SUM=$(cksum <"$AGENTBOX")
}

control() {
	local pid
	cp "$AGENTBOX" "$META/agentbox-copy"
	"$META/agentbox-copy" -p minimal -- sleep 1 >/dev/null 2>&1 </dev/null &
	pid=$!
	echo "$pid" >>"$META/bgpids"
	sleep 0.2
	host "$BIN/procexe" runc "$pid"
	cmp -s "$AGENTBOX" "$META/agentbox-copy" && control_failed "the copy is unchanged" "$(evidence)"
	result_is SUCCESS || control_failed "the runc-style overwrite failed on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	local sup i
	ab_argv shell
	"${AB[@]}" -- sh -c 'i=0; while [ ! -s sup.pid ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
		exec "$1" scan "$2" "$3" $(cat sup.pid) 1' sh "$BIN/procexe" "$DEV" "$INO" \
		>"$META/att.out" 2>"$META/att.err" </dev/null &
	sup=$!
	echo "$sup" >>"$META/bgpids"
	echo "$sup" >sup.pid
	for ((i = 0; i < 200; i++)); do kill -0 "$sup" 2>/dev/null || break; sleep 0.05; done
	wait "$sup"
	RC=$? OUT=$(cat "$META/att.out") ERR=$(cat "$META/att.err")
	RESULT=$(printf '%s\n' "$OUT" | grep '^RESULT' | tail -n 1)
	printf '%s\n' "$OUT" >>"$META/log"
	[ "$(cksum <"$AGENTBOX")" = "$SUM" ] || escaped "the agentbox binary changed on the host"
	result_is SUCCESS && escaped "a /proc/N/exe inside the sandbox reached the agentbox binary" "$OUT"
	printf '%s\n' "$OUT" | grep -q "INFO /proc/$sup is absent" ||
		escaped "no proof the supervisor's pid $sup was looked for and absent" "$(evidence)"
	errno_is EACCES || escaped "no proof the scan ran" "$(evidence)"
	blocked "/proc/$sup (the supervisor) is absent inside; no /proc/N/exe reaches the binary; it is unchanged"
}

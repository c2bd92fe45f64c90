# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc_ptrace_host: ptrace a process outside the sandbox (a victim of the same user, started
# on the host), and look for the test shell's own pid.
# Defence: the pid namespace (no host pid exists inside), with seccomp refusing ptrace anyway.
# Control: the same probe on the host attaches to the victim and changes its memory (the
# victim sees it and says CHANGED).

victim() {
	rm -f "$META/victim"
	"$BIN/memwrite" victim "$META/victim" >"$META/victim.out" 2>&1 </dev/null &
	VICTIM=$!
	echo "$VICTIM" >>"$META/bgpids"
	wait_file "$META/victim" 5 || control_failed "the victim did not start"
	read -r VPID VADDR <"$META/victim"
}

control() {
	victim
	host "$BIN/memwrite" ptrace "$VPID" "$VADDR"
	wait "$VICTIM"
	result_is SUCCESS && grep -q CHANGED "$META/victim.out" ||
		control_failed "ptrace of the host victim did not change its memory" "$(evidence)"
	control_ok "$RESULT; the victim saw it"
}

attack() {
	local shell_pid=$$
	victim
	ab shell -- sh -c 'for p in "$@"; do [ -e /proc/$p ] && echo "VISIBLE $p"; done; exit 0' sh "$VPID" "$shell_pid"
	case "$OUT" in *VISIBLE*) escaped "host processes are visible in the sandbox's /proc: $OUT" ;; esac
	[ "$RC" = 0 ] || escaped "the visibility check did not run" "$(evidence)"
	ab shell -- "$BIN/memwrite" ptrace "$VPID" "$VADDR"
	sleep 0.2
	grep -q CHANGED "$META/victim.out" && escaped "the host victim's memory changed" "$(evidence)"
	result_is SUCCESS && escaped "ptrace reported success against host pid $VPID" "$(evidence)"
	errno_is EPERM ESRCH || escaped "no proof the ptrace failed" "$(evidence)"
	blocked "host pids $VPID (victim) and $shell_pid (the test shell) do not exist inside;" \
		"ptrace($VPID): $(printf '%s' "$RESULT" | cut -d' ' -f3)$(audit_syscall ptrace &&
			echo ' (the filter, named in the audit)'); the victim is unchanged"
}

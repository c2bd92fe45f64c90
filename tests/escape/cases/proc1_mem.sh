# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc1_mem: pid 1 of the sandbox is agentbox's own init. It holds the channel to the
# supervisor (which writes the audit trail and reports the exit status); whoever controls its
# memory or fds could forge both. The probe opens /proc/1/mem for writing, and tries to read
# and open every /proc/1/fd/N (the fd numbers may be listed, as root, since the directory is
# then owned by the caller's uid; the links are what matter) and to list /proc/1/root.
# Defence: pid 1 makes itself non-dumpable (PR_SET_DUMPABLE 0) before the command starts, so the
# kernel's ptrace access check refuses the same uid.
# Landlock (a read-only /proc) refuses it too in a default run; so the control and a second
# attack run with Landlock off ([sandbox] nesting = true), where only pid 1's non-dumpable
# flag stands between the command and pid 1.
# Control: there, /proc/PID/mem of an ordinary sibling process is writable (the probe changes
# the sibling's memory through it).

control() {
	profile nolandlock.ini shell "[sandbox]" "nesting = true"
	ab ./nolandlock.ini -- "$BIN/memwrite" sibling procmem
	result_is SUCCESS || control_failed "writing a sibling's /proc/PID/mem inside the sandbox failed" "$(evidence)"
	control_ok "inside the sandbox, Landlock off: $RESULT"
}

attack() {
	attack_under shell
	attack_under ./nolandlock.ini
	blocked "/proc/1/mem: $(printf '%s' "$RESULT" | cut -d' ' -f3-) (with and without Landlock);" \
		"no /proc/1/fd/N link readable or openable; /proc/1/root unreadable"
}

attack_under() {
	ab "$1" -- sh -c '
		echo "comm1=$(cat /proc/1/comm)"
		for fd in /proc/1/fd/*; do
			[ -e "$fd" ] || [ -L "$fd" ] || continue
			readlink "$fd" >/dev/null 2>&1 && echo "FD-LINK-READ $fd"
			(: <"$fd") 2>/dev/null && echo "FD-OPENED $fd"
		done
		ls /proc/1/root/ >/dev/null 2>&1 && echo "ROOT-LISTED"
		exec "$1" procmem 1 0x400000' sh "$BIN/memwrite"
	case "$OUT" in *comm1=agentbox*) ;; *) escaped "pid 1 is not agentbox's init: the run proves nothing" "$(evidence)" ;; esac
	case "$OUT" in *FD-LINK-READ* | *FD-OPENED* | *ROOT-LISTED*) escaped "pid 1's fds or root are reachable" "$OUT" ;; esac
	result_is SUCCESS && escaped "wrote pid 1's memory through /proc/1/mem" "$(evidence)"
	errno_is EACCES EPERM || escaped "no proof the open of /proc/1/mem was refused" "$(evidence)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc_cmdline_host: other processes' command lines leak secrets (tokens passed as arguments,
# paths, what the user is doing). A host process with a unique argument runs during the attack,
# which scans every /proc/*/cmdline it can see.
# Defence: the pid namespace (a private /proc showing only the sandbox's processes).
# Control: the same scan on the host finds the process.

setup() {
	MARK="$(date +%s%N | tail -c 10)"
	printf '1000.%s\n' "$MARK" >mark.pattern # grep -f: the mark never appears in an argv
	bg sleep "1000.$MARK"
	sleep 0.1
}

scan='for f in /proc/[0-9]*/cmdline; do grep -a -q -F -f mark.pattern "$f" 2>/dev/null && echo "FOUND $f"; done
	echo "scanned $(ls -d /proc/[0-9]* | wc -l)"'

control() {
	host sh -c "$scan"
	case "$OUT" in *FOUND*) control_ok "the host's scan finds the process: $(printf '%s' "$OUT" | grep FOUND | head -n 1)" ;; esac
	control_failed "the host's scan did not find 'sleep 1000.$MARK'" "$(evidence)"
}

attack() {
	ab shell -- sh -c "$scan"
	case "$OUT" in *FOUND*) escaped "a host process's command line is visible inside" "$OUT" ;; esac
	local n
	n=$(printf '%s\n' "$OUT" | sed -n 's/^scanned //p')
	[ "${n:-0}" -ge 2 ] || escaped "the scan saw fewer than 2 processes: it proves nothing" "$(evidence)"
	blocked "none of the $n processes in the sandbox's /proc is the host's (which shows $(ls -d /proc/[0-9]* | wc -l))"
}

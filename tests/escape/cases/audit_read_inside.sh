# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# audit_read_inside: the command reads the audit trail the run is writing, and with it the
# earlier runs appended to the same file: their argv, hosts, denials. The trail is placed where
# users put it: in the rw workspace, in a directory the profile binds read-only, and reached
# through a symlinked directory of the workspace.
# Defence: mounts: the audit file is hidden wherever a bind shows it (an unopenable node that
# cannot be opened, replaced, renamed or truncated; the directories above it are pinned).
# Control: on the host the same read shows the trail, with the earlier run's secret argv.

setup() {
	mkdir -p ws/logs ro
	ln -s logs ws/linkdir
	SECRET="earlier-run-$(unique)"
}

control() {
	local where
	for where in ws/logs/a.jsonl ro/a.jsonl; do
		run "$AGENTBOX" -p shell --audit "$CASE/$where" -- true "$SECRET"
		[ "$RC" = 0 ] || control_failed "the earlier run failed" "$(evidence)"
		host cat "$CASE/$where"
		case "$OUT" in *"$SECRET"*) ;; *) control_failed "the host does not read $where" "$(evidence)" ;; esac
	done
	control_ok "on the host both trails show the earlier run's argv ($SECRET)"
}

# reads PATH inside with the trail at AUDIT, and tries to change it: nothing may work
probe() {
	local audit=$1 path=$2
	shift 2
	run "$AGENTBOX" -p shell "$@" --audit "$audit" -- sh -c '
		cat "$1" && echo READ-WORKED
		(echo forged >>"$1") 2>/dev/null && echo APPEND-WORKED
		(: >"$1") 2>/dev/null && echo TRUNCATE-WORKED
		rm -f "$1" 2>/dev/null && echo REMOVE-WORKED
		mv "$1" "$1.moved" 2>/dev/null && echo RENAME-WORKED
		echo DONE' sh "$path"
	case "$OUT" in *DONE*) ;; *) escaped "the probe did not run ($path)" "$(evidence)" ;; esac
	case "$OUT" in *"$SECRET"* | *WORKED*) escaped "inside, $path: $(printf '%s' "$OUT" | tr '\n' ' ')" "$(evidence)" ;; esac
	case "$ERR" in *"Permission denied"*) ;; *) escaped "no proof the read of $path was refused" "$(evidence)" ;; esac
}

attack() {
	cd ws || escaped "no ws"
	probe logs/a.jsonl logs/a.jsonl
	probe linkdir/a.jsonl linkdir/a.jsonl
	probe "$CASE/ro/a.jsonl" "$CASE/ro/a.jsonl" --ro "$CASE/ro"
	grep -q "$SECRET" logs/a.jsonl && grep -q '"event":"exit"' logs/a.jsonl ||
		escaped "the trail in the workspace lost its earlier run" "$(evidence)"
	run "$AGENTBOX" audit verify logs/a.jsonl
	[ "$RC" = 0 ] || escaped "the trail no longer verifies" "$OUT"
	blocked "the trail is unreadable inside (rw workspace, symlinked directory, ro bind) and intact"
}

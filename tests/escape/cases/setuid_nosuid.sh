# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# setuid_nosuid: a setuid program in the view would run with its owner's identity. As root the
# case makes a copy of `id` owned by nobody, setuid, in a directory bound read-only, and runs
# it; for any user it checks that the mounts the command could run such files from (the bind,
# the workspace, /usr where the host's setuid-root programs live) are nosuid.
# Defence: every ro/rw bind is mounted nosuid; and no_new_privs is set, so the kernel ignores
# setuid and file capabilities on exec anyway.
# Control: on the host the setuid copy does run as nobody (root only), and the host mounts of
# those directories allow setuid (statvfs has no ST_NOSUID).

nosuid='import os, sys
for p in sys.argv[1:]:
    print("NOSUID" if os.statvfs(p).f_flag & os.ST_NOSUID else "SUID", p)'

setup() {
	mkdir -p bin
	if is_root; then
		cp /usr/bin/id bin/id-suid
		chown 65534 bin/id-suid
		chmod 4755 bin/id-suid
	fi
}

control() {
	host "$PY" -c "$nosuid" "$CASE/bin" /usr
	printf '%s\n' "$OUT" | grep -q NOSUID && control_failed "the host mounts are nosuid already: nothing to show" "$(evidence)"
	if is_root; then
		host "$CASE/bin/id-suid" -u
		[ "$OUT" = 65534 ] || control_failed "the setuid copy did not run as nobody on the host" "$(evidence)"
		control_ok "on the host bin/ and /usr allow setuid, and the setuid copy of id runs as 65534"
	fi
	control_ok "on the host bin/ and /usr allow setuid (no ST_NOSUID)"
}

attack() {
	ab shell --ro "$CASE/bin" -- /usr/bin/python3 -c "$nosuid" "$CASE/bin" "$CASE" /usr
	printf '%s\n' "$OUT" | grep -q '^SUID' && escaped "a mount in the view allows setuid: $(printf '%s\n' "$OUT" | grep '^SUID')"
	[ "$(printf '%s\n' "$OUT" | grep -c '^NOSUID')" = 3 ] || escaped "the nosuid check did not run" "$(evidence)"
	if is_root; then
		ab shell --ro "$CASE/bin" -- "$CASE/bin/id-suid" -u
		[ "$OUT" = 65534 ] && escaped "the setuid copy ran as nobody inside the sandbox" "$(evidence)"
		[ "$OUT" = 0 ] || escaped "the setuid copy did not run" "$(evidence)"
		blocked "the setuid copy runs as 0, not 65534; bin/, the workspace and /usr are nosuid"
	fi
	blocked "bin/, the workspace and /usr are nosuid inside"
}

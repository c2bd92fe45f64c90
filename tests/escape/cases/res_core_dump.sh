# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_core_dump: a crashing process writes its memory (secrets it read, keys) to a core file in
# its working directory, on the host; and a core dump is a way to write a big file.
# Defence: RLIMIT_CORE is 0 inside (soft and hard), so the command cannot raise it.
# Control: on the host, after `ulimit -c unlimited` (allowed: the hard limit is higher), the
# limit reads unlimited, and the same crash leaves a core file in the directory when
# kernel.core_pattern names a file in the working directory (a pipe, or a path elsewhere, sends
# it away: the control then rests on the limit alone).

setup() {
	mkdir -p host inside
}

control() {
	cd host || control_failed "no dir"
	host sh -c 'ulimit -c unlimited && echo "soft=$(ulimit -c)" && exec "$1" crash' sh "$BIN/res"
	case "$OUT" in *soft=unlimited*) ;; *) control_failed "ulimit -c unlimited failed on the host" "$(evidence)" ;; esac
	case "$(cat /proc/sys/kernel/core_pattern)" in
	"|"* | */*) control_ok "the host raises RLIMIT_CORE to unlimited (core_pattern is a pipe or another" \
		"directory: no file expected here)" ;;
	esac
	sleep 0.2
	ls core* >/dev/null 2>&1 || control_failed "the crash left no core file on the host" "$(evidence)"
	rm -f core*
	control_ok "on the host RLIMIT_CORE goes to unlimited and the crash leaves a core file"
}

attack() {
	cd inside || escaped "no dir"
	ab shell -- sh -c 'echo "soft=$(ulimit -c) hard=$(ulimit -H -c)"
		ulimit -c unlimited 2>/dev/null && echo RAISED; exec "$1" crash' sh "$BIN/res"
	sleep 0.2
	ls core* >/dev/null 2>&1 && escaped "the crash left a core file in the workspace: $(ls core*)"
	case "$OUT" in *RAISED*) escaped "the command raised RLIMIT_CORE" "$(evidence)" ;; esac
	case "$OUT" in *"soft=0 hard=0"*) ;; *) escaped "RLIMIT_CORE is not 0/0 inside" "$(evidence)" ;; esac
	[ "$RC" = 139 ] || escaped "the probe did not crash (exit $RC)" "$(evidence)"
	blocked "RLIMIT_CORE 0 (soft and hard), not raisable; the crash (exit 139) left no core file"
}

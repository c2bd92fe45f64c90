# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# tty_strict_own_session: under the strict preset (offline-strict) ioctl is allowed, so the
# filter cannot stop TIOCSTI; instead the command runs in a session of its own, where the
# terminal is not its controlling terminal. The probe first tries to take the terminal back
# (TIOCSCTTY with force = 1), then injects with TIOCSTI.
# Defence: a new session (setsid) and no CAP_SYS_ADMIN: the kernel refuses TIOCSCTTY(force)
# and TIOCSTI on a terminal that is not the caller's controlling terminal.
# Control: the same probe on the host, on a pty it controls, injects a line and reads it back.

control() {
	in_pty 10 "$BIN/tty" steal "ctl$(unique)"
	# Linux >= 6.2 without CONFIG_LEGACY_TIOCSTI, or dev.tty.legacy_tiocsti=0, refuses TIOCSTI
	# to everyone without CAP_SYS_ADMIN (EIO): nothing left for the filter to stop
	errno_is EIO EPERM && [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 0 ] && ! is_root &&
		not_applicable "TIOCSTI is off on this kernel (dev.tty.legacy_tiocsti=0)" "$(evidence)"
	result_is SUCCESS || control_failed "TIOCSTI on the host's pty did not inject" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab_argv offline-strict
	in_pty 15 "${AB[@]}" -- "$BIN/tty" steal "inj$(unique)"
	result_is SUCCESS && escaped "took the terminal and injected keystrokes into it" "$(evidence)"
	[ "$(audit_get start terminal)" = false ] ||
		escaped "under the strict preset the command shared the terminal" "$(evidence)"
	errno_is EPERM && printf '%s\n' "$OUT" | grep -q 'TIOCSCTTY(force) failed: EPERM' &&
		blocked "own session: TIOCSCTTY(force) and TIOCSTI both EPERM from the kernel"
	escaped "no proof the injection was refused" "$(evidence)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# tty_tiocsti: TIOCSTI pushes keystrokes into the input of the terminal the command shares with
# the user's shell; whatever the command leaves there, the shell reads and runs after it exits.
# Defence: seccomp (the default preset refuses ioctl TIOCSTI). The sandbox must really share
# the terminal (the audit's start event says "terminal": true), so the kernel alone would allow
# the ioctl and only the filter stands in the way.
# Control: the same probe on the host, on a pty it controls, injects a line and reads it back.

control() {
	in_pty 10 "$BIN/tty" sti "ctl$(unique)"
	# Linux >= 6.2 without CONFIG_LEGACY_TIOCSTI, or dev.tty.legacy_tiocsti=0, refuses TIOCSTI
	# to everyone without CAP_SYS_ADMIN (EIO): nothing left for the filter to stop
	errno_is EIO EPERM && [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 0 ] && ! is_root &&
		not_applicable "TIOCSTI is off on this kernel (dev.tty.legacy_tiocsti=0)" "$(evidence)"
	result_is SUCCESS || control_failed "TIOCSTI on the host's pty did not inject" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab_argv shell
	in_pty 15 "${AB[@]}" -- "$BIN/tty" sti "inj$(unique)"
	result_is SUCCESS && escaped "TIOCSTI injected keystrokes into the shared terminal" "$(evidence)"
	[ "$(audit_get start terminal)" = true ] ||
		escaped "the sandbox did not share the terminal: this run proves nothing" "$(evidence)"
	errno_is EPERM && audit_syscall ioctl a1 0x5412 &&
		blocked "ioctl(TIOCSTI) on the shared terminal: EPERM, the filter's (the audit names it)"
	escaped "no proof the filter refused TIOCSTI" "$(evidence)"
}

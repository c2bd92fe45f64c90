# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# tty_tioclinux: TIOCLINUX on a virtual console can paste the console's selection buffer into
# its input (TIOCL_PASTESEL), which is keystroke injection again. The probe asks a harmless
# subcode (TIOCL_GETSHIFTSTATE): any TIOCLINUX at all is what must be refused.
# Defence: seccomp (the default preset refuses ioctl TIOCLINUX).
# Control: as root, on the host's VT /dev/tty1, the ioctl succeeds; there the attack is given
# /dev/tty1 as its terminal too. An unprivileged user cannot open a VT: its control is that on
# a pty the kernel itself answers (ENOTTY: a pty is no console), i.e. the probe really makes the
# call, and the attack (on a pty) must get the filter's EPERM instead, named in the audit.

# A VT to use: root, /dev/tty1 present, and TIOCLINUX working on it on the host.
vt() {
	is_root && [ -c /dev/tty1 ] && "$BIN/tty" linux </dev/tty1 >/dev/null 2>&1
}

control() {
	if vt; then
		host sh -c 'exec "$1" linux </dev/tty1' sh "$BIN/tty"
		result_is SUCCESS || control_failed "TIOCLINUX on /dev/tty1 failed on the host" "$(evidence)"
		control_ok "on the host's VT /dev/tty1: $RESULT"
	fi
	in_pty 10 "$BIN/tty" linux
	errno_is ENOTTY EINVAL || control_failed "on the host's pty TIOCLINUX did not reach the tty layer" "$(evidence)"
	control_ok "on a pty the kernel answers TIOCLINUX itself (no VT for an unprivileged user): $RESULT"
}

attack() {
	ab_argv shell
	if vt; then
		host sh -c 'exec "$@" </dev/tty1' sh "${AB[@]}" -- "$BIN/tty" linux
		run_on="the host's VT /dev/tty1 (agentbox's stdin)"
	else
		in_pty 15 "${AB[@]}" -- "$BIN/tty" linux
		run_on="a pty"
	fi
	result_is SUCCESS && escaped "TIOCLINUX worked on $run_on" "$(evidence)"
	errno_is EPERM && audit_syscall ioctl a1 0x541c &&
		blocked "ioctl(TIOCLINUX) on $run_on: EPERM, the filter's (the audit names it)"
	escaped "no proof the filter refused TIOCLINUX on $run_on" "$(evidence)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# tty_tioclinux_highbits: TIOCLINUX as in tty_tioclinux, with high bits set in the request
# number (0xdead << 32), which the kernel ignores and a 64-bit compare would not.
# Defence: seccomp (the TIOCLINUX rule compares the low 32 bits only).
# Control: as in tty_tioclinux (root: succeeds on /dev/tty1; a user: the kernel answers ENOTTY
# on a pty), with the same high bits.

# A VT to use: root, /dev/tty1 present, and TIOCLINUX working on it on the host.
vt() {
	is_root && [ -c /dev/tty1 ] && "$BIN/tty" linux </dev/tty1 >/dev/null 2>&1
}

control() {
	if vt; then
		host sh -c 'exec "$1" linux hi </dev/tty1' sh "$BIN/tty"
		result_is SUCCESS || control_failed "TIOCLINUX|hi on /dev/tty1 failed on the host" "$(evidence)"
		control_ok "on the host's VT /dev/tty1: $RESULT"
	fi
	in_pty 10 "$BIN/tty" linux hi
	errno_is ENOTTY EINVAL || control_failed "on the host's pty TIOCLINUX|hi did not reach the tty layer" "$(evidence)"
	control_ok "on a pty the kernel answers TIOCLINUX|hi itself (no VT for an unprivileged user): $RESULT"
}

attack() {
	ab_argv shell
	if vt; then
		host sh -c 'exec "$@" </dev/tty1' sh "${AB[@]}" -- "$BIN/tty" linux hi
		run_on="the host's VT /dev/tty1 (agentbox's stdin)"
	else
		in_pty 15 "${AB[@]}" -- "$BIN/tty" linux hi
		run_on="a pty"
	fi
	result_is SUCCESS && escaped "TIOCLINUX|hi worked on $run_on" "$(evidence)"
	errno_is EPERM && audit_syscall ioctl a1 0x541c &&
		blocked "ioctl(TIOCLINUX | 0xdead << 32) on $run_on: EPERM, the filter's (the audit names it)"
	escaped "no proof the filter refused TIOCLINUX|hi on $run_on" "$(evidence)"
}

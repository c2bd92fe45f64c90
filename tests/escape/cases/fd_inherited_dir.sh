# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# fd_inherited_dir: a file descriptor the caller left open (here fd 5, a directory holding a
# secret, outside the view) would be a way around every mount: openat(5, "secret"), or
# openat(5, "..") to climb further. The probe also lists every fd from 3 to 1023 it has.
# Defence: agentbox closes every fd above 2 before the command starts (close_range in pid 1
# and again before exec).
# Control: the same probe run on the host with fd 5 open reads the secret through it.

setup() {
	mkdir -p "$META/outside"
	echo "SECRET-$NAME" >"$META/outside/secret"
}

control() {
	host sh -c 'exec 5<"$1"; exec "$2" inherited 5 secret "SECRET-$3"' sh "$META/outside" "$BIN/fds" "$NAME"
	result_is SUCCESS || control_failed "the host did not read the secret through fd 5" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab_argv shell
	host sh -c 'exec 5<"$1"; shift; exec "$@"' sh "$META/outside" "${AB[@]}" -- "$BIN/fds" inherited 5 secret "SECRET-$NAME"
	result_is SUCCESS && escaped "the inherited fd 5 reached the secret" "$(evidence)"
	printf '%s\n' "$OUT" | grep -q '^INFO fd [0-9]* is open' && escaped "fds above 2 were inherited" "$OUT"
	errno_is EBADF || escaped "no proof fd 5 was closed" "$(evidence)"
	blocked "fd 5 was not inherited (EBADF), and no other fd above 2 is open"
}

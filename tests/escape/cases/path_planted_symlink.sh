# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# path_planted_symlink: one run plants a symlink in its writable workspace (ws/link -> a
# secret directory); a later run, whose profile binds that path, would follow it and show the
# secret.
# Defence: the mount plan: a symlink met inside a writable tree of the profile is refused
# (exit 125), since the sandboxed command could have planted it.
# Control: the same kind of link made outside every writable tree is followed, and the probe
# sees the secret through it.

setup() {
	mkdir -p "$META/secret" ws
	echo "SECRET-$NAME" >"$META/secret/marker"
	ln -s "$META/secret" "$META/honest-link"
}

control() {
	ab minimal --ro "$META/honest-link" -- cat "$META/honest-link/marker"
	[ "$OUT" = "SECRET-$NAME" ] || control_failed "the bound link outside the writable trees did not show the secret" "$(evidence)"
	control_ok "a link outside the writable trees is followed: the probe reads the secret"
}

attack() {
	ab shell -- ln -s "$META/secret" ws/link
	[ -L ws/link ] || escaped "run 1 could not plant the link: proves nothing" "$(evidence)"
	ab shell --ro "$CASE/ws/link" -- cat "$CASE/ws/link/marker"
	[ "$OUT" = "SECRET-$NAME" ] && escaped "run 2 followed the planted link to the secret" "$(evidence)"
	[ "$RC" = 125 ] || escaped "run 2 was not refused" "$(evidence)"
	case "$ERR" in
	*"symlink inside the writable tree"*) ;;
	*) escaped "the refusal does not name the planted symlink" "$(evidence)" ;;
	esac
	blocked "run 1 planted ws/link; run 2 binding it stopped with 125: a symlink inside the writable tree"
}

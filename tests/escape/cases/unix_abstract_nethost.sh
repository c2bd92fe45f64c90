# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# unix_abstract_nethost: the same abstract socket under --net host, where the sandbox shares
# the host's network namespace, and so its abstract socket names.
# Defence: Landlock (ABI >= 6) scopes abstract unix sockets: a sandboxed process cannot
# connect to one created outside its Landlock domain (EPERM). On a kernel with an older Landlock
# the case is n/a (docs/security.md says --net host shares abstract sockets there).
# Control: the host connects; and so does the same sandbox with Landlock off (a profile with
# [sandbox] nesting = true, which turns Landlock off), which shows Landlock is what refuses.

setup() {
	GREETING="HELLO-$(unique)"
	ABSTRACT="agentbox-escape-$(unique)"
	serve "$GREETING" "abstract:$ABSTRACT"
	profile nolandlock.ini shell "nesting = true"
}

control() {
	local abi
	ab shell -- true
	abi=$(audit_get start landlock.abi)
	[ "${abi:-0}" -lt 6 ] &&
		not_applicable "Landlock ABI ${abi:-0} < 6 cannot scope abstract sockets" "$(evidence)"
	host "$BIN/sock" abstract "$ABSTRACT"
	case "$RESULT" in *"$GREETING"*) ;; *) control_failed "the host did not reach its abstract socket" "$(evidence)" ;; esac
	ab ./nolandlock.ini --net host -- "$BIN/sock" abstract "$ABSTRACT"
	case "$RESULT" in *"$GREETING"*) ;; *) control_failed "with Landlock off, --net host did not reach it" "$(evidence)" ;; esac
	control_ok "the host, and --net host with Landlock off (nesting = true), reach @$ABSTRACT"
}

attack() {
	local abi
	ab shell --net host -- "$BIN/sock" abstract "$ABSTRACT"
	abi=$(audit_get start landlock.abi)
	case "$OUT" in *"$GREETING"*)
		escaped "--net host reached the host's abstract socket (Landlock ABI $abi)" "$(evidence)"
		;;
	esac
	errno_is EPERM || escaped "no proof Landlock refused the connect (Landlock ABI $abi)" "$(evidence)"
	blocked "--net host: connect(@$ABSTRACT): EPERM (Landlock ABI $abi scopes abstract sockets)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# unix_abstract_netnone: abstract unix sockets (names starting with a NUL byte) have no file,
# so no mount hides them: they live in the network namespace. Many host services (X11's
# @/tmp/.X11-unix/X0, containerd shims, dbus) listen on one. A host daemon listens on an
# abstract name; the sandbox runs under the default network mode, none.
# Defence: the network namespace: mode none is a namespace of its own, with its own abstract
# socket names (ECONNREFUSED).
# Control: the host connects to the daemon's abstract name and gets its greeting.

setup() {
	GREETING="HELLO-$(unique)"
	ABSTRACT="agentbox-escape-$(unique)"
	serve "$GREETING" "abstract:$ABSTRACT"
}

control() {
	host "$BIN/sock" abstract "$ABSTRACT"
	case "$RESULT" in *"$GREETING"*) control_ok "$RESULT" ;; esac
	control_failed "the host did not reach its abstract socket" "$(evidence)"
}

attack() {
	ab shell -- "$BIN/sock" abstract "$ABSTRACT"
	case "$OUT" in *"$GREETING"*) escaped "the sandbox reached the host's abstract socket" "$(evidence)" ;; esac
	errno_is ECONNREFUSED || escaped "no proof the name was unknown inside" "$(evidence)"
	blocked "connect(@$ABSTRACT): ECONNREFUSED (another network namespace)"
}

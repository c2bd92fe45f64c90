# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# unix_socket_path: host daemons listen on unix sockets (Docker, D-Bus, ssh-agent, X11, a
# database): connecting to one is as good as the daemon's privileges. A test daemon listens in a
# directory the profile does not bind (the host's /tmp: the sandbox's /tmp is its own);
# well-known host sockets are tried too.
# Defence: the mount namespace: a socket file outside the view does not exist inside (ENOENT);
# Landlock would refuse connecting to a socket file not granted (it is not in the view anyway).
# Control: the host connects to the daemon and gets its greeting.

known="/run/docker.sock /var/run/docker.sock /run/dbus/system_bus_socket /run/systemd/private
	/run/containerd/containerd.sock /tmp/.X11-unix/X0 /run/user/$(id -u)/bus"

setup() {
	GREETING="HELLO-$(unique)"
	# a short path of its own: a unix socket path has at most 107 bytes
	SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/abx.XXXXXX")
	remove_later "$SOCKDIR"
	serve "$GREETING" "unix:$SOCKDIR/daemon.sock"
}

control() {
	host "$BIN/sock" unix "$SOCKDIR/daemon.sock"
	case "$RESULT" in *"$GREETING"*) control_ok "$RESULT" ;; esac
	control_failed "the host did not reach its daemon" "$(evidence)"
}

attack() {
	local s reached=""
	ab shell -- "$BIN/sock" unix "$SOCKDIR/daemon.sock"
	case "$OUT" in *"$GREETING"*) escaped "the sandbox reached the host daemon's socket" "$(evidence)" ;; esac
	errno_is ENOENT || escaped "no proof the socket was absent" "$(evidence)"
	for s in $known; do
		[ -S "$s" ] || continue
		ab shell -- "$BIN/sock" unix "$s"
		result_is SUCCESS && reached="$reached $s"
	done
	[ -z "$reached" ] || escaped "host sockets reachable from the sandbox:$reached"
	blocked "the daemon's socket: ENOENT inside; no well-known host socket reachable"
}

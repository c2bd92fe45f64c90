# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# fd_openat_dotdot: climb out of a bind mount with openat(fd, "..") from the workspace: the
# host directory above the workspace holds a secret next to it.
# Defence: the mount namespace: ".." of a bind mount's root is the directory it is mounted on
# in the sandbox's own root, not its parent on the host.
# Control: the same probe on the host, from the same directory, finds the secret one level up.

setup() {
	mkdir -p ws
	echo "SECRET-$NAME" >secret.txt
}

control() {
	cd ws || control_failed "no workspace"
	host "$BIN/fds" dotdot secret.txt "SECRET-$NAME"
	result_is SUCCESS || control_failed "the host did not find ../secret.txt" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	cd ws || escaped "no workspace"
	ab shell -- "$BIN/fds" dotdot secret.txt "SECRET-$NAME"
	result_is SUCCESS && escaped "openat(\"..\") climbed out of the workspace to the secret" "$(evidence)"
	errno_is ENOENT || escaped "no proof the climb was made and found nothing" "$(evidence)"
	blocked "16 levels of openat(fd, \"..\") from the workspace never reach the host's parent directory"
}

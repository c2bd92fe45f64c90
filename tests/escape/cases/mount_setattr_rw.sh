# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# mount_setattr_rw: the new mount API's way to the same end: mount_setattr with
# attr_clr = MOUNT_ATTR_RDONLY on a read-only bind.
# Defence: seccomp (mount_setattr is refused, named in the audit) and no capabilities.
# Control: on the host, in a user and mount namespace of its own, the probe binds a directory
# read-only, clears the flag with mount_setattr and creates a file in it.

setup() {
	mkdir -p data
}

control() {
	host "$BIN/mnt" setattr "$CASE/data" own
	result_is SUCCESS || control_failed "mount_setattr did not clear the read-only flag on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell --ro "$CASE/data" -- "$BIN/mnt" setattr "$CASE/data"
	[ -n "$(ls -A data)" ] && escaped "a file appeared in the read-only directory: $(ls -A data)"
	result_is SUCCESS && escaped "the read-only bind was made writable" "$(evidence)"
	errno_is EPERM && audit_syscall mount_setattr ||
		escaped "no proof the filter refused mount_setattr" "$(evidence)"
	blocked "mount_setattr(attr_clr = RDONLY): EPERM (the filter, named in the audit)"
}

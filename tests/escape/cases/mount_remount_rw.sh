# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# mount_remount_rw: a read-only bind is read-only by a mount flag; remounting it without
# MS_RDONLY (mount -o remount,rw) would make the host directory writable from the sandbox.
# Defence: seccomp (mount is refused, named in the audit) and no capabilities; the flag is not
# locked by the kernel (agentbox made the bind in the sandbox's own user namespace), so these
# are what stand in the way.
# Control: on the host, in a user and mount namespace of its own, the probe binds a directory
# read-only, remounts it read-write and creates a file in it.

setup() {
	mkdir -p data
}

control() {
	host "$BIN/mnt" remount "$CASE/data" own
	result_is SUCCESS || control_failed "remounting a read-only bind read-write failed on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell --ro "$CASE/data" -- "$BIN/mnt" remount "$CASE/data"
	[ -n "$(ls -A data)" ] && escaped "a file appeared in the read-only directory: $(ls -A data)"
	result_is SUCCESS && escaped "the read-only bind was made writable" "$(evidence)"
	errno_is EPERM && audit_syscall mount ||
		escaped "no proof the filter refused the remount" "$(evidence)"
	blocked "mount(MS_REMOUNT|MS_BIND) and mount(MS_REMOUNT): EPERM (the filter, named in the audit)"
}

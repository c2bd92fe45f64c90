# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# mount_umount_hide: a hidden file in the writable workspace is only covered by a mount;
# unmounting it (umount2, then umount2 with MNT_DETACH) would uncover the secret.
# Defence: seccomp (umount2 and the whole mount API are refused, named in the audit) and no
# capabilities (CAP_SYS_ADMIN in the sandbox's own user namespace is dropped).
# Control: on the host, in a user and mount namespace of its own, the probe covers the file with
# /dev/null the way agentbox's hide does, and umount2 uncovers it.

setup() {
	echo "SECRET-$NAME" >secret.txt
}

control() {
	host "$BIN/mnt" umount "$CASE/secret.txt" "SECRET-$NAME" own
	result_is SUCCESS || control_failed "umount2 did not uncover a covered file on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell --hide "$CASE/secret.txt" -- "$BIN/mnt" umount "$CASE/secret.txt" "SECRET-$NAME"
	result_is SUCCESS && escaped "the hidden file was read" "$(evidence)"
	errno_is EPERM && audit_syscall umount2 ||
		escaped "no proof the filter refused umount2" "$(evidence)"
	blocked "umount2 and umount2(MNT_DETACH) of the hidden file: EPERM (the filter, named in the audit)"
}

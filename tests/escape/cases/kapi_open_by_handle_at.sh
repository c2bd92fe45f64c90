# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# kapi_open_by_handle_at: the "shocker" escape. A file handle (inode number and generation)
# names a file or directory without a path; open_by_handle_at with any directory of the same
# file system opens it, wherever it is, whatever the mounts show. The handle of a directory
# outside the view is made on the host; inside, the workspace (same file system) serves as
# the mount fd. Also tried: name_to_handle_at on a file the sandbox can see.
# Defence: seccomp (open_by_handle_at and name_to_handle_at are refused, named in the audit);
# and no CAP_DAC_READ_SEARCH.
# Control: the same probe on the host opens the directory by its handle and reads the secret
# in it (as root directly; as a user in a user and mount namespace of its own, where Linux
# >= 6.10 decodes directory handles below a mount it controls).

setup() {
	mkdir -p "$META/shock/d"
	echo "SECRET-$NAME" >"$META/shock/d/secret"
	read -r _ TYPE HEX < <("$BIN/fhandle" get "$META/shock/d")
	[ -n "$HEX" ] || why "no handle for $META/shock/d"
}

control() {
	if is_root; then
		host "$BIN/fhandle" open "$META/shock" "$TYPE" "$HEX" secret "SECRET-$NAME"
	else
		host "$BIN/fhandle" open "$META/shock" "$TYPE" "$HEX" secret "SECRET-$NAME" own
	fi
	result_is SUCCESS || control_failed "open_by_handle_at did not open the directory on the host" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	ab shell -- "$BIN/fhandle" open "$CASE" "$TYPE" "$HEX" secret "SECRET-$NAME"
	result_is SUCCESS && escaped "open_by_handle_at reached a directory outside the view" "$(evidence)"
	errno_is EPERM && audit_syscall open_by_handle_at ||
		escaped "no proof the filter refused open_by_handle_at" "$(evidence)"
	ab shell -- "$BIN/fhandle" self "$CASE"
	result_is SUCCESS && escaped "name_to_handle_at worked inside the sandbox" "$(evidence)"
	errno_is EPERM && audit_syscall name_to_handle_at ||
		escaped "no proof the filter refused name_to_handle_at" "$(evidence)"
	blocked "open_by_handle_at and name_to_handle_at: EPERM (the filter, named in the audit)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc1_exe: pid 1 inside the sandbox is agentbox itself (forked, not exec'd: its
# /proc/1/exe is the agentbox binary on the host). Holding it open is the first half of the
# runc attack (see proc_exe_supervisor); writing it, the second. The probe opens /proc/1/exe
# with O_PATH, O_RDONLY and O_WRONLY.
# Defence: pid 1 is non-dumpable, so the kernel refuses the magic link to the same uid; the
# binary is outside the view; and a running binary cannot be opened for writing (ETXTBSY).
# Control: inside the same sandbox the probe does reach a binary through /proc/N/exe of an
# ordinary (dumpable) process: its own.

control() {
	local dev ino
	read -r dev ino < <(stat -L -c '%d %i' "$BIN/procexe")
	ab shell -- "$BIN/procexe" scan "$dev" "$ino"
	result_is SUCCESS || control_failed "the probe did not reach its own binary through /proc/N/exe" "$(evidence)"
	control_ok "inside the sandbox: $RESULT (the target: its own binary)"
}

attack() {
	local dev ino sum
	read -r dev ino < <(stat -L -c '%d %i' "$AGENTBOX")
	sum=$(cksum <"$AGENTBOX")
	ab shell -- "$BIN/procexe" scan "$dev" "$ino" 1
	[ "$(cksum <"$AGENTBOX")" = "$sum" ] || escaped "the agentbox binary changed on the host"
	result_is SUCCESS && escaped "/proc/1/exe reached the agentbox binary" "$OUT"
	printf '%s\n' "$OUT" | grep -q 'INFO /proc/1 EXISTS' || escaped "pid 1 is not there: proves nothing" "$(evidence)"
	printf '%s\n' "$OUT" | grep -q 'open /proc/1/exe O_WRONLY: EACCES' ||
		escaped "no proof /proc/1/exe was refused for writing" "$(evidence)"
	blocked "/proc/1/exe: O_PATH, O_RDONLY and O_WRONLY all EACCES (pid 1 is non-dumpable)"
}

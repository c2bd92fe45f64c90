# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc_sys_global_write: the host's kernel settings under /proc/sys. kernel.core_pattern is the
# classic: "|/path/prog" makes the kernel run prog as root on the host whenever a process
# crashes. The probe writes back the current value of kernel.core_pattern and fs.suid_dumpable
# (a write that lands changes nothing, but proves it could have).
# Defence: for an unprivileged caller, the files are root's (mode 0644) and its uid is not
# root. When agentbox runs as root, uid 0 maps to the host's uid 0, and sysctl permission is a
# uid check (kernel/sysctl.c test_perm), not a capability check: nothing in agentbox stops it.
# Control: as root, the same write-back on the host is accepted; as a user, the probe writes a
# net.* sysctl of a network namespace it owns (the write path works where the kernel allows).

files="/proc/sys/kernel/core_pattern /proc/sys/fs/suid_dumpable"

control() {
	if is_root; then
		host "$BIN/sysctl" $files
	else
		host "$BIN/sysctl" /proc/sys/net/ipv4/ip_unprivileged_port_start own
	fi
	result_is SUCCESS || control_failed "the write-back was refused on the host" "$(evidence)"
	control_ok "on the host: $RESULT"
}

attack() {
	local before
	before=$(cat /proc/sys/kernel/core_pattern)
	ab shell -- "$BIN/sysctl" $files
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$before" ] || escaped "kernel.core_pattern changed on the host"
	result_is SUCCESS && escaped "the sandbox can write the host's global sysctls (as uid $(id -u)): $RESULT" \
		"$(printf '%s\n' "$OUT" | grep INFO)" \
		"mounts.c/landlock.c: /proc is mounted read-write and Landlock grants WRITE_FILE on /proc;" \
		"as root the sandbox's uid 0 is the host's uid 0, which passes the sysctl uid check"
	errno_is EACCES EROFS EPERM || escaped "no proof the writes were refused" "$(evidence)"
	blocked "the host's sysctls are not writable: $RESULT"
}

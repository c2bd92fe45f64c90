# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# persist_setuid_plant: the command makes a setuid executable in the writable workspace. Inside,
# nosuid makes it useless (setuid_nosuid); but the file stays on the host, setuid. When agentbox
# runs as root, the sandbox's uid 0 is the host's uid 0 (no capabilities needed: chmod u+s of
# one's own file is allowed), so the file would be setuid root: any local user who can reach
# the workspace and run it would get root. As a user, it would be setuid to that user.
# Defence: seccomp: chmod, fchmod, fchmodat and fchmodat2 with S_ISUID or S_ISGID in the mode
# are refused (EPERM, named in the audit); persist_setuid_routes covers the creating calls.
# Control: the command can chmod an ordinary file of the workspace (mode 755), and on the host
# the same chmod 4755 works.

control() {
	host sh -c 'cp /usr/bin/id hostcopy && chmod 4755 hostcopy'
	[ "$(stat -c %a hostcopy 2>/dev/null)" = 4755 ] ||
		control_failed "chmod 4755 failed on the host" "$(evidence)"
	rm -f hostcopy
	ab shell -- sh -c 'cp /usr/bin/id ordinary && chmod 755 ordinary'
	[ "$(stat -c %a ordinary 2>/dev/null)" = 755 ] || control_failed "chmod 755 in the workspace failed" "$(evidence)"
	control_ok "chmod 4755 works on the host; the command makes an executable (mode 755)"
}

attack() {
	local mode owner
	ab shell -- sh -c 'cp /usr/bin/id planted && chmod 4755 planted'
	mode=$(stat -c %a planted 2>/dev/null)
	owner=$(stat -c %U planted 2>/dev/null)
	rm -f planted
	if [ "$mode" = 4755 ]; then
		escaped "the command left a setuid-$owner executable in the workspace on the host" \
			"planted: mode $mode, owner $owner"
	fi
	case "$ERR" in *"Operation not permitted"*) ;; *) escaped "no proof chmod 4755 was refused" "$(evidence)" ;; esac
	audit_syscall fchmodat || escaped "the refusal is not named in the audit" "$(evidence)"
	blocked "chmod 4755 refused (EPERM, fchmodat in the audit); the file stayed mode $mode"
}

# persist_setuid_plant: the command makes a setuid executable in the writable workspace. Inside,
# nosuid makes it useless (setuid_nosuid); but the file stays on the host, setuid. When agentbox
# runs as root, the sandbox's uid 0 is the host's uid 0 (no capabilities needed: chmod u+s of
# one's own file is allowed), so the file is setuid root: any local user who can reach the
# workspace and run it gets root. As a user, the file is setuid to that user.
# Defence: none yet: nothing refuses chmod/fchmod/fchmodat with S_ISUID (a seccomp rule on the
# mode argument, as Flatpak has, would), and the workspace's host mount allows setuid.
# Control: the command can chmod an ordinary file of the workspace (mode 755).

control() {
	ab shell -- sh -c 'cp /usr/bin/id ordinary && chmod 755 ordinary'
	[ "$(stat -c %a ordinary 2>/dev/null)" = 755 ] || control_failed "chmod 755 in the workspace failed" "$(evidence)"
	control_ok "the command makes an executable in the workspace (mode 755)"
}

attack() {
	local mode owner
	ab shell -- sh -c 'cp /usr/bin/id planted && chmod 4755 planted'
	mode=$(stat -c %a planted 2>/dev/null)
	owner=$(stat -c %U planted 2>/dev/null)
	rm -f planted
	if [ "$mode" = 4755 ]; then
		gap "the command left a setuid-$owner executable in the workspace on the host" \
			"planted: mode $mode, owner $owner$(is_root && echo ' (setuid root: a local root exploit for whoever can run it)')"
	fi
	case "$ERR" in *"Operation not permitted"*) ;; *) escaped "no proof chmod 4755 was refused" "$(evidence)" ;; esac
	blocked "chmod 4755 was refused: $(evidence)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# persist_home_inputs: the workspace is the user's home (or holds it). The command plants code
# that runs outside later: a key in ~/.ssh/authorized_keys, a pager in ~/.gitconfig, a program
# in a directory on the caller's PATH, a profile in ~/.config/agentbox/profiles (or an
# $AGENTBOX_PROFILE_PATH entry) that a later run would load, a forged run record in agentbox's
# state directory that promote would follow; or creates ~/.local/bin or ~/.ssh where missing.
# Defence: mounts (guarded.c): those paths are read-only in place when a writable tree holds
# them; a missing one whose parent exists is watched: renamed aside as it appears, and the run
# stops (mounts/protect_watch.c); the state directory is made before the plan, so it is
# guarded too.
# Control: the same writes on the host work, and inside, an ordinary file of the same home is
# writable.

setup() {
	H=$CASE/home
	mkdir -p "$H/.ssh" "$H/.config/agentbox/profiles" "$H/bin" "$H/profiles" "$H/work"
	echo key >"$H/.ssh/authorized_keys"
	echo '[core]' >"$H/.gitconfig"
	cp "$PROFILES"/*.ini "$H/profiles/"
}

plant() {
	printf '%s\n' "$1"
	echo evil >>"$H/.ssh/authorized_keys" && echo PLANTED-ssh
	echo evil >>"$H/.gitconfig" && echo PLANTED-gitconfig
	echo evil >"$H/bin/ls" && echo PLANTED-path
	echo evil >"$H/.config/agentbox/profiles/shell.ini" && echo PLANTED-profile
	echo evil >"$H/profiles/evil.ini" && echo PLANTED-profile-path
	mkdir -p "$H/.local/state/agentbox/runs" && echo forged >"$H/.local/state/agentbox/runs/forged" &&
		echo PLANTED-state
	echo ok >"$H/work/ordinary" && echo WROTE-ordinary
	plant_missing
}

# the two the home lacks (~/.local exists: the state directory is below it)
plant_missing() {
	echo '[core] pager = /tmp/evil' >"$H/.zshrc" && echo PLANTED-missing-rc
	mkdir -p "$H/.local/bin" && echo evil >"$H/.local/bin/ls" && echo PLANTED-localbin
}

control() {
	(plant host) >"$META/host.out" 2>&1
	for w in ssh gitconfig path missing-rc profile profile-path state localbin; do
		grep -q "PLANTED-$w" "$META/host.out" || control_failed "the host could not write $w" "$(cat "$META/host.out")"
	done
	rm -rf "$H/.local" "$H/bin/ls" "$H/profiles/evil.ini" "$H/.zshrc"
	echo key >"$H/.ssh/authorized_keys"
	echo '[core]' >"$H/.gitconfig"
	rm -f "$H/.config/agentbox/profiles/shell.ini"
	control_ok "on the host every plant works"
}

attack() {
	# the workspace holds the home (a parent of it is the rw tree): nothing of the home is at
	# the tree's root, where the protected names are
	cd "$CASE" || escaped "no case directory"
	run env HOME="$H" PATH="$H/bin:/usr/bin:/bin" AGENTBOX_PROFILE_PATH="$H/profiles" \
		"$AGENTBOX" -p shell -- bash -c "H='$H'; $(declare -f plant); plant_missing() { :; }; plant inside"
	case "$OUT" in *WROTE-ordinary*) ;; *) escaped "the ordinary write in the home failed" "$(evidence)" ;; esac
	case "$OUT" in *PLANTED*) escaped "planted: $(printf '%s' "$OUT" | grep PLANTED | tr '\n' ' ')" "$(evidence)" ;; esac
	grep -q evil "$H/.ssh/authorized_keys" "$H/.gitconfig" 2>/dev/null && escaped "a guarded file changed on the host"
	[ -e "$H/bin/ls" ] || [ -e "$H/.local/bin/ls" ] || [ -e "$H/.local/state/agentbox/runs/forged" ] ||
		[ -e "$H/.zshrc" ] &&
		escaped "a planted path is on the host" "$(ls -la "$H" "$H/.local" 2>&1)"
	refused_missing "$H/.zshrc" env HOME="$H" "$AGENTBOX" -p shell -- bash -c \
		"echo evil >'$H/.zshrc'; sleep 3; echo NOT-STOPPED"
	refused_missing "$H/.local/bin" env HOME="$H" "$AGENTBOX" -p shell -- bash -c \
		"mkdir -p '$H/.local/bin' && echo evil >'$H/.local/bin/ls'; sleep 3; echo NOT-STOPPED"
	blocked "every plant in place refused read-only; the missing ones stopped the run and were renamed aside; an ordinary file of the home was written"
}

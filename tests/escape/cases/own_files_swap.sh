# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# own_files_swap: the user runs agentbox from a copy inside the workspace (tools/agentbox) with
# a profile kept there too (conf/my.ini). agentbox binds both read-only on top of themselves;
# but their directories are ordinary directories of the writable workspace. The command renames
# them away and puts its own program and a profile of its choosing at the same paths: the
# user's next `tools/agentbox -p conf/my.ini` runs the attacker's program, unsandboxed.
# Defence (as documented): "agentbox's own files (its binary, every profile file read, the
# audit file) ... when one is under an rw bind it is bound again read-only on top"
# (docs/profile.md), i.e. plan_protect in mount_protect.c.
# Control: inside, the binary and the profile cannot be written in place (read-only), and an
# ordinary directory of the workspace can be renamed.

setup() {
	mkdir -p proj/tools proj/conf proj/other
	cp "$AGENTBOX" proj/tools/agentbox
	profile proj/conf/my.ini shell
}

control() {
	cd proj || control_failed "no proj"
	run "$CASE/proj/tools/agentbox" -p "$CASE/proj/conf/my.ini" -- sh -c '
		(echo x >> tools/agentbox) 2>&1 || echo BINARY-REFUSED
		(echo "[filesystem]" >> conf/my.ini) 2>&1 || echo PROFILE-REFUSED
		mv other other.moved && mv other.moved other && echo RENAMED'
	case "$OUT" in
	*BINARY-REFUSED*PROFILE-REFUSED*RENAMED*) ;;
	*) control_failed "in-place protection or rename not as expected" "$(evidence)" ;;
	esac
	control_ok "inside, tools/agentbox and conf/my.ini are read-only in place, and a workspace directory can be renamed"
}

attack() {
	local after
	cd proj || escaped "no proj"
	run "$CASE/proj/tools/agentbox" -p "$CASE/proj/conf/my.ini" -- sh -c '
		mv tools tools.moved && mkdir tools && printf "#!/bin/sh\necho TROJAN-RAN\n" > tools/agentbox &&
		chmod 755 tools/agentbox && echo BINARY-SWAPPED
		mv conf conf.moved && mkdir conf && printf "[sandbox]\n# weaker\n" > conf/my.ini && echo PROFILE-SWAPPED'
	after=$(tools/agentbox -p conf/my.ini -- true 2>&1)
	case "$after" in *TROJAN-RAN*)
		escaped "the next 'tools/agentbox -p conf/my.ini' ran the command's program on the host: '$after'" \
			"$(printf '%s' "$OUT" | tr '\n' ' ')" \
			"the command renamed tools/ and conf/, the directories of the read-only-bound files" \
			"(mount_protect.c plan_protect binds only the files themselves)"
		;;
	esac
	cmp -s "$AGENTBOX" tools/agentbox || escaped "tools/agentbox is not agentbox any more" "$(evidence)"
	blocked "tools/agentbox and conf/my.ini are still agentbox's own: $(evidence)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# path_symlink_swap_rw: the same race against a read-write bind: ws/out (bound read-write) and a
# symlink ws/alt -> a directory outside the view swap places while agentbox starts at least 40
# times, each run writing a file into ws/out. A bind that followed the symlink would let the
# sandbox write into the outside directory.
# Defence: as in path_symlink_swap_ro: symlinks in writable trees are refused when planning, and
# sources are opened with every symlink refused when mounting.
# Control: bound read-write directly, the outside directory does receive the probe's file; and
# during the race at least one run writes into the real ws/out. (A run may also start while the
# swapper has moved the real directory away: then the path is the symlink, whose target is not
# in the view, and nothing is written. That is no leak.)

MIN_RUNS=40 MAX_RUNS=400 # runs go on past MIN_RUNS until one used the real directory

setup() {
	mkdir -p "$META/outside" ws/out
	ln -s "$META/outside" ws/alt
	# the race is against the bind source: the protected names' read-only binds would add lookups
	# of ws/out of their own (each a refusal under the race, so the control could starve).
	# Every default name is unprotected (policy.c's two lists); a name added there and not
	# here makes the control starve again, as it did when git's pointer files were added.
	profile "$META/race.ini" shell "[filesystem]" \
		"unprotect = .git/hooks, .git/config, .git/info, .git/worktrees, .git/modules" \
		"unprotect = .bashrc, .bash_profile, .bash_login, .profile" \
		"unprotect = .zshrc, .zshenv, .zprofile, .envrc, .vscode/tasks.json" \
		"unprotect = .git/commondir, .git/config.worktree, .git/objects/info/alternates" \
		"unprotect = .git/objects/info/http-alternates" \
		"unprotect = .npmrc, .yarnrc, .yarnrc.yml, .pnpmfile.cjs"
}

control() {
	ab minimal --rw "$META/outside" -- sh -c 'echo x > "$1/written-ctl"' sh "$META/outside"
	[ -f "$META/outside/written-ctl" ] ||
		control_failed "a read-write bind of the directory did not receive the file" "$(evidence)"
	rm -f "$META/outside/written-ctl"
	control_ok "bound read-write, the outside directory receives the probe's file"
}

attack() {
	local n=0 i ok=0 refused=0 other=0 first="" swaps spid
	"$BIN/swap" ws/out ws/alt 30 >"$META/swaps" 2>&1 </dev/null &
	spid=$!
	echo "$spid" >>"$META/bgpids"
	sleep 0.05
	for ((i = 0; i < MAX_RUNS; i++)); do
		n=$((i + 1))
		ab "$META/race.ini" --rw "$CASE/ws/out" -- sh -c 'echo x > "$1/written-$2"' sh "$CASE/ws/out" "$i"
		if [ "$RC" = 125 ]; then
			refused=$((refused + 1))
		elif [ "$RC" = 0 ]; then
			ok=$((ok + 1))
		else
			other=$((other + 1))
			[ -n "$first" ] || first="run $i: $(evidence)"
		fi
		if [ -n "$(ls -A "$META/outside")" ]; then
			kill "$spid"
			escaped "run $i wrote into the directory outside the view: $(ls -A "$META/outside")" "$(evidence)"
		fi
		[ "$i" -ge "$MIN_RUNS" ] && [ -n "$(ls ws/out/written-* ws/alt/written-* 2>/dev/null)" ] && break
	done
	kill -0 "$spid" 2>/dev/null || escaped "the swapper stopped early: the race proves nothing"
	kill -TERM "$spid"
	wait "$spid"
	swaps=$(cat "$META/swaps")
	# the real directory is at ws/out or ws/alt, depending on the last swap
	local landed
	landed=$(cat ws/out/written-* ws/alt/written-* 2>/dev/null | wc -l)
	[ "$landed" -gt 0 ] || escaped "no run wrote into the real directory: the race proves nothing ($refused refused)" "$first"
	blocked "$n runs during $swaps swaps: $ok wrote into the real ws/out ($landed files), $refused refused (125)," \
		"$other ran while the swap had moved it (nothing written), none outside"
}

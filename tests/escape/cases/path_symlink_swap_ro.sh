# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# path_symlink_swap_ro: a race against a bind's source. Inside the writable workspace, a
# directory ws/data (bound read-only by the profile) and a symlink ws/alt -> a secret directory
# outside the view swap places atomically, as fast as possible, while agentbox starts at least
# 40 times. A bind that followed the symlink at the wrong moment would show the secret.
# Defence: the plan refuses a symlink met inside a writable tree (the command could have planted
# it), and the mount opens each source with every symlink refused (openat2 RESOLVE_NO_SYMLINKS),
# so a swap between plan and mount fails the run (exit 125).
# Control: without the race, a symlink to the secret outside every writable tree is followed and
# bound, and the probe sees the secret through it (the probe does detect a followed link); and
# during the race at least one run shows the real directory. (A run may also start while the
# swapper has moved the real directory away: the bind stays on the directory, and the path then
# shows the symlink, whose target is not in the view. That is no leak.)

MIN_RUNS=40 MAX_RUNS=200 # runs go on past MIN_RUNS until one used the real directory

setup() {
	mkdir -p "$META/secret" ws/data
	echo "SECRET-$NAME" >"$META/secret/marker"
	echo REAL >ws/data/marker
	ln -s "$META/secret" ws/alt
	ln -s "$META/secret" "$META/link"
}

control() {
	ab minimal --ro "$META/link" -- cat "$META/link/marker"
	[ "$OUT" = "SECRET-$NAME" ] || control_failed "a bound symlink to the secret did not show it" "$(evidence)"
	control_ok "a symlink outside the writable trees is followed: the probe reads the secret through it"
}

attack() {
	local n=0 i real=0 refused=0 other=0 first="" swaps
	"$BIN/swap" ws/data ws/alt 30 >"$META/swaps" 2>&1 </dev/null &
	echo $! >>"$META/bgpids"
	local spid=$!
	sleep 0.05
	for ((i = 0; i < MAX_RUNS; i++)); do
		n=$((i + 1))
		ab shell --ro "$CASE/ws/data" -- cat "$CASE/ws/data/marker"
		if [ "$OUT" = "SECRET-$NAME" ]; then
			kill "$spid"
			escaped "run $i showed the secret through the bind of ws/data" "$(evidence)"
		elif [ "$RC" = 125 ]; then
			refused=$((refused + 1))
		elif [ "$RC" = 0 ] && [ "$OUT" = REAL ]; then
			real=$((real + 1))
		else
			other=$((other + 1))
			[ -n "$first" ] || first="run $i: $(evidence)"
		fi
		[ "$i" -ge "$MIN_RUNS" ] && [ "$real" -gt 0 ] && break
	done
	kill -0 "$spid" 2>/dev/null || escaped "the swapper stopped early: the race proves nothing" "$(cat "$META/swaps")"
	kill -TERM "$spid"
	wait "$spid"
	swaps=$(cat "$META/swaps")
	[ "$real" -gt 0 ] ||
		escaped "no run showed the real directory: the race proves nothing ($refused refused, $other other)" "$first"
	blocked "$n runs during $swaps swaps: $real showed the real directory, $refused refused (125)," \
		"$other ran while the swap had moved it (the path showed the link's absent target), none the secret"
}

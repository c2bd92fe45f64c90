# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# persist_npmrc: the command writes a project .npmrc (script-shell, node-options) or
# .yarnrc.yml (yarnPath): the user's next `npm run`/`yarn` on the host runs a program of the
# command's choosing, outside any sandbox. Existing ones and missing ones.
# Defence: mounts: these names are protected at the root of every rw and overlay tree: read-only
# in place; a missing one is watched, renamed aside as it appears, and the run stops
# (mounts/protect_watch.c; nothing stands in for it, so `git add -A` cannot commit a stand-in).
# Control: the same writes work on the host, and inside, an ordinary file of the workspace.

setup() {
	echo 'registry=http://127.0.0.1:9/' >.npmrc
}

plant() {
	echo 'script-shell=/tmp/evil' >>.npmrc && echo PLANTED-npmrc
	echo ok >ordinary.txt && echo WROTE-ordinary
	plant_missing
}

# the two the workspace lacks
plant_missing() {
	echo 'yarnPath: /tmp/evil.js' >.yarnrc.yml && echo PLANTED-yarnrc
	echo 'module.exports = {hooks: {}}' >.pnpmfile.cjs && echo PLANTED-pnpmfile
}

control() {
	mkdir -p host && cp .npmrc host/ && (cd host && plant) >"$META/host.out" 2>&1
	rm -rf host
	[ "$(grep -c PLANTED "$META/host.out")" = 3 ] || control_failed "the host could not write them" "$(cat "$META/host.out")"
	control_ok "on the host the three writes work"
}

attack() {
	run "$AGENTBOX" -p shell -- bash -c "$(declare -f plant); plant_missing() { :; }; plant"
	case "$OUT" in *WROTE-ordinary*) ;; *) escaped "the ordinary write failed" "$(evidence)" ;; esac
	case "$OUT" in *PLANTED*) escaped "inside: $(printf '%s' "$OUT" | grep PLANTED | tr '\n' ' ')" "$(evidence)" ;; esac
	grep -q evil .npmrc && escaped "the host's .npmrc changed"
	refused_missing "$PWD/.yarnrc.yml" "$AGENTBOX" -p shell -- bash -c \
		"echo 'yarnPath: /tmp/evil.js' >.yarnrc.yml; sleep 3; echo NOT-STOPPED"
	refused_missing "$PWD/.pnpmfile.cjs" "$AGENTBOX" -p shell -- bash -c \
		"echo 'module.exports = {}' >.pnpmfile.cjs; sleep 3; echo NOT-STOPPED"
	blocked "the existing .npmrc read-only; the missing two stopped the run and were renamed aside; an ordinary file was written"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# persist_npmrc: the command writes a project .npmrc (script-shell, node-options) or
# .yarnrc.yml (yarnPath): the user's next `npm run`/`yarn` on the host runs a program of the
# command's choosing, outside any sandbox. Existing ones and missing ones.
# Defence: mounts: these names are protected at the root of every rw and overlay tree: read-only
# in place, a missing one standing in as an empty read-only file (npm and yarn read it as no
# configuration).
# Control: the same writes work on the host, and inside, an ordinary file of the workspace.

setup() {
	echo 'registry=http://127.0.0.1:9/' >.npmrc
}

plant() {
	echo 'script-shell=/tmp/evil' >>.npmrc && echo PLANTED-npmrc
	echo 'yarnPath: /tmp/evil.js' >.yarnrc.yml && echo PLANTED-yarnrc
	echo 'module.exports = {hooks: {}}' >.pnpmfile.cjs && echo PLANTED-pnpmfile
	echo ok >ordinary.txt && echo WROTE-ordinary
}

control() {
	mkdir -p host && cp .npmrc host/ && (cd host && plant) >"$META/host.out" 2>&1
	rm -rf host
	[ "$(grep -c PLANTED "$META/host.out")" = 3 ] || control_failed "the host could not write them" "$(cat "$META/host.out")"
	control_ok "on the host the three writes work"
}

attack() {
	run "$AGENTBOX" -p shell -- bash -c "$(declare -f plant); plant"
	case "$OUT" in *WROTE-ordinary*) ;; *) escaped "the ordinary write failed" "$(evidence)" ;; esac
	case "$OUT" in *PLANTED*) escaped "inside: $(printf '%s' "$OUT" | grep PLANTED | tr '\n' ' ')" "$(evidence)" ;; esac
	grep -q evil .npmrc && escaped "the host's .npmrc changed"
	[ -e .yarnrc.yml ] || [ -e .pnpmfile.cjs ] && escaped "a planted file is on the host" "$(ls -la)"
	blocked "the three refused (read-only in place, or an empty stand-in); an ordinary file was written"
}

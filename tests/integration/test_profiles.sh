#!/bin/bash
# Every bundled profile runs its real tool on a workspace, and refuses what it should: reading
# ~/.ssh, writing outside the workspace, reaching a host no rule allows. Registries are served
# by the test on the host's 127.0.0.1 (there is no internet here), so each network profile
# gets --allow for that address on top of its own registry rules.
. "$(dirname "$0")/lib.sh"

serve() {
	local pf="$META/port.$1"
	shift
	bg "$PY" "$HELPERS/egress_server.py" "$pf" "$@"
	wait_for_file "$pf" 10 || fail "the host's test server ($*) did not start"
	PORT=$(cat "$pf")
}

# Shared refusals: nothing of the caller's home but what the profile lists, nothing outside
# the workspace writable, no network the profile does not allow.
# The caller's home is a fake one outside the workspace, with a key and a .gitconfig.
fake_home() {
	FAKE_HOME="$META/home"
	mkdir -p "$FAKE_HOME/.ssh"
	printf 'PRIVATE-KEY-%s\n' "$(unique)" >"$FAKE_HOME/.ssh/id_ed25519"
	printf '[user]\n\tname = Fake Home\n' >"$FAKE_HOME/.gitconfig"
	# positive control: the key is there to read, outside the sandbox
	[ -r "$FAKE_HOME/.ssh/id_ed25519" ] || fail "cannot make the fake home"
}

refuses_outside() {
	local profile=$1
	fake_home
	expect_exit 0 env HOME="$FAKE_HOME" "$AGENTBOX" -p "$profile" -- /bin/sh -c '
		cat "$1/.ssh/id_ed25519" 2>/dev/null
		touch /usr/agentbox-probe 2>/dev/null && echo USR-WRITABLE
		touch /etc/agentbox-probe 2>/dev/null && echo ETC-WRITABLE
		touch "$2/agentbox-probe" 2>/dev/null
		echo done' sh "$FAKE_HOME" "$META"
	assert_contains "$OUT" done "$profile ran"
	assert_not_contains "$OUT" PRIVATE-KEY "$profile: the caller's ~/.ssh"
	assert_not_contains "$OUT" USR-WRITABLE "$profile: /usr"
	assert_not_contains "$OUT" ETC-WRITABLE "$profile: /etc"
	# inside, that path may be on the sandbox's private /tmp: what matters is the host
	assert_absent "$META/agentbox-probe" "$profile: a write outside the workspace reached the host"
}

t_minimal() {
	expect_exit 0 "$AGENTBOX" -p minimal -- /bin/sh -c 'ls /; echo ok'
	assert_contains "$OUT" usr "the view has /usr"
	assert_not_contains "$OUT" home "and no /home"
	expect_exit 2 "$AGENTBOX" -p minimal -- /bin/sh -c "ls '$CASE' >/dev/null 2>&1"
}

t_shell() {
	expect_exit 0 "$AGENTBOX" -p shell -- bash -c 'echo hi >out.txt && wc -c <out.txt'
	assert_eq 3 "$OUT" "bash wrote in the workspace"
	assert_exists "$CASE/out.txt" "the file, seen from the host"
	refuses_outside shell
}

t_python() {
	printf 'import json, pathlib\npathlib.Path("gen.json").write_text(json.dumps({"n": 6 * 7}))\n' >gen.py
	expect_exit 0 "$AGENTBOX" -p python -- python3 gen.py
	assert_eq '{"n": 42}' "$(cat "$CASE/gen.json")" "python3 wrote in the workspace"
	refuses_outside python
	# no network: a socket to anything outside has no route
	expect_exit 0 "$AGENTBOX" -p python -- python3 -c '
import socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=3); print("CONNECTED")
except OSError as e:
    print("refused", e.errno)'
	assert_contains "$OUT" "refused" "python: no network"
}

t_python_pip() {
	local idx="$META/pypi" value
	value="profile-pip-$(unique)"
	"$PY" "$HELPERS/egress_mkwheel.py" "$idx" profiletestpkg 1.0 "$value" >"$META/mkwheel.log" 2>&1 ||
		fail "cannot build the test wheel: $(cat "$META/mkwheel.log")"
	serve pypi "$idx"
	expect_exit 0 "$AGENTBOX" -p python-pip --allow "127.0.0.1:$PORT" -- sh -c '
		/usr/bin/python3 -m venv venv &&
		env -u NO_PROXY -u no_proxy venv/bin/python -m pip install --no-cache-dir \
			--disable-pip-version-check --retries 0 --timeout 15 \
			--index-url "http://127.0.0.1:$1/simple" profiletestpkg >/dev/null &&
		venv/bin/python -c "import profiletestpkg; print(profiletestpkg.VALUE)"' sh "$PORT"
	assert_eq "$value" "$OUT" "pip installed through the proxy, into the workspace's venv"
	# the registry rules alone do not reach the local index
	run_cmd "$AGENTBOX" -p python-pip -- env -u NO_PROXY -u no_proxy /usr/bin/python3 -m pip \
		download --no-cache-dir --disable-pip-version-check --retries 0 --timeout 15 --no-deps \
		-d dl --index-url "http://127.0.0.1:$PORT/simple" profiletestpkg
	[ "$RC" != 0 ] || fail "pip reached a host python-pip does not allow" "$(report)"
}

t_node() {
	printf 'require("fs").writeFileSync("out.txt", String(6 * 7));\n' >gen.js
	expect_exit 0 "$AGENTBOX" -p node -- node gen.js
	assert_eq 42 "$(cat "$CASE/out.txt")" "node wrote in the workspace"
	refuses_outside node
}

t_node_npm() {
	local pkg="$META/npm-pkg" srv="$META/npm-srv" value
	value="profile-npm-$(unique)"
	mkdir -p "$pkg" "$srv"
	printf '{"name":"profile-test-pkg","version":"1.0.0","main":"index.js"}\n' >"$pkg/package.json"
	printf 'module.exports = "%s";\n' "$value" >"$pkg/index.js"
	(cd "$pkg" && npm pack --cache "$META/npm-cache" --pack-destination "$srv") >"$META/pack.log" 2>&1 ||
		fail "npm pack: $(cat "$META/pack.log")"
	serve npm "$srv"
	expect_exit 0 "$AGENTBOX" -p node-npm --allow "127.0.0.1:$PORT" -- sh -c '
		env -u NO_PROXY -u no_proxy npm install --no-audit --no-fund --loglevel=error \
			"http://127.0.0.1:$1/profile-test-pkg-1.0.0.tgz" >/dev/null &&
		node -e "console.log(require(\"profile-test-pkg\"))"' sh "$PORT"
	assert_eq "$value" "$OUT" "npm installed through the proxy into the workspace"
	assert_exists "$CASE/node_modules/profile-test-pkg/index.js" "node_modules, seen from the host"
}

t_git() {
	local repo="$META/srv/repo.git"
	mkdir -p "$META/src" "$META/srv"
	git -C "$META/src" init -q && git -C "$META/src" -c user.name=t -c user.email=t@t \
		commit -q --allow-empty -m first && git clone -q --bare "$META/src" "$repo" &&
		git -C "$repo" update-server-info || fail "cannot make the test repository"
	serve git "$META/srv"
	expect_exit 0 "$AGENTBOX" -p git --allow "127.0.0.1:$PORT" -- sh -c '
		env -u NO_PROXY -u no_proxy git clone -q "http://127.0.0.1:$1/repo.git" work &&
		cd work && echo x >f && git add f &&
		git -c user.name=agent -c user.email=agent@example commit -q -m second && git log --oneline | wc -l' \
		sh "$PORT"
	assert_eq 2 "$OUT" "git cloned and committed in the workspace"
	assert_exists "$CASE/work/f" "the clone, seen from the host"
	# ~/.gitconfig is read (read-only) while ~/.ssh stays hidden
	fake_home
	expect_exit 0 env HOME="$FAKE_HOME" "$AGENTBOX" -p git -- sh -c '
		git config --global user.name; echo x >>"$1/.gitconfig" 2>/dev/null && echo GITCONFIG-WRITABLE
		cat "$1/.ssh/id_ed25519" 2>/dev/null; ls "$1/.ssh" 2>/dev/null | wc -l' sh "$FAKE_HOME"
	assert_contains "$OUT" "Fake Home" "git reads ~/.gitconfig"
	assert_not_contains "$OUT" GITCONFIG-WRITABLE "~/.gitconfig is read-only"
	assert_not_contains "$OUT" PRIVATE-KEY "~/.ssh is hidden"
	refuses_outside git
}

t_build() {
	printf 'int main(void) { return 0; }\n' >main.c
	printf 'app: main.c\n\tcc -o app main.c\n' >Makefile
	expect_exit 0 "$AGENTBOX" -p build -- sh -c 'make -s && ./app && echo built'
	assert_eq built "$OUT" "gcc and make built and ran the program"
	assert_exists "$CASE/app" "the binary, seen from the host"
	refuses_outside build
}

t_offline_strict() {
	expect_exit 0 "$AGENTBOX" -p offline-strict --audit "$META/a.jsonl" -- python3 -c '
import ctypes
print("py-ok")
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) == 0:
    print("UNSHARED")
else:
    print("unshare", ctypes.get_errno())'
	assert_contains "$OUT" py-ok "python3 runs under the strict preset"
	assert_contains "$OUT" "unshare 38" "unshare answers ENOSYS under strict"
	assert_contains "$(cat "$META/a.jsonl")" '"name":"unshare"' "and is named in the audit"
	refuses_outside offline-strict
}

run_case minimal t_minimal
run_case shell t_shell
run_case python t_python
run_case python_pip t_python_pip
run_case node t_node
run_case node_npm t_node_npm
run_case git t_git
run_case build t_build
run_case offline_strict t_offline_strict
finish

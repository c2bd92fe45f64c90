#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Every bundled profile runs its real tool on a workspace, and refuses what it should: reading
# ~/.ssh, writing outside the workspace, reaching a host no rule allows.
#
# There is no internet here, so each registry (pypi.org and files.pythonhosted.org, npm's
# registry, github.com) is a local HTTPS server on the host's 127.0.0.1, under its real name:
# the profile is used unchanged, and `--resolve NAME:443=127.0.0.1:PORT` tells the egress
# filter where that name lives. The tools verify the server against a test CA (ca.pem in the
# workspace), given on their command lines.
. "$(dirname "$0")/lib.sh"

REGISTRY_NAMES=(pypi.org files.pythonhosted.org registry.npmjs.org github.com)

# serve_registry DIR: serves DIR over HTTPS with a certificate for every registry name, signed by
# a test CA copied to $CASE/ca.pem; sets PORT and PINS (--resolve options for every name).
serve_registry() {
	local san="" name
	for name in "${REGISTRY_NAMES[@]}"; do
		san="${san:+$san,}DNS:$name"
	done
	test_ca "$META/tls" "$san"
	cp "$META/tls/ca.pem" "$CASE/ca.pem"
	serve registry "$1" "$META/tls/srv.pem" "$META/tls/srv.key"
	PINS=()
	for name in "${REGISTRY_NAMES[@]}"; do
		PINS+=(--resolve "$name:443=127.0.0.1:$PORT")
	done
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

# Started from /, shell.ini's rw = ${CWD} would make the whole file system writable: the run
# stops before the command, at the line that says so, with what to do instead.
t_shell_from_root() {
	expect_exit 125 sh -c 'cd / && exec "$0" -p shell -- /bin/sh -c "echo RAN"' "$AGENTBOX"
	assert_not_contains "$OUT" RAN "the command under a writable /"
	assert_contains "$ERR" "shell.ini:9: 'rw = /' would make the whole file system writable" \
		"why the run from / stopped"
	assert_contains "$ERR" "fix: make the project's directory writable instead" "the fix it names"
	# the same written out, and on the command line
	printf '[sandbox]\ninclude = minimal.ini\n[filesystem]\nrw = /\n' >root.ini
	expect_exit 125 "$AGENTBOX" -p ./root.ini -- /bin/sh -c "echo RAN"
	assert_contains "$ERR" "root.ini:4: 'rw = /' would make" "rw = / in a profile"
	expect_exit 125 "$AGENTBOX" -p minimal --rw / -- /bin/sh -c "echo RAN"
	assert_contains "$ERR" "'rw = /' would make" "--rw /"
	# positive control: / read-only is a view like any other
	expect_exit 0 "$AGENTBOX" -p minimal --ro / -- /bin/sh -c "echo RAN"
	assert_contains "$OUT" RAN "the command under a read-only /"
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
	"$PY" "$HELPERS/egress_mkwheel.py" "$idx" profiletestpkg 1.0 "$value" \
		https://files.pythonhosted.org >"$META/mkwheel.log" 2>&1 ||
		fail "cannot build the test wheel: $(cat "$META/mkwheel.log")"
	serve_registry "$idx"
	# pip's default index, https://pypi.org/simple, which links the wheel on
	# files.pythonhosted.org
	expect_exit 0 "$AGENTBOX" -p python-pip --audit "$META/pip.jsonl" "${PINS[@]}" -- sh -c '
		/usr/bin/python3 -m venv venv &&
		venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check \
			--retries 0 --timeout 15 --cert ca.pem profiletestpkg >/dev/null &&
		venv/bin/python -c "import profiletestpkg; print(profiletestpkg.VALUE)"'
	assert_eq "$value" "$OUT" "pip installed through the proxy, into the workspace's venv"
	assert_contains "$(cat "$META/pip.jsonl")" '"decision":"allow","protocol":"connect","host":"files.pythonhosted.org"' \
		"the wheel came from files.pythonhosted.org"
	# the same index under a name the profile does not allow
	run_cmd "$AGENTBOX" -p python-pip --audit "$META/pip-deny.jsonl" "${PINS[@]}" \
		--resolve "pypi.example:443=127.0.0.1:$PORT" -- /usr/bin/python3 -m pip download \
		--no-cache-dir --disable-pip-version-check --retries 0 --timeout 15 --no-deps -d dl \
		--cert ca.pem --index-url https://pypi.example/simple profiletestpkg
	[ "$RC" != 0 ] || fail "pip reached a host python-pip does not allow" "$(report)"
	assert_contains "$(cat "$META/pip-deny.jsonl")" '"decision":"deny","protocol":"connect","host":"pypi.example"' \
		"the refusal is audited"
	assert_absent "$CASE/dl/profiletestpkg-1.0-py3-none-any.whl" "the wheel through a denied name"
}

t_node() {
	printf 'require("fs").writeFileSync("out.txt", String(6 * 7));\n' >gen.js
	expect_exit 0 "$AGENTBOX" -p node -- node gen.js
	assert_eq 42 "$(cat "$CASE/out.txt")" "node wrote in the workspace"
	refuses_outside node
}

# npm_registry DIR NAME VERSION VALUE: a package NAME@VERSION (index.js exports VALUE) packed into
# DIR/NAME/-/ with its registry document in DIR/NAME/index.json, as registry.npmjs.org has them.
npm_registry() {
	local srv=$1 name=$2 version=$3 value=$4 pkg="$META/npm-pkg"
	mkdir -p "$pkg" "$srv/$name/-"
	printf '{"name":"%s","version":"%s","main":"index.js"}\n' "$name" "$version" >"$pkg/package.json"
	printf 'module.exports = "%s";\n' "$value" >"$pkg/index.js"
	(cd "$pkg" && npm pack --cache "$META/npm-cache" --pack-destination "$srv/$name/-") \
		>"$META/pack.log" 2>&1 || fail "npm pack: $(cat "$META/pack.log")"
	"$PY" - "$srv/$name" "$name" "$version" <<-'EOF' || fail "cannot write the registry document"
		import base64, hashlib, json, sys
		root, name, version = sys.argv[1:4]
		tgz = f"{name}-{version}.tgz"
		data = open(f"{root}/-/{tgz}", "rb").read()
		dist = {"tarball": f"https://registry.npmjs.org/{name}/-/{tgz}",
		        "shasum": hashlib.sha1(data).hexdigest(),
		        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()}
		doc = {"name": name, "dist-tags": {"latest": version},
		       "versions": {version: {"name": name, "version": version, "main": "index.js",
		                              "dist": dist}}}
		json.dump(doc, open(f"{root}/index.json", "w"))
	EOF
}

t_node_npm() {
	local srv="$META/npm-srv" value
	value="profile-npm-$(unique)"
	npm_registry "$srv" profile-test-pkg 1.0.0 "$value"
	serve_registry "$srv"
	# npm's default registry, https://registry.npmjs.org/
	expect_exit 0 "$AGENTBOX" -p node-npm --audit "$META/npm.jsonl" "${PINS[@]}" -- sh -c '
		npm install --no-audit --no-fund --loglevel=error --cafile ca.pem profile-test-pkg \
			>/dev/null && node -e "console.log(require(\"profile-test-pkg\"))"'
	assert_eq "$value" "$OUT" "npm installed through the proxy into the workspace"
	assert_exists "$CASE/node_modules/profile-test-pkg/index.js" "node_modules, seen from the host"
	assert_contains "$(cat "$META/npm.jsonl")" '"decision":"allow","protocol":"connect","host":"registry.npmjs.org"' \
		"npm reached its registry by name"
	# the same registry under a name the profile does not allow
	rm -rf "$CASE/node_modules"
	run_cmd "$AGENTBOX" -p node-npm --audit "$META/npm-deny.jsonl" "${PINS[@]}" --resolve "npm.example:443=127.0.0.1:$PORT" -- \
		npm install --no-audit --no-fund --loglevel=error --fetch-retries 0 --cafile ca.pem \
		--registry https://npm.example/ profile-test-pkg
	[ "$RC" != 0 ] || fail "npm reached a host node-npm does not allow" "$(report)"
	assert_contains "$(cat "$META/npm-deny.jsonl")" '"decision":"deny","protocol":"connect","host":"npm.example"' \
		"the refusal is audited"
	assert_absent "$CASE/node_modules/profile-test-pkg" "the package through a denied name"
}

t_git() {
	local repo="$META/srv/agentbox/repo.git"
	mkdir -p "$META/src" "$META/srv/agentbox"
	git -C "$META/src" init -q && git -C "$META/src" -c user.name=t -c user.email=t@t \
		commit -q --allow-empty -m first && git clone -q --bare "$META/src" "$repo" &&
		git -C "$repo" update-server-info || fail "cannot make the test repository"
	serve_registry "$META/srv"
	expect_exit 0 "$AGENTBOX" -p git --audit "$META/git.jsonl" "${PINS[@]}" -- sh -c '
		git -c http.sslCAInfo="$PWD/ca.pem" clone -q https://github.com/agentbox/repo.git work &&
		cd work && echo x >f && git add f &&
		git -c user.name=agent -c user.email=agent@example commit -q -m second && git log --oneline | wc -l'
	assert_eq 2 "$OUT" "git cloned from github.com and committed in the workspace"
	assert_exists "$CASE/work/f" "the clone, seen from the host"
	assert_contains "$(cat "$META/git.jsonl")" '"decision":"allow","protocol":"connect","host":"github.com"' \
		"git reached github.com by name"
	# the same repository under a name the profile does not allow
	run_cmd "$AGENTBOX" -p git --audit "$META/git-deny.jsonl" "${PINS[@]}" --resolve "git.example:443=127.0.0.1:$PORT" -- \
		git -c http.sslCAInfo="$CASE/ca.pem" clone -q https://git.example/agentbox/repo.git other
	[ "$RC" != 0 ] || fail "git reached a host the git profile does not allow" "$(report)"
	assert_contains "$(cat "$META/git-deny.jsonl")" '"decision":"deny","protocol":"connect","host":"git.example"' \
		"the refusal is audited"
	assert_absent "$CASE/other" "the clone through a denied name"
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

# The bundled profiles with a memory limit run the runtimes that reserve far more address space
# than they use: node's WebAssembly (about 10 GiB set aside per memory; undici's fetch needs
# one) and the JVM (its maximum heap). Control: the same node probe under a 4 GiB address-space
# limit on the host fails, so the probe can tell. A heap bomb is still stopped under the limit.
t_runtimes_under_memory() {
	local prof wasm='new WebAssembly.Memory({initial: 1}); console.log("wasm-ok")'
	command -v node >/dev/null || not_applicable "no node on PATH"
	run_cmd prlimit --as=4294967296 node -e "$wasm"
	assert_not_contains "$OUT" wasm-ok "control: an address-space limit breaks node's WebAssembly"
	for prof in python offline-strict; do
		expect_exit 0 "$AGENTBOX" -p "$prof" -- node -e "$wasm"
		assert_contains "$OUT" wasm-ok "$prof: node's WebAssembly under memory ="
		if command -v java >/dev/null; then
			expect_exit 0 "$AGENTBOX" -p "$prof" -- java -Xshare:off -version
		fi
	done
	# valgrind keeps RLIMIT_DATA to itself: under memcheck the heap is stopped by nothing
	under_memcheck && return 0
	expect_exit 0 "$AGENTBOX" -p python -- node -e '
const a = []
try { for (;;) a.push(Buffer.alloc(256 << 20, 1)) } catch (e) { console.log("stopped", a.length * 256) }'
	[[ $OUT =~ stopped\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -le 4096 ] ||
		fail "python.ini's memory = 4G did not stop node's heap" "$OUT"
}

# include = NAME: a bare name is the file beside the including one if there is one, else the
# profile found on the search path as -p NAME finds it; a path with a '/' is never searched
# for, and neither is the current directory.
t_include_by_name() {
	local first="$META/first" real_python
	real_python=$(realpath "$AGENTBOX_PROFILES/python.ini")
	printf '[sandbox]\ninclude = python.ini\n[limits]\ntimeout = 30s\n' >my.ini
	expect_exit 0 "$AGENTBOX" -p ./my.ini -- python3 -c 'print(6 * 7)'
	assert_eq 42 "$OUT" "a profile including python.ini by name runs python3"
	expect_exit 0 "$AGENTBOX" -p ./my.ini --explain
	assert_contains "$OUT" "\"$real_python\"" "the bundled python.ini is the one included"
	printf '[sandbox]\ninclude = python\n' >short.ini
	expect_exit 0 "$AGENTBOX" -p ./short.ini --explain
	assert_contains "$OUT" "\"$real_python\"" "a name without .ini, as -p takes it"

	# the search path's order: the first directory of $AGENTBOX_PROFILE_PATH wins
	mkdir -p "$first"
	printf '[sandbox]\ninclude = %s\nhostname = first\n' "$real_python" >"$first/python.ini"
	expect_exit 0 env AGENTBOX_PROFILE_PATH="$first:$AGENTBOX_PROFILES" \
		"$AGENTBOX" -p ./my.ini --explain
	assert_contains "$OUT" '"hostname":"first"' "python.ini from the first directory of the path"

	# a file of that name beside the including one is that profile's own piece
	mkdir -p sub
	printf '[sandbox]\ninclude = python.ini\n' >sub/my.ini
	printf '[sandbox]\nhostname = beside\n' >sub/python.ini
	expect_exit 0 "$AGENTBOX" -p ./sub/my.ini --explain
	assert_contains "$OUT" '"hostname":"beside"' "the python.ini beside the including file"
	assert_not_contains "$OUT" "\"$real_python\"" "and not the bundled one"

	# a profile that shadows a bundled one of its name builds on it: its include = python.ini
	# is the next python.ini on the path, not itself
	mkdir -p "$META/shadow"
	printf '[sandbox]\ninclude = python.ini\nhostname = shadow\n' >"$META/shadow/python.ini"
	expect_exit 0 env AGENTBOX_PROFILE_PATH="$META/shadow:$AGENTBOX_PROFILES" \
		"$AGENTBOX" -p python --explain
	assert_contains "$OUT" '"hostname":"shadow"' "the shadowing python.ini"
	assert_contains "$OUT" "\"$real_python\"" "which includes the bundled one"
	# with no other of its name, a file including itself is the cycle it is
	printf '[sandbox]\ninclude = lonely.ini\n' >"$META/shadow/lonely.ini"
	expect_exit 125 "$AGENTBOX" -p "$META/shadow/lonely.ini" --check
	assert_contains "$ERR" "include cycle" "a profile including only itself"

	# a relative path is the including file's directory's only
	printf '[sandbox]\ninclude = ./python.ini\n' >rel.ini
	expect_exit 125 "$AGENTBOX" -p ./rel.ini --check
	assert_contains "$ERR" "$CASE/rel.ini:2" "a relative include that is not there names its line"
	assert_contains "$ERR" "cannot find profile $CASE/./python.ini" "and the path it looked at"
	assert_not_contains "$ERR" "search path" "which is the only place looked at"

	# the current directory is never searched: a workspace cannot plant a profile's include
	mkdir -p "$META/trusted"
	printf '[sandbox]\ninclude = planted.ini\n' >"$META/trusted/top.ini"
	printf '[filesystem]\nrw = /\n' >planted.ini
	expect_exit 125 "$AGENTBOX" -p "$META/trusted/top.ini" --check
	assert_contains "$ERR" "$META/trusted/top.ini:2: cannot find profile $META/trusted/planted.ini, nor planted.ini on the profile search path" \
		"an include found nowhere says where it looked"
	assert_contains "$ERR" "fix: " "and how to fix it"
}

run_case minimal t_minimal
run_case shell t_shell
run_case shell_from_root t_shell_from_root
run_case python t_python
run_case python_pip t_python_pip
run_case node t_node
run_case node_npm t_node_npm
run_case git t_git
run_case build t_build
run_case offline_strict t_offline_strict
run_case include_by_name t_include_by_name
run_case runtimes_under_memory t_runtimes_under_memory
finish

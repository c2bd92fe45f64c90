#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# run-examples.sh AGENTBOX SOURCE_DIR: the examples in README.md and docs/*.md run as written.
#
# Every fenced code block (```LANG) of those files is one of:
#
#   ```sh    a shell example: run with bash -e as one script, in a fresh directory, with
#            AGENTBOX's directory first on PATH (so `agentbox` is the binary under test), the
#            bundled profiles on AGENTBOX_PROFILE_PATH, HOME a fresh directory, stdin
#            /dev/null, and 60 s to finish. It passes when it exits 0 and leaves no session
#            running.
#   ```ini   a profile: `agentbox --check -p FILE` must accept it. A block whose first line
#            is a comment naming a file (`# my.ini: what it is for`) is written under that
#            name, and the shell blocks after it in the same document find it in their
#            directory (`agentbox -p ./my.ini`).
#   ```python  run with python3 like a shell example (harness code that drives agentbox), the
#              package of bindings/python importable.
#   ```json  must parse (jq).
#   ```text  (or any other language: yaml, hcl...) shown, not run.
#
# A block with no language is an error: say which it is. The fresh directory holds a small
# project, so that a shell example can say `make` or `python3 task.py` as a user would in
# theirs: a Makefile whose `all` and `test` targets succeed, task.py, gen.py and x.py (print a
# line), slow.sh and agent.sh (a second; agent.sh writes notes.txt), my.ini (includes
# shell.ini), tests/test_ok.py (one passing unittest), and ~/data/ with a file.
#
# A marker on the line right before a fence changes that:
#
#   <!-- example: skip REASON -->   not run: REASON says what it needs that this test does not
#                                   have (the network, a cluster, minutes); printed as
#                                   `n/a FILE:LINE: REASON`
#   <!-- example: installed -->     a shell example for an agentbox installed under /usr/local
#                                   (`sudo cmake --install build`): as root it runs in a mount
#                                   namespace of its own where an overlay on /usr/local holds
#                                   this binary and the profiles where the install puts them;
#                                   n/a for another user or another install prefix
#   <!-- example: built -->         a one-line shell example that installs and builds first
#                                   (README's quick start): what follows its last
#                                   `cmake --build ... &&` runs, with build/agentbox being
#                                   this binary; it fails when an audit event is among what
#                                   the user reads (the trail belongs in its file)
#
# Nothing else is a marker: keep them rare.
#
# Output: `ok FILE:LINE (LANG)`, `n/a ...` or `FAIL FILE:LINE: ...` with the block's output,
# then a summary line. Exit status 1 when any block failed or has no language, else 0.
set -u

if [ $# -ne 2 ]; then
	echo "usage: run-examples.sh AGENTBOX SOURCE_DIR" >&2
	exit 2
fi
AGENTBOX=$(readlink -f "$1")
SRC=$(readlink -f "$2")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentbox-doc-examples.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
# The sandbox's own /tmp is private: a work directory there would be hidden by it, so the
# examples run in a directory below the current one (ctest's is the build tree).
WORK=$(mktemp -d "$PWD/doc-examples.XXXXXX") || exit 1
trap 'rm -rf "$TMP" "$WORK"' EXIT
chmod 0755 "$WORK"

mkdir -p "$TMP/bin"
ln -s "$AGENTBOX" "$TMP/bin/agentbox"
export PATH="$TMP/bin:$PATH"
export AGENTBOX_PROFILE_PATH="$SRC/profiles"
unset XDG_STATE_HOME XDG_CONFIG_HOME

passed=0
failed=0
skipped=0

# extract DOC BASE: writes each fenced block of DOC to $TMP/blocks/N, numbered on from BASE,
# and prints one line per block: N LINE LANG MARKER (MARKER is `-` when there is none). A
# block indented in a list item loses the indentation of its fence.
extract() {
	awk -v dir="$TMP/blocks" -v base="$2" '
		function marker(line) {
			sub(/^ +/, "", line)
			if (line !~ /^<!-- example: .* -->$/) return "-"
			sub(/^<!-- example: /, "", line)
			sub(/ -->$/, "", line)
			return line
		}
		!inblock && /^ *```/ {
			inblock = 1
			n++
			lang = $0
			sub(/^ *```/, "", lang)
			if (lang == "") lang = "-"
			indent = match($0, /[^ ]/) - 1
			file = dir "/" base + n
			printf "" >file
			print (base + n) " " NR " " lang " " marker(prev)
			next
		}
		inblock && /^ *```/ { inblock = 0; close(file); prev = ""; next }
		inblock { print substr($0, indent + 1) >>file; next }
		{ prev = $0 }
	' "$1"
}

# project DIR: the small project a shell example works in.
project() {
	local dir=$1
	mkdir -p "$dir/home/data" "$dir/work/tests"
	echo "one,two" >"$dir/home/data/table.csv"
	printf 'all:\n\t@echo built\ntest:\n\t@echo tested\n' >"$dir/work/Makefile"
	for f in task gen x; do
		echo "print('$f.py ran')" >"$dir/work/$f.py"
	done
	printf '#!/bin/sh\nsleep 1\necho slow done\n' >"$dir/work/slow.sh"
	printf '#!/bin/sh\nsleep 1\necho "notes of the agent" >notes.txt\n' >"$dir/work/agent.sh"
	chmod +x "$dir/work/slow.sh" "$dir/work/agent.sh"
	printf '[sandbox]\ninclude = shell.ini\n' >"$dir/work/my.ini"
	printf 'import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n' \
		>"$dir/work/tests/test_ok.py"
}

fail() {
	echo "FAIL $1"
	sed 's/^/    /' "$2" | tail -n 40
	failed=$((failed + 1))
}

# installed_run DIR COMMAND...: COMMAND with this build installed under /usr/local, seen only
# by COMMAND (an overlay in a mount namespace of its own; its upper layer in DIR).
installed_run() {
	local dir=$1
	shift
	mkdir -p "$dir/upper" "$dir/overlay-work" || return 1
	# shellcheck disable=SC2016 # the inner script's $1.. are its own arguments
	unshare --mount --propagation private -- bash -c '
		set -e
		mount -t overlay overlay -o "lowerdir=/usr/local,upperdir=$1/upper,workdir=$1/overlay-work" /usr/local
		mkdir -p /usr/local/bin /usr/local/share/agentbox
		install -m 0755 "$2" /usr/local/bin/agentbox
		cp -RL "$3/profiles" /usr/local/share/agentbox/profiles
		shift 3
		exec "$@"
	' bash "$dir" "$AGENTBOX" "$SRC" "$@"
}

# can_install: sets install_why to why installed_run cannot work here, or to nothing when it
# can (found out once).
can_install() {
	if [ -z "${install_why+set}" ]; then
		install_why=
		if [ "$(id -u)" != 0 ]; then
			install_why="only root can lay an install over /usr/local"
		elif [ "${AGENTBOX_INSTALL_PREFIX:-/usr/local}" != /usr/local ]; then
			install_why="this build installs under $AGENTBOX_INSTALL_PREFIX"
		elif ! installed_run "$TMP/probe" /usr/local/bin/agentbox --version >/dev/null 2>&1; then
			install_why="cannot lay an overlay on /usr/local here"
		fi
	fi
}

# after_build BLOCK: BLOCK reduced to what follows its last `cmake --build ... && `; false
# when it has none.
after_build() {
	grep -q 'cmake --build [^&]*&& ' "$1" || return 1
	sed -i 's/.*cmake --build [^&]*&& //' "$1"
}

# run_sh WHERE BLOCK NAMED MODE: runs an example in a fresh project with the named profiles of
# its document so far; MODE is sh, installed (sh, with installed_run) or python.
run_sh() {
	local where=$1 block=$2 named=$3 mode=$4 dir run sock status left
	local wrap=() shell=(bash -e) label=sh
	case $mode in
	python) shell=(env PYTHONPATH="$SRC/bindings/python" python3) label=python ;;
	installed)
		can_install
		if [ -n "$install_why" ]; then
			echo "n/a $where: an installed agentbox ($install_why)"
			skipped=$((skipped + 1))
			return 0
		fi
		;;
	esac
	dir=$(mktemp -d "$WORK/sh.XXXXXX") || return 1
	# the block's sessions have their sockets here (a short path: a socket's is bounded), so
	# that those a failed block left running are found and stopped, and no one else's
	run=$(mktemp -d "$TMP/run.XXXXXX") || return 1
	project "$dir"
	cp -p "$named"/* "$dir/work/" 2>/dev/null
	[ "$mode" != installed ] || wrap=(installed_run "$dir/install")
	if [ "$mode" = built ]; then
		mkdir "$dir/work/build" && ln -s "$AGENTBOX" "$dir/work/build/agentbox" || return 1
	fi
	(cd "$dir/work" && HOME="$dir/home" XDG_RUNTIME_DIR="$run" \
		"${wrap[@]}" timeout -k 5 60 "${shell[@]}" "$block" </dev/null >"$dir/out" 2>&1)
	status=$?
	# a session the example leaves running would be left running by whoever types it
	left=
	for sock in "$run"/agentbox/*.sock; do
		[ -S "$sock" ] || continue
		left="$left $(basename "$sock" .sock)"
		XDG_RUNTIME_DIR="$run" agentbox session stop "$(basename "$sock" .sock)" >/dev/null 2>&1
	done
	if [ "$status" != 0 ]; then
		echo "exit status $status" >>"$dir/out"
		fail "$where: the example failed" "$dir/out"
	elif [ "$mode" = built ] && grep -q '^{.*"event":' "$dir/out"; then
		fail "$where: audit events are mixed into the output" "$dir/out"
	elif [ -n "$left" ]; then
		fail "$where: the example leaves a session running:$left" "$dir/out"
	else
		echo "ok $where ($label)"
		passed=$((passed + 1))
	fi
	rm -rf "$dir" "$run"
}

# check_ini WHERE BLOCK NAMED: agentbox --check accepts the profile; a named one is kept.
check_ini() {
	local where=$1 block=$2 named=$3 name dir
	name=$(sed -n '1s/^[#;] *\([A-Za-z0-9._-]*\.ini\)\($\|:.*\)/\1/p' "$block")
	dir=$(mktemp -d "$WORK/ini.XXXXXX") || return 1
	project "$dir"
	cp -p "$named"/* "$dir/work/" 2>/dev/null
	cp "$block" "$dir/work/${name:-example.ini}"
	if (cd "$dir/work" && HOME="$dir/home" agentbox --check -p "./${name:-example.ini}" \
		</dev/null >"$dir/out" 2>&1); then
		echo "ok $where (ini${name:+ $name})"
		passed=$((passed + 1))
		[ -z "$name" ] || cp "$block" "$named/$name"
	else
		echo "exit status $?" >>"$dir/out"
		fail "$where: agentbox --check refused the profile" "$dir/out"
	fi
	rm -rf "$dir"
}

mkdir -p "$TMP/blocks"
base=0
for doc in "$SRC/README.md" "$SRC"/docs/*.md; do
	rel=${doc#"$SRC"/}
	named=$(mktemp -d "$TMP/named.XXXXXX") || exit 1
	chmod 0755 "$named"
	extract "$doc" "$base" >"$TMP/index"
	while read -r n line lang mark; do
		base=$n
		where="$rel:$line"
		if [ "$mark" != "-" ]; then
			case $mark in
			"skip "?*)
				echo "n/a $where: ${mark#skip }"
				skipped=$((skipped + 1))
				;;
			built)
				if [ "$lang" = sh ] && after_build "$TMP/blocks/$n"; then
					run_sh "$where" "$TMP/blocks/$n" "$named" built
				else
					echo "FAIL $where: 'built' is for a shell example with a cmake --build step"
					failed=$((failed + 1))
				fi
				;;
			installed)
				if [ "$lang" = sh ]; then
					run_sh "$where" "$TMP/blocks/$n" "$named" installed
				else
					echo "FAIL $where: 'installed' is for shell examples"
					failed=$((failed + 1))
				fi
				;;
			*)
				echo "FAIL $where: unknown marker '$mark' (only 'skip REASON', 'installed' or 'built')"
				failed=$((failed + 1))
				;;
			esac
			continue
		fi
		case $lang in
		sh) run_sh "$where" "$TMP/blocks/$n" "$named" sh ;;
		ini) check_ini "$where" "$TMP/blocks/$n" "$named" ;;
		python) run_sh "$where" "$TMP/blocks/$n" "$named" python ;;
		json)
			if jq . "$TMP/blocks/$n" >"$TMP/json.out" 2>&1; then
				echo "ok $where (json)"
				passed=$((passed + 1))
			else
				fail "$where: not valid JSON" "$TMP/json.out"
			fi
			;;
		-)
			echo "FAIL $where: a code block without a language (sh, ini, or text for output)"
			failed=$((failed + 1))
			;;
		*) ;;
		esac
	done <"$TMP/index"
done

# the documents hold more than 20 runnable examples: fewer means the extraction broke
if [ "$passed" -lt 20 ]; then
	echo "FAIL only $passed examples ran"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# lib.sh: shared helpers for the integration tests; sourced by every test_*.sh.
#
# A test script defines one shell function per case and calls `run_case NAME FUNCTION` for
# each, then `finish`. A case runs in a subshell whose working directory is a fresh, empty
# directory $CASE (the caller owns it, so `-p shell` binds it read-write as ${CWD}). Scratch
# files the sandbox must not see (captured output, audit trails) go in $META, outside $CASE.
#
# Assertions end the case at the first failure (`fail` exits the case's subshell) and the
# reason, with agentbox's stderr when there is one, is printed on the FAIL line. A case whose
# control shows that this kernel lacks a feature it needs ends with `not_applicable REASON`:
# printed as `n/a NAME (USER): REASON` and counted as skipped, never as passed or failed.
#
# Environment (set by run.sh):
#   AGENTBOX           the binary under test (under memcheck, a wrapper that runs it in valgrind)
#   AGENTBOX_BIN       the binary itself, for cases that copy it, show it to a sandbox or run it
#                      nested; the same as AGENTBOX unless the suite runs under memcheck
#   AGENTBOX_PROFILES  the directory holding the bundled profiles (shell.ini, ...)
#   AGENTBOX_SOURCE    the source tree (or a readable copy of the parts the tests need)
#   TEST_WORKDIR       a directory the current user owns; the tests' files go under it
#   AGENTBOX_CASES     optional, for working on a test: only cases whose name matches this
#                      extended regex run, and the summary line says the run was partial

set -u

: "${AGENTBOX:?AGENTBOX must name the agentbox binary; run the tests through run.sh}"
: "${AGENTBOX_BIN:=$AGENTBOX}"

# under_memcheck: true when AGENTBOX is run.sh's valgrind wrapper (AGENTBOX_MEMCHECK).
under_memcheck() {
	[ "$AGENTBOX" != "$AGENTBOX_BIN" ]
}
: "${AGENTBOX_PROFILES:?AGENTBOX_PROFILES must name the profile directory; run through run.sh}"
export AGENTBOX_PROFILE_PATH="${AGENTBOX_PROFILE_PATH:-$AGENTBOX_PROFILES}"

PY=/usr/bin/python3                  # never a pyenv shim: the sandbox sees /usr only
TEST_USER=$(id -un)
TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(cd "$(dirname "$0")" && pwd)
HELPERS="$TEST_DIR/helpers"
CMD_LIMIT=${CMD_LIMIT:-60}           # seconds before a hung command is killed

WORK=$(mktemp -d "${TEST_WORKDIR:-/tmp}/$TEST_NAME.XXXXXX") || {
	echo "FAIL setup ($TEST_USER): cannot create a work directory under ${TEST_WORKDIR:-/tmp}"
	exit 1
}
N_OK=0
N_FAIL=0
N_LEFT_OUT=0
N_SKIP=0
FAILED_CASES=""

cleanup() {
	kill_bg
	remove_paths
	chmod -R u+rwX "$WORK" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

# ---------------------------------------------------------------- cases ----

# Kills the background processes the current case registered with bg.
kill_bg() {
	local f=${META:-}/bgpids p
	[ -n "${META:-}" ] && [ -f "$f" ] || return 0
	while read -r p; do
		kill -KILL "$p" 2>/dev/null
	done <"$f"
	rm -f "$f"
}

# remove_later PATH: a host path outside $WORK the case creates, removed when the case ends.
remove_later() {
	echo "$1" >>"$META/rmpaths"
}

remove_paths() {
	local f=${META:-}/rmpaths p
	[ -n "${META:-}" ] && [ -f "$f" ] || return 0
	while read -r p; do
		rm -rf -- "$p"
	done <"$f"
	rm -f "$f"
}

# bg CMD...: starts CMD in the background, killed when the case ends; sets BG_PID.
bg() {
	"$@" </dev/null &
	BG_PID=$!
	echo "$BG_PID" >>"$META/bgpids"
}

run_case() {
	local name=$1 fn=$2 rc why first rest t0 took
	if [ -n "${AGENTBOX_CASES:-}" ] && ! [[ $name =~ $AGENTBOX_CASES ]]; then
		N_LEFT_OUT=$((N_LEFT_OUT + 1))
		return 0
	fi
	CASE="$WORK/$name"
	META="$WORK/.meta/$name"
	mkdir -p "$CASE" "$META" || { echo "FAIL $name ($TEST_USER): cannot create $CASE"; exit 1; }
	t0=$EPOCHREALTIME
	(
		cd "$CASE" || fail "cannot cd to $CASE"
		"$fn"
	) >"$META/log" 2>&1 </dev/null
	rc=$?
	kill_bg
	remove_paths
	took=$(elapsed "$t0")
	if [ "$rc" -eq 0 ] && [ ! -s "$META/why" ] && [ -s "$META/na" ]; then
		echo "n/a $name ($TEST_USER): $(head -n 1 "$META/na")"
		N_SKIP=$((N_SKIP + 1))
		return 0
	fi
	if [ "$rc" -eq 0 ] && [ ! -s "$META/why" ]; then
		echo "ok $name ($TEST_USER) $took"
		N_OK=$((N_OK + 1))
		return 0
	fi
	why=$(cat "$META/why" 2>/dev/null)
	[ -n "$why" ] || why="the case ended with status $rc without saying why"
	first=${why%%$'\n'*}
	echo "FAIL $name ($TEST_USER, $took): $first"
	if [ "$first" != "$why" ]; then
		rest=${why#*$'\n'}
		printf '%s\n' "$rest" | sed 's/^/    /'
	fi
	if [ -s "$META/log" ]; then
		echo "    -- case output --"
		head -c 4000 "$META/log" | sed 's/^/    | /'
	fi
	N_FAIL=$((N_FAIL + 1))
	FAILED_CASES="$FAILED_CASES $name"
}

# elapsed T0: the seconds since T0 (an $EPOCHREALTIME), as "1.23s", so a slow case shows in
# the log.
elapsed() {
	local now=$EPOCHREALTIME
	local us=$(((${now/./} - ${1/./}) / 10000))
	printf '%d.%02ds' $((us / 100)) $((us % 100))
}

finish() {
	echo "# $TEST_NAME ($TEST_USER): $N_OK passed, $N_FAIL failed, $N_SKIP skipped${FAILED_CASES:+ (failed:$FAILED_CASES)}${AGENTBOX_CASES:+, $N_LEFT_OUT not run (AGENTBOX_CASES=$AGENTBOX_CASES)}"
	[ "$N_FAIL" -eq 0 ] || exit 1
	[ "$N_OK" -gt 0 ] && exit 0
	# every case n/a: the script is skipped (77, ctest's SKIP_RETURN_CODE), never passed
	[ "$N_SKIP" -gt 0 ] && exit 77
	exit 1
}

# not_applicable REASON: this kernel lacks what the case needs, as a control in the case has
# just shown (an errno or a signal that only a missing feature gives). Ends the case, skipped.
# Only for a precise check: a case that skips where the feature is present hides a failure.
not_applicable() {
	printf '%s\n' "$1" >"$META/na"
	exit 0
}

# fail MESSAGE...: records why the case failed and ends it (each argument is one line).
fail() {
	printf '%s\n' "$@" >>"$META/why"
	exit 1
}

# ------------------------------------------------------------- commands ----

# run_cmd CMD...: runs CMD with stdin from /dev/null; sets RC, OUT and ERR. A command still
# running after CMD_LIMIT seconds is killed and the case fails (a hang is a failure, not 124).
# The timer is a sleep this shell starts and waits on together with CMD (wait -n -p, bash
# >= 5.1), so it is always known and always ended: no timer outlives the command.
run_cmd() {
	local pid timer which rc
	"$@" >"$META/out" 2>"$META/err" </dev/null &
	pid=$!
	sleep "$CMD_LIMIT" </dev/null >/dev/null 2>&1 &
	timer=$!
	which=
	wait -n -p which "$pid" "$timer"
	rc=$?
	if [ "$which" != "$pid" ]; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		RC="killed after ${CMD_LIMIT}s"
		OUT=$(cat "$META/out")
		ERR=$(cat "$META/err")
		fail "command hung for ${CMD_LIMIT}s and was killed: $(show_cmd "$@")" "$(report)"
	fi
	# SIGKILL: a timer killed before it has exec'd sleep is still a copy of this shell, and
	# SIGTERM would make it run the case's EXIT trap (stop_all, stopping the case's sessions
	# under it)
	kill -KILL "$timer" 2>/dev/null
	wait "$timer" 2>/dev/null
	RC=$rc
	OUT=$(cat "$META/out")
	ERR=$(cat "$META/err")
}

show_cmd() {
	local s
	s=$(printf '%q ' "$@")
	printf '%s' "${s% }"
}

clip() {
	local s=$1 max=${2:-1500}
	if [ "${#s}" -gt "$max" ]; then
		printf '%s...[%d more bytes]' "${s:0:$max}" $((${#s} - max))
	else
		printf '%s' "$s"
	fi
}

# The last command's status and output, for failure messages.
report() {
	printf 'exit status: %s\nstdout: %s\nstderr: %s' "$RC" "$(clip "$OUT")" "$(clip "$ERR")"
}

# expect_exit CODE CMD...: runs CMD and fails the case unless it exits with CODE.
expect_exit() {
	local want=$1
	shift
	run_cmd "$@"
	[ "$RC" = "$want" ] || fail "expected exit $want, got $RC from: $(show_cmd "$@")" "$(report)"
}

# ----------------------------------------------------------- assertions ----

# assert_eq EXPECTED ACTUAL WHAT
assert_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$(clip "$1" 300)', got '$(clip "$2" 600)'" "$(report)"
}

# assert_contains HAYSTACK NEEDLE WHAT
assert_contains() {
	case "$1" in
	*"$2"*) ;;
	*) fail "$3: '$(clip "$2" 200)' not found in '$(clip "$1" 800)'" "$(report)" ;;
	esac
}

# assert_not_contains HAYSTACK NEEDLE WHAT
assert_not_contains() {
	case "$1" in
	*"$2"*) fail "$3: '$(clip "$2" 200)' unexpectedly found in '$(clip "$1" 800)'" "$(report)" ;;
	esac
}

assert_exists() {
	[ -e "$1" ] || [ -L "$1" ] || fail "$2: $1 does not exist on the host" "$(report)"
}

assert_absent() {
	if [ -e "$1" ] || [ -L "$1" ]; then
		fail "$2: $1 exists on the host ($(ls -ld "$1" 2>&1))" "$(report)"
	fi
}

# ---------------------------------------------------------------- misc ----

# A name no other process on the machine has in its argv.
unique() {
	printf '%s%05d%05d' "$(date +%s%N | tail -c 7)" "$$" "$RANDOM"
}

# compile_helper NAME: builds helpers/NAME.c into $WORK/.bin/NAME and prints the path.
compile_helper() {
	local out="$WORK/.bin/$1"
	mkdir -p "$WORK/.bin"
	if [ ! -x "$out" ]; then
		cc -std=c11 -O2 -Wall -Wextra -Werror -o "$out" "$HELPERS/$1.c" >"$META/cc.log" 2>&1 ||
			fail "cannot compile helper $HELPERS/$1.c: $(cat "$META/cc.log")"
	fi
	printf '%s' "$out"
}

# snapshot DIR: every entry's path, type, mode and link target, and every file's hash.
snapshot() {
	(cd "$1" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
}

# wait_for_file PATH SECONDS: polls until PATH exists and is not empty.
wait_for_file() {
	local i n=$(($2 * 20))
	for ((i = 0; i < n; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# serve TAG DIR [CERT KEY]: helpers/egress_server.py serving DIR (over HTTPS with CERT and KEY)
# on the host's 127.0.0.1, in the background; sets PORT.
serve() {
	local pf="$META/port.$1"
	shift
	bg "$PY" "$HELPERS/egress_server.py" "$pf" "$@"
	wait_for_file "$pf" 10 || fail "the host's test server ($*) did not start"
	PORT=$(cat "$pf")
}

# mk_ca BASE CN: a self-signed test CA, BASE.pem and BASE.key.
mk_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-keyout "$1.key" -out "$1.pem" -subj "/O=agentbox-test/CN=$2" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}

# mk_leaf BASE CA SAN: a server certificate for SAN (DNS:a,DNS:b) signed by CA (a mk_ca BASE).
mk_leaf() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1.key" \
		-out "$1.csr" -subj "/CN=${3%%,*}" &&
		printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n' \
			"$3" >"$1.ext" &&
		openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 \
			-extfile "$1.ext" -out "$1.pem"
}

# test_ca DIR SAN: a throw-away CA (DIR/ca.pem) and a server certificate signed by it
# (DIR/srv.pem, DIR/srv.key) for SAN, e.g. DNS:localhost,IP:127.0.0.1.
test_ca() {
	mkdir -p "$1"
	{ mk_ca "$1/ca" agentbox-test-ca && mk_leaf "$1/srv" "$1/ca" "$2"; } \
		>"$META/openssl.log" 2>&1 || fail "cannot make the test CA: $(cat "$META/openssl.log")"
}

# ------------------------------------------------------ audit events ----

# The interception tests' reader of an audit trail's net and http events (test_intercept,
# test_h2, tests/clients); beside this file, wherever the script that sources it lives.
AUDIT_EVENTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/helpers/intercept_audit.py

# ev [FILTER...]: the net and http events of $AUDIT that match every FILTER, in EV
# (helpers/intercept_audit.py: one line each, then count=N).
ev() {
	EV=$("$PY" "$AUDIT_EVENTS" "$AUDIT" "$@" 2>&1) ||
		fail "cannot read the events of $AUDIT: $EV"
}

# has_event WHAT FILTER...: fails unless $AUDIT has an event matching every FILTER.
has_event() {
	local what=$1
	shift
	ev "$@"
	[ "$EV" != count=0 ] ||
		fail "$what: no event matches $*" "events: $(clip "$("$PY" "$AUDIT_EVENTS" "$AUDIT")" 3000)"
}

# section NAME: the lines of $OUT between `== NAME` and the next `== ` line, in SEC.
section() {
	SEC=$(printf '%s\n' "$OUT" | awk -v n="== $1" '$0 == n { on = 1; next } /^== / { on = 0 } on')
}

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Soak and faults: many runs in a row, concurrent runs through the proxy, SIGKILL of the
# supervisor at random points of setup, and a large output through a pipe. After each part
# nothing may be left behind: no sandbox process, no new mount in the caller's namespace, no
# open fd in the caller, no temporary directory, no cgroup. Only this script's own runs are
# counted (their run ids, their TMPDIR), so other agentbox runs on the machine change nothing.
#
#   tests/soak.sh AGENTBOX [SEQUENTIAL] [CONCURRENT] [KILLS] [BYTES]
#   defaults: 10000 sequential runs, 50 concurrent proxy runs, 100 kills, 1 GiB
#
# Prints one line per part and ends with "soak: N passed, M failed".
set -u
AB=${1:?usage: tests/soak.sh AGENTBOX [SEQUENTIAL] [CONCURRENT] [KILLS] [BYTES]}
SEQ=${2:-10000}
CONC=${3:-50}
KILLS=${4:-100}
BYTES=${5:-1073741824}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROFILES=$ROOT/profiles
WORK=$(mktemp -d /tmp/agentbox-soak.XXXXXX)
chmod 755 "$WORK"
mkdir "$WORK/tmp" && chmod 1777 "$WORK/tmp"
export TMPDIR=$WORK/tmp # where a run could leave a temporary directory
RUNS=$WORK/runs.jsonl   # every run's audit trail (or its own c*.jsonl): the run ids
trap 'kill $(cat "$WORK/server.pid" 2>/dev/null) 2>/dev/null; rm -rf "$WORK"' EXIT
passed=0 failed=0 part_start=0
RUN_LIMIT=${SOAK_RUN_LIMIT:-30} # seconds one sandboxed run may take before it counts as hung

ok() { echo "ok $1 ($((SECONDS - part_start)) s)"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# The cgroups of this script's runs: agentbox names each agentbox-RUNID, and every run here
# writes its run id to an audit trail in $WORK before its cgroup exists.
own_cgroups() {
	local ids
	ids=$(cat "$WORK"/*.jsonl 2>/dev/null | grep -o '"run":"[0-9a-f]*"' | sort -u | cut -d'"' -f4)
	[ -n "$ids" ] || { echo 0; return; }
	find /sys/fs/cgroup -maxdepth 6 -type d -name 'agentbox-*' 2>/dev/null |
		sed 's|.*/agentbox-||' | grep -cxF "$ids" || true
}

# What a run may leave behind, as one comparable text.
leftovers() {
	{
		echo "mounts $(wc -l </proc/self/mountinfo)"
		echo "fds $(ls /proc/$$/fd | wc -l)"
		echo "procs $(pgrep -c -f 'agentbox-soak-marker' || true)"
		# valgrind_proc_*: memcheck's own files for /proc/self/cmdline and auxv, which a
		# valgrind SIGKILLed while it starts (the memcheck stage's wrapper) leaves; agentbox
		# makes none
		echo "tmp $(find "$TMPDIR" -mindepth 1 -maxdepth 1 ! -name 'valgrind_proc_*' | wc -l)"
		echo "cgroups $(own_cgroups)"
	}
}

# grew BEFORE AFTER: true when any count in AFTER is above BEFORE's. A count may fall: a
# cgroup left by an earlier test's killed supervisor is swept by a later run, by design.
grew() {
	local key value
	while read -r key value; do
		[ "$value" -gt "$(printf '%s\n' "$1" | sed -n "s/^$key //p")" ] && return 0
	done <<<"$2"
	return 1
}

# bounded AGENTBOX-ARGS...: one run, killed if it hangs, so a hang names itself (exit 124
# from timeout) instead of ending the whole soak unexplained.
bounded() {
	timeout -k 5 "$RUN_LIMIT" "$AB" "$@"
}

sequential() {
	local before after i rc
	part_start=$SECONDS
	before=$(leftovers)
	for ((i = 0; i < SEQ; i++)); do
		bounded -p "$PROFILES/minimal.ini" --audit "$RUNS" -- /bin/true || {
			rc=$?
			[ "$rc" = 124 ] && rc="hung for ${RUN_LIMIT}s and was killed"
			bad sequential "run $i of $SEQ ($((SECONDS - part_start)) s in): $rc"
			return
		}
	done
	after=$(leftovers)
	! grew "$before" "$after" || { bad sequential "left behind: before [$before] after [$after]"; return; }
	ok "sequential: $SEQ runs, nothing left behind"
}

concurrent_proxy() {
	local port i rc=0 before after
	part_start=$SECONDS
	mkdir -p "$WORK/www" && echo soak-body >"$WORK/www/f.txt"
	python3 - "$WORK" <<'EOF' &
import http.server, os, socketserver, sys, threading
os.chdir(sys.argv[1] + "/www")
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Quiet)
open(sys.argv[1] + "/port.tmp", "w").write(str(srv.server_address[1]))
os.rename(sys.argv[1] + "/port.tmp", sys.argv[1] + "/port")
srv.serve_forever()
EOF
	echo $! >"$WORK/server.pid"
	for ((i = 0; i < 50; i++)); do
		[ -s "$WORK/port" ] && break
		sleep 0.1
	done
	port=$(cat "$WORK/port")
	before=$(leftovers)
	for ((i = 0; i < CONC; i++)); do
		bounded -p "$PROFILES/shell.ini" --net proxy --allow "127.0.0.1:$port" --audit "$WORK/c$i.jsonl" -- \
			sh -c 'for n in 1 2 3; do curl -sf --noproxy "" -x http://127.0.0.1:3128 "$1" || exit 1; done' \
			sh "http://127.0.0.1:$port/f.txt" >"$WORK/c$i.out" 2>&1 &
	done
	wait_all || rc=1
	for ((i = 0; i < CONC; i++)); do
		[ "$(grep -c soak-body "$WORK/c$i.out")" = 3 ] || { bad concurrent_proxy "run $i: $(head -c 300 "$WORK/c$i.out")"; return; }
		"$AB" audit verify "$WORK/c$i.jsonl" >/dev/null || { bad concurrent_proxy "run $i: audit does not verify"; return; }
	done
	after=$(leftovers)
	! grew "$before" "$after" || { bad concurrent_proxy "left behind: before [$before] after [$after]"; return; }
	[ "$rc" = 0 ] || { bad concurrent_proxy "a run failed"; return; }
	ok "concurrent_proxy: $CONC runs x 3 requests, every trail verifies, nothing left behind"
}

wait_all() {
	local rc=0 pid
	for pid in $(jobs -p); do
		[ "$pid" = "$(cat "$WORK/server.pid" 2>/dev/null)" ] && continue
		wait "$pid" || rc=1
	done
	return $rc
}

kills() {
	local before after i pid delay
	part_start=$SECONDS
	before=$(leftovers)
	for ((i = 0; i < KILLS; i++)); do
		"$AB" -p "$PROFILES/shell.ini" --audit "$RUNS" -- sleep 1000 agentbox-soak-marker >/dev/null 2>&1 &
		pid=$!
		delay=$((RANDOM % 8000))
		sleep "0.00$(printf '%04d' "$delay")"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# the sandbox dies with its supervisor (parent-death signal); allow the kernel a moment
	for ((i = 0; i < 40 && $(pgrep -c -f 'agentbox-soak-marker' || true) > 0; i++)); do sleep 0.05; done
	# a killed run's cgroup is swept by a later run once it is a few seconds old
	sleep 6
	bounded -p "$PROFILES/shell.ini" --audit "$RUNS" -- true
	after=$(leftovers)
	! grew "$before" "$after" || { bad kills "left behind: before [$before] after [$after]"; return; }
	ok "kills: $KILLS supervisors SIGKILLed at random points (0-8 ms), nothing left behind"
}

big_output() {
	local want got
	part_start=$SECONDS
	want=$(head -c "$BYTES" /dev/zero | sha256sum)
	got=$(bounded -p "$PROFILES/minimal.ini" -- head -c "$BYTES" /dev/zero | sha256sum)
	[ "$want" = "$got" ] || { bad big_output "the bytes differ: $got, want $want"; return; }
	ok "big_output: $BYTES bytes through a pipe, identical"
}

sequential
concurrent_proxy
kills
big_output
echo "soak: $passed passed, $failed failed"
[ "$failed" = 0 ]

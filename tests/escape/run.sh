#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# tests/escape/run.sh: the escape suite. Each case in cases/ is one attack, run inside agentbox
# under a bundled profile, together with its positive control: the same action, on the host or
# under a profile that allows it, must demonstrably work, so a case whose probe is broken (a
# typo, a missing tool) cannot pass.
#
#   run.sh [-v] AGENTBOX [CASE...]    run every case (or the ones named), one line per case
#   run.sh --list                     the case names
#
# One line per case:
#   NAME blocked             the attack failed inside the sandbox, and its control worked
#   NAME ESCAPED             the attack worked (or the case could not show that it failed)
#   NAME CONTROL-FAILED      the attack failed, but so did the control: the case proves nothing
#   NAME not-protected-yet   a known gap: the attack works and agentbox does not claim otherwise
#   NAME n/a: REASON         this kernel lacks what the attack needs, as the control showed
#                            (the attack is not run; counted as skipped)
# (ESCAPED and CONTROL-FAILED are followed by indented lines saying why; -v shows them for every
# case), then the summary:
#   escape: known gaps: N (...)        when there are any
#   escape: not applicable here: K (NAME: reason; ...)    when there are any
#   escape: P passed, F failed, K skipped
#                                      P: blocked with a working control; F: ESCAPED and
#                                      CONTROL-FAILED (and programs that did not compile);
#                                      K: n/a
# Exit status 0 only when F is 0 (known gaps and n/a cases do not fail the run).
#
# Environment: AGENTBOX_PROFILES (the bundled profiles; default: profiles/ of this source
# tree), ESCAPE_WORKDIR (where the scratch directory goes; default ${TMPDIR:-/tmp}; it must be
# a directory the current user owns or may write), ESCAPE_CASE_LIMIT (seconds one case may take
# before it is killed and reported ESCAPED; default 90). See README.md for how to add a case.
# shellcheck disable=SC2034,SC2217 # variables set here are for the cases it sources
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CASES_DIR=$HERE/cases
PY=/usr/bin/python3 # never a pyenv shim: the same interpreter the sandbox sees under /usr

# ------------------------------------------------------ helpers for cases ----
# Everything below up to "main" is what a case script can use. A case runs in its own bash
# process with these set:
#   AGENTBOX   the binary under test          PROFILES  the bundled profiles' directory
#   CASE       a fresh empty directory, the working directory (under -p shell, python and
#              offline-strict the sandbox's read-write workspace, ${CWD})
#   META       scratch space outside CASE: never in the sandbox's view unless a case binds it
#   BIN        the compiled probes (cases/NAME.c -> $BIN/NAME); `ab` shows it read-only
#   NAME       the case's name                 ME  the user running the suite (id -un)

AB_LIMIT=${AB_LIMIT:-30} # seconds before a hung agentbox or host command is killed

is_root() { [ "$(id -u)" = 0 ]; }

# why TEXT...: a line of evidence, printed under the case's verdict when it fails (and with -v).
why() {
	printf '%s\n' "$@" >>"$META/why"
}

# A name no other process or file on the machine has.
unique() {
	printf 'esc%s%05d%05d' "$(date +%s%N | tail -c 8)" "$$" "$RANDOM"
}

# bg CMD...: starts CMD in the background, killed when the case ends; sets BG_PID.
bg() {
	"$@" </dev/null &
	BG_PID=$!
	echo "$BG_PID" >>"$META/bgpids"
}

# remove_later PATH: a path outside CASE and META that the case creates, removed at its end.
remove_later() {
	echo "$1" >>"$META/rmpaths"
}

# wait_file PATH SECONDS: polls until PATH exists and is not empty.
wait_file() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# run CMD...: runs CMD (stdin /dev/null), killed after AB_LIMIT seconds; sets RC, OUT, ERR and
# HUNG (1 when it was killed). Like lib.sh's run_cmd, the timer is a sleep this shell starts
# and waits on together with CMD, so no timer outlives the command.
run() {
	local pid timer which
	"$@" >"$META/out" 2>"$META/err" </dev/null &
	pid=$!
	sleep "$AB_LIMIT" </dev/null >/dev/null 2>&1 &
	timer=$!
	which=
	wait -n -p which "$pid" "$timer"
	RC=$?
	HUNG=0
	if [ "$which" != "$pid" ]; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		RC=killed
		HUNG=1
	else
		kill "$timer" 2>/dev/null
		wait "$timer" 2>/dev/null
	fi
	OUT=$(cat "$META/out")
	ERR=$(cat "$META/err")
	RESULT=$(printf '%s\n' "$OUT" | grep '^RESULT ' | tail -n 1)
	printf '$ %s\n%s\n%s\n[exit %s]\n' "$(show "$@")" "$OUT" "$ERR" "$RC" >>"$META/log"
}

show() {
	local s
	s=$(printf '%q ' "$@")
	printf '%s' "${s% }"
}

# serve GREETING SPEC...: starts host-side servers (killed when the case ends) that greet every
# client with GREETING, and waits until they listen. SPEC: unix:PATH, abstract:NAME (a unix
# socket without a file), tcp4 and tcp6 (127.0.0.1 and ::1, the same free port), udp4 (on
# 127.0.0.1, answers any datagram as a DNS server would, with the query and the answer bit set),
# http4 (on 127.0.0.1: GET answers GREETING). Sets PORT_tcp, PORT_udp4 and PORT_http4.
serve() {
	local greeting=$1 ready="$META/serve.$RANDOM" line
	shift
	bg "$PY" -I "$LIBDIR/servers.py" "$ready" "$greeting" "$@"
	wait_file "$ready" 10 || { why "the host's test servers did not start: $*"; return 1; }
	while read -r line; do
		case "$line" in
		"tcp "*) PORT_tcp=${line#tcp } ;;
		"udp4 "*) PORT_udp4=${line#udp4 } ;;
		"http4 "*) PORT_http4=${line#http4 } ;;
		esac
	done <"$ready"
}

# ab_argv PROFILE [OPTION...]: sets the array AB to the agentbox command line for PROFILE with
# the probes' directory bound read-only and a fresh audit trail in $AUDIT (outside the view).
# `"${AB[@]}" -- CMD` then runs CMD; `ab` below does that through `run`.
AB_N=0
ab_argv() {
	local profile=$1
	shift
	AB_N=$((AB_N + 1))
	AUDIT=$META/audit.${PHASE:-setup}.$AB_N.jsonl # agentbox appends: one fresh file per run
	rm -f "$AUDIT"
	AB=("$AGENTBOX" -p "$profile" --ro "$BIN" --audit "$AUDIT" "$@")
}

# ab PROFILE [OPTION...] -- CMD...: runs CMD in agentbox (see ab_argv); sets RC, OUT, ERR,
# RESULT (the probe's last RESULT line) and AUDIT.
ab() {
	local profile=$1 opts=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	ab_argv "$profile" "${opts[@]}"
	run "${AB[@]}" -- "$@"
}

# host CMD...: runs CMD on the host, the same way.
host() {
	run "$@"
}

# in_pty SECONDS CMD...: runs CMD on a new pseudo-terminal (its stdin, stdout, stderr and
# controlling terminal), as an interactive shell would; sets RC, OUT (the terminal's output,
# stderr included), RESULT.
in_pty() {
	local limit=$1
	shift
	run "$PY" -I "$LIBDIR/inpty.py" "$limit" "$@"
}

# result_is WORD: the probe's RESULT line says WORD (SUCCESS, FAILED, ...).
result_is() {
	case "$RESULT" in
	"RESULT $1"*) return 0 ;;
	esac
	return 1
}

# errno_is NAME...: the probe failed with one of these errno names.
errno_is() {
	local e
	for e in "$@"; do
		case "$RESULT" in
		"RESULT FAILED errno=$e "* | "RESULT FAILED errno=$e") return 0 ;;
		esac
	done
	return 1
}

# audit_syscall NAME [ARG VALUE]: the audit trail names a refused system call NAME (with the
# logged argument ARG (a0 or a1) equal to VALUE in its low 32 bits, when given).
audit_syscall() {
	"$PY" - "$AUDIT" "$@" <<-'EOF'
		import json, sys
		path, name = sys.argv[1], sys.argv[2]
		arg, val = (sys.argv[3], int(sys.argv[4], 0)) if len(sys.argv) > 4 else (None, None)
		try:
		    events = [json.loads(l) for l in open(path) if l.strip()]
		except (OSError, ValueError):
		    sys.exit(1)
		for e in events:
		    if e.get("event") == "syscall" and e.get("name") == name:
		        if arg is None or (e.get("args", {}).get(arg, -1) & 0xffffffff) == val:
		            sys.exit(0)
		sys.exit(1)
	EOF
}

# audit_get EVENT KEY[.KEY...]: prints a field of the first EVENT in the audit trail.
audit_get() {
	"$PY" - "$AUDIT" "$@" <<-'EOF'
		import json, sys
		path, event, keys = sys.argv[1], sys.argv[2], sys.argv[3].split(".")
		try:
		    events = [json.loads(l) for l in open(path) if l.strip()]
		except (OSError, ValueError):
		    sys.exit(1)
		for e in events:
		    if e.get("event") == event:
		        for k in keys:
		            e = e.get(k) if isinstance(e, dict) else None
		        print(json.dumps(e) if not isinstance(e, str) else e)
		        sys.exit(0)
		sys.exit(1)
	EOF
}

# profile FILE BASE [LINE...]: writes a profile that includes the bundled BASE.ini by absolute
# path, then the given lines (section headers and keys).
profile() {
	local file=$1 base=$2
	shift 2
	{
		echo "[sandbox]"
		echo "include = $PROFILES/$base.ini"
		printf '%s\n' "$@"
	} >"$file"
}

# Verdicts. A control must end in control_ok (the action worked where it is allowed) or
# control_failed; an attack in blocked, escaped or gap (not-protected-yet). Each records why
# and ends the phase (control and attack each run in a subshell of their own), so
# `result_is SUCCESS && escaped "..."` stops there. A phase that ends without a verdict counts
# against the case: no control_ok is a failed control, no blocked is ESCAPED.
verdict() {
	echo "$1" >"$META/$PHASE.verdict"
}
control_ok() {
	why "control: $1" "${@:2}"
	verdict ok
	exit 0
}
control_failed() {
	why "control FAILED: $1" "${@:2}"
	verdict failed
	exit 1
}
blocked() {
	why "blocked: $1" "${@:2}"
	verdict blocked
	exit 0
}
escaped() {
	why "ESCAPED: $1" "${@:2}"
	verdict escaped
	exit 1
}
# not_applicable REASON [EVIDENCE...]: for a control only, when it has shown that this kernel
# lacks the feature the attack needs (IA32 emulation, io_uring, ...). The check must be precise:
# a control that fails for any other reason (a broken probe) is control_failed, and a case that
# calls the feature absent where it is present fails the suite, which is worse than no case.
not_applicable() {
	printf '%s\n' "$1" >"$META/na"
	why "n/a: $1" "${@:2}"
	verdict na
	exit 0
}
gap() {
	printf '%s\n' "$1" >"$META/note"
	why "not protected yet: $1" "${@:2}"
	verdict gap
	exit 2
}

# refused_missing PATH CMD...: CMD (an agentbox run) makes PATH, a protected path its rw tree
# lacked, then sleeps and prints NOT-STOPPED. The watch must have stopped the run (125, the cause
# named on stderr), and renamed what appeared aside: PATH itself is gone from the host, its
# content kept in PATH.agentbox-refused (removed here, as the host's user would after a look).
refused_missing() {
	local path=$1
	shift
	run "$@"
	case "$OUT" in *NOT-STOPPED*) escaped "the run went on after $path appeared" "$(evidence)" ;; esac
	[ "$RC" = 125 ] || escaped "$path: expected the run to stop with 125" "$(evidence)"
	case "$ERR" in *"appeared in an rw tree"*) ;; *) escaped "$path: no word on the refusal" "$(evidence)" ;; esac
	[ -e "$path" ] || [ -L "$path" ] && escaped "$path is on the host after the run" "$(evidence)"
	[ -e "$path.agentbox-refused" ] || escaped "$path was not renamed aside" "$(evidence)"
	rm -rf "$path.agentbox-refused"
}

# The evidence of the last command, for why().
evidence() {
	printf 'exit %s; result: %s; stderr: %s' "$RC" "${RESULT:-none}" "$(printf '%s' "$ERR" | head -c 400)"
}

# ------------------------------------------------------------ one case ----

run_one_case() {
	NAME=$1
	CASE=$WORKDIR/cases/$NAME
	META=$WORKDIR/meta/$NAME
	ME=$(id -un)
	RC='' OUT='' ERR='' RESULT='' HUNG=0 AUDIT=/dev/null
	export NAME CASE META ME
	mkdir -p "$CASE" "$META" || exit 3
	cd "$CASE" || exit 3
	# shellcheck disable=SC2317
	cleanup_case() {
		local p
		if [ -f "$META/bgpids" ]; then
			while read -r p; do kill -KILL "$p" 2>/dev/null; done <"$META/bgpids"
		fi
		if [ -f "$META/rmpaths" ]; then
			while read -r p; do rm -rf -- "$p"; done <"$META/rmpaths"
		fi
	}
	trap cleanup_case EXIT
	setup() { :; }
	# shellcheck source=/dev/null
	. "$CASES_DIR/$NAME.sh"
	local c a verdict
	{
		echo "== setup"
		setup
	} >>"$META/log" 2>&1
	for PHASE in control attack; do
		echo "== $PHASE" >>"$META/log"
		("$PHASE") >>"$META/log" 2>&1
		if [ "$PHASE" = control ] && [ "$(cat "$META/control.verdict" 2>/dev/null)" = na ]; then
			echo n/a >"$META/verdict"
			return
		fi
	done
	c=$(cat "$META/control.verdict" 2>/dev/null)
	a=$(cat "$META/attack.verdict" 2>/dev/null)
	[ -n "$c" ] || why "control FAILED: the control ended without a verdict"
	[ -n "$a" ] || why "ESCAPED: the attack ended without proving it was blocked"
	if [ "$a" != blocked ] && [ "$a" != gap ]; then
		verdict=ESCAPED
	elif [ "$c" != ok ]; then
		verdict=CONTROL-FAILED
	elif [ "$a" = gap ]; then
		verdict=not-protected-yet
	else
		verdict=blocked
	fi
	echo "$verdict" >"$META/verdict"
}

# ---------------------------------------------------------------- main ----

list_cases() {
	local f
	for f in "$CASES_DIR"/*.sh; do
		[ -e "$f" ] || continue
		basename "$f" .sh
	done
}

write_lib() {
	mkdir -p "$LIBDIR"
	# inpty.py SECONDS CMD...: CMD on a new pty; its output on stdout; its exit status.
	cat >"$LIBDIR/inpty.py" <<-'EOF'
		import os, pty, select, signal, sys, time
		limit, argv = float(sys.argv[1]), sys.argv[2:]
		pid, fd = pty.fork()
		if pid == 0:
		    try:
		        os.execvp(argv[0], argv)
		    finally:
		        os._exit(127)
		out, status, deadline = b"", None, time.monotonic() + limit
		def drain(wait):
		    global out
		    while select.select([fd], [], [], wait)[0]:
		        try:
		            data = os.read(fd, 65536)
		        except OSError:
		            return
		        if not data:
		            return
		        out += data
		        wait = 0.05
		while status is None:
		    drain(0.05)
		    done, st = os.waitpid(pid, os.WNOHANG)
		    if done:
		        status = st
		    elif time.monotonic() > deadline:
		        os.kill(pid, signal.SIGKILL)
		        status = os.waitpid(pid, 0)[1]
		        out += b"\nPTY-TIMEOUT\n"
		drain(0.05)
		sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
		code = os.waitstatus_to_exitcode(status)
		sys.exit(code if code >= 0 else 128 - code)
	EOF
	# servers.py READY GREETING SPEC...: see serve() above.
	cat >"$LIBDIR/servers.py" <<-'EOF'
		import http.server, os, socket, sys, threading
		ready, greeting, specs = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
		lines = []
		def stream(sock):
		    sock.listen(16)
		    def loop():
		        while True:
		            c, _ = sock.accept()
		            try:
		                c.sendall(greeting + b"\n")
		            finally:
		                c.close()
		    threading.Thread(target=loop, daemon=True).start()
		tcp_port = 0
		for spec in specs:
		    kind, _, arg = spec.partition(":")
		    if kind == "unix":
		        s = socket.socket(socket.AF_UNIX); s.bind(arg); stream(s)
		    elif kind == "abstract":
		        s = socket.socket(socket.AF_UNIX); s.bind("\0" + arg); stream(s)
		    elif kind in ("tcp4", "tcp6"):
		        fam, host = (socket.AF_INET, "127.0.0.1") if kind == "tcp4" else (socket.AF_INET6, "::1")
		        s = socket.socket(fam)
		        if fam == socket.AF_INET6:
		            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
		        s.bind((host, tcp_port)); tcp_port = s.getsockname()[1]; stream(s)
		    elif kind == "udp4":
		        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
		        def udp(s=s):
		            while True:
		                q, peer = s.recvfrom(512)
		                if len(q) >= 12:
		                    s.sendto(q[:2] + bytes([q[2] | 0x80]) + q[3:], peer)
		        threading.Thread(target=udp, daemon=True).start()
		        lines.append(f"udp4 {s.getsockname()[1]}")
		    elif kind == "http4":
		        class H(http.server.BaseHTTPRequestHandler):
		            def do_GET(self):
		                self.send_response(200)
		                self.send_header("Content-Length", str(len(greeting)))
		                self.end_headers()
		                self.wfile.write(greeting)
		            def log_message(self, *a):
		                pass
		        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
		        threading.Thread(target=srv.serve_forever, daemon=True).start()
		        lines.append(f"http4 {srv.server_port}")
		if tcp_port:
		    lines.append(f"tcp {tcp_port}")
		with open(ready + ".tmp", "w") as f:
		    f.write("\n".join(lines + ["ready"]) + "\n")
		os.rename(ready + ".tmp", ready)
		threading.Event().wait()
	EOF
}

compile_probes() {
	local c name failed=0
	mkdir -p "$BIN"
	for c in "$CASES_DIR"/*.c; do
		[ -e "$c" ] || continue
		name=$(basename "$c" .c)
		if ! cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I "$CASES_DIR" -o "$BIN/$name" \
			"$c" >"$WORKDIR/cc-$name.log" 2>&1; then
			echo "$name.c COMPILE-FAILED"
			sed 's/^/    /' "$WORKDIR/cc-$name.log" | head -n 20
			failed=$((failed + 1))
		fi
	done
	chmod -R a+rX "$BIN"
	return "$failed"
}

main() {
	local verbose=0 cases=() name verdict tool n_pass=0 n_fail=0 gaps=() na=() t0 failedcase
	if [ "${1:-}" = --list ]; then
		list_cases
		exit 0
	fi
	if [ "${1:-}" = -v ]; then
		verbose=1
		shift
	fi
	if [ $# -lt 1 ]; then
		echo "usage: run.sh [-v] AGENTBOX [CASE...] | run.sh --list" >&2
		exit 2
	fi
	AGENTBOX=$(readlink -f "$1")
	shift
	PROFILES=$(readlink -f "${AGENTBOX_PROFILES:-$HERE/../../profiles}")
	if [ $# -gt 0 ]; then
		cases=("$@")
	else
		mapfile -t cases < <(list_cases)
	fi
	for tool in cc "$PY" timeout pgrep; do
		command -v "$tool" >/dev/null || { echo "escape: setup failed: $tool is missing"; exit 1; }
	done
	[ -x "$AGENTBOX" ] || { echo "escape: setup failed: $AGENTBOX is not executable"; exit 1; }
	[ -r "$PROFILES/shell.ini" ] || { echo "escape: setup failed: no shell.ini in $PROFILES"; exit 1; }
	for name in "${cases[@]}"; do
		[ -r "$CASES_DIR/$name.sh" ] || { echo "escape: no case $name in $CASES_DIR"; exit 1; }
	done

	WORKDIR=$(mktemp -d "${ESCAPE_WORKDIR:-${TMPDIR:-/tmp}}/agentbox-escape.XXXXXX") ||
		{ echo "escape: setup failed: cannot create a scratch directory"; exit 1; }
	chmod 755 "$WORKDIR"
	BIN=$WORKDIR/bin
	LIBDIR=$WORKDIR/lib
	# shellcheck disable=SC2064
	trap "chmod -R u+rwX '$WORKDIR' 2>/dev/null; rm -rf '$WORKDIR'" EXIT
	export AGENTBOX PROFILES BIN LIBDIR WORKDIR AB_LIMIT
	export AGENTBOX_PROFILE_PATH=$PROFILES
	t0=$(date +%s)
	echo "# escape suite as $(id -un) (uid $(id -u)): $AGENTBOX, profiles $PROFILES, ${#cases[@]} cases"
	write_lib
	compile_probes || n_fail=$((n_fail + $?))

	for name in "${cases[@]}"; do
		timeout -k 5 "${ESCAPE_CASE_LIMIT:-90}" bash "$HERE/run.sh" --run-case "$name" </dev/null
		verdict=$(cat "$WORKDIR/meta/$name/verdict" 2>/dev/null)
		if [ -z "$verdict" ]; then
			mkdir -p "$WORKDIR/meta/$name"
			echo "ESCAPED: the case gave no verdict within ${ESCAPE_CASE_LIMIT:-90} s (hung or" \
				"crashed); a case must prove it was blocked" >>"$WORKDIR/meta/$name/why"
			verdict=ESCAPED
		fi
		case "$verdict" in
		blocked)
			n_pass=$((n_pass + 1))
			echo "$name blocked"
			;;
		n/a)
			na+=("$name: $(head -n 1 "$WORKDIR/meta/$name/na" 2>/dev/null)")
			echo "$name n/a: $(head -n 1 "$WORKDIR/meta/$name/na" 2>/dev/null)"
			;;
		not-protected-yet)
			gaps+=("$name")
			echo "$name not-protected-yet ($(head -n 1 "$WORKDIR/meta/$name/note" 2>/dev/null))"
			;;
		*)
			n_fail=$((n_fail + 1))
			echo "$name $verdict"
			;;
		esac
		case "$verdict" in blocked | not-protected-yet | n/a) failedcase=0 ;; *) failedcase=1 ;; esac
		if [ "$failedcase" = 1 ] || [ "$verbose" = 1 ]; then
			sed 's/^/    /' "$WORKDIR/meta/$name/why" 2>/dev/null
		fi
		if [ "$failedcase" = 1 ] && [ -s "$WORKDIR/meta/$name/log" ]; then
			echo "    -- log (last 25 lines) --"
			tail -n 25 "$WORKDIR/meta/$name/log" | cut -c1-300 | sed 's/^/    | /'
		fi
	done
	echo "# escape suite as $(id -un): $(($(date +%s) - t0)) s"
	if [ "${#gaps[@]}" -gt 0 ]; then
		echo "escape: known gaps: ${#gaps[@]} (not protected yet: ${gaps[*]})"
	fi
	if [ "${#na[@]}" -gt 0 ]; then
		printf 'escape: not applicable here: %d (%s' "${#na[@]}" "${na[0]}"
		printf '; %s' "${na[@]:1}"
		printf ')\n'
	fi
	echo "escape: $n_pass passed, $n_fail failed, ${#na[@]} skipped"
	[ "$n_fail" -eq 0 ]
}

if [ "${1:-}" = --run-case ]; then
	run_one_case "$2"
	exit 0
fi
main "$@"

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# `agentbox mcp`: an MCP server on stdio owning one task session, driven by a stdlib-only
# client (helpers/mcp_client.py). Lifecycle and version negotiation; runs that succeed, fail,
# time out, flood their output (capped, the rest counted, no hang) or leave a process holding
# the pipes; a refused call counted for its run only; a fetch of a host not allowed fails and is
# counted (control: the same fetch of an allowed host works); changes and diff with overlays,
# and no promote; every JSON-RPC error (malformed, batch, unknown method, bad params, before
# initialize, oversized) answered with the server serving on; 200 pings in order; and the end:
# stdin closed or the server killed -9, the session is gone with nothing of it left running.
# Every tool result is checked against its tool's output schema; the input schema is what the
# server enforces; output caps keep head and tail on character boundaries; progress comes with a
# token only; notifications/cancelled kills the running command and its request gets no
# response; a client that can be asked (elicitation) decides on the connections a profile may
# grant while the run waits; and the official TypeScript SDK drives it all (n/a without node,
# npm or a registry).
. "$(dirname "$0")/lib.sh"

if ! "$AGENTBOX" -p minimal -- true 2>/dev/null; then
	echo "n/a $TEST_NAME ($TEST_USER): no user namespaces here (sessions need them)"
	exit 77
fi

# client SCENARIO MCP_ARGS... [-- SCENARIO_ARGS...]: runs the scenario; OUT has its lines.
client() {
	MCP_STDERR="$META/server.err" run_cmd "$PY" "$HELPERS/mcp_client.py" "$1" "$AGENTBOX" "${@:2}"
	[ "$RC" = 0 ] || fail "scenario $1: status $RC" "$OUT" "$(tail -n 20 "$META/server.err")"
}

# gone ID MARKER: within 10 s, session ID is not listed and no process carries MARKER.
gone() {
	local i
	for i in $(seq 50); do
		if ! "$AGENTBOX" session list | grep -q "^$1 " && ! pgrep -f "$2" >/dev/null; then
			return 0
		fi
		sleep 0.2
	done
	fail "session $1 still listed or a process with $2 still runs" \
		"$("$AGENTBOX" session list)" "$(pgrep -af "$2")"
}

case_basics() {
	client basics -p shell
}

# the profile's own trail: the server reads it from the file, and the file keeps it all
case_audit_file() {
	client basics -p shell --audit "$META/audit.jsonl"
	assert_eq 6 "$(grep -c '"event":"exec"' "$META/audit.jsonl")" "exec events in the file"
	grep -q '"event":"syscall".*"name":"unshare"' "$META/audit.jsonl" ||
		fail "no unshare event in the file" "$(cat "$META/audit.jsonl")"
}

case_versions() {
	for v in 2025-11-25 2025-06-18 2025-03-26 2024-11-05 1999-01-01; do
		client versions -p shell -- "$v"
	done
}

case_errors() {
	client errors -p shell
}

case_limits() {
	client limits -p shell
}

# net_profile [allow/resolve lines]: the shell profile in proxy mode, allowing what is given.
net_profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n[network]\nmode = proxy\ncapture = off\n' \
			"$AGENTBOX_PROFILES"
		printf '%s\n' "$@"
	} >"$META/net.ini"
}

case_network() {
	mkdir -p "$META/www" && echo body >"$META/www/file.txt"
	serve www "$META/www"
	net_profile
	client network -p "$META/net.ini" -- "www.test:$PORT" deny
	net_profile "allow = www.test" "resolve = www.test=127.0.0.1"
	client network -p "$META/net.ini" -- "www.test:$PORT" allow
}

# A client that can be asked (elicitation) is asked about connections the profile's grantable
# rule covers, while the run waits on them: once, a decline, a word not in the form, run, a
# cancel; a host beyond the grant never asked; an unanswered question refused at its timeout
# and its request withdrawn; clients without elicitation (or form mode, or 2025-06-18) never
# asked, refused at once. Each question and answer in the trail.
ask_profile() {
	net_profile "resolve = a.ask.test=127.0.0.1, b.ask.test=127.0.0.1" \
		"grantable = *.ask.test:$PORT" "$@"
}

ask_client() {
	MCP_STDERR="$META/server.err" run_cmd "$PY" "$HELPERS/mcp_ask_client.py" "$1" "$AGENTBOX" \
		"$META/net.ini" "$PORT"
	[ "$RC" = 0 ] || fail "ask scenario $1: status $RC" "$OUT" "$(tail -n 20 "$META/server.err")"
}

case_ask() {
	mkdir -p "$META/www" && echo body >"$META/www/file.txt"
	serve www "$META/www"
	ask_profile "ask-timeout = 20s" && printf '[audit]\nfile = %s\n' "$META/audit.jsonl" >>"$META/net.ini"
	ask_client answers
	assert_contains "$(cat "$META/server.err")" "the client is asked about connections" \
		"the server says it asks"
	assert_eq "ask-start 5 once deny deny run deny" "$("$PY" -c 'import json, sys
ev = [e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "policy"]
print(" ".join([e["action"] for e in ev if e["action"] == "ask-start"] +
               [str(sum(e["action"] == "ask" for e in ev))] +
               [e["answer"] for e in ev if e["action"] == "answer"]))' "$META/audit.jsonl")" \
		"the trail: the subscription, five questions, their answers"
	ask_profile "ask-timeout = 1s"
	ask_client timeout
	ask_profile "ask-timeout = 20s"
	ask_client unasked
	assert_not_contains "$(cat "$META/server.err")" "not asked" "a client that cannot be asked: no complaint"
	# control: a profile that grants nothing has no question and says nothing of it
	net_profile "resolve = a.ask.test=127.0.0.1"
	: >"$META/server.err"
	ask_client nogrant
	assert_not_contains "$(cat "$META/server.err")" "asked about connections" \
		"a profile that grants nothing: the client is not asked"
}

case_overlay() {
	mkdir proj && echo orig >proj/file.txt
	client overlay -p shell --overlay "$CASE/proj" -- "$CASE/proj"
	assert_eq orig "$(cat proj/file.txt)" "the host's file after the session"
	assert_absent proj/new.txt
}

case_end_of_input() {
	local m=agentbox-mcp-marker-$$-$RANDOM sid
	client lifecycle -p shell -- "$m"
	sid=$(printf '%s\n' "$OUT" | sed -n 's/^session: //p')
	[[ $sid =~ ^[0-9a-f]{32}$ ]] || fail "no session id" "$OUT"
	gone "$sid" "$m"
}

case_killed() {
	local m=agentbox-mcp-marker-$$-$RANDOM sid
	client lifecycle -p shell -- "$m" kill
	sid=$(printf '%s\n' "$OUT" | sed -n 's/^session: //p')
	[[ $sid =~ ^[0-9a-f]{32}$ ]] || fail "no session id" "$OUT"
	gone "$sid" "$m"
}

case_bad_start() {
	run_cmd "$AGENTBOX" mcp -p no-such-profile-here
	assert_eq 125 "$RC" "mcp with a missing profile"
	assert_eq "" "$OUT" "stdout of a server that did not start"
	assert_contains "$ERR" "no-such-profile-here" "the error names the profile"
	printf '[sandbox]\ninclude = %s/shell.ini\n[audit]\nfile = -\n' "$AGENTBOX_PROFILES" \
		>"$META/stdout-audit.ini"
	run_cmd "$AGENTBOX" mcp -p "$META/stdout-audit.ini"
	assert_eq 125 "$RC" "mcp with the audit trail on stdout"
	assert_contains "$ERR" "cannot go to stdout" "the refusal says why"
	run_cmd "$AGENTBOX" mcp
	assert_eq 125 "$RC" "mcp without options"
}

# A profile's [limits] timeout is the most a run gets: run's default (300 s) and a longer
# timeout are lowered to it, and the result says what applied; control: a shorter one stays.
case_timeout_cap() {
	printf '[sandbox]\ninclude = %s/shell.ini\n[limits]\ntimeout = 2s\n' "$AGENTBOX_PROFILES" \
		>"$META/cap.ini"
	MCP_STDERR="$META/server.err" run_cmd "$PY" -c '
import sys, time
sys.path.insert(0, sys.argv[1])
from mcp_client import Server, Fail, check, sh
s = Server(sys.argv[2], ["-p", sys.argv[3]])
try:
    s.initialize()
    for args, want in (({}, 2000), ({"timeout": 3600}, 2000), ({"timeout": 1}, 1000)):
        t0 = time.monotonic()
        _, sc = s.run(dict(args, command=["sleep", "30"]))
        took = time.monotonic() - t0
        check(sc["status"] == 124 and took < 10, "run %r: status %r after %.1f s" % (args, sc["status"], took))
        check(sc.get("timeout_ms") == want, "run %r: timeout_ms %r" % (args, sc.get("timeout_ms")))
    d = {t["name"]: t for t in s.result("tools/list")["tools"]}["run"]["description"]
    check("Default timeout 2 s; a longer one is lowered to the profile" in d,
          "the description does not say the limit: %s" % d)
    s.close()
    print("capped")
except Fail as e:
    print("FAIL: %s" % e)
    s.p.kill()' "$HELPERS" "$AGENTBOX" "$META/cap.ini"
	[ "$OUT" = capped ] || fail "runs under a profile timeout of 2 s: $OUT" \
		"$(tail -n 5 "$META/server.err" 2>/dev/null)"
}

# Two busy processes beside the server: every run's own trail events are in its result
# (denials available, its refused call counted) however the scheduler interleaves the
# supervisor's reply and its trail; control: the refused unshare is seen in each.
case_busy() {
	local n=40
	under_memcheck && n=8
	bg sh -c 'while :; do :; done'
	bg sh -c 'while :; do :; done'
	MCP_STDERR="$META/server.err" run_cmd "$PY" -c '
import sys
sys.path.insert(0, sys.argv[1])
from mcp_client import Server, Fail, check, sh
s = Server(sys.argv[2], ["-p", "shell"])
try:
    s.initialize()
    for i in range(int(sys.argv[3])):
        # a refused call, then more output than a pipe holds: the reply, the trail and
        # the output all come at once
        _, sc = s.run({"command": sh("unshare -U true 2>/dev/null; head -c 300000 /dev/zero; echo %d >&2" % i)},
                      timeout=120)
        den = sc["denials"]
        check(sc["stderr"] == "%d\n" % i and sc["stdout_dropped"] == 300000 - 65536,
              "run %d: output %r, %r dropped" % (i, sc["stderr"], sc["stdout_dropped"]))
        check(den.get("available") is True, "run %d: denials not available: %r" % (i, den))
        check(den.get("syscall_names", {}).get("unshare", 0) >= 1,
              "run %d: the refused unshare not counted: %r" % (i, den))
    s.close()
    print("complete")
except Fail as e:
    print("FAIL: %s" % e)
    s.p.kill()' "$HELPERS" "$AGENTBOX" "$n"
	[ "$OUT" = complete ] || fail "runs beside two busy processes: $OUT" \
		"$(tail -n 5 "$META/server.err" 2>/dev/null)"
}

# A client that hangs up while a run goes: by closing the server's stdin (its end), or by
# no longer reading its stdout (a dead peer). The command must not live on until its own
# timeout (300 s): it is gone, and the server with its session, well before that (the
# deadline is generous for a loaded machine; the bug was 300 s). Control: the command ran.
case_client_gone() {
	local how m
	for how in stdin stdout; do
		m=agentbox-mcp-gone-$$-$RANDOM
		# the marker goes in the environment: in argv, pgrep would find this client too
		GONE_MARKER=$m MCP_STDERR="$META/server.err" run_cmd "$PY" -c '
import os, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from mcp_client import Server, Fail, check, sh
s = Server(sys.argv[2], ["-p", "shell"])
how, marker = sys.argv[3], os.environ["GONE_MARKER"]
def running():
    return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0
try:
    s.initialize()
    s.send({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
            "params": {"name": "run", "arguments": {"command": sh("sleep 300; true %s" % marker)}}})
    for _ in range(300):
        if running():
            break
        time.sleep(0.1)
    else:
        raise Fail("control: the command never ran")
    if how == "stdin":
        s.p.stdin.close()
    else:
        s.p.stdout.close()
    t0 = time.monotonic()
    while running() and time.monotonic() - t0 < float(sys.argv[4]):
        time.sleep(0.05)
    check(not running(), "the command still runs %.0f s after the client hung up (%s)"
          % (time.monotonic() - t0, how))
    try:
        s.p.wait(float(sys.argv[4]))
    except subprocess.TimeoutExpired:
        raise Fail("the server did not end after its client hung up (%s)" % how)
    print("gone")
except Fail as e:
    print("FAIL: %s" % e)
finally:
    s.p.kill()' "$HELPERS" "$AGENTBOX" "$how" "$(under_memcheck && echo 60 || echo 10)"
		[ "$OUT" = gone ] || fail "client hung up ($how): $OUT $ERR" \
			"$(tail -n 5 "$META/server.err" 2>/dev/null)"
	done
}

# A run agentbox could not start (a cwd the view lacks, a command not found) says so: cause
# start-error and its reason in error; control: a command that exits 127 itself is exited.
case_start_error() {
	MCP_STDERR="$META/server.err" run_cmd "$PY" -c '
import sys
sys.path.insert(0, sys.argv[1])
from mcp_client import Server, Fail, check, sh
s = Server(sys.argv[2], ["-p", "shell"])
try:
    s.initialize()
    for args, status, part in (({"command": ["true"], "cwd": "/nonexistent"}, 125, "/nonexistent"),
                               ({"command": ["no-such-command-here"]}, 127, "not found")):
        _, sc = s.run(args)
        check(sc["status"] == status and sc["cause"] == "start-error" and part in (sc["error"] or ""),
              "run %r: %r" % (args, sc))
    _, sc = s.run({"command": sh("exit 127")})
    check(sc["status"] == 127 and sc["cause"] == "exited" and sc["error"] is None,
          "control: exit 127: %r" % sc)
    s.close()
    print("said")
except Fail as e:
    print("FAIL: %s" % e)
    s.p.kill()' "$HELPERS" "$AGENTBOX"
	[ "$OUT" = said ] || fail "runs that could not start: $OUT" \
		"$(tail -n 5 "$META/server.err" 2>/dev/null)"
}

# From protocol 2025-11-25 on, arguments that do not fit the input schema are a tool error.
case_tool_errors() {
	client tool_errors -p shell
}

# The input schema says exactly what the server enforces: a table of argument objects, each
# taken by the server exactly when python3-jsonschema takes it.
case_enforced() {
	client enforced -p shell
	case $OUT in "n/a: "*) not_applicable "${OUT#n/a: }" ;; esac
}

# max_output_bytes: head and tail, each cut on a UTF-8 character boundary, the bytes between
# counted, at every alignment of 1- to 4-byte characters.
case_caps() {
	client caps -p shell
}

# Progress notifications with a string or an integer token (the output as it comes, a beat
# while quiet, bounded messages), none without one and none after the result.
case_progress() {
	client progress -p shell
}

# notifications/cancelled: a running command (a loop writing a file) stops writing and is gone
# before the next message is answered, and the cancelled request gets no response; a call
# cancelled before it started never runs; a cancel of something unknown is ignored.
case_cancel() {
	MCP_MARKER=agentbox-mcp-cancel-$$-$RANDOM client cancel -p shell
}

# The same cancel and progress beside two busy processes.
case_cancel_busy() {
	bg sh -c 'while :; do :; done'
	bg sh -c 'while :; do :; done'
	MCP_MARKER=agentbox-mcp-cancel-$$-$RANDOM client cancel -p shell
	client progress -p shell
}

# The official MCP TypeScript SDK (pinned in helpers/mcp_sdk/package.json and its lock),
# installed with npm ci into this case's scratch directory (never into the source tree): call,
# strict-Ajv schemas, tool errors, progress resetting the request timeout, the SDK's timeout
# and abort cancelling a running command; then once more beside two busy processes. n/a without
# node and npm, or when the npm registry cannot be reached.
case_sdk() {
	local sdk=$META/sdk i cafile why
	command -v node >/dev/null && command -v npm >/dev/null ||
		not_applicable "node and npm are not installed"
	mkdir -p "$sdk" && cp "$HELPERS"/mcp_sdk/package.json "$HELPERS"/mcp_sdk/package-lock.json \
		"$HELPERS"/mcp_sdk/sdk_client.mjs "$HELPERS"/mcp_sdk/sdk_ask.mjs "$sdk"/ ||
		fail "cannot copy the SDK test"
	# npm's configured cafile (a registry behind a TLS-inspecting proxy) does not reach every
	# request npm 11 makes; node's own variable does (run.sh clears the unprivileged user's
	# environment, so the caller's is not there)
	cafile=$(npm config get cafile 2>/dev/null)
	[ -n "${NODE_EXTRA_CA_CERTS:-}" ] || ! [ -f "$cafile" ] || export NODE_EXTRA_CA_CERTS=$cafile
	CMD_LIMIT=300 run_cmd npm ci --prefix "$sdk" --no-audit --no-fund --no-update-notifier \
		--loglevel=error
	if [ "$RC" != 0 ]; then
		why=$ERR
		CMD_LIMIT=60 run_cmd npm ping
		[ "$RC" = 0 ] || not_applicable "the npm registry cannot be reached (npm ping: $RC)"
		# reachable but not installable here (a TLS-inspecting proxy whose CA this user's
		# npm does not have, a mirror without the version): nothing of agentbox's is tested
		not_applicable "npm ci of the pinned SDK failed: $(printf '%s' "$why" | head -n 1)"
	fi
	for i in 1 2; do
		[ "$i" = 1 ] || { bg sh -c 'while :; do :; done'; bg sh -c 'while :; do :; done'; }
		MCP_MARKER=agentbox-mcp-sdk-$$-$RANDOM MCP_TIME_SCALE=$(under_memcheck && echo 10 || echo 1) \
			CMD_LIMIT=$(under_memcheck && echo 900 || echo 180) run_cmd node "$sdk/sdk_client.mjs" \
			"$AGENTBOX"
		[ "$RC" = 0 ] || fail "the SDK's client (pass $i): $(printf '%s\n' "$OUT" | grep FAIL)" \
			"$OUT" "$(tail -n 5 <<<"$ERR")"
	done
	# asked about a connection through the SDK's elicitation handler
	mkdir -p "$META/www" && echo body >"$META/www/file.txt"
	serve www "$META/www"
	ask_profile "ask-timeout = 20s"
	CMD_LIMIT=$(under_memcheck && echo 900 || echo 180) run_cmd node "$sdk/sdk_ask.mjs" \
		"$AGENTBOX" "$META/net.ini" "$PORT"
	[ "$RC" = 0 ] || fail "the SDK asked: $(printf '%s\n' "$OUT" | grep FAIL)" "$OUT" \
		"$(tail -n 5 <<<"$ERR")"
}

run_case basics case_basics
run_case audit_file case_audit_file
run_case versions case_versions
run_case errors case_errors
run_case limits case_limits
run_case network case_network
run_case ask case_ask
run_case overlay case_overlay
run_case end_of_input case_end_of_input
run_case killed case_killed
run_case bad_start case_bad_start
run_case timeout_cap case_timeout_cap
run_case busy case_busy
run_case client_gone case_client_gone
run_case start_error case_start_error
run_case tool_errors case_tool_errors
run_case enforced case_enforced
run_case caps case_caps
run_case progress case_progress
run_case cancel case_cancel
run_case cancel_busy case_cancel_busy
run_case sdk case_sdk
finish

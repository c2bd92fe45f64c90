#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# --result DEST: one JSON line saying how a run (or an exec in a session) ended, for a harness.
# Each way a run ends (exit 0, exit 3, a signal, the timeout, a setup error) gives its status,
# cause and code/signal; refused connections and system calls are counted by kind, the same
# numbers as the audit trail's exit event; the descriptor never reaches the command and a
# result file is hidden from it (each with its control); bad destinations are refused with 125
# before anything runs; an exec's result counts the refusals attributed to it.
. "$(dirname "$0")/lib.sh"

# rget FILE EXPR: EXPR (Python, over the object d) of FILE's one JSON line; fails the case when
# FILE is not exactly one line holding one JSON object.
rget() {
	local v
	v=$("$PY" -c '
import json, sys
lines = open(sys.argv[1]).read().split("\n")
if len(lines) != 2 or lines[1] != "":
    sys.exit("not one line: %r" % lines)
d = json.loads(lines[0])
if not isinstance(d, dict):
    sys.exit("not an object")
print(json.dumps(eval(sys.argv[2])))' "$1" "$2" 2>&1) ||
		fail "$1 is not one JSON line: $v" "$(cat "$1" 2>/dev/null)"
	printf '%s' "$v"
}

# result_is FILE STATUS CAUSE: the fields every result has, and these values.
result_is() {
	assert_eq "$2" "$(rget "$1" 'd["status"]')" "status in $(cat "$1")"
	assert_eq "\"$3\"" "$(rget "$1" 'd["cause"]')" "cause in $(cat "$1")"
	assert_eq 1 "$(rget "$1" 'd["v"]')" "v in $(cat "$1")"
}

t_exited() {
	local r=$META/r.json
	run_cmd "$AGENTBOX" -p shell --result fd:3 -- sh -c 'echo out' 3>"$r"
	assert_eq 0 "$RC" "exit status of a clean run"
	assert_eq out "$OUT" "the command's stdout is its own"
	result_is "$r" 0 exited
	assert_eq 0 "$(rget "$r" 'd["code"]')" "code"
	assert_eq false "$(rget "$r" '"signal" in d')" "no signal field when exited"
	assert_eq null "$(rget "$r" 'd["limit"]')" "limit"
	assert_eq true "$(rget "$r" 'isinstance(d["duration_ms"], int)')" "duration_ms"
	assert_eq '{"net": 0, "http": 0, "dns": 0, "credential": 0, "syscall": 0}' \
		"$(rget "$r" 'd["denials"]')" "denials of a clean run"
	assert_eq true "$(rget "$r" 'len(d["run"]) == 32')" "run id"
	assert_eq null "$(rget "$r" 'd["error"]')" "error"
	assert_eq null "$(rget "$r" 'd["changes"]')" "changes without an overlay"

	run_cmd "$AGENTBOX" -p shell --json --result fd:3 -- sh -c 'exit 3' 3>"$r"
	assert_eq 3 "$RC" "exit status 3"
	result_is "$r" 3 exited
	assert_eq 3 "$(rget "$r" 'd["code"]')" "code 3"
}

t_signaled() {
	local r=$META/r.json
	run_cmd "$AGENTBOX" -p shell --result fd:3 -- sh -c 'kill -KILL $$' 3>"$r"
	assert_eq 137 "$RC" "exit status of a killed command"
	result_is "$r" 137 signaled
	assert_eq 9 "$(rget "$r" 'd["signal"]')" "signal"
	assert_eq false "$(rget "$r" '"code" in d')" "no code field when signaled"
}

t_timeout() {
	local r=$META/r.json
	run_cmd "$AGENTBOX" -p shell --timeout 1s --result fd:3 -- sleep 30 3>"$r"
	assert_eq 124 "$RC" "exit status on timeout"
	result_is "$r" 124 timeout
	assert_eq '"timeout"' "$(rget "$r" 'd["limit"]')" "limit"
	assert_eq true "$(rget "$r" '900 <= d["duration_ms"] < 20000')" "duration_ms near 1 s"
}

# Two refused unshare calls are two syscall denials (the repeat has no event of its own), the
# same count as the audit trail's exit event; control: a run without them counts none.
t_denied_syscall() {
	local r=$META/r.json a=$META/audit
	run_cmd "$AGENTBOX" -p shell --audit "$a" --result fd:3 -- sh -c \
		'unshare -U true 2>/dev/null; unshare -U true 2>/dev/null; exit 0' 3>"$r"
	assert_eq 0 "$RC" "the run with refused calls"
	assert_eq 2 "$(rget "$r" 'd["denials"]["syscall"]')" "syscall denials"
	assert_eq "$(rget "$r" 'd["run"]')" "$("$PY" -c '
import json, sys
print(json.dumps([json.loads(l) for l in open(sys.argv[1])][-1]["run"]))' "$a")" \
		"the result's run id is the trail's"
	assert_eq "$(rget "$r" 'd["denials"]')" "$("$PY" -c '
import json, sys
e = [json.loads(l) for l in open(sys.argv[1])][-1]
print(json.dumps(e["denials"]) if e["event"] == "exit" else "no exit event")' "$a")" \
		"the exit event's denials are the result's"
	assert_eq "\"$a\"" "$(rget "$r" 'd["audit"]')" "the audit trail's path"
	run_cmd "$AGENTBOX" -p shell --result fd:3 -- sh -c 'true; true' 3>"$r"
	assert_eq 0 "$(rget "$r" 'd["denials"]["syscall"]')" "control: no syscall denial"
}

# A connection the proxy refuses is a net denial; control: the same request to an allowed
# host (pinned to a server of the test's on 127.0.0.1) is none.
t_denied_net() {
	local r=$META/r.json
	command -v curl >/dev/null || not_applicable "no curl"
	mkdir www && echo hi >www/x
	serve www "$CASE/www"
	cat >proxy.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[network]
		mode = proxy
		allow = allowed.example:$PORT
		resolve = allowed.example:$PORT=127.0.0.1:$PORT
	EOF
	run_cmd "$AGENTBOX" -p ./proxy.ini --result fd:3 -- curl -s -o /dev/null \
		-w '%{http_code}' -x http://127.0.0.1:3128 http://denied.example/ 3>"$r"
	assert_eq 403 "$OUT" "the proxy's answer to a denied host"
	assert_eq 1 "$(rget "$r" 'd["denials"]["net"]')" "net denials"
	run_cmd "$AGENTBOX" -p ./proxy.ini --result fd:3 -- curl -s -x http://127.0.0.1:3128 \
		"http://allowed.example:$PORT/x" 3>"$r"
	assert_eq hi "$OUT" "control: the allowed host answers"
	assert_eq 0 "$(rget "$r" 'd["denials"]["net"]')" "control: an allowed host is no denial"
}

# Nothing ran: 125, cause setup-error, the message in "error" (before a run id exists, and
# after, with the trail's id).
t_setup_error() {
	local r=$META/r.json a=$META/audit
	run_cmd "$AGENTBOX" -p ./missing.ini --result fd:3 -- touch "$CASE/ran" 3>"$r"
	assert_eq 125 "$RC" "exit status with a missing profile"
	assert_absent "$CASE/ran" "the command ran despite the missing profile"
	result_is "$r" 125 setup-error
	assert_contains "$(rget "$r" 'd["error"]')" "missing.ini" "the error"
	assert_eq null "$(rget "$r" 'd["run"]')" "no run id before the trail"
	run_cmd "$AGENTBOX" -p shell --ro "$CASE/missing" --audit "$a" --result fd:3 -- \
		touch "$CASE/ran" 3>"$r"
	assert_eq 125 "$RC" "exit status with a missing --ro path"
	assert_absent "$CASE/ran" "the command ran despite the missing --ro path"
	result_is "$r" 125 setup-error
	assert_contains "$(rget "$r" 'd["error"]')" "missing" "the error"
	assert_eq true "$(rget "$r" 'len(d["run"]) == 32')" "the run id once the trail is open"
	assert_contains "$(tail -n 1 "$a")" "\"cause\":\"setup-error\"" "the exit event"
}

# The descriptor given to --result never reaches the command; control: the same listing sees
# a descriptor the command opens itself.
t_fd_not_inherited() {
	local r=$META/r.json
	run_cmd "$AGENTBOX" -p shell --result fd:7 -- sh -c \
		'ls /proc/self/fd; exec 8>/dev/null; echo control; ls /proc/self/fd' 7>"$r"
	assert_eq 0 "$RC" "the listing run"
	case ${OUT%%control*} in
	*7*) fail "fd 7 (the result's) is open inside" "$(report)" ;;
	esac
	assert_contains "${OUT#*control}" 8 "control: the listing sees the command's own fd 8"
	result_is "$r" 0 exited
}

# A result file: written, 0600, hidden from the command (as the audit trail is); control: a
# file beside it is readable. An overlay run names its changes directory.
t_result_file() {
	local r=$CASE/result.json
	echo visible >beside
	run_cmd "$AGENTBOX" -p shell --result result.json -- sh -c \
		"cat '$CASE/beside'; cat '$r' 2>/dev/null && echo LEAK; echo >'$r' 2>/dev/null && echo WROTE; true"
	assert_eq 0 "$RC" "the run with a result file"
	assert_contains "$OUT" visible "control: the file beside it is readable"
	assert_not_contains "$OUT" LEAK "the result file was readable inside"
	assert_not_contains "$OUT" WROTE "the result file was writable inside"
	result_is "$r" 0 exited
	assert_eq 600 "$(stat -c %a "$r")" "the result file's mode"
	mkdir proj
	run_cmd "$AGENTBOX" -p shell --overlay "$CASE/proj" --changes "$META/ch" \
		--result "$META/o.json" -- sh -c 'echo x >proj/f'
	assert_eq 0 "$RC" "the overlay run"
	assert_eq "\"$META/ch\"" "$(rget "$META/o.json" 'd["changes"]')" "the changes directory"
}

# Refused before anything runs, 125 with a message naming the fix.
t_bad_result() {
	local why
	ln -s "$META/target" link.json
	: >"$META/ro"
	exec 4<"$META/ro"
	for args in "-" "fd:0" "fd:x" "fd:" "fd:99" "fd:4" "link.json" "nodir/r.json"; do
		run_cmd "$AGENTBOX" -p shell --result "$args" -- touch "$CASE/ran"
		assert_eq 125 "$RC" "exit status with --result $args"
		case $ERR in
		*"--result"* | *"result file"*) ;;
		*) fail "no message naming the result for --result $args" "$(report)" ;;
		esac
		assert_absent "$CASE/ran" "the command ran with --result $args"
	done
	assert_absent "$META/target" "the symlink was followed"
	run_cmd "$AGENTBOX" -p shell --json -- touch "$CASE/ran"
	assert_eq 125 "$RC" "--json without --result"
	assert_contains "$ERR" "--json needs --result" "the message for --json alone"
	run_cmd "$AGENTBOX" -p shell --result fd:1 --result fd:2 -- touch "$CASE/ran"
	assert_eq 125 "$RC" "--result twice"
	assert_absent "$CASE/ran" "the command ran with a refused --result"
	# control: fd:1, named, is the caller's own choice: the object is stdout's last line
	run_cmd "$AGENTBOX" -p shell --result fd:1 -- echo hello
	assert_eq 0 "$RC" "--result fd:1"
	why=$(printf '%s\n' "$OUT" | tail -n 1)
	assert_contains "$why" '"cause":"exited"' "the result on stdout's last line"
}

stop_session() {
	[ -f "$META/sid" ] && timeout -s KILL "$CMD_LIMIT" "$AGENTBOX" session stop \
		"$(cat "$META/sid")" >/dev/null 2>&1
	return 0
}

# An exec's result: its own status and the refused calls attributed to it; the session's
# denials so far beside them; the session's id as the run.
t_exec() {
	local r=$META/r.json sid
	"$AGENTBOX" -p minimal -- true 2>/dev/null || not_applicable "no user namespaces (sessions)"
	trap stop_session EXIT
	run_cmd "$AGENTBOX" session start -p shell --audit "$META/audit"
	assert_eq 0 "$RC" "session start"
	sid=$OUT
	echo "$sid" >"$META/sid"
	run_cmd "$AGENTBOX" exec "$sid" --result fd:7 -- sh -c \
		'unshare -U true 2>/dev/null; unshare -U true 2>/dev/null; ls /proc/self/fd; exit 4' 7>"$r"
	assert_eq 4 "$RC" "the exec's status"
	assert_not_contains "$OUT" 7 "fd 7 (the result's) is open inside the exec"
	result_is "$r" 4 exited
	assert_eq 4 "$(rget "$r" 'd["code"]')" "code"
	assert_eq 2 "$(rget "$r" 'd["denials"]["syscall"]')" "the exec's refused calls"
	assert_eq "\"$sid\"" "$(rget "$r" 'd["run"]')" "the session as the run"
	assert_eq 1 "$(rget "$r" 'd["exec"]')" "the exec's number"
	run_cmd "$AGENTBOX" exec "$sid" --json --result fd:3 -- true 3>"$r"
	assert_eq 0 "$RC" "a clean exec"
	assert_eq 0 "$(rget "$r" 'd["denials"]["syscall"]')" "control: a clean exec's refusals"
	assert_eq 2 "$(rget "$r" 'd["session_denials"]["syscall"]')" "the session's so far"
	run_cmd "$AGENTBOX" exec "$sid" --timeout 1s --result fd:3 -- sleep 30 3>"$r"
	assert_eq 124 "$RC" "an exec past its timeout"
	result_is "$r" 124 timeout
	assert_eq true "$(rget "$r" '900 <= d["duration_ms"] < 20000')" "the exec's duration_ms"
	run_cmd "$AGENTBOX" exec "$sid" --json -- true
	assert_eq 125 "$RC" "exec --json without --result"
	run_cmd "$AGENTBOX" exec "$sid" --result - -- true
	assert_eq 125 "$RC" "exec --result -"
	run_cmd "$AGENTBOX" session stop "$sid"
	[ "$RC" = 0 ] || fail "session stop: status $RC" "$(report; tail -n 3 "$META/audit")"
	rm -f "$META/sid"
	run_cmd "$AGENTBOX" exec "$sid" --result fd:3 -- true 3>"$r"
	assert_eq 125 "$RC" "an exec into a stopped session"
	result_is "$r" 125 setup-error
	assert_contains "$(rget "$r" 'd["error"]')" "no live session" "the error"
}

# An exec that never ran (a cwd the view lacks, a command not found, a file that cannot be
# executed) is agentbox's failure, not the command's: cause start-error, the reason in error
# (and in the exec event), no code; agentbox's line on stderr is marked. Controls: commands
# that exit 125, 127 and 126 themselves are exited, with their code and no error.
t_exec_start_error() {
	local r=$META/r.json sid
	"$AGENTBOX" -p minimal -- true 2>/dev/null || not_applicable "no user namespaces (sessions)"
	trap stop_session EXIT
	run_cmd "$AGENTBOX" session start -p shell --audit "$META/audit"
	assert_eq 0 "$RC" "session start"
	sid=$OUT
	echo "$sid" >"$META/sid"
	printf 'echo hi\n' >"$CASE/noexec.sh" && chmod 644 "$CASE/noexec.sh"
	# STATUS WHAT ARGS...: an exec agentbox could not start
	start_error() {
		local status=$1 what=$2
		shift 2
		run_cmd "$AGENTBOX" exec "$sid" --result fd:3 "$@" 3>"$r"
		assert_eq "$status" "$RC" "the status of $what"
		result_is "$r" "$status" start-error
		assert_contains "$(rget "$r" 'd["error"]')" "$what" "the error of $what"
		assert_eq false "$(rget "$r" '"code" in d')" "a code for $what (nothing ran)"
		assert_contains "$ERR" "agentbox: " "agentbox's line on stderr for $what"
	}
	start_error 125 /nonexistent --cwd /nonexistent -- true
	start_error 127 "not found" -- /nonexistent-command
	start_error 126 "cannot execute" -- "$CASE/noexec.sh"
	for code in 125 127 126; do
		run_cmd "$AGENTBOX" exec "$sid" --result fd:3 -- sh -c "exit $code" 3>"$r"
		assert_eq "$code" "$RC" "control: a command exiting $code"
		result_is "$r" "$code" exited
		assert_eq "$code" "$(rget "$r" 'd["code"]')" "control: the code $code"
		assert_eq null "$(rget "$r" 'd["error"]')" "control: no error for exit $code"
		assert_eq "" "$ERR" "control: nothing of agentbox's on stderr for exit $code"
	done
	assert_contains "$(grep '"event":"exec"' "$META/audit" | head -n 1)" \
		'"cause":"start-error"' "the exec event of the bad cwd"
	assert_contains "$(grep '"event":"exec"' "$META/audit" | head -n 1)" \
		'"error":"cannot enter /nonexistent' "the exec event's error"
}

# A plain run whose command agentbox could not start says so, apart from a command's own exit
# 127/126: cause start-error with the reason in error, in --result and the exit event.
t_plain_start_error() {
	local r=$META/r.json audit=$META/plain.jsonl
	printf 'echo hi\n' >"$CASE/noexec.sh" && chmod 644 "$CASE/noexec.sh"
	run_cmd "$AGENTBOX" -p shell --audit "$audit" --result fd:3 -- /nonexistent-command 3>"$r"
	assert_eq 127 "$RC" "the status of a command not found"
	result_is "$r" 127 start-error
	assert_contains "$(rget "$r" 'd["error"]')" "not found" "the error of a command not found"
	assert_contains "$(grep '"event":"exit"' "$audit")" '"cause":"start-error"' "the exit event's cause"
	assert_contains "$(grep '"event":"exit"' "$audit")" '"error":"' "the exit event's error"
	run_cmd "$AGENTBOX" -p shell --result fd:3 -- "$CASE/noexec.sh" 3>"$r"
	assert_eq 126 "$RC" "the status of a command that cannot execute"
	result_is "$r" 126 start-error
	for code in 127 126; do
		run_cmd "$AGENTBOX" -p shell --result fd:3 -- sh -c "exit $code" 3>"$r"
		assert_eq "$code" "$RC" "control: a command exiting $code"
		result_is "$r" "$code" exited
		assert_eq null "$(rget "$r" 'd["error"]')" "control: no error for exit $code"
	done
}

run_case exited t_exited
run_case signaled t_signaled
run_case timeout t_timeout
run_case denied_syscall t_denied_syscall
run_case denied_net t_denied_net
run_case setup_error t_setup_error
run_case fd_not_inherited t_fd_not_inherited
run_case result_file t_result_file
run_case bad_result t_bad_result
run_case exec t_exec
run_case exec_start_error t_exec_start_error
run_case plain_start_error t_plain_start_error
finish

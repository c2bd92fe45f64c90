#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Task sessions (`agentbox session start|stop|list`, `agentbox exec`): one sandbox for many
# commands. Writes of one exec are seen by the next (one overlay for the session), diff and
# promote cover them all and the host is untouched before; a background server one exec starts
# answers the next; execs run concurrently; exit status, signals and stdin are a plain run's.
# Hostile, each with its control: the control socket from inside (by path; its directory is not
# even visible), from another pid namespace, from another user (both ways); a session started
# from inside; processes that try to outlive `session stop` (setsid, double fork) or the
# session's timeout; an exec that tries to pass its denied calls off as another's; kill -9 of
# the supervisor; a process an exec leaves behind reading the caller's terminal afterwards.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_lib.sh"

case_overlay_task() {
	trap stop_all EXIT
	mkdir -p proj && echo one >proj/a.txt && sleep 0.1
	before=$(snapshot proj)
	run_cmd "$AGENTBOX" session start --json -p shell --overlay "$CASE/proj" \
		--audit "$META/audit"
	assert_eq 0 "$RC" "session start --json"
	SID=$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	echo "$SID" >>"$META/sessions"
	changes=$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["changes"])')
	assert_exists "$changes" "the changes directory the JSON names"
	ex -- sh -c 'echo two >proj/a.txt && echo new >proj/b.txt'
	assert_eq 0 "$RC" "exec 1 writes"
	ex -- sh -c 'cat proj/a.txt proj/b.txt && echo three >proj/c.txt'
	assert_eq 0 "$RC" "exec 2 reads"
	assert_eq "two
new" "$OUT" "exec 2 sees exec 1's writes"
	ex -- cat proj/c.txt
	assert_eq three "$OUT" "exec 3 sees exec 2's write"
	assert_eq "$before" "$(snapshot proj)" "the host tree is untouched while the session runs"
	run_cmd "$AGENTBOX" promote "$SID"
	[ "$RC" != 0 ] || fail "promote went ahead while the session runs" "$(report)"
	run_cmd "$AGENTBOX" session stop "$SID"
	[ "$RC" = 0 ] || fail "session stop: $RC" "$(report; tail -n 4 "$META/audit")"
	assert_eq "$before" "$(snapshot proj)" "the host tree is untouched after stop"
	run_cmd "$AGENTBOX" diff "$SID"
	assert_eq 0 "$RC" "agentbox diff SESSION"
	assert_contains "$OUT" "b.txt" "diff shows exec 1's new file"
	assert_contains "$OUT" "c.txt" "diff shows exec 2's new file"
	run_cmd "$AGENTBOX" promote "$SID"
	assert_eq 0 "$RC" "agentbox promote SESSION"
	assert_eq "two" "$(cat proj/a.txt)" "promoted: a.txt"
	assert_eq "three" "$(cat proj/c.txt)" "promoted: c.txt"
	"$AGENTBOX" discard "$SID" >/dev/null 2>&1
	run_cmd "$AGENTBOX" audit verify "$META/audit"
	assert_eq 0 "$RC" "the session's trail verifies"
	run_cmd "$AGENTBOX" audit summary "$META/audit"
	assert_contains "$OUT" "exec 2" "audit summary has a row per exec"
	assert_eq 3 "$(grep -c '"event":"exec"' "$META/audit")" "three exec events"
	grep -q '"event":"session".*"action":"end".*"reason":"stop"' "$META/audit" ||
		fail "no session end event" "$(cat "$META/audit")"
}

case_background_server() {
	trap stop_all EXIT
	start -p python --net none --audit "$META/audit"
	ex -- sh -c 'nohup python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &'
	assert_eq 0 "$RC" "the exec that starts the server"
	ex -- python3 -c '
import time, urllib.request
for i in range(50):
    try:
        print(urllib.request.urlopen("http://127.0.0.1:8765/").status); break
    except OSError:
        time.sleep(0.1)'
	assert_eq 0 "$RC" "the next exec's request"
	assert_eq 200 "$OUT" "the server started by an earlier exec answers"
	# control: a fresh sandbox has no such server
	run_cmd "$AGENTBOX" -p python --net none -- python3 -c '
import urllib.request
urllib.request.urlopen("http://127.0.0.1:8765/")'
	[ "$RC" != 0 ] || fail "a plain run reached the session's server" "$(report)"
}

case_concurrent() {
	trap stop_all EXIT
	start -p shell
	# a barrier, not a stopwatch: each exec marks that it runs, then waits (30 s at most) until
	# all four have; execs taken one after the other would each wait alone and say so. Timing
	# four sleeps failed under memcheck, where each client alone starts slowly.
	for i in 1 2 3 4; do
		"$AGENTBOX" exec "$SID" -- sh -c 'touch "bar-$1"; n=0
			while [ "$(ls bar-* | wc -l)" -lt 4 ]; do
				n=$((n + 1)); [ "$n" -lt 600 ] || { echo "alone-$1"; exit 1; }; sleep 0.05
			done; echo "out-$1"' sh "$i" >"$META/c$i" 2>&1 &
	done
	wait
	for i in 1 2 3 4; do
		assert_eq "out-$i" "$(cat "$META/c$i")" "exec $i ran while the other three ran"
	done
}

case_status_signals_stdin() {
	trap stop_all EXIT
	start -p shell
	ex -- sh -c 'exit 3'
	assert_eq 3 "$RC" "exit status"
	ex -- sh -c 'kill -TERM $$'
	assert_eq 143 "$RC" "death by a signal: 128+N"
	ex -- /nonexistent
	assert_eq 127 "$RC" "command not found"
	ex --timeout 1s -- sleep 30
	assert_eq 124 "$RC" "exec --timeout"
	ex --env GREETING=hello --cwd /tmp -- sh -c 'echo "$GREETING $(pwd)"'
	assert_eq "hello /tmp" "$OUT" "--env and --cwd"
	printf 'line 1\nline 2\n' >"$META/in"
	OUT=$("$AGENTBOX" exec "$SID" -- sh -c 'cat; echo err >&2' <"$META/in" 2>"$META/err2")
	assert_eq "line 1
line 2" "$OUT" "stdin and stdout pass through"
	assert_eq err "$(cat "$META/err2")" "stderr passes through"
	# a directory as stdin would be a way past the view (openat): refused; control: a file
	"$AGENTBOX" exec "$SID" -- cat </ >/dev/null 2>"$META/err3"
	assert_eq 125 "$?" "a directory passed as stdin"
	assert_contains "$(cat "$META/err3")" "not directories" "the refusal"
	OUT=$("$AGENTBOX" exec "$SID" -- cat <"$META/in")
	assert_eq "line 1
line 2" "$OUT" "control: a file as stdin"
	# a signal to the client reaches the command (which reports it), as with a plain run
	# (SIGINT would not do: a shell starts its background jobs with SIGINT ignored)
	# (sent once the command runs: a client still starting, under memcheck, would die of it)
	"$AGENTBOX" exec "$SID" -- sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready; sleep 20 & wait' \
		>"$META/sig" 2>&1 &
	pid=$!
	wait_for_file "$META/sig" 30 || fail "the command did not start"
	kill -USR1 "$pid"
	wait "$pid"
	rc=$?
	assert_eq 7 "$rc" "the command's status after the forwarded SIGUSR1"
	assert_eq "ready
got-usr1" "$(cat "$META/sig")" "the command got SIGUSR1"
	# the command says it got the signal, then dies of it (a client killed by SIGTERM before it
	# forwards would also give 143, and the session would end the command without a word)
	"$AGENTBOX" exec "$SID" -- sh -c 'trap "echo got-term; trap - TERM; kill -TERM \$\$" TERM
		echo ready; sleep 20 & wait' >"$META/term" 2>&1 &
	pid=$!
	wait_for_file "$META/term" 30 || fail "the command did not start"
	kill -TERM "$pid"
	wait "$pid"
	assert_eq 143 "$?" "SIGTERM forwarded: the command died of it"
	assert_eq "ready
got-term" "$(cat "$META/term")" "the command got SIGTERM"
}

case_socket_from_inside() {
	trap stop_all EXIT
	start -p shell --rw /tmp --ro "$(dirname "$PY")"
	sock="$RUNDIR/$SID.sock"
	[ -S "$sock" ] || fail "control: no socket at $sock outside"
	connect='import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1]); print("connected")
except OSError as e:
    print("refused", e.errno)'
	run_cmd "$PY" -c "$connect" "$sock"
	assert_eq connected "$OUT" "control: the owner connects from outside"
	ex -- "$PY" -c "$connect" "$sock"
	assert_contains "$OUT" refused "a command inside connects to the control socket"
	ex -- sh -c "ls -A '$RUNDIR' 2>&1; test -e '$sock' && echo visible"
	assert_not_contains "$OUT" "$SID" "the session directory's entries inside"
	assert_not_contains "$OUT" visible "the socket inside"
	ex -- ls -A /tmp
	assert_eq 0 "$RC" "control: /tmp is visible inside"
	# another pid namespace with the owner's uid (what a sandbox's process is) is refused
	# even with the socket in reach
	if unshare --user --map-current-user --pid --fork true 2>/dev/null; then
		run_cmd unshare --user --map-current-user --pid --fork --mount-proc \
			"$AGENTBOX" exec "$SID" -- true
		assert_eq 125 "$RC" "exec from another pid namespace"
		assert_contains "$ERR" "pid namespace" "the refusal's reason"
		grep -q . "$META/audit" 2>/dev/null || true
	fi
	ex -- true
	assert_eq 0 "$RC" "control: exec from the owner's namespace"
}

case_start_inside() {
	trap stop_all EXIT
	start -p shell --ro "$(dirname "$AGENTBOX_BIN")" --ro "$AGENTBOX_PROFILES"
	ex -- "$AGENTBOX_BIN" session start -p "$AGENTBOX_PROFILES/minimal.ini"
	assert_eq 125 "$RC" "session start from inside a session"
	assert_contains "$ERR" "user namespace" "the reason session start fails inside"
	ex -- "$AGENTBOX_BIN" session list
	assert_not_contains "$OUT" "$SID" "the outer session seen from inside"
	run_cmd "$AGENTBOX" exec "$SID" -- "$AGENTBOX_BIN" exec "$SID" -- true
	assert_eq 125 "$RC" "exec into the outer session from inside"
	assert_contains "$ERR" "no live session" "the outer session's socket from inside"
	ex -- "$AGENTBOX_BIN" --version
	assert_eq 0 "$RC" "control: the binary runs inside"
}

# info_raw SOCKET: a raw INFO request; prints the reply's type, errno and text.
INFO_PY='import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect-failed", e.errno); sys.exit(0)
hdr = struct.pack("=IIiIQII", 0x41425831, 3, 0, 0, 0, 0, 0)
try:
    s.send(bytes(1036) + hdr)
except OSError:  # a refusing supervisor may have closed already: its reply is queued
    pass
try:
    r = s.recv(70000)
except ConnectionResetError:  # the reply is still queued behind the reset
    r = s.recv(70000)
t, v = struct.unpack("=ii", r[:8])
print(t, v, r[12:1036].split(b"\0")[0].decode())'

case_other_user() {
	trap stop_all EXIT
	[ "$(id -u)" = 0 ] || not_applicable "needs root to act as a second user"
	id agentbox-test >/dev/null 2>&1 || not_applicable "no user agentbox-test"
	other_user session-other
	start -p shell
	run_cmd as_test "$AGENTBOX_BIN" exec "$SID" -- true
	assert_eq 125 "$RC" "agentbox-test execs into root's session"
	run_cmd as_test "$PY" -c "$INFO_PY" "$RUNDIR/$SID.sock"
	assert_contains "$OUT" "connect-failed 13" "agentbox-test connects to root's socket"
	run_cmd "$PY" -c "$INFO_PY" "$RUNDIR/$SID.sock"
	assert_contains "$OUT" "103 0" "control: root's INFO request to its own session"
	# the other way: agentbox-test's session, root by id and by path
	run_cmd as_test "$AGENTBOX_BIN" session start -p shell
	assert_eq 0 "$RC" "agentbox-test starts a session"
	tsid=$OUT
	trap 'stop_all; as_test "$AGENTBOX_BIN" session stop "$tsid" >/dev/null 2>&1' EXIT
	tsock=/tmp/agentbox-$tu/$tsid.sock
	run_cmd "$AGENTBOX" exec "$tsid" -- true
	assert_eq 125 "$RC" "root execs into agentbox-test's session by id"
	run_cmd "$PY" -c "$INFO_PY" "$tsock"
	assert_contains "$OUT" "102 1 another user" "root's request on agentbox-test's socket"
	run_cmd as_test "$AGENTBOX_BIN" exec "$tsid" -- true
	assert_eq 0 "$RC" "control: agentbox-test execs into its own session"
	run_cmd as_test "$AGENTBOX_BIN" session stop "$tsid"
	assert_eq 0 "$RC" "agentbox-test stops its session"
}

case_survive_stop() {
	trap stop_all EXIT
	m=agentbox-marker-$$-$RANDOM
	start -p shell
	ex -- sh -c "setsid sh -c 'sleep 300; true' $m-a >/dev/null 2>&1 </dev/null & \
		(sh -c 'sleep 301; true' $m-b >/dev/null 2>&1 </dev/null &) ; \
		nohup sh -c 'sleep 302; true' $m-c >/dev/null 2>&1 </dev/null &"
	assert_eq 0 "$RC" "the exec leaving processes behind"
	sleep 0.3
	for s in a b c; do
		pgrep -f "$m-$s" >/dev/null || fail "control: $m-$s did not outlive its exec"
	done
	run_cmd "$AGENTBOX" session stop "$SID"
	assert_eq 0 "$RC" "session stop"
	gone "$m" || fail "a process outlived session stop: $(pgrep -af "$m")"
	run_cmd "$AGENTBOX" exec "$SID" -- true
	assert_eq 125 "$RC" "exec into a stopped session"
}

# A protected path that appears in the session's rw tree ends the session (reason
# protected-path), renamed aside; control: an ordinary file in the same tree does not.
case_protected_path_ends() {
	trap stop_all EXIT
	start -p shell --audit "$META/audit"
	ex -- sh -c 'echo fine >ordinary && echo OK'
	assert_eq OK "$OUT" "control: an ordinary write in the session"
	run_cmd "$AGENTBOX" session list
	assert_contains "$OUT" "$SID" "control: the session lives on"
	run_cmd "$AGENTBOX" exec "$SID" -- sh -c 'echo evil >.npmrc; sleep 5; echo NOT-STOPPED'
	assert_not_contains "$OUT" NOT-STOPPED "the exec was stopped"
	for ((i = 0; i < 100; i++)); do
		grep -q '"reason":"protected-path"' "$META/audit" && break
		sleep 0.1
	done
	grep -q '"reason":"protected-path"' "$META/audit" || fail "no session end with reason protected-path" "$(cat "$META/audit")"
	assert_contains "$(cat "$META/audit")" '"event":"protect"' "a protect event"
	assert_absent "$CASE/.npmrc" ".npmrc on the host"
	[ -e "$CASE/.npmrc.agentbox-refused" ] || fail "not renamed aside" "$(ls -A "$CASE")"
}

case_session_timeout() {
	trap stop_all EXIT
	m=agentbox-marker-$$-$RANDOM
	# under memcheck starting and listing take seconds: a timeout long enough to see it live
	local limit=2
	under_memcheck && limit=15
	cat >to.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		session-timeout = ${limit}s
	EOF
	start -p ./to.ini --audit "$META/audit"
	ex -- sh -c "setsid sh -c 'sleep 300; true' $m >/dev/null 2>&1 </dev/null &"
	sleep 0.3
	pgrep -f "$m" >/dev/null || fail "control: the background process did not start"
	run_cmd "$AGENTBOX" session list
	assert_contains "$OUT" "$SID" "control: the session is live before its timeout"
	sleep "$limit.5"
	gone "$m" || fail "a process outlived the session timeout"
	run_cmd "$AGENTBOX" session list
	assert_not_contains "$OUT" "$SID" "the session after its timeout"
	# the supervisor writes it as it ends the session, which a loaded machine may still be doing
	for ((i = 0; i < 100; i++)); do
		grep -q '"limit":"session-timeout"' "$META/audit" && break
		sleep 0.1
	done
	grep -q '"limit":"session-timeout"' "$META/audit" || fail "no session-timeout limit event"
	cat >idle.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		idle-timeout = $((limit / 2))s
	EOF
	start -p ./idle.ini
	ex -- sleep "$((limit / 2)).5"
	assert_eq 0 "$RC" "an exec longer than the idle timeout (not idle while it runs)"
	sleep "$limit"
	run_cmd "$AGENTBOX" exec "$SID" -- true
	assert_eq 125 "$RC" "exec after the idle timeout"
}

case_attribution() {
	trap stop_all EXIT
	start -p shell --audit "$META/audit"
	# exec 1 makes a denied call, and stays
	"$AGENTBOX" exec "$SID" -- sh -c 'unshare -U true 2>/dev/null; sleep 3' &
	sleep 0.5
	# exec 2: one call of its own, one from a process that left it (setsid, double fork)
	ex -- sh -c '(setsid sh -c "sleep 0.5; unshare -U true 2>/dev/null" &); unshare -U true 2>/dev/null; sleep 1.5'
	wait
	run_cmd "$AGENTBOX" session stop "$SID"
	ev=$(grep '"event":"syscall"' "$META/audit" | grep '"name":"unshare"')
	assert_eq 1 "$(printf '%s\n' "$ev" | grep -c '"exec":1[,}]')" "events of exec 1"
	assert_eq 1 "$(printf '%s\n' "$ev" | grep -c '"exec":2[,}]')" "events of exec 2"
	assert_eq 1 "$(printf '%s\n' "$ev" | grep -c '"exec":"session"')" \
		"the orphan's event names the session, not an exec"
}

# Connections are attributed too: the proxy finds the process holding the other end. Exec 1
# (still running) and exec 2 each ask for a host of their own; exec 1's background process
# asks again after exec 1 ended: the session's.
case_net_attribution() {
	trap stop_all EXIT
	start -p shell --net proxy --allow allowed.test --audit "$META/audit"
	ask='curl -sS -o /dev/null --max-time 5 -x "$http_proxy" http://$1/'
	"$AGENTBOX" exec "$SID" -- sh -c "$ask; sleep 1.5" sh one.test &
	sleep 0.7
	ex --result "$META/two.json" -- sh -c "$ask" sh two.test
	wait
	# a connection is no refused system call (the exec's count is of those)
	assert_contains "$(cat "$META/two.json")" '"denials":{"syscall":0}' "exec 2's result"
	ex -- sh -c "(setsid sh -c 'sleep 0.5; $ask' sh three.test &)"
	sleep 1.5
	run_cmd "$AGENTBOX" session stop "$SID"
	for want in 'one.test.*"exec":1[,}]' 'two.test.*"exec":2[,}]' 'three.test.*"exec":"session"'; do
		grep '"event":"net"' "$META/audit" | grep -q "$want" ||
			fail "no net event matching $want" "$(grep '"event":"net"' "$META/audit")"
	done
}

case_kill_supervisor() {
	trap stop_all EXIT
	m=agentbox-marker-$$-$RANDOM
	start -p shell
	ex -- sh -c "setsid sh -c 'sleep 300; true' $m >/dev/null 2>&1 </dev/null &"
	sleep 0.3
	pgrep -f "$m" >/dev/null || fail "control: the background process did not start"
	pid=$(supervisor_pid)
	[ -n "$pid" ] || fail "the supervisor's pid is not in session list --json"
	"$AGENTBOX" exec "$SID" --result "$META/k.json" -- sh -c "echo >'$CASE/k.started'; sleep 30" &
	c=$!
	# killed once the exec runs (a fixed pause lost the race under memcheck)
	wait_for_file "$CASE/k.started" 60 || fail "control: the exec did not start"
	kill -KILL "$pid"
	wait "$c"
	assert_eq 125 "$?" "an exec whose supervisor was killed"
	assert_contains "$(cat "$META/k.json")" '"cause":"session-ended"' "its --result"
	gone "$m" || fail "a process of the session outlived its supervisor: $(pgrep -af "$m")"
	run_cmd "$AGENTBOX" session list
	assert_not_contains "$OUT" "$SID" "session list after the supervisor died"
}

# A refused peer that has already hung up when the supervisor gets to it (found in CI: the
# supervisor spun on the hang-up and every later exec hung); and a client whose session does
# not answer still dies of a signal (timeout(1) ends it) instead of forwarding it to nothing.
case_refused_peer_gone() {
	trap 'kill -CONT "$pid" 2>/dev/null; stop_all' EXIT
	start -p shell
	sock="$RUNDIR/$SID.sock"
	pid=$(supervisor_pid)
	[ -n "$pid" ] || fail "the supervisor's pid is not in session list --json"
	kill -STOP "$pid"
	run_cmd unshare --user --map-current-user --pid --fork "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1]); s.send(b"x"); s.close(); print("closed")' "$sock"
	assert_eq closed "$OUT" "control: a peer from another pid namespace connected and left"
	run_cmd timeout 2 "$AGENTBOX" exec "$SID" -- true
	assert_eq 124 "$RC" "timeout(1) on an exec into a session that does not answer"
	# a terminal's resize meanwhile is no reason to end (SIGWINCH's default is to ignore it)
	"$AGENTBOX" exec "$SID" -- true &
	c=$!
	sleep 0.3
	kill -WINCH "$c"
	sleep 0.2
	kill -0 "$c" 2>/dev/null || fail "exec ended on a SIGWINCH before its command started"
	kill -TERM "$c"
	wait "$c"
	assert_eq 143 "$?" "exec's status after SIGTERM before its command started"
	kill -CONT "$pid"
	ex -- echo alive
	assert_eq alive "$OUT" "an exec after the refused peer"
	cpu=$(ps -o time= -p "$pid")
	sleep 1
	assert_eq "$cpu" "$(ps -o time= -p "$pid")" "the supervisor's CPU time while idle"
}

# `diff` of a live session reads the upper layer outside while a command of the session keeps
# swapping a changed file for a symlink to a host file (and for a FIFO): the host file's
# content never shows, and diff never hangs. Control: the same diff shows the file's own lines.
case_diff_live_swap() {
	trap stop_all EXIT
	mkdir -p "$CASE/w" "$META/host"
	secret=host-secret-$RANDOM$RANDOM
	echo "$secret" >"$META/host/secret"
	start -p shell --overlay "$CASE/w"
	ex -- sh -c "cd '$CASE/w' && echo start >f && (setsid sh -c 'while :; do
		ln -sf $META/host/secret t; mv -T t f; echo mine >t; mv -T t f
		rm -f p; mkfifo p; mv -T p f; echo mine >t; mv -T t f; done' >/dev/null 2>&1 &)"
	seen=
	for i in $(seq 40); do
		run_cmd timeout 20 "$AGENTBOX" diff "$SID"
		[ "$RC" != 124 ] || fail "diff hung on the live session"
		assert_not_contains "$OUT" "$secret" "the host file's content in diff's output"
		case $OUT in *"+mine"*) seen=1 ;; esac
	done
	[ -n "$seen" ] || fail "control: diff never showed the file's own line" "$(report)"
}

# in_tty MARKER DELAY TEXT CMD...: CMD on a terminal of its own (a new pty: its controlling
# terminal, stdin, stdout and stderr, as a login shell has); once MARKER shows in what it
# prints, waits DELAY seconds and types TEXT. OUT: what the terminal showed (no CR), then
# "status=N" (N "killed" when CMD still ran after 30 s).
TTY_PY='import os, pty, select, sys, time
marker, delay, text = sys.argv[1].encode(), float(sys.argv[2]), sys.argv[3].encode()
argv = sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
seen, typed, status, end = b"", False, None, time.monotonic() + 30
while status is None and time.monotonic() < end:
    if select.select([fd], [], [], 0.1)[0]:
        try:
            seen += os.read(fd, 4096)
        except OSError:  # EIO: no process holds the terminal any more
            time.sleep(0.1)
    if not typed and marker in seen:
        time.sleep(delay)
        os.write(fd, text)
        typed = True
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(st)
        while select.select([fd], [], [], 0.3)[0]:  # what is still on its way
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
if status is None:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    status = "killed"
sys.stdout.write(seen.replace(b"\r", b"").decode(errors="replace") + "\nstatus=%s\n" % status)'

in_tty() {
	run_cmd "$PY" -c "$TTY_PY" "$@"
}

# The caller's terminal is the exec's while the exec runs, and not after: an exec given a
# terminal gets a pty of its own, relayed by agentbox exec and hung up when the exec returns,
# so a process it leaves behind in the session reads EOF instead of what the user types next
# (a sudo password), and cannot write into the terminal either; with --result as well. Controls:
# while the exec runs, it is on a terminal (isatty), a foreground reader of it gets the line
# typed and ^C reaches it. MCP's run gets no terminal, even from a server whose stderr is one.
case_terminal_after_exec() {
	trap stop_all EXIT
	# SIGINT as a terminal's shell has it (run_cmd's background jobs start with it ignored,
	# and the session's processes would keep that)
	run_cmd env --default-signal=INT "$AGENTBOX" session start -p shell
	SID=$OUT
	[[ $SID =~ ^[0-9a-f]{32}$ ]] || fail "session start printed '$SID', not an id" "$(report)"
	echo "$SID" >>"$META/sessions"
	in_tty in-tty 0 $'hello\r' "$AGENTBOX" exec "$SID" -- \
		sh -c 'test -t 0 && test -t 1 && echo in-tty; read l; echo "exec-got:$l"'
	assert_contains "$OUT" "in-tty" "control: the exec's stdin and stdout are a terminal"
	assert_contains "$OUT" "exec-got:hello" "control: the exec's reader gets the line typed"
	assert_contains "$OUT" "status=0" "control: the exec's status"
	in_tty ready 0.2 $'\003' "$AGENTBOX" exec "$SID" -- \
		sh -c 'trap "echo got-int; exit 5" INT; echo ready; while :; do sleep 0.1; done'
	assert_contains "$OUT" "got-int" "control: ^C on the terminal reaches the exec"
	assert_contains "$OUT" "status=5" "control: the exec's status after ^C"
	for r in "" --result; do
		secret=typed-secret-$RANDOM$RANDOM
		# the user's shell: the exec, then (the leftover reading meanwhile) a line typed for it;
		# the leftover gets the exec's stdin (sh would give a background job /dev/null)
		in_tty exec-returned 1 "$secret"$'\r' bash -c '"$@"; echo exec-returned; sleep 2
			read -r -t 5 l; echo "shell-got:$l"' bash "$AGENTBOX" exec "$SID" \
			${r:+--result "$META/left.json"} -- sh -c 'exec 3<&0; setsid sh -c "sleep 0.5
			echo leftover-wrote; cat >left$1.out; echo ended >left$1.ended" <&3 &' sh "$r"
		wait_for_file "left$r.ended" 5 ||
			fail "the leftover's read of the terminal did not end after the exec$r" "$(report)"
		assert_exists "left$r.out" "control: the leftover ran after the exec$r returned"
		assert_eq "" "$(cat "left$r.out")" "what the leftover read after the exec$r returned"
		assert_contains "$OUT" "shell-got:$secret" "the line typed after the exec$r, in the shell"
		assert_not_contains "$OUT" "leftover-wrote" "the leftover's write into the terminal"
		assert_contains "$OUT" "status=0" "the shell's status"
	done
	assert_contains "$(cat "$META/left.json")" '"status":0' "--result of the exec"
	MCP_PY='import os, pty, sys
sys.path.insert(0, sys.argv[1])
from mcp_client import Server
master, slave = pty.openpty()
os.environ["MCP_STDERR"] = os.ttyname(slave)
s = Server(sys.argv[2], ["-p", "shell"])
s.initialize()
_, sc = s.run({"command": ["sh", "-c", "for f in 0 1 2; do test -t $f && echo tty$f; done; echo checked"]})
print(sc["stdout"], end="")
s.close()'
	run_cmd "$PY" -c "$MCP_PY" "$HELPERS" "$AGENTBOX"
	assert_eq checked "$OUT" "MCP run's stdio, from a server on a terminal"
}

case_bad_ids() {
	for id in ../../etc/passwd 0123 "$(printf 'a%.0s' $(seq 32))X" \
		"$(printf 'A%.0s' $(seq 32))"; do
		run_cmd "$AGENTBOX" exec "$id" -- true
		assert_eq 125 "$RC" "exec into '$id'"
		assert_contains "$ERR" "not a session id" "the refusal of '$id'"
	done
	run_cmd "$AGENTBOX" session start -p shell -- true
	assert_eq 125 "$RC" "session start with a command"
}

# session_socket: the control socket of session $SID, from session list --json.
session_socket() {
	"$AGENTBOX" session list --json | "$PY" -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if d["id"] == sys.argv[1]: print(d["socket"])' "$SID"
}

# FLOOD_PY SOCKET N: N connections from here, each closed at once (from another pid namespace:
# every one refused).
FLOOD_PY='import socket, sys
for i in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.close()
print("flooded")'

# refused_tally: the refusals the trail $META/audit accounts for (events one by one plus the
# counts of the summing ones), the number of refused events, and the trail's size in bytes.
refused_tally() {
	"$PY" -c '
import json, os, sys
n = lines = 0
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("event") == "session" and d.get("action") == "refused":
        lines += 1
        n += d.get("count", 1)
print(n, lines, os.path.getsize(sys.argv[1]))' "$META/audit"
}

# Another sandbox that can reach a session's socket floods it with connections: each is
# refused (another pid namespace), and the trail stays small: the first few are written one by
# one, the rest summed up, none lost. An exec during and after the flood works (control).
case_refused_flood() {
	trap stop_all EXIT
	unshare --user --map-current-user --pid --fork true 2>/dev/null ||
		not_applicable "no unprivileged user and pid namespaces to connect from"
	local n_flood=5000
	# under memcheck every refusal costs the supervisor tens of times more: fewer, and no clock
	under_memcheck && n_flood=500
	start -p shell --audit "$META/audit"
	sock=$(session_socket)
	[ -S "$sock" ] || fail "no control socket in session list --json: '$sock'"
	unshare --user --map-current-user --pid --fork "$PY" -c "$FLOOD_PY" "$sock" "$n_flood" \
		>"$META/flood" 2>&1 &
	flood=$!
	sleep 0.05
	t0=$(date +%s%N)
	ex -- echo during
	t1=$(date +%s%N)
	assert_eq during "$OUT" "an exec during the flood"
	under_memcheck || [ $(((t1 - t0) / 1000000)) -lt 10000 ] ||
		fail "an exec during the flood took $(((t1 - t0) / 1000000)) ms"
	wait "$flood"
	assert_eq flooded "$(cat "$META/flood")" "control: the flood's connections were made"
	# after every refused connection (the listener's queue is in order)
	ex -- echo after
	assert_eq after "$OUT" "an exec after the flood"
	run_cmd "$AGENTBOX" session stop "$SID"
	assert_eq 0 "$RC" "session stop"
	read -r n lines bytes <<<"$(refused_tally)"
	assert_eq "$n_flood" "$n" "refusals the trail accounts for"
	[ "$lines" -le 40 ] || fail "$lines refused events for $n_flood refusals (at most 40)"
	[ "$bytes" -le 65536 ] || fail "the trail grew to $bytes bytes for $n_flood refusals"
	grep -q '"action":"refused","repeat":true' "$META/audit" ||
		fail "no summing refused event" "$(grep refused "$META/audit" | tail -n 3)"
	run_cmd "$AGENTBOX" audit verify "$META/audit"
	assert_eq 0 "$RC" "the trail verifies"
}

# Refusals count against [audit] event-budget: past it, none is written, the exit event
# counts them as suppressed, and the session's own end is still written (control).
case_refused_budget() {
	trap stop_all EXIT
	unshare --user --map-current-user --pid --fork true 2>/dev/null ||
		not_applicable "no unprivileged user and pid namespaces to connect from"
	printf '[sandbox]\ninclude = %s/shell.ini\n[audit]\nevent-budget = 4\n' \
		"$AGENTBOX_PROFILES" >budget.ini
	start -p ./budget.ini --audit "$META/audit"
	sock=$(session_socket)
	run_cmd unshare --user --map-current-user --pid --fork "$PY" -c "$FLOOD_PY" "$sock" 6
	assert_eq flooded "$OUT" "control: six refused connections made"
	ex -- echo after
	assert_eq after "$OUT" "an exec after the refusals"
	run_cmd "$AGENTBOX" session stop "$SID"
	read -r n lines bytes <<<"$(refused_tally)"
	[ "$lines" -le 3 ] || fail "$lines refused events written past an event budget of 4"
	grep -q '"limit":"audit-events","of":"session"' "$META/audit" ||
		fail "no audit-events limit for the session's refusals" "$(cat "$META/audit")"
	grep '"event":"exit"' "$META/audit" | grep -q '"suppressed":{"session":[1-9]' ||
		fail "the exit event does not count the refusals past the budget" \
			"$(grep '"event":"exit"' "$META/audit")"
	grep -q '"event":"session".*"action":"end"' "$META/audit" ||
		fail "control: no session end event"
}

# A profile's [limits] timeout is the most an exec gets: exec --timeout 1h is lowered to it;
# control: a shorter --timeout lowers it further. The exec events say what applied.
case_timeout_cap() {
	trap stop_all EXIT
	printf '[sandbox]\ninclude = %s/shell.ini\n[limits]\ntimeout = 2s\n' \
		"$AGENTBOX_PROFILES" >cap.ini
	start -p ./cap.ini --audit "$META/audit"
	t0=$(date +%s%N)
	ex --timeout 1h -- sleep 30
	t1=$(date +%s%N)
	assert_eq 124 "$RC" "exec --timeout 1h under a profile timeout of 2 s"
	ms=$(((t1 - t0) / 1000000))
	[ "$ms" -ge 1500 ] && [ "$ms" -lt 8000 ] || fail "exec --timeout 1h ended after $ms ms"
	ex --timeout 1s -- sleep 30
	assert_eq 124 "$RC" "control: exec --timeout 1s"
	ex -- sleep 30
	assert_eq 124 "$RC" "exec without --timeout"
	ex --timeout 1h -- true
	assert_eq 0 "$RC" "control: a short command under --timeout 1h"
	run_cmd "$AGENTBOX" session stop "$SID"
	timeouts='import json, sys
print(" ".join(str(d.get("timeout_ms")) for d in map(json.loads, open(sys.argv[1]))
               if d.get("event") == sys.argv[2]))'
	assert_eq "2000 1000 2000 2000" "$("$PY" -c "$timeouts" "$META/audit" exec)" \
		"the exec events' timeout_ms"
	assert_eq "2000 1000 2000" "$("$PY" -c "$timeouts" "$META/audit" limit)" \
		"the timeout limit events' timeout_ms"
}

# Without XDG_RUNTIME_DIR a session's socket is in /tmp/agentbox-UID. Another user who makes
# that directory first (open to all, or a symlink to a directory open to all) must not stop
# the user's sessions, nor get their sockets: sessions start, exec, list and stop from a
# private directory of the user's, and nothing is made in or through the planted one. A spare
# uid plays the user (agentbox-test's own directory may be in use by other runs).
case_planted_rundir() {
	trap 'stop_spare; stop_all' EXIT
	[ "$(id -u)" = 0 ] || not_applicable "needs root to plant a directory as another user"
	su=
	for u in $(seq 62000 62999); do
		getent passwd "$u" >/dev/null || [ -e "/tmp/agentbox-$u" ] ||
			compgen -G "/tmp/agentbox-$u.*" >/dev/null || pgrep -U "$u" >/dev/null ||
			{ su=$u; break; }
	done
	[ -n "$su" ] || fail "no spare uid in 62000-62999"
	shome=$(mktemp -d /tmp/agentbox-session-spare.XXXXXX)
	remove_later "$shome"
	remove_later "/tmp/agentbox-$su"
	chown "$su:$su" "$shome"
	as_spare() {
		setpriv --reuid="$su" --regid="$su" --clear-groups \
			env -i HOME="$shome" PATH=/usr/bin:/bin \
			AGENTBOX_PROFILE_PATH="$AGENTBOX_PROFILE_PATH" \
			sh -c 'cd "$HOME" && exec "$@"' sh "$@"
	}
	stop_spare() {
		local s
		for s in $SPARE_SIDS; do
			as_spare timeout -s KILL 20 "$AGENTBOX_BIN" session stop "$s" >/dev/null 2>&1
		done
		rm -rf "/tmp/agentbox-$su" /tmp/agentbox-"$su".*
	}
	SPARE_SIDS=
	as_spare test -x "$AGENTBOX_BIN" || not_applicable "uid $su cannot run $AGENTBOX_BIN"
	# control: nothing planted, the usual directory
	run_cmd as_spare "$AGENTBOX_BIN" session start -p shell
	assert_eq 0 "$RC" "control: session start with nothing planted"
	SPARE_SIDS=$OUT
	[ -S "/tmp/agentbox-$su/$OUT.sock" ] || fail "control: no socket in /tmp/agentbox-$su"
	stop_spare
	# what a symlink points at: a directory the user could write in, were it followed
	open=$(mktemp -d /tmp/agentbox-session-open.XXXXXX) && chmod 1777 "$open" ||
		fail "mktemp"
	remove_later "$open"
	for plant in dir symlink; do
		if [ $plant = dir ]; then
			mkdir "/tmp/agentbox-$su" && chown "$((su + 1)):$((su + 1))" "/tmp/agentbox-$su" &&
				chmod 777 "/tmp/agentbox-$su" || fail "cannot plant /tmp/agentbox-$su"
			target=/tmp/agentbox-$su
		else
			ln -s "$open" "/tmp/agentbox-$su" || fail "cannot plant the symlink"
			target=$open
		fi
		run_cmd as_spare "$AGENTBOX_BIN" session start -p shell
		assert_eq 0 "$RC" "session start with a planted $plant"
		sid=$OUT
		SPARE_SIDS=$sid
		run_cmd as_spare "$AGENTBOX_BIN" exec "$sid" -- echo works
		assert_eq works "$OUT" "exec with a planted $plant"
		run_cmd as_spare "$AGENTBOX_BIN" session list
		assert_contains "$OUT" "$sid" "session list with a planted $plant"
		run_cmd as_spare "$AGENTBOX_BIN" session stop "$sid"
		assert_eq 0 "$RC" "session stop with a planted $plant"
		run_cmd as_spare "$AGENTBOX_BIN" session list
		assert_not_contains "$OUT" "$sid" "session list after the stop"
		assert_eq "" "$(find "$target" -mindepth 1)" "what the user made in the planted $plant"
		for d in /tmp/agentbox-"$su".*; do
			assert_eq "700 $su" "$(stat -c '%a %u' "$d")" "the directory used instead ($d)"
		done
		stop_spare
	done
}

# An exec whose client is killed (kill -9: no signal forwarded) takes its command with it, at
# once rather than at the command's own timeout; the session serves on. Control: the command
# ran while its client lived.
case_client_killed() {
	trap stop_all EXIT
	m=agentbox-marker-$$-$RANDOM
	start -p shell
	"$AGENTBOX" exec "$SID" -- sh -c "echo >'$CASE/c.started'; sleep 300; true $m" &
	c=$!
	wait_for_file "$CASE/c.started" 60 || fail "control: the exec did not start"
	pgrep -f "$m" >/dev/null || fail "control: the command does not run"
	kill -KILL "$c"
	wait "$c" 2>/dev/null
	local limit=10
	under_memcheck && limit=60
	gone "$m" "$limit" || fail "the command outlived its killed client by ${limit} s"
	ex -- echo still-serving
	assert_eq still-serving "$OUT" "the session after the client was killed"
}

run_case overlay_task case_overlay_task
run_case background_server case_background_server
run_case concurrent case_concurrent
run_case status_signals_stdin case_status_signals_stdin
run_case socket_from_inside case_socket_from_inside
run_case start_inside case_start_inside
run_case other_user case_other_user
run_case survive_stop case_survive_stop
run_case session_timeout case_session_timeout
run_case attribution case_attribution
run_case net_attribution case_net_attribution
run_case kill_supervisor case_kill_supervisor
run_case refused_peer_gone case_refused_peer_gone
run_case diff_live_swap case_diff_live_swap
run_case terminal_after_exec case_terminal_after_exec
run_case bad_ids case_bad_ids
run_case refused_flood case_refused_flood
run_case refused_budget case_refused_budget
run_case timeout_cap case_timeout_cap
run_case planted_rundir case_planted_rundir
run_case client_killed case_client_killed
run_case protected_path_ends case_protected_path_ends
finish

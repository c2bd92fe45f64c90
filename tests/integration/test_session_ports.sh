#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# A session's forwarded ports (`agentbox session port`): a server inside is reached from the host
# through the socket the command prints, which goes with --close, session stop and a killed
# supervisor's next session list; a bounded number of forwards, at most 64 connections open at
# once; a held connection keeps the session from being idle; pid 1 makes the server's socket in
# every network mode. Hostile, each with its control: the socket from a sandbox or a bare pid
# namespace that has it in reach, from another user (both ways); a port nothing listens on
# inside while the host's loopback does; a [seccomp] deny of connect.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_lib.sh"

# fetch SOCKET: GET / through a forwarded port's socket, retried while the server inside starts
# (until then each connection is closed at once); the body on stdout, status 1 after 10 s.
fetch() {
	local i
	for i in $(seq 50); do
		curl -sS --max-time 5 --unix-socket "$1" http://x/ 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# port_events: the trail's forwarded-port events, one line each: ACTION PORT and, for a
# connection, OUTCOME BYTES_OUT ERROR; for a forward's close, REASON CONNECTIONS.
port_events() {
	"$PY" -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    a = d.get("action", "")
    if d.get("event") != "session" or not a.startswith("port-"):
        continue
    if a == "port-connection":
        print(a, d["port"], d["outcome"], d["bytes_out"], d.get("error", ""))
    elif a == "port-close":
        print(a, d["port"], d["reason"], d["connections"])
    else:
        print(a, d["port"], d["socket"])' "$META/audit"
}

# A server a command started inside is reached from the host through the socket `session port`
# prints: its listing comes back, the same path is printed again, the trail has the forward and
# the connection. A port nothing listens on inside (one a server of the host listens on:
# control, the host's loopback answers) gives a connection closed at once and an event naming
# why. --close removes a socket (control: the other stays), session stop the rest. The number
# of forwards is bounded (control: the last one within the bound is made).
case_port_forward() {
	trap stop_all EXIT
	command -v curl >/dev/null || not_applicable "no curl on the host"
	start -p shell --audit "$META/audit"
	echo hello >port-marker.txt
	ex -- sh -c 'nohup python3 -m http.server --bind 127.0.0.1 8000 >/dev/null 2>&1 &'
	assert_eq 0 "$RC" "the exec that starts the server"
	run_cmd "$AGENTBOX" session port "$SID" 8000
	assert_eq 0 "$RC" "session port ID 8000"
	sock=$OUT
	assert_eq "$RUNDIR/$SID.port-8000.sock" "$sock" "the forward's socket"
	[ -S "$sock" ] || fail "no socket at $sock"
	assert_eq "600 $(id -u)" "$(stat -c '%a %u' "$sock")" "the socket's mode and owner"
	body=$(fetch "$sock") || fail "no answer from the server inside through $sock"
	assert_contains "$body" "port-marker.txt" "the listing of the server inside, from the host"
	run_cmd "$AGENTBOX" session port "$SID" 8000 --json
	assert_eq "{\"port\":8000,\"socket\":\"$sock\",\"open\":true}" "$OUT" \
		"a second session port for the same port, --json"
	serve host "$META"
	curl -sS --max-time 5 -o /dev/null "http://127.0.0.1:$PORT/" ||
		fail "control: the host's server on 127.0.0.1:$PORT"
	run_cmd "$AGENTBOX" session port "$SID" "$PORT"
	assert_eq 0 "$RC" "session port ID $PORT"
	sock1=$OUT
	t0=$(date +%s%N)
	run_cmd curl -sS --max-time 10 --unix-socket "$sock1" http://x/
	t1=$(date +%s%N)
	# closed at once: curl sees it while connecting (7), before its request went (55), before
	# (52) or after (56) it read
	case $RC in 7 | 52 | 55 | 56) ;; *)
		fail "curl through a port nothing listens on inside: expected no reply" "$(report)" ;;
	esac
	assert_eq "" "$OUT" "what a port nothing listens on answers"
	[ $(((t1 - t0) / 1000000)) -lt 3000 ] ||
		fail "the connection to a port nothing listens on took $(((t1 - t0) / 1000000)) ms to close"
	run_cmd "$AGENTBOX" session port "$SID" "$PORT" --close
	assert_eq 0 "$RC" "session port ID $PORT --close"
	assert_eq "" "$OUT" "what --close prints"
	assert_absent "$sock1" "port $PORT's socket after --close"
	[ -S "$sock" ] || fail "control: port 8000's socket after $PORT's --close"
	run_cmd "$AGENTBOX" session port "$SID" "$PORT" --close
	assert_eq 125 "$RC" "--close of a port not forwarded"
	assert_contains "$ERR" "port $PORT is not forwarded" "its reason"
	for p in $(seq 9001 9015); do
		run_cmd "$AGENTBOX" session port "$SID" "$p"
		assert_eq 0 "$RC" "control: forward $p (of at most 16)"
	done
	run_cmd "$AGENTBOX" session port "$SID" 9016
	assert_eq 125 "$RC" "a 17th forward"
	assert_contains "$ERR" "16 ports are forwarded already" "its reason"
	assert_absent "$RUNDIR/$SID.port-9016.sock" "the 17th forward's socket"
	for bad in 0 65536 80x -1; do
		run_cmd "$AGENTBOX" session port "$SID" "$bad"
		assert_eq 125 "$RC" "session port ID $bad"
		assert_contains "$ERR" "not a port number" "the refusal of $bad"
	done
	run_cmd "$AGENTBOX" session stop "$SID"
	assert_eq 0 "$RC" "session stop"
	assert_absent "$sock" "port 8000's socket after session stop"
	assert_eq "" "$(ls "$RUNDIR" | grep "^$SID\.")" "the session's sockets after session stop"
	ev=$(port_events)
	assert_contains "$ev" "port-open 8000 $sock" "the forward's event"
	printf '%s\n' "$ev" | grep -qE '^port-connection 8000 closed [1-9][0-9]* $' ||
		fail "no event of a connection that reached the server" "$ev"
	assert_contains "$ev" \
		"port-connection $PORT refused 0 nothing listens on 127.0.0.1:$PORT or [::1]:$PORT" \
		"the event of the connection nothing listened for"
	assert_contains "$ev" "port-close $PORT close 1" "the event of --close"
	printf '%s\n' "$ev" | grep -qE '^port-close 8000 session-end [1-9][0-9]*$' ||
		fail "no session-end close of port 8000" "$ev"
	run_cmd "$AGENTBOX" audit verify "$META/audit"
	assert_eq 0 "$RC" "the trail verifies"
}

# Who reaches a forward: its socket is hidden from the session's own view, like the control
# socket; a process of a sandbox (the owner's uid, another pid namespace) that has the socket in
# reach anyway, here a plain run with the directory bound, is refused and the trail says so, as
# is one from a bare pid namespace. Control: the owner, from outside, gets the listing.
case_port_peers() {
	trap stop_all EXIT
	command -v curl >/dev/null || not_applicable "no curl on the host"
	start -p shell --audit "$META/audit"
	echo hello >port-marker.txt
	ex -- sh -c 'nohup python3 -m http.server --bind 127.0.0.1 8000 >/dev/null 2>&1 &'
	run_cmd "$AGENTBOX" session port "$SID" 8000
	sock=$OUT
	body=$(fetch "$sock") || fail "control: no answer through $sock from outside"
	assert_contains "$body" "port-marker.txt" "control: the owner's request from outside"
	ex -- sh -c "ls -A '$RUNDIR' 2>&1; test -e '$sock' && echo visible"
	assert_not_contains "$OUT" "$SID" "the session directory's entries inside the session"
	assert_not_contains "$OUT" visible "the forward's socket inside the session"
	get='import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
r = b""
try:
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")  # a refused peer may be closed already: EPIPE
    while True:
        b = s.recv(65536)
        if not b:
            break
        r += b
except (BrokenPipeError, ConnectionResetError):
    pass
print("answer:%d" % len(r))'
	run_cmd "$AGENTBOX" -p shell --ro "$RUNDIR" -- python3 -c "$get" "$sock"
	assert_eq 0 "$RC" "control: the plain run reached the socket"
	assert_eq "answer:0" "$OUT" "what a sandbox's process gets through the forward"
	run_cmd "$PY" -c "$get" "$sock"
	[[ $OUT =~ ^answer:[1-9] ]] || fail "control: the same request from outside" "$(report)"
	if unshare --user --map-current-user --pid --fork true 2>/dev/null; then
		run_cmd unshare --user --map-current-user --pid --fork "$PY" -c "$get" "$sock"
		assert_eq "answer:0" "$OUT" "what a peer in another pid namespace gets"
	fi
	run_cmd "$AGENTBOX" session stop "$SID"
	refused=$(grep '"action":"refused"' "$META/audit")
	assert_contains "$refused" '"reason":"another pid namespace (inside a sandbox)","detail":"port 8000"' \
		"the refusal of the sandbox's process in the trail"
	# a refused peer's connection never went to pid 1: no connection event has its pid
	assert_eq "" "$("$PY" -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
refused = {d["pid"] for d in ev if d.get("action") == "refused"}
print(" ".join(str(d["pid"]) for d in ev
               if d.get("action") == "port-connection" and d["pid"] in refused))' "$META/audit")" \
		"connection events of refused peers"
}

# Another user: root's forward is out of reach of nobody (the directory is 0700), and when root
# reaches agentbox-test's forward (root passes the directory), the supervisor refuses it by uid.
# Controls: each owner's own request gets the listing.
case_port_other_user() {
	trap stop_all EXIT
	[ "$(id -u)" = 0 ] || not_applicable "needs root to act as a second user"
	id agentbox-test >/dev/null 2>&1 || not_applicable "no user agentbox-test"
	command -v curl >/dev/null || not_applicable "no curl on the host"
	start -p shell
	echo hello >port-marker.txt
	ex -- sh -c 'nohup python3 -m http.server --bind 127.0.0.1 8000 >/dev/null 2>&1 &'
	run_cmd "$AGENTBOX" session port "$SID" 8000
	sock=$OUT
	body=$(fetch "$sock") || fail "control: no answer through root's forward"
	assert_contains "$body" "port-marker.txt" "control: root's own request"
	connect='import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1]); print("connected")
except OSError as e:
    print("refused", e.errno)'
	run_cmd setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" -c "$connect" "$sock"
	assert_eq "refused 13" "$OUT" "nobody connects to root's forward"
	run_cmd "$PY" -c "$connect" "$sock"
	assert_eq connected "$OUT" "control: root connects to its forward"
	other_user port-other
	run_cmd as_test "$AGENTBOX_BIN" session start -p shell --audit "$thome/audit"
	assert_eq 0 "$RC" "agentbox-test starts a session"
	tsid=$OUT
	trap 'stop_all; as_test "$AGENTBOX_BIN" session stop "$tsid" >/dev/null 2>&1' EXIT
	run_cmd as_test "$AGENTBOX_BIN" exec "$tsid" -- sh -c \
		'echo hello >test-marker.txt; nohup python3 -m http.server --bind 127.0.0.1 8000 >/dev/null 2>&1 &'
	assert_eq 0 "$RC" "agentbox-test's server"
	run_cmd as_test "$AGENTBOX_BIN" session port "$tsid" 8000
	assert_eq 0 "$RC" "agentbox-test's forward"
	tsock=$OUT
	body=$(as_test sh -c 'for i in $(seq 50); do curl -sS --max-time 5 --unix-socket "$1" http://x/ 2>/dev/null && exit 0; sleep 0.2; done; exit 1' sh "$tsock") ||
		fail "control: agentbox-test's own request through its forward"
	assert_contains "$body" "test-marker.txt" "control: agentbox-test's listing"
	run_cmd curl -sS --max-time 5 --unix-socket "$tsock" http://x/
	[ "$RC" != 0 ] || fail "root's request through agentbox-test's forward" "$(report)"
	assert_not_contains "$OUT" "test-marker.txt" "what root got through agentbox-test's forward"
	run_cmd as_test "$AGENTBOX_BIN" session stop "$tsid"
	assert_eq 0 "$RC" "agentbox-test stops its session"
	assert_contains "$(cat "$thome/audit")" '"reason":"another user","detail":"port 8000","uid":0' \
		"root's refusal in agentbox-test's trail"
}

# pid 1 makes the server's socket in every network mode and under the strict seccomp preset;
# a profile whose [seccomp] deny names connect refuses pid 1's too, and the connection's event
# says so (control: the same server reached without it, above).
case_port_net_modes() {
	trap stop_all EXIT
	command -v curl >/dev/null || not_applicable "no curl on the host"
	printf '[sandbox]\ninclude = %s/shell.ini\n[seccomp]\npreset = strict\n' \
		"$AGENTBOX_PROFILES" >strict.ini
	printf '[sandbox]\ninclude = %s/shell.ini\n[seccomp]\ndeny = connect\n' \
		"$AGENTBOX_PROFILES" >noconnect.ini
	echo hello >port-marker.txt
	for how in "--net proxy" "--net host" "-p ./strict.ini" "-p ./noconnect.ini"; do
		# host: the server is on the host's loopback, at a port free there
		p=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		case $how in -p*) start $how --audit "$META/audit" ;; *) start -p shell $how --audit "$META/audit" ;; esac
		ex -- sh -c "nohup python3 -m http.server --bind 127.0.0.1 $p >/dev/null 2>&1 &"
		assert_eq 0 "$RC" "the server's exec ($how)"
		run_cmd "$AGENTBOX" session port "$SID" "$p"
		assert_eq 0 "$RC" "session port ($how)"
		sock=$OUT
		if [ "$how" != "-p ./noconnect.ini" ]; then
			body=$(fetch "$sock") || fail "no answer through the forward ($how)"
			assert_contains "$body" "port-marker.txt" "the listing through the forward ($how)"
			continue
		fi
		sleep 1
		run_cmd curl -sS --max-time 5 --unix-socket "$sock" http://x/
		assert_not_contains "$OUT" "port-marker.txt" "a forward whose connect seccomp refuses"
		run_cmd "$AGENTBOX" session stop "$SID"
		assert_contains "$(port_events)" "port-connection $p refused 0 127.0.0.1:$p: Operation not permitted" \
			"the refused connect's event"
	done
}

# An open forwarded connection keeps the session from being idle, as a running exec does: a
# connection held past the idle timeout is still answered; once it ends, the idle timeout ends
# the session (control).
case_port_idle() {
	trap stop_all EXIT
	local limit=2
	under_memcheck && limit=10
	printf '[sandbox]\ninclude = %s/shell.ini\n[limits]\nidle-timeout = %ss\n' \
		"$AGENTBOX_PROFILES" "$limit" >idle.ini
	start -p ./idle.ini
	ex -- sh -c 'nohup python3 -m http.server --bind 127.0.0.1 8000 >/dev/null 2>&1 &'
	run_cmd "$AGENTBOX" session port "$SID" 8000
	sock=$OUT
	fetch "$sock" >/dev/null || fail "control: no answer through $sock"
	run_cmd "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
time.sleep(float(sys.argv[2]))
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
print(s.recv(12).decode(errors="replace") or "closed")' "$sock" "$limit.5"
	assert_eq "HTTP/1.0 200" "$OUT" "a request on a connection held past the idle timeout"
	run_cmd "$AGENTBOX" session list
	assert_contains "$OUT" "$SID" "the session right after the held connection"
	sleep "$((limit + 1))"
	run_cmd "$AGENTBOX" session list
	assert_not_contains "$OUT" "$SID" "the session once idle after its connections"
	assert_absent "$sock" "the forward's socket after the idle timeout"
}

# A supervisor killed outright (kill -9) leaves its sockets: the next session list removes the
# forwards' with the control socket. Control: they are there before.
case_port_killed_supervisor() {
	trap stop_all EXIT
	start -p shell
	run_cmd "$AGENTBOX" session port "$SID" 8000
	sock=$OUT
	[ -S "$sock" ] || fail "control: no forward's socket at $sock"
	pid=$(supervisor_pid)
	[ -n "$pid" ] || fail "the supervisor's pid is not in session list --json"
	kill -KILL "$pid"
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -S "$sock" ] || fail "control: the forward's socket right after the kill"
	run_cmd "$AGENTBOX" session list
	assert_eq 0 "$RC" "session list after the kill"
	assert_absent "$sock" "the forward's socket after session list"
	assert_absent "$RUNDIR/$SID.sock" "the control socket after session list"
}

# At most 64 forwarded connections are open at once: the 65th and 66th are closed at once and
# the trail names the limit; the first ones are still served (control).
case_port_limits() {
	trap stop_all EXIT
	start -p shell --audit "$META/audit"
	ex -- sh -c 'nohup python3 -m http.server --bind 127.0.0.1 8000 >/dev/null 2>&1 &'
	run_cmd "$AGENTBOX" session port "$SID" 8000
	sock=$OUT
	fetch "$sock" >/dev/null || fail "control: no answer through $sock"
	run_cmd "$PY" -c '
import socket, sys, time
held = []
for i in range(66):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sys.argv[1])
    held.append(s)
time.sleep(1)
def get(s):
    try:
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        return s.recv(12).decode(errors="replace") or "closed"
    except OSError:
        return "closed"
print(get(held[0]), get(held[63]), get(held[64]), get(held[65]))' "$sock"
	assert_eq "HTTP/1.0 200 HTTP/1.0 200 closed closed" "$OUT" \
		"the first, the 64th, the 65th and the 66th connection"
	run_cmd "$AGENTBOX" session stop "$SID"
	assert_eq 2 "$(grep -c '"reason":"too many clients","detail":"port 8000: 64 forwarded' "$META/audit")" \
		"refusals past 64 forwarded connections"
}

run_case port_forward case_port_forward
run_case port_peers case_port_peers
run_case port_other_user case_port_other_user
run_case port_limits case_port_limits
run_case port_idle case_port_idle
run_case port_killed_supervisor case_port_killed_supervisor
run_case port_net_modes case_port_net_modes
finish

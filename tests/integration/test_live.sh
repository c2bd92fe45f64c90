#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# A session's live policy and its ask hook (docs/sessions.md, "Live policy" and "Asked about a
# connection"), against a server on the host's 127.0.0.1 that test names are pinned to
# ([network] resolve). A harness widens the rules within what the profile grants (a curl
# through the proxy fails before, works after) and no further (refused, saying what the
# profile grants; the profile's deny rules stay), narrows them at will (new connections are
# refused, one already open goes on, a host still allowed is the control); [http] rules the
# same way. A harness asked answers once, run or deny, or not at all (the timeout denies), or
# dies (every open question denied at once); without a subscriber, and for a host no
# grantable rule covers, a refusal is immediate; a flood of connections holds at most 64 and
# asks one question per host and port. Each change, question and answer is in the trail.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_lib.sh"

CURL=(curl -sS --max-time 30 --noproxy '' -x http://127.0.0.1:3128)

# mk_www: the host's server on $PORT: file.txt (its content $BODY), allowed/one.txt and
# allowed/two.txt, other/file.txt, big.bin (200 KiB).
mk_www() {
	BODY="live-body-$(unique)"
	mkdir -p "$META/www/allowed" "$META/www/other"
	printf '%s\n' "$BODY" >"$META/www/file.txt"
	printf 'one-%s\n' "$BODY" >"$META/www/allowed/one.txt"
	printf 'two-%s\n' "$BODY" >"$META/www/allowed/two.txt"
	printf 'other-%s\n' "$BODY" >"$META/www/other/file.txt"
	head -c 204800 /dev/urandom >"$META/www/big.bin"
	serve www "$META/www"
}

# profile LINE...: $META/live.ini: the shell profile with the proxy, and LINEs in [network]
# (a line "[http]" starts that section).
profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n[network]\nmode = proxy\n' "$AGENTBOX_PROFILES"
		printf '%s\n' "$@"
	} >"$META/live.ini"
}

# live_start: a session of $META/live.ini with its trail in $META/audit, started with --json;
# sets SID and SOCK from what it prints, and stops it when the case ends.
live_start() {
	trap stop_all EXIT
	run_cmd "$AGENTBOX" session start --json -p "$META/live.ini" --audit "$META/audit"
	[ "$RC" = 0 ] || fail "session start: status $RC" "$(report)"
	SID=$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	SOCK=$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["socket"])')
	echo "$SID" >>"$META/sessions"
}

# fetch URL [CURL ARGS...]: curl through the session's proxy, in an exec; OUT, ERR, RC, and
# SECS, how long it took.
fetch() {
	local t0 url=$1
	shift
	t0=$(date +%s%N)
	run_cmd "$AGENTBOX" exec "$SID" -- "${CURL[@]}" "$@" "$url"
	SECS=$((($(date +%s%N) - t0) / 1000000000))
	case $ERR in
	*"no live session"*) fail "the session ended before: fetch $url" "$(report)" ;;
	esac
}

# policy ARGS...: agentbox session policy $SID ARGS...
policy() {
	run_cmd "$AGENTBOX" session policy "$SID" "$@"
}

# events EVENT [KEY...]: each EVENT event of the trail as one line of KEY=VALUE (every key
# but the common ones when none is named), in EVENTS.
events() {
	EVENTS=$("$PY" - "$META/audit" "$@" <<-'EOF'
		import json, sys
		path, kind, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
		for line in open(path, encoding="utf-8"):
		    e = json.loads(line)
		    if e["event"] != kind:
		        continue
		    shown = keys or [k for k in e if k not in ("v", "ts", "seq", "run", "event", "prev")]
		    print(" ".join(f"{k}={json.dumps(e.get(k)) if not isinstance(e.get(k), str) else e[k]}" for k in shown))
	EOF
	) || fail "cannot read the trail $META/audit" "$EVENTS"
}

# asker ANSWER...: the harness (helpers/live_asker.py) subscribed to $SID's questions, in the
# background; its log is $META/asked. Returns once it is subscribed (or refused).
asker() {
	bg env PYTHONPATH="$AGENTBOX_SOURCE/bindings/python" AGENTBOX_BINARY="$AGENTBOX_BIN" \
		"$PY" "$HELPERS/live_asker.py" "$SOCK" "$META/asked" "$@"
	ASKER=$BG_PID
	wait_for_file "$META/asked" 10 || fail "the asked harness did not start"
}

asked() {
	cat "$META/asked" 2>/dev/null
}

count() {
	printf '%s\n' "$1" | grep -c -- "$2"
}

# ------------------------------------------------------------- changes ----

case_widen_within_grant() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1, b.live.test=127.0.0.1" \
		"grantable = *.live.test:$PORT"
	live_start
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "agentbox denied a.live.test:$PORT: no allow rule matches" \
		"before the change: refused"
	assert_not_contains "$OUT" "$BODY" "before the change: the file"
	policy allow "a.live.test:$PORT"
	assert_eq 0 "$RC" "session policy allow within the grant"
	assert_eq "a.live.test:$PORT: applied" "$OUT" "what session policy says"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "after the change: the file through the proxy"
	# control: the grant is not an allow; only the host allowed goes
	fetch "http://b.live.test:$PORT/file.txt"
	assert_contains "$OUT" "no allow rule matches b.live.test:$PORT" "a host not allowed yet"
	policy allow "A.live.test:$PORT"
	assert_eq 0 "$RC" "the same rule again"
	assert_eq "a.live.test:$PORT: unchanged (in force already)" "$OUT" "the same rule again"
	policy allow "b.live.test:$PORT" --json
	assert_eq 0 "$RC" "session policy --json"
	assert_eq "allow b.live.test:$PORT applied *.live.test:$PORT []" "$(printf '%s' "$OUT" |
		"$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["action"], d["rule"], d["outcome"], d["grant"], d["removed"])')" \
		"the change as JSON"
	fetch "http://b.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "the second host, allowed"
	events policy action rule outcome grant removed
	assert_eq "action=allow rule=a.live.test:$PORT outcome=applied grant=*.live.test:$PORT removed=[]
action=allow rule=a.live.test:$PORT outcome=unchanged grant=*.live.test:$PORT removed=[]
action=allow rule=b.live.test:$PORT outcome=applied grant=*.live.test:$PORT removed=[]" \
		"$EVENTS" "one policy event per change"
	events policy pid
	assert_not_contains "$EVENTS" "pid=null" "each change names its caller"
	events net host rule decision
	assert_contains "$EVENTS" "host=a.live.test rule=a.live.test:$PORT decision=allow" \
		"the allowed connection's net event names the rule the harness added"
}

case_widen_beyond_grant() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1, evil.test=127.0.0.1" \
		"grantable = *.live.test:$PORT, **.evil.test" "deny = evil.test"
	live_start
	policy allow other.example
	assert_eq 125 "$RC" "an allow beyond the grant"
	assert_contains "$ERR" "'other.example' is beyond what the profile lets a harness allow" \
		"the refusal says why"
	assert_contains "$ERR" "grantable covers: *.live.test:$PORT, **.evil.test" \
		"the refusal says what the profile grants"
	# wider than the grant: every port of a host granted at one
	policy allow a.live.test
	assert_eq 125 "$RC" "a host at every port, granted at one"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "no allow rule matches" "nothing was widened by the refusals"
	# the profile's deny rule stays, even under a grantable rule
	policy allow "evil.test:$PORT"
	assert_eq 125 "$RC" "an allow the profile's deny rule covers"
	assert_contains "$ERR" "stays denied by the profile's rule 'evil.test'" "which deny rule"
	fetch "http://evil.test:$PORT/file.txt"
	assert_contains "$OUT" "denied by rule 'evil.test'" "the denied host after the refusal"
	# not a rule, or not a request at all
	policy allow 'a b'
	assert_eq 125 "$RC" "an allow that is not a rule"
	policy allow
	assert_eq 125 "$RC" "session policy without its rule"
	assert_contains "$ERR" "usage" "session policy without its rule"
	# positive control: within the grant the same session widens
	policy allow "a.live.test:$PORT"
	assert_eq 0 "$RC" "an allow within the grant"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "the control: the host allowed within the grant"
	events policy action rule outcome
	assert_eq 4 "$(count "$EVENTS" "outcome=refused")" "each refused change is audited"
	assert_contains "$EVENTS" "action=allow rule=other.example outcome=refused" "the refused allow"
	events policy error
	assert_contains "$EVENTS" "beyond what the profile lets a harness allow" "its error"
	# a profile that grants nothing widens nothing
	profile "resolve = a.live.test=127.0.0.1"
	live_start
	policy allow "a.live.test:$PORT"
	assert_eq 125 "$RC" "an allow with no grantable rule"
	assert_contains "$ERR" "the profile grants nothing" "the refusal with no grantable rule"
}

case_narrow_cuts_new() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1, b.live.test=127.0.0.1" \
		"allow = a.live.test:$PORT, b.live.test:$PORT"
	live_start
	fetch "http://a.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "before the change: the file"
	# a slow transfer, open when the host is denied: it goes on (docs/sessions.md)
	"$AGENTBOX" exec "$SID" -- "${CURL[@]}" --limit-rate 100k -o big.out \
		"http://a.live.test:$PORT/big.bin" >"$META/slow.out" 2>&1 &
	slow=$!
	for _ in $(seq 100); do
		[ -s big.out ] && break
		sleep 0.05
	done
	[ -s big.out ] || fail "the slow transfer did not start" "$(cat "$META/slow.out")"
	policy deny a.live.test
	assert_eq 0 "$RC" "session policy deny (no grant needed)"
	assert_eq "a.live.test: applied" "$OUT" "what session policy says"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "agentbox denied a.live.test:$PORT: denied by rule 'a.live.test'" \
		"a new connection after the deny"
	fetch "http://b.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "the control: another host, still allowed"
	wait "$slow"
	assert_eq 0 "$?" "the transfer open before the deny ended well ($(cat "$META/slow.out"))"
	cmp -s big.out "$META/www/big.bin" || fail "the open transfer was cut: $(stat -c %s big.out) bytes"
	# the profile's allow is not the harness's to give back
	policy allow "a.live.test:$PORT"
	assert_eq 125 "$RC" "widening back past the grant"
	events policy action rule outcome removed
	assert_contains "$EVENTS" "action=deny rule=a.live.test outcome=applied removed=[]" \
		"the deny's event"
	events net host decision reason
	assert_contains "$EVENTS" "host=a.live.test decision=deny reason=denied by rule 'a.live.test'" \
		"the refused connection's net event"
}

# An allow lifts the harness's deny rules it covers, a deny withdraws its allow rules; a
# narrower allow under a wider run-time deny is refused, naming it.
case_lift_and_withdraw() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1, b.live.test=127.0.0.1" \
		"grantable = *.live.test:$PORT"
	live_start
	policy allow "a.live.test:$PORT"
	policy deny "*.live.test:$PORT" --json
	assert_eq 0 "$RC" "a wider deny"
	assert_contains "$OUT" "\"removed\":[\"a.live.test:$PORT\"]" "the allow it withdrew"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "denied by rule '*.live.test:$PORT'" "the host after the deny"
	policy allow "a.live.test:$PORT"
	assert_eq 125 "$RC" "a narrower allow under the run-time deny"
	assert_contains "$ERR" "stays denied by the run-time rule '*.live.test:$PORT'" "names it"
	policy allow "*.live.test:$PORT" --json
	assert_eq 0 "$RC" "the deny's own rule, allowed"
	assert_contains "$OUT" "\"removed\":[\"*.live.test:$PORT\"]" "the deny it lifted"
	fetch "http://b.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "a host of the lifted deny"
}

case_http_rules_live() {
	mk_www
	profile "resolve = h.live.test:80=127.0.0.1:$PORT" "[http]" \
		"grantable = GET h.live.test/allowed/**"
	live_start
	fetch http://h.live.test/allowed/one.txt
	assert_contains "$OUT" "no allow rule matches h.live.test:80" "before: no connection"
	policy http allow 'GET h.live.test/allowed/*'
	assert_eq 0 "$RC" "an [http] allow within the grant"
	fetch http://h.live.test/allowed/one.txt
	assert_eq "one-$BODY" "$OUT" "a request the rule allows (its host's port 80 opened too)"
	fetch http://h.live.test/other/file.txt
	assert_contains "$OUT" "agentbox denied" "a request no [http] rule allows"
	assert_not_contains "$OUT" "other-$BODY" "a request no [http] rule allows"
	fetch http://h.live.test/allowed/one.txt -X POST -d x
	assert_not_contains "$OUT" "got 1" "another method"
	policy http allow 'GET h.live.test/**'
	assert_eq 125 "$RC" "an [http] allow wider than the grant"
	assert_contains "$ERR" "grantable covers: GET h.live.test/allowed/**" "what it grants"
	policy http allow 'POST h.live.test/allowed/x'
	assert_eq 125 "$RC" "an [http] allow of another method"
	policy http deny 'GET h.live.test/allowed/one.txt'
	assert_eq 0 "$RC" "an [http] deny"
	fetch http://h.live.test/allowed/one.txt
	assert_contains "$OUT" "GET h.live.test/allowed/one.txt" "the request the deny refuses names it"
	assert_not_contains "$OUT" "one-$BODY" "the request the deny refuses"
	fetch http://h.live.test/allowed/two.txt
	assert_eq "two-$BODY" "$OUT" "the control: a request the deny leaves"
	events policy action rule outcome
	assert_contains "$EVENTS" "action=http-allow rule=GET h.live.test/allowed/* outcome=applied" \
		"the [http] allow's event"
	assert_contains "$EVENTS" "action=http-deny rule=GET h.live.test/allowed/one.txt outcome=applied" \
		"the [http] deny's event"
}

# ------------------------------------------------------------------ ask ----

case_ask_once_deny_run() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1, evil.test=127.0.0.1" \
		"grantable = *.live.test:$PORT" "ask-timeout = 20s"
	live_start
	# without a subscriber: refused at once, as ever
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "no allow rule matches a.live.test:$PORT" "no subscriber: refused"
	[ "$SECS" -lt 5 ] || fail "no subscriber, yet the refusal took ${SECS}s"
	asker once deny run
	assert_contains "$(asked)" "ready 20000" "the subscription, with the timeout"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "answered once: the connection goes on"
	assert_contains "$(asked)" "question 1 a.live.test $PORT 2 http *.live.test:$PORT" \
		"the question: host, port, exec, protocol, grant"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "agentbox denied a.live.test:$PORT: the harness denied it (question 2)" \
		"once is for one connection: asked again, denied"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "answered run"
	fetch "http://a.live.test:$PORT/file.txt"
	assert_eq "$BODY" "$OUT" "after run: allowed without a question"
	assert_eq 3 "$(count "$(asked)" '^question')" "three questions, none after run"
	assert_contains "$(asked)" "answered 3 run 1" "run settled its connection"
	# a host no grantable rule covers is never asked about
	fetch "http://evil.test:$PORT/file.txt"
	assert_contains "$OUT" "no allow rule matches evil.test:$PORT" "a host beyond the grant"
	[ "$SECS" -lt 5 ] || fail "a host beyond the grant waited ${SECS}s"
	assert_eq 3 "$(count "$(asked)" '^question')" "no question for a host beyond the grant"
	events policy action question answer rule connections
	assert_contains "$EVENTS" "action=ask-start question=null" "the subscription's event"
	assert_eq 3 "$(count "$EVENTS" "action=ask ")" "an event per question"
	assert_contains "$EVENTS" "action=answer question=1 answer=once rule=null connections=1" \
		"the once answer"
	assert_contains "$EVENTS" "action=answer question=2 answer=deny rule=null connections=1" \
		"the deny answer"
	assert_contains "$EVENTS" "action=allow question=3 answer=null rule=a.live.test:$PORT" \
		"run: a live allow of the host and port, naming the question"
	assert_contains "$EVENTS" "action=answer question=3 answer=run rule=a.live.test:$PORT connections=1" \
		"the run answer"
	events net decision rule
	assert_contains "$EVENTS" "decision=allow rule=(allowed once by the harness)" \
		"the once connection's net event"
}

case_ask_timeout() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1" "grantable = *.live.test:$PORT" "ask-timeout = 1s"
	live_start
	asker none
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "no answer from the harness within 1000 ms (question 1)" \
		"no answer: refused"
	[ "$SECS" -ge 1 ] && [ "$SECS" -lt 5 ] || fail "the timeout of 1s took ${SECS}s"
	for _ in $(seq 20); do
		case $(asked) in *"settled 1 timeout"*) break ;; esac
		sleep 0.1
	done
	assert_contains "$(asked)" "settled 1 timeout" "the harness is told the question ended"
	events policy action answer
	assert_contains "$EVENTS" "action=answer answer=timeout" "the timeout's event"
}

case_ask_harness_gone() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1" "grantable = *.live.test:$PORT" "ask-timeout = 30s"
	live_start
	asker exit
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "the harness left before answering question 1" \
		"the harness died: refused at once"
	[ "$SECS" -lt 10 ] || fail "a dead harness's question waited ${SECS}s (timeout 30s)"
	# nobody asked any more: immediate again
	fetch "http://a.live.test:$PORT/file.txt"
	assert_contains "$OUT" "no allow rule matches a.live.test:$PORT" "after the harness left"
	[ "$SECS" -lt 5 ] || fail "after the harness left, a refusal took ${SECS}s"
	events policy action reason answer
	assert_contains "$EVENTS" "action=ask-end reason=hung up" "the subscription's end"
	assert_contains "$EVENTS" "action=answer reason=null answer=gone" "the question's end"
}

# A change of the rules decides a held connection at once: a deny refuses it, an allow lets it
# go; the harness is told the rules settled its question.
case_ask_settled_by_change() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1, b.live.test=127.0.0.1" \
		"grantable = *.live.test:$PORT" "ask-timeout = 30s"
	live_start
	asker none none
	held a.live.test 1
	policy deny a.live.test
	assert_eq 0 "$RC" "a deny while a connection is held"
	wait "$HELD"
	assert_contains "$(cat "$META/held")" "denied by rule 'a.live.test' (question 1)" \
		"the held connection, refused by the new deny at once"
	held b.live.test 2
	policy allow "b.live.test:$PORT"
	assert_eq 0 "$RC" "an allow while a connection is held"
	wait "$HELD"
	assert_eq "$BODY" "$(cat "$META/held")" "the held connection, let through by the new allow"
	for _ in $(seq 40); do
		case $(asked) in *"settled 2 rule"*) break ;; esac
		sleep 0.05
	done
	assert_contains "$(asked)" "settled 1 rule" "the harness is told the rules settled question 1"
	assert_contains "$(asked)" "settled 2 rule" "... and question 2"
	events policy action answer rule
	assert_contains "$EVENTS" "action=answer answer=rule rule=a.live.test" "question 1's end"
	assert_contains "$EVENTS" "action=answer answer=rule rule=b.live.test:$PORT" "question 2's end"
}

# held HOST N: a fetch of HOST in the background (HELD its pid, its output in $META/held), once
# its connection is held as question N.
held() {
	"$AGENTBOX" exec "$SID" -- "${CURL[@]}" "http://$1:$PORT/file.txt" >"$META/held" 2>&1 &
	HELD=$!
	for _ in $(seq 200); do
		case $(asked) in *"question $2 $1 "*) return ;; esac
		sleep 0.05
	done
	fail "no question $2 for $1" "$(asked)"
}

# One client is asked; a profile that grants nothing asks nobody.
case_ask_one_subscriber() {
	profile "grantable = *.live.test"
	live_start
	asker none
	assert_contains "$(asked)" "ready" "the first subscriber"
	mv "$META/asked" "$META/asked.1"
	asker none
	assert_contains "$(asked)" "refused 16 another client is asked already" "a second one"
	mv "$META/asked" "$META/asked.2"
	profile
	live_start
	asker none
	assert_contains "$(asked)" "refused 1 the profile grants no connection" \
		"a subscription with nothing to ask"
}

# Connections to one host and port wait for one question; past 64 held, a refusal is at once.
case_ask_flood_bounded() {
	# long enough that no question times out (freeing its slot) before the hundredth
	# connection has come, even on a loaded machine under ASan (3 s was not, once)
	profile "grantable = *.live.test" "ask-timeout = 8s"
	live_start
	asker
	run_cmd "$AGENTBOX" exec "$SID" -- sh -c '
		for i in $(seq 10); do
			curl -s --noproxy "" -x http://127.0.0.1:3128 -o /dev/null -w "%{http_code}\n" \
				http://same.live.test/ &
		done
		wait'
	assert_eq 10 "$(count "$OUT" '^403$')" "ten connections to one host, all refused at last"
	assert_eq 1 "$(count "$(asked)" '^question')" "one question for one host and port"
	events policy action answer connections
	assert_contains "$EVENTS" "action=answer answer=timeout connections=10" \
		"its answer settled the ten"
	: >"$META/asked.before"
	run_cmd "$AGENTBOX" exec "$SID" -- sh -c '
		for i in $(seq 100); do
			curl -s --noproxy "" -x http://127.0.0.1:3128 -o /dev/null -w "%{http_code}\n" \
				http://h$i.live.test/ &
		done
		wait'
	assert_eq 100 "$(count "$OUT" '^403$')" "a hundred connections to a hundred hosts, refused"
	assert_eq 65 "$(count "$(asked)" '^question')" "64 questions at most at once (and the first)"
	events net reason
	assert_eq 36 "$(count "$EVENTS" "not asked: 64 connections wait for the harness's answer already")" \
		"past 64 held, refused at once"
	events policy action
	assert_eq 65 "$(count "$EVENTS" "action=ask$")" "an ask event per question"
}

# Under transparent capture the DNS stub gives a grantable name an address while a harness is
# asked, so that its connection comes to be asked.
case_ask_captured() {
	mk_www
	profile "resolve = a.live.test=127.0.0.1" "grantable = *.live.test:$PORT" "ask-timeout = 20s"
	live_start
	ex_captured() {
		run_cmd "$AGENTBOX" exec "$SID" -- env -u HTTP_PROXY -u http_proxy -u ALL_PROXY \
			-u all_proxy curl -sS --max-time 30 "http://a.live.test:$PORT/file.txt"
	}
	ex_captured
	if grep -q '"event":"warning".*"what":"capture"' "$META/audit"; then
		not_applicable "no nf_tables NAT in this kernel: capture is unavailable"
	fi
	assert_contains "$ERR" "Could not resolve host" "no subscriber: the name does not exist"
	asker once
	ex_captured
	assert_eq "$BODY" "$OUT" "a captured connection, asked and answered once"
	assert_contains "$(asked)" "question 1 a.live.test $PORT" "the captured connection's question"
	assert_contains "$(asked)" " capture *.live.test:$PORT" "its protocol"
	events dns name rcode rule reason
	assert_contains "$EVENTS" "name=a.live.test rcode=NXDOMAIN rule=null reason=no allow rule matches" \
		"the stub's answer without a subscriber"
	assert_contains "$EVENTS" "name=a.live.test rcode=NOERROR rule=*.live.test:$PORT reason=a grantable rule covers it" \
		"the stub's answer with one"
}

run_case widen_within_grant case_widen_within_grant
run_case widen_beyond_grant case_widen_beyond_grant
run_case narrow_cuts_new case_narrow_cuts_new
run_case lift_and_withdraw case_lift_and_withdraw
run_case http_rules_live case_http_rules_live
run_case ask_once_deny_run case_ask_once_deny_run
run_case ask_timeout case_ask_timeout
run_case ask_harness_gone case_ask_harness_gone
run_case ask_settled_by_change case_ask_settled_by_change
run_case ask_one_subscriber case_ask_one_subscriber
run_case ask_flood_bounded case_ask_flood_bounded
run_case ask_captured case_ask_captured
finish

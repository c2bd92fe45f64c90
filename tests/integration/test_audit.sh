#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# The audit trail as a record: `audit verify` finds edits, deletions, reordering and truncation
# (each run appended to a file is a chain of its own, concurrent runs too); the trail is out of
# the sandbox's reach; a trail that cannot be written stops the run; AGENTBOX_RUN_ID is the run
# id; [audit] event-budget bounds the events a command causes at will; `audit summary` lists
# denials first, each kind as the events count it. What the events hold (the schema, escaping,
# redaction) is test_audit_events.sh's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/audit_lib.sh"

# ---------------------------------------------------------------- verify ----

# Three runs appended to one file.
three_runs() {
	local i
	for i in 0 1 2; do
		run_cmd "$AGENTBOX" -p minimal --audit "$1" -- sh -c "exit $i"
		assert_eq "$i" "$RC" "exit status of run $((i + 1))"
	done
}

# tamper SRC DST MODE: writes a damaged copy; prints "RUN SEQ" of the event the damage is at
# (the second run's 5th event; the third run's exit event for truncate; the second run's exit
# event for exit-status).
TAMPER_PY="$WORK/.bin/tamper.py"
cat >"$TAMPER_PY" <<'EOF'
import json, sys
src, dst, mode = sys.argv[1:4]
lines = open(src, "rb").read().splitlines(True)
ev = [json.loads(l) for l in lines]
runs = []
for e in ev:
    if e["run"] not in runs:
        runs.append(e["run"])
def index(run, seq):
    return next(i for i, e in enumerate(ev) if e["run"] == run and e["seq"] == seq)
run = runs[1]
k = index(run, 5)
seq = 5
if mode == "edit":
    l = lines[k].decode()
    e = ev[k]
    # the timestamp's last digit: still valid JSON, same length
    ts = e["ts"]
    t2 = ts[:-2] + ("1" if ts[-2] != "1" else "2") + "Z"
    lines[k] = l.replace(ts, t2, 1).encode()
elif mode == "delete":
    del lines[k]
elif mode == "swap":
    lines[k], lines[k + 1] = lines[k + 1], lines[k]
elif mode == "truncate":
    run = runs[2]
    k = max(i for i, e in enumerate(ev) if e["run"] == run)
    seq = ev[k]["seq"]
    keep = b"".join(lines[:k]) + lines[k][: len(lines[k]) // 2]
    open(dst, "wb").write(keep)
    print(run, seq)
    sys.exit(0)
elif mode == "exit-status":
    k = max(i for i, e in enumerate(ev) if e["run"] == run)
    seq = ev[k]["seq"]
    l = lines[k].decode()
    assert '"status":1,' in l and '"code":1,' in l, l
    lines[k] = l.replace('"status":1,', '"status":0,').replace('"code":1,', '"code":0,').encode()
else:
    sys.exit("unknown mode " + mode)
open(dst, "wb").write(b"".join(lines))
print(run, seq)
EOF

# broken MODE: verify of the damaged copy exits 1 with a BROKEN line naming the run and the seq
# of the damage (or the next one, where the damage shows: an edited line is caught by the next
# line's prev).
broken() {
	local mode=$1 a="$META/a.jsonl" run seq
	three_runs "$a"
	# positive control: the intact file verifies
	expect_exit 0 "$AGENTBOX" audit verify "$a"
	assert_contains "$OUT" "OK: 3 run(s)" "audit verify on the intact file"
	run_cmd "$PY" "$TAMPER_PY" "$a" "$META/bad.jsonl" "$mode"
	[ "$RC" = 0 ] || fail "cannot damage the file ($mode)" "$(report)"
	read -r run seq <<<"$OUT"
	expect_exit 1 "$AGENTBOX" audit verify "$META/bad.jsonl"
	case "$OUT" in
	*"BROKEN: run $run seq $seq "* | *"BROKEN: run $run seq $((seq + 1)) "* | \
		*"BROKEN: run $run ends at seq $((seq - 1)) "*) ;;
	*) fail "audit verify after '$mode' at run $run seq $seq does not name it" "$(report)" ;;
	esac
}

t_verify_intact() {
	local a="$META/a.jsonl" c="$META/concurrent.jsonl" p1 p2 p3
	three_runs "$a"
	expect_exit 0 "$AGENTBOX" audit verify "$a"
	assert_contains "$OUT" "OK: 3 run(s)" "audit verify on three appended runs"
	validate "$a"
	# three runs appending at once: each run is its own chain
	"$AGENTBOX" -p minimal --audit "$c" -- sh -c 'for i in 1 2 3 4 5; do unshare -U true 2>/dev/null; done' &
	p1=$!
	"$AGENTBOX" -p minimal --audit "$c" -- sh -c 'for i in 1 2 3 4 5; do unshare -U true 2>/dev/null; done' &
	p2=$!
	"$AGENTBOX" -p minimal --audit "$c" -- sh -c 'for i in 1 2 3 4 5; do unshare -U true 2>/dev/null; done' &
	p3=$!
	wait "$p1" "$p2" "$p3"
	expect_exit 0 "$AGENTBOX" audit verify "$c"
	assert_contains "$OUT" "OK: 3 run(s)" "audit verify on three concurrent runs"
}

t_verify_edited_line() {
	broken edit
}

t_verify_deleted_line() {
	broken delete
}

t_verify_swapped_lines() {
	broken swap
}

t_verify_truncated() {
	broken truncate
}

# The exit event is an event too: an edited status (a failure made a success) must not verify.
t_verify_edited_exit_event() {
	broken exit-status
}

# ----------------------------------------------------- the trail's reach ----

t_audit_file_out_of_reach() {
	local a="$META/a.jsonl"
	# positive control: on the host the file is there
	expect_exit 0 "$AGENTBOX" -p shell --audit "$a" -- true
	expect_exit 0 ls "$a"
	# not bound: the sandbox cannot see it
	run_cmd "$AGENTBOX" -p shell --audit "$a" -- ls "$a"
	[ "$RC" != 0 ] || fail "ls of the audit file succeeded in the sandbox" "$(report)"
	assert_contains "$ERR" "No such file or directory" "ls of the audit file in the sandbox"
	# under the rw workspace: hidden in place, neither readable nor writable
	local b="$CASE/audit.jsonl"
	expect_exit 0 "$AGENTBOX" -p shell --audit "$b" -- sh -c \
		'head -c 20 "$1"; echo; if echo forged >>"$1"; then echo APPENDED; else echo REFUSED; fi;
		 if (true >"$1"); then echo TRUNCATED; else echo REFUSED; fi' sh "$b"
	assert_not_contains "$OUT" '{"v":1,' "reading the audit file inside"
	assert_contains "$ERR" "Permission denied" "reading the audit file inside"
	expect_exit 0 head -c 20 "$b"
	assert_contains "$OUT" '{"v":1,' "positive control: the same read on the host"
	assert_not_contains "$OUT" APPENDED "appending to the bound audit file"
	assert_not_contains "$OUT" TRUNCATED "truncating the bound audit file"
	grep -qx forged "$b" && fail "the sandbox wrote to the audit file" "$(tail -c 600 "$b")"
	expect_exit 0 "$AGENTBOX" audit verify "$b"
	# positive control: a sibling file in the same rw workspace is writable
	expect_exit 0 "$AGENTBOX" -p shell --audit "$b" -- sh -c 'echo written >>"$1"' sh "$CASE/sibling"
	assert_eq written "$(cat "$CASE/sibling")" "positive control: a sibling of the audit file"
}

# Events a command causes at will (here DNS queries of denied names) are written up to
# [audit] event-budget per kind; past it one limit event says so, the rest are counted in the
# exit event's "suppressed", and the chain still verifies. Positive control: below the budget
# every event is written.
t_event_budget() {
	cat >budget.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[network]
		mode = proxy
		allow = allowed.test
		[audit]
		event-budget = 40
	EOF
	local q='import socket, sys
for i in range(int(sys.argv[1])):
    try: socket.getaddrinfo("denied%d.test" % i, 80, socket.AF_INET)
    except OSError: pass'
	expect_exit 0 "$AGENTBOX" -p ./budget.ini --audit "$META/under.jsonl" -- "$PY" -c "$q" 30
	assert_eq 30 "$(grep -c '"event":"dns"' "$META/under.jsonl")" "dns events below the budget"
	assert_not_contains "$(cat "$META/under.jsonl")" '"limit":"audit-events"' "no budget limit below it"
	grep -q '"what":"capture"' "$META/under.jsonl" && not_applicable "no capture here: no DNS stub to query"
	expect_exit 0 "$AGENTBOX" -p ./budget.ini --audit "$META/over.jsonl" -- "$PY" -c "$q" 500
	assert_eq 40 "$(grep -c '"event":"dns"' "$META/over.jsonl")" "dns events past the budget"
	assert_contains "$(cat "$META/over.jsonl")" '"limit":"audit-events","of":"dns","after":40' \
		"the budget's limit event"
	assert_contains "$(cat "$META/over.jsonl")" '"suppressed":{"dns":460}' "the exit event's count"
	expect_exit 0 "$AGENTBOX" audit verify "$META/over.jsonl"
	# the summary counts every refusal, and says how many of them the trail holds
	expect_exit 0 "$AGENTBOX" audit summary "$META/over.jsonl"
	assert_contains "$OUT" "dns 500 (40 in the trail)" "the summary's dns refusals past the budget"
	assert_contains "$OUT" "audit-events: dns events past 40 not written" "the budget's limit row"
	assert_contains "$OUT" "and 20 more, refused 20 times" "the rows past the first 20 of a kind"
}

t_write_failure_stops() {
	cat >continue.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[audit]
		on-failure = continue
	EOF
	# positive control: with a writable trail the command runs and touches the marker
	expect_exit 0 "$AGENTBOX" -p shell --audit "$META/a.jsonl" -- touch "$CASE/marker-ok"
	assert_exists "$CASE/marker-ok" "positive control: the marker with a writable trail"
	expect_exit 125 "$AGENTBOX" -p shell --audit /dev/full -- touch "$CASE/marker-stop"
	assert_contains "$ERR" "cannot write the audit trail" "stderr when the trail cannot be written"
	assert_absent "$CASE/marker-stop" "the command ran although its trail could not be written"
	expect_exit 0 "$AGENTBOX" -p ./continue.ini --audit /dev/full -- touch "$CASE/marker-continue"
	assert_exists "$CASE/marker-continue" "on-failure = continue: the command's marker"
	assert_contains "$ERR" "cannot write the audit trail" "stderr with on-failure = continue"
}

t_run_id() {
	local a="$META/a.jsonl"
	expect_exit 0 "$AGENTBOX" -p shell --audit "$a" -- sh -c 'echo "$AGENTBOX_RUN_ID"'
	local inside=$OUT run
	run=$(audit_get "$a" start run)
	[[ "$inside" =~ ^[0-9a-f]{32}$ ]] || fail "AGENTBOX_RUN_ID inside is '$inside'"
	assert_eq "$run" "$inside" "AGENTBOX_RUN_ID against the audit's run"
	# positive control: another run has another id
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c 'echo "$AGENTBOX_RUN_ID"'
	[ "$OUT" != "$inside" ] || fail "two runs had the same AGENTBOX_RUN_ID $OUT"
}

t_summary_denials_first() {
	local a="$META/a.jsonl"
	envdeny_profile
	run_cmd "$AGENTBOX" -p ./envdeny.ini --net host --timeout 1s --audit "$a" -- sh -c \
		'unshare -U true 2>/dev/null; sleep 10'
	assert_eq 124 "$RC" "exit status of the run"
	# positive control: in the file the warning comes before the denials, so the order below
	# is the summary's own
	local order
	order=$(grep -o '"event":"[a-z]*"' "$a" | cut -d'"' -f4 | grep -E '^(warning|syscall)$' | uniq | tr '\n' ' ')
	assert_eq "warning syscall " "$order" "positive control: the order of events in the file"
	expect_exit 0 "$AGENTBOX" audit summary "$a"
	local kinds
	kinds=$(printf '%s\n' "$OUT" | sed -n 's/^  \([a-z]*\) .*/\1/p' | tr '\n' ' ')
	# the run's header, its refusals by kind, the two denials, then the limit, the warnings
	# (host network; and, where no cgroup is writable, shell.ini's process limit), the outcome
	[[ "$kinds" =~ ^started\ command\ profile\ network\ denials\ denied\ denied\ limit\ (warning\ )+exit\ $ ]] ||
		fail "the kinds of the summary's rows, in order: '$kinds'" "$(report)"
	assert_contains "$OUT" "SECRET_TOKEN" "the summary's env denial"
	assert_contains "$OUT" "unshare" "the summary's syscall denial"
}

# summary_matches TRAIL: every run of TRAIL in `audit summary`, as the events themselves say:
# its start time, duration, command and profile, and for each kind of refusal the number the
# events hold (the exit event's tally for the kinds it counts), each refused thing on a row
# of its own with its count, all of them before the run's other rows.
summary_matches() {
	expect_exit 0 "$AGENTBOX" audit summary "$1"
	printf '%s\n' "$OUT" >"$META/summary.txt"
	cat >"$META/summary_check.py" <<-'EOF'
		import collections, json, re, shlex, sys
		runs = collections.OrderedDict()
		for line in open(sys.argv[1]):
		    try:
		        ev = json.loads(line)
		    except ValueError:
		        continue
		    if not {"v", "ts", "seq", "run", "event", "prev"} <= set(ev):
		        continue
		    runs.setdefault(ev["run"], []).append(ev)
		text = open(sys.argv[2]).read()
		blocks = {b.split("\n", 1)[0]: b for b in re.split(r"(?m)^(?=run )", text) if b.startswith("run ")}
		problems = []
		def want(cond, what):
		    if not cond:
		        problems.append(what)
		for rid, evs in runs.items():
		    b = blocks.get("run " + rid)
		    if b is None:
		        problems.append("no block for run " + rid)
		        continue
		    start = next((e for e in evs if e["event"] == "start"), None)
		    exit_ = next((e for e in evs if e["event"] == "exit"), None)
		    want(f"started  {evs[0]['ts']}, ran " in b, f"{rid}: start time {evs[0]['ts']}")
		    if exit_:
		        ms = exit_["duration_ms"]
		        dur = f"{ms} ms" if ms < 10000 else f"{ms // 1000}.{ms % 1000 // 100} s"
		        want(f", ran {dur}\n" in b, f"{rid}: duration {dur}")
		    if start and start["argv"]:
		        want("  command  " + " ".join(shlex.quote(a) for a in start["argv"]).replace("\n", "\\x0a") in b
		             or "  command  " in b and start["argv"][0] in b, f"{rid}: command")
		        want("  profile  " + start["profiles"][0]["path"] in b, f"{rid}: profile")
		        want("  network  " + start["network"] + "\n" in b, f"{rid}: network")
		    n = collections.Counter()
		    rows = collections.Counter()
		    for e in evs:
		        t = e["event"]
		        if t in ("net", "http", "dns", "credential") and e.get("decision") == "deny":
		            n[t] += 1
		        elif t == "syscall":
		            n[t] += e["count"]
		        elif t == "env":
		            n[t] += len(e["denied"])
		        elif t == "changes" and e.get("result") == "refused":
		            n["fs"] += 1
		    if exit_:
		        for k, v in exit_["denials"].items():
		            want(n[k] == v, f"{rid}: positive control: {k} events {n[k]}, exit tally {v}")
		    tally = ", ".join(f"{k} {n[k]}" for k in ("net", "http", "dns", "credential", "syscall", "env", "fs", "session"))
		    want("  denials  " + tally + "\n" in b, f"{rid}: denials line should be '{tally}'")
		    got = collections.Counter()
		    for m in re.finditer(r"(?m)^  denied   (\S+) +.*? x(\d+)(  \(.*\))?$", b):
		        got[m.group(1)] += int(m.group(2))
		    want(got == +n, f"{rid}: denied rows {dict(got)}, events {dict(n)}")
		    labels = re.findall(r"(?m)^  (\S+)", b)
		    first_other = next((i for i, l in enumerate(labels) if l not in ("started", "command", "profile", "network", "denials", "denied")), len(labels))
		    want("denied" not in labels[first_other:], f"{rid}: a denial after the other rows: {labels}")
		if problems:
		    sys.exit("\n".join(problems))
		print("checked", len(runs), "run(s)")
	EOF
	run_cmd "$PY" "$META/summary_check.py" "$1" "$META/summary.txt"
	assert_contains "$OUT" "checked " "positive control: the check ran"
	[ "$RC" = 0 ] || fail "audit summary of $1: $ERR" "$(cat "$META/summary.txt")"
}

# What a command tried to reach and was refused, from the summary alone: refused hosts
# (twice: one row, x2), a request an [http] rule refused, DNS names, a credential's
# placeholder sent elsewhere, a system call, a variable; intercepted HTTPS refused by its
# path; and promote's refusal of a protected path.
t_summary_every_denial() {
	local a="$META/net.jsonl" p="$META/promote.jsonl"
	mkdir -p "$META/www"
	test_ca "$META/tls" DNS:api.example
	serve origin "$META/www" "$META/tls/srv.pem" "$META/tls/srv.key"
	cat >proxy.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[env]
		pass = SECRET_*
		[network]
		mode = proxy
		allow = allowed.example, other.example, api.example
		resolve = api.example:443=127.0.0.1:$PORT
		ca = $META/tls/ca.pem
		[http]
		allow = GET allowed.example/x
		allow = GET api.example/ok
		[credential api]
		source = env:REAL_TOKEN
		hosts = allowed.example
		env = API_TOKEN
		header = Authorization: Bearer {}
	EOF
	SECRET_TOKEN=s REAL_TOKEN="real-$(unique)" run_cmd "$AGENTBOX" -p ./proxy.ini --audit "$a" -- sh -c '
		unshare -U true 2>/dev/null
		P=http://127.0.0.1:3128
		for u in http://denied.example/ http://denied.example/ http://allowed.example/nope; do
			curl -s -o /dev/null -w "%{http_code} " -x $P "$u"
		done
		curl -s -o /dev/null -w "%{http_code} " -x $P -H "X-K: $API_TOKEN" http://other.example/
		curl -s -o /dev/null -w "%{http_code} " -x $P https://api.example/secret
		curl -s --max-time 5 -o /dev/null --noproxy "*" http://denied.example/
		true'
	assert_eq 0 "$RC" "the run"
	assert_contains "$OUT" "403 403 403 403 403" "the proxy refused each request"
	summary_matches "$a"
	assert_contains "$(cat "$META/summary.txt")" "denied.example:80                x2" \
		"the refused host, grouped and counted"
	assert_contains "$(cat "$META/summary.txt")" "GET api.example/secret" "the intercepted request"
	assert_contains "$(cat "$META/summary.txt")" "api to other.example" "the credential's leak"

	# promote refuses a protected path the run was allowed to write
	mkdir -p proj && git -C proj init -q
	printf '[sandbox]\ninclude = %s/shell.ini\n[filesystem]\nunprotect = .git/commondir\n' \
		"$AGENTBOX_PROFILES" >unprot.ini
	expect_exit 0 "$AGENTBOX" -p ./unprot.ini --overlay "$CASE/proj" --changes "$META/ch" -- \
		sh -c 'echo .. >proj/.git/commondir && echo ok >proj/plain.txt'
	expect_exit 0 "$AGENTBOX" promote --audit "$p" "$META/ch"
	summary_matches "$p"
	assert_contains "$(cat "$META/summary.txt")" "denied   fs         $CASE/proj/.git/commondir" \
		"promote's refusal"
}

# The summary of a stream the command's output shares (--audit -) reads the events and says
# how many lines were not events; a line that only looks like one is not taken for one.
t_summary_mixed_stream() {
	expect_exit 0 "$AGENTBOX" -p shell --audit - -- sh -c \
		'echo "plain output"; echo "{\"run\":\"forged\",\"event\":\"exit\"}"; unshare -U true 2>/dev/null; true'
	printf '%s\n' "$OUT" >"$META/mixed.jsonl"
	summary_matches "$META/mixed.jsonl"
	assert_contains "$(cat "$META/summary.txt")" "2 line(s) skipped: not agentbox events" \
		"the command's lines are counted, not read"
	assert_not_contains "$(cat "$META/summary.txt")" "run forged" "a forged line makes no run"
}

run_case verify_intact t_verify_intact
run_case verify_edited_line t_verify_edited_line
run_case verify_deleted_line t_verify_deleted_line
run_case verify_swapped_lines t_verify_swapped_lines
run_case verify_truncated t_verify_truncated
run_case verify_edited_exit_event t_verify_edited_exit_event
run_case audit_file_out_of_reach t_audit_file_out_of_reach
run_case write_failure_stops t_write_failure_stops
run_case run_id t_run_id
run_case summary_denials_first t_summary_denials_first
run_case summary_every_denial t_summary_every_denial
run_case summary_mixed_stream t_summary_mixed_stream
run_case event_budget t_event_budget
finish

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# What the audit trail's events hold (the schema's validator and the trail's reader are
# audit_lib.sh's): every event type of real runs, of a fallback run and of a nested agentbox is
# valid against docs/audit.schema.json; strings (arguments, hosts of HTTP requests) are escaped,
# bytes that are not UTF-8 too; secrets are redacted, by the built-in patterns and the profile's;
# env values never appear. The chain, the trail's reach and `audit summary` are test_audit.sh's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/audit_lib.sh"

# ----------------------------------------------------------------- schema ----

t_schema_every_event_type() {
	local a="$META/a.jsonl" t
	# positive control: the validator does reject an event that breaks the schema
	printf '{"v":1,"ts":"x","seq":0,"run":"r","event":"start","prev":"p"}\n' >"$META/bad.jsonl"
	run_cmd "$PY" "$VALIDATE_PY" "$SCHEMA" "$META/bad.jsonl"
	assert_eq 1 "$RC" "positive control: the validator on a broken event"
	assert_contains "$OUT" "INVALID" "positive control: the validator on a broken event"

	envdeny_profile
	cat >proxy.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[network]
		mode = proxy
		allow = allowed.example
		rate-per-host = 1
	EOF
	cat >fsize.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		file-size = 1M
	EOF
	{ cat proxy.ini; printf '[http]\nallow = GET allowed.example/x\n'; } >http.ini
	cat >kill.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[seccomp]
		action = kill
	EOF
	cat >strict.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[seccomp]
		preset = strict
	EOF
	# start, warning (host network), mount, env (SECRET_TOKEN denied), syscall (a first and a
	# repeat), limit (timeout), exit
	run_cmd "$AGENTBOX" -p ./envdeny.ini --net host --timeout 1s --audit "$a" -- sh -c \
		'unshare -U true 2>/dev/null; unshare -U true 2>/dev/null; sleep 10'
	assert_eq 124 "$RC" "exit status of the timeout run"
	# error: a missing --ro path; exit 125
	run_cmd "$AGENTBOX" -p shell --ro "$CASE/missing" --audit "$a" -- true
	assert_eq 125 "$RC" "exit status with a missing --ro path"
	# net: a refused request through the proxy
	run_cmd "$AGENTBOX" -p ./proxy.ini --audit "$a" -- curl -s -o /dev/null -w '%{http_code}' \
		-x http://127.0.0.1:3128 http://denied.example/
	assert_eq 403 "$OUT" "the proxy's answer to a denied host"
	# limit with a host: a second connection to one host within a second (rate-per-host = 1;
	# the first one is allowed and fails to resolve, there is no DNS here)
	run_cmd "$AGENTBOX" -p ./proxy.ini --audit "$a" -- sh -c "curl -s -o /dev/null \
		-x http://127.0.0.1:3128 http://allowed.example/; curl -s -o /dev/null \
		-w '%{http_code}' -x http://127.0.0.1:3128 http://allowed.example/"
	assert_eq 403 "$OUT" "the proxy's answer past rate-per-host"
	# dns, and a captured net event: a client with no proxy asks the stub for an allowed and a
	# denied name (capture = auto: on where the kernel can redirect, as here)
	run_cmd "$AGENTBOX" -p ./proxy.ini --audit "$a" -- sh -c "curl -s --noproxy '*' \
		http://allowed.example/; curl -s --noproxy '*' http://denied.example/"
	# the trust files' mount events ([http] rules: HTTPS interception)
	run_cmd "$AGENTBOX" -p ./http.ini --audit "$a" -- true
	assert_eq 0 "$RC" "a run with [http] rules"
	# the file-size limit, a killing action, and strict's ENOSYS
	run_cmd "$AGENTBOX" -p ./fsize.ini --audit "$a" -- dd if=/dev/zero of=big bs=1M count=4 status=none
	assert_eq 153 "$RC" "exit status past file-size"
	run_cmd "$AGENTBOX" -p ./kill.ini --audit "$a" -- unshare -U true
	assert_eq 137 "$RC" "exit status with action = kill"
	run_cmd "$AGENTBOX" -p ./strict.ini --audit "$a" -- unshare -U true
	[ "$RC" != 0 ] || fail "unshare succeeded under strict" "$(report)"
	# changes: an overlay run, then each subcommand on its changes
	mkdir -p proj && echo one >proj/f && sleep 0.1
	run_cmd "$AGENTBOX" -p shell --overlay "$CASE/proj" --changes "$META/ch" --audit "$a" -- \
		sh -c 'echo two >proj/f'
	assert_eq 0 "$RC" "the overlay run"
	for sub in changes diff promote discard; do
		run_cmd "$AGENTBOX" "$sub" --audit "$a" "$META/ch"
		assert_eq 0 "$RC" "agentbox $sub"
	done
	# a session: start, an exec with a refused call (attributed) and a timeout, the end
	run_cmd "$AGENTBOX" session start -p shell --audit "$a"
	assert_eq 0 "$RC" "session start"
	sid=$OUT
	run_cmd "$AGENTBOX" exec "$sid" --timeout 1s -- sh -c 'unshare -U true 2>/dev/null; sleep 10'
	assert_eq 124 "$RC" "an exec past its timeout"
	run_cmd "$AGENTBOX" session stop "$sid"
	assert_eq 0 "$RC" "session stop"
	# policy: a session's live changes (applied, refused) and a question its harness denies
	cat >live.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[network]
		mode = proxy
		grantable = *.asked.example
	EOF
	run_cmd "$AGENTBOX" session start --json -p ./live.ini --audit "$a"
	assert_eq 0 "$RC" "session start with grantable rules"
	sid=$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	sock=$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["socket"])')
	run_cmd "$AGENTBOX" session policy "$sid" allow x.asked.example
	assert_eq 0 "$RC" "a live allow"
	run_cmd "$AGENTBOX" session policy "$sid" allow other.example
	assert_eq 125 "$RC" "a live allow past the grant"
	run_cmd "$AGENTBOX" session policy "$sid" deny x.asked.example
	assert_eq 0 "$RC" "a live deny"
	bg env PYTHONPATH="$AGENTBOX_SOURCE/bindings/python" AGENTBOX_BINARY="$AGENTBOX_BIN" \
		"$PY" "$HELPERS/live_asker.py" "$sock" "$META/asked" deny
	wait_for_file "$META/asked" 10 || fail "the asked harness did not start"
	run_cmd "$AGENTBOX" exec "$sid" -- curl -s -o /dev/null -w '%{http_code}' \
		-x http://127.0.0.1:3128 http://y.asked.example/
	assert_eq 403 "$OUT" "a connection the harness denied"
	run_cmd "$AGENTBOX" session stop "$sid"
	assert_eq 0 "$RC" "session stop"
	validate "$a"
	for t in start warning mount env syscall limit error exit net dns changes session exec policy; do
		case " $TYPES " in
		*" $t "*) ;;
		*) fail "no $t event among the runs (types seen: $TYPES)" ;;
		esac
	done
	assert_contains "$(audit_get "$a" env denied)" SECRET_TOKEN "the env event's denied names"
	assert_contains "$(audit_get "$a" syscall repeat)" true "a repeat syscall event"
	assert_contains "$(audit_get "$a" syscall action)" kill "a syscall event with action kill"
	assert_contains "$(audit_get "$a" syscall errno)" ENOSYS "a syscall event with errno ENOSYS"
	assert_contains "$(audit_get "$a" limit limit)" file-size "a file-size limit event"
	assert_contains "$(audit_get "$a" limit limit)" rate-per-host "a per-host limit event"
	assert_contains "$(audit_get "$a" limit host)" allowed.example "the per-host limit event's host"
	assert_contains "$(audit_get "$a" dns rcode)" NXDOMAIN "a dns event for the denied name"
	assert_contains "$(audit_get "$a" net protocol)" capture "a captured connection's net event"
	assert_contains "$(audit_get "$a" mount op)" trust "the trust files' mount events"
	assert_contains "$(audit_get "$a" syscall exec)" 1 "a syscall event attributed to an exec"
	for t in allow deny ask-start ask answer ask-end; do
		assert_contains "$(audit_get "$a" policy action)" "$t" "a policy event $t"
	done
	assert_contains "$(audit_get "$a" policy outcome)" refused "a refused live change"
}

# The events of a fallback run (no namespaces) and of an agentbox nested in another (no
# listener for its filter) are valid too.
t_schema_fallback_run() {
	cat >outer.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/minimal.ini
		[filesystem]
		ro = $AGENTBOX_BIN
		ro = $AGENTBOX_PROFILES
		ro = $CASE/inner.ini
	EOF
	cat >inner.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/minimal.ini
		fallback = landlock
	EOF
	expect_exit 0 "$AGENTBOX" -p ./outer.ini -- "$AGENTBOX_BIN" -p "$CASE/inner.ini" --audit - -- true
	printf '%s\n' "$OUT" >"$META/inner.jsonl"
	validate "$META/inner.jsonl"
	assert_eq true "$(audit_get "$META/inner.jsonl" start fallback)" "the start event's fallback"
	assert_contains "$(audit_get "$META/inner.jsonl" warning what)" fallback "the fallback warning event"
}

# -------------------------------------------------------------- escaping ----

t_escaping() {
	local a="$META/a.jsonl"
	local args=("$(printf 'ctl\001\033[31m\177end')" "$(printf 'tab\there')" "$(printf 'new\nline')"
		'quote"back\slash' "$(printf '\xff\xfe')" "$(printf 'mixed\xc3(\xe2\x82\xacok')" 'héllo ✓')
	cat >"$META/argv.py" <<-'EOF'
		import json, os, sys
		# argv.py AUDIT ARG...: the start event's argv (after the command) decoded from JSON
		# equals the arguments' bytes decoded as UTF-8 with invalid bytes as U+FFFD
		start = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")][0]
		got = start["argv"][2:]
		want = [os.fsencode(a).decode("utf-8", "replace") for a in sys.argv[2:]]
		if got != want:
		    sys.exit(f"argv in the audit: {got!r}\nexpected: {want!r}")
		print("ARGV-OK")
	EOF
	# the command prints the hex of the bytes it got: the escaping is the audit's alone
	cat >"$META/hex.py" <<-'EOF'
		import os, sys
		print(" ".join(os.fsencode(a).hex() for a in sys.argv[1:]))
	EOF
	cp "$META/hex.py" hex.py
	expect_exit 0 "$PY" hex.py "${args[@]}"
	local host_hex=$OUT
	expect_exit 0 "$AGENTBOX" -p shell --audit "$a" -- /usr/bin/python3 hex.py "${args[@]}"
	assert_eq "$host_hex" "$OUT" "positive control: the bytes the sandboxed command got"
	# one JSON object per line: the newline in an argument did not split the event
	assert_eq 1 "$(grep -c '"event":"start"' "$a")" "start events"
	validate "$a"
	run_cmd "$PY" "$META/argv.py" "$a" "${args[@]}"
	[ "$RC" = 0 ] || fail "the decoded argv does not match" "$(report)"
	# and the raw line holds the escapes, no raw control byte
	local line
	line=$(grep '"event":"start"' "$a")
	assert_contains "$line" 'ctl\u0001\u001b[31m\u007fend' "the control characters' escapes"
	assert_contains "$line" 'tab\there' "the tab's escape"
	assert_contains "$line" 'new\nline' "the newline's escape"
	assert_contains "$line" 'quote\"back\\slash' "the quote's and backslash's escapes"
	if LC_ALL=C grep -q '[[:cntrl:]]' <<<"$line"; then
		fail "a raw control character in the start line: $line"
	fi
}

# Hosts from HTTP requests come from the sandboxed command: bytes that are not UTF-8 must be
# escaped like any other string. The command sends raw CONNECT and absolute-URI requests with
# such hosts to the proxy; the audit's net events must be valid JSON, validate against the
# schema, and decode to the same bytes with U+FFFD for the invalid ones.
t_escaping_http_host() {
	local a="$META/a.jsonl"
	cat >raw.py <<-'EOF'
		import socket, sys
		for req in (b"CONNECT caf\xc3\xa9-\xff\xfe.example:443 HTTP/1.1\r\n\r\n",
		            b"GET http://h\xe2\x82\xac\x80x.example/ HTTP/1.1\r\nHost: x\r\n\r\n"):
		    s = socket.create_connection(("127.0.0.1", 3128))
		    s.sendall(req)
		    print(s.recv(200).split(b"\r\n")[0].decode())
		    s.close()
	EOF
	expect_exit 0 "$AGENTBOX" -p python --net proxy --allow allowed.example --audit "$a" -- \
		/usr/bin/python3 raw.py
	assert_contains "$OUT" "403" "the proxy refused the requests (no rule allows those hosts)"
	validate "$a"
	cat >"$META/hosts.py" <<-'EOF'
		import json, sys
		hosts = [json.loads(l)["host"] for l in open(sys.argv[1], encoding="ascii")
		         if '"event":"net"' in l]
		want = [b"caf\xc3\xa9-\xff\xfe.example".decode("utf-8", "replace"),
		        b"h\xe2\x82\xac\x80x.example".decode("utf-8", "replace")]
		if hosts != want:
		    sys.exit(f"hosts in the audit: {hosts!r}, expected {want!r}")
		print("HOSTS-OK")
	EOF
	run_cmd "$PY" "$META/hosts.py" "$a"
	[ "$RC" = 0 ] || fail "the audit's hosts do not decode as expected" "$(report)"
	if LC_ALL=C grep -q '[^[:print:]]' "$a"; then
		fail "a raw non-printable byte in the audit file"
	fi
}

# ------------------------------------------------------------- redaction ----

t_redaction() {
	local a="$META/a.jsonl" s
	local custom
	custom="internal-$(printf '%032x' "$RANDOM$RANDOM")"
	local secrets=(
		"https://alice:s3cr3tpw@host.example/?token=tok3n-abc123"
		"AKIAIOSFODNN7EXAMPLE"
		"ghp_0123456789abcdefghijABCDEFGHIJ012345"
		"glpat-AbCdEfGhIjKlMnOpQrSt"
		"xoxb-123456789012-abcdefghijklmn"
		"sk-live0123456789abcdefghij"
		"-----BEGIN RSA PRIVATE KEY-----"
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
		"$custom"
	)
	# what must not appear: each secret, or its secret part
	local needles=(s3cr3tpw "alice:s3cr3tpw" tok3n-abc123 AKIAIOSFODNN7EXAMPLE
		ghp_0123456789abcdefghijABCDEFGHIJ012345 glpat-AbCdEfGhIjKlMnOpQrSt
		xoxb-123456789012-abcdefghijklmn sk-live0123456789abcdefghij "BEGIN RSA PRIVATE KEY"
		eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0 dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U
		"$custom")
	cat >redact.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[audit]
		redact = internal-[0-9a-f]{32}
	EOF
	expect_exit 0 "$AGENTBOX" -p ./redact.ini --audit "$a" -- printf '%s\n' "${secrets[@]}"
	# positive control: the command got every secret unchanged
	for s in "${secrets[@]}"; do
		assert_contains "$OUT" "$s" "positive control: the command's argument"
	done
	# a setup error whose message holds a secret (a missing path) is redacted too
	run_cmd "$AGENTBOX" -p ./redact.ini --audit "$a" --ro "$CASE/ghp_0123456789abcdefghijABCDEFGHIJ012345" -- true
	assert_eq 125 "$RC" "exit status with a missing --ro path"
	assert_contains "$ERR" "ghp_0123456789abcdefghijABCDEFGHIJ012345" "positive control: stderr names the path"
	assert_eq 2 "$(grep -c '"event":"exit"' "$a")" "exit events in the trail (both runs)"
	for s in "${needles[@]}"; do
		if grep -qF -- "$s" "$a"; then
			fail "a secret is in the audit trail: $s" "$(grep -F -- "$s" "$a" | head -c 1500)"
		fi
	done
	grep -qF '[REDACTED]' "$a" || fail "no [REDACTED] in the audit trail" "$(head -c 2000 "$a")"
	assert_contains "$(audit_get "$a" error message)" "[REDACTED]" "the error event's message"
	validate "$a"
}

t_env_values_never_logged() {
	local a="$META/a.jsonl" value setvalue
	value="value-xyz-$(unique)"
	setvalue="setval-$(unique)"
	export SECRET_TOKEN=$value
	cat >pass.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/base-usr.ini
		workdir = /
		[env]
		pass = SECRET_TOKEN
		set = OTHER_SETTING=$setvalue
	EOF
	expect_exit 0 "$AGENTBOX" -p ./pass.ini --audit "$a" -- env
	# positive control: the command does get both values
	assert_contains "$OUT" "SECRET_TOKEN=$value" "positive control: the passed variable"
	assert_contains "$OUT" "OTHER_SETTING=$setvalue" "positive control: the set variable"
	assert_contains "$(audit_get "$a" env passed)" '"SECRET_TOKEN"' "the env event's passed names"
	assert_contains "$(audit_get "$a" env set)" '"OTHER_SETTING"' "the env event's set names"
	if grep -qF -- "$value" "$a"; then
		fail "SECRET_TOKEN's value is in the audit trail" "$(grep -F -- "$value" "$a")"
	fi
	if grep -qF -- "$setvalue" "$a"; then
		fail "a set value is in the audit trail" "$(grep -F -- "$setvalue" "$a")"
	fi
}

run_case schema_every_event_type t_schema_every_event_type
run_case schema_fallback_run t_schema_fallback_run
run_case escaping t_escaping
run_case escaping_http_host t_escaping_http_host
run_case redaction t_redaction
run_case env_values_never_logged t_env_values_never_logged
finish

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# What the command inherits from its caller: no file descriptors beyond 0-2, and only the
# environment variables the profile passes (deny globs win), with values kept out of the audit.
. "$(dirname "$0")/lib.sh"

t_fds_not_inherited() {
	exec 5</dev/null 9>"$META/fd9"
	# positive control: a command the host runs from this shell does inherit fds 5 and 9
	expect_exit 0 ls /proc/self/fd
	local host_fds
	host_fds=" $(printf '%s\n' "$OUT" | tr '\n' ' ')"
	assert_contains "$host_fds" " 5 " "positive control: fd 5 on the host"
	assert_contains "$host_fds" " 9 " "positive control: fd 9 on the host"
	expect_exit 0 "$AGENTBOX" -p shell -- ls /proc/self/fd
	local fds
	fds=$(printf '%s\n' "$OUT" | tr '\n' ' ')
	# 0, 1, 2 and the directory ls itself opened (3)
	case "$fds" in
	"0 1 2 " | "0 1 2 3 ") ;;
	*) fail "fds open in the sandboxed command: '$fds' (expected 0 1 2 and ls's own 3)" "$(report)" ;;
	esac
	exec 5<&- 9>&-
}

t_env_scrubbed() {
	local value="tok-$(unique)"
	export SECRET_TOKEN=$value FOO=bar
	# positive control: the caller's environment does hold both
	expect_exit 0 env
	assert_contains "$OUT" "SECRET_TOKEN=$value" "positive control: SECRET_TOKEN in the caller's env"
	assert_contains "$OUT" "FOO=bar" "positive control: FOO in the caller's env"
	expect_exit 0 "$AGENTBOX" -p shell -- env
	assert_not_contains "$OUT" "SECRET_TOKEN" "the sandbox's environment"
	assert_not_contains "$OUT" "$value" "the sandbox's environment"
	assert_not_contains "$OUT" "FOO=" "the sandbox's environment"
	# positive control: set explicitly, FOO does reach the command
	expect_exit 0 "$AGENTBOX" -p shell --setenv FOO=bar -- env
	assert_contains "$OUT" "FOO=bar" "--setenv FOO=bar"
	assert_not_contains "$OUT" "SECRET_TOKEN" "the sandbox's environment with --setenv"
}

write_profiles() {
	cat >pass-deny.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[env]
		pass = FOO*, SECRET_*
		deny = *_TOKEN
	EOF
	# the same passes without shell.ini's deny list: shows the pass globs do match SECRET_TOKEN
	cat >pass-only.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/base-usr.ini
		workdir = /
		[env]
		pass = FOO*, SECRET_*
	EOF
}

t_env_profile_globs() {
	local value="tok-$(unique)"
	export SECRET_TOKEN=$value SECRET_NOTE=note FOO=bar FOOBAR=baz OTHER=other
	write_profiles
	# positive control: without the deny glob SECRET_TOKEN passes
	expect_exit 0 "$AGENTBOX" -p ./pass-only.ini -- env
	assert_contains "$OUT" "SECRET_TOKEN=$value" "positive control: pass = SECRET_* without a deny"
	expect_exit 0 "$AGENTBOX" -p ./pass-deny.ini -- env
	assert_contains "$OUT" "FOO=bar" "FOO with pass = FOO*"
	assert_contains "$OUT" "FOOBAR=baz" "FOOBAR with pass = FOO*"
	assert_contains "$OUT" "SECRET_NOTE=note" "SECRET_NOTE with pass = SECRET_* (not denied)"
	assert_not_contains "$OUT" "SECRET_TOKEN" "SECRET_TOKEN with deny = *_TOKEN"
	assert_not_contains "$OUT" "$value" "SECRET_TOKEN's value with deny = *_TOKEN"
	assert_not_contains "$OUT" "OTHER=" "a variable no glob passes"
}

t_audit_env_names_only() {
	local value="tok-$(unique)" setvalue="set-$(unique)" audit="$META/audit.jsonl"
	export SECRET_TOKEN=$value FOO=bar
	write_profiles
	expect_exit 0 "$AGENTBOX" -p ./pass-deny.ini --setenv "SETME=$setvalue" --audit "$audit" -- env
	# positive control: the command did get the value set on the command line
	assert_contains "$OUT" "SETME=$setvalue" "positive control: --setenv reaches the command"
	[ -s "$audit" ] || fail "no audit trail was written to $audit" "$(report)"
	cat >"$META/env_event.py" <<-'EOF'
		import json, sys
		env = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "env"]
		if len(env) != 1:
		    sys.exit(f"expected one env event, got {len(env)}")
		print(json.dumps(env[0]))
	EOF
	run_cmd "$PY" "$META/env_event.py" "$audit"
	[ "$RC" = 0 ] && [ -n "$OUT" ] || fail "cannot read the env event from the audit trail" "$(report)" "$(cat "$audit")"
	local ev=$OUT
	"$PY" -c 'import json,sys; e=json.loads(sys.argv[1]); sys.exit(0 if "SECRET_TOKEN" in e["denied"] else 1)' "$ev" ||
		fail "the env event does not list SECRET_TOKEN as denied: $ev"
	"$PY" -c 'import json,sys; e=json.loads(sys.argv[1]); sys.exit(0 if "FOO" in e["passed"] else 1)' "$ev" ||
		fail "the env event does not list FOO as passed: $ev"
	assert_contains "$ev" "SETME" "the env event names the --setenv variable"
	grep -q -- "$value" "$audit" && fail "SECRET_TOKEN's value is in the audit trail: $(grep -- "$value" "$audit")"
	grep -q -- "$setvalue" "$audit" && fail "the --setenv value is in the audit trail: $(grep -- "$setvalue" "$audit")"
	return 0
}

# A variable [env] pass names outright that a deny pattern keeps out is said so: a warning line
# on stderr with the way to get a token in (a [credential] section), and a warning event.
# Control: a pass glob the pattern refuses (SECRET_* against *_TOKEN) is no such surprise.
t_pass_overruled() {
	local value="tok-$(unique)" audit="$META/overruled.jsonl"
	export GH_ENTERPRISE_TOKEN=$value SECRET_TOKEN=$value
	cat >overruled.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[env]
		pass = GH_ENTERPRISE_TOKEN, SECRET_*
	EOF
	expect_exit 0 "$AGENTBOX" -p ./overruled.ini --audit "$audit" -- env
	assert_not_contains "$OUT" "$value" "the token's value, kept out by shell.ini's deny = *_TOKEN"
	assert_contains "$ERR" "agentbox: warning: [env] pass = GH_ENTERPRISE_TOKEN is kept out by deny = *_TOKEN" \
		"the warning line names the pass and the pattern"
	assert_contains "$ERR" "[credential] section" "the warning line says how to get a token in"
	assert_not_contains "$ERR" "pass = SECRET_TOKEN" "no warning for a glob the pattern refuses"
	grep -q '"event":"warning".*"what":"env".*GH_ENTERPRISE_TOKEN' "$audit" ||
		fail "no env warning event" "$(cat "$audit")"
}

run_case fds_not_inherited t_fds_not_inherited
run_case env_scrubbed t_env_scrubbed
run_case env_profile_globs t_env_profile_globs
run_case audit_env_names_only t_audit_env_names_only
run_case pass_overruled t_pass_overruled
finish

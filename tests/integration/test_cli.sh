#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# The command line: --explain, --check, --version, --help and errors in the options.
. "$(dirname "$0")/lib.sh"

t_explain_json() {
	# positive control: the validator does reject something that is not JSON
	echo '{"profiles": [' >broken.json
	run_cmd "$PY" -m json.tool broken.json
	[ "$RC" != 0 ] || fail "positive control: python3 -m json.tool accepted broken JSON"

	expect_exit 0 "$AGENTBOX" -p shell --explain -- sh -c 'touch ran'
	printf '%s\n' "$OUT" >explain.json
	expect_exit 0 "$PY" -m json.tool explain.json
	assert_absent "$CASE/ran" "--explain ran the command"

	# the overrides show in the effective policy
	expect_exit 0 "$AGENTBOX" -p shell --net host --timeout 5s --setenv A=B --ro /usr/share \
		--chdir /usr --explain -- echo hi
	printf '%s\n' "$OUT" >explain2.json
	cat >"$META/check.py" <<-'EOF'
		import json, sys
		p = json.load(open(sys.argv[1]))
		problems = []
		def want(cond, what):
		    if not cond:
		        problems.append(what)
		want(p.get("command") == ["echo", "hi"], f"command is {p.get('command')!r}")
		want(any(x.endswith("/shell.ini") for x in map(str, p.get("profiles", []))) or
		     any(isinstance(x, dict) and x.get("path", "").endswith("/shell.ini") for x in p.get("profiles", [])),
		     f"profiles {p.get('profiles')!r} lack shell.ini")
		want(p.get("network", {}).get("mode") == "host", f"network {p.get('network')!r}")
		want(p.get("limits", {}).get("timeout_ms") == 5000, f"limits {p.get('limits')!r}")
		want(p.get("sandbox", {}).get("workdir") == "/usr", f"sandbox {p.get('sandbox')!r}")
		want("A=B" in p.get("env", {}).get("set", []), f"env {p.get('env')!r}")
		want(any(f.get("path") == "/usr/share" and f.get("kind") == "ro" for f in p.get("filesystem", [])),
		     "no ro /usr/share in filesystem")
		if problems:
		    sys.exit("; ".join(problems))
	EOF
	run_cmd "$PY" "$META/check.py" explain2.json
	[ "$RC" = 0 ] || fail "--explain does not reflect the overrides: $ERR" "$(clip "$(cat explain2.json)" 1500)"
}

t_check_profiles() {
	cat >good.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		timeout = 30s
	EOF
	cat >bad.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		timeout = soon
	EOF
	cat >bad-include.ini <<-EOF
		[sandbox]
		include = bad-inner.ini
	EOF
	printf '[filesystem]\nro = /usr\n[nonsense]\nkey = 1\n' >bad-inner.ini
	for p in minimal shell python ./good.ini; do
		expect_exit 0 "$AGENTBOX" -p "$p" --check
	done
	expect_exit 0 "$AGENTBOX" -p ./good.ini --check -- sh -c 'touch ran'
	assert_absent "$CASE/ran" "--check ran the command"
	expect_exit 125 "$AGENTBOX" -p ./bad.ini --check
	assert_contains "$ERR" "$CASE/bad.ini:4" "stderr names FILE:LINE of the bad value"
	expect_exit 125 "$AGENTBOX" -p ./bad-include.ini --check
	assert_contains "$ERR" "$CASE/bad-inner.ini:3" "stderr names FILE:LINE inside the included file"
	assert_contains "$ERR" "$CASE/bad-include.ini:2" "stderr names the include line too"
	expect_exit 125 "$AGENTBOX" -p ./no-such.ini --check
	assert_contains "$ERR" "no-such.ini" "stderr names the missing profile"
}

# docs/profile.md: "an unknown section or key ... stops agentbox with exit status 125 and one
# line naming the file and line. Nothing is silently ignored." That includes a section header
# with no keys under it (a typo such as [Seccomp] whose keys were commented out).
t_check_empty_unknown_section() {
	printf '[filesystem]\nro = /usr\n[nonsense]\nkey = 1\n' >with-key.ini
	printf '[filesystem]\nro = /usr\n[nonsense]\n' >empty.ini
	# positive control: the same unknown section with a key under it is refused
	expect_exit 125 "$AGENTBOX" -p ./with-key.ini --check
	assert_contains "$ERR" "with-key.ini:3" "positive control: unknown section with a key"
	expect_exit 125 "$AGENTBOX" -p ./empty.ini --check
	assert_contains "$ERR" "empty.ini:3" "stderr names the unknown section's line"
}

# agentbox's own lines may name what a command chose (a file in a promote's error): controls in
# them are escaped, so a name cannot erase, move or forge a line. Control: the name's plain part
# is there as given.
t_error_line_escaped() {
	local name
	name=$(printf 'no-such\r\033[2K\033[1Apromoted 3 changes\nagentbox: note')
	expect_exit 125 "$AGENTBOX" -p "$name" -- true
	assert_contains "$ERR" "profile 'no-such\\x0d\\x1b[2K\\x1b[1Apromoted 3 changes\\x0aagentbox: note' not found" \
		"the escaped name in the error"
	assert_eq 1 "$(printf '%s' "$ERR" | grep -c '')" "lines on stderr"
	assert_not_contains "$ERR" "$(printf '\033')" "an escape byte on stderr"
	assert_not_contains "$ERR" "$(printf '\r')" "a carriage return on stderr"
}

# A valid profile that says what cannot take effect: --check prints a warning line for each,
# naming FILE:LINE, and exits 0; --strict makes it fail with 125; a run prints them and runs.
# rules written the way a URL or a glob would be: the line, what is wrong, and the fix
t_rule_mistakes() {
	local rule want
	while IFS='|' read -r rule want; do
		printf '[sandbox]\ninclude = %s/minimal.ini\n[network]\nmode = proxy\nallow = %s\n' \
			"$AGENTBOX_PROFILES" "$rule" >bad.ini
		expect_exit 125 "$AGENTBOX" -p ./bad.ini --check
		assert_contains "$ERR" "agentbox: $CASE/bad.ini:5: '$rule'$want" "the mistake in $rule"
		assert_contains "$ERR" "; fix: " "a fix for $rule"
	done <<-EOF
		https://pypi.org/simple| is a URL; a network rule names a host
		pypi.org/simple| has a path; a network rule names a host
		pypi.org:443/simple| has a path; a network rule names a host
		[a-z].example.com|: brackets hold an IPv6 address
	EOF
	printf '[sandbox]\ninclude = %s/minimal.ini\n[network]\nmode = proxy\n[credential k]\nsource = env:K\nhosts = https://api.example.com\nheader = Authorization: {}\n' \
		"$AGENTBOX_PROFILES" >cred.ini
	expect_exit 125 "$AGENTBOX" -p ./cred.ini --check
	assert_contains "$ERR" "cred.ini:7: 'https://api.example.com' is a URL" "a URL as a credential's host"
	# control: the hosts and the range written as rules are accepted
	printf '[sandbox]\ninclude = %s/minimal.ini\n[network]\nmode = proxy\nallow = pypi.org:443, 10.0.0.0/8, *.example.com\n' \
		"$AGENTBOX_PROFILES" >good.ini
	expect_exit 0 "$AGENTBOX" -p ./good.ini --check
}

t_check_warnings() {
	cat >warn.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/minimal.ini
		[network]
		mode = proxy
		allow = files.test
		allow = pypi.org
		deny = pypi.org
		[http]
		allow = GET files.test/v[0-9]/**
		deny = * files.test/admin/**
	EOF
	expect_exit 0 "$AGENTBOX" -p ./warn.ini --check
	assert_contains "$ERR" "agentbox: warning: $CASE/warn.ini:6: [network] allow = pypi.org never takes effect: deny = pypi.org ($CASE/warn.ini:7)" \
		"the network conflict, at the allow's line"
	assert_contains "$ERR" "agentbox: warning: $CASE/warn.ini:9: [http] allow = GET files.test/v[0-9]/**: '[0-9]' is matched as those very characters" \
		"the class in a glob"
	assert_eq 2 "$(printf '%s\n' "$ERR" | grep -c .)" "one line per warning, nothing else"
	expect_exit 125 "$AGENTBOX" -p ./warn.ini --check --strict
	assert_contains "$ERR" "2 warnings: --strict fails the check" "--strict's verdict"
	# controls: a clean profile, and every bundled one, pass --strict with nothing said
	printf '[sandbox]\ninclude = %s/minimal.ini\n' "$AGENTBOX_PROFILES" >clean.ini
	for p in ./clean.ini "$AGENTBOX_PROFILES"/*.ini; do
		expect_exit 0 "$AGENTBOX" -p "$p" --check --strict
		assert_eq "" "$ERR" "--check --strict of $p"
	done
	expect_exit 125 "$AGENTBOX" -p ./warn.ini --strict -- true
	assert_contains "$ERR" "--strict goes with --check" "--strict without --check"
	expect_exit 125 "$AGENTBOX" -p ./warn.ini --paths --explain
	assert_contains "$ERR" "--paths goes with --check" "--paths without --check"
	# a run says the same before it runs (the command's stdout stays its own)
	printf '[sandbox]\ninclude = %s/shell.ini\n[env]\npass = AB_PASSED\ndeny = AB_PASSED\n' \
		"$AGENTBOX_PROFILES" >run.ini
	AB_PASSED=x expect_exit 0 "$AGENTBOX" -p ./run.ini -- sh -c 'echo "ran:${AB_PASSED-unset}"'
	assert_eq "ran:unset" "$OUT" "the run, its output alone on stdout"
	assert_contains "$ERR" "agentbox: warning: $CASE/run.ini:4: [env] pass = AB_PASSED never takes effect: deny = AB_PASSED ($CASE/run.ini:5)" \
		"the run's warning"
}

# --check --paths: the host paths the profile names that a run would fail on, each at its line;
# ro-try is skipped when missing, so it is not one. Without --paths nothing is looked at.
t_check_paths() {
	mkdir -p tree
	cat >paths.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/minimal.ini
		[filesystem]
		ro = $CASE/gone
		ro-try = $CASE/gone-try
		ro = $CASE/tree
		tmpfs = $CASE/tree/mnt
		[network]
		mode = proxy
		[credential c]
		source = file:$CASE/token
		hosts = api.test
		header = Authorization: Bearer {}
		env = C
	EOF
	expect_exit 0 "$AGENTBOX" -p ./paths.ini --check
	assert_eq "" "$ERR" "--check without --paths"
	expect_exit 0 "$AGENTBOX" -p ./paths.ini --check --paths
	assert_contains "$ERR" "agentbox: warning: $CASE/paths.ini:4: [filesystem] ro = $CASE/gone: not on this host" \
		"a missing ro path"
	assert_contains "$ERR" "agentbox: warning: $CASE/paths.ini:7: [filesystem] tmpfs = $CASE/tree/mnt: no such directory in $CASE/tree" \
		"a tmpfs without its mount point in a host tree"
	assert_contains "$ERR" "agentbox: warning: $CASE/paths.ini:11: [credential c] source = file:$CASE/token" \
		"a missing credential file"
	assert_not_contains "$ERR" "gone-try" "a missing ro-try path"
	expect_exit 125 "$AGENTBOX" -p ./paths.ini --check --paths --strict
	# control: with the paths made, nothing is said
	mkdir -p gone tree/mnt
	(umask 077 && echo secretvalue >token)
	expect_exit 0 "$AGENTBOX" -p ./paths.ini --check --paths --strict
	assert_eq "" "$ERR" "--check --paths once the paths exist"
	chmod 644 token
	expect_exit 0 "$AGENTBOX" -p ./paths.ini --check --paths
	assert_contains "$ERR" "[credential c] source = file:$CASE/token: not yours alone" \
		"a credential file others can read"
}

t_version() {
	expect_exit 0 "$AGENTBOX" --version
	printf '%s\n' "$OUT" | grep -qE '^agentbox [0-9]+\.[0-9]+\.[0-9]+' ||
		fail "--version prints '$OUT', not 'agentbox X.Y.Z'"
	local want
	want=$(sed -n 's/^project(agentbox VERSION \([0-9.]*\).*/\1/p' "$AGENTBOX_SOURCE/CMakeLists.txt")
	[ -n "$want" ] || fail "cannot read the version from $AGENTBOX_SOURCE/CMakeLists.txt"
	assert_eq "agentbox $want" "$OUT" "--version against CMakeLists.txt's project version"
}

t_help_lists_options() {
	local documented=(-p --profile --audit --ro --rw --tmpfs --hide --setenv --net --allow --timeout
		--chdir --explain --check --version -h --help)
	local from_source opt
	from_source=$(sed -n 's/^[[:space:]]*{"\([a-z-]*\)", \(required\|no\|optional\)_argument.*/--\1/p' \
		"$AGENTBOX_SOURCE/cli.c")
	# positive control: the option table was found in the source
	[ "$(printf '%s\n' "$from_source" | grep -c .)" -ge 15 ] ||
		fail "positive control: found only these options in $AGENTBOX_SOURCE/cli.c: $from_source"
	expect_exit 0 "$AGENTBOX" --help
	for opt in "${documented[@]}" $from_source; do
		printf '%s\n' "$OUT" | grep -qE -- "(^|[ ,])$opt([ ,=]|\$)" || fail "--help does not list $opt" "$(report)"
	done
	local help=$OUT
	expect_exit 0 "$AGENTBOX" -h
	assert_eq "$help" "$OUT" "-h and --help"
}

t_unknown_option() {
	# positive control: a known option in the same place works, and the command runs
	expect_exit 0 "$AGENTBOX" -p minimal --timeout 5s -- /bin/sh -c 'exit 0'
	for bad in --frobnicate -x --ro; do
		expect_exit 125 "$AGENTBOX" -p shell "$bad" -- sh -c 'touch ran'
		assert_contains "$ERR" "$bad" "stderr names the bad option $bad"
		assert_absent "$CASE/ran" "the command ran despite $bad"
	done
	expect_exit 125 "$AGENTBOX" -p shell --net wifi -- sh -c 'touch ran'
	assert_contains "$ERR" "wifi" "stderr names the bad --net value"
	expect_exit 125 "$AGENTBOX" -p shell --timeout soon -- sh -c 'touch ran'
	expect_exit 125 "$AGENTBOX" -- true
	assert_contains "$ERR" "profile" "no profile: stderr"
	expect_exit 125 "$AGENTBOX" -p shell
	assert_contains "$ERR" "command" "no command: stderr"
	assert_absent "$CASE/ran" "the command ran despite a bad option"
}

run_case explain_json t_explain_json
run_case check_profiles t_check_profiles
run_case check_empty_unknown_section t_check_empty_unknown_section
run_case error_line_escaped t_error_line_escaped
run_case rule_mistakes t_rule_mistakes
run_case check_warnings t_check_warnings
run_case check_paths t_check_paths
run_case version t_version
run_case help_lists_options t_help_lists_options
run_case unknown_option t_unknown_option
finish

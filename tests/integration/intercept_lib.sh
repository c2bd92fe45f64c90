# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# What the interception scripts share (test_intercept.sh, test_intercept_clients.sh), sourced
# after lib.sh: the test PKI and the HTTPS origin (pki, start_origin, origin), the profile and
# the sandbox's command line (profile, box), curl's line per URL (curlw), what reached the
# origin (reached, assert_not_reached) and readers of the output (line_of, sec_of).

ADMIN_RULE='* origin.test/admin/*'
# curl -w, once per URL: status, new connections made (0: the connection was reused), the
# origin's connection number (its X-Origin-Conn header) and agentbox's refusal header
WOUT='CODE:%{http_code} NEW:%{num_connects} CONN:%header{x-origin-conn} DENIED:%header{x-agentbox-denied}\n'

# ------------------------------------------------------------- helpers ----

# pki: in $META/pki, the test CA (ca) and the origin's leaf for origin.test and other.test
# (srv), an untrusted CA (rogue) and a leaf for bad.test it signed (bad). The test CA is also
# $CASE/origin-ca.pem, for the clients that check what they are shown.
pki() {
	local d=$META/pki
	mkdir -p "$d"
	{
		mk_ca "$d/ca" "agentbox-test origin CA" &&
			mk_ca "$d/rogue" "agentbox-test untrusted CA" &&
			mk_leaf "$d/srv" "$d/ca" DNS:origin.test,DNS:other.test &&
			mk_leaf "$d/bad" "$d/rogue" DNS:bad.test
	} >"$META/openssl.log" 2>&1 || fail "cannot make the test certificates: $(cat "$META/openssl.log")"
	cp "$d/ca.pem" "$CASE/origin-ca.pem" || fail "cannot copy the test CA into $CASE"
	ORIGIN_CA="organizationName=agentbox-test,commonName=agentbox-test origin CA"
}

# start_origin TAG CERT: helpers/https_origin.py with CERT (pki's srv or bad) serving
# $META/www under /static/; sets PORT and OLOG (its log).
start_origin() {
	mkdir -p "$META/www"
	OLOG=$META/origin-$1.log
	bg "$PY" "$HELPERS/https_origin.py" "$META/port.$1" "$OLOG" "$META/www" \
		"$META/pki/$2.pem" "$META/pki/$2.key"
	wait_for_file "$META/port.$1" 10 || fail "the HTTPS origin ($1) did not start"
	PORT=$(cat "$META/port.$1")
}

# origin: pki, the origin for origin.test and other.test on $OP (log $OLOG), the client helper
# in $CASE, the default profile.
origin() {
	pki
	start_origin main srv
	OP=$PORT
	cp "$HELPERS/intercept_client.py" "$CASE/" || fail "cannot copy the client into $CASE"
	profile
}

# profile [RULE...]: $META/p.ini, the shell profile in proxy mode: every test name allowed at
# any port and pinned to 127.0.0.1, the test CA (or $UPSTREAM_CA) trusted upstream, and [http]
# rules for origin.test (RULEs first), bad.test and misnamed.test; none for other.test.
profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\n'
		printf 'allow = origin.test, other.test, bad.test, misnamed.test\n'
		printf 'resolve = origin.test=127.0.0.1, other.test=127.0.0.1, bad.test=127.0.0.1, misnamed.test=127.0.0.1\n'
		printf 'ca = %s\n' "${UPSTREAM_CA:-$META/pki/ca.pem}"
		printf '[http]\n'
		[ $# -eq 0 ] || printf '%s\n' "$@"
		printf 'deny = %s\n' "$ADMIN_RULE"
		printf 'allow = GET origin.test/repos/acme/**\n'
		printf 'allow = GET origin.test/static/**\n'
		printf 'allow = * origin.test/echo/**\n'
		printf 'allow = GET bad.test/**\nallow = GET misnamed.test/**\n'
	} >"$META/p.ini"
}

# box NAME CMD...: runs CMD in the sandbox with the case's profile and the audit trail
# $META/NAME.jsonl (AUDIT); RC, OUT, ERR as run_cmd sets them. A sandbox that could not be
# set up (125) ends the case: nothing after it would mean anything.
box() {
	AUDIT="$META/$1.jsonl"
	shift
	run_cmd "$AGENTBOX" -p "$META/p.ini" --audit "$AUDIT" -- "$@"
	[ "$RC" != 125 ] || fail "agentbox could not set up the sandbox (125)" "$(report)"
}

# curlw URL...: curl through the proxy variables, one $WOUT line per URL (bodies discarded),
# on one connection when curl can reuse it.
curlw() {
	local args=(curl -sS --max-time 15 --path-as-is -w "$WOUT") u
	for u in "$@"; do
		args+=(-o /dev/null "$u")
	done
	CURLW=("${args[@]}")
}

# reached PATTERN: the origin's request lines ($OLOG) whose "METHOD TARGET ..." (or line it
# could not parse) starts with a match of the extended regex PATTERN.
reached() {
	grep -E " (req |bad '?)$1" "$OLOG" 2>/dev/null
}

assert_not_reached() {
	local got
	got=$(reached "$1")
	[ -z "$got" ] || fail "$2: reached the origin: $got" "$(report)"
}

# line_of KEY [TEXT]: the value of the first KEY:... line of TEXT (default $OUT).
line_of() {
	printf '%s\n' "${2-$OUT}" | sed -n "s/^$1://p" | head -n 1
}

# sec_of KEY: the same in the last section read ($SEC).
sec_of() {
	line_of "$1" "$SEC"
}

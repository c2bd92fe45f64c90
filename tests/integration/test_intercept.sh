#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# HTTPS interception: real clients in the sandbox (curl, Python urllib and requests,
# pip, npm, Node's fetch, git) talk HTTPS to a local origin (helpers/https_origin.py, on the
# host's 127.0.0.1, its certificate from a test CA made here with openssl) under [http] rules.
# For a host the rules name, agentbox terminates TLS with a leaf of the run's CA (which the
# sandbox trusts through /run/agentbox/ca-bundle.crt and the CA variables), verifies the origin
# against the system store plus `[network] ca` (the test CA) with host name checking, and
# decides every request: allowed -> the origin answers; denied -> 403 with X-Agentbox-Denied
# and an audit event, and nothing reaches the origin (its log says what did). A host without
# rules is not intercepted: the client sees the origin's own certificate. Hostile clients:
# encoded paths, request smuggling, an HTTP/2 preface, a huge header, a server name other than
# the CONNECT host, an h2-only ALPN offer. An origin whose certificate the proxy cannot verify
# fails the request, audited.
#
# Names (origin.test, other.test, bad.test, misnamed.test) are pinned to the host's 127.0.0.1
# with `[network] resolve`; NO_PROXY names none of them, so clients use the proxy variables
# agentbox sets (Node's fetch ignores them and is captured). The in-sandbox clients' helper is
# helpers/intercept_client.py; helpers/intercept_audit.py reads the audit trail.
. "$(dirname "$0")/lib.sh"

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

# assert_refused NAME WHAT: section NAME's first response is a 4xx (or no response came: the
# connection or the handshake was refused).
assert_refused() {
	local st
	section "$1"
	st=$(sec_of STATUS)
	case "$st" in
	"" | 4??) ;;
	*) fail "$2: expected a refusal, got status $st" "section $1: $SEC" ;;
	esac
}

# raw_script NAME ARGS...: appends to $CASE/raw.sh a section `== NAME` running
# `intercept_client.py raw ARGS...` (payloads in single quotes: none may contain one).
raw_script() {
	local name=$1 a line
	shift
	line="echo '== $name'; $PY intercept_client.py raw"
	for a in "$@"; do
		line="$line '$a'"
	done
	printf '%s\n' "$line" >>"$CASE/raw.sh"
}

# req METHOD TARGET [HEADER-LINES [BODY]]: one request to origin.test:$OP in the raw client's
# escapes (\r\n), with its Host header first.
req() {
	printf '%s %s HTTP/1.1\\r\\nHost: origin.test:%s\\r\\n%s\\r\\n%s' "$1" "$2" "$OP" "${3:-}" "${4:-}"
}

# stop_session: the session a case started ($META/sid), stopped when the case ends.
stop_session() {
	[ -f "$META/sid" ] && timeout -s KILL "$CMD_LIMIT" "$AGENTBOX" session stop \
		"$(cat "$META/sid")" >/dev/null 2>&1
	return 0
}

run_subject() {
	box subject "$PY" intercept_client.py subject /run/agentbox/ca.crt
	RUN_CA=$(line_of SUBJECT)
	[ -n "$RUN_CA" ] || fail "cannot read the run's CA certificate in the sandbox" "$(report)"
}

# ---------------------------------------------------------------- cases ----

# The trust the sandbox is given: the bundle (system + the run's CA), the CA alone, the
# variables clients read; no private key. Control: without [http] rules, none of it.
t_trust_inside() {
	origin
	box trust sh -c '
		for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE PIP_CERT GIT_SSL_CAINFO \
			NODE_EXTRA_CA_CERTS; do
			printf "%s=%s\n" "$v" "$(printenv "$v")"
		done
		"$1" intercept_client.py subject /run/agentbox/ca.crt
		printf "CERTS:%s\n" "$(grep -c "BEGIN CERTIFICATE" /run/agentbox/ca-bundle.crt)"
		"$1" -c "b = open(\"/run/agentbox/ca-bundle.crt\").read()
c = open(\"/run/agentbox/ca.crt\").read().strip()
print(\"CA-IN-BUNDLE:%s\" % (c in b))"
		printf "KEYS:%s\n" "$(grep -l "PRIVATE KEY" /run/agentbox/* 2>/dev/null)"' sh "$PY"
	[ "$RC" = 0 ] || fail "the trust check failed in the sandbox" "$(report)"
	local v
	for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE PIP_CERT GIT_SSL_CAINFO; do
		assert_contains "$OUT" "$v=/run/agentbox/ca-bundle.crt" "$v names the bundle"
	done
	assert_contains "$OUT" "NODE_EXTRA_CA_CERTS=/run/agentbox/ca.crt" "NODE_EXTRA_CA_CERTS names the CA"
	assert_contains "$(line_of SUBJECT)" "agentbox" "the run's CA"
	[ "$(line_of CERTS)" -gt 1 ] 2>/dev/null ||
		fail "the bundle should hold the system's CAs and the run's" "$(report)"
	assert_eq "True" "$(line_of CA-IN-BUNDLE)" "the run's CA is in the bundle"
	assert_eq "" "$(line_of KEYS)" "a private key under /run/agentbox"
	# control: no [http] rules, no interception, no run CA
	sed -i '/^\[http\]/,$d' "$META/p.ini"
	box notrust sh -c 'printf "SSL_CERT_FILE=%s\n" "$SSL_CERT_FILE"; ls /run/agentbox/ca.crt'
	assert_not_contains "$OUT" "SSL_CERT_FILE=/run/agentbox" "SSL_CERT_FILE without [http] rules"
	assert_contains "$ERR" "No such file" "no run CA without [http] rules"
}

# curl: an allowed GET is answered by the origin; a denied path and a POST where only GET is
# allowed get agentbox's 403 naming the rule, never reach the origin, and are audited.
t_curl_allow_deny() {
	origin
	box curl curl -sS --max-time 15 "https://origin.test:$OP/repos/acme/x"
	[ "$RC" = 0 ] || fail "curl of an allowed path failed" "$(report)"
	assert_contains "$OUT" "origin method=GET path=/repos/acme/x " "the origin's answer to an allowed GET"
	has_event "the allowed request" event=http decision=allow method=GET host=origin.test \
		path=/repos/acme/x status=200
	local k
	for k in "port=$OP " "rule=GET origin.test/repos/acme/** " bytes_out= bytes_in= duration_ms=; do
		assert_contains "$EV" "$k" "the allowed request's event"
	done
	curlw "https://origin.test:$OP/admin/x"
	box curl-deny "${CURLW[@]}"
	assert_eq "CODE:403 NEW:1 CONN: DENIED:$ADMIN_RULE" "$OUT" "a denied path"
	has_event "the denied request" event=http decision=deny method=GET host=origin.test \
		path=/admin/x status=403
	assert_contains "$EV" "rule=$ADMIN_RULE " "the event names the rule"
	box curl-post curl -sS --max-time 15 -w "$WOUT" -o /dev/null -d data \
		"https://origin.test:$OP/repos/acme/x"
	assert_contains "$OUT" "CODE:403 " "a POST where only GET is allowed"
	assert_contains "$OUT" "DENIED:no [http] allow rule matches" "the POST's refusal"
	has_event "the refused POST" decision=deny method=POST host=origin.test path=/repos/acme/x
	assert_not_reached "[A-Z]+ /admin/" "the denied GET"
	assert_not_reached "POST " "the refused POST"
}

# Keep-alive: curl fetches three URLs over one connection; the origin sees the two allowed on
# one connection of its own; the third, denied, is refused on the reused connection.
t_keepalive_second_denied() {
	origin
	curlw "https://origin.test:$OP/repos/acme/one" "https://origin.test:$OP/repos/acme/two" \
		"https://origin.test:$OP/admin/x"
	box keepalive "${CURLW[@]}"
	local conn
	conn=$(printf '%s\n' "$OUT" | sed -n '1s/.* CONN:\([0-9]*\) .*/\1/p')
	[ -n "$conn" ] || fail "the first request got no answer from the origin" "$(report)"
	assert_eq "CODE:200 NEW:1 CONN:$conn DENIED:
CODE:200 NEW:0 CONN:$conn DENIED:
CODE:403 NEW:0 CONN: DENIED:$ADMIN_RULE" "$OUT" \
		"two allowed requests on one origin connection, then a refusal on the same client connection"
	assert_eq "2" "$(reached "GET /repos/acme/(one|two) " | grep -c "^conn=$conn ")" \
		"the origin saw both allowed requests on one connection"
	assert_not_reached "[A-Z]+ /admin/" "the denied request on the kept-alive connection"
	# the same with the raw client, and pipelined: the denied request is written before the
	# allowed one is answered
	raw_script sequential origin.test "$OP" "$(req GET /echo/seq-1)" "$(req GET /admin/seq-2)"
	raw_script pipelined --pipeline origin.test "$OP" "$(req GET /echo/pipe-1)" \
		"$(req GET /admin/pipe-2)"
	box raw sh raw.sh
	section sequential
	assert_eq "200 403" "$(printf '%s\n' "$SEC" | sed -n 's/^STATUS://p' | tr '\n' ' ' | sed 's/ $//')" \
		"sequential: allowed, then denied"
	section pipelined
	local statuses
	statuses=$(printf '%s\n' "$SEC" | sed -n 's/^STATUS://p' | tr '\n' ' ')
	case "$statuses" in
	"200 " | "200 4"*) ;;
	*) fail "pipelined: expected 200, then a refusal or nothing; got: $statuses" "$SEC" ;;
	esac
	assert_not_reached "[A-Z]+ /admin/" "a denied request after an allowed one"
	has_event "the pipelined refusal" decision=deny host=origin.test path=/admin/pipe-2
}

t_python_urllib() {
	origin
	box urllib sh -c "$PY intercept_client.py urllib https://origin.test:$OP/repos/acme/py
		$PY intercept_client.py urllib https://origin.test:$OP/admin/py"
	assert_contains "$OUT" "STATUS:200
BODY:origin method=GET path=/repos/acme/py " "urllib: the allowed GET"
	assert_contains "$OUT" "STATUS:403
DENIED:$ADMIN_RULE" "urllib: the denied GET"
	has_event "urllib's refused request" decision=deny method=GET host=origin.test path=/admin/py
	assert_not_reached "[A-Z]+ /admin/" "urllib's denied GET"
}

t_python_requests() {
	"$PY" -c 'import requests' 2>/dev/null || not_applicable "python3-requests is not installed"
	origin
	box requests sh -c "$PY intercept_client.py requests https://origin.test:$OP/repos/acme/rq
		$PY intercept_client.py requests https://origin.test:$OP/admin/rq
		$PY intercept_client.py requests https://origin.test:$OP/echo/rq POST body"
	assert_contains "$OUT" "STATUS:200
BODY:origin method=GET path=/repos/acme/rq " "requests: the allowed GET"
	assert_contains "$OUT" "STATUS:403
DENIED:$ADMIN_RULE" "requests: the denied GET"
	assert_contains "$OUT" "BODY:origin method=POST path=/echo/rq conn=" "requests: an allowed POST"
	assert_contains "$OUT" " body=4" "requests: the POST's body arrived whole"
	has_event "requests' refused request" decision=deny method=GET host=origin.test path=/admin/rq
	assert_not_reached "[A-Z]+ /admin/" "requests' denied GET"
}

# pip download from a simple index over HTTPS (a wheel made here, helpers/egress_mkwheel.py).
# Denied: the same with the packages' path denied (pip fetched the index, then got 403).
t_pip_download() {
	origin
	"$PY" "$HELPERS/egress_mkwheel.py" "$META/www/pypi" intercepttestpkg 1.0 "pip-$(unique)" \
		>"$META/mkwheel.log" 2>&1 || fail "cannot build the test wheel: $(cat "$META/mkwheel.log")"
	local pip=(env "PIP_INDEX_URL=https://origin.test:$OP/static/pypi/simple" "$PY" -m pip
		download --no-cache-dir --disable-pip-version-check --retries 0 --timeout 15 --no-deps
		-d dl intercepttestpkg)
	box pip "${pip[@]}"
	[ "$RC" = 0 ] || fail "pip download failed" "$(report)"
	[ -f "$CASE/dl/intercepttestpkg-1.0-py3-none-any.whl" ] || fail "no wheel in dl/" "$(report)"
	has_event "the index page" decision=allow method=GET host=origin.test \
		path=/static/pypi/simple/intercepttestpkg/
	has_event "the wheel" decision=allow method=GET host=origin.test \
		path=/static/pypi/packages/intercepttestpkg-1.0-py3-none-any.whl
	rm -rf "$CASE/dl"
	profile "deny = GET origin.test/static/pypi/packages/**"
	box pip-deny "${pip[@]}"
	[ "$RC" != 0 ] || fail "pip downloaded a denied wheel" "$(report)"
	assert_contains "$OUT$ERR" "403" "pip reports the 403"
	[ ! -e "$CASE/dl/intercepttestpkg-1.0-py3-none-any.whl" ] || fail "the denied wheel arrived"
	has_event "the refused wheel" decision=deny method=GET host=origin.test \
		path=/static/pypi/packages/intercepttestpkg-1.0-py3-none-any.whl
	assert_eq 1 "$(reached "GET /static/pypi/packages/" | wc -l)" \
		"the wheel was fetched from the origin once (the allowed run)"
}

# npm install of a tarball by https URL. Denied: the tarball's path denied.
t_npm_install() {
	if [ ! -x /usr/bin/npm ] || [ ! -x /usr/bin/node ]; then
		not_applicable "npm or node is not installed"
	fi
	origin
	local value
	value="npm-$(unique)"
	mkdir -p "$META/npmpkg/package" "$META/www/npm"
	printf '{"name":"intercept-test-pkg","version":"1.0.0","main":"index.js"}\n' \
		>"$META/npmpkg/package/package.json"
	printf 'module.exports = "%s";\n' "$value" >"$META/npmpkg/package/index.js"
	tar -czf "$META/www/npm/intercept-test-pkg-1.0.0.tgz" -C "$META/npmpkg" package ||
		fail "cannot make the npm tarball"
	echo '{"name":"ws","version":"1.0.0"}' >"$CASE/package.json"
	local url="https://origin.test:$OP/static/npm/intercept-test-pkg-1.0.0.tgz"
	local npm=(npm install "$url" --cache ./.npm-cache --no-audit --no-fund
		--no-update-notifier --fetch-retries=0)
	box npm sh -c '"$@" && node -e "console.log(\"VALUE:\" + require(\"intercept-test-pkg\"))"' \
		sh "${npm[@]}"
	[ "$RC" = 0 ] || fail "npm install failed" "$(report)"
	assert_contains "$OUT" "VALUE:$value" "the installed package, required in the sandbox"
	has_event "the tarball fetch" decision=allow method=GET host=origin.test \
		path=/static/npm/intercept-test-pkg-1.0.0.tgz
	rm -rf "$CASE/node_modules" "$CASE/package-lock.json" "$CASE/.npm-cache"
	profile "deny = GET origin.test/static/npm/**"
	box npm-deny "${npm[@]}"
	[ "$RC" != 0 ] || fail "npm installed a denied tarball" "$(report)"
	assert_contains "$OUT$ERR" "403" "npm reports the 403"
	assert_absent "$CASE/node_modules/intercept-test-pkg" "the denied package"
	has_event "the refused tarball" decision=deny method=GET host=origin.test \
		path=/static/npm/intercept-test-pkg-1.0.0.tgz
}

# Node's fetch (Node 18+; Node 20 ignores the proxy variables, so it is captured; a Node that
# honours NODE_USE_ENV_PROXY goes through the proxy): allowed and denied.
t_node_fetch() {
	[ -x /usr/bin/node ] || not_applicable "node is not installed"
	node -e 'process.exit(typeof fetch === "function" ? 0 : 1)' ||
		not_applicable "this node has no fetch ($(node --version))"
	origin
	box probe true
	if grep -q '"event":"warning".*"what":"capture"' "$AUDIT"; then
		not_applicable "no transparent capture on this kernel (test_capture.sh says why)"
	fi
	cat >"$CASE/fetch.js" <<-'EOF'
		(async () => {
		  for (const u of process.argv.slice(2)) {
		    try {
		      const r = await fetch(u);
		      const body = (await r.text()).split('\n')[0];
		      console.log('STATUS:' + r.status + ' DENIED:' + (r.headers.get('x-agentbox-denied') || '') + ' BODY:' + body);
		    } catch (e) {
		      console.log('ERROR:' + (e.cause ? (e.cause.code || e.cause.message) : e));
		    }
		  }
		})();
	EOF
	box fetch node fetch.js "https://origin.test:$OP/repos/acme/node" "https://origin.test:$OP/admin/node"
	assert_contains "$OUT" "STATUS:200 DENIED: BODY:origin method=GET path=/repos/acme/node " \
		"fetch: the allowed GET"
	assert_contains "$OUT" "STATUS:403 DENIED:$ADMIN_RULE " "fetch: the denied GET"
	has_event "fetch's refused request" decision=deny method=GET host=origin.test path=/admin/node
	assert_not_reached "[A-Z]+ /admin/" "fetch's denied GET"
}

# git clone over https from a dumb-HTTP repository. Denied: its objects' path denied.
t_git_clone() {
	origin
	local body src=$META/gitsrc
	body="git-$(unique)"
	mkdir -p "$src"
	{
		git -C "$src" init -q -b main &&
			printf '%s\n' "$body" >"$src/README" &&
			git -C "$src" add README &&
			git -C "$src" -c user.name=host -c user.email=host@example.com commit -qm init &&
			git clone -q --bare "$src" "$META/www/repo.git" &&
			git -C "$META/www/repo.git" update-server-info
	} >"$META/git.log" 2>&1 || fail "cannot make the test repository: $(cat "$META/git.log")"
	local url="https://origin.test:$OP/static/repo.git"
	box git sh -c "git clone -q $url clone && cat clone/README"
	[ "$RC" = 0 ] || fail "git clone failed" "$(report)"
	assert_contains "$OUT" "$body" "the cloned README"
	has_event "git's first request" decision=allow method=GET host=origin.test \
		"path~/static/repo.git/info/refs"
	has_event "git's object fetches" decision=allow method=GET host=origin.test \
		"path~/static/repo.git/objects/"
	profile "deny = GET origin.test/static/repo.git/objects/**"
	box git-deny git clone -q "$url" clone2
	[ "$RC" != 0 ] || fail "git cloned with its objects denied" "$(report)"
	assert_absent "$CASE/clone2/README" "the denied clone"
	has_event "the refused object fetch" decision=deny method=GET host=origin.test \
		"path~/static/repo.git/objects/"
}

# A host without [http] rules (other.test, same origin) is not intercepted: the client is shown
# the origin's own certificate (verified against the test CA alone; the sandbox's bundle does
# not know it), and its requests are not decided by rules. Contrast: origin.test's certificate
# comes from the run's CA and the test CA does not verify it.
# A CA the user gives its clients through their own variable (SSL_CERT_FILE here) is kept
# when the run intercepts another host: the run's bundle, which the variable now names, holds
# its certificates, and so does ca.crt (node's extra store), so a tunnelled origin signed by it
# verifies. [network] ca is the rogue CA here, so only the variable can bring the origin's in.
# Control: without the variable the same client fails to verify.
t_user_ca_kept() {
	origin
	UPSTREAM_CA=$META/pki/rogue.pem profile
	run_cmd "$AGENTBOX" -p "$META/p.ini" --setenv "SSL_CERT_FILE=$CASE/origin-ca.pem" -- \
		sh -c "printenv SSL_CERT_FILE; grep -c 'BEGIN CERTIFICATE' /run/agentbox/ca.crt
			$PY intercept_client.py peer other.test $OP -"
	assert_contains "$OUT" "/run/agentbox/ca-bundle.crt" "SSL_CERT_FILE names the run's bundle"
	assert_contains "$OUT" "ISSUER:$ORIGIN_CA" "the tunnelled origin verifies with the user's CA"
	assert_eq 3 "$(printf '%s\n' "$OUT" | sed -n 2p)" \
		"ca.crt: the run's CA, [network] ca's and the user's"
	run_cmd "$AGENTBOX" -p "$META/p.ini" -- "$PY" intercept_client.py peer other.test "$OP" -
	assert_contains "$OUT" "CERTIFICATE_VERIFY_FAILED" "control: without the variable, no origin CA"
}

# A client that refuses the run's certificate after the handshake (curl pinning another key)
# hangs up without a request: the connection's event says it likely refused the certificate,
# and how to fix it. Control: a client that makes its request ends "closed".
t_silent_refusal() {
	origin
	box pinned curl -sS --max-time 15 \
		--pinnedpubkey "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" \
		"https://origin.test:$OP/repos/acme/x"
	[ "$RC" != 0 ] || fail "curl accepted a key it did not pin" "$(report)"
	grep -q '"event":"net".*"host":"origin.test".*likely refused the run.s certificate.*fix: point it at /run/agentbox/ca.crt' "$AUDIT" ||
		fail "no event names the likely refusal" "$(clip "$(grep -E "\"(net|http)\"" "$AUDIT")" 3000)"
	box spoke curl -sS --max-time 15 -o /dev/null "https://origin.test:$OP/repos/acme/x"
	[ "$RC" = 0 ] || fail "the control request failed" "$(report)"
	! grep -q "likely refused" "$AUDIT" || fail "a client that made its request was called a refusal" "$(cat "$AUDIT")"
}

# At the run's end agentbox says, on stderr, one line per host whose clients refused the run's
# certificate, with the fix: curl pinning another key (it hangs up after the handshake, twice)
# and a Python client trusting only the origin's CA (it aborts the handshake with an alert) make
# one line for origin.test, counting three connections. Control: clients that trust the run's CA
# make none. In a session, each exec's client says its own exec's lines; the next exec, which
# trusts the CA, says none.
t_refusal_lines() {
	origin
	local pinned="curl -sS --max-time 15 -o /dev/null --pinnedpubkey sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= https://origin.test:$OP/repos/acme/x"
	box refused sh -c "$pinned; $pinned; $PY intercept_client.py peer origin.test $OP origin-ca.pem"
	assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c '^agentbox: origin.test: a client refused the run.s certificate on 3 connections (its TLS alert said so: ')" \
		"one line for origin.test, its three refused connections counted"
	assert_contains "$ERR" "fix: have it trust /run/agentbox/ca.crt, or allow origin.test without [http] rules or a credential for it" \
		"the line's fix"
	assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c 'refused the run.s certificate')" "no other host's line"
	# OpenSSL's error strings are loaded when a reason is first rendered, not at the start
	has_event "the Python client's alert, in OpenSSL's words" host=origin.test \
		"reason~its TLS failed: error:0A000418:SSL routines::tlsv1 alert unknown ca"
	box trusting sh -c "curl -sS --max-time 15 -o /dev/null https://origin.test:$OP/repos/acme/x
		$PY intercept_client.py urllib https://origin.test:$OP/repos/acme/py"
	[ "$RC" = 0 ] || fail "the trusting clients failed" "$(report)"
	assert_not_contains "$ERR" "refused the run's certificate" "control: clients that trust the CA"
	# a session: the lines are the exec's
	local sid
	trap 'stop_session' EXIT
	run_cmd "$AGENTBOX" session start -p "$META/p.ini" --audit "$META/session.jsonl"
	[ "$RC" = 0 ] || fail "session start" "$(report)"
	sid=$OUT
	echo "$sid" >"$META/sid"
	run_cmd "$AGENTBOX" exec "$sid" -- sh -c "$pinned"
	[ "$RC" != 0 ] || fail "curl accepted a key it did not pin (session)" "$(report)"
	assert_contains "$ERR" "agentbox: origin.test: a client likely refused the run's certificate on 1 connection (it hung up after the handshake" \
		"the exec's client says its refusal"
	run_cmd "$AGENTBOX" exec "$sid" -- curl -sS --max-time 15 -o /dev/null "https://origin.test:$OP/repos/acme/x"
	[ "$RC" = 0 ] || fail "the trusting exec failed" "$(report)"
	assert_not_contains "$ERR" "refused the run's certificate" "control: the next exec, which trusts the CA"
	run_cmd "$AGENTBOX" session stop "$sid"
	rm -f "$META/sid"
}

# A client that looks CAs up in a directory finds the run's CA by its subject hash: SSL_CERT_DIR
# lists /run/agentbox/certs (HASH.0), then the system's directory. Control: the system's
# directory alone does not verify an intercepted host.
t_hashed_dir() {
	origin
	box hashed sh -c 'printf "DIR:%s\n" "$SSL_CERT_DIR"; ls /run/agentbox/certs
		'"$PY"' -c "
import os, socket, ssl, sys
def peer(capath):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(capath=capath)
    s = socket.create_connection((\"127.0.0.1\", 3128))
    s.sendall(b\"CONNECT origin.test:'"$OP"' HTTP/1.1\\r\\nHost: origin.test:'"$OP"'\\r\\n\\r\\n\")
    s.recv(4096)
    try:
        ctx.wrap_socket(s, server_hostname=\"origin.test\").close()
        return \"ok\"
    except ssl.SSLError as e:
        return \"failed\"
print(\"LIST:\" + peer(os.environ[\"SSL_CERT_DIR\"]))
print(\"SYSTEM:\" + peer(\"/etc/ssl/certs\"))
"'
	assert_contains "$OUT" "DIR:/run/agentbox/certs:/etc/ssl/certs" "SSL_CERT_DIR lists the run's directory first"
	printf '%s\n' "$OUT" | grep -qE '^[0-9a-f]{8}\.0$' || fail "no HASH.0 in /run/agentbox/certs" "$(report)"
	assert_contains "$OUT" "LIST:ok" "the intercepted host verifies through SSL_CERT_DIR alone"
	assert_contains "$OUT" "SYSTEM:failed" "control: the system's directory alone does not"
}

# Java reads none of the trust variables: agentbox adds to JAVA_TOOL_OPTIONS, after the
# profile's own options (which stay), the run's PKCS12 store /run/agentbox/java-cacerts.p12,
# holding the system's CAs, the run's and [network] ca's. A real JVM client (HttpsURLConnection)
# verifies the intercepted host, and the tunnelled other.test, whose CA only [network] ca gives.
# Controls: the same client without the store fails to build a path to the run's CA; a store of
# the user's own named in JAVA_TOOL_OPTIONS is kept (and said on stderr): other.test, whose CA it
# holds, verifies, and the intercepted host, whose CA it lacks, does not.
t_jvm() {
	command -v java >/dev/null || not_applicable "no java on PATH (Debian: default-jre-headless)"
	command -v keytool >/dev/null || not_applicable "no keytool beside java"
	java --list-modules 2>/dev/null | grep -q '^jdk\.compiler@' ||
		not_applicable "this java cannot run a source file (no jdk.compiler module)"
	origin
	cat >"$CASE/Get.java" <<'JAVA'
import java.io.InputStream;
import java.net.URL;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLException;

public class Get {
    public static void main(String[] args) throws Exception {
        System.out.println("PROP:" + System.getProperty("agentbox.test"));
        try {
            HttpsURLConnection c = (HttpsURLConnection) new URL(args[0]).openConnection();
            int status = c.getResponseCode();
            System.out.println("STATUS:" + status);
            try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
                System.out.println("BODY:" + new String(in.readAllBytes()).trim());
            }
        } catch (SSLException e) {
            System.out.println("TLS:" + e.getMessage());
        }
    }
}
JAVA
	# Debian's JDK keeps its configuration in /etc/java-N-openjdk, which no bundled profile shows
	local conf
	conf=$(readlink -f "$(dirname "$(readlink -f "$(command -v java)")")/../conf/security/java.security")
	printf '[env]\nset = JAVA_TOOL_OPTIONS=-Dagentbox.test=kept\n[filesystem]\nro-try = %s\n' \
		"${conf%/security/java.security}" >>"$META/p.ini"
	local get="java -XX:TieredStopAtLevel=1 Get.java" \
		own="https://origin.test:$OP/repos/acme/jvm" other="https://other.test:$OP/repos/acme/jvm-other"
	box jvm sh -c "printf 'OPTS:%s\n' \"\$JAVA_TOOL_OPTIONS\"; ls /run/agentbox/java-cacerts.p12
		echo '== intercepted'; $get $own
		echo '== tunnelled'; $get $other
		echo '== without'; JAVA_TOOL_OPTIONS=\"\${JAVA_TOOL_OPTIONS%% -Djavax.net.ssl.trustStore=*}\" $get $own"
	[ "$RC" = 0 ] || fail "the JVM runs failed" "$(report)"
	case "$(line_of OPTS)" in
	"-Dagentbox.test=kept "*"-Dhttps.proxyHost=127.0.0.1 "*"-Djavax.net.ssl.trustStore=/run/agentbox/java-cacerts.p12 -Djavax.net.ssl.trustStoreType=PKCS12") ;;
	*) fail "JAVA_TOOL_OPTIONS: the profile's options, then the proxy's and the store's" "$(report)" ;;
	esac
	section intercepted
	assert_eq kept "$(sec_of PROP)" "the profile's Java option reaches the JVM"
	assert_eq 200 "$(sec_of STATUS)" "Java verifies the intercepted host ($(sec_of TLS))"
	assert_contains "$(sec_of BODY)" "origin method=GET path=/repos/acme/jvm " "the origin's answer"
	has_event "Java's request" event=http decision=allow method=GET host=origin.test path=/repos/acme/jvm
	section tunnelled
	assert_eq 200 "$(sec_of STATUS)" "Java verifies other.test with [network] ca's CA ($(sec_of TLS))"
	section without
	assert_contains "$(sec_of TLS)" "PKIX path building failed" "control: Java's own store lacks the run's CA"
	# the user's own store: the origin's CA only (keytool, which every JRE has)
	keytool -importcert -noprompt -alias origin -file "$CASE/origin-ca.pem" -keystore "$CASE/user.p12" \
		-storetype PKCS12 -storepass changeit >"$META/keytool.log" 2>&1 ||
		fail "keytool cannot make the user's store" "$(cat "$META/keytool.log")"
	sed -i "s|^set = JAVA_TOOL_OPTIONS=.*|set = JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStore=$CASE/user.p12 -Djavax.net.ssl.trustStorePassword=changeit|" "$META/p.ini"
	box jvm-own sh -c "printf 'OPTS:%s\n' \"\$JAVA_TOOL_OPTIONS\"
		echo '== intercepted'; $get $own
		echo '== tunnelled'; $get $other"
	assert_not_contains "$(line_of OPTS)" "java-cacerts.p12" "the run's store with the user's own"
	assert_contains "$ERR" "agentbox: warning: JAVA_TOOL_OPTIONS names a javax.net.ssl.trustStore of its own: kept" \
		"the user is told their store is kept"
	section tunnelled
	assert_eq 200 "$(sec_of STATUS)" "the user's store verifies other.test ($(sec_of TLS))"
	section intercepted
	assert_contains "$(sec_of TLS)" "PKIX path building failed" "the user's store lacks the run's CA"
}

t_not_intercepted() {
	origin
	run_subject
	box peers sh -c "echo '== other-test-ca'; $PY intercept_client.py peer other.test $OP origin-ca.pem
		echo '== other-bundle'; $PY intercept_client.py peer other.test $OP -
		echo '== origin-bundle'; $PY intercept_client.py peer origin.test $OP -
		echo '== origin-test-ca'; $PY intercept_client.py peer origin.test $OP origin-ca.pem"
	section other-test-ca
	assert_eq "$ORIGIN_CA" "$(sec_of ISSUER)" "other.test: the origin's own certificate"
	# [network] ca is the origin's CA: the run's bundle holds it, for tunnels too
	section other-bundle
	assert_eq "$ORIGIN_CA" "$(sec_of ISSUER)" \
		"other.test: the sandbox's bundle (with [network] ca) verifies the tunnelled origin"
	section origin-bundle
	assert_eq "$RUN_CA" "$(sec_of ISSUER)" "origin.test: a leaf of the run's CA"
	section origin-test-ca
	assert_contains "$(sec_of ERROR)" "CERTIFICATE_VERIFY_FAILED" \
		"origin.test: the test CA does not verify the certificate shown"
	# curl sees the same; and other.test's /admin/x is not decided by any rule
	box curl-other curl -sS --max-time 15 --cacert origin-ca.pem -v "https://other.test:$OP/admin/x"
	[ "$RC" = 0 ] || fail "curl to a host without rules failed" "$(report)"
	assert_contains "$OUT" "origin method=GET path=/admin/x " "other.test's request reached the origin"
	assert_contains "$ERR" "issuer: O=agentbox-test; CN=agentbox-test origin CA" \
		"curl -v names the origin's issuer"
	ev host=other.test "path~/admin"
	assert_eq "count=0" "$EV" "no request event for a tunnel that is not intercepted"
	assert_contains "$(grep ' tls ' "$OLOG")" "sni=other.test" "the client's own handshake reached the origin"
}

# A rule for any host (`* */admin/*`, docs/http-rules.md) covers other.test too: intercepted,
# its /admin/x refused by that rule, its other paths served (no allow rule names it).
t_star_rule() {
	origin
	run_subject
	profile "deny = * */admin/*"
	curlw "https://other.test:$OP/admin/x" "https://other.test:$OP/repos/y"
	box star "${CURLW[@]}"
	assert_contains "$OUT" "CODE:403 NEW:1 CONN: DENIED:* */admin/*" "other.test's /admin/x"
	assert_contains "$OUT" "CODE:200 " "other.test's other path"
	box star-peer "$PY" intercept_client.py peer other.test "$OP" -
	assert_eq "$RUN_CA" "$(line_of ISSUER)" "other.test is intercepted under a '*' rule"
	assert_not_reached "[A-Z]+ /admin/" "the denied path"
}

# Encoded path tricks: each names /admin/x after one decoding and dot-segment removal, or with
# an encoded slash read as one (403 by the deny rule), or cannot be compared (400), though
# most start under an allowed prefix; none
# reaches the origin. Controls: an allowed path works, and a double-encoded dot is decoded
# once only (a literal %2e, allowed under /echo/).
t_path_tricks() {
	origin
	local u="https://origin.test:$OP"
	curlw "$u/echo/ok" "$u/admin/x" "$u/a/%2e%2e/admin/x" "$u/echo/%2e%2e/admin/x" \
		"$u/echo/../admin/x" "$u//admin/x" "$u/%61dmin/x" "$u/%2561dmin/x" "$u/admin%2fx" \
		"$u/echo/..%2fadmin%2fx" "$u/echo/%c0%ae%c0%ae/admin/x" "$u/echo/%252e%252e/admin/x"
	box tricks "${CURLW[@]}"
	local codes
	# a 403's X-Agentbox-Denied names the rule; a 400 (an uncomparable target) may name none
	codes=$(printf '%s\n' "$OUT" | sed -e 's/^CODE:\(403\) .* DENIED:\(.*\)$/\1 \2/' \
		-e 's/^CODE:\([0-9]*\) .*$/\1/' | tr '\n' '|')
	assert_eq "200|403 $ADMIN_RULE|403 $ADMIN_RULE|403 $ADMIN_RULE|403 $ADMIN_RULE|403 $ADMIN_RULE|403 $ADMIN_RULE|403 no [http] allow rule matches|403 $ADMIN_RULE|400|400|200|" \
		"$codes" "allowed, plain, %2e%2e twice, .., //, %61, %2561, %2f, ..%2f, overlong, %252e"
	assert_not_reached "[A-Z]+ /+(admin|%61dmin|a/|echo/(\\.\\.|%2e|%c0))" "a refused path"
	assert_contains "$(reached 'GET /echo/')" "/echo/%252e%252e/admin/x" \
		"the double-encoded dots went up as they came (decoded once)"
	has_event "the %2e%2e trick" decision=deny host=origin.test path=/admin/x
}

# Request smuggling and other hostile requests, each on its own connection (helpers'
# raw client through CONNECT): refused (4xx or closed), and nothing of theirs reaches the
# origin. Controls: the same requests made well are answered.
t_smuggling() {
	origin
	local h="Host: origin.test:$OP\\r\\n" c="Connection: close\\r\\n"
	raw_script ctl-length origin.test "$OP" "$(req POST /echo/ctl-length "Content-Length: 5\\r\\n$c" hello)"
	raw_script ctl-chunked origin.test "$OP" \
		"$(req POST /echo/ctl-chunked "Transfer-Encoding: chunked\\r\\n$c" '5\r\nhello\r\n0\r\n\r\n')"
	raw_script ctl-header origin.test "$OP" "$(req GET /echo/ctl-header "X-Big: {a*1000}\\r\\n$c")"
	raw_script cl-te origin.test "$OP" "$(req POST /echo/s-cl-te \
		"Content-Length: 4\\r\\nTransfer-Encoding: chunked\\r\\n" \
		"0\\r\\n\\r\\nGET /echo/inner-cl-te HTTP/1.1\\r\\n$h\\r\\n")"
	raw_script te-space origin.test "$OP" "$(req POST /echo/s-te-space \
		"Transfer-Encoding : chunked\\r\\nContent-Length: 45\\r\\n" \
		"0\\r\\n\\r\\nGET /echo/inner-te-space HTTP/1.1\\r\\n$h\\r\\n")"
	raw_script cl-twice origin.test "$OP" "$(req POST /echo/s-cl-twice \
		"Content-Length: 5\\r\\nContent-Length: 40\\r\\n$c" hello)"
	raw_script obs-fold origin.test "$OP" "$(req GET /echo/s-obs-fold "X-Folded: a\\r\\n b\\r\\n$c")"
	raw_script host-twice origin.test "$OP" "$(req GET /echo/s-host-twice "Host: other.test:$OP\\r\\n$c")"
	raw_script host-other origin.test "$OP" \
		"GET /echo/s-host-other HTTP/1.1\\r\\nHost: other.test:$OP\\r\\n$c\\r\\n"
	raw_script absolute-other origin.test "$OP" \
		"GET https://other.test:$OP/echo/s-absolute HTTP/1.1\\r\\n$h$c\\r\\n"
	raw_script h2-preface origin.test "$OP" 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
	raw_script huge-header origin.test "$OP" "$(req GET /echo/s-huge "X-Big: {a*20000}\\r\\n$c")"
	box smuggling sh raw.sh
	local s
	for s in ctl-length ctl-chunked ctl-header; do
		section "$s"
		assert_eq "200" "$(sec_of STATUS)" "control $s"
	done
	section ctl-chunked
	assert_contains "$(sec_of BODY)" " body=5" "control: the chunked body arrived whole"
	for s in cl-te te-space cl-twice obs-fold host-twice host-other absolute-other \
		h2-preface huge-header; do
		assert_refused "$s" "$s"
	done
	assert_not_reached "[A-Z]+ [^ ]*/echo/(s-|inner-)" "a smuggling attempt"
	assert_not_reached "PRI" "the HTTP/2 preface"
}

# The ClientHello must name the CONNECT host: another name (one the proxy would not intercept,
# and the other way round) is refused and audited. Control: the right name is served.
t_sni_mismatch() {
	origin
	raw_script right origin.test "$OP" "$(req GET /echo/sni-right 'Connection: close\r\n')"
	raw_script to-plain --sni other.test origin.test "$OP" "$(req GET /echo/sni-wrong-1 'Connection: close\r\n')"
	raw_script to-intercepted --sni origin.test other.test "$OP" \
		"GET /echo/sni-wrong-2 HTTP/1.1\\r\\nHost: other.test:$OP\\r\\nConnection: close\\r\\n\\r\\n"
	box sni sh raw.sh
	section right
	assert_eq "200" "$(sec_of STATUS)" "control: the CONNECT host as server name"
	section to-plain
	assert_eq "" "$(sec_of STATUS)" "CONNECT origin.test, server name other.test: $SEC"
	section to-intercepted
	assert_eq "" "$(sec_of STATUS)" "CONNECT other.test, server name origin.test: $SEC"
	assert_not_reached "[A-Z]+ /echo/sni-wrong" "a request after a mismatched server name"
	has_event "the mismatch, audited" decision=deny host=origin.test "all~other.test"
	has_event "the other mismatch, audited" decision=deny host=other.test "all~origin.test"
}

# ALPN: agentbox speaks HTTP/1.1 to the client (docs/http-rules.md). Asserted: h2 is never
# selected; a client offering h2 and http/1.1 gets http/1.1 and is served; a client offering
# only h2 is refused at the handshake (not served over HTTP/1.1 instead), audited, and nothing
# of it reaches the origin.
t_alpn() {
	origin
	raw_script both --alpn h2,http/1.1 origin.test "$OP" "$(req GET /echo/alpn-both 'Connection: close\r\n')"
	raw_script h2only --alpn h2 origin.test "$OP" "$(req GET /echo/alpn-h2 'Connection: close\r\n')"
	box alpn sh raw.sh
	assert_not_contains "$OUT" "ALPN:h2" "h2 selected"
	section both
	assert_eq "http/1.1" "$(sec_of ALPN)" "ALPN for a client offering h2 and http/1.1"
	assert_eq "200" "$(sec_of STATUS)" "a client offering h2 and http/1.1 is served"
	section h2only
	assert_contains "$(sec_of ERROR)" "TLS:" "an h2-only client is refused at the handshake"
	assert_not_reached "[A-Z]+ /echo/alpn-h2 " "the refused h2-only client"
	has_event "the h2-only refusal" decision=deny host=origin.test "reason~ALPN"
}

# The origin's certificate must verify (system store + [network] ca, host name checked):
# bad.test's comes from a CA the profile does not trust, misnamed.test is served a certificate
# for other names. Both fail, audited, nothing reaches the origin. Control: trusting the rogue
# CA makes bad.test work.
t_upstream_untrusted() {
	origin
	local main_log=$OLOG bp bad_log
	start_origin bad bad
	bp=$PORT bad_log=$OLOG
	curlw "https://bad.test:$bp/echo/untrusted"
	box bad "${CURLW[@]}"
	case "$OUT" in CODE:200*) fail "a request to an untrusted origin was answered" "$(report)" ;; esac
	has_event "the upstream verification failure" host=bad.test "reason~not trusted"
	OLOG=$bad_log assert_not_reached "[A-Z]+ /echo/untrusted" "the request to the untrusted origin"
	curlw "https://misnamed.test:$OP/echo/misnamed"
	box misnamed "${CURLW[@]}"
	case "$OUT" in CODE:200*) fail "a request to a misnamed origin was answered" "$(report)" ;; esac
	has_event "the host name mismatch" host=misnamed.test "reason~not trusted"
	OLOG=$main_log assert_not_reached "[A-Z]+ /echo/misnamed" "the request to the misnamed origin"
	UPSTREAM_CA=$META/pki/rogue.pem profile
	curlw "https://bad.test:$bp/echo/trusted"
	box bad-trusted "${CURLW[@]}"
	assert_contains "$OUT" "CODE:200 " "control: the same origin once its CA is trusted"
}

# [network] ca is checked at start-up for what costs nothing (PEM that decodes, blocks of a
# certificate's outer shape); the full parse is the upstream store's, at the first intercepted
# connection. A block of the right shape that is no certificate: the run starts, the
# connection is refused with the reason, nothing reaches the origin. Control: the real CA.
t_anchor_unloadable() {
	origin
	"$PY" -c 'import base64, sys
der = bytes([0x30, 11, 0x30, 3, 2, 1, 1, 0x30, 0, 3, 2, 0, 0])
sys.stdout.write("-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----\n" % base64.b64encode(der).decode())' \
		>"$META/shaped.pem" || fail "cannot write the shaped block"
	UPSTREAM_CA=$META/shaped.pem profile
	curlw "https://origin.test:$OP/echo/unloadable"
	box unloadable "${CURLW[@]}"
	case "$OUT" in CODE:200*) fail "a request was answered with an anchor that does not load" "$(report)" ;; esac
	has_event "the anchor's failure" host=origin.test "reason~cannot be loaded"
	assert_not_reached "[A-Z]+ /echo/unloadable" "the request with an unloadable anchor"
	UPSTREAM_CA= profile
	curlw "https://origin.test:$OP/echo/loadable"
	box loadable "${CURLW[@]}"
	assert_contains "$OUT" "CODE:200 " "control: the same request with the test CA"
}

run_case trust_inside t_trust_inside
run_case curl_allow_deny t_curl_allow_deny
run_case keepalive_second_denied t_keepalive_second_denied
run_case python_urllib t_python_urllib
run_case python_requests t_python_requests
run_case pip_download t_pip_download
run_case npm_install t_npm_install
run_case node_fetch t_node_fetch
run_case git_clone t_git_clone
run_case not_intercepted t_not_intercepted
run_case hashed_dir t_hashed_dir
run_case jvm t_jvm
run_case silent_refusal t_silent_refusal
run_case refusal_lines t_refusal_lines
run_case user_ca_kept t_user_ca_kept
run_case star_rule t_star_rule
run_case path_tricks t_path_tricks
run_case smuggling t_smuggling
run_case sni_mismatch t_sni_mismatch
run_case alpn t_alpn
run_case upstream_untrusted t_upstream_untrusted
run_case anchor_unloadable t_anchor_unloadable
finish

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# HTTPS interception, the requests (the origin, the names and the profile are test_intercept.sh's,
# from intercept_lib.sh): real clients in the sandbox (curl, Python urllib and requests, pip,
# npm, Node's fetch, git) talk HTTPS to the local origin through agentbox, which decides every
# request under [http] rules: allowed -> the origin answers; denied -> 403 with X-Agentbox-Denied
# and an audit event, and nothing reaches the origin (its log says what did), on a kept-alive or
# pipelined connection too. Node's fetch ignores the proxy variables and is captured. Hostile
# clients, each with its control: encoded paths, request smuggling, an HTTP/2 preface, a huge
# header, a server name other than the CONNECT host, an h2-only ALPN offer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/intercept_lib.sh"

# ------------------------------------------------------------- helpers ----

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

# ---------------------------------------------------------------- cases ----

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

run_case curl_allow_deny t_curl_allow_deny
run_case keepalive_second_denied t_keepalive_second_denied
run_case python_urllib t_python_urllib
run_case python_requests t_python_requests
run_case pip_download t_pip_download
run_case npm_install t_npm_install
run_case node_fetch t_node_fetch
run_case git_clone t_git_clone
run_case path_tricks t_path_tricks
run_case smuggling t_smuggling
run_case sni_mismatch t_sni_mismatch
run_case alpn t_alpn
finish

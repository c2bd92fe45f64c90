#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# The client suite: real, unmodified clients through agentbox's egress proxy, each in two modes.
#
#   intercepted  the client talks to origin.test, which has [http] rules: agentbox terminates
#                TLS with a leaf of the run's CA, checks each request and sends it on;
#   tunnelled    the client talks to other.test, allowed without [http] rules in the same
#                profile: an untouched CONNECT tunnel (Node's fetch, which reads no proxy
#                variable, an untouched captured connection), the client verifying the origin's
#                own certificate.
#
# For each client and mode: the request succeeds with the right bytes (compared with what the
# origin holds), the origin saw it, and the audit trail has its event (intercepted: an `http`
# event with the method and path on a connection whose `net` event says `intercepted`;
# tunnelled: the tunnel's `net` event, without `intercepted`, and no `http` event for the host).
# Intercepted, one request the rules deny is refused and never reaches the origin. The clients:
# curl, wget, Python's urllib, requests, pip (a simple index), npm (a scoped package and its
# unscoped dependency from a registry stand-in with npm's URL shapes), git (a dumb-HTTP clone),
# Node's fetch, the JVM's HttpsURLConnection (java running a single source file) and a gRPC
# client (python3-grpcio, over h2). A client that is not installed here is n/a.
#
# Everything is on loopback: the origins (../integration/helpers/https_origin.py,
# helpers/npm_registry.py, ../integration/helpers/grpc_echo.py) listen on the host's 127.0.0.1
# with a leaf of the suite's own test CA for both names, which `[network] resolve` pins there.
# Run through ../integration/run.sh (as root, then as the unprivileged user); one client:
# AGENTBOX_CASES='^npm_'.
CMD_LIMIT=${CMD_LIMIT:-90} # a JVM compiling its source on a busy machine
. "$(dirname "$0")/../integration/lib.sh"

IHELPERS=$TEST_DIR/../integration/helpers
DENY_RULE='* origin.test/denied/**'
WOUT='STATUS:%{http_code} DENIED:%header{x-agentbox-denied}\n'
ORIGIN_ISSUER='issuer: O=agentbox-test; CN=agentbox-test clients CA'
RUN_ISSUER='issuer: O=agentbox; CN=agentbox per-run interception CA'

# ------------------------------------------------------------- helpers ----

intercepted() {
	[ "$MODE" = intercepted ]
}

# need_cmd COMMAND PACKAGE: the case is n/a when COMMAND is not on PATH (the control: the
# shell cannot find it), naming the Debian package that brings it.
need_cmd() {
	command -v "$1" >/dev/null || not_applicable "$1 is not installed (Debian: $2)"
}

# need_module MODULE PACKAGE: the same for a Python module of /usr/bin/python3.
need_module() {
	"$PY" -c "import $1" 2>/dev/null || not_applicable "Python's $1 is not installed (Debian: $2)"
}

# pki: in $META/pki, the suite's test CA and a leaf it signed for origin.test and other.test.
pki() {
	local d=$META/pki
	mkdir -p "$d"
	{ mk_ca "$d/ca" "agentbox-test clients CA" && mk_leaf "$d/srv" "$d/ca" DNS:origin.test,DNS:other.test; } \
		>"$META/openssl.log" 2>&1 || fail "cannot make the test certificates: $(cat "$META/openssl.log")"
}

# profile [RULE...]: $META/p.ini, the shell profile in proxy mode: origin.test and other.test
# allowed and pinned to 127.0.0.1, the test CA trusted upstream ([network] ca, which the run's
# trust files carry for the tunnelled host too), [http] rules for origin.test only: the RULEs,
# then /denied/ refused and the rest allowed. Sets HOST (the mode's host).
profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\nallow = origin.test, other.test\n'
		printf 'resolve = origin.test=127.0.0.1, other.test=127.0.0.1\n'
		printf 'ca = %s\n' "$META/pki/ca.pem"
		printf '[http]\n'
		[ $# -eq 0 ] || printf '%s\n' "$@"
		printf 'deny = %s\nallow = * origin.test/**\n' "$DENY_RULE"
	} >"$META/p.ini"
	if intercepted; then HOST=origin.test; else HOST=other.test; fi
}

# listen TAG CMD...: starts a server (CMD writes its port to $META/port.TAG and logs what
# reached it to $META/TAG.log); sets OP, OLOG and URL (the mode's host at that port).
listen() {
	local tag=$1
	shift
	OLOG=$META/$tag.log
	bg "$@"
	wait_for_file "$META/port.$tag" 20 || fail "the $tag server did not start: $(show_cmd "$@")"
	OP=$(cat "$META/port.$tag")
	URL=https://$HOST:$OP
}

# origin [RULE...]: pki, the profile with RULEs, and ../integration/helpers/https_origin.py
# serving $META/www under /static/; $META/www/blob.bin is 256 KiB of random bytes.
origin() {
	pki
	profile "$@"
	mkdir -p "$META/www"
	head -c 262144 /dev/urandom >"$META/www/blob.bin" || fail "cannot write the blob"
	listen origin "$PY" "$IHELPERS/https_origin.py" "$META/port.origin" "$META/origin.log" \
		"$META/www" "$META/pki/srv.pem" "$META/pki/srv.key"
}

# box NAME CMD...: CMD in the sandbox with the case's profile and the audit trail
# $META/NAME.jsonl (AUDIT); RC, OUT, ERR as run_cmd sets them. 125 ends the case.
box() {
	AUDIT="$META/$1.jsonl"
	shift
	run_cmd "$AGENTBOX" -p "$META/p.ini" --audit "$AUDIT" -- "$@"
	[ "$RC" != 125 ] || fail "agentbox could not set up the sandbox (125)" "$(report)"
}

# same_bytes GOT WANT WHAT: the file the client wrote in $CASE is the origin's, byte for byte.
same_bytes() {
	[ -f "$CASE/$1" ] || fail "$3: the client wrote no $1" "$(report)"
	cmp -s "$CASE/$1" "$2" || fail "$3: $1 differs from the origin's $2" "$(report)"
}

# saw METHOD TARGET-REGEX: the origin logged the request, with the mode's host in its Host.
saw() {
	grep -qE " req $1 $2 host=$HOST(:$OP)?( |$)" "$OLOG" ||
		fail "the origin did not see $1 $2 for $HOST" "origin's log: $(clip "$(cat "$OLOG")" 2000)"
}

# unseen TARGET-REGEX WHAT: no request for it reached the origin.
unseen() {
	local got
	got=$(grep -E " req [A-Z]+ $1" "$OLOG")
	[ -z "$got" ] || fail "$2: reached the origin: $got"
}

# audited METHOD PATH: the request's event, as the mode has it. Intercepted: an http event
# (allowed, METHOD, the canonical PATH) and its connection's net event saying `intercepted`.
# Tunnelled: the tunnel's net event (allowed, the host and port; with $TUNNEL, that protocol),
# none of the host's net events says `intercepted`, and the host has no http event.
audited() {
	if intercepted; then
		has_event "the request's http event" event=http decision=allow method="$1" host="$HOST" \
			path="$2"
		has_event "the intercepted connection" event=net host="$HOST" intercepted=True
		return 0
	fi
	has_event "the tunnel's net event" event=net decision=allow ${TUNNEL:+protocol=$TUNNEL} \
		host="$HOST" port="$OP"
	ev event=net host="$HOST"
	assert_not_contains "$EV" "intercepted=" "the tunnel's net events"
	ev event=http host="$HOST"
	assert_eq count=0 "$EV" "http events for a tunnelled host"
}

# refused METHOD PATH TARGET-REGEX: intercepted, the denied request's http event (403), and
# nothing matching TARGET-REGEX reached the origin.
refused() {
	has_event "the refusal's event" event=http decision=deny method="$1" host="$HOST" path="$2" \
		status=403
	unseen "$3" "the denied request"
}

# ---------------------------------------------------------------- cases ----

c_curl() {
	need_cmd curl curl
	origin
	box curl curl -sS -v --max-time 30 -w "$WOUT" -o got.bin "$URL/static/blob.bin"
	assert_eq "STATUS:200 DENIED:" "$OUT" "curl's answer"
	same_bytes got.bin "$META/www/blob.bin" "curl's download"
	saw GET /static/blob.bin
	audited GET /static/blob.bin
	# what curl verified: a leaf of the run's CA inside, the origin's own in the tunnel
	if intercepted; then
		assert_contains "$ERR" "$RUN_ISSUER" "the certificate curl was shown"
	else
		assert_contains "$ERR" "$ORIGIN_ISSUER" "the certificate curl was shown"
	fi
	intercepted || return 0
	box curl-deny curl -sS --max-time 30 -w "$WOUT" -o /dev/null "$URL/denied/curl"
	assert_eq "STATUS:403 DENIED:$DENY_RULE" "$OUT" "curl's denied request"
	refused GET /denied/curl /denied/
}

c_wget() {
	need_cmd wget wget
	origin
	box wget wget -q --no-hsts --tries=1 --timeout=30 -O got.bin "$URL/static/blob.bin"
	[ "$RC" = 0 ] || fail "wget failed" "$(report)"
	same_bytes got.bin "$META/www/blob.bin" "wget's download"
	saw GET /static/blob.bin
	audited GET /static/blob.bin
	intercepted || return 0
	box wget-deny wget -S --no-hsts --tries=1 --timeout=30 -O /dev/null "$URL/denied/wget"
	assert_eq 8 "$RC" "wget's status for a server error"
	assert_contains "$ERR" "ERROR 403" "wget's denied request"
	assert_contains "$ERR" "X-Agentbox-Denied: $DENY_RULE" "the refusal's header, as wget shows it"
	refused GET /denied/wget /denied/
}

# python_case LIB: Python's urllib or requests (helpers/fetch.py).
python_case() {
	origin
	cp "$HELPERS/fetch.py" "$CASE/" || fail "cannot copy fetch.py"
	local args=("$1" "$URL/static/blob.bin" got.bin)
	intercepted && args+=("$URL/denied/$1" denied.bin)
	box "$1" "$PY" fetch.py "${args[@]}"
	assert_eq "STATUS:200 DENIED:" "$(printf '%s\n' "$OUT" | sed -n 1p)" "$1's answer"
	same_bytes got.bin "$META/www/blob.bin" "$1's download"
	saw GET /static/blob.bin
	audited GET /static/blob.bin
	intercepted || return 0
	assert_eq "STATUS:403 DENIED:$DENY_RULE" "$(printf '%s\n' "$OUT" | sed -n 2p)" \
		"$1's denied request"
	refused GET "/denied/$1" /denied/
}

c_urllib() {
	python_case urllib
}

c_requests() {
	need_module requests python3-requests
	python_case requests
}

# pip download from a simple index under /static/pypi (../integration/helpers/egress_mkwheel.py):
# the index page and the wheel. Denied: another package's wheel, whose index page is allowed.
c_pip() {
	"$PY" -m pip --version >/dev/null 2>&1 || not_applicable "pip is not installed (Debian: python3-pip)"
	origin "deny = GET origin.test/static/pypi/packages/deniedpkg-*"
	local p
	for p in clientspkg deniedpkg; do
		"$PY" "$IHELPERS/egress_mkwheel.py" "$META/www/pypi" "$p" 1.0 "$p-$(unique)" \
			>"$META/mkwheel.log" 2>&1 || fail "cannot build the test wheel: $(cat "$META/mkwheel.log")"
	done
	local pip=("$PY" -m pip download --no-cache-dir --disable-pip-version-check --retries 0
		--timeout 30 --no-deps --index-url "$URL/static/pypi/simple" -d dl)
	box pip "${pip[@]}" clientspkg
	[ "$RC" = 0 ] || fail "pip download failed" "$(report)"
	same_bytes dl/clientspkg-1.0-py3-none-any.whl \
		"$META/www/pypi/packages/clientspkg-1.0-py3-none-any.whl" "pip's wheel"
	saw GET /static/pypi/simple/clientspkg/
	saw GET /static/pypi/packages/clientspkg-1.0-py3-none-any.whl
	audited GET /static/pypi/simple/clientspkg/
	intercepted || return 0
	audited GET /static/pypi/packages/clientspkg-1.0-py3-none-any.whl
	box pip-deny "${pip[@]}" deniedpkg
	[ "$RC" != 0 ] || fail "pip downloaded a denied wheel" "$(report)"
	assert_contains "$OUT$ERR" "403" "pip reports the 403"
	assert_absent "$CASE/dl/deniedpkg-1.0-py3-none-any.whl" "the denied wheel"
	refused GET /static/pypi/packages/deniedpkg-1.0-py3-none-any.whl /static/pypi/packages/deniedpkg
}

# npm_pkg NAME VALUE [DEPENDENCIES-JSON]: $META/npm/BASE-1.0.0.tgz, a package whose index.js
# exports VALUE (joined with what its dependencies export).
npm_pkg() {
	local name=$1 value=$2 deps=${3:-"{}"} dir
	dir=$META/npmsrc/${name##*/}
	mkdir -p "$dir/package" "$META/npm"
	printf '{"name":"%s","version":"1.0.0","main":"index.js","dependencies":%s}\n' "$name" "$deps" \
		>"$dir/package/package.json"
	if [ "$deps" = "{}" ]; then
		printf 'module.exports = "%s";\n' "$value" >"$dir/package/index.js"
	else
		printf 'module.exports = "%s+" + require("plain");\n' "$value" >"$dir/package/index.js"
	fi
	tar -czf "$META/npm/${name##*/}-1.0.0.tgz" -C "$dir" package || fail "cannot pack $name"
}

# npm install of a scoped package (npm asks for /@eco%2fscoped) and its unscoped dependency
# (/plain) from helpers/npm_registry.py, both tarballs from their dist.tarball URLs (npm checks
# their sha512 against the document's integrity). Denied: a package of the scope @denied, by a
# rule that matches its document's %2F as the `/` it stands for.
c_npm() {
	need_cmd npm npm
	need_cmd node nodejs
	pki
	profile "deny = * origin.test/@denied/**"
	local plain scoped
	plain="plain-$(unique)" scoped="scoped-$(unique)"
	npm_pkg plain "$plain"
	npm_pkg @eco/scoped "$scoped" '{"plain":"^1.0.0"}'
	npm_pkg @denied/pkg denied
	listen registry "$PY" "$HELPERS/npm_registry.py" "$META/port.registry" "$META/registry.log" \
		"$META/npm" "$META/pki/srv.pem" "$META/pki/srv.key"
	echo '{"name":"client","version":"1.0.0"}' >"$CASE/package.json"
	local npm=(npm install --registry "$URL/" --cache ./.npm-cache --no-audit --no-fund
		--no-update-notifier --fetch-retries=0 --fetch-timeout=30000)
	box npm sh -c '"$@" && node -e "console.log(\"VALUE:\" + require(\"@eco/scoped\"))"' \
		sh "${npm[@]}" @eco/scoped
	[ "$RC" = 0 ] || fail "npm install failed" "$(report)"
	assert_contains "$OUT" "VALUE:$scoped+$plain" "the installed packages, required in the sandbox"
	same_bytes node_modules/@eco/scoped/index.js "$META/npmsrc/scoped/package/index.js" \
		"the scoped package's file"
	saw GET '/@eco%2[fF]scoped'
	saw GET /plain
	saw GET /@eco/scoped/-/scoped-1.0.0.tgz
	saw GET /plain/-/plain-1.0.0.tgz
	audited GET /@eco%2Fscoped
	intercepted || return 0
	audited GET /@eco/scoped/-/scoped-1.0.0.tgz
	audited GET /plain/-/plain-1.0.0.tgz
	box npm-deny "${npm[@]}" @denied/pkg
	[ "$RC" != 0 ] || fail "npm installed a denied package" "$(report)"
	assert_contains "$OUT$ERR" "403" "npm reports the 403"
	assert_absent "$CASE/node_modules/@denied" "the denied package"
	# the event's path is the target as npm sent it (%2f) or as the rules read it (%2F)
	has_event "the refusal's event" event=http decision=deny method=GET host="$HOST" \
		"path~/@denied%2" "reason~with each %2F read as '/'" status=403
	unseen /@denied "the denied package's document"
}

# git clone over HTTPS from a dumb-HTTP repository under /static (its info/refs, HEAD and
# objects as files). Denied: another repository's objects, whose refs are allowed.
c_git() {
	need_cmd git git
	origin "deny = GET origin.test/static/secret.git/objects/**"
	local body src=$META/gitsrc
	body="git-$(unique)"
	mkdir -p "$src"
	{
		git -C "$src" init -q -b main &&
			printf '%s\n' "$body" >"$src/README" &&
			git -C "$src" add README &&
			git -C "$src" -c user.name=host -c user.email=host@example.com commit -qm init &&
			git clone -q --bare "$src" "$META/www/repo.git" &&
			git -C "$META/www/repo.git" update-server-info &&
			cp -r "$META/www/repo.git" "$META/www/secret.git"
	} >"$META/git.log" 2>&1 || fail "cannot make the test repository: $(cat "$META/git.log")"
	box git sh -c "git clone -q $URL/static/repo.git clone && git -C clone rev-parse HEAD"
	[ "$RC" = 0 ] || fail "git clone failed" "$(report)"
	assert_eq "$(git -C "$src" rev-parse HEAD)" "$OUT" "the clone's commit"
	same_bytes clone/README "$src/README" "the cloned README"
	saw GET '/static/repo.git/info/refs(\?service=git-upload-pack)?'
	saw GET /static/repo.git/HEAD
	saw GET '/static/repo.git/objects/[0-9a-f]{2}/[0-9a-f]{38}'
	audited GET /static/repo.git/HEAD
	intercepted || return 0
	box git-deny git clone -q "$URL/static/secret.git" clone2
	[ "$RC" != 0 ] || fail "git cloned with its objects denied" "$(report)"
	assert_absent "$CASE/clone2/README" "the denied clone"
	has_event "the refused object fetch" event=http decision=deny method=GET host="$HOST" \
		"path~/static/secret.git/objects/" status=403
	unseen /static/secret.git/objects/ "the denied objects"
}

# Node's fetch, which reads no proxy variable: captured (n/a where the kernel cannot capture).
c_node() {
	need_cmd node nodejs
	node -e 'process.exit(typeof fetch === "function" ? 0 : 1)' ||
		not_applicable "this node has no fetch ($(node --version))"
	origin
	box probe true
	if grep -q '"event":"warning".*"what":"capture"' "$AUDIT"; then
		not_applicable "no transparent capture on this kernel (test_capture.sh says why)"
	fi
	cp "$HELPERS/fetch.js" "$CASE/" || fail "cannot copy fetch.js"
	local args=("$URL/static/blob.bin" got.bin)
	intercepted && args+=("$URL/denied/node" denied.bin)
	box node node fetch.js "${args[@]}"
	assert_eq "STATUS:200 DENIED:" "$(printf '%s\n' "$OUT" | sed -n 1p)" "fetch's answer"
	same_bytes got.bin "$META/www/blob.bin" "fetch's download"
	saw GET /static/blob.bin
	audited GET /static/blob.bin
	intercepted || return 0
	assert_eq "STATUS:403 DENIED:$DENY_RULE" "$(printf '%s\n' "$OUT" | sed -n 2p)" \
		"fetch's denied request"
	refused GET /denied/node /denied/
}

# The JVM (helpers/Fetch.java run as a single source file): its proxy and trust store from
# the JAVA_TOOL_OPTIONS agentbox sets.
c_jvm() {
	need_cmd java default-jre-headless
	java --list-modules 2>/dev/null | grep -q '^jdk\.compiler@' ||
		not_applicable "this java cannot run a source file (no jdk.compiler module)"
	origin
	# Debian's JDK keeps its configuration in /etc/java-N-openjdk, which no bundled profile shows
	local conf
	conf=$(readlink -f "$(dirname "$(readlink -f "$(command -v java)")")/../conf/security/java.security")
	printf '[filesystem]\nro-try = %s\n' "${conf%/security/java.security}" >>"$META/p.ini"
	cp "$HELPERS/Fetch.java" "$CASE/" || fail "cannot copy Fetch.java"
	local args=("$URL/static/blob.bin" got.bin)
	intercepted && args+=("$URL/denied/jvm" denied.bin)
	box jvm java -XX:TieredStopAtLevel=1 Fetch.java "${args[@]}"
	[ "$RC" = 0 ] || fail "the JVM failed" "$(report)"
	assert_eq "STATUS:200 DENIED:" "$(printf '%s\n' "$OUT" | sed -n 1p)" "the JVM's answer"
	same_bytes got.bin "$META/www/blob.bin" "the JVM's download"
	saw GET /static/blob.bin
	audited GET /static/blob.bin
	intercepted || return 0
	assert_eq "STATUS:403 DENIED:$DENY_RULE" "$(printf '%s\n' "$OUT" | sed -n 2p)" \
		"the JVM's denied request"
	refused GET /denied/jvm /denied/
}

# A gRPC client and server (../integration/helpers/grpc_echo.py, python3-grpcio), over h2:
# a unary call, its answer carrying the request. Denied: a method the rules refuse.
c_grpc() {
	need_module grpc python3-grpcio
	pki
	profile "deny = POST origin.test/agentbox.test.Echo/Secret"
	listen grpc "$PY" "$IHELPERS/grpc_echo.py" server "$META/port.grpc" "$META/grpc.log" \
		"$META/pki/srv.pem" "$META/pki/srv.key"
	cp "$IHELPERS/grpc_echo.py" "$CASE/" || fail "cannot copy the gRPC client"
	local msg
	msg="grpc-$(unique)"
	box grpc "$PY" grpc_echo.py client "$HOST:$OP" Say "$msg"
	assert_eq "MSG:said:$msg
STATUS:OK" "$(printf '%s\n' "$OUT" | grep -E '^(MSG|STATUS):')" "the call's answer"
	grep -q "^call Say " "$OLOG" || fail "the server did not see the call" "$(cat "$OLOG")"
	audited POST /agentbox.test.Echo/Say
	intercepted || return 0
	has_event "the call over h2" event=http path=/agentbox.test.Echo/Say alpn=h2
	box grpc-deny "$PY" grpc_echo.py client "$HOST:$OP" Secret x
	assert_contains "$OUT" "STATUS:PERMISSION_DENIED" "the denied method's status"
	has_event "the refusal's event" event=http decision=deny method=POST host="$HOST" \
		path=/agentbox.test.Echo/Secret status=403
	! grep -q "^call Secret" "$OLOG" || fail "the denied method reached the server" "$(cat "$OLOG")"
}

for client in curl wget urllib requests pip npm git node jvm grpc; do
	for MODE in intercepted tunnelled; do
		TUNNEL=connect
		[ "$client" != node ] || TUNNEL= # capture, or CONNECT where node reads the variables
		run_case "${client}_$MODE" "c_$client"
	done
done
finish

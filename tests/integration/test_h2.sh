#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# HTTP/2 under interception: a client that offers h2 to a host the [http] rules cover speaks h2
# to agentbox when the origin speaks it too (agentbox offers the origin what the client offered
# and answers with the origin's choice: never a translation). Every stream is a request of its
# own, decided by the same [http] rules and credential rules as HTTP/1.1, with its own `http`
# event (alpn h2, its stream); a refused stream gets its 403 and the connection goes on. Real
# clients: curl --http2 and gRPC (python3-grpcio, unary and streaming) against local origins
# (helpers/h2_origin.py, helpers/grpc_echo.py) on the host's 127.0.0.1. Hostile clients
# (helpers/h2_hostile.py): CONTINUATION and SETTINGS, PING and reset floods, an HPACK bomb,
# window overflow, too many streams, bad pseudo-headers; each with its control. Hostile origins:
# huge response heads, a server push. n/a where python3-h2 or grpcio cannot be imported.
. "$(dirname "$0")/lib.sh"

WOUT='CODE:%{http_code} VERSION:%{http_version} NEW:%{num_connects} DENIED:%header{x-agentbox-denied}\n'

# pki: the test CA and the origins' leaf for origin.test, in $META/pki.
pki() {
	local d=$META/pki
	mkdir -p "$d"
	{ mk_ca "$d/ca" "agentbox-test h2 CA" && mk_leaf "$d/srv" "$d/ca" DNS:origin.test; } \
		>"$META/openssl.log" 2>&1 || fail "cannot make the test certificates: $(cat "$META/openssl.log")"
}

need_h2() {
	"$PY" -c 'import h2, hpack, hyperframe' 2>/dev/null ||
		not_applicable "python3-h2 is not installed (tools/install-deps installs it)"
}

# origin [ARG...]: helpers/h2_origin.py on origin.test's leaf; sets OP and OLOG.
origin() {
	local pf
	need_h2
	[ -f "$META/pki/srv.pem" ] || pki
	ORIGINS=$((${ORIGINS:-0} + 1))
	pf=$META/port.h2.$ORIGINS
	OLOG=$META/origin.$ORIGINS.log
	bg env ORIGIN_TOKEN="${ORIGIN_TOKEN:-}" "$PY" "$HELPERS/h2_origin.py" "$pf" "$OLOG" \
		"$META/pki/srv.pem" "$META/pki/srv.key" "$@"
	wait_for_file "$pf" 10 || fail "the h2 origin did not start"
	OP=$(cat "$pf")
	cp "$HELPERS/h2_hostile.py" "$CASE/" || fail "cannot copy the hostile client"
	profile
}

# profile [LINE...]: the shell profile in proxy mode, origin.test pinned to 127.0.0.1, the test
# CA trusted upstream, [http] rules for it: /admin/ denied, the rest allowed; LINEs after.
profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\nallow = origin.test\n'
		printf 'resolve = origin.test=127.0.0.1\nca = %s\n' "$META/pki/ca.pem"
		printf '[http]\ndeny = * origin.test/admin/*\nallow = * origin.test/**\n'
		[ $# -eq 0 ] || printf '%s\n' "$@"
	} >"$META/p.ini"
}

box() {
	AUDIT="$META/$1.jsonl"
	shift
	run_cmd "$AGENTBOX" -p "$META/p.ini" --audit "$AUDIT" -- "$@"
	[ "$RC" != 125 ] || fail "agentbox could not set up the sandbox (125)" "$(report)"
}

assert_not_reached() {
	! grep -qE " req [A-Z]+ $1" "$OLOG" || fail "$2: reached the origin: $(grep -E " req [A-Z]+ $1" "$OLOG")"
}

hostile() {
	HOST_LINE="$HOST_LINE echo '== $*'; $PY h2_hostile.py $* origin.test $OP;"
}

# ---------------------------------------------------------------- cases ----

# curl --http2 speaks h2 end to end, each request its own event; a denied one is refused on its
# stream alone: the other requests share the connection and are answered.
t_rules_per_stream() {
	local u
	origin
	u="https://origin.test:$OP"
	box h2 curl -sS --http2 --max-time 20 -w "$WOUT" -o /dev/null "$u/one" -o /dev/null \
		"$u/admin/x" -o /dev/null "$u/two"
	assert_eq 3 "$(printf '%s\n' "$OUT" | grep -c 'VERSION:2 ')" "three answers over h2: $OUT"
	assert_contains "$OUT" "CODE:403 VERSION:2 NEW:0 DENIED:* origin.test/admin/*" \
		"the denied stream's 403 on the shared connection"
	assert_eq 2 "$(printf '%s\n' "$OUT" | grep -c 'CODE:200 VERSION:2')" "the others answered"
	assert_eq 1 "$(grep -c ' tls sni=origin.test alpn=h2' "$OLOG")" "one h2 connection at the origin"
	assert_not_reached "/admin/x" "the denied stream"
	has_event "the allowed stream" event=http decision=allow alpn=h2 path=/one status=200
	has_event "the denied stream" event=http decision=deny alpn=h2 path=/admin/x status=403
	has_event "the second allowed stream" event=http decision=allow alpn=h2 path=/two
	# curl's prior knowledge over TLS (it still offers h2 in ALPN, and gets it)
	box prior curl -sS --http2-prior-knowledge --max-time 20 -w "$WOUT" -o /dev/null "$u/three"
	assert_contains "$OUT" "CODE:200 VERSION:2" "--http2-prior-knowledge"
}

# Bodies through the flow-control windows both ways: a 16 MiB download and a 1 MiB upload
# arrive whole, counted in their events.
t_bodies() {
	origin
	head -c 1048576 /dev/urandom >"$CASE/up.bin"
	box bodies sh -c "curl -sS --http2 --max-time 60 -o big.out -w 'GOT:%{size_download}\n' \
		https://origin.test:$OP/big/16777216 &&
		curl -sS --http2 --max-time 60 --data-binary @up.bin https://origin.test:$OP/echo/up"
	assert_contains "$OUT" "GOT:16777216" "the download's size"
	assert_contains "$OUT" "body=1048576 proto=h2" "the upload, whole at the origin"
	has_event "the download" event=http alpn=h2 path=/big/16777216 status=200
	ev event=http path=/big/16777216
	case "$EV" in *" bytes_in=1677"[0-9][0-9][0-9][0-9]" "*) ;; *) fail "the download's bytes_in: $EV" ;; esac
}

# A client offering h2 to an HTTP/1.1-only origin gets HTTP/1.1 (the origin's choice).
t_mirror_h1() {
	origin --alpn h2,http/1.1
	box h1 curl -sS --http1.1 --max-time 20 -w "$WOUT" -o /dev/null "https://origin.test:$OP/h1"
	assert_contains "$OUT" "CODE:200 VERSION:1.1" "a client offering http/1.1 only"
	has_event "its event" event=http alpn=http/1.1 path=/h1
	# control: the same origin, a client offering h2 too, speaks h2
	box h2 curl -sS --http2 --max-time 20 -w "$WOUT" -o /dev/null "https://origin.test:$OP/h2"
	assert_contains "$OUT" "CODE:200 VERSION:2" "a client offering h2"
}

# A credential over h2: its real value put in on the way up (the origin sees it, the command
# only the placeholder), taken out of the response's head, body and trailers on the way down,
# and a placeholder where it may not go refused on that stream alone.
t_credentials() {
	local tok=h2-real-token-4f1c9e2a77
	ORIGIN_TOKEN=$tok origin
	profile '[credential tok]' 'source = env:H2_TOKEN' 'hosts = origin.test' \
		'header = Authorization: Bearer {}' 'env = H2_TOKEN'
	H2_TOKEN=$tok box cred sh -c "curl -sS --http2 --max-time 20 -H \"Authorization: Bearer \$H2_TOKEN\" \
		https://origin.test:$OP/api/check; curl -sS --http2 --max-time 20 -D - --raw \
		-H \"Authorization: Bearer \$H2_TOKEN\" https://origin.test:$OP/api/echo-token; \
		curl -sS --http2 --max-time 20 -w 'CODE:%{http_code}\n' -H \"X-Leak: \$H2_TOKEN\" \
		https://origin.test:$OP/echo/leak; echo PLACEHOLDER:\$H2_TOKEN"
	assert_contains "$OUT" "api ok" "the origin saw the real value"
	assert_not_contains "$OUT" "$tok" "the real value in what the command read"
	assert_not_contains "$(cat "$AUDIT")" "$tok" "the real value in the audit trail"
	assert_contains "$OUT" "CODE:403" "a placeholder where it may not go"
	assert_not_reached "/echo/leak" "the leaking request"
	has_event "the head redacted" event=http path=/api/echo-token status=200
	grep -q '"decision":"redact".*the trailers' "$AUDIT" ||
		fail "no redaction of the trailers in the audit" "$(grep credential "$AUDIT")"
	grep -q '"decision":"redact".*the response body' "$AUDIT" ||
		fail "no redaction of the body in the audit"
}

# gRPC (unary and server streaming, its status in trailers) through rules naming its methods;
# a method no rule allows is PERMISSION_DENIED, and the server never sees it.
t_grpc() {
	need_h2
	"$PY" -c 'import grpc' 2>/dev/null ||
		not_applicable "python3-grpcio is not installed (tools/install-deps installs it)"
	pki
	OLOG=$META/grpc.log
	bg "$PY" "$HELPERS/grpc_echo.py" server "$META/port.grpc" "$OLOG" "$META/pki/srv.pem" \
		"$META/pki/srv.key"
	wait_for_file "$META/port.grpc" 15 || fail "the gRPC server did not start"
	OP=$(cat "$META/port.grpc")
	cp "$HELPERS/grpc_echo.py" "$CASE/" || fail "cannot copy the gRPC client"
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\nallow = origin.test\n'
		printf 'resolve = origin.test=127.0.0.1\nca = %s\n' "$META/pki/ca.pem"
		printf '[http]\nallow = POST origin.test/agentbox.test.Echo/Say\n'
		printf 'allow = POST origin.test/agentbox.test.Echo/Count\n'
	} >"$META/p.ini"
	box grpc sh -c "echo '== say'; $PY grpc_echo.py client origin.test:$OP Say hi; \
		echo '== count'; $PY grpc_echo.py client origin.test:$OP Count 3; \
		echo '== secret'; $PY grpc_echo.py client origin.test:$OP Secret x"
	section say
	assert_contains "$SEC" "MSG:said:hi" "the unary call's answer"
	assert_contains "$SEC" "STATUS:OK" "its status"
	section count
	assert_eq "MSG:1 MSG:2 MSG:3 STATUS:OK" "$(printf '%s\n' "$SEC" | grep -E '^(MSG|STATUS):' | tr '\n' ' ' | sed 's/ $//')" \
		"the streamed messages and the status from the trailers"
	section secret
	assert_contains "$SEC" "STATUS:PERMISSION_DENIED" "a method no rule allows"
	assert_contains "$SEC" "agentbox denied POST origin.test" "the refusal's text in its details"
	! grep -q "call Secret" "$OLOG" || fail "the denied method reached the server"
	grep -q "call Say" "$OLOG" || fail "control: the allowed method did not reach the server"
	has_event "the unary call" event=http alpn=h2 path=/agentbox.test.Echo/Say decision=allow
	has_event "the denied call" event=http alpn=h2 path=/agentbox.test.Echo/Secret decision=deny status=403
}

# Floods and framing abuse: each ends the connection (GOAWAY, a deny event naming the limit) or
# refuses the stream, and nothing of it reaches the origin; the same with a small N is served.
t_floods() {
	origin
	HOST_LINE=
	hostile continuation-flood 7
	hostile continuation-flood 10000
	hostile hpack-bomb 1
	hostile hpack-bomb 4000
	hostile settings-flood 10
	hostile settings-flood 100000
	hostile ping-flood 100000
	hostile rapid-reset 5000
	hostile window-overflow
	box floods sh -c "$HOST_LINE"
	section "continuation-flood 7"
	assert_contains "$SEC" "STATUS:200" "control: 7 CONTINUATION frames"
	section "continuation-flood 10000"
	assert_contains "$SEC" "GOAWAY:ENHANCE_YOUR_CALM" "a CONTINUATION flood"
	assert_not_contains "$SEC" "STATUS:" "the flooded request answered"
	has_event "the CONTINUATION flood" event=net decision=deny "reason~CONTINUATION"
	section "hpack-bomb 1"
	assert_contains "$SEC" "STATUS:200" "control: the large field once"
	section "hpack-bomb 4000"
	assert_contains "$SEC" "STATUS:431" "an HPACK bomb"
	has_event "the bomb's stream" event=http status=431 "reason~16 KiB"
	section "settings-flood 10"
	assert_contains "$SEC" "STATUS:200" "control: 10 SETTINGS"
	section "settings-flood 100000"
	assert_not_contains "$SEC" "STATUS:200" "a SETTINGS flood served"
	section "ping-flood 100000"
	assert_not_contains "$SEC" "STATUS:200" "a PING flood served"
	has_event "the floods" event=net decision=deny "reason~Flooding"
	section "rapid-reset 5000"
	assert_not_contains "$SEC" "STATUS:200" "a rapid reset served"
	section "window-overflow"
	assert_contains "$SEC" "GOAWAY:FLOW_CONTROL_ERROR" "a window past 2^31-1"
	has_event "the window overflow" event=net decision=deny "reason~FLOW_CONTROL_ERROR"
}

# Requests agentbox does not forward get a 400 on their stream (or nghttp2's reset), and the
# connection stays for the next; too many streams end the connection.
t_bad_requests() {
	origin
	HOST_LINE=
	hostile bad-pseudo scheme-http
	hostile bad-pseudo authority-mismatch
	hostile bad-pseudo host-mismatch
	hostile bad-pseudo connect
	hostile bad-pseudo no-path
	hostile get /control
	hostile streams 150
	hostile streams 50
	box bad sh -c "$HOST_LINE"
	for k in scheme-http authority-mismatch host-mismatch connect; do
		section "bad-pseudo $k"
		assert_contains "$SEC" "STATUS:400" "bad-pseudo $k"
	done
	section "bad-pseudo no-path"
	assert_contains "$SEC" "RST:1:PROTOCOL_ERROR" "a request without :path"
	section "get /control"
	assert_contains "$SEC" "STATUS:200" "control: a plain GET"
	section "streams 150"
	assert_contains "$SEC" "GOAWAY:PROTOCOL_ERROR" "150 streams past the 100 advertised"
	section "streams 50"
	assert_eq 50 "$(printf '%s\n' "$SEC" | grep -c 'STATUS:200')" "control: 50 streams at once"
	assert_not_reached "/h2-hostile/bad-pseudo" "a request agentbox does not forward"
	has_event "a refused scheme" event=http decision=deny status=400 "reason~scheme https"
}

# Hostile origins: a response head of 200 KiB (more CONTINUATION frames than allowed) ends the
# connection, its stream's event and the connection's deny naming the limit; a server push
# (push disabled) does too.
t_hostile_origin() {
	origin --hostile huge-headers
	box huge curl -sS --http2 --max-time 20 -w "$WOUT" -o /dev/null "https://origin.test:$OP/x"
	assert_not_contains "$OUT" "CODE:200" "a response head past the limit"
	has_event "the stream's event" event=http path=/x "reason~from the upstream broke a limit"
	has_event "the connection's" event=net decision=deny "reason~CONTINUATION"
	# control: the same origin's response, without the extra fields, is served
	origin
	box plain curl -sS --http2 --max-time 20 -w "$WOUT" -o /dev/null "https://origin.test:$OP/x"
	assert_contains "$OUT" "CODE:200 VERSION:2" "control: an ordinary response"
}

t_push() {
	origin --hostile push
	box push curl -sS --http2 --max-time 20 -w "$WOUT" -o /dev/null "https://origin.test:$OP/x"
	assert_not_contains "$OUT" "CODE:200" "a response after a push the proxy refused"
	has_event "the refused push" event=net decision=deny "reason~upstream"
}

# raw_origin: helpers/h2_raw_origin.py (frames by hand: what python3-h2 would not send); sets OP,
# OLOG, and the attack client beside the hostile one in $CASE.
raw_origin() {
	need_h2
	[ -f "$META/pki/srv.pem" ] || pki
	OLOG=$META/raw-origin.log
	bg env ORIGIN_TOKEN="${ORIGIN_TOKEN:-real-token-for-the-raw-origin}" "$PY" \
		"$HELPERS/h2_raw_origin.py" "$META/port.raw" "$OLOG" "$META/pki/srv.pem" "$META/pki/srv.key"
	wait_for_file "$META/port.raw" 10 || fail "the raw h2 origin did not start"
	OP=$(cat "$META/port.raw")
	cp "$HELPERS/h2_hostile.py" "$HELPERS/h2_attacks.py" "$CASE/" || fail "cannot copy the clients"
	profile
}

# Flow control does not leak: bytes the proxy held for a stream the client reset (or the origin
# reset mid-upload) are acknowledged when that side closes, so the connection's windows come
# back and a later stream on it is served in full.
t_windows_back() {
	raw_origin
	box leak sh -c "echo '== winleak'; $PY h2_attacks.py winleak origin.test $OP 3; \
		echo '== upleak'; $PY h2_attacks.py upleak origin.test $OP 14"
	section winleak
	assert_contains "$SEC" "done=True got=100000" "a stream after three reset mid-response"
	section upleak
	assert_not_contains "$SEC" "UPLOAD-STALLED" "an upload after 14 the origin reset"
	assert_contains "$SEC" "body=131072" "that upload, whole at the origin"
}

# The origin's GOAWAY and close right after a body: what the proxy still held of the response
# reaches the client, whole.
t_goaway_drains() {
	raw_origin
	box bye "$PY" h2_attacks.py get origin.test "$OP" /bigbye/400000 65535
	assert_contains "$OUT" "done=True got=400000" "a response the origin finished before leaving"
}

# A response field nghttp2 refuses, holding a real credential value, then a protocol error: the
# value (whole or cut) is in no event's reason.
t_no_value_in_reasons() {
	local tok=raw-origin-real-value-7d1e0c4b9a
	ORIGIN_TOKEN=$tok raw_origin
	box badhdr "$PY" h2_attacks.py hold origin.test "$OP" /badhdr2/190 5
	assert_not_contains "$(cat "$AUDIT")" "${tok:0:12}" "the origin's value, or its start, in the trail"
	has_event "the connection's end" event=net decision=deny "reason~from the upstream"
}

run_case rules_per_stream t_rules_per_stream
run_case windows_back t_windows_back
run_case goaway_drains t_goaway_drains
run_case no_value_in_reasons t_no_value_in_reasons
run_case bodies t_bodies
run_case mirror_h1 t_mirror_h1
run_case credentials t_credentials
run_case grpc t_grpc
run_case floods t_floods
run_case bad_requests t_bad_requests
run_case hostile_origin t_hostile_origin
run_case push t_push
finish

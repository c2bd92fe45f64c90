#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# A credential's real value never comes back to the command. A hostile HTTPS origin
# (helpers/reflect_origin.py) hands back whatever credential a request carried, in every way an
# origin can: request headers reflected in a JSON body, TRACE, response headers holding it
# encoded (base64 at every alignment in both alphabets, percent-encoded, upper case, hex), a
# redirect's Location with a query credential, chunked trailers, 103 Early Hints, a
# close-delimited body, a gzip body, a byte range of a body, a second response no request asked
# for. Each case shows
# the origin really got the real value (its log says real=yes: the attack is live) and that
# what reached the command holds no form of it (helpers/leak_forms.py), with a `credential`
# event saying where it was found. Also: no credential on TRACE; a body on GET refused (CL.0);
# a placeholder cut across the chunks of a request body to another host refused.
. "$(dirname "$0")/lib.sh"

REAL='realSecret/0123+456789abc=XYZ'

origin() {
	local d=$META/pki
	mkdir -p "$d"
	{ mk_ca "$d/ca" "agentbox-test origin CA" && mk_leaf "$d/srv" "$d/ca" DNS:origin.test,DNS:other.test; } \
		>"$META/openssl.log" 2>&1 || fail "cannot make the test certificates"
	OLOG=$META/origin.log
	: >"$OLOG"
	bg env REFLECT_TOKEN="$REAL" "$PY" "$HELPERS/reflect_origin.py" "$META/port" "$OLOG" \
		"$d/srv.pem" "$d/srv.key"
	wait_for_file "$META/port" 10 || fail "the HTTPS origin did not start"
	OP=$(cat "$META/port")
	cp "$HELPERS/raw_client.py" "$CASE/" || fail "cannot copy raw_client.py"
}

# profile: [credential api] bound to origin.test (PLACE: where it goes), other.test intercepted
profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\nallow = origin.test, other.test\n'
		printf 'resolve = origin.test=127.0.0.1, other.test=127.0.0.1\n'
		printf 'ca = %s\n' "$META/pki/ca.pem"
		printf '[http]\nallow = * other.test/**\n'
		printf '[credential api]\nsource = env:REAL_TOKEN\nhosts = origin.test\n'
		printf '%s\nenv = API_TOKEN\nprefix = sk-\n' "${PLACE:-header = Authorization: Bearer {\}}"
	} >"$META/p.ini"
}

box() {
	AUDIT="$META/$1.jsonl"
	shift
	REAL_TOKEN=$REAL run_cmd "$AGENTBOX" -p "$META/p.ini" --audit "$AUDIT" -- "$@"
}

# clean WHAT: no form of the real value in what the command printed.
clean() {
	printf '%s' "$OUT" >"$META/out"
	local forms
	forms=$("$PY" "$HELPERS/leak_forms.py" "$REAL" "$META/out")
	[ "$forms" = CLEAN ] || fail "$1: the real value reached the command ($forms)" "$(clip "$OUT" 2000)"
}

# origin_got PATH: the origin received the real value on a request to PATH (the attack is live).
origin_got() {
	grep -q "^REQ [A-Z]* $1 real=yes" "$OLOG" ||
		fail "the origin never got the real value on $1: the case proves nothing" "$(cat "$OLOG")"
}

redacted() {
	grep -q "\"event\":\"credential\".*\"decision\":\"redact\".*\"credential\":\"api\".*$1" "$AUDIT" ||
		fail "no credential event (redact) for $1" "$(clip "$(cat "$AUDIT")" 3000)"
}

curl_api() {
	box "$1" sh -c 'curl -sS --max-time 15 '"$2"' -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'$0"; echo; echo "PH=$API_TOKEN"' "$3"
}

# What the scrubber holds back at the end of a piece tells nothing: an origin that echoes the
# command's bytes sends a guess back framed the same whether or not it begins the real value.
# (A right guess was held back whole and came in a chunk of its own, a wrong one went out at
# once: the command learnt the value a character at a time without ever sending it.) Control:
# the guess comes back, and the same holds for a guess one character longer.
t_hold_no_oracle() {
	local k right wrong next line first
	origin
	profile
	for k in 8 12; do
		right=${REAL:0:k}
		next=${REAL:k-1:1}
		wrong=${REAL:0:k-1}$([ "$next" = Q ] && echo R || echo Q)
		box "hold$k" sh -c 'for g in "$@"; do curl -sS --max-time 15 --raw --data-binary "x $g" \
			"https://origin.test:'"$OP"'/echo" | tr "\r\n" "|."; echo; done' sh "$right" "$wrong"
		assert_eq 0 "$RC" "the echoes of two guesses"
		line=$(printf '%s\n' "$OUT" | sed -n 2p)
		first=$(printf '%s\n' "$OUT" | sed -n 1p)
		# control: each guess came back (the chunks' data, joined)
		assert_eq "x $right|x $wrong" "$("$PY" -c 'import sys
print("|".join("".join(a.split("|.")[1::2]) for a in sys.argv[1:]))' "$first" "$line")" \
			"the guesses echoed"
		assert_eq "${line//"$wrong"/GUESS}" "${first//"$right"/GUESS}" \
			"the framing of a right and a wrong guess of $k characters"
	done
}

t_body_reflected() {
	origin
	profile
	curl_api headers "" /headers
	assert_eq 0 "$RC" "curl /headers"
	origin_got /headers
	clean "request headers reflected in a body"
	assert_contains "$OUT" '"Authorization": "Bearer sk-' "the placeholder's stand-in where the value was"
	redacted "the response body"
}

t_trace() {
	origin
	profile
	curl_api trace "-X TRACE -o /dev/null -w CODE:%{http_code}" /t
	clean "TRACE"
	assert_contains "$OUT" "CODE:403" "TRACE with the placeholder is refused as a leak"
	! grep -q "^REQ TRACE .*real=yes" "$OLOG" || fail "the origin got the real value on TRACE"
	grep -q '"event":"credential".*"decision":"deny"' "$AUDIT" || fail "no deny event for TRACE"
	# control: the same request as GET carries the credential
	curl_api get "-o /dev/null -w CODE:%{http_code}" /t
	assert_contains "$OUT" "CODE:200" "GET with the placeholder"
	origin_got /t
}

t_encoded_heads() {
	origin
	profile
	curl_api encoded "-D -" /encoded
	assert_eq 0 "$RC" "curl /encoded"
	origin_got /encoded
	clean "response headers with the value encoded"
	assert_contains "$OUT" "X-B64-2:" "the encoded headers still come"
	redacted "the response head"
}

t_query_redirect() {
	origin
	PLACE='query = api_key' profile
	box redirect sh -c 'curl -sS --max-time 15 -D - "https://origin.test:'"$OP"'/dir?api_key=$API_TOKEN"; echo "PH=$API_TOKEN"'
	origin_got "/dir?api_key=.*"
	clean "a redirect's Location"
	local ph
	ph=$(printf '%s\n' "$OUT" | sed -n 's/^PH=//p')
	assert_contains "$OUT" "Location: /dir/?api_key=$ph" "the placeholder in the Location"
	# following it works: the placeholder goes back and becomes the real value again
	box follow sh -c 'curl -sS --max-time 15 -L -o /dev/null -w CODE:%{http_code} "https://origin.test:'"$OP"'/dir?api_key=$API_TOKEN"'
	assert_contains "$OUT" "CODE:200" "following the redirect"
	origin_got "/dir/?api_key=.*"
}

t_trailers_and_hints() {
	origin
	profile
	curl_api chunked "--raw -D -" /chunked
	origin_got /chunked
	clean "a chunked body and its trailers"
	assert_contains "$OUT" "X-Echo: sk-" "the trailer, with the placeholder"
	redacted "the trailers"
	curl_api early "-D -" /early
	origin_got /early
	clean "103 Early Hints"
	assert_contains "$OUT" "after hints" "the final response after the hints"
	redacted "an interim response head"
}

t_close_delimited() {
	origin
	profile
	curl_api close "" /close
	origin_got /close
	clean "a close-delimited body"
	assert_contains "$OUT" "close-delimited sk-" "the body, with the stand-in"
}

t_compressed() {
	origin
	profile
	curl_api gzip "--compressed -o /dev/null -w CODE:%{http_code}" /gzip
	assert_contains "$OUT" "CODE:502" "a compressed response from the credential's host"
	grep -q "^REQ GET /gzip .*ae=identity" "$OLOG" || fail "the request did not ask for identity" "$(cat "$OLOG")"
	clean "a gzip body"
	# control: the other host is not a credential's: its responses pass as they are
	box other sh -c 'curl -sS --max-time 15 --compressed "https://other.test:'"$OP"'/gzip" | head -c 6'
	assert_contains "$OUT" "zipped" "a gzip body from a host no credential is bound to"
}

t_ranges() {
	origin
	profile
	# asked for two pieces of a body that holds the value: each would hide it from the scan
	curl_api range "-r 7-14" /range
	origin_got /range
	clean "a byte range"
	grep -q "^REQ GET /range .*range=-" "$OLOG" || fail "the Range header went up" "$(cat "$OLOG")"
	assert_contains "$OUT" "ranged sk-" "the whole body, scrubbed"
	# an origin that answers 206 unasked is refused
	curl_api partial "-o /dev/null -w CODE:%{http_code}" /partial
	assert_contains "$OUT" "CODE:502" "a 206 from the credential's host"
	# control: a host no credential is bound to serves ranges as asked
	box other sh -c 'curl -sS --max-time 15 -r 0-5 "https://other.test:'"$OP"'/range"'
	assert_contains "$OUT" "ranged" "a range from another host"
	assert_not_contains "$OUT" "ranged " "more than the range"
}

t_stray_response() {
	origin
	profile
	# two pipelined requests; the origin answers the first with two responses
	box stray sh -c 'printf "GET /stray HTTP/1.1\nHost: origin.test:'"$OP"'\nAuthorization: Bearer %s\n\nGET /plain HTTP/1.1\nHost: origin.test:'"$OP"'\n\n" "$API_TOKEN" |
		python3 raw_client.py origin.test '"$OP"
	origin_got /stray
	clean "a second response no request asked for"
	assert_not_contains "$OUT" "STRAY" "the stray response, taken for the next request's"
	assert_contains "$OUT" "first" "the first response"
	# control: two pipelined requests to an honest origin are both answered
	box pipelined sh -c 'printf "GET /plain HTTP/1.1\nHost: origin.test:'"$OP"'\n\nGET /plain HTTP/1.1\nHost: origin.test:'"$OP"'\nConnection: close\n\n" |
		python3 raw_client.py origin.test '"$OP"' | grep -c "^ok"'
	assert_contains "$OUT" "2" "two pipelined answers"
}

t_get_body_refused() {
	origin
	profile
	local smuggled='DELETE /admin HTTP/1.1\nHost: other.test\n\n'
	box cl0 sh -c 'printf "GET /plain HTTP/1.1\nHost: other.test:'"$OP"'\nContent-Length: 44\n\n'"$smuggled"'" |
		python3 raw_client.py other.test '"$OP"
	assert_contains "$OUT" "400" "a GET with a body"
	! grep -q "^REQ DELETE" "$OLOG" || fail "the body reached the origin as a request" "$(cat "$OLOG")"
	# control: the same body on POST goes up (and is read as a body)
	box post sh -c 'printf "POST /plain HTTP/1.1\nHost: other.test:'"$OP"'\nContent-Length: 44\nConnection: close\n\n'"$smuggled"'" |
		python3 raw_client.py other.test '"$OP"
	assert_contains "$OUT" "200 OK" "a POST with the same body"
}

t_chunked_placeholder() {
	origin
	profile
	# the placeholder cut across two chunks of a body to a host it is not bound to
	box chunks sh -c 'a=${API_TOKEN%????????????}; b=${API_TOKEN#"$a"}
		printf "POST /plain HTTP/1.1\nHost: other.test:'"$OP"'\nTransfer-Encoding: chunked\nConnection: close\n\n%x\n%s\n%x\n%s\n0\n\n" ${#a} "$a" ${#b} "$b" |
		python3 raw_client.py other.test '"$OP"
	assert_contains "$OUT" "403" "a placeholder cut across chunks"
	grep -q '"event":"credential".*"decision":"deny"' "$AUDIT" || fail "no deny event for the cut placeholder"
	# control: the same two chunks without the placeholder go up
	box chunks-ok sh -c 'printf "POST /plain HTTP/1.1\nHost: other.test:'"$OP"'\nTransfer-Encoding: chunked\nConnection: close\n\n5\nhello\n6\n world\n0\n\n" |
		python3 raw_client.py other.test '"$OP"
	assert_contains "$OUT" "200 OK" "two chunks without a placeholder"
}

run_case body_reflected t_body_reflected
run_case hold_no_oracle t_hold_no_oracle
run_case trace t_trace
run_case encoded_heads t_encoded_heads
run_case query_redirect t_query_redirect
run_case trailers_and_hints t_trailers_and_hints
run_case close_delimited t_close_delimited
run_case compressed t_compressed
run_case ranges t_ranges
run_case stray_response t_stray_response
run_case get_body_refused t_get_body_refused
run_case chunked_placeholder t_chunked_placeholder
finish

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# [http] rules on plain HTTP (docs/http-rules.md): each request is decided on its method, host
# and canonical target, through the HTTP proxy, a CONNECT tunnel, a SOCKS5 tunnel and a captured
# connection; a refusal is a 403 naming the rule (or a 400 for a target that cannot be compared)
# and a `deny` event; an allowed request goes up with the canonical target the rules saw. A
# connection the proxy cannot read (TLS) to a host the rules cover is refused, since HTTPS
# interception is not built yet. The server (helpers/request_log_server.py) logs what reaches it.
. "$(dirname "$0")/lib.sh"

CURL=(curl -sS --max-time 15 --noproxy '' --path-as-is -o /dev/null -D -)

log_server() {
	LOG="$META/requests.log"
	bg "$PY" "$HELPERS/request_log_server.py" "$META/port.log" "$LOG"
	wait_for_file "$META/port.log" 10 || fail "the request-logging server did not start"
	P=$(cat "$META/port.log")
}

# rules_profile EXTRA...: proxy mode, the server's port allowed, the case's [http] rules.
rules_profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\nallow = 127.0.0.1:%s\n' "$P"
		printf '%s\n' "$@"
		printf '[http]\nallow = GET 127.0.0.1/repos/acme/**\ndeny = * */admin/*\n'
	} >"$META/rules.ini"
}

# status OPTIONS... URL-PATH: the status line and X-Agentbox-Denied of one curl request through
# the proxy (curl OPTIONS), in OUT; the audit trail in AUDIT.
status() {
	local path=${*: -1}
	AUDIT="$META/run.jsonl"
	run_cmd "$AGENTBOX" -p "$META/rules.ini" --audit "$AUDIT" -- "${CURL[@]}" "${@:1:$#-1}" \
		"http://127.0.0.1:$P$path"
	OUT=$(printf '%s\n' "$OUT" | tr -d '\r' | grep -E '^(HTTP/1|X-Agentbox-Denied)' | tail -n 2 |
		tr '\n' ' ')
}

# The HTTP proxy: allowed and denied by path, by method, by a deny rule reached through encoded
# dot segments or an encoded slash; an uncomparable target is a 400; the allowed requests
# arrive canonical, an encoded slash still encoded.
t_proxy_requests() {
	log_server
	rules_profile
	status -x http://127.0.0.1:3128 /repos/acme/x
	assert_eq "HTTP/1.1 200 OK " "$OUT" "an allowed GET"
	status -x http://127.0.0.1:3128 //repos//acme/./y
	assert_eq "HTTP/1.1 200 OK " "$OUT" "an allowed GET, written with // and ."
	status -x http://127.0.0.1:3128 /repos/other
	assert_eq "HTTP/1.1 403 Forbidden X-Agentbox-Denied: no [http] allow rule matches " "$OUT" \
		"a path no allow rule matches"
	status -x http://127.0.0.1:3128 -d x /repos/acme/x
	assert_contains "$OUT" "HTTP/1.1 403 Forbidden" "a POST where only GET is allowed"
	status -x http://127.0.0.1:3128 '/repos/acme/%2e%2e/%2e%2e/admin/y'
	assert_eq "HTTP/1.1 403 Forbidden X-Agentbox-Denied: * */admin/* " "$OUT" \
		"the deny rule, reached through %2e%2e"
	assert_contains "$(cat "$AUDIT")" '"http_rule":"* */admin/*"' "the deny event names the rule"
	status -x http://127.0.0.1:3128 '/repos/acme/%2e%2e%2F%2e%2e%2Fadmin%2Fy'
	assert_contains "$OUT" "HTTP/1.1 400 Bad Request" "dot segments beside an encoded slash"
	# an encoded slash is data in one segment (npm asks for @scope%2fname): allowed by a star,
	# sent up escaped; a deny rule also reads it as a separator, as an origin may
	status -x http://127.0.0.1:3128 '/repos/acme/@eco%2fscoped'
	assert_eq "HTTP/1.1 200 OK " "$OUT" "a scoped-package path under an allowed prefix"
	status -x http://127.0.0.1:3128 '/admin%2Fy'
	assert_eq "HTTP/1.1 403 Forbidden X-Agentbox-Denied: * */admin/* " "$OUT" \
		"the deny rule, reached through an encoded slash"
	assert_eq "GET /repos/acme/x GET /repos/acme/y GET /repos/acme/@eco%2Fscoped " \
		"$(cut -d' ' -f1,2 "$LOG" | tr '\n' ' ')" "what reached the server: the allowed, canonical"
}

# The same rules inside a CONNECT and a SOCKS5 tunnel carrying plain HTTP.
t_tunnel_requests() {
	log_server
	rules_profile
	status -p -x http://127.0.0.1:3128 /repos/acme/x
	assert_contains "$OUT" "HTTP/1.1 200 OK" "an allowed GET in a CONNECT tunnel"
	status -p -x http://127.0.0.1:3128 /admin/x
	assert_contains "$OUT" "403 Forbidden X-Agentbox-Denied: * */admin/*" "a denied GET in a CONNECT tunnel"
	status --socks5 127.0.0.1:1080 /repos/acme/z
	assert_contains "$OUT" "HTTP/1.1 200 OK" "an allowed GET through SOCKS5"
	status --socks5 127.0.0.1:1080 /repos/elsewhere
	assert_contains "$OUT" "403 Forbidden" "a denied GET through SOCKS5"
	assert_eq "GET /repos/acme/x GET /repos/acme/z " \
		"$(cut -d' ' -f1,2 "$LOG" | tr '\n' ' ')" "what reached the server"
}

# TLS to an address the rules cover would carry requests no rule sees (an address has no name
# to intercept under): refused, audited. Control: the same HTTPS request to a server the rules
# do not cover goes through untouched. A name the rules cover is intercepted (test_intercept).
t_tls_to_covered_host_refused() {
	test_ca "$META/tls" DNS:localhost,IP:127.0.0.1
	cp "$META/tls/ca.pem" "$CASE/ca.pem"
	mkdir -p "$META/www" && echo tls-body >"$META/www/f.txt"
	serve tls "$META/www" "$META/tls/srv.pem" "$META/tls/srv.key"
	P=$PORT
	rules_profile "allow = localhost:$P, 127.0.0.0/8"
	AUDIT="$META/tls.jsonl"
	run_cmd "$AGENTBOX" -p "$META/rules.ini" --audit "$AUDIT" -- curl -sS --max-time 15 \
		--noproxy '' --cacert ca.pem -x http://127.0.0.1:3128 "https://127.0.0.1:$P/f.txt"
	[ "$RC" != 0 ] || fail "HTTPS to a host with [http] rules went through" "$(report)"
	assert_contains "$(cat "$AUDIT")" "[http] rules cover 127.0.0.1, and a tls connection" \
		"the refusal audited"
	# control: localhost is a name no rule covers when none names any host (`*`), as the
	# case's deny rule does: such a rule covers every host, and makes every tunnel refused
	printf '[sandbox]\ninclude = %s/shell.ini\n[network]\nmode = proxy\n%s\n%s\n%s\n' \
		"$AGENTBOX_PROFILES" "allow = localhost:$P, 127.0.0.0/8" "[http]" \
		"allow = GET 127.0.0.1/repos/acme/**" >"$META/other.ini"
	expect_exit 0 "$AGENTBOX" -p "$META/other.ini" -- curl -sS --max-time 15 --noproxy '' \
		--cacert ca.pem -x http://127.0.0.1:3128 "https://localhost:$P/f.txt"
	assert_eq tls-body "$OUT" "HTTPS to a host no rule covers"
	# and with the `*` deny rule, the same tunnel is intercepted: the proxy, not given the
	# server's CA, refuses its certificate, and the client's handshake (which waits for the
	# server's, to answer with the protocol the server chose) is cut: curl's 35
	expect_exit 35 "$AGENTBOX" -p "$META/rules.ini" --audit "$META/star.jsonl" -- curl -sS \
		--max-time 15 --noproxy '' --cacert ca.pem -x http://127.0.0.1:3128 \
		"https://localhost:$P/f.txt"
	assert_contains "$(cat "$META/star.jsonl")" '"sni":"localhost","intercepted":true' \
		"a '*' rule covers all: localhost is intercepted"
	assert_contains "$(cat "$META/star.jsonl")" "the certificate of localhost is not trusted" \
		"the server's certificate, refused by the proxy"
}

# Deny rules read a path as an origin that folds it may: /ADMIN/x, /%41dmin/x and a fullwidth
# 'a' (U+FF41) are refused by the deny rule, even under an allow rule for every path, and the
# refusal names it. Controls: a path outside the deny rule, and a non-ASCII path an allow rule
# writes out, reach the server.
t_deny_folded() {
	log_server
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\nallow = 127.0.0.1:%s\n[http]\n' "$P"
		printf '%s\n' 'allow = GET 127.0.0.1/**' 'allow = GET 127.0.0.1/caf%C3%A9' \
			'deny = * */admin/**'
	} >"$META/rules.ini"
	status -x http://127.0.0.1:3128 /public/x
	assert_eq "HTTP/1.1 200 OK " "$OUT" "a path outside the deny rule"
	status -x http://127.0.0.1:3128 /ADMIN/x
	assert_eq "HTTP/1.1 403 Forbidden X-Agentbox-Denied: * */admin/** " "$OUT" "/ADMIN/x"
	assert_contains "$(cat "$AUDIT")" '"http_rule":"* */admin/**"' "the deny event names the rule"
	assert_contains "$(cat "$AUDIT")" "in another letter case" "and says why"
	status -x http://127.0.0.1:3128 /%41dmin/x
	assert_eq "HTTP/1.1 403 Forbidden X-Agentbox-Denied: * */admin/** " "$OUT" "/%41dmin/x"
	status -x http://127.0.0.1:3128 /%EF%BD%81dmin/x
	assert_eq "HTTP/1.1 403 Forbidden X-Agentbox-Denied: * */admin/** " "$OUT" \
		"a fullwidth a, percent-encoded"
	assert_contains "$(cat "$AUDIT")" "non-ASCII characters" "and says why"
	status -x http://127.0.0.1:3128 /caf%C3%A9
	assert_eq "HTTP/1.1 200 OK " "$OUT" "a non-ASCII path an allow rule names"
	assert_eq "GET /public/x GET /caf%C3%A9 " "$(cut -d' ' -f1,2 "$LOG" | tr '\n' ' ')" \
		"what reached the server: the two allowed"
}

# Profile errors: a rule that can never match, and rules without the proxy.
t_profile_errors() {
	printf '[sandbox]\ninclude = %s/shell.ini\n[network]\nmode = proxy\n[http]\nallow = GET a.test//x\n' \
		"$AGENTBOX_PROFILES" >"$META/bad.ini"
	expect_exit 125 "$AGENTBOX" -p "$META/bad.ini" --check
	assert_contains "$ERR" "bad.ini:6: http rule 'GET a.test//x'" "the rule's line"
	printf '[sandbox]\ninclude = %s/shell.ini\n[http]\nallow = GET a.test/x\n' \
		"$AGENTBOX_PROFILES" >"$META/nomode.ini"
	expect_exit 125 "$AGENTBOX" -p "$META/nomode.ini" --check
	assert_contains "$ERR" "nomode.ini:4: [http] has rules but [network] mode is none" \
		"rules without the proxy, at the rule's line"
	printf '[sandbox]\ninclude = %s/shell.ini\n[network]\nmode = proxy\n[http]\nallow = GET a.test/x,y\n' \
		"$AGENTBOX_PROFILES" >"$META/good.ini"
	expect_exit 0 "$AGENTBOX" -p "$META/good.ini" --explain
	assert_contains "$OUT" '"http":{"allow":["GET a.test/x,y"],"deny":[],"grantable":[]}' \
		"--explain lists the rules, one per line (a comma is part of a path)"
}

run_case proxy_requests t_proxy_requests
run_case tunnel_requests t_tunnel_requests
run_case deny_folded t_deny_folded
run_case tls_to_covered_host_refused t_tls_to_covered_host_refused
run_case profile_errors t_profile_errors
finish

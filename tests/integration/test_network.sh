#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Network: mode none is a namespace of its own with a working loopback and no way to the
# host's; mode host shares the host's network (the positive control).
. "$(dirname "$0")/lib.sh"

# client.py URL TRIES: fetches URL (no proxies), retrying; prints BODY:... or ERROR:...
write_client() {
	cat >client.py <<-'EOF'
		import sys, time, urllib.request
		url, tries = sys.argv[1], int(sys.argv[2])
		opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
		err = None
		for _ in range(tries):
		    try:
		        with opener.open(url, timeout=3) as r:
		            print("BODY:" + r.read().decode().strip())
		            sys.exit(0)
		    except Exception as e:
		        err = e
		        time.sleep(0.1)
		print(f"ERROR:{type(err).__name__}:{err}")
		sys.exit(3)
	EOF
}

# Starts an HTTP server on the host's 127.0.0.1 (a free port) answering BODY; sets PORT.
start_host_server() {
	local body=$1
	cat >"$META/hostserver.py" <<-'EOF'
		import http.server, os, sys
		class H(http.server.BaseHTTPRequestHandler):
		    def do_GET(self):
		        b = sys.argv[2].encode()
		        self.send_response(200)
		        self.send_header("Content-Length", str(len(b)))
		        self.end_headers()
		        self.wfile.write(b)
		    def log_message(self, *a):
		        pass
		s = http.server.HTTPServer(("127.0.0.1", 0), H)
		with open(sys.argv[1] + ".tmp", "w") as f:
		    f.write(str(s.server_port))
		os.rename(sys.argv[1] + ".tmp", sys.argv[1])
		s.serve_forever()
	EOF
	bg "$PY" "$META/hostserver.py" "$META/port" "$body"
	wait_for_file "$META/port" 10 || fail "the host's test server did not start"
	PORT=$(cat "$META/port")
}

t_loopback_in_net_none() {
	write_client
	mkdir www && echo hello-loopback >www/hello.txt
	expect_exit 0 "$AGENTBOX" -p python -- sh -c '
		echo "interfaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")"
		/usr/bin/python3 -m http.server --bind 127.0.0.1 8123 --directory www >server.log 2>&1 &
		s=$!
		/usr/bin/python3 client.py http://127.0.0.1:8123/hello.txt 100
		rc=$?
		kill $s
		exit $rc'
	assert_contains "$OUT" "BODY:hello-loopback" "a fetch from a server on the sandbox's loopback"
	assert_contains "$OUT" "interfaces=lo " "the network interfaces in mode none (only lo)"
}

t_host_loopback_unreachable() {
	local body="host-only-$(unique)"
	write_client
	start_host_server "$body"
	# positive control 1: the host reaches its own server
	expect_exit 0 "$PY" client.py "http://127.0.0.1:$PORT/" 20
	assert_contains "$OUT" "BODY:$body" "positive control: the host fetches from its server"
	# net none (the python profile's default): the host's 127.0.0.1 is another machine's
	run_cmd "$AGENTBOX" -p python -- /usr/bin/python3 client.py "http://127.0.0.1:$PORT/" 3
	assert_not_contains "$OUT" "$body" "the sandbox reached the host's 127.0.0.1:$PORT"
	assert_eq 3 "$RC" "the sandboxed client's exit status (3: could not connect)"
	assert_contains "$OUT" "ERROR:" "the sandboxed client's error"
	# positive control 2: with --net host the same command reaches it
	expect_exit 0 "$AGENTBOX" -p python --net host -- /usr/bin/python3 client.py \
		"http://127.0.0.1:$PORT/" 20
	assert_contains "$OUT" "BODY:$body" "positive control: --net host fetches from the host's server"
}

run_case loopback_in_net_none t_loopback_in_net_none
run_case host_loopback_unreachable t_host_loopback_unreachable
finish

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Every request on a plain-HTTP connection is checked, not only the first:
# through the HTTP proxy, a CONNECT tunnel and a SOCKS5 tunnel, a second request on the same
# connection (pipelined, kept alive after the first response, or hidden right after the first
# request's Content-Length or chunked body) never reaches the server, and the connection's
# `net` event says why. The server (helpers/request_log_server.py ... keep) keeps connections
# open even when asked to close them, and answers every request it reads, which the host control
# shows: so a second request missing from its log was never sent on. The positive controls show
# that the first request, bodies included, still arrives whole, and is answered even to a client
# that half-closed; a malformed body ends the connection at once. Captured: test_capture.sh.
. "$(dirname "$0")/lib.sh"

SECOND="a second request on one plain-HTTP connection"

# log_server: the request-logging server on $LOG_PORT, its log in $LOG.
log_server() {
	LOG="$META/requests.log"
	bg "$PY" "$HELPERS/request_log_server.py" "$META/port.log" "$LOG" keep
	wait_for_file "$META/port.log" 10 || fail "the request-logging server did not start"
	LOG_PORT=$(cat "$META/port.log")
	cp "$HELPERS/second_request.py" "$CASE/" || fail "cannot copy the client into $CASE"
}

# through WAY SHAPE: the client in a sandbox allowed to reach the server; OUT, AUDIT.
through() {
	AUDIT="$META/$1-$2.jsonl"
	expect_exit 0 "$AGENTBOX" -p shell --net proxy --allow "127.0.0.1:$LOG_PORT" --audit "$AUDIT" \
		-- /usr/bin/python3 second_request.py "$1" 127.0.0.1 "$LOG_PORT" "$2"
}

# The server answers a second request on one connection when nothing stands between: without
# this, the cases below would prove nothing.
t_host_control() {
	local shape
	log_server
	for shape in pipelined keepalive cl_smuggle chunk_smuggle; do
		expect_exit 0 "$PY" "$CASE/second_request.py" direct 127.0.0.1 "$LOG_PORT" "$shape"
		assert_eq "STATUSES:200,200" "$OUT" "control ($shape): both requests answered on the host"
	done
	for shape in lenient_tab lenient_lower; do
		expect_exit 0 "$PY" "$CASE/second_request.py" direct 127.0.0.1 "$LOG_PORT" "$shape"
	done
	assert_eq 6 "$(grep -ci '^GET /second host=evil.test' "$LOG")" \
		"control: the server logged every second request, the lenient shapes' too"
}

# each way, each shape: the first request answered, the second never logged, the refusal audited
second_refused() {
	local way=$1 shape
	log_server
	for shape in pipelined keepalive cl_smuggle chunk_smuggle halfclose; do
		through "$way" "$shape"
		assert_eq "STATUSES:200" "$OUT" "$way $shape: only the first request answered"
		assert_contains "$(cat "$AUDIT")" "\"decision\":\"deny\"" "$way $shape: a deny event"
		assert_contains "$(cat "$AUDIT")" "$SECOND" "$way $shape: the event names the second request"
	done
	assert_not_contains "$(cat "$LOG")" "/second" "a second request reached the server ($way)"
	assert_eq 2 "$(grep -c '^POST /first host=127.0.0.1:[0-9]* body=5$' "$LOG")" \
		"$way: the first requests' bodies arrived whole (Content-Length and chunked)"
	# request lines a lenient server serves but no strict parser reads: refused unread (the
	# HTTP proxy answers 400 itself; a tunnel is closed)
	if [ "$way" != proxy ]; then
		for shape in lenient_tab lenient_lower; do
			through "$way" "$shape"
			assert_eq "STATUSES:" "$OUT" "$way $shape: nothing answered"
			assert_contains "$(cat "$AUDIT")" "\"decision\":\"deny\"" "$way $shape: refused"
		done
	fi
	# a chunk-size line that is not hex: the connection ends at once, refused, unanswered
	through "$way" bad_chunk
	assert_eq "STATUSES:" "$OUT" "$way bad_chunk: no answer"
	assert_contains "$(cat "$AUDIT")" "\"decision\":\"deny\"" "$way bad_chunk: a deny event"
	# positive control: the same first requests alone, allowed and audited as such
	for shape in one_cl one_chunked; do
		through "$way" "$shape"
		assert_eq "STATUSES:200" "$OUT" "$way $shape: the request alone is answered"
		assert_not_contains "$(cat "$AUDIT")" "\"decision\":\"deny\"" "$way $shape: no denial"
	done
	assert_eq 4 "$(grep -c '^POST /first host=127.0.0.1:[0-9]* body=5$' "$LOG")" \
		"$way: the controls' bodies arrived whole"
}

t_proxy_second_refused() { second_refused proxy; }
t_connect_second_refused() { second_refused connect; }
t_socks_second_refused() { second_refused socks; }

run_case host_control t_host_control
run_case proxy_second_refused t_proxy_second_refused
run_case connect_second_refused t_connect_second_refused
run_case socks_second_refused t_socks_second_refused
finish

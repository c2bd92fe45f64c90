# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# What the egress scripts share (test_egress.sh, test_egress_hostile.sh), sourced after lib.sh:
# the proxies' addresses, the test servers (mk_www, mk_tls), the in-sandbox helpers, the
# agentbox command lines (box, pbox) and readers of the trail and the output.

CURL=(curl -sS --max-time 15 --noproxy '')
HTTP_PROXY_URL=http://127.0.0.1:3128
SOCKS_PROXY_URL=socks5h://127.0.0.1:1080

# ------------------------------------------------------------- helpers ----

# mk_www: a host directory with file.txt (content $BODY, unique) served on $WWW_PORT.
mk_www() {
	BODY="egress-body-$(unique)"
	mkdir -p "$META/www"
	printf '%s\n' "$BODY" >"$META/www/file.txt"
	serve www "$META/www"
	WWW_PORT=$PORT
}

# mk_tls: a test CA (ca.pem, also copied into $CASE for the sandboxed clients) and a server
# certificate for localhost and 127.0.0.1; serves $META/www over HTTPS on $TLS_PORT.
mk_tls() {
	test_ca "$META/tls" DNS:localhost,IP:127.0.0.1
	cp "$META/tls/ca.pem" "$CASE/ca.pem"
	serve tls "$META/www" "$META/tls/srv.pem" "$META/tls/srv.key"
	TLS_PORT=$PORT
}

# helpers_in: copies the in-sandbox helpers into the case directory (the sandbox's workdir).
helpers_in() {
	cp "$HELPERS/egress_client.py" "$HELPERS/egress_hostile.py" "$CASE/" ||
		fail "cannot copy the helpers into $CASE"
}

# box NAME ARGS...: sets BOX to an agentbox command line in proxy mode with the shell profile
# and an audit trail in $META/NAME.jsonl (AUDIT); ARGS are more options, --, the command.
box() {
	AUDIT="$META/$1.jsonl"
	shift
	BOX=("$AGENTBOX" -p shell --net proxy --audit "$AUDIT" "$@")
}

# pbox PROFILE NAME ARGS...: the same with another profile.
pbox() {
	local profile=$1
	AUDIT="$META/$2.jsonl"
	shift 2
	BOX=("$AGENTBOX" -p "$profile" --audit "$AUDIT" "$@")
}

# net [FIELD=VALUE...]: the net events of $AUDIT, one line each (helpers/egress_audit.py), in NET.
net() {
	NET=$("$PY" "$HELPERS/egress_audit.py" "$AUDIT" "$@" 2>&1) ||
		fail "cannot read the net events of $AUDIT: $NET"
}

# field NAME: the value of NAME in the first line of $NET.
field() {
	printf '%s\n' "$NET" | head -n 1 | sed -n "s/.* $1=\([^ ]*\) .*/\1/p"
}

# out_value KEY: the value of the first KEY:value line of $OUT.
out_value() {
	printf '%s\n' "$OUT" | sed -n "s/^$1://p" | head -n 1
}

# assert_between LOW HIGH VALUE WHAT (decimal VALUE allowed)
assert_between() {
	"$PY" -c 'import sys; lo, hi, v = map(float, sys.argv[1:4]); sys.exit(not lo <= v <= hi)' \
		"$1" "$2" "${3:-nan}" 2>/dev/null ||
		fail "$4: expected between $1 and $2, got '${3:-}'" "$(report)"
}

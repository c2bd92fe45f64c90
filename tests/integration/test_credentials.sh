#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Credential brokering: a local HTTPS API (helpers/https_origin.py with ORIGIN_TOKEN)
# answers 200 only for the real token. The sandboxed command holds a placeholder ($API_TOKEN);
# agentbox puts the real value in on requests to origin.test, where [credential api] binds it
# (Authorization: Bearer {}). The same placeholder anywhere else (another host, another header,
# the body, the query, encoded, a DNS name, a CONNECT target) is refused with 403 and a
# `credential` event; with on-leak = stop it ends the run. The real value is nowhere inside
# (environment, /proc/*/environ and cmdline, the audit trail), and a response header carrying
# it reaches the command as the placeholder. Sources: env:, file: (owner-only), cmd:; a
# missing one, or a group-readable file, stops the run with 125 and the fix.
. "$(dirname "$0")/lib.sh"

REAL=realSecret0123456789abcdefXYZ

# origin: the test CA, the origin (origin.test, other.test) on $OP with ORIGIN_TOKEN=$REAL.
origin() {
	local d=$META/pki
	mkdir -p "$d" "$META/www"
	{ mk_ca "$d/ca" "agentbox-test origin CA" && mk_leaf "$d/srv" "$d/ca" DNS:origin.test,DNS:other.test; } \
		>"$META/openssl.log" 2>&1 || fail "cannot make the test certificates"
	OLOG=$META/origin.log
	bg env ORIGIN_TOKEN="$REAL" "$PY" "$HELPERS/https_origin.py" "$META/port" "$OLOG" "$META/www" \
		"$d/srv.pem" "$d/srv.key"
	wait_for_file "$META/port" 10 || fail "the HTTPS origin did not start"
	OP=$(cat "$META/port")
}

# profile [SOURCE [EXTRA...]]: $META/p.ini: origin.test and other.test pinned to 127.0.0.1,
# other.test under an [http] rule (so it is intercepted too), [credential api] bound to
# origin.test with SOURCE (default env:REAL_TOKEN); EXTRA lines go into the credential.
profile() {
	local src=${1:-env:REAL_TOKEN}
	shift || true
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\nallow = origin.test, other.test\n'
		printf 'resolve = origin.test=127.0.0.1, other.test=127.0.0.1\n'
		printf 'ca = %s\n' "$META/pki/ca.pem"
		printf '[http]\nallow = * other.test/**\n'
		printf '[credential api]\nsource = %s\nhosts = origin.test\n' "$src"
		printf '%s\nenv = API_TOKEN\nprefix = sk-\n' "${PLACE:-header = Authorization: Bearer {\}}"
		[ $# -eq 0 ] || printf '%s\n' "$@"
	} >"$META/p.ini"
}

box() {
	AUDIT="$META/$1.jsonl"
	shift
	REAL_TOKEN=$REAL run_cmd "$AGENTBOX" -p "$META/p.ini" --audit "$AUDIT" -- "$@"
}

# cred_event WHAT DECISION: the audit has a credential event with that decision for api.
cred_event() {
	grep -q "\"event\":\"credential\".*\"decision\":\"$2\".*\"credential\":\"api\"" "$AUDIT" ||
		fail "$1: no credential event with decision $2" "$(clip "$(cat "$AUDIT")" 3000)"
}

# valid_trails: every event of the case's runs is valid against docs/audit.schema.json.
valid_trails() {
	"$PY" -c 'import jsonschema' 2>/dev/null || return 0
	run_cmd "$PY" -c 'import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
bad = [f"{p}:{n}: {e.message[:300]}" for p in sys.argv[2:] for n, l in enumerate(open(p), 1) for e in v.iter_errors(json.loads(l))]
print("\n".join(bad) or "VALID")' "$AGENTBOX_SOURCE/docs/audit.schema.json" "$META"/*.jsonl
	assert_contains "$OUT" "VALID" "the audit events against docs/audit.schema.json"
}

no_real_in_audit() {
	! grep -q "$REAL" "$AUDIT" || fail "the real value is in the audit trail"
}

t_curl_bearer() {
	origin
	profile
	# control: without agentbox's help the placeholder is refused by the API
	box curl sh -c 'case "$API_TOKEN" in sk-*) ;; *) echo "no placeholder: $API_TOKEN"; exit 1;; esac
		curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	[ "$RC" = 0 ] || fail "curl with the placeholder failed" "$(report)"
	assert_contains "$OUT" "api ok" "the API's answer to the placeholder, replaced"
	cred_event "the substitution" allow
	no_real_in_audit
	# the same with Python's urllib (a header set in code)
	box py "$PY" -c 'import os, urllib.request as u
r = u.Request("https://origin.test:'"$OP"'/api/chat", data=b"{}", headers={"Authorization": "Bearer " + os.environ["API_TOKEN"]})
print(u.urlopen(r, timeout=15).read().decode())'
	assert_contains "$OUT" "api ok" "Python urllib with the placeholder"
	# gh's style: a token in the environment, sent as "Authorization: token T"
	PLACE='header = Authorization: token {}' profile
	box gh sh -c 'curl -sS --max-time 15 -H "Authorization: token $API_TOKEN" "https://origin.test:'"$OP"'/api/user"'
	assert_contains "$OUT" "api ok" "gh-style Authorization: token with the placeholder"
}

# A token file the profile generates (file, file-env): npm reads its _authToken from the .npmrc
# agentbox made, holding the placeholder; `npm whoami` against a registry on the bound host
# succeeds (the placeholder was replaced at the boundary), the file is read-only and holds no
# real value; the same file pointed at the other host is refused as a leak.
t_token_file() {
	command -v npm >/dev/null || not_applicable "npm is not installed"
	origin
	local npmrc='//origin.test:'"$OP"'/api/:_authToken={}\n//other.test:'"$OP"'/api/:_authToken={}'
	profile env:REAL_TOKEN "file = $npmrc" 'file-env = NPM_CONFIG_USERCONFIG'
	local npm_env='export HOME=/tmp NPM_CONFIG_CACHE=/tmp/npm-cache NPM_CONFIG_UPDATE_NOTIFIER=false'
	box npmrc sh -c 'f=$NPM_CONFIG_USERCONFIG; echo "path=$f"; cat "$f"
		echo more >>"$f" 2>/dev/null && echo WRITABLE'
	assert_contains "$OUT" "path=/run/agentbox/credential-api" "the file's path in file-env"
	assert_contains "$OUT" "//origin.test:$OP/api/:_authToken=sk-" "the placeholder in the file"
	assert_not_contains "$OUT" "$REAL" "the real value in the file"
	assert_not_contains "$OUT" WRITABLE "a write to the token file"
	box npm sh -c "$npm_env; npm whoami --registry https://origin.test:$OP/api/ 2>&1"
	assert_eq 0 "$RC" "npm whoami with the generated .npmrc"
	assert_contains "$OUT" "agentbox-test" "npm whoami's answer"
	cred_event "npm's request" allow
	no_real_in_audit
	box npmleak sh -c "$npm_env; npm whoami --registry https://other.test:$OP/api/ 2>&1"
	[ "$RC" != 0 ] || fail "npm whoami sent the placeholder to the other host and succeeded" \
		"$(report)"
	cred_event "npm's request to the other host" deny
}

# Nothing agentbox writes holds the value: its TMPDIR and state directory, the overlay's
# changes, the audit trail, the working directory (control: the search finds a copy put there).
t_not_on_disk() {
	origin
	profile env:REAL_TOKEN '' '[filesystem]' 'overlay = ${CWD}'
	mkdir -p "$META/tmp" "$META/state"
	AUDIT=$META/disk.jsonl
	REAL_TOKEN=$REAL TMPDIR="$META/tmp" XDG_STATE_HOME="$META/state" run_cmd "$AGENTBOX" \
		-p "$META/p.ini" --audit "$AUDIT" -- sh -c 'echo "$API_TOKEN" >in-overlay
		curl -sS --max-time 15 -D - -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/echo-token"'
	assert_contains "$OUT" "api ok" "the run"
	printf '%s\n' "$REAL" >"$CASE/control"
	local hits
	hits=$(grep -rla "$REAL" "$META/tmp" "$META/state" "$AUDIT" "$CASE")
	[ "$hits" = "$CASE/control" ] || fail "the real value on disk:" "$hits"
	[ -n "$(find "$META/state" -type f | head -n 1)" ] ||
		fail "control: the overlay's changes are not under the state directory"
}

t_python_requests() {
	"$PY" -c 'import requests' 2>/dev/null || not_applicable "python3-requests is not installed"
	origin
	profile
	box requests "$PY" -c 'import os, requests
r = requests.get("https://origin.test:'"$OP"'/api/models", headers={"Authorization": "Bearer " + os.environ["API_TOKEN"]}, timeout=15)
print(r.status_code, r.text.strip())'
	assert_contains "$OUT" "200 api ok" "requests with the placeholder in a header"
	cred_event "the substitution" allow
}

# git over HTTPS: the token in a header (http.extraHeader), then as Basic authentication (the
# placeholder as the URL's password, which git sends after the API's 401).
t_git() {
	origin
	local src=$META/gitsrc
	mkdir -p "$src"
	{
		git -C "$src" init -q -b main && printf 'cred-git\n' >"$src/README" &&
			git -C "$src" add README &&
			git -C "$src" -c user.name=host -c user.email=host@example.com commit -qm init &&
			git clone -q --bare "$src" "$META/www/repo.git" &&
			git -C "$META/www/repo.git" update-server-info
	} >"$META/git.log" 2>&1 || fail "cannot make the test repository: $(cat "$META/git.log")"
	profile
	box git-header sh -c 'git -c http.extraHeader="Authorization: Bearer $API_TOKEN" clone -q "https://origin.test:'"$OP"'/api/static/repo.git" c && cat c/README'
	assert_contains "$OUT" "cred-git" "git with the placeholder in http.extraHeader"
	box git-none sh -c 'GIT_TERMINAL_PROMPT=0 git clone -q "https://origin.test:'"$OP"'/api/static/repo.git" c2; echo rc=$?'
	assert_contains "$OUT" "rc=128" "control: git without the token is refused by the API"
	PLACE='basic = x-access-token:{}' profile
	box git-basic sh -c 'GIT_TERMINAL_PROMPT=0 git clone -q "https://x-access-token:$API_TOKEN@origin.test:'"$OP"'/api/static/repo.git" c3 && cat c3/README'
	assert_contains "$OUT" "cred-git" "git with the placeholder as Basic authentication"
	cred_event "the Basic substitution" allow
	no_real_in_audit
}

t_secret_absent_inside() {
	origin
	profile
	box scan sh -c 'env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr "\0" "\n" <"$f" 2>/dev/null; done; cat /proc/1/environ 2>/dev/null | tr "\0" "\n"
		a='"${REAL:0:10}"'; b='"${REAL:10}"'; printf "%s%s" "$a" "$b" >/tmp/control; grep -rl "$a$b" /run /tmp /etc "$HOME" 2>/dev/null | sort -u | sed "s/^/$(printf "F\\117UND ")/"; echo END'
	assert_contains "$OUT" "END" "the scan ran"
	assert_contains "$OUT" "API_TOKEN=sk-" "control: the placeholder is in the environment"
	assert_not_contains "$OUT" "$REAL" "the real value inside the sandbox"
	assert_contains "$OUT" "FOUND /tmp/control" "control: the scan finds the value in a file"
	[ "$(printf '%s\n' "$OUT" | grep -c "FOUND /")" = 1 ] ||
		fail "the real value in a file inside the sandbox" "$(printf '%s\n' "$OUT" | grep "FOUND /")"
	assert_not_contains "$OUT" "REAL_TOKEN=" "the source variable inside the sandbox"
	no_real_in_audit
}

t_other_host_refused() {
	origin
	profile
	box other sh -c 'curl -sS --max-time 15 -o /dev/null -w "CODE:%{http_code} DENIED:%header{x-agentbox-denied}\n" -H "Authorization: Bearer $API_TOKEN" "https://other.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "CODE:403 DENIED:credential api" "the placeholder sent to another host"
	cred_event "the leak to another host" deny
	assert_not_contains "$(cat "$OLOG")" "/api/models" "the refused request reached the origin"
	box other-ok curl -sS --max-time 15 "https://other.test:$OP/echo/x"
	assert_contains "$OUT" "origin method=GET" "control: other.test without the placeholder"
	box ok sh -c 'curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	valid_trails
}

# A credential's rules decide which requests reach its host while no [http] allow rule names it:
# a DELETE (or a GET elsewhere) outside them is refused with the [http] denial, naming the rules
# and the fix, and never reaches the origin; the GET they name goes with the key put in. An
# [http] allow rule for the host hands the decision back to [http]: the DELETE reaches it.
t_rules_filter() {
	origin
	profile env:REAL_TOKEN 'rules = GET origin.test/api/**'
	local w='-o /dev/null -w "CODE:%{http_code} DENIED:%header{x-agentbox-denied}\n"'
	box rules-get sh -c 'curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "api ok" "the GET the credential's rules name, the key put in"
	cred_event "the GET's substitution" allow
	box rules-delete sh -c "curl -sS --max-time 15 $w -X DELETE https://origin.test:$OP/api/gone-delete
		curl -sS --max-time 15 $w https://origin.test:$OP/echo/gone-get
		curl -sS --max-time 15 -X DELETE https://origin.test:$OP/api/gone-delete"
	assert_contains "$OUT" "CODE:403 DENIED:[credential api]" "a DELETE outside the credential's rules"
	[ "$(printf '%s\n' "$OUT" | grep -c 'CODE:403 DENIED:\[credential api\]')" = 2 ] ||
		fail "a GET outside the credential's rules was not refused" "$(report)"
	assert_contains "$OUT" "denied by the rules of [credential api] (GET origin.test/api/**)" \
		"the refusal names the credential's rules"
	assert_contains "$OUT" "add an [http] allow rule for the host" "the refusal names the fix"
	assert_not_contains "$(cat "$OLOG")" "gone-" "a refused request reached the origin"
	assert_contains "$(grep '"event":"http"' "$AUDIT" | grep '"method":"DELETE"')" \
		'"decision":"deny"' "the DELETE's http event"
	assert_contains "$(grep '"event":"http"' "$AUDIT" | grep '"method":"DELETE"')" \
		'rules of [credential api]' "the http event's reason"
	run_cmd "$AGENTBOX" -p "$META/p.ini" --explain
	assert_contains "$OUT" '"credential_rules":[{"rule":"GET origin.test/api/**","by":"[credential api]"}]' \
		"--explain shows the credential's rules deciding the host"
	# control: with an [http] allow rule for the host, [http] decides: the DELETE reaches it
	profile env:REAL_TOKEN 'rules = GET origin.test/api/**' '[http]' 'allow = * origin.test/**'
	box rules-http sh -c "curl -sS --max-time 15 $w -X DELETE https://origin.test:$OP/api/reached-delete"
	assert_contains "$OUT" "CODE:401" "the DELETE under an [http] allow rule, answered by the origin"
	assert_contains "$(cat "$OLOG")" "req DELETE /api/reached-delete" "the DELETE at the origin"
	box rules-http-get sh -c 'curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "api ok" "control: the GET with the key, under the [http] rule"
	no_real_in_audit
	valid_trails
}

# leak NAME CURL-ARGS: a request to the bound host with the placeholder somewhere else: 403.
leak() {
	local name=$1
	shift
	box "$name" sh -c "curl -sS --max-time 15 -o /dev/null -w 'CODE:%{http_code} DENIED:%header{x-agentbox-denied}\n' $*"
	assert_contains "$OUT" "CODE:403 DENIED:credential api" "the placeholder in $name"
	cred_event "$name" deny
}

t_smuggled_forms() {
	origin
	profile
	local u="https://origin.test:$OP/api/models"
	leak body "-d \"x=\$API_TOKEN\" $u"
	leak query "\"$u?q=\$API_TOKEN\""
	leak header "-H \"X-Other: \$API_TOKEN\" $u"
	leak base64 "-H \"X-B: \$(printf 'ab%s' \"\$API_TOKEN\" | base64 -w0)\" $u"
	leak base64url "-d \"\$(printf 'a%s' \"\$API_TOKEN\" | base64 -w0 | tr '+/' '-_')\" $u"
	leak hex "-d \"\$(printf '%s' \"\$API_TOKEN\" | od -An -tx1 | tr -d ' \\n' | tr a-f A-F)\" $u"
	leak urlencoded "\"$u?q=\$(printf '%s' \"\$API_TOKEN\" | od -An -tx1 | tr -d '\\n' | sed 's/ /%/g')\""
	# a body far larger than one read, the placeholder across the reads
	box bigbody sh -c 'head -c 300000 /dev/zero | tr "\0" a >big; printf "%s" "$API_TOKEN" >>big; head -c 300000 /dev/zero | tr "\0" b >>big
		curl -sS --max-time 15 -o /dev/null -w "CODE:%{http_code}\n" --data-binary @big "https://origin.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "CODE:403" "the placeholder deep in a large body"
	# refused at the body's start, with 6 MiB still to send: the proxy reads and drops the
	# rest after its 403 instead of closing on unread bytes, whose reset would make the
	# client's kernel drop the 403 unread (curl: "Connection reset by peer", code 000)
	box early sh -c 'printf "%s" "$API_TOKEN" >early; head -c 6291456 /dev/zero | tr "\0" a >>early
		for i in 1 2 3; do curl -sS --max-time 15 -o /dev/null -w "CODE:%{http_code}\n" --data-binary @early "https://origin.test:'"$OP"'/api/models"; done'
	assert_eq "CODE:403
CODE:403
CODE:403" "$OUT" "a refusal while the client is still sending its body"
	# control: the same request shapes without the placeholder pass
	box clean sh -c 'curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" -H "X-Other: x" -d "x=1" "https://origin.test:'"$OP"'/api/models?q=1"'
	assert_contains "$OUT" "api ok" "control: a clean request"
}

t_names_refused() {
	origin
	profile
	box dns sh -c 'getent hosts "$API_TOKEN.origin.test"; echo rc=$?'
	assert_contains "$OUT" "rc=2" "the DNS query with the placeholder"
	cred_event "the DNS query" deny
	box connect sh -c 'curl -sS --max-time 15 -o /dev/null -w "CODE:%{http_code}\n" "https://$API_TOKEN.origin.test:'"$OP"'/x"; echo rc=$?'
	case "$OUT" in *CODE:200*) fail "a CONNECT to a placeholder name went through" "$(report)" ;; esac
	cred_event "the CONNECT target" deny
	box socks sh -c 'curl -sS --max-time 15 -o /dev/null -w "CODE:%{http_code}\n" -x socks5h://127.0.0.1:1080 "https://$API_TOKEN.origin.test:'"$OP"'/x"; echo rc=$?'
	case "$OUT" in *CODE:200*) fail "a SOCKS5 request for a placeholder name went through" "$(report)" ;; esac
	cred_event "the SOCKS5 name" deny
	box socks-ok sh -c 'curl -sS --max-time 15 -x socks5h://127.0.0.1:1080 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "api ok" "control: the same client through SOCKS5 to the bound host"
	box dns-ok sh -c 'getent hosts origin.test >/dev/null; echo rc=$?'
	assert_contains "$OUT" "rc=0" "control: a clean name resolves"
	valid_trails
}

# Plain HTTP never carries a real value: a placeholder in a plain-HTTP request to the bound
# host (head or body) is refused; the same requests without it go through (control).
t_plain_http() {
	origin
	mkdir -p "$META/plain"
	serve plain "$META/plain"
	local pp=$PORT
	profile
	box plain sh -c 'u=http://origin.test:'"$pp"'/
		curl -sS --max-time 15 -o /dev/null -w "HEAD:%{http_code} %header{x-agentbox-denied}\n" -H "Authorization: Bearer $API_TOKEN" "$u"
		curl -sS --max-time 15 -w "BODY:%{http_code}\n" -d "k=$API_TOKEN" "$u" 2>&1 | tail -n 1
		curl -sS --max-time 15 -w "CLEAN:%{http_code}\n" -d "k=v" "$u" | tail -n 1'
	assert_contains "$OUT" "HEAD:403 credential api" "the placeholder in a plain-HTTP header"
	case "$OUT" in *BODY:200*) fail "a plain-HTTP body with the placeholder was answered" "$(report)" ;; esac
	assert_contains "$OUT" "CLEAN:200" "control: a plain-HTTP POST without the placeholder"
	cred_event "the plain-HTTP leak" deny
	[ "$(grep -c '"event":"credential".*"decision":"deny"' "$AUDIT")" -ge 2 ] ||
		fail "the plain-HTTP body's leak has no credential event" "$(clip "$(cat "$AUDIT")" 3000)"
}

t_on_leak_stop() {
	origin
	profile env:REAL_TOKEN 'on-leak = stop'
	box stop sh -c 'curl -sS --max-time 15 -o /dev/null -H "X: $API_TOKEN" "https://other.test:'"$OP"'/x"; sleep 20; echo survived'
	[ "$RC" = 125 ] || fail "on-leak = stop did not end the run (rc $RC)" "$(report)"
	assert_not_contains "$OUT" "survived" "the command after the leak"
	assert_contains "$ERR" "on-leak = stop" "the cause on stderr"
	assert_contains "$(grep '"event":"exit"' "$AUDIT")" '"cause":"credential-leak"' \
		"the exit event's cause"
	REAL_TOKEN=$REAL run_cmd "$AGENTBOX" -p "$META/p.ini" --result "$META/result.json" -- \
		sh -c 'curl -sS --max-time 15 -o /dev/null -H "X: $API_TOKEN" "https://other.test:'"$OP"'/x"; sleep 20'
	assert_eq 125 "$RC" "on-leak = stop, again"
	assert_contains "$(cat "$META/result.json")" '"cause":"credential-leak"' "--result's cause"
}

t_response_redacted() {
	origin
	profile
	box echo sh -c 'curl -sS --max-time 15 -D - -o /dev/null -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/echo-token"; echo "PH=$API_TOKEN"'
	assert_not_contains "$OUT" "$REAL" "the real value in a response header"
	local ph
	ph=$(line_of PH)
	assert_contains "$OUT" "X-Token: $ph" "the placeholder in the real value's place"
}

line_of() {
	printf '%s\n' "$OUT" | sed -n "s/^$1=//p" | head -n 1
}

t_sources() {
	origin
	printf '%s\n' "$REAL" >"$META/tok"
	chmod 600 "$META/tok"
	profile "file:$META/tok"
	box file sh -c 'curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "api ok" "a file: source"
	profile "cmd:cat $META/tok"
	box cmd sh -c 'curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "api ok" "a cmd: source"
	chmod 640 "$META/tok"
	profile "file:$META/tok"
	box group true
	[ "$RC" = 125 ] || fail "a group-readable source file was used (rc $RC)" "$(report)"
	assert_contains "$ERR" "chmod 600" "the fix for a group-readable file"
	profile env:NO_SUCH_TOKEN_VAR
	box missing true
	[ "$RC" = 125 ] || fail "a missing source did not stop the run (rc $RC)" "$(report)"
	assert_contains "$ERR" "credential api" "the error names the credential"
	profile "cmd:false"
	box cmdfail true
	[ "$RC" = 125 ] || fail "a failing cmd: source did not stop the run (rc $RC)" "$(report)"
	profile "cmd:echo short"
	box short true
	[ "$RC" = 125 ] || fail "a 5-byte value was taken for a secret (rc $RC)" "$(report)"
	# checked when the run reads it, yet named where the profile wrote the section
	assert_contains "$ERR" "$META/p.ini:" "the short value's error names the profile's line"
	assert_contains "$ERR" "shorter than 8 bytes" "the short value's cause"
	# a source file in a tree the view shows is hidden there
	printf '%s\n' "$REAL" >"$CASE/tok"
	chmod 600 "$CASE/tok"
	profile "file:$CASE/tok"
	box hidden sh -c 'if cat '"$CASE"'/tok; then echo READABLE; else echo UNREADABLE; fi
		curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "api ok" "the file source in the working directory"
	assert_contains "$OUT" "UNREADABLE" "the source file, hidden in the view"
	assert_not_contains "$OUT" "$REAL" "the source file's content inside"
	# --explain: the bindings and the source, never the value
	REAL_TOKEN=$REAL run_cmd "$AGENTBOX" -p "$META/p.ini" --explain
	assert_contains "$OUT" '"credentials"' "--explain lists the credentials"
	assert_contains "$OUT" "file:$CASE/tok" "--explain names the source"
	assert_not_contains "$OUT" "$REAL" "the value in --explain"
}

# [network] ca is read once, before the run starts: the command, which sees the file in its
# working tree, overwrites it before its first request, and the proxy still verifies the
# origin with what was read (before, the path was opened again at the first intercepted
# connection). Control: the same junk in the file before the run stops it with 125.
t_ca_read_once() {
	origin
	cp "$META/pki/ca.pem" "$CASE/anchor.pem"
	profile env:REAL_TOKEN
	sed -i "s|^ca = .*|ca = $CASE/anchor.pem|" "$META/p.ini"
	box swapped sh -c 'echo junk >'"$CASE"'/anchor.pem && cat '"$CASE"'/anchor.pem &&
		curl -sS --max-time 15 -H "Authorization: Bearer $API_TOKEN" "https://origin.test:'"$OP"'/api/models"'
	assert_contains "$OUT" "junk" "the command rewrote the anchor file"
	assert_contains "$OUT" "api ok" "the origin verified with the anchor as read before the run"
	box junk_before true
	[ "$RC" = 125 ] || fail "a junk anchor before the run did not stop it (rc $RC)" "$(report)"
	assert_contains "$ERR" "no PEM certificate" "the junk anchor's cause"
}

# pid 1 is a copy of the supervisor made before the values were read, and it wipes its copy of
# the caller's environment first thing: its memory holds no real value (env: and cmd: sources),
# which the supervisor's does (control), while it does hold the command line (control). Root
# only: pid 1 is not dumpable, and only CAP_SYS_PTRACE reads such a process's memory.
t_pid1_memory() {
	under_memcheck && not_applicable "valgrind's process is not agentbox's"
	[ "$(id -u)" = 0 ] ||
		not_applicable "reading pid 1's memory from the host needs CAP_SYS_PTRACE (root)"
	origin
	local src mark hexv sup pid1
	hexv=real=$(printf '%s' "$REAL" | od -An -tx1 | tr -d ' \n')
	printf '%s\n' "$REAL" >"$META/tok"
	chmod 600 "$META/tok"
	local sources=(env:REAL_TOKEN "cmd:cat $META/tok")
	# AddressSanitizer's runtime keeps its own copy of /proc/self/environ from before main,
	# which agentbox cannot wipe: there only the cmd: source tells anything
	if grep -qa __asan_init "$AGENTBOX_BIN"; then
		echo "    (ASan build: env: source not checked, its runtime holds the caller's environment)"
		sources=("cmd:cat $META/tok")
	fi
	for src in "${sources[@]}"; do
		profile "$src"
		rm -f ready done
		mark=marker-$(unique)
		# the caller's environment holds the value only when it is the source
		case $src in env:*) export REAL_TOKEN=$REAL ;; *) unset REAL_TOKEN ;; esac
		bg "$AGENTBOX_BIN" -p "$META/p.ini" -- sh -c 'echo x >ready && while [ ! -e done ]; do sleep 0.05; done' "$mark"
		sup=$BG_PID
		wait_for_file ready 10 || fail "the sandboxed command did not start ($src)"
		pid1=$(pgrep -P "$sup" | head -n 1)
		[ -n "$pid1" ] || fail "no pid 1 under the supervisor $sup"
		run_cmd "$PY" "$HELPERS/mem_search.py" "$sup" "$hexv"
		assert_contains "$OUT" "real found" "control: the real value in the supervisor ($src)"
		run_cmd "$PY" "$HELPERS/mem_search.py" "$pid1" "$hexv" "mark=$(printf '%s' "$mark" | od -An -tx1 | tr -d ' \n')"
		touch done
		assert_contains "$OUT" "mark found" "control: pid 1's memory holds its command line"
		assert_contains "$OUT" "real absent" "the real value in pid 1's memory ($src)"
		wait "$sup"
	done
}

run_case curl_bearer t_curl_bearer
run_case token_file t_token_file
run_case pid1_memory t_pid1_memory
run_case not_on_disk t_not_on_disk
run_case python_requests t_python_requests
run_case git t_git
run_case secret_absent_inside t_secret_absent_inside
run_case other_host_refused t_other_host_refused
run_case rules_filter t_rules_filter
run_case smuggled_forms t_smuggled_forms
run_case names_refused t_names_refused
run_case plain_http t_plain_http
run_case on_leak_stop t_on_leak_stop
run_case response_redacted t_response_redacted
run_case sources t_sources
run_case ca_read_once t_ca_read_once
finish

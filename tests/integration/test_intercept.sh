#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# HTTPS interception, the trust on either side: real clients in the sandbox talk HTTPS to a
# local origin (helpers/https_origin.py, on the host's 127.0.0.1, its certificate from a test CA
# made here with openssl) under [http] rules; the set-up is intercept_lib.sh's. For a host the
# rules name, agentbox terminates TLS with a leaf of the run's CA, which the sandbox trusts
# through /run/agentbox/ca-bundle.crt, the CA variables, a hashed directory (SSL_CERT_DIR) and,
# for Java, a PKCS12 store; no private key is shown. A CA the user gives its clients is kept; a
# client that refuses the run's certificate is audited, and named on stderr with the fix. A host
# without rules is not intercepted (the client sees the origin's own certificate) unless a rule
# for any host covers it. agentbox verifies the origin against the system store plus
# `[network] ca` (the test CA) with host name checking: an origin whose certificate it cannot
# verify, or an anchor that does not load, fails the request, audited. Requests allowed and
# denied for real clients (curl, Python, pip, npm, Node, git) and hostile clients are
# test_intercept_clients.sh's.
#
# Names (origin.test, other.test, bad.test, misnamed.test) are pinned to the host's 127.0.0.1
# with `[network] resolve`; NO_PROXY names none of them, so clients use the proxy variables
# agentbox sets. The in-sandbox clients' helper is helpers/intercept_client.py;
# helpers/intercept_audit.py reads the audit trail.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/intercept_lib.sh"

# ------------------------------------------------------------- helpers ----

# stop_session: the session a case started ($META/sid), stopped when the case ends.
stop_session() {
	[ -f "$META/sid" ] && timeout -s KILL "$CMD_LIMIT" "$AGENTBOX" session stop \
		"$(cat "$META/sid")" >/dev/null 2>&1
	return 0
}

run_subject() {
	box subject "$PY" intercept_client.py subject /run/agentbox/ca.crt
	RUN_CA=$(line_of SUBJECT)
	[ -n "$RUN_CA" ] || fail "cannot read the run's CA certificate in the sandbox" "$(report)"
}

# ---------------------------------------------------------------- cases ----

# The trust the sandbox is given: the bundle (system + the run's CA), the CA alone, the
# variables clients read; no private key. Control: without [http] rules, none of it.
t_trust_inside() {
	origin
	box trust sh -c '
		for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE PIP_CERT GIT_SSL_CAINFO \
			NODE_EXTRA_CA_CERTS; do
			printf "%s=%s\n" "$v" "$(printenv "$v")"
		done
		"$1" intercept_client.py subject /run/agentbox/ca.crt
		printf "CERTS:%s\n" "$(grep -c "BEGIN CERTIFICATE" /run/agentbox/ca-bundle.crt)"
		"$1" -c "b = open(\"/run/agentbox/ca-bundle.crt\").read()
c = open(\"/run/agentbox/ca.crt\").read().strip()
print(\"CA-IN-BUNDLE:%s\" % (c in b))"
		printf "KEYS:%s\n" "$(grep -l "PRIVATE KEY" /run/agentbox/* 2>/dev/null)"' sh "$PY"
	[ "$RC" = 0 ] || fail "the trust check failed in the sandbox" "$(report)"
	local v
	for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE PIP_CERT GIT_SSL_CAINFO; do
		assert_contains "$OUT" "$v=/run/agentbox/ca-bundle.crt" "$v names the bundle"
	done
	assert_contains "$OUT" "NODE_EXTRA_CA_CERTS=/run/agentbox/ca.crt" "NODE_EXTRA_CA_CERTS names the CA"
	assert_contains "$(line_of SUBJECT)" "agentbox" "the run's CA"
	[ "$(line_of CERTS)" -gt 1 ] 2>/dev/null ||
		fail "the bundle should hold the system's CAs and the run's" "$(report)"
	assert_eq "True" "$(line_of CA-IN-BUNDLE)" "the run's CA is in the bundle"
	assert_eq "" "$(line_of KEYS)" "a private key under /run/agentbox"
	# control: no [http] rules, no interception, no run CA
	sed -i '/^\[http\]/,$d' "$META/p.ini"
	box notrust sh -c 'printf "SSL_CERT_FILE=%s\n" "$SSL_CERT_FILE"; ls /run/agentbox/ca.crt'
	assert_not_contains "$OUT" "SSL_CERT_FILE=/run/agentbox" "SSL_CERT_FILE without [http] rules"
	assert_contains "$ERR" "No such file" "no run CA without [http] rules"
}

# A CA the user gives its clients through their own variable (SSL_CERT_FILE here) is kept
# when the run intercepts another host: the run's bundle, which the variable now names, holds
# its certificates, and so does ca.crt (node's extra store), so a tunnelled origin signed by it
# verifies. [network] ca is the rogue CA here, so only the variable can bring the origin's in.
# Control: without the variable the same client fails to verify.
t_user_ca_kept() {
	origin
	UPSTREAM_CA=$META/pki/rogue.pem profile
	run_cmd "$AGENTBOX" -p "$META/p.ini" --setenv "SSL_CERT_FILE=$CASE/origin-ca.pem" -- \
		sh -c "printenv SSL_CERT_FILE; grep -c 'BEGIN CERTIFICATE' /run/agentbox/ca.crt
			$PY intercept_client.py peer other.test $OP -"
	assert_contains "$OUT" "/run/agentbox/ca-bundle.crt" "SSL_CERT_FILE names the run's bundle"
	assert_contains "$OUT" "ISSUER:$ORIGIN_CA" "the tunnelled origin verifies with the user's CA"
	assert_eq 3 "$(printf '%s\n' "$OUT" | sed -n 2p)" \
		"ca.crt: the run's CA, [network] ca's and the user's"
	run_cmd "$AGENTBOX" -p "$META/p.ini" -- "$PY" intercept_client.py peer other.test "$OP" -
	assert_contains "$OUT" "CERTIFICATE_VERIFY_FAILED" "control: without the variable, no origin CA"
}

# A client that refuses the run's certificate after the handshake (curl pinning another key)
# hangs up without a request: the connection's event says it likely refused the certificate,
# and how to fix it. Control: a client that makes its request ends "closed".
t_silent_refusal() {
	origin
	box pinned curl -sS --max-time 15 \
		--pinnedpubkey "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" \
		"https://origin.test:$OP/repos/acme/x"
	[ "$RC" != 0 ] || fail "curl accepted a key it did not pin" "$(report)"
	grep -q '"event":"net".*"host":"origin.test".*likely refused the run.s certificate.*fix: point it at /run/agentbox/ca.crt' "$AUDIT" ||
		fail "no event names the likely refusal" "$(clip "$(grep -E "\"(net|http)\"" "$AUDIT")" 3000)"
	box spoke curl -sS --max-time 15 -o /dev/null "https://origin.test:$OP/repos/acme/x"
	[ "$RC" = 0 ] || fail "the control request failed" "$(report)"
	! grep -q "likely refused" "$AUDIT" || fail "a client that made its request was called a refusal" "$(cat "$AUDIT")"
}

# At the run's end agentbox says, on stderr, one line per host whose clients refused the run's
# certificate, with the fix: curl pinning another key (it hangs up after the handshake, twice)
# and a Python client trusting only the origin's CA (it aborts the handshake with an alert) make
# one line for origin.test, counting three connections. Control: clients that trust the run's CA
# make none. In a session, each exec's client says its own exec's lines; the next exec, which
# trusts the CA, says none.
t_refusal_lines() {
	origin
	local pinned="curl -sS --max-time 15 -o /dev/null --pinnedpubkey sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= https://origin.test:$OP/repos/acme/x"
	box refused sh -c "$pinned; $pinned; $PY intercept_client.py peer origin.test $OP origin-ca.pem"
	assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c '^agentbox: origin.test: a client refused the run.s certificate on 3 connections (its TLS alert said so: ')" \
		"one line for origin.test, its three refused connections counted"
	assert_contains "$ERR" "fix: have it trust /run/agentbox/ca.crt, or allow origin.test without [http] rules or a credential for it" \
		"the line's fix"
	assert_eq 1 "$(printf '%s\n' "$ERR" | grep -c 'refused the run.s certificate')" "no other host's line"
	# the reason in OpenSSL's words (that its strings load only when one is first rendered is
	# tests/unit/test_openssl_lazy.c's: libssl's first context loads these ones anyway)
	has_event "the Python client's alert, in OpenSSL's words" host=origin.test \
		"reason~its TLS failed: error:0A000418:SSL routines::tlsv1 alert unknown ca"
	box trusting sh -c "curl -sS --max-time 15 -o /dev/null https://origin.test:$OP/repos/acme/x
		$PY intercept_client.py urllib https://origin.test:$OP/repos/acme/py"
	[ "$RC" = 0 ] || fail "the trusting clients failed" "$(report)"
	assert_not_contains "$ERR" "refused the run's certificate" "control: clients that trust the CA"
	# a session: the lines are the exec's
	local sid
	trap 'stop_session' EXIT
	run_cmd "$AGENTBOX" session start -p "$META/p.ini" --audit "$META/session.jsonl"
	[ "$RC" = 0 ] || fail "session start" "$(report)"
	sid=$OUT
	echo "$sid" >"$META/sid"
	run_cmd "$AGENTBOX" exec "$sid" -- sh -c "$pinned"
	[ "$RC" != 0 ] || fail "curl accepted a key it did not pin (session)" "$(report)"
	assert_contains "$ERR" "agentbox: origin.test: a client likely refused the run's certificate on 1 connection (it hung up after the handshake" \
		"the exec's client says its refusal"
	run_cmd "$AGENTBOX" exec "$sid" -- curl -sS --max-time 15 -o /dev/null "https://origin.test:$OP/repos/acme/x"
	[ "$RC" = 0 ] || fail "the trusting exec failed" "$(report)"
	assert_not_contains "$ERR" "refused the run's certificate" "control: the next exec, which trusts the CA"
	run_cmd "$AGENTBOX" session stop "$sid"
	rm -f "$META/sid"
}

# A client that looks CAs up in a directory finds the run's CA by its subject hash: SSL_CERT_DIR
# lists /run/agentbox/certs (HASH.0), then the system's directory. Control: the system's
# directory alone does not verify an intercepted host.
t_hashed_dir() {
	origin
	box hashed sh -c 'printf "DIR:%s\n" "$SSL_CERT_DIR"; ls /run/agentbox/certs
		'"$PY"' -c "
import os, socket, ssl, sys
def peer(capath):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(capath=capath)
    s = socket.create_connection((\"127.0.0.1\", 3128))
    s.sendall(b\"CONNECT origin.test:'"$OP"' HTTP/1.1\\r\\nHost: origin.test:'"$OP"'\\r\\n\\r\\n\")
    s.recv(4096)
    try:
        ctx.wrap_socket(s, server_hostname=\"origin.test\").close()
        return \"ok\"
    except ssl.SSLError as e:
        return \"failed\"
print(\"LIST:\" + peer(os.environ[\"SSL_CERT_DIR\"]))
print(\"SYSTEM:\" + peer(\"/etc/ssl/certs\"))
"'
	assert_contains "$OUT" "DIR:/run/agentbox/certs:/etc/ssl/certs" "SSL_CERT_DIR lists the run's directory first"
	printf '%s\n' "$OUT" | grep -qE '^[0-9a-f]{8}\.0$' || fail "no HASH.0 in /run/agentbox/certs" "$(report)"
	assert_contains "$OUT" "LIST:ok" "the intercepted host verifies through SSL_CERT_DIR alone"
	assert_contains "$OUT" "SYSTEM:failed" "control: the system's directory alone does not"
}

# Java reads none of the trust variables: agentbox adds to JAVA_TOOL_OPTIONS, after the
# profile's own options (which stay), the run's PKCS12 store /run/agentbox/java-cacerts.p12,
# holding the system's CAs, the run's and [network] ca's. A real JVM client (HttpsURLConnection)
# verifies the intercepted host, and the tunnelled other.test, whose CA only [network] ca gives.
# Controls: the same client without the store fails to build a path to the run's CA; a store of
# the user's own named in JAVA_TOOL_OPTIONS is kept (and said on stderr): other.test, whose CA it
# holds, verifies, and the intercepted host, whose CA it lacks, does not.
t_jvm() {
	command -v java >/dev/null || not_applicable "no java on PATH (Debian: default-jre-headless)"
	command -v keytool >/dev/null || not_applicable "no keytool beside java"
	java --list-modules 2>/dev/null | grep -q '^jdk\.compiler@' ||
		not_applicable "this java cannot run a source file (no jdk.compiler module)"
	origin
	cat >"$CASE/Get.java" <<'JAVA'
import java.io.InputStream;
import java.net.URL;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLException;

public class Get {
    public static void main(String[] args) throws Exception {
        System.out.println("PROP:" + System.getProperty("agentbox.test"));
        try {
            HttpsURLConnection c = (HttpsURLConnection) new URL(args[0]).openConnection();
            int status = c.getResponseCode();
            System.out.println("STATUS:" + status);
            try (InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
                System.out.println("BODY:" + new String(in.readAllBytes()).trim());
            }
        } catch (SSLException e) {
            System.out.println("TLS:" + e.getMessage());
        }
    }
}
JAVA
	# Debian's JDK keeps its configuration in /etc/java-N-openjdk, which no bundled profile shows
	local conf
	conf=$(readlink -f "$(dirname "$(readlink -f "$(command -v java)")")/../conf/security/java.security")
	printf '[env]\nset = JAVA_TOOL_OPTIONS=-Dagentbox.test=kept\n[filesystem]\nro-try = %s\n' \
		"${conf%/security/java.security}" >>"$META/p.ini"
	local get="java -XX:TieredStopAtLevel=1 Get.java" \
		own="https://origin.test:$OP/repos/acme/jvm" other="https://other.test:$OP/repos/acme/jvm-other"
	box jvm sh -c "printf 'OPTS:%s\n' \"\$JAVA_TOOL_OPTIONS\"; ls /run/agentbox/java-cacerts.p12
		echo '== intercepted'; $get $own
		echo '== tunnelled'; $get $other
		echo '== without'; JAVA_TOOL_OPTIONS=\"\${JAVA_TOOL_OPTIONS%% -Djavax.net.ssl.trustStore=*}\" $get $own"
	[ "$RC" = 0 ] || fail "the JVM runs failed" "$(report)"
	case "$(line_of OPTS)" in
	"-Dagentbox.test=kept "*"-Dhttps.proxyHost=127.0.0.1 "*"-Djavax.net.ssl.trustStore=/run/agentbox/java-cacerts.p12 -Djavax.net.ssl.trustStoreType=PKCS12") ;;
	*) fail "JAVA_TOOL_OPTIONS: the profile's options, then the proxy's and the store's" "$(report)" ;;
	esac
	section intercepted
	assert_eq kept "$(sec_of PROP)" "the profile's Java option reaches the JVM"
	assert_eq 200 "$(sec_of STATUS)" "Java verifies the intercepted host ($(sec_of TLS))"
	assert_contains "$(sec_of BODY)" "origin method=GET path=/repos/acme/jvm " "the origin's answer"
	has_event "Java's request" event=http decision=allow method=GET host=origin.test path=/repos/acme/jvm
	section tunnelled
	assert_eq 200 "$(sec_of STATUS)" "Java verifies other.test with [network] ca's CA ($(sec_of TLS))"
	section without
	assert_contains "$(sec_of TLS)" "PKIX path building failed" "control: Java's own store lacks the run's CA"
	# the user's own store: the origin's CA only (keytool, which every JRE has)
	keytool -importcert -noprompt -alias origin -file "$CASE/origin-ca.pem" -keystore "$CASE/user.p12" \
		-storetype PKCS12 -storepass changeit >"$META/keytool.log" 2>&1 ||
		fail "keytool cannot make the user's store" "$(cat "$META/keytool.log")"
	sed -i "s|^set = JAVA_TOOL_OPTIONS=.*|set = JAVA_TOOL_OPTIONS=-Djavax.net.ssl.trustStore=$CASE/user.p12 -Djavax.net.ssl.trustStorePassword=changeit|" "$META/p.ini"
	box jvm-own sh -c "printf 'OPTS:%s\n' \"\$JAVA_TOOL_OPTIONS\"
		echo '== intercepted'; $get $own
		echo '== tunnelled'; $get $other"
	assert_not_contains "$(line_of OPTS)" "java-cacerts.p12" "the run's store with the user's own"
	assert_contains "$ERR" "agentbox: warning: JAVA_TOOL_OPTIONS names a javax.net.ssl.trustStore of its own: kept" \
		"the user is told their store is kept"
	section tunnelled
	assert_eq 200 "$(sec_of STATUS)" "the user's store verifies other.test ($(sec_of TLS))"
	section intercepted
	assert_contains "$(sec_of TLS)" "PKIX path building failed" "the user's store lacks the run's CA"
}

# A host without [http] rules (other.test, same origin) is not intercepted: the client is shown
# the origin's own certificate (verified against the test CA alone; the sandbox's bundle does
# not know it), and its requests are not decided by rules. Contrast: origin.test's certificate
# comes from the run's CA and the test CA does not verify it.
t_not_intercepted() {
	origin
	run_subject
	box peers sh -c "echo '== other-test-ca'; $PY intercept_client.py peer other.test $OP origin-ca.pem
		echo '== other-bundle'; $PY intercept_client.py peer other.test $OP -
		echo '== origin-bundle'; $PY intercept_client.py peer origin.test $OP -
		echo '== origin-test-ca'; $PY intercept_client.py peer origin.test $OP origin-ca.pem"
	section other-test-ca
	assert_eq "$ORIGIN_CA" "$(sec_of ISSUER)" "other.test: the origin's own certificate"
	# [network] ca is the origin's CA: the run's bundle holds it, for tunnels too
	section other-bundle
	assert_eq "$ORIGIN_CA" "$(sec_of ISSUER)" \
		"other.test: the sandbox's bundle (with [network] ca) verifies the tunnelled origin"
	section origin-bundle
	assert_eq "$RUN_CA" "$(sec_of ISSUER)" "origin.test: a leaf of the run's CA"
	section origin-test-ca
	assert_contains "$(sec_of ERROR)" "CERTIFICATE_VERIFY_FAILED" \
		"origin.test: the test CA does not verify the certificate shown"
	# curl sees the same; and other.test's /admin/x is not decided by any rule
	box curl-other curl -sS --max-time 15 --cacert origin-ca.pem -v "https://other.test:$OP/admin/x"
	[ "$RC" = 0 ] || fail "curl to a host without rules failed" "$(report)"
	assert_contains "$OUT" "origin method=GET path=/admin/x " "other.test's request reached the origin"
	assert_contains "$ERR" "issuer: O=agentbox-test; CN=agentbox-test origin CA" \
		"curl -v names the origin's issuer"
	ev host=other.test "path~/admin"
	assert_eq "count=0" "$EV" "no request event for a tunnel that is not intercepted"
	assert_contains "$(grep ' tls ' "$OLOG")" "sni=other.test" "the client's own handshake reached the origin"
}

# A rule for any host (`* */admin/*`, docs/http-rules.md) covers other.test too: intercepted,
# its /admin/x refused by that rule, its other paths served (no allow rule names it).
t_star_rule() {
	origin
	run_subject
	profile "deny = * */admin/*"
	curlw "https://other.test:$OP/admin/x" "https://other.test:$OP/repos/y"
	box star "${CURLW[@]}"
	assert_contains "$OUT" "CODE:403 NEW:1 CONN: DENIED:* */admin/*" "other.test's /admin/x"
	assert_contains "$OUT" "CODE:200 " "other.test's other path"
	box star-peer "$PY" intercept_client.py peer other.test "$OP" -
	assert_eq "$RUN_CA" "$(line_of ISSUER)" "other.test is intercepted under a '*' rule"
	assert_not_reached "[A-Z]+ /admin/" "the denied path"
}

# The origin's certificate must verify (system store + [network] ca, host name checked):
# bad.test's comes from a CA the profile does not trust, misnamed.test is served a certificate
# for other names. Both fail, audited, nothing reaches the origin. Control: trusting the rogue
# CA makes bad.test work.
t_upstream_untrusted() {
	origin
	local main_log=$OLOG bp bad_log
	start_origin bad bad
	bp=$PORT bad_log=$OLOG
	curlw "https://bad.test:$bp/echo/untrusted"
	box bad "${CURLW[@]}"
	case "$OUT" in CODE:200*) fail "a request to an untrusted origin was answered" "$(report)" ;; esac
	has_event "the upstream verification failure" host=bad.test "reason~not trusted"
	OLOG=$bad_log assert_not_reached "[A-Z]+ /echo/untrusted" "the request to the untrusted origin"
	curlw "https://misnamed.test:$OP/echo/misnamed"
	box misnamed "${CURLW[@]}"
	case "$OUT" in CODE:200*) fail "a request to a misnamed origin was answered" "$(report)" ;; esac
	has_event "the host name mismatch" host=misnamed.test "reason~not trusted"
	OLOG=$main_log assert_not_reached "[A-Z]+ /echo/misnamed" "the request to the misnamed origin"
	UPSTREAM_CA=$META/pki/rogue.pem profile
	curlw "https://bad.test:$bp/echo/trusted"
	box bad-trusted "${CURLW[@]}"
	assert_contains "$OUT" "CODE:200 " "control: the same origin once its CA is trusted"
}

# [network] ca is checked at start-up for what costs nothing (PEM that decodes, blocks of a
# certificate's outer shape); the full parse is the upstream store's, at the first intercepted
# connection. A block of the right shape that is no certificate: the run starts, the
# connection is refused with the reason, nothing reaches the origin. Control: the real CA.
t_anchor_unloadable() {
	origin
	"$PY" -c 'import base64, sys
der = bytes([0x30, 11, 0x30, 3, 2, 1, 1, 0x30, 0, 3, 2, 0, 0])
sys.stdout.write("-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----\n" % base64.b64encode(der).decode())' \
		>"$META/shaped.pem" || fail "cannot write the shaped block"
	UPSTREAM_CA=$META/shaped.pem profile
	curlw "https://origin.test:$OP/echo/unloadable"
	box unloadable "${CURLW[@]}"
	case "$OUT" in CODE:200*) fail "a request was answered with an anchor that does not load" "$(report)" ;; esac
	has_event "the anchor's failure" host=origin.test "reason~cannot be loaded"
	assert_not_reached "[A-Z]+ /echo/unloadable" "the request with an unloadable anchor"
	UPSTREAM_CA= profile
	curlw "https://origin.test:$OP/echo/loadable"
	box loadable "${CURLW[@]}"
	assert_contains "$OUT" "CODE:200 " "control: the same request with the test CA"
}

run_case trust_inside t_trust_inside
run_case not_intercepted t_not_intercepted
run_case hashed_dir t_hashed_dir
run_case jvm t_jvm
run_case silent_refusal t_silent_refusal
run_case refusal_lines t_refusal_lines
run_case user_ca_kept t_user_ca_kept
run_case star_rule t_star_rule
run_case upstream_untrusted t_upstream_untrusted
run_case anchor_unloadable t_anchor_unloadable
finish

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# What the sandbox trusts when the proxy intercepts HTTPS (trust.c): with [http] rules
# the command sees the run's CA certificate and the bundle (the host's system bundle, then the
# CA) in a read-only /run/agentbox, the bundle over /etc/ssl/certs/ca-certificates.crt where the
# view shows that file, and the variables clients read pointing at them; nothing of it without
# rules. [network] ca errors stop the run (125); the fallback (no namespaces) refuses. And the
# CA's private key is nowhere the command can look (its view, /proc, the memory it can read),
# nor on the host's disk, nor in pid 1 (made after the clone; root only: reading pid 1's memory
# from the host needs CAP_SYS_PTRACE).
. "$(dirname "$0")/lib.sh"

# The system bundle the supervisor copies (trust.c's list, first one present).
system_bundle() {
	local f
	for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt \
		/etc/ssl/ca-bundle.pem /etc/ssl/cert.pem; do
		[ -f "$f" ] && { printf '%s' "$f"; return 0; }
	done
	return 1
}

# profile FILE NETWORK-LINES HTTP-LINES [EXTRA-LINES]: shell.ini in proxy mode.
profile() {
	{
		printf '[sandbox]\ninclude = %s/shell.ini\n' "$AGENTBOX_PROFILES"
		printf '[network]\nmode = proxy\n%s\n' "$2"
		[ -z "$3" ] || printf '[http]\n%s\n' "$3"
		[ -z "${4:-}" ] || printf '%s\n' "$4"
	} >"$1"
}

RULES='allow = GET api.example.test/repos/**
deny = POST *.corp.test/admin/*
allow = GET 192.0.2.1/x'

# permitted NAMES of CERT (PEM file on the host), space-separated, in certificate order
permitted_names() {
	openssl x509 -in "$1" -noout -ext nameConstraints 2>/dev/null |
		awk '/Permitted:/ {p = 1; next} /Excluded:/ {p = 0} p {print $1}' | tr '\n' ' '
}

# The files, their content and the variables, seen from inside; the CA checked on the host.
t_trust_files() {
	local bundle
	bundle=$(system_bundle) || not_applicable "no system CA bundle on this host"
	profile "$META/p.ini" "allow = pypi.org" "$RULES"
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" -- sh -c '
		cp /run/agentbox/ca.crt ca.crt && cp /run/agentbox/ca-bundle.crt bundle.crt &&
		cp /etc/ssl/certs/ca-certificates.crt etc.crt && env >env.txt &&
		stat -c "%a %F" /run/agentbox /run/agentbox/ca.crt /run/agentbox/ca-bundle.crt &&
		python3 -c "import ssl; c = ssl.create_default_context()
print(\"python trusts:\", any(\"agentbox\" in str(x[\"subject\"]) for x in c.get_ca_certs()))"'
	assert_contains "$OUT" "755 directory"$'\n'"444 regular file"$'\n'"444 regular file" \
		"the trust files' modes"
	assert_contains "$OUT" "python trusts: True" "Python's default context (SSL_CERT_FILE)"
	# ca.crt: one certificate, a CA, that verifies as its own anchor, for the rules' names only
	assert_eq 1 "$(grep -c 'BEGIN CERTIFICATE' ca.crt)" "certificates in ca.crt"
	assert_not_contains "$(cat ca.crt)" "PRIVATE" "ca.crt"
	run_cmd openssl verify -CAfile ca.crt ca.crt
	assert_eq "ca.crt: OK" "$OUT" "the CA verifies as a trust anchor"
	run_cmd openssl x509 -in ca.crt -noout -ext basicConstraints,keyUsage
	assert_contains "$OUT" "CA:TRUE" "basic constraints"
	assert_contains "$OUT" "Certificate Sign" "key usage"
	assert_eq "DNS:api.example.test DNS:.corp.test " "$(permitted_names ca.crt)" \
		"name constraints: the [http] rules' hosts (the address skipped)"
	run_cmd openssl x509 -in ca.crt -noout -ext nameConstraints
	assert_contains "$OUT" "IP:0.0.0.0/0.0.0.0" "every IPv4 address excluded"
	# the bundle: the host's, then the CA; and the same over the system bundle's path
	{ cat "$bundle"; [ -z "$(tail -c 1 "$bundle")" ] || echo; cat ca.crt; } >"$META/want.crt"
	cmp -s "$META/want.crt" bundle.crt || fail "ca-bundle.crt is not $bundle followed by ca.crt"
	cmp -s bundle.crt etc.crt || fail "/etc/ssl/certs/ca-certificates.crt inside is not the bundle"
	# the variables
	for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE PIP_CERT GIT_SSL_CAINFO \
		AWS_CA_BUNDLE DENO_CERT CARGO_HTTP_CAINFO NIX_SSL_CERT_FILE HEX_CACERTFILE; do
		grep -qx "$v=/run/agentbox/ca-bundle.crt" env.txt || fail "$v is not the bundle"
	done
	grep -qx "NODE_EXTRA_CA_CERTS=/run/agentbox/ca.crt" env.txt ||
		fail "NODE_EXTRA_CA_CERTS is not the CA"
	grep -qx "SSL_CERT_DIR=/run/agentbox/certs:/etc/ssl/certs" env.txt ||
		fail "SSL_CERT_DIR does not list the run's hashed directory, then the system's"
	# a profile's own value is replaced: the bundle holds the system's anchors as well (and
	# the certificates of the file it named, when there is one: test_intercept user_ca_kept)
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" --setenv SSL_CERT_FILE=/etc/mine.pem -- \
		printenv SSL_CERT_FILE
	assert_eq /run/agentbox/ca-bundle.crt "$OUT" "SSL_CERT_FILE set by the caller, naming no file"
}

# A `*` rule covers every host [network] allow names: those are the CA's names.
t_star_rule_names() {
	profile "$META/p.ini" "allow = pypi.org:443, **.pythonhosted.org, 10.0.0.0/8" \
		"deny = * */admin/*"
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" -- cat /run/agentbox/ca.crt
	printf '%s\n' "$OUT" >"$META/ca.crt"
	assert_eq "DNS:pypi.org DNS:pythonhosted.org " "$(permitted_names "$META/ca.crt")" \
		"name constraints of a \`*\` rule"
}

# A CA for 300 names (a name constraint each): a certificate of more than 8 KiB, still made,
# shown whole in the sandbox, and its names all there.
t_many_names() {
	local allow=allow i n
	for i in $(seq 300); do allow+=" = host$i.example.test"$'\n'allow; done
	profile "$META/p.ini" "${allow%$'\n'allow}" "deny = * */admin/*"
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" -- cat /run/agentbox/ca.crt
	printf '%s\n' "$OUT" >"$META/ca.crt"
	n=$(wc -c <"$META/ca.crt")
	[ "$n" -gt 8192 ] || fail "control: a CA of 300 names should be over 8 KiB, is $n bytes"
	assert_eq 300 "$(permitted_names "$META/ca.crt" | wc -w)" "the CA's 300 names"
}

# Without /etc in the view, the trust files are still in /run/agentbox; nothing is bound in /etc.
t_view_without_etc() {
	printf '[sandbox]\ninclude = %s/minimal.ini\n[network]\nmode = proxy\n[http]\n%s\n' \
		"$AGENTBOX_PROFILES" "allow = GET api.example.test/x" >"$META/p.ini"
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" -- /bin/sh -c \
		'ls /run/agentbox; ls /etc/ssl/certs/ca-certificates.crt 2>&1; echo $SSL_CERT_FILE'
	assert_contains "$OUT" "ca-bundle.crt"$'\n'"ca.crt" "/run/agentbox"
	assert_contains "$OUT" "No such file or directory" "no /etc/ssl in a view without /etc"
	assert_contains "$OUT" "/run/agentbox/ca-bundle.crt" "SSL_CERT_FILE"
}

# The command cannot change the files (write, truncate, rename, remove, chmod, cover, unmount);
# control: the same operations on a file of its own /tmp work.
t_files_locked() {
	profile "$META/p.ini" "" "$RULES"
	local try='
		for f in "$@"; do
			d=$(dirname "$f")
			(echo evil >"$f") 2>/dev/null && echo "$f: write WORKED"
			(: >"$f") 2>/dev/null && echo "$f: truncate WORKED"
			chmod 666 "$f" 2>/dev/null && echo "$f: chmod WORKED"
			mv "$f" "$d/moved" 2>/dev/null && echo "$f: rename WORKED"
			mv "$d/moved" "$f" 2>/dev/null
			rm "$f" 2>/dev/null && echo "$f: remove WORKED"
			ln -s /tmp/x "$d/new" 2>/dev/null && echo "$f: create WORKED"
		done
		umount /run/agentbox 2>/dev/null && echo "umount WORKED"
		umount /etc/ssl/certs/ca-certificates.crt 2>/dev/null && echo "umount bundle WORKED"
		mount -t tmpfs x /run/agentbox 2>/dev/null && echo "mount over WORKED"
		cmp -s /run/agentbox/ca-bundle.crt /etc/ssl/certs/ca-certificates.crt && echo intact'
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" -- sh -c "$try" sh /run/agentbox/ca.crt \
		/run/agentbox/ca-bundle.crt /etc/ssl/certs/ca-certificates.crt
	assert_not_contains "$OUT" WORKED "changes to the trust files"
	assert_contains "$OUT" intact "the bundle after the attempts"
	# control: a file the command owns takes every change (and /tmp is not the trust files)
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" -- sh -c 'mkdir /tmp/d && echo x >/tmp/d/f &&
		'"${try%%umount /run*}" sh /tmp/d/f
	for op in write truncate chmod rename remove create; do
		assert_contains "$OUT" "/tmp/d/f: $op WORKED" "control: $op on a file of /tmp"
	done
}

# With nesting the command makes namespaces of its own: the trust mounts stay locked there
# (they came from a more privileged namespace); control: a mount it made itself unmounts.
t_files_locked_nested() {
	profile "$META/p.ini" "" "$RULES" "[sandbox]
nesting = true
$([ "$(id -u)" = 0 ] && printf 'uid = 1000\ngid = 1000')"
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" -- unshare -Urm sh -c '
		umount /run/agentbox 2>/dev/null && echo "umount WORKED"
		umount /etc/ssl/certs/ca-certificates.crt 2>/dev/null && echo "umount bundle WORKED"
		mkdir /tmp/m && mount -t tmpfs x /tmp/m && umount /tmp/m && echo "control unmounted"
		cat /run/agentbox/ca.crt | head -n 1'
	if [[ $OUT != *"control unmounted"* ]]; then
		[[ $ERR == *"unshare failed"* ]] && not_applicable "no user namespace inside: $ERR"
		fail "control: the nested namespace could not mount and unmount a tmpfs" "$(report)"
	fi
	assert_not_contains "$OUT" WORKED "unmounting the trust files in a nested namespace"
	assert_contains "$OUT" "BEGIN CERTIFICATE" "the CA in the nested namespace"
}

# No [http] rules, or rules that name addresses only: no CA, no files, no variables.
t_nothing_without_rules() {
	local bundle
	profile "$META/none.ini" "allow = pypi.org" ""
	profile "$META/addr.ini" "allow = 127.0.0.1:8080" "allow = GET 127.0.0.1/x
deny = * */admin/*"
	for p in none addr; do
		expect_exit 0 "$AGENTBOX" -p "$META/$p.ini" --audit "$META/$p.jsonl" -- sh -c \
			'ls -d /run/agentbox 2>&1; env | grep -cE "^(SSL_CERT_FILE|NODE_EXTRA_CA_CERTS)="; true'
		assert_contains "$OUT" "No such file or directory"$'\n'"0" "$p: no trust files, no variables"
		assert_not_contains "$(cat "$META/$p.jsonl")" '"op":"trust"' "$p: no trust mount"
	done
	if bundle=$(system_bundle) && [ "$bundle" = /etc/ssl/certs/ca-certificates.crt ]; then
		expect_exit 0 "$AGENTBOX" -p "$META/none.ini" -- cat /etc/ssl/certs/ca-certificates.crt
		assert_eq "$(cat "$bundle")" "$OUT" "the system bundle itself without rules"
	fi
}

# [network] ca: checked before the run, errors name the profile line, the file and a fix.
t_ca_errors() {
	local good
	good=$(system_bundle) || not_applicable "no system CA bundle on this host"
	mkdir "$META/certs"
	cp "$good" "$META/certs/good.pem"
	echo "not a certificate" >"$META/certs/text.pem"
	printf -- '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' >"$META/certs/bad.pem"
	openssl x509 -in "$META/certs/good.pem" -outform der -out "$META/certs/der.crt" 2>/dev/null
	for c in missing.pem text.pem bad.pem der.crt "$META/certs"; do
		profile "$META/certs/p.ini" "ca = $c" "$RULES"
		expect_exit 125 "$AGENTBOX" -p "$META/certs/p.ini" -- true
		case $c in /*) ;; *) c=$META/certs/$c ;; esac
		assert_contains "$ERR" "agentbox: $META/certs/p.ini:5: [network] ca $c: " \
			"the error names the line and the file"
		assert_contains "$ERR" "; fix: " "the error's fix"
	done
	assert_contains "$ERR" "not a regular file" "a directory"
	# relative to the profile's directory, not to the current one
	profile "$META/certs/p.ini" "ca = good.pem" "$RULES"
	expect_exit 0 "$AGENTBOX" -p "$META/certs/p.ini" -- true
	expect_exit 0 "$AGENTBOX" -p "$META/certs/p.ini" --explain
	assert_contains "$OUT" "\"ca\":\"$META/certs/good.pem\"" "--explain shows the path"
	# without interception the file is not read (a base profile may name it for all runs)
	profile "$META/certs/p.ini" "ca = missing.pem" ""
	expect_exit 0 "$AGENTBOX" -p "$META/certs/p.ini" -- true
	printf '[sandbox]\ninclude = %s/shell.ini\n[network]\nca = good.pem\n' "$AGENTBOX_PROFILES" \
		>"$META/certs/none.ini"
	expect_exit 125 "$AGENTBOX" -p "$META/certs/none.ini" -- true
	assert_contains "$ERR" "[network] ca is set but mode is none" "ca outside proxy mode"
}

# /run/agentbox must be made: a view that shows the host's /run, or hides /run, cannot hold it.
t_run_dir() {
	local e
	[ -d /run/agentbox ] && not_applicable "the host has /run/agentbox"
	for e in "ro = /run" "hide = /run" "tmpfs = /run/agentbox"; do
		profile "$META/p.ini" "" "$RULES" "[filesystem]
$e"
		expect_exit 125 "$AGENTBOX" -p "$META/p.ini" -- true
		assert_contains "$ERR" "/run" "$e: the error"
		assert_contains "$ERR" "; fix: " "$e: the fix"
	done
	profile "$META/p.ini" "" "$RULES" "[filesystem]
tmpfs = /run"
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" -- sh -c 'touch /run/mine && ls /run/agentbox'
	assert_contains "$OUT" "ca.crt" "/run/agentbox in the profile's own /run"
}

# Without namespaces there is no view to show the files in: the fallback refuses. Control: a
# fallback run (mode = none: the fallback refuses proxy mode, see test_confine) runs there.
t_fallback_refuses() {
	mkdir data
	printf '[sandbox]\ninclude = %s/minimal.ini\n[filesystem]\nro = %s\nro = %s\nro = %s\n' \
		"$AGENTBOX_PROFILES" "$AGENTBOX_BIN" "$AGENTBOX_PROFILES" "$CASE/data" >outer.ini
	printf '[sandbox]\ninclude = %s/minimal.ini\nfallback = landlock\n' "$AGENTBOX_PROFILES" \
		>data/plain.ini
	{ cat data/plain.ini; printf '[network]\nmode = proxy\nallow = api.example.test\n'
	  printf '[http]\nallow = GET api.example.test/x\n'; } >data/rules.ini
	expect_exit 0 "$AGENTBOX" -p ./outer.ini -- "$AGENTBOX_BIN" -p "$CASE/data/plain.ini" -- true
	assert_contains "$ERR" "user namespaces are unavailable" "control: the inner run is a fallback"
	expect_exit 125 "$AGENTBOX" -p ./outer.ini -- "$AGENTBOX_BIN" -p "$CASE/data/rules.ini" -- \
		echo RAN
	assert_contains "$ERR" "[http] rules need a mount namespace" "the fallback's refusal"
	assert_not_contains "$OUT" RAN "the command ran"
}

# scan PROFILE: helpers/trust_scan.py inside, with a sibling process to look at; sets SCAN.
scan() {
	expect_exit 0 "$AGENTBOX" -p "$1" -- sh -c 'sleep 60 & "$1" "$2"; s=$?; kill $!; exit $s' \
		sh "$PY" "$HELPERS/trust_scan.py"
	SCAN=$OUT
}

# The key is not in what the command can read: the view, every process's environ and cmdline,
# the memory of the processes it may open (pid 1's is closed to it). Compared with the same
# view without interception, so that keys the host ships (test data) are not counted.
t_key_absent_inside() {
	local extra="[filesystem]
ro = $HELPERS"
	profile "$META/with.ini" "allow = pypi.org" "$RULES" "$extra"
	profile "$META/without.ini" "allow = pypi.org" "" "$extra"
	scan "$META/without.ini"
	grep '^hit ' <<<"$SCAN" >"$META/hits.without"
	scan "$META/with.ini"
	grep '^hit ' <<<"$SCAN" >"$META/hits.with"
	[[ $SCAN == *"scanned "* ]] || fail "the scan did not finish" "$(report)"
	[ "$(awk '/^scanned/ {print ($2 > 10)}' <<<"$SCAN")" = 1 ] || fail "the scan read no files" "$SCAN"
	# the scan reads what it can: the CA inside, and a sibling's memory
	grep -q '^memory ' <<<"$SCAN" || fail "the scan read no other process's memory" "$SCAN"
	assert_contains "$SCAN" "closed 1 mem " "pid 1's memory, closed to the command"
	assert_contains "$SCAN" "closed 1 environ " "pid 1's environ, closed to the command"
	local new
	new=$(comm -13 "$META/hits.without" "$META/hits.with")
	[ -z "$new" ] || fail "key material only with interception:" "$new"
}

# written TRACE: the host paths the supervisor opened for writing (strace lines), normalised:
# run ids and the audit file's name replaced, results and fd numbers dropped.
written() {
	grep -E '^(open|openat|openat2|creat)\(.*(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC)' "$1" |
		sed -E 's/^[a-z0-9]+\(([A-Z_]+|[0-9]+), /\1 /; s/^[a-z0-9]+\(/ /; s/, O_.*//;
			s/[0-9a-f]{32}/RUNID/g; s/^[0-9]+ /FD /; s/run-[a-z]+\.jsonl/AUDIT/' | sort -u
}

# The lines of a `strace -f` trace made by the traced process and its threads (the CA is made
# by one), not by pid 1 or the command, without their pid prefix.
supervisor_lines() {
	awk 'FNR == NR {
		if (FNR == 1) keep[$1] = 1
		if (($1 in keep) && /CLONE_THREAD/) {
			if (/unfinished/) pending[$1] = 1; else keep[$NF] = 1
		} else if (($1 in pending) && /resumed>/) {
			keep[$NF] = 1; delete pending[$1]
		}
		next
	     }
	     $1 in keep { sub(/^[0-9]+ +/, ""); print }' "$1" "$1"
}

# The supervisor (traced with its threads, without its children) opens for writing exactly what
# it opens without interception, and makes the CA's certificate and the JVM's store in memfds.
# Root only: once it holds the key it is not dumpable, and strace, as its caller, can no longer
# read the paths it passes.
t_supervisor_writes() {
	command -v strace >/dev/null || not_applicable "strace is not installed"
	under_memcheck && not_applicable "strace and valgrind do not trace together"
	[ "$(id -u)" = 0 ] || not_applicable "strace reads a process that is not dumpable as root only"
	profile "$META/with.ini" "allow = pypi.org" "$RULES"
	profile "$META/without.ini" "allow = pypi.org" ""
	# LeakSanitizer cannot run under ptrace: an ASan build would fail its exit
	local trace=(strace -f -qq -e signal=none -e trace=open,openat,openat2,creat,memfd_create,clone,clone3) new
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	for p in without with; do
		expect_exit 0 "${trace[@]}" -o "$META/trace.$p.all" "$AGENTBOX_BIN" -p "$META/$p.ini" \
			--audit "$META/run-$p.jsonl" -- sh -c 'cat /run/agentbox/ca.crt >/dev/null 2>&1; echo done'
		assert_eq done "$OUT" "$p: the command"
		supervisor_lines "$META/trace.$p.all" >"$META/trace.$p"
	done
	assert_eq 1 "$(grep -c '^memfd_create("agentbox-ca.crt"' "$META/trace.with")" \
		"the CA's certificate made in a memfd"
	assert_eq 1 "$(grep -c '^memfd_create("agentbox-java-cacerts.p12"' "$META/trace.with")" \
		"the JVM's trust store made in a memfd"
	assert_eq 2 "$(grep -c '^memfd_create(' "$META/trace.with")" "no other memfd"
	assert_eq 0 "$(grep -c '^memfd_create(' "$META/trace.without")" "no memfd without interception"
	written "$META/trace.without" >"$META/w.without"
	written "$META/trace.with" >"$META/w.with"
	grep -q AUDIT "$META/w.with" || fail "the trace shows no write at all (the audit trail)" \
		"$(cat "$META/w.with")"
	new=$(comm -13 "$META/w.without" "$META/w.with")
	[ -z "$new" ] || fail "files opened for writing only with interception:" "$new"
}

# No file the run could have written holds key material: TMPDIR and the state directory (each
# the run's own here), the audit trail, the working directory.
t_no_key_on_disk() {
	profile "$META/p.ini" "allow = pypi.org" "$RULES"
	mkdir -p "$META/tmp" "$META/state"
	expect_exit 0 env TMPDIR="$META/tmp" XDG_STATE_HOME="$META/state" "$AGENTBOX" \
		-p "$META/p.ini" --audit "$META/run.jsonl" -- sh -c 'cp /run/agentbox/ca.crt . &&
		echo x >/tmp/f && echo done'
	assert_eq done "$OUT" "the command"
	# control: the search finds what it looks for (the CA's PEM, copied to the working dir)
	assert_contains "$(grep -rla 'BEGIN CERTIFICATE' "$CASE")" "$CASE/ca.crt" "control: grep"
	local hits
	hits=$(grep -rlaE 'PRIVATE KEY-----' "$META/tmp" "$META/state" "$META/run.jsonl" "$CASE")
	[ -z "$hits" ] || fail "a PEM private key on disk:" "$hits"
	hits=$(LC_ALL=C grep -rlaP '\x30\x77\x02\x01\x01\x04\x20' "$META/tmp" "$META/state" \
		"$META/run.jsonl" "$CASE")
	[ -z "$hits" ] || fail "a DER EC private key on disk:" "$hits"
}

# public_point PEM-FILE: the CA's public point (the last 65 bytes of its SubjectPublicKeyInfo).
public_point() {
	openssl x509 -in "$1" -noout -pubkey | openssl pkey -pubin -outform der | tail -c 65 |
		od -An -tx1 | tr -d ' \n'
}

hex() {
	od -An -tx1 | tr -d ' \n'
}

# held_run: a run whose command waits for $CASE/done; sets SUP (the supervisor), PID1 and the
# needles POINT (the CA's public point), DER (its certificate) and MARK (in the command line).
held_run() {
	local mark
	profile "$META/p.ini" "" "$RULES"
	mark=marker-$(unique)
	bg "$AGENTBOX_BIN" -p "$META/p.ini" -- sh -c 'cp /run/agentbox/ca.crt ca.crt &&
		echo x >ready && while [ ! -e done ]; do sleep 0.05; done' "$mark"
	SUP=$BG_PID
	wait_for_file ready 10 || fail "the sandboxed command did not start"
	PID1=$(pgrep -P "$SUP" | head -n 1)
	[ -n "$PID1" ] || fail "no pid 1 under the supervisor $SUP"
	POINT=point=$(public_point ca.crt)
	[ "${#POINT}" = 136 ] || fail "cannot read the CA's public key: $POINT"
	DER=der=$(openssl x509 -in ca.crt -outform der | hex)
	MARK=mark=$(printf '%s' "$mark" | hex)
}

# pid 1 is a copy of the supervisor made before the CA: its memory holds no trace of the CA
# (its public point or certificate), which the supervisor's does (control), while it does hold
# the command line (control: its memory was read). Root only: pid 1 is not dumpable, and only
# CAP_SYS_PTRACE reads such a process's memory.
t_pid1_never_held_ca() {
	under_memcheck && not_applicable "valgrind's process is not agentbox's"
	[ "$(id -u)" = 0 ] ||
		not_applicable "reading pid 1's memory from the host needs CAP_SYS_PTRACE (root)"
	held_run
	run_cmd "$PY" "$HELPERS/mem_search.py" "$SUP" "$POINT"
	assert_contains "$OUT" "point found" "control: the CA's public point in the supervisor"
	run_cmd "$PY" "$HELPERS/mem_search.py" "$PID1" "$POINT" "$DER" "$MARK"
	touch done
	assert_contains "$OUT" "mark found" "control: pid 1's memory holds its command line"
	assert_contains "$OUT" "point absent" "the CA's public point in pid 1's memory"
	assert_contains "$OUT" "der absent" "the CA certificate in pid 1's memory"
}

# The supervisor, holding the key, is not dumpable: the caller's other processes cannot read
# its memory (control: a plain process of theirs can be read). Not for root, who reads any.
t_supervisor_memory_closed() {
	under_memcheck && not_applicable "valgrind's process is not agentbox's"
	[ "$(id -u)" != 0 ] || not_applicable "root (CAP_SYS_PTRACE) reads every process's memory"
	held_run
	sleep 60 &
	local plain=$!
	run_cmd "$PY" "$HELPERS/mem_search.py" "$plain" "$MARK"
	kill "$plain"
	assert_contains "$OUT" "mark absent" "control: a plain process's memory is readable"
	run_cmd "$PY" "$HELPERS/mem_search.py" "$SUP" "$POINT"
	touch done
	assert_eq 2 "$RC" "reading the supervisor's memory as its caller"
	assert_contains "$OUT" "unreadable 13" "the supervisor's memory (EACCES)"
}

run_case trust_files t_trust_files
run_case star_rule_names t_star_rule_names
run_case many_names t_many_names
run_case view_without_etc t_view_without_etc
run_case files_locked t_files_locked
run_case files_locked_nested t_files_locked_nested
run_case nothing_without_rules t_nothing_without_rules
run_case ca_errors t_ca_errors
run_case run_dir t_run_dir
run_case fallback_refuses t_fallback_refuses
run_case key_absent_inside t_key_absent_inside
run_case supervisor_writes t_supervisor_writes
run_case no_key_on_disk t_no_key_on_disk
run_case pid1_never_held_ca t_pid1_never_held_ca
run_case supervisor_memory_closed t_supervisor_memory_closed
finish

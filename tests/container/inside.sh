#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# inside.sh MODE: runs inside the container podman.sh starts; agentbox is /opt/agentbox/bin/agentbox,
# the profiles and the integration tests are under /opt/agentbox/src. Prints `ok WHAT` or
# `FAIL WHAT: why` per check and, when every check passed, the last line `inside: ok`.
#
#   smoke         agentbox runs, shows only the profile's paths, refuses a direct connection,
#                 lets an allowed one through its proxy to a server in the container, and the
#                 audit trail of those runs verifies
#   suite         a subset of the integration suite (tests/integration/run.sh, which runs each
#                 script as the container's root and again as the unprivileged agentbox-test)
#   refused TEXT  agentbox -p minimal -- true stops with 125 and one line on stderr naming TEXT
#   fallback      a profile with fallback = landlock runs the command without namespaces, says
#                 so, and Landlock still confines it
set -u
AB=/opt/agentbox/bin/agentbox
SRC=/opt/agentbox/src
export AGENTBOX_PROFILE_PATH=$SRC/profiles
W=$(mktemp -d /tmp/inside.XXXXXX) || exit 1
SERVER=
cleanup() {
	[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
failed=0

ok() { echo "ok $1"; }
bad() {
	echo "FAIL $1: $2"
	failed=1
}

# run CMD...: RC, OUT and ERR of CMD (stdin /dev/null, killed after 60 s).
run() {
	timeout -k 5 60 "$@" >"$W/out" 2>"$W/err" </dev/null
	RC=$?
	OUT=$(cat "$W/out")
	ERR=$(cat "$W/err")
}

shown() { printf 'exit %s; stdout: %s; stderr: %s' "$RC" "${OUT:0:400}" "${ERR:0:400}"; }

smoke() {
	local audit=$W/audit.jsonl port body entry extra

	run "$AB" -p minimal --audit "$audit" -- true
	if [ "$RC" = 0 ]; then ok "minimal true"; else bad "minimal true" "$(shown)"; fi

	# the view: the container's / has etc, home, opt, root; the sandbox's only what minimal lists
	run "$AB" -p minimal --audit "$audit" -- ls -A /
	extra=
	for entry in $OUT; do
		case $entry in bin | dev | lib | lib64 | proc | sbin | tmp | usr) ;; *) extra="$extra $entry" ;; esac
	done
	if [ "$RC" != 0 ]; then
		bad "view" "$(shown)"
	elif ! [ -d /opt ] || ! [ -d /home ] || ! [ -d /root ]; then
		bad "view" "positive control: the container itself has no /opt, /home or /root"
	elif [ -n "$extra" ] || ! [[ " $(echo $OUT) " == *" usr "* ]]; then
		bad "view" "the sandbox's / shows${extra:- no /usr}: $(echo $OUT)"
	else
		ok "view: / shows only $(echo $OUT)"
	fi

	# a server in the container, on its 127.0.0.1, which is not the sandbox's loopback
	body="served-$$-$RANDOM"
	mkdir "$W/www" && printf '%s\n' "$body" >"$W/www/file.txt"
	python3 -u -m http.server --bind 127.0.0.1 --directory "$W/www" 0 >"$W/server.log" 2>&1 &
	SERVER=$!
	for _ in $(seq 50); do
		port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$W/server.log" | head -n 1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		bad "server" "python3 -m http.server did not start: $(cat "$W/server.log")"
		return
	fi
	local url=http://127.0.0.1:$port/file.txt curl=(curl -sS --max-time 15)
	run "${curl[@]}" --noproxy '*' "$url"
	if [ "$OUT" != "$body" ]; then bad "server" "positive control: curl in the container: $(shown)"; return; fi

	# shell.ini's rw = ${CWD}: from a project's directory, since a container starts in /,
	# which agentbox refuses to make writable
	mkdir "$W/proj" && cd "$W/proj" || { bad "project directory" "cannot make $W/proj"; return; }
	run "$AB" -p shell --net proxy --allow "127.0.0.1:$port" --audit "$audit" -- \
		"${curl[@]}" --noproxy '' -x http://127.0.0.1:3128 "$url"
	if [ "$RC" = 0 ] && [ "$OUT" = "$body" ]; then
		ok "allowed through the proxy"
	else
		bad "allowed through the proxy" "$(shown)"
	fi
	run "$AB" -p shell --net proxy --audit "$audit" -- \
		"${curl[@]}" -f --noproxy '' -x http://127.0.0.1:3128 "$url"
	if [ "$RC" = 22 ] && [[ $OUT != *"$body"* ]]; then
		ok "refused by the proxy without an allow rule"
	else
		bad "refused by the proxy without an allow rule" "expected curl's 22: $(shown)"
	fi
	run "$AB" -p shell --net proxy --allow "127.0.0.1:$port" --audit "$audit" -- \
		"${curl[@]}" --noproxy '*' "$url"
	if [ "$RC" != 0 ] && [[ $OUT != *"$body"* ]] && [[ $ERR == *"onnect"* ]]; then
		ok "direct connection refused"
	else
		bad "direct connection refused" "expected curl to fail to connect: $(shown)"
	fi

	run "$AB" audit verify "$audit"
	if [ "$RC" = 0 ] && [[ $OUT == *"OK: 5 run(s)"* ]]; then
		ok "audit verify"
	else
		bad "audit verify" "expected OK: 5 run(s): $(shown)"
	fi
}

# The scripts and cases of the integration suite that need nothing but the container. Left out:
# test_confine's limit_fork_bomb, which expects root to be exempt from RLIMIT_NPROC (not so for
# the root of a rootless container, which is an ordinary uid on the host), and test_egress's
# http_allow_and_deny, whose audit reason ("closed") races the sandbox's end; the smoke mode
# covers an allowed and a refused request.
suite() {
	local spec script cases
	for spec in 'test_exit:' \
		'test_view:^(root_absent|home_absent|proc_private|tmp_private|no_host_mountpoints)$' \
		'test_network:' \
		'test_egress:^(proxy_env|raw_socket_bypass|ssrf_guard)$' \
		'test_audit:^(verify_intact|verify_edited_line)$' \
		'test_confine:^(unshare_newuser|mount|caps_zero|landlock_fallback|no_fallback_stops)$'; do
		script=${spec%%:*}
		cases=${spec#*:}
		AGENTBOX_CASES=$cases AGENTBOX_SOURCE=$SRC timeout -k 5 150 \
			"$SRC/tests/integration/run.sh" "$SRC/tests/integration/$script.sh" "$AB" \
			>"$W/$script.log" 2>&1 </dev/null
		RC=$?
		if [ "$RC" = 0 ]; then
			ok "$script: $(grep -c '^ok ' "$W/$script.log") cases${cases:+ ($cases)}"
		else
			bad "$script" "run.sh exited $RC${cases:+ (AGENTBOX_CASES=$cases)}"
			sed 's/^/    /' "$W/$script.log" | head -n 60
		fi
	done
}

refused() {
	local want=$1
	run "$AB" -p minimal -- true
	if [ "$RC" = 125 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && [[ $ERR == *"fix:"*"$want"* ]]; then
		ok "exit 125, one line naming $want: $ERR"
	else
		bad "refused" "expected exit 125 and one stderr line with fix: ... $want: $(shown)"
	fi
}

fallback() {
	local audit=$W/fallback.jsonl
	mkdir -p "$W/listed" "$W/unlisted"
	echo listed-content >"$W/listed/f"
	echo unlisted-content >"$W/unlisted/f"
	printf '[sandbox]\ninclude = %s/minimal.ini\nfallback = landlock\n[filesystem]\nro = %s\n' \
		"$SRC/profiles" "$W/listed" >"$W/fallback.ini"
	run "$AB" -p "$W/fallback.ini" --audit "$audit" -- sh -c 'cat "$1"; cat "$2"; echo "unlisted=$?"' \
		sh "$W/listed/f" "$W/unlisted/f"
	if [ "$RC" != 0 ]; then
		bad "fallback" "$(shown)"
	elif [[ $ERR != *"warning: user namespaces are unavailable"*"fallback = landlock"* ]]; then
		bad "fallback" "no fallback warning on stderr: $(shown)"
	elif [[ $OUT != *listed-content* ]]; then
		bad "fallback" "positive control: the listed file was not read: $(shown)"
	elif [[ $OUT == *unlisted-content* ]] || [[ $OUT != *"unlisted=1"* ]]; then
		bad "fallback" "Landlock let the command read a file the profile does not list: $(shown)"
	elif ! grep -q '"fallback":true' "$audit"; then
		bad "fallback" "the audit trail has no \"fallback\":true: $(head -c 600 "$audit")"
	else
		ok "fallback: ran under Landlock, said so, the unlisted file refused"
	fi
	run "$AB" audit verify "$audit"
	if [ "$RC" = 0 ]; then ok "fallback audit verify"; else bad "fallback audit verify" "$(shown)"; fi
}

case ${1:-} in
smoke) smoke ;;
suite) suite ;;
refused) refused "${2:?refused needs the text the error must name}" ;;
fallback) fallback ;;
*)
	echo "usage: inside.sh smoke|suite|refused TEXT|fallback" >&2
	exit 2
	;;
esac
[ "$failed" = 0 ] && echo "inside: ok"
exit "$failed"

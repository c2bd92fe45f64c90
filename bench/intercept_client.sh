#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# intercept_client.sh: the client end of bench/intercept.sh, run on the host (direct, mitmproxy)
# and inside the sandbox (agentbox). curl does the HTTP and the TLS; bash times it
# ($EPOCHREALTIME), so the sandbox's start-up is not counted. Every response must be a 200.
# CURL_OPTIONS (after --) say how to reach the origin: --cacert, and -x or --connect-to.
#
#   intercept_client.sh rate CONC N URL -- CURL_OPTIONS...
#       CONC curl processes at once, each making N/CONC GETs of URL?i=1..N/CONC over one kept-alive
#       connection (curl's URL globbing reuses the connection). Prints "RPS <requests per second,
#       wall time from the first start to the last exit> SECONDS <s> CLIENT_CPU_S <user + system
#       time of the curl processes> REQUESTS <n>".
#   intercept_client.sh latency N URL -- CURL_OPTIONS...
#       One curl making N GETs over one connection; prints "P50_MS <ms> P90_MS <ms>" of curl's
#       time_total for requests 2..N (the first pays for the connection and the handshakes).
#   intercept_client.sh bulk URL -- CURL_OPTIONS...
#       One download; prints "MBPS <MB/s, curl's average> BYTES <n>".
#   intercept_client.sh mux h1|h2 N URL -- CURL_OPTIONS...
#       One curl making N GETs over one connection: HTTP/1.1 keep-alive one after another, or
#       h2 with up to 100 at once (streams of the one connection); prints "RPS <n/s>".
set -euo pipefail
mode=$1
shift
args=()
while [ "$1" != -- ]; do
	args+=("$1")
	shift
done
shift
curl=(curl -sS --http1.1 -o /dev/null "$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# all_ok FILE COUNT: FILE holds COUNT lines, each starting with 200.
all_ok() {
	local n
	n=$(grep -c '^200' "$1" || true)
	[ "$n" = "$2" ] || {
		echo "intercept_client.sh: $n of $2 responses were 200: $(sort "$1" | uniq -c | head -n 3)" >&2
		exit 1
	}
}

case $mode in
rate)
	conc=${args[0]} n=${args[1]} url=${args[2]}
	per=$((n / conc))
	t0=$EPOCHREALTIME
	pids=()
	for i in $(seq "$conc"); do
		"${curl[@]}" -w '%{http_code}\n' "$url?i=[1-$per]" >"$tmp/$i" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	t1=$EPOCHREALTIME
	cat "$tmp"/[0-9]* >"$tmp/all"
	all_ok "$tmp/all" $((per * conc))
	# `times`: the shell's user and system time, then its children's ("0m1.234s 0m0.567s")
	times >"$tmp/times"
	cpu=$(sed -n 2p "$tmp/times" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] }; print s }')
	awk -v a="$t0" -v b="$t1" -v n=$((per * conc)) -v c="$cpu" \
		'BEGIN { printf "RPS %.0f SECONDS %.3f CLIENT_CPU_S %.3f REQUESTS %d\n", n / (b - a), b - a, c, n }'
	;;
latency)
	n=${args[0]} url=${args[1]}
	"${curl[@]}" -w '%{http_code} %{time_total}\n' "$url?i=[1-$n]" >"$tmp/all"
	all_ok "$tmp/all" "$n"
	tail -n +2 "$tmp/all" | awk '{ print $2 * 1000 }' | sort -n >"$tmp/ms"
	awk '{ v[NR] = $1 } END { printf "P50_MS %.3f P90_MS %.3f\n", v[int((NR + 1) / 2)], v[int(NR * 0.9)] }' "$tmp/ms"
	;;
bulk)
	url=${args[0]}
	"${curl[@]}" -w '%{http_code} %{size_download} %{speed_download}\n' "$url" >"$tmp/all"
	all_ok "$tmp/all" 1
	awk '{ printf "MBPS %.0f BYTES %d\n", $3 / 1e6, $2 }' "$tmp/all"
	;;
mux)
	proto=${args[0]} n=${args[1]} url=${args[2]}
	if [ "$proto" = h2 ]; then
		many=(curl -sS --http2 -Z --parallel-max 100 "$@")
	else
		many=(curl -sS --http1.1 "$@")
	fi
	t0=$EPOCHREALTIME
	"${many[@]}" -o '/dev/null' -w '%{http_code} %{http_version} %{num_connects}
' "$url?i=[1-$n]" >"$tmp/all"
	t1=$EPOCHREALTIME
	all_ok "$tmp/all" "$n"
	[ "$(awk '{ s += $3 } END { print s }' "$tmp/all")" = 1 ] ||
		{ echo "intercept_client.sh: mux $proto used more than one connection" >&2; exit 1; }
	[ "$proto" != h2 ] || grep -q '^200 2 ' "$tmp/all" ||
		{ echo "intercept_client.sh: mux h2 was not answered over h2" >&2; exit 1; }
	awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "RPS %.0f\n", n / (b - a) }'
	;;
*)
	echo "intercept_client.sh: unknown mode $mode" >&2
	exit 2
	;;
esac

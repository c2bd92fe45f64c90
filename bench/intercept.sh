#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# bench/intercept.sh: the cost of HTTPS interception, against mitmproxy and against
# no proxy, in one run, so that every figure shares the machine's conditions. The origin is
# nginx (Debian's nginx-light, one worker) serving HTTPS on 127.0.0.1 as origin.test, with a
# test CA and leaf made by the openssl CLI. Four ways to reach it:
#   direct     curl on the host, --connect-to origin.test:443 -> the origin (no proxy);
#   mitmproxy  mitmdump as a regular proxy on 127.0.0.1, intercepting origin.test (the client
#              trusts only mitmproxy's CA; mitmproxy verifies the origin against the test CA;
#              bench/intercept_pin.py pins origin.test to the origin's address; bodies over 1 MiB
#              streamed, as agentbox does);
#   tunnel     curl inside `agentbox -p tun.ini` (mode = proxy, origin.test pinned with
#              `resolve`, no [http] rules): an untouched CONNECT tunnel, the client trusting the
#              test CA;
#   intercept  the same with `[http] allow = GET origin.test/**` and `[network] ca = TEST-CA`: the
#              client trusts /run/agentbox/ca-bundle.crt only. Until the engine lands this is
#              refused (or the `ca` key is unknown): the script then prints
#              "agentbox interception: n/a (not built)" and measures the rest.
# Measured, each configuration once per round in an order rotated every round:
#   (1) requests per second: CONC curl processes, N small GETs in all, each curl on one kept-alive
#       connection; and the proxy's CPU time per request (mitmdump's, or agentbox's supervisor's,
#       from /proc/PID/stat) and the clients' (target: intercept >= 10x mitmproxy);
#   (2) p50 of a request's time after the first on a kept-alive connection (LAT_N requests), added
#       to direct's (target: intercept <= 1 ms added);
#   (3) bulk: a BULK-byte download (target: intercept >= 0.5x tunnel);
#   (4) start-up: agentbox -p intercept -- /bin/true vs -p tun, STARTUP_ROUNDS rounds of
#       bench/interleave.py (target: <= 1.2x);
#   (6) h2: N GETs over one intercepted connection, h2 (100 streams at once) against HTTP/1.1
#       keep-alive (one after another), in the same rounds;
#   (5) the credential scrub: a SCRUB-byte download of random bytes, intercepted three ways:
#       `intercept` (no credential), `unbound` (a [credential] bound to another host) and `bound`
#       (a [credential] bound to origin.test: every response body is scanned for its real
#       value) (targets: bound >= 0.9x intercept; unbound: no cost).
# Medians over ROUNDS rounds. A measurement, not a test: exits 0 once measured (a missed target
# is reported), 2 when it cannot measure.
# Usage: bench/intercept.sh [path/to/agentbox]   (default build/agentbox; N=4000 CONC=4
#        LAT_N=500 BULK=268435456 SCRUB=67108864 ROUNDS=5 STARTUP_ROUNDS=200)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "bench/intercept.sh: $*" >&2; exit 2; }
ab=$(realpath -e "${1:-$root/build/agentbox}" 2>/dev/null) || die "no agentbox at ${1:-$root/build/agentbox} (build it first)"
n=${N:-4000}
conc=${CONC:-4}
lat_n=${LAT_N:-500}
bulk=${BULK:-268435456}
scrub=${SCRUB:-67108864}
rounds=${ROUNDS:-5}
startup_rounds=${STARTUP_ROUNDS:-200}
py=/usr/bin/python3
for t in nginx mitmdump openssl curl "$py"; do
	command -v "$t" >/dev/null || die "$t is not installed (Debian: nginx-light mitmproxy openssl curl python3)"
done

work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
cp "$root/bench/intercept_client.sh" "$work/"
cd "$work"

free_port() { "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# wait_https WHAT CURL_OPTIONS...: up to 10 s for a 200 from https://origin.test/small.
wait_https() {
	local what=$1
	shift
	for _ in $(seq 100); do
		curl -fsS --http1.1 -o /dev/null --max-time 2 "$@" https://origin.test/small 2>/dev/null && return 0
		sleep 0.1
	done
	die "$what does not answer: $(curl -fsS --http1.1 -o /dev/null --max-time 2 "$@" https://origin.test/small 2>&1)"
}

# The origin's CA and its leaf for origin.test (P-256, as a public site's would be).
{
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key \
		-out origin-ca.pem -subj /CN=bench-origin-ca -days 2 &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout srv.key \
			-out srv.csr -subj /CN=origin.test &&
		printf 'subjectAltName=DNS:origin.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >ext.cnf &&
		openssl x509 -req -in srv.csr -CA origin-ca.pem -CAkey ca.key -CAcreateserial -out srv.pem \
			-days 2 -extfile ext.cnf
} >openssl.log 2>&1 || die "cannot make the test CA: $(cat openssl.log)"
chmod 644 ./*.pem srv.key

# The origin: nginx, one worker (as root its worker runs as nobody: the files are world-readable).
mkdir -p www nginx
head -c 100 /dev/zero | tr '\0' x >www/small
truncate -s "$bulk" www/big # sparse: served from the page cache, never from the disk
head -c "$scrub" /dev/urandom >www/rand # every byte a candidate for the scan as often as any
chmod -R a+rX www
oport=$(free_port)
cat >nginx.conf <<EOF
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $work/nginx/body; proxy_temp_path $work/nginx/proxy;
	fastcgi_temp_path $work/nginx/fastcgi; uwsgi_temp_path $work/nginx/uwsgi; scgi_temp_path $work/nginx/scgi;
	keepalive_requests 1000000;
	keepalive_timeout 60s;
	server {
		listen 127.0.0.1:$oport ssl http2;
		server_name origin.test;
		ssl_certificate $work/srv.pem;
		ssl_certificate_key $work/srv.key;
		root $work/www;
	}
}
EOF
nginx -c "$work/nginx.conf" -p "$work/nginx" -g 'daemon off;' >nginx/out.log 2>&1 &
pids+=($!)
direct=(--cacert origin-ca.pem --noproxy '*' --connect-to "origin.test:443:127.0.0.1:$oport")
wait_https "nginx (the origin)" "${direct[@]}"

# mitmproxy: its CA made in a confdir of this run (and HOME pointed there too).
mport=$(free_port)
mkdir -p mitm
HOME=$work/mitm BENCH_ORIGIN=127.0.0.1:$oport mitmdump -q --listen-host 127.0.0.1 -p "$mport" \
	--set confdir="$work/mitm" --set ssl_verify_upstream_trusted_ca="$work/origin-ca.pem" \
	--set stream_large_bodies=1m -s "$root/bench/intercept_pin.py" >mitm/out.log 2>&1 &
mpid=$!
pids+=("$mpid")
for _ in $(seq 100); do [ -s mitm/mitmproxy-ca-cert.pem ] && break; sleep 0.1; done
mitm=(--cacert mitm/mitmproxy-ca-cert.pem --noproxy '' -x "http://127.0.0.1:$mport")
wait_https "mitmdump ($(cat mitm/out.log))" "${mitm[@]}"

# agentbox's two profiles; they differ only in [http]. `[network] ca` is part of the engine:
# until it lands the key is unknown, and both profiles go without it.
profile() {
	printf '[sandbox]\ninclude = %s/profiles/shell.ini\n' "$root"
	printf '[network]\nmode = proxy\nallow = origin.test\nresolve = origin.test:443=127.0.0.1:%s\n' "$oport"
	[ "$1" = no-ca ] || printf 'ca = %s/origin-ca.pem\n' "$work"
	[ "$2" = tunnel ] || printf '[http]\nallow = GET origin.test/**\n'
}
ca=ca
profile ca intercept >intercept.ini
"$ab" -p "$work/intercept.ini" --check >check.log 2>&1 || ca=no-ca
profile "$ca" intercept >intercept.ini
profile "$ca" tunnel >tun.ini
# credential CONFIG HOST: the [http] profile with a credential bound to HOST
credential() {
	cat intercept.ini
	printf '[credential bench]
source = env:BENCH_REAL_TOKEN
hosts = %s
' "$2"
	printf 'header = Authorization: Bearer {}
env = BENCH_TOKEN
'
}
credential bound origin.test >bound.ini
credential unbound other.test >unbound.ini
export BENCH_REAL_TOKEN=benchRealToken0123456789abcdefABCDEF
"$ab" -p "$work/tun.ini" --check >check.log 2>&1 || die "agentbox rejects the tunnel profile: $(cat check.log)"
"$ab" -p "$work/intercept.ini" --check >check.log 2>&1 || die "agentbox rejects the [http] profile: $(cat check.log)"
inside=(--noproxy '' -x http://127.0.0.1:3128)
"$ab" -p "$work/tun.ini" -- curl -fsS --http1.1 -o /dev/null --max-time 10 --cacert origin-ca.pem \
	"${inside[@]}" https://origin.test/small >probe.log 2>&1 || die "the untouched tunnel fails: $(cat probe.log)"
configs=(direct mitmproxy tunnel intercept)
why=
if [ "$ca" = no-ca ]; then
	why="this build does not know [network] ca"
elif ! "$ab" -p "$work/intercept.ini" -- curl -fsS --http1.1 -o /dev/null --max-time 10 \
	--cacert /run/agentbox/ca-bundle.crt "${inside[@]}" https://origin.test/small >probe.log 2>&1; then
	why="the intercepted request fails: $(tr '\n' ' ' <probe.log | head -c 300)"
fi
[ -z "$why" ] || configs=(direct mitmproxy tunnel)

printf '# command: %s' "$0"
printf ' %q' "$@"
printf ' (N=%s CONC=%s LAT_N=%s BULK=%s SCRUB=%s ROUNDS=%s STARTUP_ROUNDS=%s)\n' "$n" "$conc" "$lat_n" "$bulk" "$scrub" "$rounds" "$startup_rounds"
printf '# machine: %s cpus, %s, kernel %s, uid %s; load: %s\n' "$(nproc)" \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)" "$(uname -r)" "$(id -u)" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
printf '# %s; mitmproxy %s; %s; %s\n' "$("$ab" --version 2>&1 | head -n1)" \
	"$(mitmdump --version 2>/dev/null | sed -n 's/^Mitmproxy: //p')" "$(nginx -v 2>&1)" "$(curl --version | head -n1 | cut -d' ' -f1-5)"
[ -z "$why" ] || echo "agentbox interception: n/a (not built): $why"
echo

# cpu_ms PID: user + system time of PID (all its threads) in ms.
cpu_ms() { awk -v t="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) * 1000 / t }' "/proc/$1/stat"; }

# run CONFIG MODE ARGS...: one intercept_client.sh run; prints its line, with PROXY_CPU_MS.
run() {
	local cfg=$1 c0 out
	shift
	case $cfg in
	direct) ./intercept_client.sh "$@" -- "${direct[@]}" ;;
	mitmproxy)
		c0=$(cpu_ms "$mpid")
		out=$(./intercept_client.sh "$@" -- "${mitm[@]}")
		echo "$out PROXY_CPU_MS $(awk -v a="$c0" -v b="$(cpu_ms "$mpid")" 'BEGIN { print b - a }')"
		;;
	tunnel | intercept | bound | unbound)
		local prof=tun.ini cafile=origin-ca.pem
		[ "$cfg" = tunnel ] || { prof=$cfg.ini cafile=/run/agentbox/ca-bundle.crt; }
		"$py" "$root/bench/egress_peer.py" cpu "$ab" -p "$work/$prof" -- ./intercept_client.sh "$@" -- \
			--cacert "$cafile" "${inside[@]}" | sed 's/SUPERVISOR_CPU_MS/PROXY_CPU_MS/'
		;;
	esac
}

# measure MODE ARGS...: ROUNDS rounds of every configuration, the order rotated each round;
# appends "CONFIG MODE KEY VALUE..." lines to results (MODE read as $label when that is set).
measure() {
	local r k cfg line
	for r in $(seq 0 $((rounds - 1))); do
		for k in $(seq 0 $((${#configs[@]} - 1))); do
			cfg=${configs[$(((r + k) % ${#configs[@]}))]}
			line=$(run "$cfg" "$@") || die "$cfg, $1: failed"
			echo "$cfg ${label:-$1} $line" | tee -a results
		done
	done
}

echo "## (1) requests per second: $conc connections, $n GETs of 100 bytes, $rounds rounds"
measure rate "$conc" "$n" https://origin.test/small
echo "## (2) latency of a request after the first on a kept-alive connection, $lat_n GETs, $rounds rounds"
measure latency "$lat_n" https://origin.test/small
echo "## (3) bulk: one $bulk-byte download, $rounds rounds"
./intercept_client.sh bulk https://origin.test/big -- "${direct[@]}" >/dev/null # warm-up
measure bulk https://origin.test/big
if [ -z "$why" ]; then
	echo "## (5) the credential scrub: one $scrub-byte download of random bytes, $rounds rounds"
	saved=("${configs[@]}")
	configs=(intercept unbound bound)
	label=scrub measure bulk https://origin.test/rand
	configs=("${saved[@]}")
fi
if [ -z "$why" ]; then
	echo "## (6) h2 against HTTP/1.1 on one intercepted connection: $n GETs, $rounds rounds"
	saved=("${configs[@]}")
	configs=(intercept)
	for _ in $(seq "$rounds"); do # the two alternate, round by round
		rounds=1 label=h1mux measure mux h1 "$n" https://origin.test/small
		rounds=1 label=h2mux measure mux h2 "$n" https://origin.test/small
	done
	configs=("${saved[@]}")
fi
echo "## (4) start-up, interleaved ($startup_rounds rounds, warmup 10): median, p10, p90 in ms"
"$py" "$root/bench/interleave.py" "$startup_rounds" \
	"with-http-rules=$ab -p $work/intercept.ini -- /bin/true" \
	"without=$ab -p $work/tun.ini -- /bin/true" | tee startup
[ "$ca" = ca ] || echo "(the [http] profile has no [network] ca: this build does not know the key)"
echo

"$py" - results startup "$n" <<'PY'
import statistics, sys
res, n = {}, int(sys.argv[3])
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(zip(f[2::2], map(float, f[3::2])))
    res.setdefault((f[0], f[1]), []).append(kv)
start = {f[0]: float(f[1]) for f in (l.split() for l in open(sys.argv[2]))}
cfgs = [c for c in ("direct", "mitmproxy", "tunnel", "intercept") if (c, "rate") in res]

def med(cfg, mode, key, scale=1.0):
    v = [r[key] * scale for r in res.get((cfg, mode), []) if key in r]
    return statistics.median(v) if v else None

def cell(v, fmt):
    return "" if v is None else format(v, fmt)

rows = [
    ("requests/s (median)", "rate", "RPS", 1, ",.0f"),
    ("proxy CPU per request, us", "rate", "PROXY_CPU_MS", 1000 / n, ".0f"),
    ("client CPU per request, us", "rate", "CLIENT_CPU_S", 1e6 / n, ".0f"),
    ("p50 per request after the first, ms", "latency", "P50_MS", 1, ".3f"),
    ("p90 per request after the first, ms", "latency", "P90_MS", 1, ".3f"),
    ("bulk MB/s", "bulk", "MBPS", 1, ",.0f"),
]
print("| | " + " | ".join(cfgs) + " |")
print("|:---|" + "---:|" * len(cfgs))
for name, mode, key, scale, fmt in rows:
    print(f"| {name} | " + " | ".join(cell(med(c, mode, key, scale), fmt) for c in cfgs) + " |")
d50 = med("direct", "latency", "P50_MS")
print("| p50 added to direct, ms | " + " | ".join(
    cell(med(c, "latency", "P50_MS") - d50, ".3f") if c != "direct" else "" for c in cfgs) + " |")
print()
print(f"mitmproxy / direct requests/s = {med('mitmproxy', 'rate', 'RPS') / med('direct', 'rate', 'RPS'):.3f}; "
      f"tunnel / direct = {med('tunnel', 'rate', 'RPS') / med('direct', 'rate', 'RPS'):.3f}; "
      f"tunnel / mitmproxy = {med('tunnel', 'rate', 'RPS') / med('mitmproxy', 'rate', 'RPS'):.1f}x")
print(f"bulk: mitmproxy / tunnel = {med('mitmproxy', 'bulk', 'MBPS') / med('tunnel', 'bulk', 'MBPS'):.2f}, "
      f"tunnel / direct = {med('tunnel', 'bulk', 'MBPS') / med('direct', 'bulk', 'MBPS'):.2f}")
s = start["with-http-rules"] / start["without"]
print()
print("targets:")
if "intercept" in cfgs:
    def verdict(ok):
        return "met" if ok else "MISSED"
    t = med("intercept", "rate", "RPS") / med("mitmproxy", "rate", "RPS")
    a = med("intercept", "latency", "P50_MS") - d50
    b = med("intercept", "bulk", "MBPS") / med("tunnel", "bulk", "MBPS")
    print(f"  requests/s, intercept / mitmproxy = {t:.1f}x (>= 10x): {verdict(t >= 10)}")
    print(f"  added p50 per request = {a:.3f} ms (<= 1 ms): {verdict(a <= 1)}")
    print(f"  bulk, intercept / untouched tunnel = {b:.2f} (>= 0.5): {verdict(b >= 0.5)}")
    if ("intercept", "h2mux") in res:
        h1, h2 = med("intercept", "h1mux", "RPS"), med("intercept", "h2mux", "RPS")
        print(f"  one connection, intercepted: HTTP/1.1 {h1:,.0f} requests/s, h2 {h2:,.0f}: "
              f"h2 / HTTP/1.1 = {h2 / h1:.2f}")
    if ("bound", "scrub") in res:
        i = med("intercept", "scrub", "MBPS")
        bd, ub = med("bound", "scrub", "MBPS") / i, med("unbound", "scrub", "MBPS") / i
        print(f"  scrub (random bytes, MB/s): intercept {i:,.0f}, unbound {i * ub:,.0f}, bound {i * bd:,.0f}")
        print(f"  bulk, bound host (scanned) / intercept = {bd:.2f} (>= 0.9): {verdict(bd >= 0.9)}")
        print(f"  bulk, credential bound elsewhere / intercept = {ub:.2f} (no cost: within noise)")
else:
    print("  agentbox interception: n/a (not built): requests/s ratio, added p50 and bulk ratio")
print(f"  start-up with [http] rules / without = {s:.3f} (<= 1.2): {'met' if s <= 1.2 else 'MISSED'}"
      + ("" if "intercept" in cfgs else " (no interception engine yet: the rules are parsed, no CA is made)"))
PY

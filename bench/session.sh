#!/usr/bin/env bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# bench/session.sh [PATH/TO/agentbox]: an exec into a live session against a fresh sandbox's
# floor and bwrap, and a leak check of the session's supervisor.
#
# 1. Start-up, interleaved (bench/interleave.c: every command once per round, rotating who goes
#    first, so that load from other work falls on all alike): `agentbox exec ID -- /bin/true`
#    into a session of profiles/minimal.ini, bwrap with bench/startup's namespaces and mounts,
#    and the floor `unshare -Urmnpif true`. Targets: exec median <= 0.5x the floor and
#    <= 0.4x bwrap. In the same rounds, what bounds any exec from below: `noop` (a static
#    program that returns at once: the least a client process costs) and `/bin/true` (the
#    command's own start), and `nons` (`unshare -f true`: the floor's work without its
#    namespaces). An exec starts two programs, the client and the command, so noop + true is
#    the least it can cost; when that sum is above a target, the target cannot be met on the
#    machine (its namespaces are cheap next to starting a program), and the script says so.
#    Two more targets: exec median <= 1.25x noop + true (its overhead over the two program
#    starts), and <= 0.1x `podman exec CONTAINER /bin/true` into a container started once
#    before the rounds (root file system: an empty directory and the host's /usr read-only, as
#    tests/container/podman.sh makes it; rootful as root, rootless otherwise; private storage,
#    removed at the end). When podman cannot run a container here: `podman-exec: n/a (REASON)`,
#    and the rest is measured.
# 2. Leaks: N (default 10,000) sequential execs of /bin/true into one session; before and after
#    (after a warm-up of 200): the supervisor's open fds (/proc/PID/fd), its RSS (VmRSS), the
#    processes of the session's pid namespace and the mounts of its view (seen from an exec).
#    Targets: no fd, process or mount more; RSS growth <= 1 MiB.
#
# Environment: ROUNDS (default 500), WARMUP (20), N (10000), CC (cc), PODMAN (0: no podman exec
# in the rounds; its after-effects slow the next command a little). Prints met or MISSED per
# target, with a 95% interval of each exec ratio (a bootstrap over this run's rounds, taken as
# independent: how well the run pins its own ratio; two runs differ by more, since load drifts);
# exits 0 once it has measured, non-zero when it cannot measure. A podman exec costs about 100x
# an agentbox exec: ROUNDS=500 take minutes.
set -euo pipefail

die() { printf 'bench/session: %s\n' "$*" >&2; exit 2; }

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$repo/build/agentbox}
rounds=${ROUNDS:-500}
warmup=${WARMUP:-20}
n=${N:-10000}
[[ -x $bin ]] || die "no agentbox binary at $bin"
bin=$(cd -- "$(dirname -- "$bin")" && pwd)/$(basename -- "$bin")
for tool in bwrap unshare python3 "${CC:-cc}"; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/agentbox-bench-session.XXXXXX")
sid=

# podman, with storage, run state and temporary files of its own under $work/podman (the
# engine's settings of tests/container/podman.sh: runc when installed, the caller's hard
# limits for the container, which a root without CAP_SYS_RESOURCE cannot raise). Sets pod_cid,
# or pod_why when podman cannot run a container here.
pod=$work/podman pod_cid='' pod_why='' pod_g=()
podman_start() {
	local nofile nproc out
	[ "${PODMAN:-1}" != 0 ] || { pod_why="PODMAN=0"; return 1; }
	command -v podman >/dev/null || { pod_why="podman is not installed"; return 1; }
	pod_g=(--root "$pod/storage" --runroot "$pod/run" --tmpdir "$pod/tmp" --storage-driver vfs
		--cgroup-manager cgroupfs --events-backend file --log-level error)
	command -v runc >/dev/null && pod_g+=(--runtime runc)
	nofile=$(ulimit -Hn) nproc=$(ulimit -Hu)
	[ "$nofile" = unlimited ] && nofile=1048576
	{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
	mkdir -p "$pod"/rootfs/{usr,etc,tmp,proc,sys,dev,run} || { pod_why="cannot make $pod/rootfs"; return 1; }
	for l in bin lib lib64 sbin; do
		ln -s "usr/$l" "$pod/rootfs/$l" || { pod_why="cannot make $pod/rootfs/$l"; return 1; }
	done
	if ! out=$(timeout -k 5 120 podman "${pod_g[@]}" run -d --network none \
		--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc" -v /usr:/usr:ro \
		--rootfs "$pod/rootfs" /bin/sleep 86400 2>&1 </dev/null); then
		pod_why="podman cannot run a container here: $(printf '%s\n' "$out" | head -n 1)"
		return 1
	fi
	pod_cid=$(printf '%s\n' "$out" | tail -n 1)
	out=$(timeout -k 5 60 podman "${pod_g[@]}" exec "$pod_cid" /bin/true 2>&1 </dev/null) ||
		{ pod_why="podman exec fails here: $(printf '%s\n' "$out" | head -n 1)"; return 1; }
}
# The container, rootless podman's pause process (it holds the user namespace) and, as root,
# any mount left under $pod.
podman_stop() {
	local pause d
	[ -d "$pod/storage" ] || return 0
	timeout -k 5 60 podman "${pod_g[@]}" rm -a -f -t 0 >/dev/null 2>&1 || true
	# files the container made belong to the user namespace's ids
	if [ "$(id -u)" -ne 0 ]; then
		timeout -k 5 60 podman "${pod_g[@]}" unshare rm -rf -- "$pod/storage" "$pod/run" \
			>/dev/null 2>&1 || true
	fi
	pause=$(cat "$pod/tmp/pause.pid" 2>/dev/null) || pause=
	if [ -n "$pause" ] && [ "$(cat "/proc/$pause/comm" 2>/dev/null)" = catatonit ]; then
		kill -KILL "$pause" 2>/dev/null || true
	fi
	if [ "$(id -u)" -eq 0 ]; then
		{ grep -o " $pod/[^ ]*" /proc/mounts || true; } | sort -r |
			while read -r d; do umount -l "$d" || true; done
	fi
}

cleanup() {
	[ -z "$sid" ] || "$bin" session stop "$sid" >/dev/null 2>&1 || true
	podman_stop
	rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"${CC:-cc}" -O2 -o "$work/interleave" "$repo/bench/interleave.c" || die "cannot compile bench/interleave.c"
printf 'int main(void) { return 0; }\n' >"$work/noop.c"
"${CC:-cc}" -O2 -static -o "$work/noop" "$work/noop.c" 2>/dev/null ||
	"${CC:-cc}" -O2 -o "$work/noop" "$work/noop.c" || die "cannot compile a no-op program"

cd /
sid=$("$bin" session start -p "$repo/profiles/minimal.ini" --audit "$work/session.jsonl") ||
	die "cannot start a session"
sup=$("$bin" session list --json | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if d["id"] == sys.argv[1]: print(d["pid"])' "$sid")
[ -n "$sup" ] || die "the session's supervisor is not in session list"

podman_cmd=()
if podman_start; then
	podman_cmd=(::: podman-exec "$(command -v podman)" "${pod_g[@]}" exec "$pod_cid" /bin/true)
	printf '# %s (%s), runtime %s\n' "$(podman --version)" \
		"$([ "$(id -u)" -eq 0 ] && echo rootful || echo rootless)" \
		"$(command -v runc >/dev/null && runc --version | head -n 1 || echo "podman's default")"
else
	printf 'podman-exec: n/a (%s)\n' "$pod_why"
fi

printf '# %s cpus, kernel %s, uid %s, load %s, %s rounds (+%s warmup)\n' "$(nproc)" "$(uname -r)" \
	"$(id -u)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$rounds" "$warmup"
"$work/interleave" --raw "$work/raw.tsv" "$rounds" "$warmup" \
	exec "$bin" exec "$sid" -- /bin/true ::: \
	bwrap "$(command -v bwrap)" --unshare-user --unshare-pid --unshare-net --unshare-ipc \
	--unshare-uts --unshare-cgroup --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin \
	/sbin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp \
	--cap-drop ALL --die-with-parent /bin/true ::: \
	floor "$(command -v unshare)" -Urmnpif true ::: \
	nons "$(command -v unshare)" -f true ::: \
	noop "$work/noop" ::: \
	true /bin/true "${podman_cmd[@]}" | tee "$work/interleave.txt"
printf '# load after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/raw.tsv" <<'EOF'
import random, sys
runs = {}
for line in open(sys.argv[1]):
    r, name, wall, _ = line.split("\t")
    runs.setdefault(name, {})[int(r)] = float(wall)
if len(runs) < 6:
    sys.exit("could not read the rounds from interleave's --raw file")
rounds = sorted(runs["exec"])


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


med = {name: median(t.values()) for name, t in runs.items()}


def ratio(idx, num, dens):
    return median([runs[num][i] for i in idx]) / sum(median([runs[d][i] for i in idx]) for d in dens)


# 95% interval of a ratio of medians, the rounds resampled (each round keeps all its runs): how
# well this run pins its ratio
def judged(num, dens, target):
    rng = random.Random(1)
    boot = sorted(ratio(rng.choices(rounds, k=len(rounds)), num, dens) for _ in range(1000))
    r, lo, hi = ratio(rounds, num, dens), boot[25], boot[974]
    word = "met" if r <= target else "MISSED"
    if lo <= target < hi:
        word += f" (its interval crosses {target}: another run may say otherwise)"
    return r, f"95% interval {lo:.3f}-{hi:.3f}; {word}"


r, v = judged("exec", ("noop", "true"), 1.25)
print(f"exec/(noop + true) {r:.3f} (target <= 1.25, {v})")
if "podman-exec" in runs:
    r, v = judged("exec", ("podman-exec",), 0.1)
    print(f"exec/podman-exec {r:.4f} (target <= 0.1, {v})")
least = med["noop"] + med["true"]
for name, ref, target in (("floor", med["floor"], 0.5), ("bwrap", med["bwrap"], 0.4)):
    r, bound = med["exec"] / ref, least / ref
    verdict = "met" if r <= target else "MISSED"
    if r > target and bound > target:
        verdict += f" (cannot be met on this machine: two program starts alone are {bound:.3f}x)"
    print(f"exec/{name} {r:.3f} (target <= {target}): {verdict}")
print(f"least an exec can cost here (noop + true): {least:.3f} ms = "
      f"{least / med['floor']:.3f}x the floor, {least / med['bwrap']:.3f}x bwrap; "
      f"the floor without namespaces (nons): {med['nons'] / med['floor']:.3f}x the floor")
EOF

# the leak check
state() {
	local fds rss procs mounts
	fds=$(find "/proc/$sup/fd" -mindepth 1 -maxdepth 1 | wc -l)
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$sup/status")
	procs=$("$bin" exec "$sid" -- /bin/sh -c 'ls -d /proc/[0-9]* | wc -l')
	mounts=$("$bin" exec "$sid" -- /bin/sh -c 'wc -l </proc/self/mountinfo')
	echo "$fds $rss $procs $mounts"
}
for _ in $(seq 200); do "$bin" exec "$sid" -- /bin/true; done
read -r fd0 rss0 p0 m0 < <(state)
t0=$(date +%s%N)
for _ in $(seq "$n"); do "$bin" exec "$sid" -- /bin/true; done
t1=$(date +%s%N)
read -r fd1 rss1 p1 m1 < <(state)
printf '%s execs in %s ms (%s ms each)\n' "$n" "$(((t1 - t0) / 1000000))" \
	"$(python3 -c "print(round(($t1 - $t0) / 1e6 / $n, 3))")"
printf 'supervisor fds %s -> %s: %s\n' "$fd0" "$fd1" "$([ "$fd1" -le "$fd0" ] && echo met || echo MISSED)"
printf 'supervisor RSS %s -> %s KiB (growth <= 1024): %s\n' "$rss0" "$rss1" \
	"$([ $((rss1 - rss0)) -le 1024 ] && echo met || echo MISSED)"
printf 'processes in the session %s -> %s: %s\n' "$p0" "$p1" "$([ "$p1" -le "$p0" ] && echo met || echo MISSED)"
printf 'mounts in the view %s -> %s: %s\n' "$m0" "$m1" "$([ "$m1" -le "$m0" ] && echo met || echo MISSED)"

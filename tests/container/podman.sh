#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# podman.sh AGENTBOX [SOURCE]: docs/deploying.md's claims, tested in a real container engine.
#
# For rootful podman (when run as root) and rootless podman (as the unprivileged user
# agentbox-test when run as root, else as the caller), in a container whose root file system is
# built here (no registry needed: a small directory plus the host's /usr mounted read-only):
#   NAME/smoke     with the documented settings (--security-opt seccomp=unconfined and
#                  --security-opt systempaths=unconfined): agentbox runs, shows only the
#                  profile's paths, confines the network to its proxy, its audit verifies
#   NAME/suite     with the same settings, a subset of the integration suite, run inside
#   NAME/defaults  with podman's defaults: exit 125, one line naming systempaths=unconfined
#   NAME/seccomp   with only systempaths=unconfined: exit 125, one line naming
#                  seccomp=unconfined (each documented setting is needed)
#   NAME/fallback  with podman's defaults and [sandbox] fallback = landlock: the command runs
#                  without namespaces, says so, and Landlock still confines it
# Each engine first runs its own control, `true` in the same container with the documented
# settings; when that fails (podman missing or unable to run a container here), the engine's
# cases are n/a with the reason.
#
# Storage, run state and temporary files are private (--root/--runroot/--tmpdir under a
# temporary directory), the network is --network none; everything is removed at the end.
# Output: `ok NAME`, `FAIL NAME: why` or `n/a NAME: reason` per case, then a summary. Exit 0
# when nothing failed and something passed, 77 when every case was n/a, 1 otherwise.
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: podman.sh AGENTBOX_BINARY [SOURCE_TREE]" >&2
	exit 2
fi
bin=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
src=$(readlink -f "${2:-$here/../..}")
rootless_user=${AGENTBOX_TEST_USER:-agentbox-test}
LIMIT=${PODMAN_LIMIT:-150} # seconds for one podman run
DOC_OPTS=(--security-opt seccomp=unconfined --security-opt systempaths=unconfined)
N_OK=0 N_FAIL=0 N_SKIP=0

T=$(mktemp -d /tmp/agentbox-podman.XXXXXX) || {
	echo "FAIL setup: mktemp"
	exit 1
}
chmod 755 "$T"

ok() {
	echo "ok $1"
	N_OK=$((N_OK + 1))
}
bad() {
	echo "FAIL $1: $2"
	[ -z "${3:-}" ] || printf '%s\n' "$3" | head -n 80 | sed 's/^/    | /'
	N_FAIL=$((N_FAIL + 1))
}
na() {
	echo "n/a $1: $2"
	N_SKIP=$((N_SKIP + 1))
}

# ------------------------------------------------------------ podman ----

# The engine's own settings for this test: private storage, state and temporary files; no
# registry (the root file system is a directory); runc when installed (crun 1.8 refuses hosts
# with controllers in both cgroup hierarchies). Rootful podman lowers its own RLIMIT_NPROC to
# 32768 and asks for more in the container, which a root without CAP_SYS_RESOURCE (as in some
# CI sandboxes) cannot grant: the container gets the caller's hard limits instead.
global_opts() { # DIR
	G=(--root "$1/storage" --runroot "$1/run" --tmpdir "$1/tmp" --storage-driver vfs
		--cgroup-manager cgroupfs --events-backend file --log-level error)
	command -v runc >/dev/null && G+=(--runtime runc)
	local nofile nproc
	nofile=$(ulimit -Hn)
	nproc=$(ulimit -Hu)
	[ "$nofile" = unlimited ] && nofile=1048576
	{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
	RUN=(run --rm --network none --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc"
		-v /usr:/usr:ro --hostname container)
}

# The root file system: the host's /usr (mounted), the usual symlinks into it, a few /etc
# files, users root and agentbox-test (uid 1000, for run.sh's second run), agentbox at
# /opt/agentbox/bin and what the integration scripts read under /opt/agentbox/src.
make_rootfs() { # DIR
	local r=$1 l
	mkdir -p "$r"/{usr,etc,tmp,var/tmp,proc,sys,dev,run,root,home/agentbox-test,opt/agentbox/bin} \
		"$r/opt/agentbox/src/tests" || return 1
	chmod 1777 "$r/tmp" "$r/var/tmp"
	for l in bin lib lib64 sbin; do
		ln -s "usr/$l" "$r/$l" || return 1
	done
	# alternatives: cc, awk and others are symlinks through /etc/alternatives
	cp -a /etc/ld.so.cache /etc/nsswitch.conf /etc/alternatives "$r/etc/" || return 1
	printf '%s\n' 'root:x:0:0:root:/root:/bin/bash' \
		'agentbox-test:x:1000:1000::/home/agentbox-test:/bin/bash' \
		'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >"$r/etc/passwd"
	printf '%s\n' 'root:x:0:' 'agentbox-test:x:1000:' 'agentbox-shared:x:1001:agentbox-test' \
		'nogroup:x:65534:' >"$r/etc/group"
	cp "$bin" "$r/opt/agentbox/bin/agentbox" &&
		cp -r "$src/profiles" "$src/cli.c" "$src/CMakeLists.txt" "$r/opt/agentbox/src/" &&
		cp -r "$src/tests/integration" "$src/tests/container" "$r/opt/agentbox/src/tests/" &&
		mkdir "$r/opt/agentbox/src/docs" && cp "$src/docs/audit.schema.json" "$r/opt/agentbox/src/docs/" &&
		chmod -R a+rX "$r/opt"
}

# as_engine CMD...: CMD as the engine's user (rootful: this shell; rootless: $rootless_user
# with a home, XDG dirs and podman state of its own under $D).
as_engine() {
	if [ "$MODE" = rootful ] || [ "$(id -u)" -ne 0 ]; then
		env HOME="$D/home" XDG_RUNTIME_DIR="$D/xdg" XDG_CONFIG_HOME="$D/home/.config" \
			XDG_DATA_HOME="$D/home/.local/share" "$@"
	else
		setpriv --reuid="$rootless_user" --regid="$rootless_user" --init-groups \
			env -i HOME="$D/home" XDG_RUNTIME_DIR="$D/xdg" XDG_CONFIG_HOME="$D/home/.config" \
			XDG_DATA_HOME="$D/home/.local/share" PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
			LANG=C.UTF-8 "$@"
	fi
}

# pod OPTS... -- CMD...: runs CMD in a fresh container with OPTS; sets RC and OUT (both
# streams of podman and the container).
pod() {
	local opts=()
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	OUT=$(cd "$D" && as_engine timeout -k 5 "$LIMIT" podman "${G[@]}" "${RUN[@]}" "${opts[@]}" \
		--rootfs "$D/rootfs" "$@" 2>&1 </dev/null)
	RC=$?
}

# inside_case NAME OPTS... -- inside.sh ARGS: a case whose checks are inside.sh's.
inside_case() {
	local name=$1
	shift
	pod "$@"
	if [ "$RC" = 0 ] && [ "$(printf '%s\n' "$OUT" | tail -n 1)" = "inside: ok" ]; then
		ok "$name"
		printf '%s\n' "$OUT" | grep '^ok ' | sed 's/^/    /'
	else
		bad "$name" "podman run exited $RC" "$OUT"
	fi
}

# ----------------------------------------------------------- engines ----

# prepare MODE: sets D, makes its root file system, storage and home; returns 1 with WHY set
# when this engine cannot be tried here.
prepare() {
	MODE=$1
	D=$T/$MODE
	mkdir -p "$D/home" "$D/xdg" && chmod 700 "$D/xdg" && make_rootfs "$D/rootfs" ||
		{ WHY="cannot build the root file system under $D" && return 1; }
	global_opts "$D"
	# the container's agentbox-test (uid 1000) owns its home: directly when podman maps ids 1:1
	if [ "$MODE" = rootful ]; then
		chown 1000:1000 "$D/rootfs/home/agentbox-test" ||
			{ WHY="cannot chown $D/rootfs/home/agentbox-test" && return 1; }
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || return 0
	command -v newuidmap >/dev/null && command -v newgidmap >/dev/null ||
		{ WHY="newuidmap/newgidmap are missing (Debian: uidmap)" && return 1; }
	# as run.sh does: the unprivileged user, created under the same lock when missing
	flock /tmp/.agentbox-test-user.lock sh -c \
		'id -u "$1" >/dev/null 2>&1 || useradd -m -s /bin/bash "$1"' sh "$rootless_user" ||
		{ WHY="cannot create the user $rootless_user" && return 1; }
	local uid
	uid=$(id -u "$rootless_user")
	grep -qE "^($rootless_user|$uid):" /etc/subuid && grep -qE "^($rootless_user|$uid):" /etc/subgid ||
		{ WHY="$rootless_user has no range in /etc/subuid and /etc/subgid" && return 1; }
	chown -R "$rootless_user:" "$D" ||
		{ WHY="cannot give $D to $rootless_user" && return 1; }
	# else it is one of the rootless user's subordinate ids, which podman maps
	as_engine podman "${G[@]}" unshare chown -R 1000:1000 "$D/rootfs/home/agentbox-test" ||
		{ WHY="podman unshare cannot map the user's subordinate ids" && return 1; }
}

engine() {
	local mode=$1 c
	local cases=(smoke suite defaults seccomp fallback)
	if ! command -v podman >/dev/null; then
		for c in "${cases[@]}"; do na "$mode/$c" "podman is not installed"; done
		return
	fi
	if [ "$mode" = rootful ] && [ "$(id -u)" -ne 0 ]; then
		for c in "${cases[@]}"; do na "$mode/$c" "needs root"; done
		return
	fi
	if ! prepare "$mode"; then
		for c in "${cases[@]}"; do na "$mode/$c" "$WHY"; done
		return
	fi
	# the control: the same container, with the documented settings, runs true
	pod "${DOC_OPTS[@]}" -- /bin/true
	if [ "$RC" != 0 ]; then
		for c in "${cases[@]}"; do
			na "$mode/$c" "podman cannot run a container here (exit $RC): $(printf '%s' "$OUT" | head -n 1)"
		done
		return
	fi
	local in=/opt/agentbox/src/tests/container/inside.sh
	inside_case "$mode/smoke" "${DOC_OPTS[@]}" -- "$in" smoke
	inside_case "$mode/suite" "${DOC_OPTS[@]}" -- "$in" suite
	inside_case "$mode/defaults" -- "$in" refused systempaths=unconfined
	inside_case "$mode/seccomp" --security-opt systempaths=unconfined -- "$in" refused seccomp=unconfined
	inside_case "$mode/fallback" -- "$in" fallback
}

# ----------------------------------------------------------- cleanup ----

# The processes whose command line names $T: conmon, which runs a --rm container's clean-up
# after podman run returned, and anything a failed run left.
ours() {
	local p args
	for p in /proc/[0-9]*; do
		mapfile -d '' args <"$p/cmdline" 2>/dev/null || continue
		[[ ${args[*]} == *"$T/"* ]] && echo "${p#/proc/}"
	done
}

cleanup() {
	local d pid left
	for d in "$T"/rootful "$T"/rootless; do
		[ -d "$d/storage" ] || continue
		D=$d MODE=${d##*/}
		global_opts "$D"
		as_engine timeout 30 podman "${G[@]}" rm -a -f -t 0 >/dev/null 2>&1
	done
	for _ in $(seq 50); do
		left=$(ours)
		[ -z "$left" ] && break
		sleep 0.2
	done
	for pid in $(ours); do
		kill -KILL "$pid" 2>/dev/null
	done
	# rootless podman keeps a pause process holding its user namespace
	for d in "$T"/rootful "$T"/rootless; do
		pid=$(cat "$d/tmp/pause.pid" 2>/dev/null)
		[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	done
	grep -o " $T/[^ ]*" /proc/mounts | sort -r | while read -r d; do umount -l "$d"; done
	rm -rf "$T"
}
trap cleanup EXIT

[ -r "$bin" ] && [ -r "$src/profiles/minimal.ini" ] && [ -r "$src/tests/integration/run.sh" ] || {
	echo "FAIL setup: $bin or the source tree $src is missing or unreadable"
	exit 1
}
if command -v podman >/dev/null; then
	echo "# $(podman --version), runtime $(command -v runc >/dev/null && runc --version | head -n 1 || echo default)"
fi
engine rootful
engine rootless

echo "podman: $N_OK passed, $N_FAIL failed, $N_SKIP skipped"
[ "$N_FAIL" -eq 0 ] || exit 1
[ "$N_OK" -gt 0 ] && exit 0
exit 77

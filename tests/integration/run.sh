#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# run.sh SCRIPT AGENTBOX: runs one integration test script against the agentbox binary.
#
# The script runs as the current user; when that is root it runs a second time as an
# unprivileged user (agentbox-test, created if missing), because agentbox behaves differently
# with and without privilege (id maps, rlimits, what the host lets the user read). Each run
# gets a fresh work directory its user owns. If that user cannot read the binary, the profiles
# or the test scripts where they are (a repository under a private directory), they are copied
# to a temporary directory it can read and AGENTBOX_PROFILE_PATH points at the copied profiles.
# A script in a folder beside tests/integration (tests/clients/matrix.sh) sources
# ../integration/lib.sh: the copy keeps both folders side by side.
#
# With AGENTBOX_TEST_PASSES=unprivileged, a root run skips its own pass and runs only the
# unprivileged user's; with AGENTBOX_TEST_PASSES=caller, only the caller's own pass runs.
#
# With AGENTBOX_MEMCHECK=VALGRIND (a valgrind from tools/valgrind/build), every agentbox the
# script starts runs under memcheck; a run fails if any report names an error or a leak.
#
# Output: one line per case, `ok NAME (USER)` or `FAIL NAME (USER): why`, then a summary.
# Exit status 0 when no case of any run failed and at least one passed; 77 (ctest's skip) when
# every case of every run was n/a on this kernel; 1 otherwise.
set -u

if [ $# -ne 2 ]; then
	echo "usage: run.sh TEST_SCRIPT AGENTBOX_BINARY" >&2
	exit 2
fi
script=$(readlink -f "$1")
bin=$(readlink -f "$2")
src=${AGENTBOX_SOURCE:-$(cd "$(dirname "$script")/../.." && pwd)}
src=$(readlink -f "$src")
test_user=${AGENTBOX_TEST_USER:-agentbox-test}
name=$(basename "$script" .sh)
cleanup_dirs=()

cleanup() {
	local d
	for d in "${cleanup_dirs[@]}"; do
		rm -rf "$d"
	done
}
trap cleanup EXIT

for f in "$script" "$bin" "$src/profiles/shell.ini"; do
	if [ ! -r "$f" ]; then
		echo "FAIL $name ($(id -un)): $f is missing or unreadable"
		exit 1
	fi
done

# memcheck_wrap DIR BIN VALGRIND OWNER: writes DIR/agentbox, which runs BIN under memcheck,
# each run appending to its own log in DIR/logs (writable by OWNER). The log holds the
# supervisor's report and pid 1's (a fork, under valgrind until the command's exec). No vgdb:
# its FIFOs in $TMPDIR outlive a valgrind that is SIGKILLed (test_soak's kills count them).
# Valgrind's valgrind_proc_*_cmdline_* file there can outlive one too; soak.sh skips those.
memcheck_wrap() {
	local dir=$1 bin=$2 valgrind=$3 owner=$4
	mkdir "$dir/logs" && chmod 755 "$dir" || return 1
	[ -z "$owner" ] || chown "$owner" "$dir/logs" || return 1
	cat >"$dir/agentbox" <<WRAP || return 1
#!/bin/bash
# a descriptor of its own, so that the descriptors a test passes to agentbox stay as they are
exec {log}>>"$dir/logs/\$\$.log" || exit 125
VALGRIND_LIB="$(dirname "$(dirname "$valgrind")")/libexec/valgrind" \\
	exec "$valgrind" --vgdb=no --log-fd=\$log --leak-check=full --show-leak-kinds=definite,indirect \\
	--errors-for-leak-kinds=definite,indirect --num-callers=40 "$bin" "\$@"
WRAP
	chmod 755 "$dir/agentbox"
}

# memcheck_verdict LABEL WRAPPER: one line on the runs memcheck watched; status 1 on any error,
# leak or syscall valgrind did not know (the run then behaved differently from a real one).
memcheck_verdict() {
	local label=$1 logs runs bad f
	logs=$(dirname "$2")/logs
	runs=$(cat "$logs"/*.log 2>/dev/null | grep -c '== Command: ')
	# a report's first line too: a run killed with SIGKILL never prints its summary
	bad=$(grep -lE 'ERROR SUMMARY: [1-9]|unhandled (amd64-linux syscall|ioctl)|== (Invalid |Conditional jump|Use of uninitialised|Syscall param|Mismatched |Source and destination overlap)' \
		"$logs"/*.log 2>/dev/null)
	if [ "$runs" -eq 0 ]; then
		echo "FAIL memcheck ($label): no agentbox run went through valgrind"
		return 1
	fi
	if [ -n "$bad" ]; then
		echo "FAIL memcheck ($label): errors in $(echo "$bad" | wc -l) of $runs runs"
		for f in $bad; do
			sed 's/^/#   /' "$f" | head -n 80
		done
		return 1
	fi
	echo "ok memcheck ($label): $runs runs, no errors, no leaks"
}

# run_as LABEL USER_OR_EMPTY BIN SRC SCRIPT [VALGRIND]: one run of the script; returns its
# status.
run_as() {
	local label=$1 user=$2 rbin=$3 rsrc=$4 rscript=$5 valgrind=${6:-} wd rc home uid gid wrapper=
	wd=$(mktemp -d /tmp/agentbox-it.XXXXXX) || { echo "FAIL $name ($label): mktemp"; return 1; }
	cleanup_dirs+=("$wd")
	if [ -n "$valgrind" ]; then
		wrapper=$(mktemp -d /tmp/agentbox-memcheck.XXXXXX)/agentbox &&
			cleanup_dirs+=("$(dirname "$wrapper")") &&
			memcheck_wrap "$(dirname "$wrapper")" "$rbin" "$valgrind" "$user" ||
			{ echo "FAIL $name ($label): cannot make the memcheck wrapper"; return 1; }
		rbin=$wrapper
	fi
	local vars=(AGENTBOX="$rbin" AGENTBOX_BIN="$3" AGENTBOX_PROFILES="$rsrc/profiles"
		AGENTBOX_PROFILE_PATH="$rsrc/profiles" AGENTBOX_SOURCE="$rsrc" TEST_WORKDIR="$wd"
		${AGENTBOX_CASES:+AGENTBOX_CASES="$AGENTBOX_CASES"})
	echo "# $name as $label: binary $rbin, profiles $rsrc/profiles, work dir $wd"
	if [ -z "$user" ]; then
		home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
		(cd "$wd" && env HOME="$home" "${vars[@]}" bash "$rscript")
		rc=$?
	else
		uid=$(id -u "$user") && gid=$(id -g "$user") || return 1
		home=$(getent passwd "$user" | cut -d: -f6)
		chown "$uid:$gid" "$wd"
		(cd "$wd" && setpriv --reuid="$uid" --regid="$gid" --init-groups \
			env -i HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash LANG=C.UTF-8 \
			PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin "${vars[@]}" bash "$rscript")
		rc=$?
	fi
	if [ -n "$wrapper" ] && [ "$rc" -ne 77 ]; then
		memcheck_verdict "$label" "$wrapper" || rc=1
	fi
	return "$rc"
}

status=0
skipped=0 # runs whose every case was n/a (exit 77)
valgrind=
if [ -n "${AGENTBOX_MEMCHECK:-}" ]; then
	valgrind=$(readlink -f "$AGENTBOX_MEMCHECK")
	if [ ! -x "$valgrind" ]; then
		echo "FAIL $name ($(id -un)): AGENTBOX_MEMCHECK=$AGENTBOX_MEMCHECK is not an executable"
		exit 1
	fi
fi
passes=${AGENTBOX_TEST_PASSES:-both}
case $passes in
both | unprivileged | caller) ;;
*)
	echo "FAIL $name ($(id -un)): AGENTBOX_TEST_PASSES=$passes is none of both, unprivileged, caller"
	exit 1
	;;
esac

runs=0
# AGENTBOX_TEST_PASSES=unprivileged: as root, only the unprivileged user's pass (the way users
# run agentbox); the memcheck stage uses it, where each pass costs tens of times more
if [ "$(id -u)" -ne 0 ] || [ "$passes" != unprivileged ]; then
	run_as "$(id -un)" "" "$bin" "$src" "$script" "$valgrind"
	case $? in 0) ;; 77) skipped=$((skipped + 1)) ;; *) status=1 ;; esac
	runs=1
else
	echo "# $name: not run as $(id -un) (AGENTBOX_TEST_PASSES=unprivileged)"
fi

if [ "$(id -u)" -eq 0 ] && [ "$passes" = caller ]; then
	echo "# $name: not run as $test_user (AGENTBOX_TEST_PASSES=caller)"
elif [ "$(id -u)" -eq 0 ]; then
	# several run.sh may start at once under ctest -j: create the user under a lock
	# with a second group of its own (agentbox-shared), for the cases about files of a group
	# that is not the caller's primary one
	if ! flock /tmp/.agentbox-test-user.lock sh -c '
		id -u "$1" >/dev/null 2>&1 || useradd -m -s /bin/bash "$1" || exit 1
		getent group agentbox-shared >/dev/null || groupadd agentbox-shared || exit 1
		id -nG "$1" | tr " " "\n" | grep -qx agentbox-shared || usermod -aG agentbox-shared "$1"' \
		sh "$test_user"; then
		echo "FAIL $name ($test_user): cannot create the unprivileged user $test_user"
		exit 1
	fi
	uid=$(id -u "$test_user")
	gid=$(id -g "$test_user")
	# readable BIN SRC SCRIPT: can the unprivileged user use them? Names what it cannot read.
	readable() {
		setpriv --reuid="$uid" --regid="$gid" --init-groups sh -c '
			bad=
			test -x "$1" || bad="$bad $1"
			[ -z "$4" ] || test -x "$4" || bad="$bad $4"
			for f in "$2/profiles/shell.ini" "$2/profiles/minimal.ini" "$2/cli.c" "$3" \
				"$(dirname "$3")/../integration/lib.sh"; do
				test -r "$f" || bad="$bad $f"
			done
			for d in "$2/profiles" "$(dirname "$3")/helpers" \
				"$(dirname "$3")/../integration/helpers"; do
				test -r "$d" && test -x "$d" || bad="$bad $d/"
			done
			[ -z "$bad" ] || { echo "# $(id -un) cannot use:$bad"; exit 1; }' sh "$1" "$2" "$3" \
			"$4"
	}
	ubin=$bin usrc=$src uscript=$script uvalgrind=$valgrind
	if ! readable "$bin" "$src" "$script" "$valgrind"; then
		stage=$(mktemp -d /tmp/agentbox-it-stage.XXXXXX)
		cleanup_dirs+=("$stage")
		mkdir -p "$stage/bin" "$stage/src/tests"
		cp "$bin" "$stage/bin/agentbox"
		cp -r "$src/profiles" "$stage/src/profiles"
		cp "$src/cli.c" "$src/CMakeLists.txt" "$stage/src/"
		cp -r "$src/bindings" "$stage/src/bindings"
		# the script's folder under its own name; a suite beside tests/integration (tests/clients)
		# uses its lib.sh and helpers, so that folder comes too
		sdir=$(basename "$(dirname "$script")")
		cp -r "$(dirname "$script")" "$stage/src/tests/$sdir"
		[ -d "$stage/src/tests/integration" ] ||
			cp -r "$(dirname "$script")/../integration" "$stage/src/tests/integration"
		if [ -n "$valgrind" ]; then # PREFIX/bin/valgrind, as tools/valgrind/build makes it
			cp -r "$(dirname "$(dirname "$valgrind")")" "$stage/valgrind"
			uvalgrind=$stage/valgrind/bin/valgrind
		fi
		chmod -R a+rX "$stage"
		chmod 755 "$stage"
		ubin=$stage/bin/agentbox
		usrc=$stage/src
		uscript=$stage/src/tests/$sdir/$(basename "$script")
		echo "# $test_user cannot read $bin or $src: using a copy in $stage"
		if ! readable "$ubin" "$usrc" "$uscript" "$uvalgrind"; then
			echo "FAIL $name ($test_user): the copy in $stage is not readable either"
			exit 1
		fi
	fi
	run_as "$test_user" "$test_user" "$ubin" "$usrc" "$uscript" "$uvalgrind"
	case $? in 0) ;; 77) skipped=$((skipped + 1)) ;; *) status=1 ;; esac
	runs=$((runs + 1))
fi

if [ "$status" -eq 0 ] && [ "$skipped" -eq "$runs" ]; then
	echo "# $name: not applicable on this kernel (every case n/a)"
	exit 77
elif [ "$status" -eq 0 ]; then
	echo "# $name: all runs passed"
else
	echo "# $name: FAILED"
fi
exit "$status"

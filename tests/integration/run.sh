#!/bin/bash
# run.sh SCRIPT AGENTBOX: runs one integration test script against the agentbox binary.
#
# The script runs as the current user; when that is root it runs a second time as an
# unprivileged user (agentbox-test, created if missing), because agentbox behaves differently
# with and without privilege (id maps, rlimits, what the host lets the user read). Each run
# gets a fresh work directory its user owns. If that user cannot read the binary, the profiles
# or the test scripts where they are (a repository under a private directory), they are copied
# to a temporary directory it can read and AGENTBOX_PROFILE_PATH points at the copied profiles.
#
# Output: one line per case, `ok NAME (USER)` or `FAIL NAME (USER): why`, then a summary.
# Exit status 0 only if every case of every run passed (never 77: nothing here is skipped).
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

# run_as LABEL USER_OR_EMPTY BIN SRC SCRIPT: one run of the script; returns its status.
run_as() {
	local label=$1 user=$2 rbin=$3 rsrc=$4 rscript=$5 wd rc home uid gid
	wd=$(mktemp -d /tmp/agentbox-it.XXXXXX) || { echo "FAIL $name ($label): mktemp"; return 1; }
	cleanup_dirs+=("$wd")
	local vars=(AGENTBOX="$rbin" AGENTBOX_PROFILES="$rsrc/profiles"
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
	[ "$rc" -eq 77 ] && rc=1 # ctest would call 77 a skip; nothing is skipped here
	return "$rc"
}

status=0
run_as "$(id -un)" "" "$bin" "$src" "$script" || status=1

if [ "$(id -u)" -eq 0 ]; then
	# several run.sh may start at once under ctest -j: create the user under a lock
	if ! flock /tmp/.agentbox-test-user.lock sh -c \
		'id -u "$1" >/dev/null 2>&1 || useradd -m -s /bin/bash "$1"' sh "$test_user"; then
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
			for f in "$2/profiles/shell.ini" "$2/profiles/minimal.ini" "$2/cli.c" "$3" \
				"$(dirname "$3")/lib.sh"; do
				test -r "$f" || bad="$bad $f"
			done
			for d in "$2/profiles" "$(dirname "$3")/helpers"; do
				test -r "$d" && test -x "$d" || bad="$bad $d/"
			done
			[ -z "$bad" ] || { echo "# $(id -un) cannot use:$bad"; exit 1; }' sh "$1" "$2" "$3"
	}
	ubin=$bin usrc=$src uscript=$script
	if ! readable "$bin" "$src" "$script"; then
		stage=$(mktemp -d /tmp/agentbox-it-stage.XXXXXX)
		cleanup_dirs+=("$stage")
		mkdir -p "$stage/bin" "$stage/src/tests"
		cp "$bin" "$stage/bin/agentbox"
		cp -r "$src/profiles" "$stage/src/profiles"
		cp "$src/cli.c" "$src/CMakeLists.txt" "$stage/src/"
		cp -r "$(dirname "$script")" "$stage/src/tests/integration"
		chmod -R a+rX "$stage"
		chmod 755 "$stage"
		ubin=$stage/bin/agentbox
		usrc=$stage/src
		uscript=$stage/src/tests/integration/$(basename "$script")
		echo "# $test_user cannot read $bin or $src: using a copy in $stage"
		if ! readable "$ubin" "$usrc" "$uscript"; then
			echo "FAIL $name ($test_user): the copy in $stage is not readable either"
			exit 1
		fi
	fi
	run_as "$test_user" "$test_user" "$ubin" "$usrc" "$uscript" || status=1
fi

if [ "$status" -eq 0 ]; then
	echo "# $name: all runs passed"
else
	echo "# $name: FAILED"
fi
exit "$status"

#!/bin/sh
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Runs every fuzz target for SECONDS each, on its seed corpus, and reports one line per target:
#   run.sh BUILD_DIR SECONDS [extra libFuzzer options...]
# BUILD_DIR is a build configured with CC=clang -DAGENTBOX_FUZZ=ON. New corpus inputs go to
# BUILD_DIR/.../corpus/<target> (the seeds in the source tree are only read); crash inputs and
# the full logs go to BUILD_DIR/.../artifacts/. Exits 1 when any target crashed (or leaked, ran
# out of memory or timed out on an input), 2 on a usage error.
set -u

here=$(cd "$(dirname "$0")" && pwd)

if [ $# -lt 2 ]; then
	echo "usage: $0 BUILD_DIR SECONDS [libFuzzer options...]" >&2
	exit 2
fi
build=$1
seconds=$2
shift 2
case $seconds in
'' | *[!0-9]*)
	echo "$0: SECONDS must be a whole number, not '$seconds'" >&2
	exit 2
	;;
esac

# The targets live in BUILD_DIR/tests/fuzz in the project's build.
bindir=
for d in "$build/tests/fuzz" "$build/fuzz" "$build"; do
	if [ -x "$d/fuzz_policy" ]; then
		bindir=$(cd "$d" && pwd)
		break
	fi
done
if [ -z "$bindir" ]; then
	echo "$0: no fuzz targets in $build; configure it with CC=clang cmake -DAGENTBOX_FUZZ=ON" >&2
	exit 2
fi
artifacts=$bindir/artifacts
mkdir -p "$artifacts"

# Every target built (tests/fuzz/CMakeLists.txt lists them), so a new one needs no change here.
targets=
for f in "$bindir"/fuzz_*; do
	if [ -f "$f" ] && [ -x "$f" ]; then
		targets="$targets ${f##*/}"
	fi
done

failed=0
for t in $targets; do
	work=$bindir/corpus/$t
	log=$artifacts/$t.log
	mkdir -p "$work"
	"$bindir/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$@" \
		"$work" "$here/corpus/$t" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	if [ "$rc" -eq 0 ]; then
		result=ok
	else
		failed=1
		crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		kind=$(grep -m 1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*check failed|ALARM|==[0-9]+== ERROR: libFuzzer)' "$log" |
			cut -c 1-160)
		result="FAILED (exit $rc) ${kind:-see log}; input ${crash:-none}; log $log"
	fi
	printf '%-18s execs %-10s exec/s %-7s cov %-6s %s\n' "$t" "${execs:-?}" "${rate:-?}" \
		"${cov:-?}" "$result"
done
exit $failed

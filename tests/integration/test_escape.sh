#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# The escape suite (tests/escape/run.sh) as one integration test, so that run.sh runs it as the
# current user and, when that is root, again as an unprivileged user. Each attack case prints
# one line (NAME blocked / ESCAPED / CONTROL-FAILED / not-protected-yet / n/a: reason); they are
# shown after the ok/FAIL line of this test. Any ESCAPED or CONTROL-FAILED fails it; known gaps
# and cases this kernel cannot run (n/a) do not.
. "$(dirname "$0")/lib.sh"

# Under memcheck the suite gets the binary itself: its cases look at agentbox as a file and at
# pid 1's identity (/proc/1/comm, /proc/1/exe), which under valgrind are valgrind's; the
# native runs of the suite are CI's plain and ASan+UBSan stages.
#
# The suite lives next to this directory; AGENTBOX_SOURCE (set by run.sh) is looked at first.
escape_runner() {
	local d
	for d in "${AGENTBOX_SOURCE:-}/tests/escape" "$TEST_DIR/../escape"; do
		if [ -r "$d/run.sh" ] && [ -r "$d/cases" ] && [ -x "$d/cases" ]; then
			(cd "$d" && pwd)
			return 0
		fi
	done
	return 1
}

t_escape() {
	local dir rc summary failed looked
	looked="${AGENTBOX_SOURCE:-?}/tests/escape and $TEST_DIR/../escape"
	dir=$(escape_runner) ||
		fail "tests/escape is missing or unreadable for $TEST_USER (looked in $looked)" \
			"if run.sh staged a copy of tests/integration for this user, make the source tree readable to it"
	ESCAPE_WORKDIR=$CASE AGENTBOX_PROFILES=$AGENTBOX_PROFILES ESCAPE_CASE_LIMIT=${ESCAPE_CASE_LIMIT:-60} \
		bash "$dir/run.sh" "$AGENTBOX_BIN" >"$META/escape.out" 2>&1 </dev/null
	rc=$?
	summary=$(grep '^escape: [0-9]* passed' "$META/escape.out" | tail -n 1)
	[ -n "$summary" ] || fail "the escape suite ended (status $rc) without its summary line" \
		"$(tail -n 20 "$META/escape.out")"
	failed=$(grep -E '^[a-z0-9_.]+ (ESCAPED|CONTROL-FAILED|COMPILE-FAILED)$' "$META/escape.out" | tr '\n' ' ')
	[ "$rc" -eq 0 ] || fail "$summary: ${failed:-see the listing below}"
	case "$summary" in *" 0 failed, "*" skipped") ;; *) fail "$summary (but the suite exited 0)" ;; esac
}

run_case escape t_escape
# the per-case lines, whatever the outcome (run_case keeps $META pointing at this case)
if [ -s "$META/escape.out" ]; then
	sed 's/^/    /' "$META/escape.out"
fi
finish

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# The short soak for CI (tests/soak.sh runs the long one): 500 runs in a row, 20 concurrent
# runs through the proxy, 20 supervisors SIGKILLed during setup, 1 GiB through a pipe; nothing
# may be left behind. Under memcheck (AGENTBOX is then a wrapper) the counts are smaller.
. "$(dirname "$0")/lib.sh"

t_soak() {
	local soak="$TEST_DIR/../soak.sh"
	[ -x "$soak" ] || fail "tests/soak.sh is not there or not executable"
	# Its parts run hundreds of sandboxes: on a machine where namespaces cost several times
	# more, or under ASan, that is minutes, not seconds. soak.sh bounds each run itself
	# (30 s), so a real hang is still named; this bounds the whole.
	local CMD_LIMIT=240
	if under_memcheck; then
		# a run takes ~0.7 s of CPU there: fewer of each, the same checks
		run_cmd "$soak" "$AGENTBOX" 40 5 10 268435456
	else
		run_cmd "$soak" "$AGENTBOX" 500 20 20 1073741824
	fi
	[ "$RC" = 0 ] || fail "the soak failed" "$(report)"
	assert_contains "$OUT" "soak: 4 passed, 0 failed" "the soak's summary"
}

run_case soak t_soak
finish

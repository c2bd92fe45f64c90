#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Exit statuses: the command's own, 125 when agentbox fails (and then nothing ran), 126 not
# executable, 127 not found, 128+N on a signal, 124 on timeout (and nothing left running).
. "$(dirname "$0")/lib.sh"

t_exit_0() {
	expect_exit 0 "$AGENTBOX" -p minimal -- /bin/true
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c 'exit 0'
}

t_exit_3() {
	expect_exit 3 "$AGENTBOX" -p minimal -- /bin/sh -c 'exit 3'
	expect_exit 3 "$AGENTBOX" -p shell -- sh -c 'exit 3'
}

# A profile error: 125, FILE:LINE on stderr, and the command never ran.
t_exit_125_bad_profile() {
	cat >good.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[filesystem]
		ro-try = /nonexistent-but-optional
	EOF
	cat >bad.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[filesystem]
		no-such-key = /usr
	EOF
	cat >badvalue.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini

		[network]
		mode = carrier-pigeon
	EOF
	# positive control: the same command with a good profile does run and touch the file
	expect_exit 0 "$AGENTBOX" -p ./good.ini -- sh -c 'touch "$1"' sh "$CASE/ran-good"
	assert_exists "$CASE/ran-good" "positive control: the command did not run with a good profile"

	expect_exit 125 "$AGENTBOX" -p ./bad.ini -- sh -c 'touch "$1"' sh "$CASE/ran-bad"
	assert_contains "$ERR" "bad.ini:4" "stderr names the bad line"
	assert_contains "$ERR" "no-such-key" "stderr names the bad key"
	assert_absent "$CASE/ran-bad" "the command ran although the profile was bad"

	expect_exit 125 "$AGENTBOX" -p ./badvalue.ini -- sh -c 'touch "$1"' sh "$CASE/ran-badvalue"
	assert_contains "$ERR" "badvalue.ini:5" "stderr names the line with the bad value"
	assert_absent "$CASE/ran-badvalue" "the command ran although the profile was bad"

	# a setup failure that is not a parse error: a required path is missing
	expect_exit 125 "$AGENTBOX" -p ./good.ini --ro "$CASE/missing" -- sh -c 'touch "$1"' sh \
		"$CASE/ran-missing"
	assert_contains "$ERR" "$CASE/missing" "stderr names the missing path"
	assert_absent "$CASE/ran-missing" "the command ran although setup failed"
}

t_exit_126_not_executable() {
	printf '#!/bin/sh\ntouch "$(dirname "$0")/ran"\n' >script.sh
	chmod 644 script.sh
	expect_exit 126 "$AGENTBOX" -p shell -- ./script.sh
	assert_contains "$ERR" "script.sh" "stderr names the command"
	assert_absent "$CASE/ran" "a non-executable script ran"
	# a directory is not executable either
	mkdir adir
	expect_exit 126 "$AGENTBOX" -p shell -- ./adir
	# positive control: the same file, executable, runs
	chmod 755 script.sh
	expect_exit 0 "$AGENTBOX" -p shell -- ./script.sh
	assert_exists "$CASE/ran" "positive control: the executable script did not run"
}

t_exit_127_not_found() {
	expect_exit 127 "$AGENTBOX" -p shell -- "no-such-command-$(unique)"
	assert_contains "$ERR" "not found" "stderr says the command was not found"
	# a program that exists on the host but outside the view is not found either
	expect_exit 127 "$AGENTBOX" -p minimal -- "$AGENTBOX" --version
	# positive control: the host can run it, and a command in the view is found
	expect_exit 0 "$AGENTBOX" --version
	expect_exit 0 "$AGENTBOX" -p minimal -- true
}

# A program that is there but whose interpreter is not: its #! line's program, or an ELF's
# dynamic loader (a view without the /lib64 link). Both are ENOENT to the kernel; the error
# names the missing interpreter, not "command not found". Control: the same program with the
# link runs.
t_exit_127_interpreter() {
	local loader
	# valgrind ends a process whose execve of an existing file fails (status 101)
	under_memcheck && not_applicable "under memcheck a failed exec of an existing file ends pid 1's child"
	loader=$(readelf -l /usr/bin/true 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
	[ -n "$loader" ] || not_applicable "readelf shows no program interpreter for /usr/bin/true"
	printf '[filesystem]\nro = /usr\nsymlink = usr/bin /bin\nsymlink = usr/lib /lib\n' >nolink.ini
	expect_exit 127 "$AGENTBOX" -p ./nolink.ini -- /usr/bin/true
	assert_contains "$ERR" "program interpreter $loader" "the missing loader is named"
	assert_contains "$ERR" "symlink = usr/lib64 /lib64" "the fix is named"
	assert_not_contains "$ERR" "command not found" "not blamed on the command"
	expect_exit 0 "$AGENTBOX" -p minimal -- /usr/bin/true
	printf '#!/nonexistent-%s/python\nprint(1)\n' "$(unique)" >script
	chmod +x script
	expect_exit 127 "$AGENTBOX" -p shell -- ./script
	assert_contains "$ERR" "its interpreter /nonexistent-" "the #! interpreter is named"
	assert_not_contains "$ERR" "command not found" "not blamed on the script"
}

t_exit_signal() {
	expect_exit 137 "$AGENTBOX" -p shell -- sh -c 'kill -KILL $$'
	expect_exit 143 "$AGENTBOX" -p shell -- sh -c 'kill -TERM $$'
	# positive control: the same shell, signalling itself with signal 0, exits normally
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c 'kill -0 $$'
}

t_exit_124_timeout() {
	local marker start end pids i seen=0
	marker="100.$(unique)" # sleep takes fractional seconds: a unique argv
	start=$(date +%s%N)
	"$AGENTBOX" -p minimal --timeout 1s -- sleep "$marker" >"$META/out" 2>"$META/err" &
	local pid=$!
	echo "$pid" >>"$META/bgpids"
	# positive control: while it runs, pgrep does find the sandboxed sleep by its argv
	# (for as long as the run lasts: under memcheck the start takes most of the second)
	while kill -0 "$pid" 2>/dev/null; do
		if pgrep -f "^sleep $marker\$" >/dev/null; then
			seen=1
			break
		fi
		sleep 0.02
	done
	wait "$pid"
	RC=$?
	end=$(date +%s%N)
	OUT=$(cat "$META/out")
	ERR=$(cat "$META/err")
	[ "$seen" = 1 ] || fail "positive control: pgrep never saw the sandboxed 'sleep $marker'" "$(report)"
	assert_eq 124 "$RC" "exit status after --timeout 1s"
	assert_contains "$ERR" "timeout" "stderr explains the timeout"
	local ms=$(((end - start) / 1000000))
	[ "$ms" -ge 900 ] || fail "the timeout fired after ${ms} ms, before 1 s"
	[ "$ms" -le 4500 ] || fail "the run took ${ms} ms; a 1 s timeout plus the 2 s grace should end it sooner"
	pids=$(pgrep -af "sleep $marker")
	[ -z "$pids" ] || fail "a sleep survived the timeout: $pids"
}

run_case exit_0 t_exit_0
run_case exit_3 t_exit_3
run_case exit_125_bad_profile t_exit_125_bad_profile
run_case exit_126_not_executable t_exit_126_not_executable
run_case exit_127_not_found t_exit_127_not_found
run_case exit_127_interpreter t_exit_127_interpreter
run_case exit_signal_137 t_exit_signal
run_case exit_124_timeout t_exit_124_timeout
finish

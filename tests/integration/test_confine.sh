#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Confinement: the system calls the default seccomp preset refuses (each refused with EPERM and
# named in the audit trail, while the same program gets through without the filter), the
# strict preset, the resource limits, capabilities and setuid, and Landlock as the fallback
# where no user namespace can be made.
. "$(dirname "$0")/lib.sh"

# helpers/audit_query.py: reads a trail (syscalls, get; its docstring says how)
AUDIT_PY="$HELPERS/audit_query.py"

# syscalls FILE: sets SYS to the syscall events of an audit trail (one summary line each).
syscalls() {
	[ -s "$1" ] || fail "no audit trail was written to $1" "$(report)"
	SYS=$("$PY" "$AUDIT_PY" "$1" syscalls) || fail "cannot read the audit trail $1" "$(cat "$1")"
}

# audit_get FILE EVENT KEY: prints KEY of each EVENT event.
audit_get() {
	"$PY" "$AUDIT_PY" "$1" get "$2" "$3" || fail "cannot read the audit trail $1" "$(cat "$1")"
}

# Profiles in the case directory, each including a bundled one by absolute path.
write_profiles() {
	cat >none.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[seccomp]
		preset = none
	EOF
	# no filter, and no per-namespace limit on user namespaces: a program may make a user
	# namespace of its own and hold capabilities there (what mount and AF_PACKET need)
	cat >nest.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		nesting = true
		[seccomp]
		preset = none
	EOF
	cat >strict.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[seccomp]
		preset = strict
	EOF
	cat >kill.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[seccomp]
		action = kill
	EOF
}

# refused MODE SYSCALL CONTROL WANT: `confine MODE` in the shell profile (default preset) fails
# with EPERM and the audit names SYSCALL (errno action, count 1); under the profile CONTROL
# (none or nest) the same program gets past seccomp: its RESULT line contains WANT (e.g. "ok",
# or "errno=E2BIG"; empty: anything but EPERM) and the audit names no system call.
refused() {
	local mode=$1 name=$2 control=$3 want=$4 bin
	bin=$(compile_helper confine)
	write_profiles
	run_cmd "$AGENTBOX" -p shell --audit "$META/deny.jsonl" --ro "$bin" -- "$bin" "$mode"
	assert_eq 1 "$RC" "exit status of 'confine $mode' under the default preset"
	assert_contains "$OUT" "RESULT errno=EPERM" "'confine $mode' under the default preset"
	syscalls "$META/deny.jsonl"
	assert_contains "$SYS" "name=$name action=errno errno=EPERM count=1 repeat=false" \
		"the audit's syscall event for $name"
	DENY_SYS=$SYS
	# positive control: without the filter the call reaches the kernel
	run_cmd "$AGENTBOX" -p "./$control.ini" --audit "$META/control.jsonl" --ro "$bin" -- "$bin" "$mode"
	assert_contains "$OUT" "RESULT ${want}" "positive control: 'confine $mode' under $control.ini"
	assert_not_contains "$OUT" "RESULT errno=EPERM" "positive control: 'confine $mode' under $control.ini"
	syscalls "$META/control.jsonl"
	assert_eq "" "$SYS" "positive control: syscall events under $control.ini"
}

# ------------------------------------------------------- refused calls ----

t_unshare_newuser() {
	refused unshare unshare nest ok
	# the logged argument is unshare's flags: CLONE_NEWUSER
	assert_contains "$DENY_SYS" "name=unshare action=errno errno=EPERM count=1 repeat=false a0=268435456" \
		"unshare's flags in the audit"
	# without nesting = true, a second layer answers even with no filter: the sandbox's user
	# namespace may have no children (max_user_namespaces 0), so ENOSPC, not the filter's EPERM
	run_cmd "$AGENTBOX" -p ./none.ini --ro "$(compile_helper confine)" -- "$(compile_helper confine)" unshare
	assert_contains "$OUT" "RESULT errno=ENOSPC" "unshare under preset none without nesting"
}

t_clone3_enosys() {
	local bin
	bin=$(compile_helper confine)
	write_profiles
	# ENOSYS so that libc falls back to clone, whose flags the filter reads; not a violation
	run_cmd "$AGENTBOX" -p shell --audit "$META/a.jsonl" --ro "$bin" -- "$bin" clone3
	assert_contains "$OUT" "RESULT errno=ENOSYS" "clone3 under the default preset"
	syscalls "$META/a.jsonl"
	assert_eq "" "$SYS" "syscall events for clone3 (it is not audited)"
	# positive control: without the filter clone3 works
	expect_exit 0 "$AGENTBOX" -p ./none.ini --ro "$bin" -- "$bin" clone3
	assert_contains "$OUT" "RESULT ok" "positive control: clone3 under preset none"
}

t_mount() {
	refused mount mount nest ok
}

t_ptrace_sibling() {
	refused ptrace ptrace none ok
}

# TIOCSTI on the command's terminal: stdin must be a pty the command shares (terminal: true in
# the start event), which script(1) provides.
tiocsti_case() {
	local mode=$1 request=$2 bin cmd
	bin=$(compile_helper confine)
	cmd=$(show_cmd "$AGENTBOX" -p shell --audit "$META/a.jsonl" --ro "$bin" -- "$bin" "$mode")
	run_cmd script -qec "$cmd" /dev/null
	assert_contains "$OUT" "INFO isatty=1" "the sandboxed command's stdin is a terminal"
	assert_contains "$OUT" "RESULT errno=EPERM" "ioctl($request) on the terminal in the sandbox"
	assert_eq true "$(audit_get "$META/a.jsonl" start terminal)" "the start event's terminal"
	syscalls "$META/a.jsonl"
	assert_contains "$SYS" "name=ioctl action=errno errno=EPERM count=1 repeat=false a0=- a1=$request" \
		"the audit's syscall event for ioctl"
	# positive control: outside the sandbox, on the terminal it controls, the same program gets
	# through (or, where dev.tty.legacy_tiocsti = 0, the kernel's own EIO)
	run_cmd script -qec "$(show_cmd "$bin" "$mode")" /dev/null
	assert_contains "$OUT" "INFO isatty=1" "positive control: stdin is a terminal on the host"
	assert_contains "$OUT" "RESULT " "positive control: the host run"
	assert_not_contains "$OUT" "RESULT errno=EPERM" "positive control: ioctl($request) on the host"
}

t_tiocsti() {
	tiocsti_case tiocsti 21522 # TIOCSTI = 0x5412
}

t_tiocsti_high_bits() {
	# the kernel reads the request as 32 bits: 0x100000000|TIOCSTI is TIOCSTI
	tiocsti_case tiocsti-hi 4294988818
}

# Before a refused-call case: the call on the host, without agentbox. A kernel built without
# it answers ENOSYS, and kernel.io_uring_disabled makes io_uring_setup EPERM for everyone it
# covers: then there is nothing for the filter to refuse, and the case is n/a.
kernel_lacks() {
	local mode=$1 bin off
	bin=$(compile_helper confine)
	run_cmd "$bin" "$mode"
	[[ "$OUT" == *"RESULT errno=ENOSYS"* ]] && not_applicable "this kernel has no $mode (ENOSYS on the host)"
	off=$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)
	[ "$mode" = io_uring ] && [ "$off" != 0 ] && [[ "$OUT" == *"RESULT errno=EPERM"* ]] &&
		not_applicable "io_uring is off (kernel.io_uring_disabled=$off)"
	return 0
}

t_io_uring() {
	kernel_lacks io_uring
	refused io_uring io_uring_setup none ok
}

t_bpf() {
	# without a filter the kernel answers E2BIG (oversized attr) before its permission check
	refused bpf bpf none errno=E2BIG
}

t_keyctl() {
	kernel_lacks keyctl
	refused keyctl keyctl none ok
}

t_perf_event_open() {
	# a software counter on itself: allowed up to perf_event_paranoid 2; Debian kernels default
	# to 3, where the kernel itself answers EACCES (still past the filter)
	refused perf perf_event_open none ""
}

t_userfaultfd() {
	kernel_lacks userfaultfd
	refused userfaultfd userfaultfd none ok
}

t_socket_packet() {
	refused packet socket nest ok
	assert_contains "$DENY_SYS" "name=socket action=errno errno=EPERM count=1 repeat=false a0=17" \
		"socket's family (AF_PACKET, 17) in the audit"
}

t_socket_sock_diag() {
	refused sockdiag socket none ok
	assert_contains "$DENY_SYS" "name=socket action=errno errno=EPERM count=1 repeat=false a0=16" \
		"socket's family (AF_NETLINK, 16) in the audit"
}

t_open_by_handle_at() {
	# without a filter: ESTALE (or success) from the kernel, past its permission check
	refused handle open_by_handle_at nest ""
	assert_contains "$DENY_SYS" "name=name_to_handle_at action=errno errno=EPERM" \
		"the audit's syscall event for name_to_handle_at"
}

# Another ABI's system call: the filter kills the process (SIGSYS, 128+31), which never returns
# to print a RESULT. The kernel kills it without asking agentbox, so the exit event tells.
killed_abi() {
	local mode=$1 bin
	bin=$(compile_helper confine)
	write_profiles
	run_cmd "$AGENTBOX" -p shell --audit "$META/a.jsonl" --ro "$bin" -- "$bin" "$mode"
	assert_eq 159 "$RC" "exit status of 'confine $mode' (killed by SIGSYS)"
	assert_not_contains "$OUT" "RESULT" "'confine $mode' printed a result after the call"
	assert_eq signaled "$(audit_get "$META/a.jsonl" exit cause)" "the exit event's cause"
	assert_eq 31 "$(audit_get "$META/a.jsonl" exit signal)" "the exit event's signal"
	# positive control: without a filter the process lives on and prints what it got
	run_cmd "$AGENTBOX" -p ./none.ini --ro "$bin" -- "$bin" "$mode"
	assert_contains "$OUT" "RESULT" "positive control: 'confine $mode' under preset none"
	[ "$RC" != 159 ] || fail "positive control: 'confine $mode' was killed under preset none" "$(report)"
}

t_x32_killed() {
	killed_abi x32
}

# Does this kernel run 32-bit system calls? Without IA32 emulation (not built in, off by
# default, ia32_emulation=0, or a hypervisor without the gate) int $0x80 raises a
# general-protection fault before any filter is asked: the helper reports exactly that fault
# (SIGSEGV with SI_KERNEL) as "RESULT nogate"; any other crash fails the control.
ia32_absent() {
	run_cmd "$1" int80
	[ "$RC" = 3 ] && [[ "$OUT" == *"RESULT nogate"* ]]
}

t_int80_killed() {
	local bin
	bin=$(compile_helper confine)
	ia32_absent "$bin" && not_applicable "no IA32 emulation: int \$0x80 raises a general-protection fault on the host"
	assert_contains "$OUT" "RESULT ok" "control: int 0x80 getpid on the host"
	killed_abi int80
	assert_contains "$OUT" "RESULT ok" "positive control: int 0x80 getpid under preset none"
}

t_action_kill() {
	local bin
	bin=$(compile_helper confine)
	write_profiles
	run_cmd "$AGENTBOX" -p ./kill.ini --audit "$META/a.jsonl" --ro "$bin" -- "$bin" unshare
	assert_eq 137 "$RC" "exit status with action = kill (SIGKILL)"
	assert_not_contains "$OUT" "RESULT" "the process printed a result after a refused call"
	syscalls "$META/a.jsonl"
	assert_contains "$SYS" "name=unshare action=kill errno=- count=1" "the audit's syscall event"
	assert_eq 9 "$(audit_get "$META/a.jsonl" exit signal)" "the exit event's signal"
	# positive control: with the default action the same program lives to print its EPERM
	run_cmd "$AGENTBOX" -p shell --ro "$bin" -- "$bin" unshare
	assert_eq 1 "$RC" "positive control: exit status with action = errno"
	assert_contains "$OUT" "RESULT errno=EPERM" "positive control: action = errno"
}

t_flood() {
	local bin
	bin=$(compile_helper confine)
	write_profiles
	expect_exit 0 "$AGENTBOX" -p shell --audit "$META/a.jsonl" --ro "$bin" -- "$bin" flood 100000
	assert_contains "$OUT" "calls=100000 EPERM=100000 " "the refused calls, all answered"
	syscalls "$META/a.jsonl"
	local want
	want=$(printf '%s\n' \
		"name=ptrace action=errno errno=EPERM count=1 repeat=false a0=- a1=-" \
		"name=ptrace action=errno errno=EPERM count=99999 repeat=true a0=- a1=-")
	assert_eq "$want" "$SYS" "the syscall events of 100000 refused ptrace calls (sum 100000)"
	expect_exit 0 "$AGENTBOX" audit verify "$META/a.jsonl"
	assert_contains "$OUT" "OK" "audit verify after the flood"
	# positive control: without the filter the same loop reaches the kernel (ESRCH: untraced)
	expect_exit 0 "$AGENTBOX" -p ./none.ini --audit "$META/control.jsonl" --ro "$bin" -- "$bin" flood 100000
	assert_contains "$OUT" "calls=100000 EPERM=0 ESRCH=100000 " "positive control: the loop under preset none"
	syscalls "$META/control.jsonl"
	assert_eq "" "$SYS" "positive control: syscall events under preset none"
}

# --------------------------------------------------------- strict preset ----

t_strict_preset() {
	local bin
	bin=$(compile_helper confine)
	write_profiles
	printf '#include <stdio.h>\nint main(void) { puts("hello-from-gcc"); return 0; }\n' >hello.c
	expect_exit 0 "$AGENTBOX" -p ./strict.ini -- /usr/bin/python3 -c 'print(1)'
	assert_eq 1 "$OUT" "python3 -c 'print(1)' under strict"
	expect_exit 0 "$AGENTBOX" -p ./strict.ini -- sh -c 'echo "sh-$((6 * 7))"; ls / >/dev/null && echo ls-ok'
	assert_eq "sh-42"$'\n'"ls-ok" "$OUT" "sh under strict"
	expect_exit 0 "$AGENTBOX" -p ./strict.ini -- git --version
	assert_contains "$OUT" "git version" "git --version under strict"
	expect_exit 0 "$AGENTBOX" -p ./strict.ini -- sh -c 'gcc -o hello hello.c && ./hello'
	assert_eq hello-from-gcc "$OUT" "gcc compile and run under strict"
	# a call off the allowlist: ENOSYS, named in the audit with errno ENOSYS
	run_cmd "$AGENTBOX" -p ./strict.ini --audit "$META/a.jsonl" --ro "$bin" -- "$bin" unshare
	assert_contains "$OUT" "RESULT errno=ENOSYS" "unshare under strict"
	syscalls "$META/a.jsonl"
	assert_contains "$SYS" "name=unshare action=errno errno=ENOSYS count=1" "the audit's syscall event"
	# positive control: the same program makes its namespace where nothing refuses it
	run_cmd "$AGENTBOX" -p ./nest.ini --ro "$bin" -- "$bin" unshare
	assert_contains "$OUT" "RESULT ok" "positive control: unshare under nest.ini"
}

# --------------------------------------------------------------- limits ----

# no_survivors PATTERN WHAT: fails if a process matching PATTERN (pgrep -f) is still alive.
no_survivors() {
	local left i
	for ((i = 0; i < 20; i++)); do
		left=$(pgrep -af -- "$1") || return 0
		sleep 0.1
	done
	fail "$2: processes survived the run: $left"
}

t_fork_bomb() {
	local bin mode
	bin=$(compile_helper hog)
	cat >procs.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		processes = 50
		timeout = 5s
	EOF
	# positive control: with shell.ini's limit (512) the helper does fork 100 children and
	# waits; the timeout ends it
	run_cmd "$AGENTBOX" -p shell --timeout 2s --ro "$bin" -- "$bin" fork 100
	assert_eq 124 "$RC" "positive control: exit status of 100 forks under a 2 s timeout"
	assert_contains "$OUT" "RESULT forks=100 capped" "positive control: 100 forks under shell.ini"
	no_survivors "$bin fork" "positive control"

	run_cmd "$AGENTBOX" -p ./procs.ini --audit "$META/a.jsonl" --ro "$bin" -- "$bin" fork 300
	mode=$(audit_get "$META/a.jsonl" start limits.mode)
	if [ "$(id -u)" = 0 ] && [ "$mode" = rlimits ]; then
		# RLIMIT_NPROC is not enforced for real root (the kernel exempts uid 0), and no cgroup
		# is writable here: the bomb is held only by the helper's own cap of 300 and the
		# timeout, which must end the run and leave no process behind
		assert_eq 124 "$RC" "exit status of the fork bomb as root (rlimits only: ends by timeout)"
	else
		# an ordinary user's RLIMIT_NPROC, or the run's cgroup (pids.max, which holds root
		# too): fork fails with EAGAIN before 50 processes
		assert_eq 1 "$RC" "exit status of the fork bomb under processes = 50 ($mode)"
		assert_contains "$OUT" "errno=EAGAIN" "the fork bomb under processes = 50 ($mode)"
		local n=${OUT#*forks=}
		n=${n%% *}
		[ "$n" -lt 50 ] || fail "the fork bomb made $n processes under processes = 50" "$(report)"
	fi
	no_survivors "$bin fork" "the fork bomb"
}

# A run whose cgroup cannot hold even the command (processes = 1: pid 1 is the one) stops with
# 125, and the line names fork's own reason (EAGAIN from pids.max), not whatever pid 1 did after.
t_no_room_for_command() {
	local mode
	cat >one.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/minimal.ini
		[limits]
		processes = 1
	EOF
	# positive control: the same profile without the limit runs the command
	expect_exit 0 "$AGENTBOX" -p minimal -- /bin/true
	run_cmd "$AGENTBOX" -p ./one.ini --audit "$META/one.jsonl" -- /bin/true
	mode=$(audit_get "$META/one.jsonl" start limits.mode)
	# RLIMIT_NPROC binds the command's own forks only (pid 1 sets it in the child), so without a
	# writable cgroup the command does run
	case $mode in cgroup1 | cgroup2) ;; *) not_applicable "no writable cgroup here (limits.mode $mode)" ;; esac
	assert_eq 125 "$RC" "exit status when pids.max leaves no room for the command"
	assert_contains "$ERR" "fork of the command: Resource temporarily unavailable" \
		"the reason for a command that could not be forked"
}

t_memory_bomb() {
	local bin
	bin=$(compile_helper hog)
	cat >mem.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		memory = 256M
	EOF
	# positive control: without the limit 384 MiB (more than the limit) can be had
	expect_exit 0 "$AGENTBOX" -p shell --ro "$bin" -- "$bin" alloc 384
	assert_contains "$OUT" "RESULT alloc ok MB=384" "positive control: 384 MiB without a memory limit"
	run_cmd "$AGENTBOX" -p ./mem.ini --audit "$META/mem.jsonl" --ro "$bin" -- "$bin" alloc 1024
	# valgrind keeps RLIMIT_DATA to itself (its setrlimit does not reach the kernel), so under
	# memcheck an rlimits-mode limit never reaches the command
	if under_memcheck && grep -q '"mode":"rlimits"' "$META/mem.jsonl"; then
		not_applicable "under memcheck RLIMIT_DATA stays in valgrind"
	fi
	[ "$RC" != 0 ] || fail "the memory bomb exited 0 under memory = 256M" "$(report)"
	assert_contains "$OUT" "RESULT alloc failed after" "the allocation under memory = 256M"
}

t_file_size() {
	cat >fsize.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		file-size = 10M
	EOF
	cat >fsize64.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		file-size = 64M
	EOF
	# positive control: 20 MiB is written where the limit is 64M
	expect_exit 0 "$AGENTBOX" -p ./fsize64.ini -- dd if=/dev/zero of=small bs=1M count=20 status=none
	assert_eq 20971520 "$(stat -c %s small)" "positive control: size of the 20 MiB file"
	rm -f small
	run_cmd "$AGENTBOX" -p ./fsize.ini --audit "$META/a.jsonl" -- dd if=/dev/zero of=big bs=1M count=2048 status=none
	assert_eq 153 "$RC" "exit status of writing 2 GiB under file-size = 10M (SIGXFSZ)"
	local size
	size=$(stat -c %s big)
	[ "$size" -le 10485760 ] || fail "the file grew to $size bytes under file-size = 10M"
	assert_eq file-size "$(audit_get "$META/a.jsonl" limit limit)" "the audit's limit event"
	assert_eq file-size "$(audit_get "$META/a.jsonl" exit limit)" "the exit event's limit"
	assert_contains "$ERR" "file-size" "stderr names the limit"
	rm -f big
}

t_cpu() {
	local bin
	bin=$(compile_helper hog)
	cat >cpu1.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		cpu = 1
	EOF
	cat >cpu3.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[limits]
		cpu = 3
	EOF
	# positive control: 1 s of CPU is allowed under cpu = 3
	expect_exit 0 "$AGENTBOX" -p ./cpu3.ini --ro "$bin" -- "$bin" spin 1
	assert_contains "$OUT" "RESULT spin done" "positive control: 1 s of CPU under cpu = 3"
	run_cmd "$AGENTBOX" -p ./cpu1.ini --audit "$META/a.jsonl" --ro "$bin" -- "$bin" spin 5
	assert_eq 152 "$RC" "exit status of a CPU spin under cpu = 1 (SIGXCPU)"
	assert_not_contains "$OUT" "spin done" "the spin under cpu = 1"
	assert_eq cpu "$(audit_get "$META/a.jsonl" limit limit)" "the audit's limit event"
	assert_eq cpu "$(audit_get "$META/a.jsonl" exit limit)" "the exit event's limit"
}

t_timeout_no_survivors() {
	local m1 m2 i seen1=0 seen2=0 pid
	m1="1000.$(unique)1"
	m2="1000.$(unique)2"
	# the command sleeps; a grandchild started by a double fork sits in a session of its own
	"$AGENTBOX" -p shell --timeout 1s --audit "$META/a.jsonl" -- sh -c \
		'(setsid sleep "$2" &); sleep "$1"' sh "$m1" "$m2" >"$META/out" 2>"$META/err" &
	pid=$!
	echo "$pid" >>"$META/bgpids"
	# positive control: while the run lasts, pgrep sees both sleeps by their argv (watched for
	# as long as the run lives: under memcheck or load its start-up alone can take seconds)
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		pgrep -f "^sleep $m1\$" >/dev/null && seen1=1
		pgrep -f "^sleep $m2\$" >/dev/null && seen2=1
		[ "$seen1$seen2" = 11 ] && break
		sleep 0.05
	done
	wait "$pid"
	RC=$?
	OUT=$(cat "$META/out")
	ERR=$(cat "$META/err")
	[ "$seen1" = 1 ] || fail "positive control: pgrep never saw 'sleep $m1'" "$(report)"
	[ "$seen2" = 1 ] || fail "positive control: pgrep never saw the setsid grandchild 'sleep $m2'" "$(report)"
	assert_eq 124 "$RC" "exit status after --timeout 1s"
	assert_eq timeout "$(audit_get "$META/a.jsonl" exit limit)" "the exit event's limit"
	no_survivors "sleep $m1" "the command"
	no_survivors "sleep $m2" "the double-forked setsid grandchild"
}

# --------------------------------------------------- capabilities, setuid ----

t_caps_zero() {
	# positive control: the host's bounding set is not empty, so zeros below are the sandbox's
	local host_bnd
	host_bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
	[ "$host_bnd" != 0000000000000000 ] || fail "positive control: the host's CapBnd is already empty"
	expect_exit 0 "$AGENTBOX" -p shell -- cat /proc/self/status
	local f v
	for f in CapInh CapPrm CapEff CapBnd CapAmb; do
		v=$(printf '%s\n' "$OUT" | awk -v f="$f:" '$1 == f {print $2}')
		assert_eq 0000000000000000 "$v" "$f in the sandbox"
	done
	v=$(printf '%s\n' "$OUT" | awk '$1 == "NoNewPrivs:" {print $2}')
	assert_eq 1 "$v" "NoNewPrivs in the sandbox"
}

t_setuid_ignored() {
	local dir
	# a directory outside $WORK (which only its owner may enter), so that nobody reaches it
	dir=$(mktemp -d /tmp/agentbox-suid.XXXXXX) || fail "mktemp"
	remove_later "$dir"
	chmod 755 "$dir"
	cp /usr/bin/id "$dir/id"
	# every bind is nosuid: the mount entry of the bound directory says so
	expect_exit 0 "$AGENTBOX" -p shell --ro "$dir" -- cat /proc/self/mountinfo
	local line
	line=$(printf '%s\n' "$OUT" | awk -v d="$dir" '$5 == d')
	[ -n "$line" ] || fail "positive control: no mount entry for $dir in the sandbox" "$(report)"
	case " ${line%% - *} " in
	*[\ ,]nosuid[\ ,]*) ;;
	*) fail "the bind of $dir is not nosuid: $line" ;;
	esac
	# positive control: on the host the directory's file system is not nosuid
	if findmnt -n -o OPTIONS -T "$dir" | tr , '\n' | grep -qx nosuid; then
		fail "positive control: $dir is on a nosuid file system on the host already"
	fi
	[ "$(id -u)" = 0 ] || return 0
	# as root: a setuid-root copy of id. Positive control: on the host it does raise nobody's
	# euid to 0.
	chown root:root "$dir/id"
	chmod 4755 "$dir/id"
	run_cmd setpriv --reuid=65534 --regid=65534 --clear-groups "$dir/id" -u
	assert_eq 0 "$OUT" "positive control: euid from the setuid-root id run by nobody on the host"
	# Inside, the command runs as uid 1000 (the caller's uid 0 maps to it); the euid stays the
	# real uid. (With one id mapped, a file owned by anyone else is unmapped in the sandbox and
	# its set-id bits could not apply anyway; nosuid above and NoNewPrivs are the guards.)
	cat >uid.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		uid = 1000
		gid = 1000
	EOF
	expect_exit 0 "$AGENTBOX" -p ./uid.ini --ro "$dir" -- sh -c \
		'stat -c %a "$1"; "$1" -ru; "$1" -u' sh "$dir/id"
	assert_eq "4755"$'\n'"1000"$'\n'"1000" "$OUT" "mode, real and effective uid of the setuid copy inside"
}

# ------------------------------------------------------ Landlock fallback ----

# An outer sandbox (default preset: no user namespace can be made inside it) runs an inner
# agentbox. The outer command needs no uid mapping for this: the fallback makes no namespace, so
# it works as root too.
write_nesting_profiles() {
	mkdir data
	echo allowed-content >data/allowed.txt
	echo sibling-content >data/sibling.txt
	cat >outer.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/minimal.ini
		[filesystem]
		ro = $AGENTBOX_BIN
		ro = $AGENTBOX_PROFILES
		ro = $CASE/data
	EOF
	cat >data/fallback.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/minimal.ini
		fallback = landlock
		[filesystem]
		ro = $CASE/data/allowed.txt
	EOF
	cat >data/plain.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/minimal.ini
		[filesystem]
		ro = $CASE/data/allowed.txt
	EOF
}

t_landlock_fallback() {
	write_nesting_profiles
	local outer=("$AGENTBOX" -p ./outer.ini --)
	# positive control: the outer sandbox reads both files
	expect_exit 0 "${outer[@]}" cat "$CASE/data/allowed.txt" "$CASE/data/sibling.txt"
	assert_eq "allowed-content"$'\n'"sibling-content" "$OUT" "positive control: the outer sandbox reads both files"
	expect_exit 0 "${outer[@]}" "$AGENTBOX_BIN" -p "$CASE/data/fallback.ini" -- sh -c \
		'cat "$1"; cat "$2"; echo "sibling-rc=$?"' sh "$CASE/data/allowed.txt" "$CASE/data/sibling.txt"
	assert_contains "$ERR" "warning: user namespaces are unavailable" "the inner run's fallback warning"
	assert_contains "$OUT" "allowed-content" "the file the inner profile lists"
	assert_not_contains "$OUT" "sibling-content" "the sibling the inner profile does not list"
	assert_contains "$OUT" "sibling-rc=1" "cat of the sibling in the fallback run"
	assert_contains "$ERR" "sibling.txt: Permission denied" "the sibling's error (EACCES from Landlock)"
}

# Without a network namespace the proxy cannot be the only way out: a fallback run in proxy mode
# is refused, not run on the host's network. Control: the same profile with mode = none runs.
t_fallback_refuses_proxy() {
	write_nesting_profiles
	{ cat data/fallback.ini; printf '[network]\nmode = proxy\nallow = 127.0.0.1:1\n'; } \
		>data/proxy.ini
	expect_exit 125 "$AGENTBOX" -p ./outer.ini -- "$AGENTBOX_BIN" -p "$CASE/data/proxy.ini" -- \
		echo RAN
	assert_contains "$ERR" "mode = proxy needs a network namespace" "the fallback's refusal"
	assert_not_contains "$OUT" RAN "the command ran"
	expect_exit 0 "$AGENTBOX" -p ./outer.ini -- "$AGENTBOX_BIN" -p "$CASE/data/fallback.ini" -- \
		echo RAN
	assert_contains "$ERR" "user namespaces are unavailable" "control: the inner run is a fallback"
	assert_contains "$OUT" RAN "control: the fallback runs with mode = none"
}

t_no_fallback_stops() {
	write_nesting_profiles
	expect_exit 125 "$AGENTBOX" -p ./outer.ini -- "$AGENTBOX_BIN" -p "$CASE/data/plain.ini" -- \
		cat "$CASE/data/allowed.txt"
	assert_contains "$ERR" "cannot create a user namespace" "the inner agentbox's error"
	assert_not_contains "$OUT" "allowed-content" "the inner command ran"
	# positive control: the same inner profile works where user namespaces can be made
	expect_exit 0 "$AGENTBOX" -p "$CASE/data/plain.ini" -- cat "$CASE/data/allowed.txt"
	assert_eq allowed-content "$OUT" "positive control: the inner profile on the host"
}

run_case fallback_refuses_proxy t_fallback_refuses_proxy
run_case unshare_newuser t_unshare_newuser
run_case clone3_enosys t_clone3_enosys
run_case mount t_mount
run_case ptrace_sibling t_ptrace_sibling
run_case tiocsti t_tiocsti
run_case tiocsti_high_bits t_tiocsti_high_bits
run_case io_uring_setup t_io_uring
run_case bpf t_bpf
run_case keyctl t_keyctl
run_case perf_event_open t_perf_event_open
run_case userfaultfd t_userfaultfd
run_case socket_af_packet t_socket_packet
run_case socket_netlink_sock_diag t_socket_sock_diag
run_case open_by_handle_at t_open_by_handle_at
run_case x32_killed t_x32_killed
run_case int80_killed t_int80_killed
run_case action_kill t_action_kill
run_case flood_100000 t_flood
run_case strict_preset t_strict_preset
run_case limit_fork_bomb t_fork_bomb
run_case limit_no_room_for_command t_no_room_for_command
run_case limit_memory t_memory_bomb
run_case limit_file_size t_file_size
run_case limit_cpu t_cpu
run_case timeout_no_survivors t_timeout_no_survivors
run_case caps_zero t_caps_zero
run_case setuid_ignored t_setuid_ignored
run_case landlock_fallback t_landlock_fallback
run_case no_fallback_stops t_no_fallback_stops
finish

#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# The filesystem and process view: what the command can see and change. Every security case
# first shows the same action succeeding where the policy allows it (a positive control), so a
# check that can never succeed (a typo, a missing tool) cannot make a case pass.
. "$(dirname "$0")/lib.sh"

# probe OPTIONS... PATH: runs `agentbox OPTIONS -- sh` and sets VIS to PRESENT or ABSENT for
# PATH inside the sandbox.
probe() {
	local path=${*: -1}
	local opts=("${@:1:$#-1}")
	expect_exit 0 "$AGENTBOX" "${opts[@]}" -- sh -c \
		'if [ -e "$1" ] || [ -L "$1" ]; then echo PRESENT; else echo ABSENT; fi' sh "$path"
	VIS=$OUT
}

# ------------------------------------------------------------ absent ----

t_shadow_absent() {
	[ -e /etc/shadow ] || fail "positive control: /etc/shadow does not exist on the host"
	probe -p shell --ro /etc/shadow /etc/shadow
	assert_eq PRESENT "$VIS" "positive control: /etc/shadow with --ro /etc/shadow"
	probe -p shell /etc/passwd
	assert_eq PRESENT "$VIS" "positive control: -p shell shows /etc/passwd (so /etc is there)"
	probe -p shell /etc/shadow
	assert_eq ABSENT "$VIS" "/etc/shadow under -p shell"
}

t_root_absent() {
	[ -d /root ] || fail "positive control: /root does not exist on the host"
	probe -p shell --ro /root /root
	assert_eq PRESENT "$VIS" "positive control: /root with --ro /root"
	probe -p shell /root
	assert_eq ABSENT "$VIS" "/root under -p shell"
}

t_home_absent() {
	[ -n "${HOME:-}" ] && [ -d "$HOME" ] ||
		fail "positive control: the caller's HOME (${HOME:-unset}) is not a directory on the host"
	probe -p shell --ro "$HOME" "$HOME"
	assert_eq PRESENT "$VIS" "positive control: $HOME with --ro $HOME"
	probe -p shell "$HOME"
	assert_eq ABSENT "$VIS" "the caller's HOME ($HOME) under -p shell"
	probe -p python "$HOME"
	assert_eq ABSENT "$VIS" "the caller's HOME ($HOME) under -p python"
}

# ------------------------------------------------------- ro and rw ----

t_ro_rejects_writes() {
	local write='(echo new > "$1/f") 2>&1; echo "write=$?"; (touch "$1/created") 2>&1;
		echo "create=$?"; (rm -f "$1/f") 2>&1; echo "remove=$?"'
	mkdir data && echo orig >data/f
	# positive control: with --rw the same script succeeds and the host sees it
	expect_exit 0 "$AGENTBOX" -p minimal --rw "$CASE/data" -- sh -c "$write"' ; echo x > "$1/f"' \
		sh "$CASE/data"
	assert_contains "$OUT" "write=0" "positive control: write under --rw"
	assert_contains "$OUT" "create=0" "positive control: create under --rw"
	assert_exists "$CASE/data/created" "positive control: file created under --rw"
	rm -f data/created && echo orig >data/f

	for profile in minimal shell; do # shell: a --ro dir inside the rw ${CWD}
		expect_exit 0 "$AGENTBOX" -p "$profile" --ro "$CASE/data" -- sh -c "$write" sh "$CASE/data"
		assert_contains "$OUT" "Read-only file system" "-p $profile --ro: the write error"
		assert_not_contains "$OUT" "write=0" "-p $profile --ro: writing a file succeeded"
		assert_not_contains "$OUT" "create=0" "-p $profile --ro: creating a file succeeded"
		assert_not_contains "$OUT" "remove=0" "-p $profile --ro: removing a file succeeded"
		assert_eq orig "$(cat data/f 2>&1)" "-p $profile --ro: the host file's content"
		assert_absent "$CASE/data/created" "-p $profile --ro: a file appeared on the host"
	done
}

t_rw_writes_reach_host() {
	mkdir data && echo orig >data/f
	expect_exit 0 "$AGENTBOX" -p minimal --rw "$CASE/data" -- sh -c \
		'echo changed > "$1/f" && mkdir "$1/newdir" && echo hello > "$1/newdir/new"' sh "$CASE/data"
	assert_eq changed "$(cat data/f)" "the host sees the changed file"
	assert_eq hello "$(cat data/newdir/new 2>&1)" "the host sees the new file"
	# the shell profile's rw ${CWD}
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c 'echo from-cwd > cwd-file'
	assert_eq from-cwd "$(cat cwd-file 2>&1)" "the host sees a file written to -p shell's \${CWD}"
}

# ------------------------------------------------------------- hide ----

t_hide_file() {
	mkdir d && echo TOPSECRET >d/secret && echo public >d/public
	local show='if [ -e "$1/secret" ]; then echo EXISTS; fi; cat "$1/secret"; echo "cat=$?";
		cat "$1/public"'
	expect_exit 0 "$AGENTBOX" -p minimal --ro "$CASE/d" -- sh -c "$show" sh "$CASE/d"
	assert_contains "$OUT" TOPSECRET "positive control: the file is readable without --hide"
	expect_exit 0 "$AGENTBOX" -p minimal --ro "$CASE/d" --hide "$CASE/d/secret" -- sh -c "$show" \
		sh "$CASE/d"
	assert_contains "$OUT" EXISTS "the hidden file still exists"
	assert_not_contains "$OUT" TOPSECRET "the hidden file's content"
	assert_not_contains "$OUT" "cat=0" "opening the hidden file succeeded"
	assert_contains "$OUT" public "a sibling of the hidden file stays readable"
}

t_hide_dir() {
	mkdir -p d/sub && echo a >d/sub/a && echo b >d/sub/b
	local show='if [ -d "$1/sub" ]; then echo ISDIR; fi; echo "[$(ls -A "$1/sub")]"'
	expect_exit 0 "$AGENTBOX" -p minimal --ro "$CASE/d" -- sh -c "$show" sh "$CASE/d"
	assert_contains "$OUT" "[a"$'\n'"b]" "positive control: the directory's listing without --hide"
	expect_exit 0 "$AGENTBOX" -p minimal --ro "$CASE/d" --hide "$CASE/d/sub" -- sh -c "$show" \
		sh "$CASE/d"
	assert_contains "$OUT" ISDIR "the hidden directory is still a directory"
	assert_contains "$OUT" "[]" "the hidden directory is empty"
}

t_hide_under_rw() {
	echo TOPSECRET >secret.txt && mkdir private && echo KEYDATA >private/key
	local show='cat secret.txt; echo "cat=$?"; (echo overwritten > secret.txt) 2>&1; echo "write=$?";
		echo "[$(ls -A private)]"; (touch private/new) 2>&1; echo "touch=$?";
		echo fine > normal.txt; echo "normal=$?"'
	# positive control: without --hide the command reads both (and may write them)
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c 'cat secret.txt; ls -A private'
	assert_contains "$OUT" TOPSECRET "positive control: secret.txt readable without --hide"
	assert_contains "$OUT" key "positive control: private/ listed without --hide"
	expect_exit 0 "$AGENTBOX" -p shell --hide "$CASE/secret.txt" --hide "$CASE/private" -- \
		sh -c "$show"
	assert_not_contains "$OUT" TOPSECRET "the hidden file's content"
	assert_not_contains "$OUT" "cat=0" "reading the hidden file succeeded"
	assert_not_contains "$OUT" "write=0" "writing the hidden file succeeded"
	assert_contains "$OUT" "[]" "the hidden directory is empty"
	assert_not_contains "$OUT" "touch=0" "creating a file in the hidden directory succeeded"
	assert_contains "$OUT" "normal=0" "the rest of the rw directory stays writable"
	assert_eq TOPSECRET "$(cat secret.txt)" "the hidden file on the host"
	assert_absent "$CASE/private/new" "a file created in the hidden directory"
	assert_eq KEYDATA "$(cat private/key)" "the hidden directory's file on the host"
	assert_eq fine "$(cat normal.txt 2>&1)" "the host sees the write next to the hidden paths"
}

# ------------------------------------------------- processes, uts, tmp ----

t_proc_private() {
	local marker host_n
	marker="300.$(unique)"
	bg sleep "$marker"
	local hostpid=$BG_PID
	# positive control: the host sees that process, and many others
	[ -d "/proc/$hostpid" ] || fail "positive control: /proc/$hostpid missing on the host"
	host_n=$(ls /proc | grep -c '^[0-9][0-9]*$')
	[ "$host_n" -gt 6 ] || fail "positive control: the host shows only $host_n processes"
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c '
		echo "comm1=$(cat /proc/1/comm)"
		echo "npids=$(ls /proc | grep -c "^[0-9][0-9]*$")"
		if [ -e "/proc/$1" ]; then echo "visible-$1-pid"; fi
		ps -eo pid=,args=' sh "$hostpid"
	# (under memcheck pid 1 is a fork of valgrind, named for its tool)
	local init=agentbox
	! under_memcheck || init=memcheck-amd64-
	assert_contains "$OUT" "comm1=$init" "pid 1 in the sandbox"
	# (ps prints the script itself, so the token is built at run time: visible-PID-pid)
	assert_not_contains "$OUT" "visible-$hostpid-pid" "the host's process $hostpid in the sandbox's /proc"
	assert_not_contains "$OUT" "sleep $marker" "ps inside the sandbox lists the host's sleep"
	local n
	n=$(printf '%s\n' "$OUT" | sed -n 's/^npids=//p')
	[ -n "$n" ] && [ "$n" -le 6 ] || fail "the sandbox's /proc lists $n processes (expected at most 6)" "$(report)"
	local ps_lines
	ps_lines=$(printf '%s\n' "$OUT" | grep -cE '^ *[0-9]+ ')
	[ "$ps_lines" -le 6 ] || fail "ps inside the sandbox lists $ps_lines processes" "$(report)"
	printf '%s\n' "$OUT" | grep -qE '^ *1 .*agentbox' || fail "ps does not show agentbox as pid 1" "$(report)"
}

t_hostname() {
	local before after
	before=$(uname -n)
	cat >named.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		hostname = it-other-name
	EOF
	# positive control: the test really reads the sandbox's host name, which a profile can set
	expect_exit 0 "$AGENTBOX" -p ./named.ini -- uname -n
	assert_eq it-other-name "$OUT" "positive control: [sandbox] hostname = it-other-name"
	expect_exit 0 "$AGENTBOX" -p shell -- sh -c 'uname -n; cat /proc/sys/kernel/hostname'
	assert_eq "agentbox"$'\n'"agentbox" "$OUT" "the sandbox's host name"
	after=$(uname -n)
	assert_eq "$before" "$after" "the host's name after the runs"
}

t_tmp_private() {
	local u hostmark
	u=$(unique)
	hostmark=/tmp/.agentbox-it-hostmark.$u
	remove_later "$hostmark"
	remove_later "/tmp/.agentbox-it-inside.$u"
	: >"$hostmark"
	# positive control: the host's /tmp is not empty
	[ -n "$(ls -A /tmp)" ] || fail "positive control: the host's /tmp is empty"
	expect_exit 0 "$AGENTBOX" -p minimal -- sh -c '
		echo "[$(ls -A /tmp)]"
		echo inside > "/tmp/.agentbox-it-inside.$1" && cat "/tmp/.agentbox-it-inside.$1"' sh "$u"
	assert_contains "$OUT" "[]" "the sandbox's /tmp is empty"
	assert_contains "$OUT" "inside" "the sandbox's /tmp is writable"
	assert_absent "/tmp/.agentbox-it-inside.$u" "a file written to the sandbox's /tmp"
}

# ---------------------------------------------------- agentbox's files ----

t_own_binary_hidden() {
	probe -p shell "$AGENTBOX_BIN"
	assert_eq ABSENT "$VIS" "agentbox's own binary ($AGENTBOX_BIN) under -p shell"
	# positive control: bound, it is visible and runs
	probe -p shell --ro "$(dirname "$AGENTBOX_BIN")" "$AGENTBOX_BIN"
	assert_eq PRESENT "$VIS" "positive control: the binary with --ro $(dirname "$AGENTBOX_BIN")"
	expect_exit 0 "$AGENTBOX" -p shell --ro "$(dirname "$AGENTBOX_BIN")" -- "$AGENTBOX_BIN" --version

	# a copy run from inside the rw ${CWD}: visible, but read-only, while its siblings are not
	mkdir bin && cp "$AGENTBOX_BIN" bin/agentbox
	# (while it runs, writing the binary fails with ETXTBSY before the mount is even looked at,
	# so read-only is checked with chmod and utime, which only the mount can refuse, and in
	# the mount table)
	echo data >bin/sibling
	local mode
	mode=$(stat -c %a bin/agentbox)
	expect_exit 0 "$CASE/bin/agentbox" -p shell -- sh -c '
		if [ -e bin/agentbox ]; then echo PRESENT; fi
		(echo garbage >> bin/agentbox) 2>&1; echo "append=$?"
		chmod 777 bin/agentbox 2>&1; echo "chmod=$?"
		touch -d @0 bin/agentbox 2>&1; echo "utime=$?"
		chmod 600 bin/sibling && touch -d @0 bin/sibling && echo data >> bin/sibling; echo "sibling=$?"
		echo "mountopts=$(grep " $1 " /proc/self/mountinfo | cut -d" " -f6)"' sh "$CASE/bin/agentbox"
	assert_contains "$OUT" PRESENT "the binary under an rw directory is visible"
	assert_contains "$OUT" "sibling=0" "positive control: chmod, utime and append on a sibling file"
	assert_not_contains "$OUT" "append=0" "appending to agentbox's binary succeeded"
	assert_not_contains "$OUT" "chmod=0" "chmod of agentbox's binary succeeded"
	assert_not_contains "$OUT" "utime=0" "changing the times of agentbox's binary succeeded"
	assert_contains "$OUT" "Read-only file system" "chmod/utime of agentbox's binary"
	assert_contains "$OUT" "mountopts=ro," "the binary's mount in /proc/self/mountinfo"
	cmp -s "$AGENTBOX_BIN" bin/agentbox || fail "agentbox's binary changed on the host"
	assert_eq "$mode" "$(stat -c %a bin/agentbox)" "the binary's mode on the host"
	assert_eq 600 "$(stat -c %a bin/sibling)" "positive control: the sibling's mode on the host"
}

t_audit_file_hidden() {
	local out="$META/audit.jsonl"
	# outside the view: invisible
	probe -p shell --audit "$out" "$out"
	assert_eq ABSENT "$VIS" "the audit file outside the view"
	[ -s "$out" ] && grep -q '"event":"start"' "$out" ||
		fail "positive control: the audit file $out was not written"
	# inside the rw ${CWD}: an unopenable node stands in (nothing of the trail is readable)
	expect_exit 0 "$AGENTBOX" -p shell --audit "$CASE/audit.jsonl" -- sh -c '
		if [ -e audit.jsonl ]; then echo PRESENT; fi
		(cat audit.jsonl) 2>&1; echo "read=$?"
		x=FORG; (echo "{\"${x}ED\":1}" >> audit.jsonl) 2>&1; echo "append=$?"
		(: > audit.jsonl) 2>&1; echo "truncate=$?"
		echo data > sibling; echo "sibling=$?"'
	assert_contains "$OUT" PRESENT "the audit file's stand-in under an rw directory"
	assert_contains "$OUT" "sibling=0" "positive control: the audit file's directory is writable"
	assert_contains "$OUT" "Permission denied" "reading and writing the audit file"
	assert_not_contains "$OUT" '"event":"start"' "reading the audit file inside"
	assert_not_contains "$OUT" "read=0" "reading the audit file succeeded"
	assert_not_contains "$OUT" "append=0" "appending to the audit file succeeded"
	assert_not_contains "$OUT" "truncate=0" "truncating the audit file succeeded"
	# (the start event records the script, so the forged line's token is built at run time)
	grep -q FORGED audit.jsonl && fail "the command forged an audit line: $(grep FORGED audit.jsonl)"
	head -n1 audit.jsonl | grep -q '"event":"start"' ||
		fail "the audit trail lost its first line: $(head -c 300 audit.jsonl)"
	grep -q '"event":"exit"' audit.jsonl || fail "the audit trail lost its exit event: $(cat audit.jsonl)"
}

t_profile_file_readonly() {
	cat >my.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
	EOF
	cp my.ini my.ini.orig
	expect_exit 0 "$AGENTBOX" -p ./my.ini -- sh -c '
		(echo "[filesystem]" >> my.ini) 2>&1; echo "append=$?"
		echo data > sibling; echo "sibling=$?"'
	assert_contains "$OUT" "sibling=0" "positive control: the profile's directory is writable"
	assert_not_contains "$OUT" "append=0" "appending to the profile in use succeeded"
	cmp -s my.ini my.ini.orig || fail "the profile changed on the host: $(cat my.ini)"
}

# ------------------------------------------------------ mount points ----

t_no_host_mountpoints() {
	mkdir existing
	# positive control: a tmpfs on a directory that exists works, and stays private
	expect_exit 0 "$AGENTBOX" -p shell --tmpfs "$CASE/existing" -- sh -c \
		'echo x > existing/f && cat existing/f'
	assert_eq x "$OUT" "positive control: writing to --tmpfs on an existing directory"
	assert_absent "$CASE/existing/f" "a file written to the tmpfs"

	expect_exit 125 "$AGENTBOX" -p shell --tmpfs "$CASE/newdir" -- sh -c 'touch ran'
	assert_contains "$ERR" "newdir" "stderr names the mount point"
	assert_absent "$CASE/newdir" "--tmpfs created its mount point in the host directory"
	assert_absent "$CASE/ran" "the command ran although setup failed"

	expect_exit 125 "$AGENTBOX" -p shell --tmpfs "$CASE/newdir2/deeper" -- true
	assert_absent "$CASE/newdir2" "--tmpfs created a parent of its mount point on the host"

	# a symlink entry: on agentbox's own tmpfs it is fine, in a host directory it is refused
	cat >link-ok.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[filesystem]
		symlink = /usr/bin /agentbox-it-links/bin
	EOF
	cat >link-bad.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[filesystem]
		symlink = /etc $CASE/newlink
	EOF
	expect_exit 0 "$AGENTBOX" -p ./link-ok.ini -- readlink /agentbox-it-links/bin
	assert_eq /usr/bin "$OUT" "positive control: a symlink on agentbox's own tmpfs"
	expect_exit 125 "$AGENTBOX" -p ./link-bad.ini -- true
	assert_absent "$CASE/newlink" "a symlink entry created a link in the host directory"

	# hiding a path that does not exist has nothing to do, and must not create it
	expect_exit 0 "$AGENTBOX" -p shell --hide "$CASE/ghost" -- true
	assert_absent "$CASE/ghost" "--hide of a missing path created it on the host"
}

# ------------------------------------------------- symlink-swap race ----

# A directory and a symlink to /etc swap places atomically, as fast as possible, while agentbox
# binds the directory's path read-only 200 times. The sandbox may show the directory or refuse
# to run (125); it must never show /etc's contents at that path.
# A profile path that is a symlink is resolved once on the host and the audit records the
# resolved source; what must never happen is a bind redirected after that resolution. So each
# run's view is compared with the source its own audit trail recorded.
t_symlink_swap_race() {
	local swap spid i real=0 refused=0 etc=0 redirected=0 first_bad="" src
	swap=$(compile_helper swap)
	mkdir target && : >target/REAL_MARKER && ln -s /etc alt
	# positive controls: the directory is shown, and /etc's contents are recognised when bound
	expect_exit 0 "$AGENTBOX" -p minimal --ro "$CASE/target" -- ls -A "$CASE/target"
	assert_eq REAL_MARKER "$OUT" "positive control: the directory, without the swapper"
	expect_exit 0 "$AGENTBOX" -p minimal --ro /etc -- ls -A /etc
	assert_contains "$OUT" passwd "positive control: /etc's listing when /etc is bound"

	"$swap" "$CASE/target" "$CASE/alt" >"$META/swaps" 2>"$META/swap.err" </dev/null &
	spid=$!
	echo "$spid" >>"$META/bgpids"
	sleep 0.05
	for ((i = 0; i < 200; i++)); do
		rm -f "$META/run.jsonl"
		run_cmd "$AGENTBOX" -p minimal --audit "$META/run.jsonl" --ro "$CASE/target" -- ls -A "$CASE/target"
		if [ "$RC" = 125 ]; then
			refused=$((refused + 1))
			continue
		fi
		src=$(grep -o "\"path\":\"$CASE/target\",\"source\":\"[^\"]*\"" "$META/run.jsonl" | sed 's/.*"source":"//; s/"$//')
		if [ "$RC" = 0 ] && [ "$OUT" = REAL_MARKER ] && [ "$src" = "$CASE/target" ]; then
			real=$((real + 1))
		elif [ "$RC" = 0 ] && printf '%s\n' "$OUT" | grep -qx passwd && [ "$src" = /etc ]; then
			etc=$((etc + 1)) # the path was a symlink when read, and the audit says so
		else
			redirected=$((redirected + 1))
			[ -n "$first_bad" ] || first_bad="run $i: audit source '$src', exit $RC, shown: $(clip "$OUT" 200)"
		fi
	done
	kill -0 "$spid" 2>/dev/null || fail "the swapper died early: $(cat "$META/swap.err")"
	kill -TERM "$spid"
	wait "$spid"
	echo "200 runs, $(cat "$META/swaps") swaps: $real directory, $etc /etc (audited as /etc), $refused refused (125), $redirected redirected"
	[ "$redirected" = 0 ] || fail "$redirected runs showed something other than the source their audit recorded" "$first_bad"
	[ "$real" -gt 0 ] || fail "no run showed the directory: the race test proves nothing"
}

# A symlink inside a tree the command can write may have been planted by an earlier run: a
# bind through it is refused. Positive control: the same kind of link outside that tree works.
t_planted_symlink_refused() {
	mkdir -p ws/real && : >ws/real/MARKER && ln -s /etc ws/planted
	expect_exit 125 "$AGENTBOX" -p minimal --rw "$CASE/ws" --ro "$CASE/ws/planted" -- true
	assert_contains "$ERR" "symlink inside the writable tree" "the refusal names the cause"
	expect_exit 0 "$AGENTBOX" -p minimal --rw "$CASE/ws" --ro "$CASE/ws/real" -- ls "$CASE/ws/real"
	assert_eq MARKER "$OUT" "a real directory inside the writable tree is bound"
	ln -s /etc outside
	expect_exit 0 "$AGENTBOX" -p minimal --ro "$CASE/outside" -- ls -A "$CASE/outside"
	assert_contains "$OUT" passwd "a symlink outside every writable tree is resolved once and bound"
}

# /dev: the nodes, pts and shm, mounts of their own in a directory of the read-only root, whose
# mode does not follow the caller's umask. Positive control: the nodes and shm take writes.
t_dev_readonly() {
	local mask
	expect_exit 0 "$AGENTBOX" -p minimal -- sh -c 'echo x >/dev/null && : >/dev/shm/f && echo ok'
	assert_eq ok "$OUT" "positive control: /dev/null and /dev/shm take writes"
	mask=$(umask)
	umask 077
	expect_exit 0 "$AGENTBOX" -p minimal -- sh -c \
		'stat -c %a /dev; (: >/dev/new) 2>/dev/null; echo "create=$?"; ls /dev | tr "\n" " "'
	umask "$mask"
	assert_eq "755
create=2
fd full null ptmx pts random shm stderr stdin stdout tty urandom zero " "$OUT" \
		"/dev: mode 0755 under umask 077, no new entry, only agentbox's own"
	# the root itself may be bound (ro = /): its mount point is the root, not a new entry
	expect_exit 0 "$AGENTBOX" -p minimal --ro / -- true
}

run_case shadow_absent t_shadow_absent
run_case root_absent t_root_absent
run_case home_absent t_home_absent
run_case ro_rejects_writes t_ro_rejects_writes
run_case rw_writes_reach_host t_rw_writes_reach_host
run_case hide_file t_hide_file
run_case hide_dir t_hide_dir
run_case hide_under_rw t_hide_under_rw
run_case proc_private t_proc_private
run_case hostname t_hostname
run_case tmp_private t_tmp_private
run_case own_binary_hidden t_own_binary_hidden
run_case audit_file_hidden t_audit_file_hidden
run_case profile_file_readonly t_profile_file_readonly
run_case no_host_mountpoints t_no_host_mountpoints
run_case symlink_swap_race t_symlink_swap_race
run_case planted_symlink_refused t_planted_symlink_refused
run_case dev_readonly t_dev_readonly
finish

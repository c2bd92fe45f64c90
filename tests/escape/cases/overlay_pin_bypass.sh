# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# overlay_pin_bypass: an --overlay tree inside the rw workspace. Its .git holds protected paths
# (hooks, config), whose ancestors are pinned in rw trees with rw binds of the host directory;
# found in the workspace around the overlay, such a pin put the host's .git on top of the
# overlay, so a commit inside wrote the host repository directly, past the quarantine.
# Defence: mounts: nothing is pinned inside an overlay tree (rw_cover stops at an overlay);
# promote refuses protected paths instead.
# Control: the same commit in the repository bound rw (no overlay) reaches the host's history.

setup() {
	git init -q proj
	git -C proj -c user.email=a@b -c user.name=n commit -q --allow-empty -m base
	COMMIT='echo x >f && git add f && git -c user.email=a@b -c user.name=n commit -qm inside && echo COMMITTED'
}

control() {
	cp -a proj rwproj
	run "$AGENTBOX" -p shell -- sh -c "cd rwproj && $COMMIT"
	[ "$(git -C rwproj log --format=%s -1)" = inside ] || control_failed "a commit in the rw repository did not reach the host" "$(evidence)"
	control_ok "without an overlay the commit is in the host's history"
}

attack() {
	run "$AGENTBOX" -p shell --overlay "$CASE/proj" --changes "$META/ch" -- sh -c "cd proj && $COMMIT"
	case "$OUT" in *COMMITTED*) ;; *) escaped "the commit inside the overlay failed (the case proves nothing)" "$(evidence)" ;; esac
	[ "$(git -C proj log --format=%s -1)" = base ] || escaped "the commit reached the host repository past the overlay" "$(git -C proj log --oneline | head -3)"
	[ -e proj/f ] && escaped "the work tree file reached the host"
	blocked "the commit stayed in the overlay's changes; the host's history ends at base"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# path_profile_dotdot: a path that looks like one thing and means another. A profile (or an
# option) with `ro = /usr/../etc` reads like "under /usr" to a reviewer but would bind /etc.
# Defence: the profile parser: a `..` component is an error (exit 125, FILE:LINE, nothing runs).
# Control: the honest spelling `ro = /etc` does bind /etc (the probe sees /etc/hostname), and
# the command does run (it leaves a file behind).

probe='ls /etc/hostname >/dev/null 2>&1 && echo ETC-VISIBLE; touch "$1/ran"'

control() {
	profile honest.ini minimal "[filesystem]" "ro = /etc" "rw = $CASE"
	ab ./honest.ini -- sh -c "$probe" sh "$CASE"
	[ -e ran ] && [ "$OUT" = ETC-VISIBLE ] || control_failed "ro = /etc did not show /etc" "$(evidence)"
	rm -f ran
	control_ok "ro = /etc shows /etc/hostname and the command runs"
}

attack() {
	profile dotdot.ini minimal "[filesystem]" "ro = /usr/../etc" "rw = $CASE"
	ab ./dotdot.ini -- sh -c "$probe" sh "$CASE"
	[ -e ran ] && escaped "the command ran under a profile with ro = /usr/../etc" "$(evidence)"
	[ "$RC" = 125 ] || escaped "a profile with ro = /usr/../etc was not rejected" "$(evidence)"
	case "$ERR" in *dotdot.ini:4:*) ;; *) escaped "the error does not name dotdot.ini:4" "$(evidence)" ;; esac
	profile plain.ini minimal "[filesystem]" "rw = $CASE"
	ab ./plain.ini --ro /usr/../etc -- sh -c "$probe" sh "$CASE"
	[ -e ran ] && escaped "the command ran with --ro /usr/../etc" "$(evidence)"
	[ "$RC" = 125 ] || escaped "--ro /usr/../etc was not rejected" "$(evidence)"
	blocked "ro = /usr/../etc: exit 125 at dotdot.ini:4; --ro /usr/../etc: exit 125; nothing ran"
}

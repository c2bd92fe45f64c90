# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# path_staging_tmp: run agentbox from /tmp itself (its workspace, ${CWD}, is then /tmp), with a
# hide entry: is the hidden file hidden, and is the sandbox's root read-only?
# agentbox builds the new root on a tmpfs it mounts over /tmp in its private mount namespace
# (mounts.c, stage_root), and binds each source with open_tree(AT_RECURSIVE) when it applies
# the entry (bind_fd). The source /tmp was opened before the staging mount, but the recursive
# clone happens after it: a bind of /tmp (or of /) takes the staging tmpfs, that is the
# sandbox's own root, along with every mount already attached to it, with none of the hide
# entries applied later, and writable.
# Defence (as documented): hide entries and a read-only root; the sources are opened before
# the staging mount can cover a host path.
# Control: from an ordinary workspace the same hide works (the file is unreadable), and without
# the hide the probe reads the file.

probe='for f in /usr/bin/id /tmp/usr/bin/id; do cat "$f" >/dev/null 2>&1 && echo "READ $f"; done
	mkdir /tmp/etc/planted-by-sandbox 2>/dev/null && [ -d /etc/planted-by-sandbox ] && echo ROOT-WRITABLE
	echo done'

control() {
	ab shell -- sh -c "$probe"
	case "$OUT" in
	*"READ /usr/bin/id"*) ;;
	*) control_failed "without --hide the probe cannot read /usr/bin/id" "$(evidence)" ;;
	esac
	ab shell --hide /usr/bin/id -- sh -c "$probe"
	case "$OUT" in *READ* | *ROOT-WRITABLE*) control_failed "from $CASE the hide did not hold: $OUT" "$(evidence)" ;; esac
	case "$OUT" in *done*) ;; *) control_failed "the probe did not run" "$(evidence)" ;; esac
	control_ok "from a workspace of its own: without the hide /usr/bin/id is read; with it, it is not"
}

attack() {
	cd /tmp || escaped "no /tmp"
	ab shell --hide /usr/bin/id -- sh -c "$probe"
	case "$OUT" in *done*) ;; *) escaped "the probe did not run from /tmp" "$(evidence)" ;; esac
	case "$OUT" in *READ* | *ROOT-WRITABLE*)
		escaped "run from /tmp: $(printf '%s' "$OUT" | grep -E 'READ|ROOT' | tr '\n' ';')" \
			"mounts.c: the bind of /tmp (\${CWD}) is cloned with open_tree(AT_RECURSIVE) after stage_root" \
			"mounted the new root's tmpfs on /tmp: the sandbox sees its own root at /tmp, writable," \
			"with the /usr bind but not the hide applied after it"
		;;
	esac
	blocked "from /tmp the hidden /usr/bin/id stays unreadable and the root stays read-only"
}

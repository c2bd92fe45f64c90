# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# dev_bind_nodev: a profile (or --ro) that binds a device node into the view. The case uses
# every device of a list (raw disks, /dev/kvm, /dev/fuse, /dev/net/tun, /dev/autofs) that the
# user running it can open on the host (for instance as root /dev/kvm, /dev/fuse, /dev/net/tun
# and /dev/autofs; as a user the world-readable /dev/autofs). A raw disk would bypass every
# file permission; /dev/kvm runs virtual machines.
# Defence: the mount flag nodev on every ro/rw bind: the node is there, opening it fails
# (EACCES).
# Control: on the host, the same user opens each device that is used (read-only).

candidates="/dev/vda /dev/sda /dev/nvme0n1 /dev/kvm /dev/fuse /dev/autofs /dev/net/tun"

setup() {
	local d
	OPENABLE=""
	for d in $candidates; do
		{ [ -c "$d" ] || [ -b "$d" ]; } && (: <"$d") 2>/dev/null && OPENABLE="$OPENABLE $d"
	done
	OPENABLE=${OPENABLE# }
}

check='for d in "$@"; do
	if [ -c "$d" ] || [ -b "$d" ]; then echo "NODE $d"; fi
	if err=$( (: <"$d") 2>&1); then echo "OPENED $d"; else echo "REFUSED $d: ${err##*: }"; fi
done'

control() {
	[ -n "$OPENABLE" ] || control_failed "none of $candidates can be opened on the host by $ME"
	host sh -c "$check" sh $OPENABLE
	printf '%s\n' "$OUT" | grep -q REFUSED && control_failed "a device could not be opened on the host" "$(evidence)"
	control_ok "on the host $ME opens: $OPENABLE"
}

attack() {
	local d opts=()
	for d in $OPENABLE; do opts+=(--ro "$d"); done
	ab shell "${opts[@]}" -- sh -c "$check" sh $OPENABLE
	printf '%s\n' "$OUT" | grep -q OPENED &&
		escaped "a bound device was opened: $(printf '%s\n' "$OUT" | grep OPENED | tr '\n' ' ')" "$(evidence)"
	for d in $OPENABLE; do
		printf '%s\n' "$OUT" | grep -qx "NODE $d" || escaped "$d was not bound (no node inside): proves nothing" "$(evidence)"
		printf '%s\n' "$OUT" | grep -qx "REFUSED $d: Permission denied" ||
			escaped "no proof opening $d was refused with EACCES" "$(evidence)" "$OUT"
	done
	blocked "bound with --ro, the nodes exist but opening fails (EACCES, nodev): $OPENABLE"
}

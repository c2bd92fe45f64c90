# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# dev_absent: the host's devices: virtual machines (/dev/kvm), disks read raw (/dev/sda,
# /dev/vda, /dev/nvme0n1: every file of every user), FUSE, input devices (keyloggers), kernel
# memory and log, consoles, loop devices, tun, userfaultfd.
# Defence: the mount namespace: /dev is a directory of agentbox's own read-only root holding only
# null, zero, full, random, urandom, tty, a private devpts and shm.
# Control: on the host, at least one of these exists (the list is what the check looks for).

devs="/dev/kvm /dev/fuse /dev/sda /dev/vda /dev/nvme0n1 /dev/input /dev/mem /dev/kmem /dev/port
	/dev/kmsg /dev/console /dev/tty0 /dev/tty1 /dev/loop0 /dev/loop-control /dev/net/tun
	/dev/userfaultfd /dev/vsock /dev/dri /dev/autofs /dev/btrfs-control /dev/mapper"

check='for d in $0; do if [ -e "$d" ]; then echo "PRESENT $d"; fi; done; echo "dev: $(ls /dev | tr "\n" " ")"'

control() {
	host sh -c "$check" "$(echo $devs)"
	printf '%s\n' "$OUT" | grep -q '^PRESENT' || control_failed "none of the devices exists on the host" "$(evidence)"
	control_ok "on the host: $(printf '%s\n' "$OUT" | grep '^PRESENT' | cut -d' ' -f2 | tr '\n' ' ')"
}

attack() {
	ab shell -- sh -c "$check" "$(echo $devs)"
	printf '%s\n' "$OUT" | grep -q '^PRESENT' &&
		escaped "host devices in the sandbox: $(printf '%s\n' "$OUT" | grep PRESENT | tr '\n' ' ')"
	case "$OUT" in *"dev: "*null*) ;; *) escaped "the check did not run" "$(evidence)" ;; esac
	blocked "none inside; $(printf '%s\n' "$OUT" | grep '^dev:')"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_tmpfs_fill_shm: /dev/shm is a tmpfs of its own: the memory bomb of res_tmpfs_fill_tmp
# through the POSIX shared memory directory. The probe writes 16 MiB files into /dev/shm up to
# 128 MiB.
# Defence: [limits] tmpfs-size (64M under offline-strict): the size cap of /dev/shm too
# (ENOSPC).
# Control: under a profile that includes offline-strict with tmpfs-size = 256M, the same 128 MiB
# fit.

setup() {
	profile big.ini offline-strict "[limits]" "tmpfs-size = 256M"
}

control() {
	ab ./big.ini -- "$BIN/res" fill /dev/shm 128 16
	result_is SUCCESS || control_failed "128 MiB did not fit a 256M /dev/shm" "$(evidence)"
	control_ok "under tmpfs-size = 256M: $RESULT"
}

attack() {
	ab offline-strict -- "$BIN/res" fill /dev/shm 128 16
	result_is SUCCESS && escaped "wrote 128 MiB into a 64M /dev/shm" "$(evidence)"
	errno_is ENOSPC || escaped "no proof the tmpfs cap stopped the writes" "$(evidence)"
	blocked "ENOSPC: $(printf '%s' "$RESULT" | cut -d' ' -f3-) (tmpfs-size 64M)"
}

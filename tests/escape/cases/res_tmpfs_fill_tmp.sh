# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_tmpfs_fill_tmp: /tmp is a tmpfs, that is memory: filling it is a memory bomb that no
# process limit sees. The probe writes 16 MiB files into /tmp up to 128 MiB (many files, so the
# file-size limit is not what stops it).
# Defence: [limits] tmpfs-size (64M under offline-strict): the size cap of the private /tmp
# (ENOSPC).
# Control: under a profile that includes offline-strict with tmpfs-size = 256M, the same 128 MiB
# fit.

setup() {
	profile big.ini offline-strict "[limits]" "tmpfs-size = 256M"
}

control() {
	ab ./big.ini -- "$BIN/res" fill /tmp 128 16
	result_is SUCCESS || control_failed "128 MiB did not fit a 256M /tmp" "$(evidence)"
	control_ok "under tmpfs-size = 256M: $RESULT"
}

attack() {
	ab offline-strict -- "$BIN/res" fill /tmp 128 16
	result_is SUCCESS && escaped "wrote 128 MiB into a 64M /tmp" "$(evidence)"
	errno_is ENOSPC || escaped "no proof the tmpfs cap stopped the writes" "$(evidence)"
	blocked "ENOSPC: $(printf '%s' "$RESULT" | cut -d' ' -f3-) (tmpfs-size 64M)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_disk_fill_rw: fill the host's disk through the writable workspace with one growing file
# (128 MiB here).
# Defence: [limits] file-size = 100M (offline-strict): RLIMIT_FSIZE (SIGXFSZ; the probe ignores
# it and gets EFBIG). It caps each file, not the total: see res_disk_fill_many_files.
# Control: under a profile that includes offline-strict with file-size = 1G, the 128 MiB file
# is written.

setup() {
	profile big.ini offline-strict "[limits]" "file-size = 1G"
}

control() {
	ab ./big.ini -- "$BIN/res" big "$CASE/ctl.bin" 128
	rm -f ctl.bin
	result_is SUCCESS || control_failed "a 128 MiB file was not written under file-size = 1G" "$(evidence)"
	control_ok "under file-size = 1G: $RESULT"
}

attack() {
	local size
	ab offline-strict -- "$BIN/res" big "$CASE/fill.bin" 128
	size=$(stat -c %s fill.bin 2>/dev/null || echo 0)
	rm -f fill.bin
	result_is SUCCESS && escaped "wrote a 128 MiB file under file-size = 100M" "$(evidence)"
	[ "$size" -le $((100 * 1024 * 1024)) ] || escaped "the file on the host is $size bytes"
	errno_is EFBIG || escaped "no proof the file-size limit stopped the writes" "$(evidence)"
	blocked "EFBIG: $(printf '%s' "$RESULT" | cut -d' ' -f3-); the host file stopped at $size bytes"
}

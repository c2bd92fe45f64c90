# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_huge_file: one enormous file without writing its bytes: a byte at offset 1 TiB, then
# ftruncate to 2 TiB (sparse: cheap to make, but it fills a disk the moment anything copies or
# backs it up, and it breaks tools that read it).
# Defence: [limits] file-size = 100M (offline-strict): RLIMIT_FSIZE applies to the offset
# reached, not the bytes written (EFBIG).
# Control: the same probe on the host makes the 2 TiB sparse file (then removes it).

control() {
	host "$BIN/res" sparse "$CASE/ctl.sparse"
	rm -f ctl.sparse
	result_is SUCCESS || control_failed "the host could not make the sparse file" "$(evidence)"
	control_ok "$RESULT"
}

attack() {
	local size
	ab offline-strict -- "$BIN/res" sparse "$CASE/huge.sparse"
	size=$(stat -c %s huge.sparse 2>/dev/null || echo 0)
	rm -f huge.sparse
	result_is SUCCESS && escaped "made a 2 TiB file under file-size = 100M" "$(evidence)"
	[ "$size" -le $((100 * 1024 * 1024)) ] || escaped "the file on the host is $size bytes"
	errno_is EFBIG || escaped "no proof the file-size limit refused it" "$(evidence)"
	blocked "EFBIG: $(printf '%s' "$RESULT" | cut -d' ' -f3-); the file stayed at $size bytes"
}

# res_disk_fill_many_files: the file-size limit caps each file; many files below it still fill
# the disk. The probe writes three 60 MiB files (180 MiB) into the workspace under
# offline-strict (file-size = 100M).
# Defence: none yet: agentbox sets no quota on rw paths (a known gap; a quota or a size-capped
# overlay would close it).
# Control: a single file past the limit is refused (res_disk_fill_rw), so the probe's files are
# each within it; the control checks that a 60 MiB file alone is fine under offline-strict.

control() {
	ab offline-strict -- "$BIN/res" big "$CASE/one.bin" 60
	rm -f one.bin
	result_is SUCCESS || control_failed "a 60 MiB file was refused under offline-strict" "$(evidence)"
	control_ok "$RESULT (within file-size = 100M)"
}

attack() {
	mkdir -p fill
	ab offline-strict -- "$BIN/res" fill "$CASE/fill" 180 60
	local total
	total=$(du -sm fill | cut -f1)
	rm -rf fill
	errno_is EFBIG ENOSPC EDQUOT && blocked "the total was capped: $RESULT"
	result_is SUCCESS && gap "no disk quota on rw paths: file-size caps each file, not the total" \
		"$RESULT ($total MiB on the host)"
	escaped "no proof either way" "$(evidence)"
}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# res_disk_fill_many_files: the file-size limit caps each file; many files below it would still
# fill the disk. The attack writes ten 60 MiB files (600 MiB) into the workspace under a
# profile that includes offline-strict (file-size = 100M) and sets disk = 100M.
# Defence: [limits] disk: the supervisor samples the free space of the file systems under the
# rw paths every 10 ms and kills the run past the budget (limit event `disk`, exit 137); no
# quota needs privilege, and a capped tmpfs would change what rw means.
# Control: without the disk key, three such files all land (180 MiB).

setup() {
	profile disk.ini offline-strict "[limits]" "disk = 100M"
	mkdir -p fill
}

control() {
	ab offline-strict -- "$BIN/res" fill "$CASE/fill" 180 60
	local total
	total=$(du -sm fill | cut -f1)
	rm -rf fill/*
	result_is SUCCESS || control_failed "the writes failed without a disk limit" "$(evidence)"
	[ "$total" -ge 180 ] || control_failed "only $total MiB landed without a disk limit" "$(evidence)"
	control_ok "$RESULT ($total MiB on the host without a disk limit)"
}

attack() {
	ab ./disk.ini -- "$BIN/res" fill "$CASE/fill" 600 60
	local total
	total=$(du -sm fill | cut -f1)
	rm -rf fill
	result_is SUCCESS && escaped "600 MiB written under disk = 100M ($total MiB on the host)" "$(evidence)"
	[ "$(audit_get limit limit)" = disk ] || escaped "no disk limit event" "$(evidence)"
	[ "$RC" = 137 ] || escaped "expected the run killed (137)" "$(evidence)"
	[ "$total" -lt 600 ] || escaped "$total MiB reached the host" "$(evidence)"
	blocked "stopped by the disk limit after $total MiB (grown $(audit_get limit grown) bytes)"
}

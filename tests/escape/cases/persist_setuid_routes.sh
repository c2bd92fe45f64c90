# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# persist_setuid_routes: every other way to leave a setuid file in the workspace: the chmod
# family by fd and with flags (fchmod, fchmodat2), and the calls that create a file with a mode
# (creat, open and openat with O_CREAT, O_TMPFILE then linkat, mknod, mknodat, openat2, whose
# mode the filter cannot read). Under the default and the strict presets.
# Defence: seccomp: those calls with S_ISUID/S_ISGID in the mode are refused (EPERM, named in
# the audit); openat2 answers ENOSYS (callers fall back to openat, which the filter can judge).
# Control: on the host each route makes a setuid file.

ROUTES="chmod fchmod fchmodat fchmodat2 creat open openat openat2 mknod mknodat tmpfile"

control() {
	local r
	for r in $ROUTES; do
		host "$BIN/setid" "$r" "$CASE/host.$r"
		result_is SUCCESS || control_failed "$r did not make a setuid file on the host" "$(evidence)"
	done
	rm -f "$CASE"/host.*
	control_ok "every route makes a setuid file on the host: $ROUTES"
}

attack() {
	local r prof want
	for prof in shell offline-strict; do
		for r in $ROUTES; do
			ab "$prof" -- "$BIN/setid" "$r" "$CASE/in.$prof.$r"
			result_is SUCCESS && escaped "$r made a setuid file under $prof" "$(evidence)"
			if [ -e "$CASE/in.$prof.$r" ] && [ -u "$CASE/in.$prof.$r" ]; then
				escaped "$r left a setuid file under $prof" "$(ls -l "$CASE/in.$prof.$r")"
			fi
			want=EPERM
			[ "$r" = openat2 ] && want=ENOSYS
			errno_is "$want" || escaped "$r under $prof: expected $want" "$(evidence)"
			case "$r" in
			openat2 | tmpfile) ;; # openat2: not a violation; tmpfile: open's rule
			*) audit_syscall "$r" || escaped "$r under $prof is not named in the audit" "$(evidence)" ;;
			esac
		done
	done
	rm -f "$CASE"/in.*
	blocked "every route refused under shell and offline-strict (EPERM, audited; openat2 ENOSYS)"
}

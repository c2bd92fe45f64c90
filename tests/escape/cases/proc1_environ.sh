# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# proc1_environ: agentbox's pid 1 was forked from the supervisor and still has the caller's
# whole environment, secrets included (the command's own environment is scrubbed). The probe
# reads /proc/1/environ and searches every /proc/*/environ it can see for the secret.
# Defence: pid 1 is non-dumpable (its environ is unreadable to the same uid) and the pid
# namespace hides the supervisor and every host process.
# Control: on the host, the running supervisor's /proc/PID/environ does hold the secret.

setup() {
	SECRET="AKIA$(unique)"
	export AWS_SECRET_ACCESS_KEY=$SECRET
	printf '%s\n' "$SECRET" >secret.pattern # grep -f: the secret never appears in an argv
}

control() {
	local pid i
	"$AGENTBOX" -p minimal -- sleep 5 >/dev/null 2>&1 </dev/null &
	pid=$!
	echo "$pid" >>"$META/bgpids"
	for ((i = 0; i < 50; i++)); do
		grep -a -q -F -f secret.pattern "/proc/$pid/environ" 2>/dev/null && break
		sleep 0.05
	done
	grep -a -q -F -f secret.pattern "/proc/$pid/environ" ||
		control_failed "the secret is not in the supervisor's environ on the host"
	kill "$pid"
	control_ok "the host reads the secret from /proc/$pid/environ (agentbox's supervisor)"
}

attack() {
	ab shell -- sh -c '
		echo "comm1=$(cat /proc/1/comm)"
		cat /proc/1/environ >/dev/null && echo "PID1-ENVIRON-READ"
		for f in /proc/[0-9]*/environ; do
			grep -a -q -F -f secret.pattern "$f" 2>/dev/null && echo "SECRET-IN $f"
		done
		echo scanned'
	case "$OUT" in *comm1=agentbox*) ;; *) escaped "pid 1 is not agentbox's init: the run proves nothing" "$(evidence)" ;; esac
	case "$OUT" in *SECRET-IN*) escaped "the secret was read inside the sandbox" "$OUT" ;; esac
	case "$OUT" in *PID1-ENVIRON-READ*) escaped "/proc/1/environ is readable" "$OUT" ;; esac
	case "$OUT" in *scanned*) ;; *) escaped "the scan did not run" "$(evidence)" ;; esac
	case "$ERR" in
	*"/proc/1/environ: Permission denied"*) ;;
	*) escaped "no proof /proc/1/environ was refused" "$(evidence)" ;;
	esac
	blocked "/proc/1/environ: Permission denied; no /proc/*/environ inside holds the secret"
}

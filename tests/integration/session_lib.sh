# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# What the session scripts share (test_session.sh, test_session_ports.sh, test_live.sh), sourced
# after lib.sh: n/a without user namespaces; RUNDIR (where session sockets are); start,
# stop_all, supervisor_pid, ex, gone, and a second user (other_user, as_test).

if ! "$AGENTBOX" -p minimal -- true 2>/dev/null; then
	echo "n/a $TEST_NAME ($TEST_USER): no user namespaces here (sessions need them)"
	exit 77
fi

RUNDIR=/tmp/agentbox-$(id -u)
[ -n "${XDG_RUNTIME_DIR:-}" ] && [ -O "$XDG_RUNTIME_DIR" ] && RUNDIR=$XDG_RUNTIME_DIR/agentbox

# start ARGS...: starts a session, sets SID, and stops it when the case ends.
start() {
	run_cmd "$AGENTBOX" session start "$@"
	[ "$RC" = 0 ] || fail "session start $*: status $RC" "$(report)"
	SID=$OUT
	[[ $SID =~ ^[0-9a-f]{32}$ ]] || fail "session start printed '$SID', not an id" "$(report)"
	echo "$SID" >>"$META/sessions"
}

# bounded: a wedged session must fail its case, not hang the whole script
stop_all() {
	local s
	[ -f "$META/sessions" ] || return 0
	while read -r s; do
		timeout -s KILL "$CMD_LIMIT" "$AGENTBOX" session stop "$s" >/dev/null 2>&1
	done <"$META/sessions"
}

# supervisor_pid: the pid of session $SID's supervisor, from session list --json.
supervisor_pid() {
	"$AGENTBOX" session list --json | "$PY" -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if d["id"] == sys.argv[1]: print(d["pid"])' "$SID"
}

# ex ARGS...: agentbox exec $SID ARGS..., with OUT, ERR, RC. A session gone meanwhile is a
# failure, with the end of its trail (when the case keeps one) to say why.
ex() {
	run_cmd "$AGENTBOX" exec "$SID" "$@"
	case $ERR in
	*"no live session"*) fail "the session ended before: $(show_cmd "$@")" \
		"$(report; tail -n 3 "$META/audit" 2>/dev/null)" ;;
	esac
}

# other_user NAME: agentbox-test (tu) with a home of its own (thome, /tmp/agentbox-NAME.XXXXXX,
# removed when the case ends), outside root's case directory; n/a where it cannot run agentbox.
other_user() {
	tu=$(id -u agentbox-test)
	thome=$(mktemp -d "/tmp/agentbox-$1.XXXXXX")
	remove_later "$thome"
	chown "$tu:$(id -g agentbox-test)" "$thome"
	as_test test -x "$AGENTBOX_BIN" || not_applicable "agentbox-test cannot run $AGENTBOX_BIN"
}

# as_test CMD...: CMD as other_user's user, in its home, with a clean environment.
as_test() {
	setpriv --reuid="$tu" --regid="$(id -g agentbox-test)" --init-groups \
		env -i HOME="$thome" PATH=/usr/bin:/bin \
		AGENTBOX_PROFILE_PATH="$AGENTBOX_PROFILE_PATH" \
		sh -c 'cd "$HOME" && exec "$@"' sh "$@"
}

# gone MARKER [SECONDS]: no process has MARKER in its command line (within SECONDS, 3 unless said).
gone() {
	local i
	for ((i = 0; i < ${2:-3} * 10; i++)); do
		pgrep -f "$1" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

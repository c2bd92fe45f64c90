# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# What the audit scripts share (test_audit.sh, test_audit_events.sh), sourced after lib.sh: the
# schema (SCHEMA) and a validator of a trail's events against it (validate), and a reader of the
# trail (audit_get).

SCHEMA="${AGENTBOX_SOURCE:-$(cd "$TEST_DIR/../.." && pwd)}/docs/audit.schema.json"
mkdir -p "$WORK/.bin"

# validate.py SCHEMA FILE...: validates every line of the files against the schema (Draft
# 2020-12). Prints "TYPES t1 t2 ..." (the event types seen) and one "INVALID file:line (event):
# why" per problem; for a oneOf failure, why comes from the branch of the event's own type.
VALIDATE_PY="$WORK/.bin/validate.py"
cat >"$VALIDATE_PY" <<'EOF'
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1], encoding="utf-8"))
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
branch_type = [b.get("properties", {}).get("event", {}).get("const") for b in schema["oneOf"]]
types, problems = set(), []
for path in sys.argv[2:]:
    for n, raw in enumerate(open(path, "rb"), 1):
        try:
            e = json.loads(raw.decode("utf-8"))  # strict: invalid UTF-8 is a problem
        except Exception as x:
            problems.append(f"{path}:{n}: not a JSON line in UTF-8: {x}: {raw[:200]!r}")
            continue
        ev = e.get("event") if isinstance(e, dict) else None
        types.add(str(ev))
        for err in validator.iter_errors(e):
            why = err.message
            if err.validator == "oneOf":
                mine = [c for c in err.context if branch_type[c.relative_schema_path[0]] == ev]
                if mine:
                    why = "; ".join(f"/{'/'.join(map(str, c.absolute_path))}: {c.message}"
                                    for c in mine)
            problems.append(f"{path}:{n} ({ev}): {why[:400]}")
print("TYPES " + " ".join(sorted(types)))
for p in problems:
    print("INVALID " + p)
sys.exit(1 if problems else 0)
EOF

# helpers/audit_query.py: reads a trail (get, runs, seqs; its docstring says how)
AUDIT_PY="$HELPERS/audit_query.py"

audit_get() {
	"$PY" "$AUDIT_PY" "$1" get "$2" "$3" || fail "cannot read the audit trail $1" "$(head -c 3000 "$1")"
}

# validate FILE...: every line valid; sets TYPES to the event types seen.
validate() {
	[ -r "$SCHEMA" ] || fail "the schema $SCHEMA is not readable (run.sh must stage docs/ for this user)"
	run_cmd "$PY" "$VALIDATE_PY" "$SCHEMA" "$@"
	TYPES=$(printf '%s\n' "$OUT" | sed -n 's/^TYPES //p')
	[ "$RC" = 0 ] || fail "events that do not match $SCHEMA:" "$(printf '%s\n' "$OUT" | grep '^INVALID' | head -20)" "$ERR"
}

# envdeny_profile: envdeny.ini in the current directory (the shell profile passing SECRET_*), and
# SECRET_TOKEN, a value of this run's, exported for it to hold back.
envdeny_profile() {
	SECRET_TOKEN="tok-$(unique)"
	export SECRET_TOKEN
	cat >envdeny.ini <<-EOF
		[sandbox]
		include = $AGENTBOX_PROFILES/shell.ini
		[env]
		pass = SECRET_*
	EOF
}

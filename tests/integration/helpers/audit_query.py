#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""audit_query.py FILE QUERY...: reads an audit trail for the integration tests (test_audit.sh,
test_audit_events.sh, test_confine.sh).

  FILE get EVENT KEY[.KEY...]  the value in each EVENT event (strings raw, anything else as
                               JSON; '-' where it is missing)
  FILE runs                    the run ids in order of first appearance
  FILE seqs RUN                "line seq event" for each event of RUN (lines from 1)
  FILE syscalls                one line per syscall event:
                               name=N action=A errno=E count=C repeat=R a0=X a1=Y
                               ('-' for a field the event lacks)
"""
import json
import sys

path, what = sys.argv[1], sys.argv[2]
events = [json.loads(line) for line in open(path, encoding="utf-8")]
if what == "get":
    for e in events:
        if e["event"] != sys.argv[3]:
            continue
        v = e
        for k in sys.argv[4].split("."):
            v = v.get(k, "-") if isinstance(v, dict) else "-"
        print(v if isinstance(v, str) else json.dumps(v))
elif what == "runs":
    seen = []
    for e in events:
        if e["run"] not in seen:
            seen.append(e["run"])
    print("\n".join(seen))
elif what == "seqs":
    for n, e in enumerate(events, 1):
        if e["run"] == sys.argv[3]:
            print(n, e["seq"], e["event"])
elif what == "syscalls":
    for e in events:
        if e["event"] != "syscall":
            continue
        a = e.get("args", {})
        rep = e.get("repeat", "-")
        rep = str(rep).lower() if isinstance(rep, bool) else rep
        print(f"name={e['name']} action={e.get('action', '-')} errno={e.get('errno', '-')} "
              f"count={e['count']} repeat={rep} a0={a.get('a0', '-')} a1={a.get('a1', '-')}")
else:
    sys.exit(f"unknown query {what}")

#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""intercept_audit.py FILE [FIELD=VALUE | FIELD~TEXT ...]: the request-level events of an audit
trail (test_intercept.sh), one line each, as ` key=value` pairs in a fixed order with a leading
and trailing space, so that a test can match " decision=deny method=GET " exactly.

Read: the `net` events (one per connection) and the `http` events (one per intercepted request,
docs/audit.md). `path` is the event's own, else the path of its `url`; `rule` is `http_rule`
when the event has one, else `rule`; like every field, `intercepted` is printed only when the
event has it. A filter FIELD=VALUE keeps the events whose field, as printed, equals VALUE;
FIELD~TEXT those whose field contains TEXT (`all~TEXT`: the event's whole JSON line).
The last line is always `count=N`."""
import json
import sys
import urllib.parse

KEYS = ["event", "decision", "protocol", "method", "host", "port", "path", "status", "rule",
        "alpn", "stream", "sni", "reason", "bytes_out", "bytes_in", "duration_ms", "intercepted"]


def fields(ev):
    out = {k: ev[k] for k in KEYS if k in ev}
    if "path" not in ev and isinstance(ev.get("url"), str):
        out["path"] = urllib.parse.urlsplit(ev["url"]).path
    if ev.get("http_rule") is not None:
        out["rule"] = ev["http_rule"]
    return {k: "null" if v is None else str(v) for k, v in out.items()}


def keep(shown, line, filters):
    for f in filters:
        if "~" in f and ("=" not in f or f.index("~") < f.index("=")):
            k, _, v = f.partition("~")
            if v not in (line if k == "all" else shown.get(k, "")):
                return False
        else:
            k, _, v = f.partition("=")
            if shown.get(k) != v:
                return False
    return True


path, filters = sys.argv[1], sys.argv[2:]
n = 0
with open(path, encoding="utf-8") as f:
    for line in f:
        ev = json.loads(line)
        if ev.get("event") not in ("net", "http"):
            continue
        shown = fields(ev)
        if keep(shown, line, filters):
            print(" " + " ".join(f"{k}={shown[k]}" for k in KEYS if k in shown) + " ")
            n += 1
print(f"count={n}")

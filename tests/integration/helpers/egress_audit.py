# egress_audit.py FILE [FIELD=VALUE...]: the `net` events of an audit trail, one line each, as
# ` key=value` pairs in a fixed order (a leading and trailing space, so a test can match
# " decision=deny " exactly). With FIELD=VALUE filters, only events whose field (as printed)
# equals VALUE. The last line is always `count=N`, the number of events printed.
import json, sys

KEYS = ["decision", "protocol", "host", "port", "address", "rule", "resolve", "method", "url", "reason",
        "bytes_out", "bytes_in", "duration_ms"]

path, filters = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
n = 0
with open(path) as f:
    for line in f:
        ev = json.loads(line)
        if ev.get("event") != "net":
            continue
        shown = {k: ("null" if ev.get(k) is None else str(ev[k])) for k in KEYS if k in ev}
        if all(shown.get(k) == v for k, v in filters):
            print(" " + " ".join(f"{k}={shown[k]}" for k in KEYS if k in shown) + " ")
            n += 1
print(f"count={n}")

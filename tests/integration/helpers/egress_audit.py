# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# egress_audit.py FILE [event=dns] [FIELD=VALUE...]: the `net` (or `dns`) events of an audit trail, one line each, as
# ` key=value` pairs in a fixed order (a leading and trailing space, so a test can match
# " decision=deny " exactly). With FIELD=VALUE filters, only events whose field (as printed)
# equals VALUE. The last line is always `count=N`, the number of events printed.
import json, sys

KEYS = ["decision", "protocol", "host", "port", "address", "rule", "resolve", "sni", "method", "url",
        "reason", "bytes_out", "bytes_in", "duration_ms"]
# `event=dns` as the first filter reads the DNS stub's events instead
DNS_KEYS = ["decision", "name", "type", "rcode", "rule", "address", "reason"]

path, filters = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
event = "net"
if filters and filters[0] == ["event", "dns"]:
    event, KEYS, filters = "dns", DNS_KEYS, filters[1:]
n = 0
with open(path) as f:
    for line in f:
        ev = json.loads(line)
        if ev.get("event") != event:
            continue
        shown = {k: ("null" if ev.get(k) is None else str(ev[k])) for k in KEYS if k in ev}
        if all(shown.get(k) == v for k, v in filters):
            print(" " + " ".join(f"{k}={shown[k]}" for k in KEYS if k in shown) + " ")
            n += 1
print(f"count={n}")

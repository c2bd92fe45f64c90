#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""leak_forms.py VALUE FILE: prints `LEAK FORM` for each form of VALUE found in FILE (as written
in any case; percent-encoded once or twice with either case of hex digits; base64 in both
alphabets at the three alignments, the characters that carry the value's bits alone; hex in
either case), or `CLEAN`. The same forms agentbox promises a command never sees."""
import base64
import re
import sys
import urllib.parse

value, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read().decode("latin-1")
low = data.lower()
found = []


def unquote_all(s):
    return urllib.parse.unquote(s, encoding="latin-1")


def b64_core(pre, alt):
    raw = b"\0" * pre + value.encode()
    enc = (base64.urlsafe_b64encode if alt else base64.b64encode)(raw).decode()
    first, last = (pre * 8 + 5) // 6, ((pre + len(value)) * 8) // 6
    return enc[first:last]


if value.lower() in low:
    found.append("as-written")
once = unquote_all(data)
if value.lower() in once.lower():
    found.append("percent-once")
if value.lower() in unquote_all(once).lower():
    found.append("percent-twice")
for pre in range(3):
    for alt in (False, True):
        if b64_core(pre, alt) in data:
            found.append("base64-%s-%d" % ("url" if alt else "std", pre))
if value.encode().hex() in low:
    found.append("hex")
print("\n".join("LEAK " + f for f in found) or "CLEAN")

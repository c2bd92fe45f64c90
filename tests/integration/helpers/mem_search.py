# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# mem_search.py PID NAME=HEX...: searches the memory of process PID (every readable mapping up
# to 1 GiB, through /proc/PID/mem: a sanitizer's shadow is reserved, not used) for each byte string; prints `NAME found` or `NAME absent` per needle,
# then `regions N`. Exit status 2, with `unreadable ERRNO`, when the memory cannot be opened:
# the process is not dumpable and the caller lacks CAP_SYS_PTRACE, or it is someone else's.
import sys

pid, needles = int(sys.argv[1]), [a.split("=", 1) for a in sys.argv[2:]]
needles = [(name, bytes.fromhex(h)) for name, h in needles]
try:
    mem = open("/proc/%d/mem" % pid, "rb", buffering=0)
    maps = open("/proc/%d/maps" % pid).read().splitlines()
    mem.seek(0)
    mem.read(0)
except OSError as e:
    print("unreadable %d" % e.errno)
    sys.exit(2)
found, regions = set(), 0
with mem:
    for line in maps:
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if fields[1][0] != "r" or fields[-1] in ("[vvar]", "[vsyscall]") or end - start > 1 << 30:
            continue
        try:
            mem.seek(start)
            data = mem.read(end - start)
        except OSError:
            continue
        regions += 1
        found |= {name for name, n in needles if n in data}
if regions == 0:
    print("unreadable 0")
    sys.exit(2)
for name, _ in needles:
    print("%s %s" % (name, "found" if name in found else "absent"))
print("regions %d" % regions)

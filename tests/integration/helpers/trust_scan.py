# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# trust_scan.py: run inside a sandbox, looks for private key material in everything the command
# can read: every regular file of the view (but /proc, /sys and /usr, the host's read-only
# tree: gigabytes, and a key there would have to be on the host's disk, which the host side
# checks), the environ and cmdline of every process it can see, and the memory of every other
# process whose /proc/PID/mem it can open. A key is a PEM "PRIVATE KEY" block, or the DER start
# of an EC P-256 private key (SEC 1, or PKCS #8). Prints one line per finding, sorted:
#   hit WHERE KIND          key material found (the test fails on any the same view without
#                           interception does not have)
#   closed PID WHAT ERRNO   a /proc file of a process the command sees but cannot read
#   memory PID REGIONS      another process's memory was read (REGIONS readable regions)
# and last `scanned FILES PROCS`.
import os, stat, sys

# built at run time, so that this script's own text holds none of them (its file is scanned)
NEEDLES = [("pem", b"PRIVATE" + b" KEY-----"),
           ("sec1", bytes.fromhex("3077" + "0201010420")),
           ("pkcs8", bytes.fromhex("308187" + "020100301306072a8648ce3d0201"))]
SKIP = {"/proc", "/sys", "/usr"}
LIMIT = 64 << 20


def kinds(data):
    return [k for k, n in NEEDLES if n in data]


out, files = [], 0
for root, dirs, names in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIP]
    for name in names:
        path = os.path.join(root, name)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            with open(path, "rb") as f:
                data = f.read(LIMIT)
        except OSError:
            continue
        files += 1
        out += ["hit %s %s" % (path, k) for k in kinds(data)]

me, procs = os.getpid(), 0
for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
    procs += 1
    for what in ("environ", "cmdline"):
        try:
            with open("/proc/%d/%s" % (pid, what), "rb") as f:
                data = f.read()
        except OSError as e:
            out.append("closed %d %s %s" % (pid, what, e.errno))
            continue
        out += ["hit /proc/%d/%s %s" % (pid, what, k) for k in kinds(data)]
    if pid == me:
        continue  # this process holds the needles
    try:
        mem = open("/proc/%d/mem" % pid, "rb", buffering=0)
        maps = open("/proc/%d/maps" % pid).read().splitlines()
    except OSError as e:
        out.append("closed %d mem %s" % (pid, e.errno))
        continue
    regions = 0
    with mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if fields[1][0] != "r" or end - start > LIMIT:
                continue
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            regions += 1
            out += ["hit /proc/%d/mem:%s %s" % (pid, fields[0], k) for k in kinds(data)]
    out.append("memory %d %d" % (pid, regions))

for line in sorted(out):
    print(line)
print("scanned %d %d" % (files, procs))
sys.stdout.flush()

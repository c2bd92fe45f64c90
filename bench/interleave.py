# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# interleave.py ROUNDS NAME=COMMAND...: start-up times measured round-robin. Each round runs
# every command once, the order rotated by one each round, so a drift in the machine's load
# (other jobs starting or stopping) falls on all of them alike, which hyperfine's one block per
# command cannot promise. Each run is timed from posix_spawn to waitpid (stdout and stderr to
# /dev/null); the first 10 rounds are a warm-up. Prints one line per command: its median, p10
# and p90 in ms; exits 1 when a command fails.
import os, shlex, statistics, sys, time


def main():
    rounds = int(sys.argv[1])
    cmds = [(a.split("=", 1)[0], shlex.split(a.split("=", 1)[1])) for a in sys.argv[2:]]
    devnull = os.open("/dev/null", os.O_RDWR)
    fa = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
    times = {name: [] for name, _ in cmds}
    for r in range(rounds + 10):
        k = r % len(cmds)
        for name, argv in cmds[k:] + cmds[:k]:
            t0 = time.perf_counter()
            pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=fa)
            _, status = os.waitpid(pid, 0)
            dt = (time.perf_counter() - t0) * 1000
            if status != 0:
                sys.exit(f"interleave.py: {name} failed (wait status {status})")
            if r >= 10:
                times[name].append(dt)
    for name, v in times.items():
        v.sort()
        print(f"{name} {statistics.median(v):.2f} {v[len(v) // 10]:.2f} {v[len(v) * 9 // 10]:.2f}")


main()

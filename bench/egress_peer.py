# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# egress_peer.py: the client end of bench/egress (standard library only, /usr/bin/python3);
# the server end, a sink and echo server on the host's 127.0.0.1, is the test suite's
# tests/integration/helpers/egress_sink.py.
#
#   egress_peer.py throughput PORT BYTES [proxy]
#       Sends BYTES to the sink (through a CONNECT tunnel of 127.0.0.1:3128 with "proxy"),
#       half-closes, waits for the sink's close: prints "SECONDS <s> MBPS <MB/s>".
#   egress_peer.py latency PORT N [proxy]
#       N times: connect (and CONNECT through the proxy), send 'e', read the echo, close.
#       Prints "P50_MS <ms> P90_MS <ms>" over the N round trips, each timed from connect to echo.
#   egress_peer.py hold PORT N DONEFILE
#       Opens N CONNECT tunnels to the sink, sends one byte through each (so each is relaying)
#       and keeps them open; prints "HOLDING <n>", then waits until DONEFILE exists (at most
#       120 s).
#   egress_peer.py cpu COMMAND...
#       On the host: runs COMMAND (agentbox), passes its output on and adds
#       "SUPERVISOR_CPU_MS <ms>": the user + system time of COMMAND's own process (the
#       supervisor, which relays; not pid 1 or the command), from /proc/PID/stat, read every
#       10 ms until it exits (the last read misses at most its teardown).
import os, resource, selectors, socket, statistics, subprocess, sys, time

PROXY = ("127.0.0.1", 3128)


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def connect(port, proxied):
    if not proxied:
        return socket.create_connection(("127.0.0.1", port))
    s = socket.create_connection(PROXY)
    s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(4096)
        if not d:
            sys.exit(f"the proxy closed the tunnel: {head!r}")
        head += d
    if not head.startswith(b"HTTP/1.1 200"):
        sys.exit(f"the proxy refused the tunnel: {head!r}")
    return s


def throughput(port, total, proxied):
    chunk = memoryview(b"x" * (1 << 20))
    t0 = time.monotonic()
    s = connect(port, proxied)
    left = total
    while left:
        left -= s.send(chunk[: min(left, len(chunk))])
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
    dt = time.monotonic() - t0
    print(f"SECONDS {dt:.3f} MBPS {total / dt / 1e6:.0f}")


def latency(port, n, proxied):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        s = connect(port, proxied)
        s.sendall(b"e")
        if s.recv(1) != b"e":
            sys.exit("no echo")
        times.append((time.perf_counter() - t0) * 1000)
        s.close()
    times.sort()
    print(f"P50_MS {statistics.median(times):.3f} P90_MS {times[int(len(times) * 0.9)]:.3f}")


def hold(port, n, donefile):
    raise_nofile()
    held = []
    for _ in range(n):
        s = connect(port, True)
        s.sendall(b"x")
        held.append(s)
    print(f"HOLDING {len(held)}", flush=True)
    end = time.monotonic() + 120
    while not os.path.exists(donefile) and time.monotonic() < end:
        time.sleep(0.05)


def cpu(command):
    p = subprocess.Popen(command, stdout=subprocess.PIPE)
    tick, used = os.sysconf("SC_CLK_TCK"), 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            used = int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass  # exiting (or a zombie): the last read stands
        time.sleep(0.01)
    out = p.stdout.read().decode().strip()
    if p.returncode:
        sys.exit(f"{command[0]} exited {p.returncode}: {out}")
    print(f"{out} SUPERVISOR_CPU_MS {used * 1000 // tick}")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "cpu":
        return cpu(args)
    proxied = args[-1:] == ["proxy"]
    if cmd == "throughput":
        throughput(int(args[0]), int(args[1]), proxied)
    elif cmd == "latency":
        latency(int(args[0]), int(args[1]), proxied)
    elif cmd == "hold":
        hold(int(args[0]), int(args[1]), args[2])
    else:
        sys.exit(f"unknown command {cmd}")


main()

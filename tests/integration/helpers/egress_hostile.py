# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# egress_hostile.py ACTION HOST PORT PATH EXPECT: hostile clients of agentbox's egress proxy,
# run inside the sandbox (/usr/bin/python3, standard library only) by test_egress_hostile.sh.
#
# HOST:PORT is a server on the host that the rules allow, PATH a file on it whose body contains
# EXPECT. Around each ACTION:
#   before: a CONNECT tunnel to HOST:PORT is opened (GUARD_OPEN:<code>), a connection that must
#           survive whatever the action does to the proxy;
#   after:  a request through that tunnel (GUARD:ok) and a fresh request through the proxy
#           (AFTER:ok) must both succeed.
# Actions (each bounded in count and time; every socket has a timeout):
#   longline   a 1 MiB request line. LONGLINE:400|closed|hang, LONGLINE_400S:<count of 400
#              responses>, LONGLINE_ELAPSED:<s>
#   slowloris  one header byte per second on one connection, while a normal request is made
#              (DURING:ok). SLOWLORIS_CLOSED_AFTER:<s>, or SLOWLORIS:not-closed
#   garbage    garbage bytes to both ports: one line per probe, NAME:<reply hex>:<closed|open>:<s>
#   halfclose  requests followed by shutdown(SHUT_WR) on plain HTTP, CONNECT and SOCKS:
#              HALF_HTTP/HALF_CONNECT/HALF_SOCKS:ok|<what came back>; a head cut short by
#              SHUT_WR: HALF_PARTIAL:closed|open:<s>
#   flood N    N concurrent idle connections to 3128 (from several processes: the sandbox's
#              open-files limit is 1024), held while counted: FLOOD_OPEN, FLOOD_CLOSED (closed
#              by the proxy), FLOOD_FAILED (connect failed); then all closed.
#   linger N   N refused requests, each on a connection of its own held open after its answer
#              (so the proxy lingers on each, reading what the client may still send), all
#              within the proxy's 2 s of lingering: LINGER_ANSWERED (a status line came back),
#              LINGER_UNANSWERED (closed or silent without one), LINGER_SECONDS (from the
#              first request to the last answer); then all closed.
# The exit status is 0 unless the helper itself breaks; the verdicts are in the output.
import os, random, resource, select, socket, sys, threading, time

PROXY = ("127.0.0.1", 3128)
SOCKS = ("127.0.0.1", 1080)
action, HOST, PORT, PATH, EXPECT = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]


def out(key, value=""):
    print(f"{key}:{value}", flush=True)


def read_until_eof(s, limit=15.0):
    """Reads until EOF, an error or `limit` seconds; returns (data, 'closed'|'open')."""
    data, end = b"", time.monotonic() + limit
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return data, "open"
        s.settimeout(left)
        try:
            d = s.recv(65536)
        except socket.timeout:
            return data, "open"
        except OSError:
            return data, "closed"
        if not d:
            return data, "closed"
        data += d


def proxied_get():
    """A fresh plain request through the HTTP proxy; True when EXPECT came back."""
    try:
        s = socket.create_connection(PROXY, timeout=10)
        s.sendall(f"GET http://{HOST}:{PORT}{PATH} HTTP/1.1\r\nHost: {HOST}:{PORT}\r\n"
                  f"Connection: close\r\n\r\n".encode())
        data, _ = read_until_eof(s, 10)
        s.close()
        return EXPECT.encode() in data and data.startswith(b"HTTP/1.") and b" 200 " in data[:16]
    except OSError:
        return False


def proxied_get_retry(seconds):
    end = time.monotonic() + seconds
    while True:
        if proxied_get():
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.2)


def read_until(s, marker):
    """Reads until marker has come, or the peer's end; what came."""
    data = b""
    while marker not in data:
        d = s.recv(4096)
        if not d:
            break
        data += d
    return data


def open_tunnel():
    s = socket.create_connection(PROXY, timeout=10)
    s.sendall(f"CONNECT {HOST}:{PORT} HTTP/1.1\r\nHost: {HOST}:{PORT}\r\n\r\n".encode())
    head = read_until(s, b"\r\n\r\n")
    out("GUARD_OPEN", head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "none")
    return s


def use_tunnel(s):
    try:
        s.sendall(f"GET {PATH} HTTP/1.1\r\nHost: {HOST}:{PORT}\r\nConnection: close\r\n\r\n"
                  .encode())
        data, _ = read_until_eof(s, 10)
        out("GUARD", "ok" if EXPECT.encode() in data else f"bad {data[:120]!r}")
    except OSError as e:
        out("GUARD", f"error {e}")
    s.close()


# ---------------------------------------------------------------- actions ----

def longline():
    s = socket.create_connection(PROXY, timeout=15)
    line = b"GET http://" + f"{HOST}:{PORT}".encode() + b"/" + b"a" * (1 << 20) + b" HTTP/1.1\r\n"
    t0 = time.monotonic()
    try:
        s.sendall(line + f"Host: {HOST}\r\n\r\n".encode())
    except OSError:
        pass  # the proxy may close while the rest is still being sent
    data, state = read_until_eof(s, 15)
    s.close()
    if data.startswith(b"HTTP/1.1 400"):
        out("LONGLINE", "400")
    elif state == "closed":
        out("LONGLINE", "closed")
    else:
        out("LONGLINE", "hang")
    out("LONGLINE_400S", data.count(b"HTTP/1.1 400"))
    out("LONGLINE_ELAPSED", f"{time.monotonic() - t0:.1f}")


def slowloris():
    result = {}

    def slow():
        s = socket.create_connection(PROXY, timeout=5)
        t0 = time.monotonic()
        s.sendall(f"GET http://{HOST}:{PORT}{PATH} HTTP/1.1\r\nX-Slow: ".encode())
        while time.monotonic() - t0 < 30:
            r, _, _ = select.select([s], [], [], 1.0)
            if r:
                try:
                    if not s.recv(4096):
                        break
                except OSError:
                    break
                continue  # something came back; the loop ends on EOF
            try:
                s.send(b"x")
            except OSError:
                break
        else:
            result["closed"] = None
            s.close()
            return
        result["closed"] = time.monotonic() - t0
        s.close()

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(2)
    out("DURING", "ok" if proxied_get() else "failed")
    t.join(40)
    if result.get("closed") is None:
        out("SLOWLORIS", "not-closed")
    else:
        out("SLOWLORIS_CLOSED_AFTER", f"{result['closed']:.1f}")


def garbage():
    rnd = random.Random(20261121)

    def noise(n, first=None):
        b = bytearray(rnd.randbytes(n))
        if first is not None:
            b[0] = first
        return bytes(b).replace(b"\r\n\r\n", b"\r\n\r_")

    probes = [
        ("GARBAGE_HTTP_BINARY", PROXY, noise(4096) + b"\r\n\r\n"),
        ("GARBAGE_HTTP_NUL", PROXY, b"\x00" * 64 + b" \x00 HTTP/1.1\r\n\r\n"),
        ("GARBAGE_HTTP_BADMETHOD", PROXY, b"get\x7f http://x/ HTTP/1.1\r\n\r\n"),
        ("GARBAGE_HTTP_NOTARGET", PROXY, b"GET /etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("GARBAGE_SOCKS_BINARY", SOCKS, noise(512, first=0x47)),
        ("GARBAGE_SOCKS_ZERO_METHODS", SOCKS, b"\x05\x00"),
        ("GARBAGE_SOCKS_BAD_REQUEST", SOCKS, b"\x05\x01\x00" + noise(64, first=0x04)),
        ("GARBAGE_SOCKS_BAD_ATYP", SOCKS, b"\x05\x01\x00\x05\x01\x00\x09" + noise(16)),
        ("GARBAGE_SOCKS_HTTP", SOCKS, b"GET http://x/ HTTP/1.1\r\n\r\n"),
        ("GARBAGE_HTTP_SOCKS", PROXY, b"\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50"
                                      b"\r\n\r\n"),
    ]
    for name, addr, payload in probes:
        t0 = time.monotonic()
        try:
            s = socket.create_connection(addr, timeout=5)
            try:
                s.sendall(payload)
            except OSError:
                pass
            data, state = read_until_eof(s, 5)
            s.close()
            out(name, f"{data[:12].hex() or '-'}:{state}:{time.monotonic() - t0:.1f}")
        except OSError as e:
            out(name, f"connect-error {e}:closed:{time.monotonic() - t0:.1f}")


def halfclose():
    req = (f"GET {{target}} HTTP/1.1\r\nHost: {HOST}:{PORT}\r\nConnection: close\r\n\r\n")

    def verdict(data):
        return "ok" if EXPECT.encode() in data else repr(data[:160])

    # plain HTTP
    s = socket.create_connection(PROXY, timeout=10)
    s.sendall(req.format(target=f"http://{HOST}:{PORT}{PATH}").encode())
    s.shutdown(socket.SHUT_WR)
    out("HALF_HTTP", verdict(read_until_eof(s, 10)[0]))
    s.close()
    # CONNECT
    s = open_tunnel()
    s.sendall(req.format(target=PATH).encode())
    s.shutdown(socket.SHUT_WR)
    out("HALF_CONNECT", verdict(read_until_eof(s, 10)[0]))
    s.close()
    # SOCKS5
    s = socket.create_connection(SOCKS, timeout=10)
    s.sendall(b"\x05\x01\x00")
    greet = s.recv(2)
    s.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(HOST) + PORT.to_bytes(2, "big"))
    rep = b""
    while len(rep) < 10:
        d = s.recv(10 - len(rep))
        if not d:
            break
        rep += d
    if greet == b"\x05\x00" and rep[:2] == b"\x05\x00":
        s.sendall(req.format(target=PATH).encode())
        s.shutdown(socket.SHUT_WR)
        out("HALF_SOCKS", verdict(read_until_eof(s, 10)[0]))
    else:
        out("HALF_SOCKS", f"handshake {greet!r} {rep!r}")
    s.close()
    # a head cut short by the half-close: the proxy must give up on it, not wait for more
    t0 = time.monotonic()
    s = socket.create_connection(PROXY, timeout=10)
    s.sendall(f"GET http://{HOST}:{PORT}{PATH} HTTP/1.1\r\nHost: ".encode())
    s.shutdown(socket.SHUT_WR)
    _, state = read_until_eof(s, 5)
    out("HALF_PARTIAL", f"{state}:{time.monotonic() - t0:.1f}")
    s.close()


def flood(n):
    per_child = 700  # below the sandbox's open-files limit of 1024, with room to spare
    children = []
    for start in range(0, n, per_child):
        count = min(per_child, n - start)
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(to_child_w)
            os.close(from_child_r)
            socks, failed = [], 0
            for _ in range(count):
                try:
                    socks.append(socket.create_connection(PROXY, timeout=5))
                except OSError:
                    failed += 1
            os.write(from_child_w, b"connected\n")
            os.read(to_child_r, 1)  # the parent says: count now
            opened = closed = 0
            for s in socks:
                r, _, _ = select.select([s], [], [], 0)
                if r:
                    try:
                        gone = s.recv(1) == b""
                    except OSError:
                        gone = True
                    closed += gone
                    opened += not gone
                else:
                    opened += 1
            os.write(from_child_w, f"{opened} {closed} {failed}\n".encode())
            os.read(to_child_r, 1)  # the parent says: close them
            for s in socks:
                s.close()
            os._exit(0)
        os.close(to_child_r)
        os.close(from_child_w)
        children.append((pid, to_child_w, os.fdopen(from_child_r)))
    t0 = time.monotonic()
    for _, _, r in children:
        r.readline()
    out("FLOOD_CONNECT_SECONDS", f"{time.monotonic() - t0:.1f}")
    time.sleep(1.5)  # let the proxy accept (and close) what is over its limit
    totals = [0, 0, 0]
    for _, w, _ in children:
        os.write(w, b"c")
    for _, _, r in children:
        for i, v in enumerate(r.readline().split()):
            totals[i] += int(v)
    out("FLOOD_OPEN", totals[0])
    out("FLOOD_CLOSED", totals[1])
    out("FLOOD_FAILED", totals[2])
    for pid, w, r in children:
        os.write(w, b"x")
        os.waitpid(pid, 0)
        os.close(w)
        r.close()


def refused_held():
    """A request the rules refuse, on a connection left open: True when a status line came back."""
    try:
        s = socket.create_connection(PROXY, timeout=5)
        s.sendall(b"GET http://refused.test/ HTTP/1.1\r\nHost: refused.test\r\n\r\n")
        data = read_until(s, b"\r\n")
    except OSError:
        return None, False
    return s, data.startswith(b"HTTP/1.1 ")


def linger(n):
    # below the sandbox's open-files limit (1024, or the caller's lower one), with room to spare
    per_child = min(700, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 60)
    children = []
    t0 = time.monotonic()
    for start in range(0, n, per_child):
        count = min(per_child, n - start)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            held, answered = [], 0
            for _ in range(count):
                s, ok = refused_held()
                answered += ok
                held.append(s)
            os.write(w, f"{answered} {count - answered}\n".encode())
            time.sleep(3)  # held past the proxy's lingering
            os._exit(0)
        os.close(w)
        line = os.fdopen(r).readline()  # this child's share made before the next starts
        children.append((pid, line))
    seconds = time.monotonic() - t0
    totals = [0, 0]
    for pid, line in children:
        for i, v in enumerate(line.split()):
            totals[i] += int(v)
        os.waitpid(pid, 0)
    out("LINGER_ANSWERED", totals[0])
    out("LINGER_UNANSWERED", totals[1])
    out("LINGER_SECONDS", f"{seconds:.2f}")


guard = open_tunnel()
if action == "longline":
    longline()
elif action == "slowloris":
    slowloris()
elif action == "garbage":
    garbage()
elif action == "halfclose":
    halfclose()
elif action == "linger":
    linger(int(sys.argv[6]))
elif action == "flood":
    flood(int(sys.argv[6]))
else:
    sys.exit(f"unknown action {action}")
use_tunnel(guard)
out("AFTER", "ok" if proxied_get_retry(8) else "failed")

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# egress_sink.py PORTFILE: a TCP sink on the host's 127.0.0.1 for test_egress_hostile.sh and
# bench/egress. It accepts every connection (backlog 4096, so a burst of connects is not held
# back by SYN retries), reads and drops what comes until EOF, then closes; a connection whose
# first byte is 'e' is echoed back instead (bench/egress's latency). A connection that starts
# with "H<SIZE>\n" is hashed: everything after that line is counted and hashed (sha256) until
# EOF, then the sink answers "<count> <sha256 hex>\n" and SIZE bytes of reply_bytes(SIZE) and
# closes (the bulk cases: the answer comes only after the client's half-close);
# "H<SIZE> <PAUSE_MS>\n" stops reading that connection for PAUSE_MS after the line, with a
# small receive buffer, so that what the client sends meanwhile queues up in the proxy
# (the urgent data). One
# thread, one selector: thousands of connections cost it no threads. The port it listens on is
# written to PORTFILE (atomically: PORTFILE.tmp, then renamed).
import hashlib, os, random, resource, selectors, socket, sys, time


def reply_bytes(size):
    """The hashed mode's reply: SIZE pseudo-random bytes, the same for the same SIZE."""
    return random.Random(size).randbytes(size)


class Hashed:
    """A connection in the hashed mode: its "H<SIZE>\n" line, then the count and hash."""

    def __init__(self):
        self.line, self.size, self.count, self.sha = b"", None, 0, hashlib.sha256()
        self.pause_ms = 0

    def feed(self, data):
        if self.size is None:
            self.line += data
            if b"\n" not in self.line:
                return
            head, _, data = self.line.partition(b"\n")
            fields = head[1:].split()
            self.size = int(fields[0])
            self.pause_ms = int(fields[1]) if len(fields) > 1 else 0
        self.count += len(data)
        self.sha.update(data)

    def answer(self, s):
        s.setblocking(True)
        s.sendall(f"{self.count} {self.sha.hexdigest()}\n".encode())
        s.sendall(reply_bytes(self.size or 0))


portfile = sys.argv[1]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4096)
srv.setblocking(False)
sel = selectors.DefaultSelector()
sel.register(srv, selectors.EVENT_READ, None)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
buf = bytearray(1 << 20)
paused = []  # (monotonic time to read again, socket, its Hashed)
while True:
    now = time.monotonic()
    for p in [p for p in paused if p[0] <= now]:
        paused.remove(p)
        sel.register(p[1], selectors.EVENT_READ, p[2])
    wait = min((p[0] for p in paused), default=now + 3600) - now
    for key, _ in sel.select(max(wait, 0)):
        s = key.fileobj
        if s is srv:
            while True:
                try:
                    c, _ = srv.accept()
                except BlockingIOError:
                    break
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ, "new")
            continue
        try:
            n = s.recv_into(buf)
        except BlockingIOError:
            continue
        except OSError:
            n = 0
        if n == 0:
            sel.unregister(s)
            if isinstance(key.data, Hashed):
                try:
                    key.data.answer(s)
                except OSError:
                    pass
            s.close()
            continue
        if key.data == "new":
            mode = {b"e": "echo", b"H": Hashed()}.get(bytes(buf[0:1]), "sink")
            sel.modify(s, selectors.EVENT_READ, mode)
        data = sel.get_key(s).data
        if isinstance(data, Hashed):
            data.feed(bytes(buf[:n]))
            if data.pause_ms:
                # a small fixed buffer: what the client sends meanwhile stays in the proxy
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
                sel.unregister(s)
                paused.append((time.monotonic() + data.pause_ms / 1000, s, data))
                data.pause_ms = 0
        elif data == "echo":
            s.setblocking(True)
            s.sendall(memoryview(buf)[:n])
            s.setblocking(False)

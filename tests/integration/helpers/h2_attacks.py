#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""h2_attacks.py CASE HOST PORT [ARG...]: the raw h2 client of test_h2.sh's flow-control and
connection-end cases (through $HTTPS_PROXY, ALPN h2; built on h2_hostile.py, which must sit beside
it). Each case's docstring says what it does; it prints LAST:<stream>:done=<bool> got=<bytes>
(and CWIN:<connection window> for upleak) for the test to read."""
import os
import struct
import sys
import time

import h2_hostile as H
from h2_hostile import frame, out

H.DEADLINE = H.START + 40
DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, WU, CONT = 0, 1, 3, 4, 6, 7, 8, 9


class C(H.Client):
    def __init__(self, *a, ack=True, **k):
        super().__init__(*a, **k)
        self.ack = ack
        self.bodies = {}
        self.print_body = True
        self.cwin = 65535
        self.swin = {}

    def upload(self, sid, total, end=True):
        sent = 0
        self.swin.setdefault(sid, 262144)
        while sent < total:
            n = min(16384, total - sent)
            if self.cwin < n or self.swin[sid] < n:
                self.pump(stop=lambda: self.cwin >= n and self.swin[sid] >= n, quiet=4)
                if self.cwin < n or self.swin[sid] < n:
                    out(f"UPLOAD-STALLED:{sid}:sent={sent} cwin={self.cwin} swin={self.swin[sid]}")
                    return sent
            self.cwin -= n
            self.swin[sid] -= n
            self.send(frame(DATA, 1 if (end and sent + n >= total) else 0, sid, b"u" * n))
            sent += n
        return sent

    def frame(self, ftype, flags, sid, payload):
        if ftype == DATA:
            st = self.streams.get(sid)
            p = H.unpad(flags, payload)
            self.bodies[sid] = self.bodies.get(sid, b"") + p
            if st:
                st.body += len(p)
            if payload and self.ack:
                inc = struct.pack(">I", len(payload))
                self.send(frame(WU, 0, 0, inc) + frame(WU, 0, sid, inc))
            if flags & 1:
                self.stream_end(sid)
            return
        if ftype in (HEADERS, CONT):
            return self.hdr(ftype, flags, sid, payload)
        if ftype == WU:
            inc = struct.unpack(">I", payload)[0]
            if sid == 0:
                self.cwin += inc
            else:
                self.swin[sid] = self.swin.get(sid, 0) + inc
            return
        return super().frame(ftype, flags, sid, payload)

    def hdr(self, ftype, flags, sid, payload):
        if ftype == HEADERS:
            payload = H.unpad(flags, payload)
            if flags & 0x20:
                payload = payload[5:]
            self.block = (ftype, sid, flags, payload)
        else:
            t, s, f, b = self.block
            self.block = (t, s, f, b + payload)
        if flags & 0x4:
            t, s, f, b = self.block
            self.block = None
            hs = self.dec.decode(b, raw=True)
            out(f"HDRS:{s}:" + " ".join(f"{k.decode()}={v.decode('latin-1')}" for k, v in hs))
            st = self.streams.get(s)
            if st and any(k == b":status" and not v.startswith(b"1") for k, v in hs):
                st.status = b"x"
            if f & 1:
                self.stream_end(s)

    def stream_end(self, sid):
        st = self.streams.get(sid)
        if st and not st.done:
            st.done = True
            out(f"END:{sid}:{self.bodies.get(sid, b'')[:300]!r} len={len(self.bodies.get(sid, b''))}")

    def req(self, fields, end=True, sid=None):
        sid = sid or self.new_stream()
        blk = self.enc.encode(fields)
        self.send(b"".join(self.headers_frames(sid, blk, end_stream=end)))
        return sid

    def base(self, path, method="GET"):
        return [(":method", method), (":scheme", "https"), (":authority", self.authority),
                (":path", path)]


def setup(host, port, window=1 << 24, ack=True, conn_window=None):
    tls = H.connect(host, port, os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy"),
                    None, None)
    c = C(tls, host, port, "x", ack=ack)
    st = struct.pack(">HIHI", 2, 0, 4, window)
    cw = (1 << 24) if conn_window is None else conn_window
    pre = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0, st)
    if cw > 65535:
        pre += frame(WU, 0, 0, struct.pack(">I", cw - 65535))
    c.send(pre)
    c.pump(stop=lambda: c.server_settings is not None)
    return c


def main():
    case, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    args = sys.argv[4:]
    f = globals()["case_" + case.replace("-", "_")]
    f(host, port, *args)


# ---- cases ----

def case_fields(host, port, *kv):
    """one request with raw fields NAME=VALUE (pseudo included, in order)"""
    c = setup(host, port)
    fields = [tuple(y.encode("latin-1").decode("unicode_escape").encode("latin-1") for y in x.split("=", 1)) for x in kv]
    sid = c.new_stream()
    c.req(fields, sid=sid)
    c.finish()


def case_winleak(host, port, n="3"):
    """client window tiny: the proxy buffers the origin's body; reset; repeat; then a normal GET"""
    c = setup(host, port, window=1, ack=False, conn_window=65535)
    for i in range(int(n)):
        sid = c.req(c.base("/big/300000"))
        c.pump(quiet=1.5)
        c.send(frame(RST, 0, sid, struct.pack(">I", 8)))
        c.pump(quiet=0.5)
    # now open our windows and ask for a small thing
    c.ack = True
    c.send(frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 1 << 20)) +
           frame(WU, 0, 0, struct.pack(">I", 1 << 24)))
    sid = c.req(c.base("/big/100000"))
    c.pump(stop=lambda: c.streams[sid].done, quiet=6)
    out(f"LAST:{sid}:done={c.streams[sid].done} got={len(c.bodies.get(sid, b''))}")


def case_upleak(host, port, n="3"):
    """upload to /noread (origin never acks, resets after 64 KiB); repeat; then an upload elsewhere"""
    c = setup(host, port)
    for i in range(int(n)):
        sid = c.req(c.base("/noread", "POST"), end=False)
        c.upload(sid, 6 * 16384, end=False)
        c.pump(quiet=1.0)
    out(f"CWIN:{c.cwin}")
    sid = c.req(c.base("/dump", "POST"), end=False)
    c.upload(sid, 8 * 16384)
    c.pump(stop=lambda: c.streams[sid].done, quiet=6)
    out(f"LAST:{sid}:done={c.streams[sid].done} got={c.bodies.get(sid, b'')[-40:]!r}")


def case_rstresp(host, port):
    """request then RST at once; the origin answers later; then another request on the conn"""
    c = setup(host, port)
    sid = c.req(c.base("/split/10"))
    c.send(frame(RST, 0, sid, struct.pack(">I", 8)))
    time.sleep(1)
    sid2 = c.req(c.base("/dump"))
    c.pump(stop=lambda: c.streams[sid2].done, quiet=4)
    out(f"LAST:{sid2}:done={c.streams[sid2].done}")


def case_paths(host, port, *paths):
    c = setup(host, port)
    for p in paths:
        c.req(c.base(p))
    c.finish()



def case_post(host, port, path, *parts):
    """POST path; parts: d:TEXT (DATA), t:NAME=VALUE,... (trailers, ends), e (END_STREAM empty DATA),
    r (RST), s:SEC (sleep)"""
    c = setup(host, port)
    sid = c.req(c.base(path, "POST") + [("content-type", "text/plain")], end=False)
    for p in parts:
        if p.startswith("d:"):
            c.send(frame(DATA, 0, sid, p[2:].encode()))
        elif p.startswith("t:"):
            tr = [tuple(x.split("=", 1)) for x in p[2:].split(",")]
            c.send(frame(HEADERS, 0x5, sid, c.enc.encode(tr)))
        elif p == "e":
            c.send(frame(DATA, 1, sid, b""))
        elif p == "r":
            c.send(frame(RST, 0, sid, struct.pack(">I", 8)))
        elif p.startswith("s:"):
            c.pump(quiet=float(p[2:]))
    c.finish()


def case_queue(host, port, rounds="3", size="12000"):
    """origin holds stream 1 (MAXSTREAMS=1): requests queue in the proxy's upstream session"""
    c = setup(host, port)
    c.req(c.base("/noread", "POST"), end=False)
    for r in range(int(rounds)):
        sids = []
        for i in range(90):
            sids.append(c.req(c.base(f"/q{r}-{i}") + [("x-big", "b" * int(size) + str(i))]))
        c.send(b"".join(frame(RST, 0, s, struct.pack(">I", 8)) for s in sids))
        c.pump(quiet=0.5)
        out(f"ROUND:{r} closed={c.closed} goaway={c.goaway}")
        if c.closed:
            break
    c.finish()


def case_get(host, port, path, window="65535"):
    """one GET with the client's stream window WINDOW (acked as read)"""
    c = setup(host, port, window=int(window), conn_window=int(window))
    sid = c.req(c.base(path))
    c.pump(stop=lambda: c.streams[sid].done, quiet=5)
    out(f"LAST:{sid}:done={c.streams[sid].done} got={len(c.bodies.get(sid, b''))} goaway={c.goaway} closed={c.closed}")


def case_hold(host, port, path, secs="2"):
    c = setup(host, port)
    c.req(c.base(path))
    c.pump(quiet=float(secs))


def case_abort(host, port, path="/noread"):
    import socket
    c = setup(host, port)
    c.req(c.base(path, "POST"), end=False)
    c.req(c.base("/split/10"))
    time.sleep(0.1)
    raw = socket.socket(fileno=c.tls.fileno())
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    raw.close()
    out("ABORTED")


if __name__ == "__main__":
    main()

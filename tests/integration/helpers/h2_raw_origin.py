#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""h2_raw_origin.py PORTFILE LOG CERT KEY: a raw h2 origin for test_h2.sh's hostile-origin cases (frames
built by hand with hpack, so that it can send what python3-h2 would not). It logs every field it
receives; the path picks the answer:
  /dump          200, body: the request's fields (and the body length) as received
  /split/K       200, body "A"*K + TOKEN, cut in two DATA frames inside TOKEN (sent 0.3 s apart)
  /interim       103 with x-t: TOKEN, then 200 "ok"
  /trailer       200, "body\n", trailers x-t: TOKEN
  /big/N         N bytes of 'x' as the peer's windows allow
  /noread        never answers, never acknowledges the body (no WINDOW_UPDATE); RST_STREAM
                 CANCEL after 64 KiB of it arrived
  /rst-now       RST_STREAM CANCEL at once
  /hdr-token     200 with TOKEN in many header forms
  /bigbye/N      N bytes, END_STREAM, then GOAWAY and a close (the proxy must still deliver all)
  /badhdr2/L     a response field nghttp2 refuses (a name of L bytes, TOKEN in its value), then
                 a connection error: TOKEN must not reach the audit trail in any reason
TOKEN comes from $ORIGIN_TOKEN; MAXSTREAMS (default 100) its SETTINGS_MAX_CONCURRENT_STREAMS,
NOACK=1 never acknowledges any DATA. Log: one line per received field and per event, with
the connection and stream (conn=C stream=S ...)."""
import os
import socket
import ssl
import struct
import sys
import threading
import time

import hpack

TOKEN = os.environ.get("ORIGIN_TOKEN", "real-secret-token-9a8b7c").encode()
portfile, logfile, cert, key = sys.argv[1:5]
NOACK = os.environ.get("NOACK") == "1"  # never send WINDOW_UPDATE for any DATA
MAXSTREAMS = int(os.environ.get("MAXSTREAMS", "100"))
lock = threading.Lock()


def log(s):
    with lock, open(logfile, "a") as f:
        f.write(s + "\n")


def frame(t, fl, sid, p=b""):
    return struct.pack(">I", len(p))[1:] + bytes([t, fl]) + struct.pack(">I", sid) + p


class Conn:
    def __init__(self, tls, cid):
        self.tls, self.cid = tls, cid
        self.enc, self.dec = hpack.Encoder(), hpack.Decoder()
        self.dec.max_header_list_size = 1 << 24
        self.wlock = threading.Lock()
        self.cv = threading.Condition()
        self.conn_win = 65535
        self.init_win = 65535
        self.swin = {}
        self.body = {}
        self.fields = {}
        self.block = None
        self.closed = False

    def send(self, b):
        with self.wlock:
            try:
                self.tls.sendall(b)
            except OSError:
                self.closed = True

    def headers(self, sid, hdrs, end=False):
        with self.wlock:
            blk = self.enc.encode(hdrs)
        self.send(frame(1, 0x4 | (1 if end else 0), sid, blk))

    def data(self, sid, b, end=False):
        # as the windows allow; a stream the peer reset stops it at once (its window would
        # never open: waiting for it delayed what came next by the 5 s stall)
        off = 0
        while True:
            with self.cv:
                while not self.closed and sid in self.swin and \
                        (self.conn_win <= 0 or self.swin[sid] <= 0) and off < len(b):
                    if not self.cv.wait(5):
                        log(f"conn={self.cid} stream={sid} stalled sent={off}")
                        return off
                if self.closed or sid not in self.swin:
                    return off
                n = min(len(b) - off, 16384, self.conn_win, self.swin[sid])
                self.conn_win -= n
                self.swin[sid] -= n
            last = off + n >= len(b)
            self.send(frame(0, 1 if (end and last) else 0, sid, b[off:off + n]))
            off += n
            if last:
                return off

    def respond(self, sid, f):
        path = f.get(":path", "")
        log(f"conn={self.cid} stream={sid} req {f.get(':method')} {path} fields={f['_list']}")
        if path.startswith("/split/"):
            k = int(path[7:])
            self.headers(sid, [(":status", "200"), ("content-type", "text/plain")])
            body = b"A" * k + TOKEN + b"\n"
            cut = k + 5
            self.data(sid, body[:cut])
            time.sleep(0.3)
            self.data(sid, body[cut:], end=True)
        elif path == "/interim":
            self.headers(sid, [(":status", "103"), ("x-t", TOKEN.decode())])
            self.headers(sid, [(":status", "200"), ("x-t2", "k" + TOKEN.decode())])
            self.data(sid, b"ok\n", end=True)
        elif path == "/trailer":
            self.headers(sid, [(":status", "200")])
            self.data(sid, b"body\n")
            self.headers(sid, [("x-t", TOKEN.decode()), ("grpc-message", TOKEN.decode())], end=True)
        elif path.startswith("/big/"):
            n = int(path[5:])
            self.headers(sid, [(":status", "200"), ("content-length", str(n))])
            sent = self.data(sid, b"x" * n, end=True)
            log(f"conn={self.cid} stream={sid} big sent={sent}")
        elif path.startswith("/bigbye/"):
            n = int(path[8:])
            self.headers(sid, [(":status", "200"), ("content-length", str(n))])
            sent = self.data(sid, b"y" * n, end=True)
            self.send(frame(7, 0, 0, struct.pack(">II", sid, 0)))
            log(f"conn={self.cid} stream={sid} bigbye sent={sent}, goaway, close")
            time.sleep(0.2)
            try:
                self.tls.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        elif path == "/badhdr":
            # a header field nghttp2 ignores (trailing blank), holding the token
            with self.wlock:
                blk = self.enc.encode([(":status", "200"), ("content-length", "3")]) + \
                    b"\x00" + bytes([5]) + b"x-tok" + bytes([len(TOKEN) + 1]) + TOKEN + b" "
            self.send(frame(1, 0x4, sid, blk))
            self.data(sid, b"ok\n", end=True)
            time.sleep(0.5)
            self.send(frame(0, 0, 0, b"boom"))  # DATA on stream 0: a connection error
        elif path.startswith("/badhdr2/"):
            nl = int(path[9:])
            name = b"x-" + b"a" * (nl - 2)
            with self.wlock:
                blk = self.enc.encode([(":status", "200"), ("content-length", "3")]) + \
                    b"\x00" + bytes(hpack.hpack.encode_integer(len(name), 7)) + name + bytes([len(TOKEN) + 1]) + TOKEN + b" "
            self.send(frame(1, 0x4, sid, blk))
            self.data(sid, b"ok\n", end=True)
            time.sleep(0.5)
            self.send(frame(0, 0, 0, b"boom"))
        elif path == "/die":
            time.sleep(0.1)
            try:
                self.tls.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        elif path == "/rst-now":
            self.send(frame(3, 0, sid, struct.pack(">I", 8)))
        elif path == "/hdr-token":
            self.headers(sid, [(":status", "200"), ("x-a", TOKEN.decode()),
                               ("set-cookie", "s=" + TOKEN.decode()),
                               ("cookie", TOKEN[:6].decode()), ("cookie", TOKEN[6:].decode()),
                               ("content-length", "3")])
            self.data(sid, b"ok\n", end=True)
        elif path == "/noread":
            pass
        else:
            b = (repr(f["_list"]) + f" body={len(self.body.get(sid, b''))}\n").encode()
            self.headers(sid, [(":status", "200"), ("content-length", str(len(b)))])
            self.data(sid, b, end=True)

    def on_block(self, sid, flags, blk):
        try:
            h = self.dec.decode(blk, raw=True)
        except Exception as e:
            log(f"conn={self.cid} hpack error {e}")
            return
        lst = [(k.decode("latin-1") + ("!" if type(x).__name__.startswith("NeverIndexed") else ""), v.decode("latin-1")) for x in h for k, v in [x]]
        if sid in self.fields:  # trailers
            log(f"conn={self.cid} stream={sid} trailers {lst}")
            self.fields[sid]["_trailers"] = lst
            if flags & 1:
                self.end(sid)
            return
        f = {k.rstrip("!"): v for k, v in reversed(lst)}
        f["_list"] = lst
        self.fields[sid] = f
        self.swin[sid] = self.init_win
        self.body[sid] = b""
        if flags & 1 or f.get(":path") in ("/noread", "/rst-now"):
            self.end(sid)

    def end(self, sid):
        threading.Thread(target=self.respond, args=(sid, self.fields[sid]), daemon=True).start()

    def run(self):
        buf = bytearray()
        pre = b""
        while len(pre) < 24:
            d = self.tls.recv(24 - len(pre))
            if not d:
                return
            pre += d
        self.send(frame(4, 0, 0, struct.pack(">HI", 3, MAXSTREAMS)) + frame(8, 0, 0, struct.pack(">I", 1 << 24)))
        while True:
            try:
                d = self.tls.recv(65536)
            except OSError:
                d = b""
            if not d:
                log(f"conn={self.cid} closed")
                with self.cv:
                    self.closed = True
                    self.cv.notify_all()
                return
            buf += d
            while len(buf) >= 9:
                ln = int.from_bytes(buf[:3], "big")
                if len(buf) < 9 + ln:
                    break
                t, fl = buf[3], buf[4]
                sid = struct.unpack(">I", buf[5:9])[0] & 0x7FFFFFFF
                p = bytes(buf[9:9 + ln])
                del buf[:9 + ln]
                self.on_frame(t, fl, sid, p)

    def on_frame(self, t, fl, sid, p):
        if t == 4 and not fl & 1:
            for i in range(0, len(p), 6):
                k, v = struct.unpack(">HI", p[i:i + 6])
                if k == 4:
                    with self.cv:
                        d = v - self.init_win
                        self.init_win = v
                        for s in self.swin:
                            self.swin[s] += d
                        self.cv.notify_all()
            self.send(frame(4, 1, 0))
        elif t == 6 and not fl & 1:
            self.send(frame(6, 1, 0, p))
        elif t == 8:
            inc = struct.unpack(">I", p)[0] & 0x7FFFFFFF
            with self.cv:
                if sid == 0:
                    self.conn_win += inc
                elif sid in self.swin:
                    self.swin[sid] += inc
                self.cv.notify_all()
        elif t == 1:
            if fl & 0x8:
                p = p[1:len(p) - p[0]]
            if fl & 0x20:
                p = p[5:]
            if fl & 0x4:
                self.on_block(sid, fl, p)
            else:
                self.block = (sid, fl, p)
        elif t == 9 and self.block:
            s, f0, b = self.block
            self.block = (s, f0, b + p)
            if fl & 0x4:
                self.block = None
                self.on_block(s, f0, b + p)
        elif t == 0:
            n = len(p)
            if fl & 0x8:
                p = p[1:len(p) - p[0]]
            self.body[sid] = self.body.get(sid, b"") + p
            f = self.fields.get(sid, {})
            log(f"conn={self.cid} stream={sid} data {len(p)} end={fl & 1} total={len(self.body[sid])}")
            if f.get(":path") == "/noread":
                if len(self.body[sid]) >= 60000 and not f.get("_rst"):
                    f["_rst"] = True
                    self.send(frame(3, 0, sid, struct.pack(">I", 8)))
                    log(f"conn={self.cid} stream={sid} rst-sent")
                return
            if n and not NOACK:
                self.send(frame(8, 0, 0, struct.pack(">I", n)) + frame(8, 0, sid, struct.pack(">I", n)))
            if fl & 1:
                self.end(sid)
        elif t == 3:
            log(f"conn={self.cid} stream={sid} rst {struct.unpack('>I', p)[0]}")
            with self.cv:
                self.swin.pop(sid, None)
                self.cv.notify_all()
        elif t == 7:
            log(f"conn={self.cid} goaway {p[:8].hex()} {p[8:]!r}")


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["h2"])
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(50)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    cid = 0
    while True:
        c, _ = s.accept()
        cid += 1
        try:
            t = ctx.wrap_socket(c, server_side=True)
        except (OSError, ssl.SSLError) as e:
            log(f"tls error {e}")
            continue
        log(f"conn={cid} tls alpn={t.selected_alpn_protocol()}")
        threading.Thread(target=Conn(t, cid).run, daemon=True).start()


main()

#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""h2_hostile.py CASE [ARG] HOST PORT [--proxy URL] [--ca FILE] [--authority NAME] [--address IP]:
a raw HTTP/2 client that sends what no ordinary client does, for test_h2.sh's attack cases.

It opens TLS to HOST:PORT (server name HOST, ALPN h2 only, verified against --ca FILE, else the
default trust: SSL_CERT_FILE or the system's), through the HTTP proxy URL with CONNECT when
--proxy is given, else through $HTTPS_PROXY / $https_proxy when set (--proxy "" goes direct;
--address IP then connects there instead of resolving HOST, as curl's --resolve).
It sends the preface and SETTINGS (ENABLE_PUSH 0, INITIAL_WINDOW_SIZE 16 MiB), waits for the
server's SETTINGS, then plays CASE, frames built by hand (header blocks by hpack). Requests go
to :authority HOST:PORT (HOST alone for 443), :scheme https, :path /h2-hostile/CASE.

Cases (N: a count; each *-flood and rapid-reset ends with one ordinary GET, so a small N is the
control that must give STATUS:200):
    continuation-flood N  one GET whose header block is a HEADERS frame without END_HEADERS and
                          N one-byte CONTINUATION frames (the block padded by an x-pad header
                          when it is shorter than N bytes); the GET itself is the control
    hpack-bomb N          one GET whose block inserts x-bomb (4000 bytes, less when the server's
                          table is smaller) into the dynamic table, then references it N more
                          times by index (N+1 copies decoded from ~4 KiB + N bytes)
    settings-flood N      N SETTINGS frames (ENABLE_PUSH 0) without reading, then a GET
    ping-flood N          N PINGs without reading, then a GET
    rapid-reset N         N pairs of HEADERS (a GET) and RST_STREAM CANCEL, then a GET
                          (responses to the cancelled streams are not printed)
    window-overflow       WINDOW_UPDATE on stream 0 by 2^31-1 (the window passes 2^31-1), then
                          a GET
    streams N             N GETs left open (HEADERS without END_STREAM); after 1.5 s quiet,
                          REFUSED:<count reset with REFUSED_STREAM>; then the others are ended
                          and their responses read
    bad-pseudo KIND       one request: scheme-http (:scheme http), authority-mismatch
                          (:authority NAME), host-mismatch (:authority right, host: NAME),
                          connect (:method CONNECT, :authority NAME:PORT, no :scheme/:path, the
                          stream left open), no-path (no :path); NAME: --authority, default
                          other.test
    get PATH              one ordinary GET of PATH (a control; also shows trailers and pushes)

Output, one line each, as it happens:
    SETTING:<NAME>=<value>    each setting in the server's first SETTINGS frame
    SENT:<n>                  flood cases: frames written before the flood ended (less than
                              asked: the server stopped reading or closed)
    STATUS:<code>             each response's :status
    TRAILER:<name>=<value>    each trailer field
    BODY:<stream>:<bytes>     a response's end (get only)
    PUSH_PROMISE:<stream>     a PUSH_PROMISE, with the stream it promised
    RST:<stream>:<code name>  each RST_STREAM received
    REFUSED:<n>               streams only
    PING-ACKS:<n>, SETTINGS-ACKS:<n>   ping-flood, settings-flood: acknowledgements seen (the
                              SETTINGS ones include the one for the opening SETTINGS: N+1)
    GOAWAY:<code name>        the server sent GOAWAY
    CLOSED                    the server closed the connection
    ERROR:<text>              what stopped the run (connect, CONNECT, TLS, ALPN, a bad frame)
It exits 0 whenever it got that far (2: bad arguments), within 10 s: it stops reading when every
request has ended, or nothing arrived for 3 s, or after 9 s."""
import argparse
import os
import socket
import ssl
import struct
import sys
import time
import urllib.parse

import hpack
from hpack.hpack import encode_integer

START = time.monotonic()
DEADLINE = START + 9.0
QUIET = 3.0
ERRORS = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
          "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
          "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY",
          "HTTP_1_1_REQUIRED"]
SETTINGS = {1: "HEADER_TABLE_SIZE", 2: "ENABLE_PUSH", 3: "MAX_CONCURRENT_STREAMS",
            4: "INITIAL_WINDOW_SIZE", 5: "MAX_FRAME_SIZE", 6: "MAX_HEADER_LIST_SIZE",
            8: "ENABLE_CONNECT_PROTOCOL"}
DATA, HEADERS, RST_STREAM, SETTINGS_T, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = 0, 1, 3, 4, 5, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20
WINDOW = 1 << 24
BAD_PSEUDO = ["scheme-http", "authority-mismatch", "host-mismatch", "connect", "no-path"]


def out(line):
    print(line, flush=True)


def code_name(code):
    return ERRORS[code] if code < len(ERRORS) else str(code)


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", sid) + payload


class Stop(Exception):
    """The run is over (its reason already printed)."""


def remaining():
    return max(0.05, DEADLINE - time.monotonic())


def connect(host, port, proxy, ca, address):
    if proxy:
        p = urllib.parse.urlsplit(proxy)
        s = socket.create_connection((p.hostname, p.port or 80), timeout=remaining())
        s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            b = s.recv(1)
            if not b:
                out("ERROR:the proxy closed the CONNECT")
                raise Stop
            head += b
        status = head.split(b"\r\n")[0].decode("latin-1")
        if status.split(" ")[1:2] != ["200"]:
            out(f"ERROR:CONNECT refused: {status}")
            raise Stop
    else:
        s = socket.create_connection((address or host, port), timeout=remaining())
    ctx = ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context()
    ctx.set_alpn_protocols(["h2"])
    t = ctx.wrap_socket(s, server_hostname=host)
    if t.selected_alpn_protocol() != "h2":
        out(f"ERROR:alpn={t.selected_alpn_protocol()}")
        raise Stop
    return t


class Stream:
    def __init__(self, quiet=False, done_on_status=False):
        self.quiet = quiet                    # cancelled by us: its answers are not printed
        self.done_on_status = done_on_status  # a CONNECT: its response has no end
        self.status = None
        self.body = 0
        self.done = False


class Client:
    def __init__(self, tls, host, port, case):
        self.tls = tls
        self.authority = host if port == 443 else f"{host}:{port}"
        self.path = f"/h2-hostile/{case}"
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.dec.max_header_list_size = 1 << 26
        self.dec.max_allowed_table_size = 1 << 16
        self.next_id = 1
        self.streams = {}
        self.server_settings = None
        self.settings_acks = 0
        self.ping_acks = 0
        self.refused = 0
        self.goaway = False
        self.closed = False
        self.inbuf = bytearray()
        self.block = None  # (frame type, stream, flags, bytes) of a header block being read
        self.print_body = case == "get"

    # -- sending

    def send(self, data):
        self.tls.settimeout(remaining())
        try:
            self.tls.sendall(data)
        except (socket.timeout, OSError, ssl.SSLError):
            return False
        return True

    def send_frames(self, frames):
        """Writes frames in batches until done, the deadline is near, or the server is gone:
        the number written."""
        sent, batch, size = 0, [], 0
        for f in frames:
            batch.append(f)
            size += len(f)
            if size >= 1 << 16:
                if time.monotonic() > DEADLINE - 3 or not self.send(b"".join(batch)):
                    return sent
                sent, batch, size = sent + len(batch), [], 0
        if batch and time.monotonic() <= DEADLINE - 3 and self.send(b"".join(batch)):
            sent += len(batch)
        return sent

    def new_stream(self, **kw):
        sid = self.next_id
        self.next_id += 2
        self.streams[sid] = Stream(**kw)
        return sid

    def request_headers(self, method="GET", path=None):
        return [(":method", method), (":scheme", "https"), (":authority", self.authority),
                (":path", path or self.path)]

    def headers_frames(self, sid, block, end_stream=True):
        """HEADERS and, past the server's frame size, CONTINUATION frames."""
        limit = (self.server_settings or {}).get(5, 16384)
        chunks = [block[i:i + limit] for i in range(0, len(block), limit)] or [b""]
        frames = []
        for i, chunk in enumerate(chunks):
            flags = END_HEADERS if i == len(chunks) - 1 else 0
            if i == 0:
                frames.append(frame(HEADERS, flags | (END_STREAM if end_stream else 0), sid,
                                    chunk))
            else:
                frames.append(frame(CONTINUATION, flags, sid, chunk))
        return frames

    def get(self, path=None, **kw):
        sid = self.new_stream(**kw)
        return sid, self.headers_frames(sid, self.enc.encode(self.request_headers(path=path)))

    # -- reading

    def pump(self, stop=lambda: False, quiet=QUIET):
        """Reads and handles frames until stop() holds, the connection ends, nothing came for
        quiet seconds, or the deadline."""
        last = time.monotonic()
        while not self.closed and not stop():
            now = time.monotonic()
            if now >= DEADLINE or now - last >= quiet:
                return
            self.tls.settimeout(min(DEADLINE - now, quiet - (now - last), 0.5))
            try:
                data = self.tls.recv(1 << 16)
            except socket.timeout:
                continue
            except (OSError, ssl.SSLError):
                data = b""
            if not data:
                out("CLOSED")
                self.closed = True
                return
            last = time.monotonic()
            self.inbuf += data
            self.frames()

    def frames(self):
        while len(self.inbuf) >= 9:
            length = int.from_bytes(self.inbuf[0:3], "big")
            if len(self.inbuf) < 9 + length:
                return
            ftype, flags = self.inbuf[3], self.inbuf[4]
            sid = struct.unpack(">I", self.inbuf[5:9])[0] & 0x7FFFFFFF
            payload = bytes(self.inbuf[9:9 + length])
            del self.inbuf[:9 + length]
            self.frame(ftype, flags, sid, payload)

    def frame(self, ftype, flags, sid, payload):
        if ftype == SETTINGS_T:
            if flags & ACK:
                self.settings_acks += 1
                return
            values = {}
            for i in range(0, len(payload) - 5, 6):
                k, v = struct.unpack(">HI", payload[i:i + 6])
                values[k] = v
            if self.server_settings is None:
                for k, v in values.items():
                    out(f"SETTING:{SETTINGS.get(k, k)}={v}")
                self.server_settings = {}
            self.server_settings.update(values)
            self.send(frame(SETTINGS_T, ACK, 0))
        elif ftype == PING:
            if flags & ACK:
                self.ping_acks += 1
            else:
                self.send(frame(PING, ACK, 0, payload))
        elif ftype in (HEADERS, PUSH_PROMISE):
            payload = unpad(flags, payload)
            if ftype == HEADERS and flags & PRIORITY:
                payload = payload[5:]
            self.block = (ftype, sid, flags, payload)
            if flags & END_HEADERS:
                self.header_block()
        elif ftype == CONTINUATION and self.block:
            t, s, f, b = self.block
            self.block = (t, s, f, b + payload)
            if flags & END_HEADERS:
                self.header_block()
        elif ftype == DATA:
            st = self.streams.get(sid)
            n = len(payload)
            if st:
                st.body += len(unpad(flags, payload))
            if n:
                inc = struct.pack(">I", n)
                self.send(frame(WINDOW_UPDATE, 0, 0, inc) + frame(WINDOW_UPDATE, 0, sid, inc))
            if flags & END_STREAM:
                self.stream_end(sid)
        elif ftype == RST_STREAM:
            code = struct.unpack(">I", payload[:4])[0] if len(payload) >= 4 else -1
            out(f"RST:{sid}:{code_name(code)}")
            if code == 7:
                self.refused += 1
            if sid in self.streams:
                self.streams[sid].done = True
        elif ftype == GOAWAY:
            code = struct.unpack(">I", payload[4:8])[0] if len(payload) >= 8 else -1
            out(f"GOAWAY:{code_name(code)}")
            self.goaway = True

    def header_block(self):
        ftype, sid, flags, block = self.block
        self.block = None
        if ftype == PUSH_PROMISE:
            promised = struct.unpack(">I", block[:4])[0] & 0x7FFFFFFF
            block = block[4:]
            out(f"PUSH_PROMISE:{promised}")
        try:
            headers = self.dec.decode(block, raw=True)
        except Exception as e:  # any HPACK failure ends the run the same way
            out(f"ERROR:hpack: {type(e).__name__}: {e}")
            raise Stop
        if ftype == PUSH_PROMISE:
            return
        st = self.streams.get(sid) or Stream(quiet=True)
        fields = dict(headers)
        informational = st.status is not None and st.status.startswith(b"1")
        if b":status" in fields and (st.status is None or informational):
            st.status = fields.get(b":status", b"-")
            if not st.quiet:
                out(f"STATUS:{st.status.decode('latin-1')}")
            if st.done_on_status and not st.status.startswith(b"1"):
                st.done = True
        else:
            for k, v in headers:
                if not st.quiet:
                    out(f"TRAILER:{k.decode('latin-1')}={v.decode('latin-1')}")
        if flags & END_STREAM:
            self.stream_end(sid)

    def stream_end(self, sid):
        st = self.streams.get(sid)
        if st:
            st.done = True
            if self.print_body and not st.quiet:
                out(f"BODY:{sid}:{st.body}")

    def open_streams(self):
        return [s for s in self.streams.values() if not s.done and not s.quiet]

    def finish(self):
        self.pump(stop=lambda: not self.open_streams())
        if self.goaway and not self.closed:
            self.pump(quiet=1.5)


def unpad(flags, payload):
    if flags & PADDED and payload:
        return payload[1:len(payload) - payload[0]]
    return payload


def literal_indexed(name, value):
    """A literal header field with incremental indexing and a new name, no Huffman."""
    return b"\x40" + bytes(encode_integer(len(name), 7)) + name + \
        bytes(encode_integer(len(value), 7)) + value


def case_continuation_flood(c, n):
    sid = c.new_stream()
    headers = c.request_headers()
    # the block needs a byte for each CONTINUATION
    size = len(hpack.Encoder().encode(headers, huffman=False))
    if size < n:
        headers = headers + [("x-pad", "p" * (n - size + 8))]
    block = c.enc.encode(headers, huffman=False)
    head, tail = block[:len(block) - n], block[len(block) - n:]
    if n == 0:
        frames = [frame(HEADERS, END_STREAM | END_HEADERS, sid, head)]
    else:
        frames = [frame(HEADERS, END_STREAM, sid, head)]
        frames += [frame(CONTINUATION, END_HEADERS if i == n - 1 else 0, sid, tail[i:i + 1])
                   for i in range(n)]
    out(f"SENT:{c.send_frames(frames)}")


def case_hpack_bomb(c, n):
    sid = c.new_stream()
    size = (c.server_settings or {}).get(1, 4096)
    name = b"x-bomb"
    vlen = min(4000, size - 32 - len(name))
    if vlen < 1:
        out(f"ERROR:the server's header table ({size} bytes) holds no x-bomb")
        raise Stop
    block = c.enc.encode(c.request_headers()) + literal_indexed(name, b"b" * vlen)
    block += bytes([0x80 | 62]) * n  # the newest dynamic entry is index 62
    c.send_frames(c.headers_frames(sid, block))


def flood_then_get(c, frames):
    out(f"SENT:{c.send_frames(frames)}")
    _, get = c.get()
    c.send_frames(get)


def case_settings_flood(c, n):
    one = frame(SETTINGS_T, 0, 0, struct.pack(">HI", 2, 0))
    flood_then_get(c, (one for _ in range(n)))


def case_ping_flood(c, n):
    flood_then_get(c, (frame(PING, 0, 0, struct.pack(">Q", i)) for i in range(n)))


def case_rapid_reset(c, n):
    def pairs():
        for _ in range(n):
            sid, frames = c.get(quiet=True)
            yield from frames
            yield frame(RST_STREAM, 0, sid, struct.pack(">I", 8))
    flood_then_get(c, pairs())


def case_window_overflow(c, _n):
    c.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0x7FFFFFFF)))
    _, get = c.get()
    c.send_frames(get)


def case_streams(c, n):
    sids = []
    frames = []
    for _ in range(n):
        sid = c.new_stream()
        sids.append(sid)
        frames += c.headers_frames(sid, c.enc.encode(c.request_headers()), end_stream=False)
    c.send_frames(frames)
    c.pump(quiet=1.5)
    out(f"REFUSED:{c.refused}")
    c.send_frames([frame(DATA, END_STREAM, s) for s in sids if not c.streams[s].done])


def case_bad_pseudo(c, kind, other):
    port = c.authority.rsplit(":", 1)[1] if ":" in c.authority else "443"
    good = c.request_headers(path=f"/h2-hostile/bad-pseudo/{kind}")
    end_stream = True
    if kind == "scheme-http":
        headers = [h if h[0] != ":scheme" else (":scheme", "http") for h in good]
    elif kind == "authority-mismatch":
        headers = [h if h[0] != ":authority" else (":authority", other) for h in good]
    elif kind == "host-mismatch":
        headers = good + [("host", other)]
    elif kind == "connect":
        headers = [(":method", "CONNECT"), (":authority", f"{other}:{port}")]
        end_stream = False
    else:  # no-path
        headers = [h for h in good if h[0] != ":path"]
    sid = c.new_stream(done_on_status=kind == "connect")
    c.send_frames(c.headers_frames(sid, c.enc.encode(headers), end_stream=end_stream))


def main():
    ap = argparse.ArgumentParser(usage="h2_hostile.py CASE [ARG] HOST PORT [--proxy URL] "
                                 "[--ca FILE] [--authority NAME] [--address IP]")
    ap.add_argument("case")
    ap.add_argument("rest", nargs="+")
    ap.add_argument("--proxy")
    ap.add_argument("--ca")
    ap.add_argument("--authority", default="other.test")
    ap.add_argument("--address")
    a = ap.parse_args()
    takes_arg = a.case != "window-overflow"
    if len(a.rest) != (3 if takes_arg else 2):
        ap.error("CASE [ARG] HOST PORT")
    arg = a.rest[0] if takes_arg else None
    host, port = a.rest[-2], int(a.rest[-1])
    number_cases = {"continuation-flood": case_continuation_flood, "hpack-bomb": case_hpack_bomb,
                    "settings-flood": case_settings_flood, "ping-flood": case_ping_flood,
                    "rapid-reset": case_rapid_reset, "streams": case_streams}
    if a.case in number_cases and not arg.isdigit():
        ap.error(f"{a.case} takes a count")
    if a.case not in number_cases and a.case not in ("window-overflow", "bad-pseudo", "get"):
        ap.error(f"unknown case {a.case}")
    if a.case == "bad-pseudo" and arg not in BAD_PSEUDO:
        ap.error(f"bad-pseudo takes one of {', '.join(BAD_PSEUDO)}")
    proxy = a.proxy if a.proxy is not None else \
        os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    try:
        tls = connect(host, port, proxy, a.ca, a.address)
    except Stop:
        return
    except (OSError, ssl.SSLError) as e:
        out(f"ERROR:connect: {type(e).__name__}: {e}")
        return
    c = Client(tls, host, port, a.case)
    try:
        preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
        settings = struct.pack(">HIHI", 2, 0, 4, WINDOW)
        c.send(preface + frame(SETTINGS_T, 0, 0, settings) +
               frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", WINDOW - 65535)))
        c.pump(stop=lambda: c.server_settings is not None)
        if c.server_settings is None:
            out("ERROR:no SETTINGS from the server")
            return
        table = c.server_settings.get(1, 4096)
        if table < 4096:
            c.enc.header_table_size = table
        if a.case in number_cases:
            number_cases[a.case](c, int(arg))
        elif a.case == "window-overflow":
            case_window_overflow(c, 0)
        elif a.case == "bad-pseudo":
            case_bad_pseudo(c, arg, a.authority)
        else:
            c.send_frames(c.get(path=arg)[1])
        c.finish()
        if a.case == "ping-flood":
            out(f"PING-ACKS:{c.ping_acks}")
        if a.case == "settings-flood":
            out(f"SETTINGS-ACKS:{c.settings_acks}")
    except Stop:
        pass
    finally:
        try:
            tls.close()
        except OSError:
            pass


if __name__ == "__main__":
    main()
    sys.exit(0)

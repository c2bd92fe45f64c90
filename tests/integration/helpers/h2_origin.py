#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""h2_origin.py PORTFILE LOGFILE CERT KEY [--alpn h2|h2,http/1.1] [--hostile huge-headers|push]:
the HTTP/2 origin of test_h2.sh.

An HTTPS server (CERT, KEY: PEM) on the host's 127.0.0.1, on a free port it writes to PORTFILE
(PORTFILE.tmp, then renamed), speaking HTTP/2 (python3-h2) to a client that negotiates h2 by
ALPN. --alpn lists what it offers, h2 alone by default. With "h2,http/1.1" a client that picks
http/1.1 (or offers no ALPN and sends no h2 preface) gets a small HTTP/1.1 keep-alive server
with the same paths; with h2 alone, a client without ALPN is spoken h2 to (an HTTP/1.1 request
then ends in protocol-error). One thread per connection; flow control both ways (DATA only as
far as the peer's windows allow, received DATA acknowledged as it is read, so large uploads and
downloads work).

- Any path, any method, is echoed: 200 with the body
  "origin method=M path=P conn=C host=H body=N proto=PROTO\\n" (P: :path as it arrived; H:
  :authority, else Host; N: the request body's bytes; PROTO h2 or http/1.1) and the response
  header x-origin-conn: C. HEAD gets the headers only; a CONNECT is answered (echoed) as soon as
  its HEADERS arrive, as it has no end.
- /big/N: 200 with N bytes of "x" (many DATA frames).
- /trailers: the echo body, then the trailer x-trailer: yes.
- With ORIGIN_TOKEN=T in its environment: /api/echo-token answers 200 with T in the response
  header x-token, in the body ("token=T\\n") and in the trailer x-token-trailer; any other
  /api/... answers 200 "api ok\\n" when the request carries authorization: Bearer T, else 401
  "api unauthorized\\n".
- --hostile huge-headers: every response carries 200 more headers, x-huge-000 .. x-huge-199,
  each with a 1024-byte value.
- --hostile push: before each response, a PUSH_PROMISE for /pushed on the request's stream: by
  the h2 library when the client allows push (the pushed stream then gets 200 "pushed\\n"), else
  as a raw frame (a client that disabled push must treat it as a connection error).
- The server advertises h2's defaults (MAX_CONCURRENT_STREAMS 100, windows 65535); a stream past
  the 100th open one is refused with RST_STREAM REFUSED_STREAM.

LOGFILE gets a line per connection, per request and per reset or GOAWAY the client sent, so that
a test can see what reached the origin (and what did not):
    conn=C tls sni=NAME alpn=PROTO                         (PROTO None: no ALPN)
    conn=C stream=S req METHOD PATH authority=A body=N      (when the request ends, before the
                                                             response; a missing pseudo-header: -;
                                                             HTTP/1.1: stream=-, A the Host)
    conn=C stream=S reset CODE                              (RST_STREAM from the client)
    conn=C goaway CODE                                      (GOAWAY from the client)
    conn=C stream=S push promised=P sent=h2|raw            (--hostile push)
    conn=C stream=S refused                                 (past MAX_CONCURRENT_STREAMS)
    conn=C protocol-error TEXT                              (h2 rejected what the client sent)
    conn=C io-error TEXT, conn=C internal-error TEXT        (the connection failed; a bug here)
    conn=C closed                                           (the connection ended)
CODE is the HTTP/2 error code's name (CANCEL, PROTOCOL_ERROR, ...), its number if unknown.
Requests are not validated beyond framing (a malformed one is logged and echoed), so whatever a
proxy let through is on record."""
import argparse
import itertools
import os
import selectors
import socket
import ssl
import struct
import threading

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import hpack
import hyperframe.frame

ap = argparse.ArgumentParser()
ap.add_argument("portfile")
ap.add_argument("logfile")
ap.add_argument("cert")
ap.add_argument("key")
ap.add_argument("--alpn", default="h2", choices=["h2", "h2,http/1.1"])
ap.add_argument("--hostile", choices=["huge-headers", "push"])
args = ap.parse_args()

IDLE = 60  # seconds without traffic before a connection is dropped
MAX_BIG = 1 << 30
log_lock = threading.Lock()
conn_ids = itertools.count(1)


def log(line):
    with log_lock, open(args.logfile, "a", encoding="utf-8", errors="backslashreplace") as f:
        f.write(line + "\n")


def text(b):
    return b.decode("utf-8", "backslashreplace") if isinstance(b, bytes) else str(b)


def code_name(code):
    try:
        return h2.errors.ErrorCodes(code).name
    except ValueError:
        return str(code)


def route(method, path, host, body_len, conn_id, proto, authorization):
    """The response to a request: (status, headers, body, trailers); headers and trailers are
    lists of (name, value) str pairs, without :status and content-length."""
    headers = [("content-type", "text/plain"), ("x-origin-conn", str(conn_id))]
    bare = path.split("?")[0]
    token = os.environ.get("ORIGIN_TOKEN")
    if token is not None and bare.startswith("/api/"):
        if bare == "/api/echo-token":
            return (200, headers + [("x-token", token)], f"token={token}\n".encode(),
                    [("x-token-trailer", token)])
        if authorization == f"Bearer {token}":
            return 200, headers, b"api ok\n", []
        return 401, headers, b"api unauthorized\n", []
    if bare.startswith("/big/"):
        n = int(bare[5:]) if bare[5:].isdigit() else -1
        if not 0 <= n <= MAX_BIG:
            return 400, headers, b"bad size\n", []
        return 200, headers, b"x" * n, []
    echo = (f"origin method={method} path={path} conn={conn_id} host={host} body={body_len} "
            f"proto={proto}\n").encode()
    if bare == "/trailers":
        return 200, headers, echo, [("x-trailer", "yes")]
    return 200, headers, echo, []


def respond(method, path, host, body_len, conn_id, proto, authorization):
    status, headers, body, trailers = route(method, path, host, body_len, conn_id, proto,
                                            authorization)
    headers = headers + [("content-length", str(len(body)))]
    if args.hostile == "huge-headers":
        headers += [(f"x-huge-{i:03d}", "h" * 1024) for i in range(200)]
    if method == "HEAD":
        return status, headers, b"", []
    return status, headers, body, trailers


class OriginConnection(h2.connection.H2Connection):
    """h2's server side, refusing a stream past MAX_CONCURRENT_STREAMS with REFUSED_STREAM
    (h2 itself ends the whole connection)."""

    def _receive_headers_frame(self, frame):
        try:
            return super()._receive_headers_frame(frame)
        except h2.exceptions.TooManyStreamsError:
            # the block still goes through the decoder: its table must stay in step
            h2.connection._decode_headers(self.decoder, frame.data)
            self.highest_inbound_stream_id = max(self.highest_inbound_stream_id, frame.stream_id)
            self.refused.append(frame.stream_id)
            rst = hyperframe.frame.RstStreamFrame(frame.stream_id)
            rst.error_code = h2.errors.ErrorCodes.REFUSED_STREAM
            return [rst], []


class ClientFrames:
    """Cuts the client's byte stream into frames (after the preface), so that h2 sees them one
    at a time: each request is answered, and each reset or GOAWAY logged, in the order the
    client sent them (also when h2 then rejects the frame)."""

    def __init__(self):
        self.buf = bytearray()
        self.preface = 24

    def feed(self, data):
        self.buf += data
        if self.preface:
            n = min(self.preface, len(self.buf))
            chunk = bytes(self.buf[:n])
            del self.buf[:n]
            self.preface -= n
            yield None, chunk
        while len(self.buf) >= 9:
            length = int.from_bytes(self.buf[0:3], "big")
            if len(self.buf) < 9 + length:
                if length > 1 << 24:  # not a frame h2 will take: it says so
                    chunk = bytes(self.buf)
                    self.buf.clear()
                    yield None, chunk
                return
            chunk = bytes(self.buf[:9 + length])
            del self.buf[:9 + length]
            yield chunk[3], chunk


class Outgoing:
    """A response body still to be sent, and what ends it."""

    def __init__(self, body, trailers):
        self.body = memoryview(body)
        self.trailers = trailers


class H2Session:
    def __init__(self, tls, conn_id, first):
        self.tls = tls
        self.conn_id = conn_id
        self.first = first
        cfg = h2.config.H2Configuration(client_side=False, header_encoding=None,
                                        validate_inbound_headers=False)
        self.conn = OriginConnection(config=cfg)
        self.conn.refused = []
        self.frames = ClientFrames()
        self.requests = {}  # stream: [headers dict, body bytes]
        self.outgoing = {}  # stream: Outgoing
        self.outbuf = bytearray()
        self.raw_promised = itertools.count(2, 2)
        self.closing = False
        self.draining = False

    def run(self):
        self.conn.initiate_connection()
        self.tls.setblocking(False)
        sel = selectors.DefaultSelector()
        sel.register(self.tls, selectors.EVENT_READ)
        try:
            if self.first:
                self.receive(self.first)
            while True:
                self.pump()
                if self.draining and not self.requests and not self.outgoing:
                    self.closing = True
                if self.closing and not self.outbuf:
                    return
                want = selectors.EVENT_WRITE if self.outbuf else 0
                # a peer that does not read gets no more service until it does
                if len(self.outbuf) < 4 << 20 and not self.closing:
                    want |= selectors.EVENT_READ
                sel.modify(self.tls, want)
                # bytes TLS has already decrypted are not seen by select
                pending = self.tls.pending() and want & selectors.EVENT_READ
                if not sel.select(0 if pending else IDLE) and not pending:
                    return
                if self.outbuf:
                    self.write()
                if want & selectors.EVENT_READ and self.read() is False:
                    return
        finally:
            sel.close()

    def write(self):
        try:
            n = self.tls.send(self.outbuf[:1 << 16])
            del self.outbuf[:n]
        except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
            pass

    def read(self):
        """One read at a time: a flood is answered while it arrives, not after."""
        try:
            data = self.tls.recv(1 << 16)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return True
        if not data:
            return False
        self.receive(data)
        return True

    def receive(self, data):
        for ftype, chunk in self.frames.feed(data):
            self.log_frame(ftype, chunk)
            try:
                events = self.conn.receive_data(chunk)
            except h2.exceptions.ProtocolError as e:
                log(f"conn={self.conn_id} protocol-error {type(e).__name__}: {e}")
                self.closing = True
                return
            for sid in self.conn.refused:
                log(f"conn={self.conn_id} stream={sid} refused")
            self.conn.refused.clear()
            for ev in events:
                self.event(ev)
            if self.closing:
                return

    def log_frame(self, ftype, chunk):
        sid = struct.unpack(">I", chunk[5:9])[0] & 0x7FFFFFFF if ftype is not None else 0
        if ftype == 0x3 and len(chunk) == 13:
            code = struct.unpack(">I", chunk[9:13])[0]
            log(f"conn={self.conn_id} stream={sid} reset {code_name(code)}")
        elif ftype == 0x7 and len(chunk) >= 17:
            code = struct.unpack(">I", chunk[13:17])[0]
            log(f"conn={self.conn_id} goaway {code_name(code)}")

    def event(self, ev):
        if isinstance(ev, h2.events.RequestReceived):
            self.requests[ev.stream_id] = [dict(ev.headers), 0]
            # a CONNECT's request has no end: it is answered as it arrives
            if ev.stream_ended or dict(ev.headers).get(b":method") == b"CONNECT":
                self.request_done(ev.stream_id)
        elif isinstance(ev, h2.events.DataReceived):
            if ev.stream_id in self.requests:
                self.requests[ev.stream_id][1] += len(ev.data)
            self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.StreamEnded):
            if ev.stream_id in self.requests:
                self.request_done(ev.stream_id)
        elif isinstance(ev, h2.events.StreamReset):
            self.requests.pop(ev.stream_id, None)
            self.outgoing.pop(ev.stream_id, None)
        elif isinstance(ev, h2.events.ConnectionTerminated):
            # GOAWAY NO_ERROR lets the streams already open finish; any other ends it all
            self.draining = True
            self.closing = ev.error_code != h2.errors.ErrorCodes.NO_ERROR

    def request_done(self, sid):
        headers, body_len = self.requests.pop(sid)
        method = text(headers.get(b":method", b"-"))
        path = text(headers.get(b":path", b"-"))
        host = text(headers.get(b":authority", headers.get(b"host", b"-")))
        log(f"conn={self.conn_id} stream={sid} req {method} {path} authority={host} "
            f"body={body_len}")
        if args.hostile == "push":
            self.push(sid, host)
        status, headers, body, trailers = respond(
            method, path, host, body_len, self.conn_id, "h2",
            text(headers.get(b"authorization", b"")))
        self.start_response(sid, status, headers, body, trailers)

    def start_response(self, sid, status, headers, body, trailers):
        head = [(":status", str(status))] + headers
        try:
            self.conn.send_headers(sid, head, end_stream=not body and not trailers)
        except h2.exceptions.ProtocolError:  # the stream is gone (reset) or cannot be
            return
        if body or trailers:
            self.outgoing[sid] = Outgoing(body, trailers)

    def push(self, sid, host):
        req = [(":method", "GET"), (":scheme", "https"), (":authority", host),
               (":path", "/pushed")]
        try:
            promised = self.conn.get_next_available_stream_id()
            self.conn.push_stream(sid, promised, req)
        except h2.exceptions.ProtocolError:
            # the client disabled push: h2 will not send one, so the frame is built here
            self.outbuf += self.conn.data_to_send()
            promised = next(self.raw_promised)
            frame = hyperframe.frame.PushPromiseFrame(sid)
            frame.promised_stream_id = promised
            # never indexed: h2's own encoder keeps the only table the client knows of
            frame.data = hpack.Encoder().encode(
                [hpack.NeverIndexedHeaderTuple(k, v) for k, v in req])
            frame.flags.add("END_HEADERS")
            self.outbuf += frame.serialize()
            log(f"conn={self.conn_id} stream={sid} push promised={promised} sent=raw")
            return
        log(f"conn={self.conn_id} stream={sid} push promised={promised} sent=h2")
        self.start_response(promised, 200, [("content-type", "text/plain"),
                                            ("content-length", "7")], b"pushed\n", [])

    def pump(self):
        """Sends what the windows allow of each pending body, then its end."""
        for sid in list(self.outgoing):
            out = self.outgoing[sid]
            try:
                while out.body:
                    n = min(self.conn.local_flow_control_window(sid),
                            self.conn.max_outbound_frame_size, len(out.body))
                    if n <= 0:
                        break
                    last = n == len(out.body) and not out.trailers
                    self.conn.send_data(sid, out.body[:n].tobytes(), end_stream=last)
                    out.body = out.body[n:]
                if not out.body:
                    if out.trailers:
                        self.conn.send_headers(sid, out.trailers, end_stream=True)
                    del self.outgoing[sid]
            except h2.exceptions.ProtocolError:  # reset meanwhile
                del self.outgoing[sid]
        self.outbuf += self.conn.data_to_send()


def read_h1_head(tls, buf):
    while b"\r\n\r\n" not in buf:
        if len(buf) > 1 << 16:
            return None, buf
        b = tls.recv(1 << 16)
        if not b:
            return None, buf
        buf += b
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def serve_h1(tls, conn_id, buf):
    """A small HTTP/1.1 keep-alive server with the same paths (--alpn h2,http/1.1)."""
    while True:
        head, buf = read_h1_head(tls, buf)
        if head is None:
            return
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            log(f"conn={conn_id} bad {lines[0]!r}")
            return
        method, target = parts[0], parts[1]
        hdrs = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdrs.setdefault(k.strip().lower(), v.strip())
        length = int(hdrs.get("content-length") or 0)
        while len(buf) < length:
            b = tls.recv(1 << 16)
            if not b:
                return
            buf += b
        buf = buf[length:]
        host = hdrs.get("host", "-")
        log(f"conn={conn_id} stream=- req {method} {target} authority={host} body={length}")
        status, headers, body, _ = respond(method, target, host, length, conn_id, "http/1.1",
                                           hdrs.get("authorization", ""))
        out = f"HTTP/1.1 {status} X\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
        tls.sendall(out.encode() + b"\r\n" + body)


def handle(sock):
    sock.settimeout(IDLE)
    try:
        tls = ctx.wrap_socket(sock, server_side=True)
    except (ssl.SSLError, OSError) as e:
        log(f"conn=- handshake-failed {type(e).__name__}: {e}")
        sock.close()
        return
    conn_id = next(conn_ids)
    alpn = tls.selected_alpn_protocol()
    log(f"conn={conn_id} tls sni={getattr(tls, 'sni', None)} alpn={alpn}")
    try:
        first = b""
        if alpn is None:
            # no ALPN: the first bytes tell h2's preface from an HTTP/1.1 request
            while len(first) < 3:
                b = tls.recv(1 << 16)
                if not b:
                    return
                first += b
        if alpn == "h2" or (alpn is None and (first.startswith(b"PRI") or
                                              "http/1.1" not in args.alpn)):
            H2Session(tls, conn_id, first).run()
        else:
            tls.settimeout(IDLE)
            serve_h1(tls, conn_id, first)
    except (OSError, ssl.SSLError) as e:
        log(f"conn={conn_id} io-error {type(e).__name__}: {e}")
    except Exception as e:  # a bug here must show in the log, not only on stderr
        log(f"conn={conn_id} internal-error {type(e).__name__}: {e}")
        raise
    finally:
        log(f"conn={conn_id} closed")
        try:
            tls.close()
        except OSError:
            pass


def remember_sni(sock, name, _ctx):
    sock.sni = name


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(args.cert, args.key)
ctx.set_alpn_protocols(args.alpn.split(","))
ctx.sni_callback = remember_sni
open(args.logfile, "a").close()
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(64)
with open(args.portfile + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
os.rename(args.portfile + ".tmp", args.portfile)
while True:
    client, _ = srv.accept()
    threading.Thread(target=handle, args=(client,), daemon=True).start()

#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""A hostile HTTPS origin for test_cred_response.sh: it hands back whatever credential a
request carried, in every way an origin can, written as raw HTTP/1.1 so that framing is exact.

    reflect_origin.py PORTFILE LOG CERT KEY

REFLECT_TOKEN in its environment is the real value. For each request it logs one line,
`REQ METHOD PATH real=yes|no ae=ACCEPT-ENCODING range=RANGE`, and answers by path:
  /headers      200, a JSON body holding every request header (httpbin's /headers)
  TRACE *       200 message/http, the request echoed back (as RFC 9110 says TRACE does)
  /encoded      200, the value in response headers: base64 at three alignments in both
                alphabets, percent-encoded, upper case, hex
  /dir?...      301 to /dir/?api_key=<the value, percent-encoded> (a directory redirect)
  /chunked      200 chunked: the value cut across chunks, and in a trailer
  /early        103 Early Hints carrying the value, then 200
  /close        200 with no length: the value in a body that runs until the close
  /gzip         200 Content-Encoding: gzip, whatever the request asked for
  /stray        200, then a second response in the same write that no request asked for
  /range        the value in a body, a byte range of it when the request asks (206)
  /partial      206, whatever the request asked
  /plain        200 "ok", nothing reflected
  /echo         200 chunked: the request's body back, in one chunk (an upload read back)
A request body is not read unless its Content-Length says so (an origin that ignores bodies
on GET: a body there is read as the next request).
"""
import base64
import gzip
import json
import os
import socket
import ssl
import sys
import threading
import urllib.parse

PORTFILE, LOG, CERT, KEY = sys.argv[1:5]
TOKEN = os.environ["REFLECT_TOKEN"]
lock = threading.Lock()


def log(line):
    with lock, open(LOG, "a") as f:
        f.write(line + "\n")


def read_head(f):
    lines = []
    while True:
        line = f.readline(65536)
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            return lines
        lines.append(line.decode("latin-1").rstrip("\r\n"))


def response(status, reason, headers, body):
    head = "HTTP/1.1 %d %s\r\n" % (status, reason)
    for k, v in headers:
        head += "%s: %s\r\n" % (k, v)
    if body is not None:
        head += "Content-Length: %d\r\n" % len(body)
    return head.encode("latin-1") + b"\r\n" + (body or b"")


def b64_forms(value):
    out = []
    for pre in ("", "a", "ab"):
        raw = (pre + value + "zz").encode()
        out.append(("X-B64-%d" % len(pre), base64.b64encode(raw).decode()))
        out.append(("X-B64URL-%d" % len(pre), base64.urlsafe_b64encode(raw).decode()))
    return out


def chunked(parts, trailers):
    out = b""
    for p in parts:
        out += b"%x\r\n%s\r\n" % (len(p), p)
    out += b"0\r\n"
    for k, v in trailers:
        out += ("%s: %s\r\n" % (k, v)).encode()
    return out + b"\r\n"


def ranged(body, spec):
    """206 for 'bytes=A-B' of body (the origin serving ranges), else 200."""
    if not spec.startswith("bytes="):
        return response(200, "OK", [], body)
    a, b = spec[6:].split("-", 1)
    a, b = int(a), min(int(b), len(body) - 1)
    part = body[a:b + 1]
    return response(206, "Partial Content", [("Content-Range", "bytes %d-%d/%d" % (a, b, len(body)))], part)


def answer(method, target, headers, raw_head, body):
    path = target.split("?", 1)[0]
    tok = TOKEN
    hmap = {k.lower(): v for k, v in headers}
    if path == "/echo":
        return response(200, "OK", [("Transfer-Encoding", "chunked")], None) + chunked([body], []), False
    if path == "/range":
        return ranged(("ranged " + tok + "\n").encode(), hmap.get("range", "")), False
    if path == "/partial":
        return ranged(("partial " + tok + "\n").encode(), "bytes=0-11"), False
    if method == "TRACE":
        return response(200, "OK", [("Content-Type", "message/http")], raw_head), False
    if path == "/headers":
        body = json.dumps({"headers": dict(headers)}).encode()
        return response(200, "OK", [("Content-Type", "application/json")], body), False
    if path == "/encoded":
        hs = b64_forms(tok) + [
            ("X-Pct", urllib.parse.quote(tok, safe="")),
            ("X-Upper", tok.upper()),
            ("X-Hex", tok.encode().hex()),
            ("X-HEX", tok.encode().hex().upper()),
        ]
        return response(200, "OK", hs, b"encoded\n"), False
    if path == "/dir":
        loc = "/dir/?api_key=" + urllib.parse.quote(tok, safe="")
        return response(301, "Moved Permanently", [("Location", loc)], b""), False
    if path == "/chunked":
        b = ("value=" + tok + "\n").encode()
        parts = [b[:9], b[9:13], b[13:]]
        head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Echo\r\n\r\n"
        return head + chunked(parts, [("X-Echo", tok)]), False
    if path == "/early":
        early = ("HTTP/1.1 103 Early Hints\r\nLink: </s?k=%s>; rel=preload\r\n\r\n" % tok).encode()
        return early + response(200, "OK", [], b"after hints\n"), False
    if path == "/close":
        body = ("close-delimited " + tok + "\n").encode()
        return b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body, True
    if path == "/gzip":
        body = gzip.compress(("zipped " + tok + "\n").encode())
        return response(200, "OK", [("Content-Encoding", "gzip")], body), False
    if path == "/stray":
        stray = response(200, "OK", [], ("STRAY " + tok + "\n").encode())
        return response(200, "OK", [], b"first\n") + stray, False
    return response(200, "OK", [], b"ok\n"), False


def serve(conn):
    try:
        f = conn.makefile("rb")
        while True:
            lines = read_head(f)
            if not lines:
                return
            method, target = lines[0].split(" ")[:2]
            headers = [tuple(h.split(":", 1)) for h in lines[1:] if ":" in h]
            headers = [(k.strip(), v.strip()) for k, v in headers]
            hmap = {k.lower(): v for k, v in headers}
            raw_head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
            n = int(hmap.get("content-length", "0") or 0)
            body = b""
            if n and method not in ("GET", "HEAD", "OPTIONS", "TRACE"):
                body = f.read(n)
            real = TOKEN in raw_head.decode("latin-1") or urllib.parse.quote(TOKEN, safe="") in target
            log("REQ %s %s real=%s ae=%s range=%s" % (method, target, "yes" if real else "no",
                                                       hmap.get("accept-encoding", "-"),
                                                       hmap.get("range", "-")))
            data, close = answer(method, target, headers, raw_head, body)
            conn.sendall(data)
            if close or hmap.get("connection", "").lower() == "close":
                return
    except (OSError, ValueError, ssl.SSLError):
        return
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    tmp = PORTFILE + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(tmp, PORTFILE)
    while True:
        c, _ = srv.accept()
        try:
            s = ctx.wrap_socket(c, server_side=True)
        except (OSError, ssl.SSLError):
            c.close()
            continue
        threading.Thread(target=serve, args=(s,), daemon=True).start()


main()

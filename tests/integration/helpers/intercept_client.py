#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""intercept_client.py: the in-sandbox client of the interception tests (test_intercept.sh,
test_intercept_clients.sh; Python's standard library, `requests` only for its own command).
Every command goes through the HTTP proxy named by HTTPS_PROXY (or https_proxy), as a client in
the sandbox does, and prints KEY:value lines.

  raw [--sni NAME|--no-sni] [--alpn P1,P2] [--cafile FILE] [--pipeline] HOST PORT PAYLOAD...
      CONNECT HOST:PORT, TLS (verified against CAFILE, else the default store, which
      SSL_CERT_FILE chooses; the server name is HOST unless --sni/--no-sni), then each PAYLOAD
      in turn (Python escapes: \\r\\n; {X*N} is N times the character X), reading one response
      after each (with --pipeline: all payloads at once, then as many responses). Prints
      CONNECT:status (when not 200), ALPN:, ISSUER:, then per response STATUS:, DENIED: (its
      X-Agentbox-Denied), BODY: (first line); CLOSED when the connection ended; ERROR:what.
  peer HOST PORT CAFILE|-   CONNECT and TLS only: ISSUER: and SUBJECT: of the verified
      certificate, or ERROR:.
  urllib URL [METHOD [BODY]]   and   requests URL [METHOD [BODY]]
      one request: STATUS:, DENIED:, BODY:, or ERROR:; requests missing: NA:why.
  subject FILE   SUBJECT: of the PEM certificate FILE, rendered as ISSUER: is."""
import os
import re
import socket
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request

TIMEOUT = 10


def proxy_address():
    url = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    if not url:
        sys.exit("ERROR:no HTTPS_PROXY in the environment")
    p = urllib.parse.urlsplit(url)
    return p.hostname, p.port or 80


def expand(payload):
    text = payload.encode("latin-1").decode("unicode_escape")
    text = re.sub(r"\{(.)\*(\d+)\}", lambda m: m.group(1) * int(m.group(2)), text)
    return text.encode("latin-1")


def connect(host, port):
    s = socket.create_connection(proxy_address(), timeout=TIMEOUT)
    s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            break
        head += chunk
    status = head.split(b" ", 2)[1].decode() if head.count(b" ") >= 1 else "none"
    if status != "200":
        print(f"CONNECT:{status}")
        print("DENIED:" + header(head, b"x-agentbox-denied"))
        sys.exit(0)
    return s


def header(head, name):
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == name:
            return v.strip().decode("latin-1")
    return ""


def name_of(rdns):
    return ",".join(f"{k}={v}" for rdn in rdns for k, v in rdn)


def tls(sock, server_name, alpn, cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    if server_name is None:
        ctx.check_hostname = False  # no name to check without SNI; the chain still is
    if alpn:
        ctx.set_alpn_protocols(alpn)
    t = ctx.wrap_socket(sock, server_hostname=server_name)
    cert = t.getpeercert()
    print(f"ALPN:{t.selected_alpn_protocol()}")
    print(f"ISSUER:{name_of(cert.get('issuer', ()))}")
    print(f"SUBJECT:{name_of(cert.get('subject', ()))}")
    return t


class Reader:
    def __init__(self, sock):
        self.sock, self.buf, self.eof = sock, b"", False

    def fill(self):
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            raise
        except (ssl.SSLError, OSError) as e:
            print(f"RECV-ERROR:{type(e).__name__}")
            chunk = b""
        if not chunk:
            self.eof = True
        self.buf += chunk
        return bool(chunk)

    def until(self, sep):
        while sep not in self.buf:
            if self.eof or not self.fill():
                return None
        i = self.buf.index(sep) + len(sep)
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def take(self, n):
        while len(self.buf) < n and not self.eof and self.fill():
            pass
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def rest(self):
        while not self.eof and self.fill():
            pass
        out, self.buf = self.buf, b""
        return out


def read_response(r):
    """Reads one response; prints it. False when no response came (closed)."""
    head = r.until(b"\r\n\r\n")
    if head is None:
        if r.buf:
            print("GARBAGE:" + repr(r.buf[:80]))
        return False
    status = head.split(b" ", 2)[1].decode("latin-1") if b" " in head else "?"
    print(f"STATUS:{status}")
    denied = header(head, b"x-agentbox-denied")
    if denied:
        print(f"DENIED:{denied}")
    if header(head, b"transfer-encoding").lower() == "chunked":
        body = b""
        while True:
            size = r.until(b"\r\n")
            if size is None:
                break
            n = int(size.split(b";")[0].strip() or b"0", 16)
            if n == 0:
                r.until(b"\r\n")
                break
            body += r.take(n)
            r.take(2)
    elif header(head, b"content-length"):
        body = r.take(int(header(head, b"content-length")))
    else:
        body = r.rest()
    print("BODY:" + body.decode("latin-1").split("\n")[0].rstrip("\r"))
    return True


def cmd_raw(args):
    sni, alpn, cafile, pipeline = "", None, None, False
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--sni":
            sni = args.pop(0)
        elif opt == "--no-sni":
            sni = None
        elif opt == "--alpn":
            alpn = args.pop(0).split(",")
        elif opt == "--cafile":
            cafile = args.pop(0)
        elif opt == "--pipeline":
            pipeline = True
        else:
            sys.exit(f"unknown option {opt}")
    host, port, payloads = args[0], int(args[1]), [expand(p) for p in args[2:]]
    s = connect(host, port)
    try:
        t = tls(s, host if sni == "" else sni, alpn, cafile)
    except (ssl.SSLError, OSError) as e:
        print(f"ERROR:TLS:{type(e).__name__}:{e}")
        return
    r = Reader(t)
    try:
        if pipeline:
            t.sendall(b"".join(payloads))
            for _ in payloads:
                if not read_response(r):
                    break
        else:
            for p in payloads:
                t.sendall(p)
                if not read_response(r):
                    break
    except (ssl.SSLError, OSError) as e:
        print(f"ERROR:IO:{type(e).__name__}:{e}")
    print("CLOSED" if r.eof or not still_open(t, r) else "OPEN")


def still_open(t, r):
    """After the last response: does the other end keep the connection (keep-alive)?"""
    try:
        t.settimeout(0.5)
        return r.fill()
    except (socket.timeout, ssl.SSLError, OSError):
        return True


def cmd_peer(args):
    host, port, cafile = args[0], int(args[1]), args[2]
    s = connect(host, port)
    try:
        tls(s, host, None, None if cafile == "-" else cafile).close()
    except (ssl.SSLError, OSError) as e:
        print(f"ERROR:TLS:{type(e).__name__}:{e}")


def show(status, headers, body):
    print(f"STATUS:{status}")
    denied = headers.get("X-Agentbox-Denied")
    if denied:
        print(f"DENIED:{denied}")
    print("BODY:" + body.decode("latin-1").split("\n")[0])


def cmd_urllib(args):
    url = args[0]
    method = args[1] if len(args) > 1 else "GET"
    data = args[2].encode() if len(args) > 2 else None
    req = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            show(resp.status, resp.headers, resp.read())
    except urllib.error.HTTPError as e:
        show(e.code, e.headers, e.read())
    except (urllib.error.URLError, OSError) as e:
        print(f"ERROR:{type(e).__name__}:{getattr(e, 'reason', e)}")


def cmd_requests(args):
    try:
        import requests
    except ImportError as e:
        print(f"NA:python3-requests is not installed ({e})")
        return
    url = args[0]
    method = args[1] if len(args) > 1 else "GET"
    data = args[2].encode() if len(args) > 2 else None
    try:
        r = requests.request(method, url, data=data, timeout=TIMEOUT)
        show(r.status_code, r.headers, r.content)
    except requests.RequestException as e:
        print(f"ERROR:{type(e).__name__}:{e}")


def cmd_subject(args):
    # the same rendering as ISSUER:, for a certificate file (CPython's own PEM decoder)
    cert = ssl._ssl._test_decode_cert(args[0])
    print(f"SUBJECT:{name_of(cert.get('subject', ()))}")


COMMANDS = {"raw": cmd_raw, "peer": cmd_peer, "urllib": cmd_urllib, "requests": cmd_requests,
            "subject": cmd_subject}

if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
    sys.exit(__doc__)
COMMANDS[sys.argv[1]](sys.argv[2:])
sys.stdout.flush()

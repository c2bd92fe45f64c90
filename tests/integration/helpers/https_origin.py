#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""https_origin.py PORTFILE LOGFILE ROOT CERT KEY: the HTTPS origin of
the interception tests (test_intercept.sh, test_intercept_clients.sh).

An HTTP/1.1 keep-alive server over TLS (CERT, KEY: PEM; ALPN http/1.1 only) on the host's
127.0.0.1, on a free port it writes to PORTFILE (PORTFILE.tmp, then renamed). Python's standard
library only (ssl, http.server).

- GET/HEAD /static/REL serves ROOT/REL (a directory: its index.html; the query is ignored), so
  one ROOT holds a pip simple index, an npm tarball and a dumb-HTTP git repository.
- Any other path, any method, is echoed: 200 with the body
  "origin method=M path=P conn=C host=H body=N" (P: the target as it arrived; C: the
  connection's number; N: the request body's bytes, Content-Length or chunked).

- With ORIGIN_TOKEN in its environment, /api/... is an API that checks it (test_credentials.sh):
  200 "api ok" when the request carries it (Authorization: Bearer T, token T or Basic with
  password T, x-api-key: T, or the query parameter key=T), else 401; /api/echo-token also
  returns T in its X-Token response header (which agentbox must redact); with T,
  /api/static/REL is /static/REL (a git repository only the token may clone), and
  /api/-/whoami is npm's whoami ({"username":"agentbox-test"}) for a registry at /api/.

LOGFILE gets one line per TLS connection and per request, so that a test can see what reached
the origin (and what did not), and whether two requests shared a connection:
    conn=C tls sni=NAME alpn=PROTO
    conn=C req METHOD TARGET host=H1[,H2...] cl=N te=T body=N
A request line the server could not parse is logged too (`conn=C bad LINE`), before the
server's own 4xx: whatever a proxy let through is on record."""
import http.server
import itertools
import mimetypes
import os
import ssl
import sys
import threading
import urllib.parse

portfile, logfile, root, cert, key = sys.argv[1:6]
root = os.path.realpath(root)
log_lock = threading.Lock()
conn_ids = itertools.count(1)


def log(line):
    with log_lock, open(logfile, "a", encoding="utf-8", errors="backslashreplace") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "agentbox-test-origin"
    sys_version = ""
    timeout = 30

    def setup(self):
        super().setup()
        self.conn_id = self.request.conn_id

    def parse_request(self):
        ok = super().parse_request()
        if not ok or not hasattr(self, "headers"):
            raw = self.raw_requestline.decode("latin-1").rstrip("\r\n")
            log(f"conn={self.conn_id} bad {raw!r}")
            return ok
        hosts = ",".join(self.headers.get_all("Host") or [])
        log(f"conn={self.conn_id} req {self.command} {self.path} host={hosts} "
            f"cl={self.headers.get('Content-Length', '-')} "
            f"te={self.headers.get('Transfer-Encoding', '-')}")
        return ok

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            n = 0
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return n
                n += len(self.rfile.read(size))
                self.rfile.readline(1024)
        length = int(self.headers.get("Content-Length") or 0)
        return len(self.rfile.read(length)) if length else 0

    def reply(self, status, body, ctype="text/plain", head=False):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Origin-Conn", str(self.conn_id))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def echo(self):
        n = self.read_body()
        hosts = ",".join(self.headers.get_all("Host") or [])
        body = (f"origin method={self.command} path={self.path} conn={self.conn_id} "
                f"host={hosts} body={n}\n").encode()
        self.reply(200, body, head=self.command == "HEAD")

    def static(self):
        rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path[len("/static/"):])
        path = os.path.realpath(os.path.join(root, rel))
        if path != root and not path.startswith(root + os.sep):
            return self.reply(404, b"outside the root\n")
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        if not os.path.isfile(path):
            return self.reply(404, b"not found\n")
        with open(path, "rb") as f:
            body = f.read()
        ctype = mimetypes.guess_type(path)[0] or "application/octet-stream"
        self.reply(200, body, ctype, head=self.command == "HEAD")

    def api(self):
        import base64
        token = os.environ["ORIGIN_TOKEN"]
        self.read_body()
        auth = self.headers.get("Authorization", "")
        ok = auth in (f"Bearer {token}", f"token {token}")
        if auth.startswith("Basic "):
            try:
                ok = base64.b64decode(auth[6:]).decode().split(":", 1)[1] == token
            except Exception:
                ok = False
        ok = ok or self.headers.get("x-api-key") == token
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        ok = ok or query.get("key") == [token]
        if ok and self.path.startswith("/api/static/"):
            self.path = self.path[len("/api"):]
            return self.static()
        body = b"api ok\n" if ok else b"api unauthorized\n"
        if ok and self.path == "/api/-/whoami":
            body = b'{"username":"agentbox-test"}'
        self.send_response(200 if ok else 401)
        self.send_header("Content-Length", str(len(body)))
        if not ok:
            self.send_header("WWW-Authenticate", 'Basic realm="api"')
        if self.path.startswith("/api/echo-token"):
            self.send_header("X-Token", token)
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        if "ORIGIN_TOKEN" in os.environ and self.path.startswith("/api/"):
            return self.api()
        if self.command in ("GET", "HEAD") and self.path.startswith("/static/"):
            self.read_body()
            return self.static()
        self.echo()

    def __getattr__(self, name):
        # do_GET, do_POST, do_DELETE, ...: every method is served the same way
        if name.startswith("do_"):
            return self.handle_any
        raise AttributeError(name)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def finish_request(self, request, client_address):
        # the TLS handshake in the connection's own thread: a client that never completes one
        # must not hold up the others
        request.settimeout(30)
        try:
            tls = ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            log(f"conn=- handshake-failed {type(e).__name__}: {e}")
            return
        tls.conn_id = next(conn_ids)
        log(f"conn={tls.conn_id} tls sni={getattr(tls, 'sni', None)} "
            f"alpn={tls.selected_alpn_protocol()}")
        try:
            super().finish_request(tls, client_address)
        finally:
            try:
                tls.close()
            except OSError:
                pass


def remember_sni(sock, name, _ctx):
    sock.sni = name


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ctx.set_alpn_protocols(["http/1.1"])
ctx.sni_callback = remember_sni
open(logfile, "a").close()
srv = Server(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_port))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()

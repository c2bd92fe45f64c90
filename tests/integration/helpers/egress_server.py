# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# egress_server.py PORTFILE DIR [CERT KEY]: the host's test server for test_egress.sh.
# Serves DIR over HTTP (or HTTPS with CERT and KEY) on the host's 127.0.0.1, on a free port
# it writes to PORTFILE (atomically: written to PORTFILE.tmp, then renamed). GET serves files;
# POST answers "got N" with the number of body bytes it read; a directory with an index.json is
# served as that JSON document (an npm registry's package document). Threaded, so a stuck client
# cannot block the others; quiet (no request log).
import functools, http.server, io, os, ssl, sys

portfile, root = sys.argv[1], sys.argv[2]


class Handler(http.server.SimpleHTTPRequestHandler):
    # A directory holding index.json is a registry document (npm's /NAME): served as JSON
    # at the path itself, with no redirect to PATH/.
    def send_head(self):
        doc = os.path.join(self.translate_path(self.path), "index.json")
        if not self.path.endswith("/") and os.path.isfile(doc):
            with open(doc, "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)
        return super().send_head()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        got = len(self.rfile.read(n)) if n else 0
        body = f"got {got}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), functools.partial(Handler, directory=root))
if len(sys.argv) > 4:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_port))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()

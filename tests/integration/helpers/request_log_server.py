#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""request_log_server.py PORTFILE LOGFILE [keep]: a keep-alive HTTP/1.1 server on 127.0.0.1 that
answers every request it reads, however many come on one connection, and appends one line per
request to LOGFILE: "METHOD PATH host=HOST body=N" (N: the body's bytes, Content-Length or
chunked). Like a real server it closes a connection after answering a request that says
"Connection: close", and keeps it open for the next request otherwise; with `keep` it ignores
"Connection: close" and reads on, so that whatever a proxy sends after a request is logged.
Writes its port to PORTFILE once it listens."""
import os
import socketserver
import sys


class Handler(socketserver.StreamRequestHandler):
    def read_line(self):
        line = self.rfile.readline(65537)
        if not line:
            raise EOFError
        return line

    def read_body(self, headers):
        if headers.get("transfer-encoding", "").lower() == "chunked":
            n = 0
            while True:
                size = int(self.read_line().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.read_line() not in (b"\r\n", b"\n"):
                        pass
                    return n
                n += len(self.rfile.read(size))
                self.read_line()
        length = int(headers.get("content-length", "0"))
        return len(self.rfile.read(length)) if length else 0

    def handle(self):
        try:
            while True:
                line = self.read_line()
                if line in (b"\r\n", b"\n"):
                    continue
                # split on any white space, as Python's http.server does: lenient on purpose
                method, path = line.decode("latin-1").split()[:2]
                headers = {}
                while True:
                    h = self.read_line().decode("latin-1")
                    if h in ("\r\n", "\n"):
                        break
                    name, _, value = h.partition(":")
                    headers[name.strip().lower()] = value.strip()
                n = self.read_body(headers)
                with open(self.server.log, "a") as f:
                    f.write(f"{method} {path} host={headers.get('host', '')} body={n}\n")
                body = f"seen {method} {path}\r\n".encode()
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s"
                                 % (len(body), body))
                self.wfile.flush()
                if headers.get("connection", "").lower() == "close" and not self.server.keep:
                    return
        except (EOFError, ValueError, OSError):
            pass


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", 0), Handler)
srv.log = sys.argv[2]
srv.keep = len(sys.argv) > 3 and sys.argv[3] == "keep"
open(sys.argv[2], "a").close()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()

#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""raw_client.py HOST PORT: sends stdin, as it is, inside one TLS connection to HOST:PORT made
through the proxy in $HTTPS_PROXY (CONNECT), and prints all that comes back until the server
or the proxy closes it (or 10 s pass). For requests no ordinary client sends: pipelined ones,
a body on GET, a chunked body cut where the test wants."""
import os
import socket
import ssl
import sys
import urllib.parse

host, port = sys.argv[1], int(sys.argv[2])
proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
s = socket.create_connection((proxy.hostname, proxy.port), timeout=10)
s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
head = b""
while b"\r\n\r\n" not in head:
    b = s.recv(1)
    if not b:
        sys.exit("the proxy closed the CONNECT")
    head += b
if b" 200" not in head.split(b"\r\n")[0]:
    sys.exit("CONNECT refused: " + head.decode("latin-1"))
t = ssl.create_default_context().wrap_socket(s, server_hostname=host)
t.sendall(sys.stdin.buffer.read().replace(b"\n", b"\r\n").replace(b"\r\r\n", b"\r\n"))
out = b""
try:
    while True:
        b = t.recv(65536)
        if not b:
            break
        out += b
except (OSError, ssl.SSLError):
    pass
sys.stdout.write(out.decode("latin-1"))

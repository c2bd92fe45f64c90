#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""second_request.py WAY HOST PORT SHAPE: one connection to an HTTP server at HOST:PORT that
carries a first request (GET /first, or a POST /first with a body) and, unless SHAPE is a control,
a second one on the same connection for another host (Host: evil.test). Prints STATUSES: the
status codes of every response read before the connection ended.

WAY:   proxy    absolute-form requests to the HTTP proxy at 127.0.0.1:3128
       connect  CONNECT HOST:PORT on 127.0.0.1:3128, then origin-form requests in the tunnel
       socks    SOCKS5 (127.0.0.1:1080) to HOST:PORT, then origin-form requests
       direct   origin-form requests straight to HOST:PORT (a captured connection, or the host)
SHAPE: pipelined      both requests in one write
       keepalive      the second sent after the first response was read whole
       cl_smuggle     POST with Content-Length: 5, the second request right after its 5 bytes
       chunk_smuggle  POST, chunked, the second request right after its last chunk
       halfclose      pipelined, then the client half-closes (SHUT_WR) before reading
       lenient_tab    both requests pipelined, their lines split by tabs (served by
                      Python's http.server, not a strict request line)
       lenient_lower  the same in lower case with single spaces (Go takes any token)
       bad_chunk      POST, chunked, a chunk-size line that is not hex
       one_cl         control: the POST with Content-Length alone (body=5 upstream)
       one_chunked    control: the chunked POST alone (body=5 upstream)
Reading ends when the connection does, or after 2 s without a byte (a server that keeps it)."""
import socket
import struct
import sys

way, host, port, shape = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


def target(path):
    return f"http://{host}:{port}{path}" if way == "proxy" else path


def request(method, path, host_header, extra=""):
    return f"{method} {target(path)} HTTP/1.1\r\nHost: {host_header}\r\n{extra}\r\n"


def read_until(s, marker):
    data = b""
    while marker not in data:
        b = s.recv(4096)
        if not b:
            raise OSError("closed before " + repr(marker))
        data += b
    return data


def open_connection():
    if way in ("proxy", "connect"):
        s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        if way == "connect":
            s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            read_until(s, b"\r\n\r\n")
        return s
    if way == "socks":
        s = socket.create_connection(("127.0.0.1", 1080), timeout=10)
        s.sendall(b"\x05\x01\x00")
        s.recv(2)
        name = host.encode()
        s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack(">H", port))
        reply = s.recv(10)
        if reply[1] != 0:
            raise OSError(f"SOCKS5 reply {reply[1]}")
        return s
    return socket.create_connection((host, port), timeout=10)


def statuses(data):
    return [l.split(" ")[1] for l in data.decode("latin-1").split("\r\n")
            if l.startswith("HTTP/1.")]


def read_rest(s):
    data = b""
    s.settimeout(2)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    return data


def main():
    h = f"{host}:{port}"
    second = request("GET", "/second", "evil.test")
    s = open_connection()
    if shape == "pipelined":
        s.sendall((request("GET", "/first", h) + second).encode())
        data = read_rest(s)
    elif shape in ("lenient_tab", "lenient_lower"):
        sep = "\t" if shape == "lenient_tab" else " "
        line = lambda m, p, hh: (f"{m}{sep}{target(p)}{sep}HTTP/1.1\r\nHost: {hh}\r\n\r\n"
                                 if shape == "lenient_tab" else
                                 f"{m.lower()} {target(p)} http/1.1\r\nHost: {hh}\r\n\r\n")
        s.sendall((line("GET", "/first", h) + line("GET", "/second", "evil.test")).encode())
        data = read_rest(s)
    elif shape == "halfclose":
        s.sendall((request("GET", "/first", h) + second).encode())
        s.shutdown(socket.SHUT_WR)
        data = read_rest(s)
    elif shape == "bad_chunk":
        s.sendall((request("POST", "/first", h, "Transfer-Encoding: chunked\r\n")
                   + "zz\r\nhello\r\n0\r\n\r\n").encode())
        data = read_rest(s)
    elif shape == "keepalive":
        s.sendall(request("GET", "/first", h).encode())
        data = read_until(s, b"seen GET /first\r\n")
        try:
            s.sendall(second.encode())
        except OSError:
            pass
        data += read_rest(s)
    elif shape in ("cl_smuggle", "one_cl"):
        body = "hello" + (second if shape == "cl_smuggle" else "")
        s.sendall((request("POST", "/first", h, "Content-Length: 5\r\n") + body).encode())
        data = read_rest(s)
    elif shape in ("chunk_smuggle", "one_chunked"):
        body = "5\r\nhello\r\n0\r\n\r\n" + (second if shape == "chunk_smuggle" else "")
        s.sendall((request("POST", "/first", h, "Transfer-Encoding: chunked\r\n") + body).encode())
        data = read_rest(s)
    else:
        raise SystemExit(f"unknown shape {shape}")
    print("STATUSES:" + ",".join(statuses(data)), flush=True)


try:
    main()
except OSError as e:
    print(f"ERROR:{type(e).__name__}:{e}", flush=True)

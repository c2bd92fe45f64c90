#!/usr/bin/env python3
# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""npm_registry.py PORTFILE LOGFILE TARBALLS CERT KEY: a stand-in for the npm registry over HTTPS,
for the client suite (tests/clients/matrix.sh).

An HTTP/1.1 keep-alive server over TLS (CERT, KEY: PEM; ALPN http/1.1) on the host's 127.0.0.1,
on a free port it writes to PORTFILE (PORTFILE.tmp, then renamed). Python's standard library only.
It serves the packages of TARBALLS/*.tgz (npm pack's layout: package/package.json names the
package, its version and its dependencies) at the URLs registry.npmjs.org uses:

- GET /NAME, /@SCOPE%2fNAME (the escape in either case: npm asks for a scoped package this way)
  and /@SCOPE/NAME: the package's document (application/json): name, dist-tags.latest and, per
  version, name, version, dependencies and dist (tarball, shasum, integrity). A tarball's URL is
  https://HOST/NAME/-/BASE-VERSION.tgz, HOST as the request's Host header gave it (so the same
  registry answers for any name it is reached by), BASE the name without its scope.
- GET /NAME/-/BASE-VERSION.tgz (NAME scoped or not, its slash plain or escaped): the tarball.
- Anything else: 404 with {"error":"not found"}.

LOGFILE gets the same lines as https_origin.py's, one per TLS connection and per request:
    conn=C tls sni=NAME alpn=PROTO
    conn=C req METHOD TARGET host=H"""
import base64
import hashlib
import http.server
import itertools
import json
import os
import ssl
import sys
import tarfile
import threading
import urllib.parse

portfile, logfile, tarballs, cert, key = sys.argv[1:6]
log_lock = threading.Lock()
conn_ids = itertools.count(1)


def log(line):
    with log_lock, open(logfile, "a", encoding="utf-8", errors="backslashreplace") as f:
        f.write(line + "\n")


def load(directory):
    """{name: {version: (manifest, tarball bytes)}} from the directory's tarballs."""
    packages = {}
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith(".tgz"):
            continue
        with open(os.path.join(directory, entry), "rb") as f:
            data = f.read()
        with tarfile.open(os.path.join(directory, entry)) as t:
            manifest = json.load(t.extractfile("package/package.json"))
        packages.setdefault(manifest["name"], {})[manifest["version"]] = (manifest, data)
    return packages


PACKAGES = load(tarballs)


def base(name):
    return name.rsplit("/", 1)[-1]


def document(name, host):
    versions = {}
    for version, (manifest, data) in PACKAGES[name].items():
        sha512 = base64.b64encode(hashlib.sha512(data).digest()).decode()
        versions[version] = {
            "name": name,
            "version": version,
            "dependencies": manifest.get("dependencies", {}),
            "dist": {
                "tarball": f"https://{host}/{name}/-/{base(name)}-{version}.tgz",
                "shasum": hashlib.sha1(data).hexdigest(),
                "integrity": f"sha512-{sha512}",
            },
        }
    latest = max(versions, key=lambda v: [int(p) for p in v.split(".")])
    return {"name": name, "dist-tags": {"latest": latest}, "versions": versions}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "agentbox-test-registry"
    sys_version = ""
    timeout = 30

    def reply(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        conn = self.request.conn_id
        log(f"conn={conn} req {self.command} {self.path} host={self.headers.get('Host', '')}")
        path = urllib.parse.urlsplit(self.path).path
        name, sep, file = urllib.parse.unquote(path[1:]).partition("/-/")
        if name in PACKAGES and not sep:
            body = json.dumps(document(name, self.headers.get("Host", ""))).encode()
            return self.reply(200, body, "application/json")
        for version, (_, data) in PACKAGES.get(name, {}).items():
            if sep and file == f"{base(name)}-{version}.tgz":
                return self.reply(200, data, "application/octet-stream")
        self.reply(404, b'{"error":"not found"}', "application/json")

    do_HEAD = do_GET

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def finish_request(self, request, client_address):
        # the handshake in the connection's own thread, as in https_origin.py
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

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# capture_client.py COMMAND ARGS...: a client that ignores every proxy variable, for
# test_capture.sh (run inside the sandbox). One KEY:value line per result.
#   resolve NAME                   ADDR:a.b.c.d (the system resolver), or ERROR:...
#   get URL                        STATUS:n BODY:... or ERROR:... (urllib, no proxy)
#   echo HOST PORT                 connects, sends 'e' + a token, prints ECHO:what came back
#   banner HOST PORT               connects and only reads: DATA:what the server said first
#   rawhttp HOST PORT HOSTHDR      GET / with that Host header: STATUS:n DENIED:reason
#   pipeline HOST PORT H1 H2       two GETs in one write (Host H1, then H2): SEEN:every
#                                  "host=..." line the server answered
#   send HOST PORT DELAY TEXT      connects, waits DELAY s, sends TEXT (\\r\\n escapes): SEEN:
#                                  every "host=..." line answered, STATUS:first status
#   tlsvia PORT HOST PORT SNI CA   TLS with that server name through CONNECT HOST:PORT on the
#                                  proxy at 127.0.0.1:PORT, then GET /: STATUS:n or ERROR:...
#   tls HOST PORT SNI CAFILE       TLS with that server name, then GET /: STATUS:n or ERROR:...
#   dns SERVER NAME QTYPE          one raw UDP query to SERVER:53: RCODE:n ANSWERS:n ADDR:...
#   dnsraw SERVER HEX              sends HEX as a datagram: RCODE:n, or NOREPLY
import socket, ssl, struct, sys, urllib.request


def out(key, value=""):
    print(f"{key}:{value}", flush=True)


def error(e):
    out("ERROR", f"{type(e).__name__}:{getattr(e, 'errno', '')}:{e}")


def read_all(s):
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, socket.timeout, OSError):
            break
        if not chunk:
            break
        data += chunk
    return data


def cmd_resolve(name):
    try:
        out("ADDR", socket.gethostbyname(name))
    except OSError as e:
        error(e)


def cmd_get(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as r:
            out("STATUS", r.status)
            out("BODY", r.read().decode().strip())
    except urllib.error.HTTPError as e:
        out("STATUS", e.code)
        out("DENIED", e.headers.get("X-Agentbox-Denied", ""))
    except Exception as e:
        error(e)


def connect(host, port):
    s = socket.create_connection((host, int(port)), timeout=10)
    out("CONNECTED")
    return s


def cmd_echo(host, port):
    token = b"e-capture-echo"
    try:
        s = connect(host, port)
    except OSError as e:
        error(e)
        return
    try:
        s.sendall(token)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # closed by the other side already: what came back (nothing) says so
    try:
        out("ECHO", read_all(s).decode(errors="replace"))
    except OSError:
        out("ECHO", "")


def cmd_banner(host, port):
    try:
        s = connect(host, port)
        out("DATA", read_all(s).decode(errors="replace").strip())
    except OSError as e:
        error(e)


def cmd_rawhttp(host, port, hosthdr):
    try:
        s = connect(host, port)
        s.sendall(f"GET / HTTP/1.1\r\nHost: {hosthdr}\r\nConnection: close\r\n\r\n".encode())
        head = read_all(s).decode(errors="replace")
        out("STATUS", head.split(" ")[1] if head.startswith("HTTP/") else "none")
        for line in head.split("\r\n"):
            if line.lower().startswith("x-agentbox-denied:"):
                out("DENIED", line.split(":", 1)[1].strip())
    except OSError as e:
        error(e)


def cmd_pipeline(host, port, h1, h2):
    try:
        s = connect(host, port)
        s.sendall(f"GET / HTTP/1.1\r\nHost: {h1}\r\n\r\nGET / HTTP/1.1\r\nHost: {h2}\r\n\r\n".encode())
        s.settimeout(3)
        data = read_all(s).decode(errors="replace")
        out("SEEN", " ".join(l for l in data.split("\r\n") if l.startswith("host=")))
    except OSError as e:
        error(e)


def cmd_send(host, port, delay, text):
    import time
    try:
        s = connect(host, port)
        time.sleep(float(delay))
        s.sendall(text.encode().decode("unicode_escape").encode("latin-1"))
        s.settimeout(3)
        data = read_all(s).decode(errors="replace")
        out("SEEN", " ".join(l for l in data.split("\r\n") if l.startswith("host=")))
        out("STATUS", data.split(" ")[1] if data.startswith("HTTP/") else "none")
    except OSError as e:
        error(e)


def get_over_tls(ctx, raw, sni):
    s = ctx.wrap_socket(raw, server_hostname=sni)
    s.sendall(f"GET /file.txt HTTP/1.0\r\nHost: {sni}\r\n\r\n".encode())
    head = read_all(s).decode(errors="replace")
    out("STATUS", head.split(" ")[1] if head.startswith("HTTP/") else "none")


def cmd_tlsvia(pport, host, port, sni, cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    try:
        raw = socket.create_connection(("127.0.0.1", int(pport)), timeout=10)
        raw.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            d = raw.recv(1)
            if not d:
                break
            head += d
        out("TUNNEL", head.split(b"\r\n")[0].decode(errors="replace"))
        get_over_tls(ctx, raw, sni)
    except (OSError, ssl.SSLError) as e:
        error(e)


def cmd_tls(host, port, sni, cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    try:
        get_over_tls(ctx, socket.create_connection((host, int(port)), timeout=10), sni)
    except (OSError, ssl.SSLError) as e:
        error(e)


def query(name, qtype):
    q = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", qtype, 1)


def exchange(server, pkt):
    family = socket.AF_INET6 if ":" in server else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(pkt, (server, 53))
    try:
        return s.recv(4096)
    except socket.timeout:
        return None


def cmd_dns(server, name, qtype):
    try:
        r = exchange(server, query(name, int(qtype)))
    except OSError as e:
        error(e)
        return
    if r is None:
        out("NOREPLY")
        return
    rcode, an = r[3] & 15, struct.unpack("!H", r[6:8])[0]
    out("ID", hex(struct.unpack("!H", r[0:2])[0]))
    out("RCODE", rcode)
    out("ANSWERS", an)
    if an:
        out("ADDR", socket.inet_ntoa(r[-4:]))


def cmd_dnsraw(server, hexdata):
    r = exchange(server, bytes.fromhex(hexdata))
    if r is None:
        out("NOREPLY")
    else:
        out("RCODE", r[3] & 15)


cmds = {"resolve": cmd_resolve, "get": cmd_get, "echo": cmd_echo, "banner": cmd_banner,
        "rawhttp": cmd_rawhttp, "pipeline": cmd_pipeline, "send": cmd_send, "tlsvia": cmd_tlsvia, "tls": cmd_tls, "dns": cmd_dns, "dnsraw": cmd_dnsraw}
cmds[sys.argv[1]](*sys.argv[2:])

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
# egress_client.py COMMAND ARGS...: a client for test_egress.sh, run inside the sandbox with
# /usr/bin/python3 (standard library only). Every request has a timeout, so nothing here hangs.
# Output is one KEY:value line per fact, for the test to assert on; the exit status is 0 unless
# the arguments are wrong (what happened is in the output, not the status).
#
#   get URL [shut]           a plain request to the HTTP proxy (127.0.0.1:3128) with URL sent as
#                            it is (no client-side normalisation of the host); with "shut", the
#                            socket is half-closed (SHUT_WR) after the request.
#                            Prints STATUS:<code>, DENIED:<X-Agentbox-Denied>, BODY:<body>.
#   post URL BYTES           the same with a POST body of BYTES bytes sent with the head.
#   tunnel HOST PORT PATH [shut]
#                            CONNECT HOST:PORT through 127.0.0.1:3128, then a plain GET PATH
#                            through the tunnel. Prints CONNECT:<code>, then STATUS and BODY.
#   socks HOST PORT PATH [shut]
#                            the same through the SOCKS5 proxy (127.0.0.1:1080), the name sent
#                            to the proxy (socks5h). Prints SOCKS:<reply code>, STATUS, BODY.
#   urllib URL [CAFILE]      urllib.request with an explicit ProxyHandler for http and https
#                            (no_proxy cleared: inside the sandbox 127.0.0.1 is the sandbox's
#                            own). Prints BODY:..., or HTTPERROR:<code>, DENIED:..., ERROR:...
#   connect HOST PORT        a raw TCP connect, no proxy: CONNECTED, or ERRNO:<name>.
#   gets URL...              `get` for each URL in turn, in one process (so quickly).
#   hold HOST_A HOST_B PORT PATH
#                            per-host connection counts: a tunnel to HOST_A held open
#                            (HOLD_A:<code>), a second one to HOST_A (SECOND_A:<code>, DENIED),
#                            one to HOST_B with a GET (B_CONNECT, B_STATUS, B_BODY), a GET
#                            through the held tunnel (HELD_BODY), then the held tunnel closed
#                            and a new one to HOST_A with a GET (AGAIN_CONNECT, AGAIN_BODY).
#   manyhosts N PORT         CONNECT to h0.test ... h<N-1>.test:PORT, 16 at a time, one byte
#                            sent early, each closed both ways before the next one
#                            (the server must close on EOF): OK_COUNT:<200s>, REFUSED_COUNT:<403s>,
#                            FIRST_REFUSED:<index>:<X-Agentbox-Denied>, OTHER_COUNT.
#   bulk HOST PORT UP DOWN   a CONNECT tunnel to helpers/egress_sink.py's hashed mode: sends
#                            "H<DOWN>\n" and UP pseudo-random bytes, half-closes (SHUT_WR), then
#                            reads the sink's answer ("<count> <sha256>\n" and DOWN bytes) to
#                            EOF. Prints SENT:<bytes through the tunnel>, RECEIVED:<bytes back>,
#                            UP_OK:<UP> when the sink got exactly what was sent, DOWN_OK:<DOWN>
#                            when exactly the expected DOWN bytes came back, SEND_ERROR:<errno>.
#   bulk HOST PORT UP DOWN urgent
#                            the same with one byte of TCP urgent data (MSG_OOB) sent halfway
#                            through, which the proxy's reads step over: the sink must still
#                            get all UP bytes (UP_OK). The sink pauses 1 s after the H line, so
#                            that (with UP larger than the sockets' buffers) the urgent byte
#                            comes behind bytes the proxy has not read yet: the mark its
#                            splice meets.
#   echo HOST PORT BYTES     a CONNECT tunnel to the sink's echo mode: BYTES bytes (the first is
#                            'e') sent while a second thread reads the echo, then SHUT_WR and
#                            the rest read to EOF. Prints SENT, RECEIVED, ECHO_OK:<BYTES>.
import errno, hashlib, os, random, socket, ssl, sys, threading, time

PROXY = ("127.0.0.1", 3128)
SOCKS = ("127.0.0.1", 1080)
TIMEOUT = 15


def out(key, value=""):
    print(f"{key}:{value}", flush=True)


def read_all(s):
    data = b""
    s.settimeout(TIMEOUT)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except socket.timeout:
        out("ERROR", "timed out reading the response")
    except OSError as e:
        out("READERROR", errno.errorcode.get(e.errno, str(e)))
    return data


def show_response(data):
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/"):
        out("STATUS", "none")
        out("RAW", repr(data[:200]))
        return
    out("STATUS", lines[0].split(" ")[1])
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "x-agentbox-denied":
            out("DENIED", value.strip())
    out("BODY", body.decode("latin-1").strip())


def host_header(url):
    rest = url.split("://", 1)[1]
    return rest.split("/", 1)[0]


def cmd_get(url, shut=False, body=b"", method="GET"):
    s = socket.create_connection(PROXY, timeout=TIMEOUT)
    req = (f"{method} {url} HTTP/1.1\r\nHost: {host_header(url)}\r\nUser-Agent: egress-test\r\n"
           f"Connection: close\r\n")
    if method == "POST":
        req += f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n"
    s.sendall(req.encode() + b"\r\n" + body)
    if shut:
        s.shutdown(socket.SHUT_WR)
    show_response(read_all(s))
    s.close()


def read_head(s):
    data = b""
    s.settimeout(TIMEOUT)
    while b"\r\n\r\n" not in data:
        d = s.recv(4096)
        if not d:
            break
        data += d
    return data


def get_through(s, host, port, path, shut):
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
    if shut:
        s.shutdown(socket.SHUT_WR)
    show_response(read_all(s))


def cmd_tunnel(host, port, path, shut=False):
    s = socket.create_connection(PROXY, timeout=TIMEOUT)
    s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = read_head(s)
    code = head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "none"
    out("CONNECT", code)
    if code != "200":
        show_response(head + read_all(s))
        return
    get_through(s, host, port, path, shut)


def open_tunnel(host, port):
    """A CONNECT tunnel: (socket, code, head of the proxy's answer)."""
    s = socket.create_connection(PROXY, timeout=TIMEOUT)
    s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = read_head(s)
    code = head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "none"
    return s, code, head


def denied_of(head):
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.lower() == "x-agentbox-denied":
            return value.strip()
    return ""


def body_through(s, host, port, path):
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
    data = read_all(s)
    return data.partition(b"\r\n\r\n")[2].decode("latin-1").strip()


def cmd_hold(host_a, host_b, port, path):
    held, code, _ = open_tunnel(host_a, port)
    out("HOLD_A", code)
    s, code, head = open_tunnel(host_a, port)
    out("SECOND_A", code)
    out("SECOND_DENIED", denied_of(head))
    s.close()
    s, code, _ = open_tunnel(host_b, port)
    out("B_CONNECT", code)
    if code == "200":
        out("B_BODY", body_through(s, host_b, port, path))
    s.close()
    out("HELD_BODY", body_through(held, host_a, port, path))
    held.close()
    time.sleep(0.3)  # the proxy sees the close and gives the host's connection back
    s, code, _ = open_tunnel(host_a, port)
    out("AGAIN_CONNECT", code)
    if code == "200":
        out("AGAIN_BODY", body_through(s, host_a, port, path))
    s.close()


def cmd_manyhosts(n, port):
    from concurrent.futures import ThreadPoolExecutor

    def one(i):
        try:
            s = socket.create_connection(PROXY, timeout=TIMEOUT)
            s.sendall(f"CONNECT h{i}.test:{port} HTTP/1.1\r\n\r\nx".encode())
            head = read_head(s)
            # the end passed on both ways, so the proxy holds at most 16 connections at once
            s.shutdown(socket.SHUT_WR)
            read_all(s)
            s.close()
        except OSError as e:
            return i, "error", str(e)
        code = head.split(b" ")[1].decode() if head.startswith(b"HTTP/") else "none"
        return i, code, denied_of(head)

    with ThreadPoolExecutor(16) as pool:
        results = sorted(pool.map(one, range(int(n))))
    ok = [r for r in results if r[1] == "200"]
    refused = [r for r in results if r[1] == "403"]
    out("OK_COUNT", len(ok))
    out("REFUSED_COUNT", len(refused))
    out("OTHER_COUNT", len(results) - len(ok) - len(refused))
    if refused:
        out("FIRST_REFUSED", f"{refused[0][0]}:{refused[0][2]}")
    for r in results:
        if r[1] not in ("200", "403"):
            out("OTHER", f"{r[0]}:{r[1]}:{r[2]}")
            break


def cmd_socks(host, port, path, shut=False):
    s = socket.create_connection(SOCKS, timeout=TIMEOUT)
    s.sendall(b"\x05\x01\x00")
    greet = s.recv(2)
    if greet != b"\x05\x00":
        out("SOCKS", f"greeting {greet!r}")
        return
    name = host.encode()
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + int(port).to_bytes(2, "big"))
    rep = b""
    while len(rep) < 10:
        d = s.recv(10 - len(rep))
        if not d:
            break
        rep += d
    out("SOCKS", rep[1] if len(rep) > 1 else "closed")
    if len(rep) < 2 or rep[1] != 0:
        out("AFTER_REPLY", "eof" if not read_all(s) else "data")
        return
    get_through(s, host, port, path, shut)


def cmd_urllib(url, cafile=None):
    import urllib.error, urllib.request
    for v in ("no_proxy", "NO_PROXY"):
        os.environ.pop(v, None)
    proxy = "http://127.0.0.1:3128"
    handlers = [urllib.request.ProxyHandler({"http": proxy, "https": proxy})]
    if cafile:
        handlers.append(urllib.request.HTTPSHandler(
            context=ssl.create_default_context(cafile=cafile)))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(url, timeout=TIMEOUT) as r:
            out("BODY", r.read().decode().strip())
    except urllib.error.HTTPError as e:
        out("HTTPERROR", e.code)
        out("DENIED", e.headers.get("X-Agentbox-Denied", ""))
        out("BODY", e.read().decode(errors="replace").strip())
    except Exception as e:
        out("ERROR", f"{type(e).__name__}: {e}")


def cmd_connect(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = None
    try:
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect((host, int(port)))
        out("CONNECTED")
    except socket.timeout:
        out("ERRNO", "timeout")
    except OSError as e:
        out("ERRNO", errno.errorcode.get(e.errno, str(e)))
    finally:
        if s:
            s.close()


def pseudo_random(size):
    """helpers/egress_sink.py's reply_bytes: SIZE pseudo-random bytes, the same for the same SIZE
    (repeated here because only this file is copied into the sandbox)."""
    return random.Random(size).randbytes(size)


def send_counted(s, data):
    """sendall that says how much went before an error (bytes, errno name or "")."""
    view, sent = memoryview(data), 0
    try:
        while sent < len(data):
            sent += s.send(view[sent : sent + (1 << 20)])
    except OSError as e:
        return sent, errno.errorcode.get(e.errno, str(e))
    return sent, ""


def shut_write(s):
    """SHUT_WR, or SHUT_ERROR:<errno> when the proxy has closed the connection already."""
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError as e:
        out("SHUT_ERROR", errno.errorcode.get(e.errno, str(e)))


def read_to_eof(s, sink):
    """Reads s until EOF, an error or the timeout, passing each piece to sink."""
    s.settimeout(TIMEOUT)
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                return
            sink(d)
    except socket.timeout:
        out("ERROR", "timed out reading")
    except OSError as e:
        out("READERROR", errno.errorcode.get(e.errno, str(e)))


def cmd_bulk(host, port, up, down, urgent=None):
    up, down = int(up), int(down)
    s, code, _ = open_tunnel(host, port)
    if code != "200":
        out("CONNECT", code)
        return
    data = pseudo_random(up)
    head = f"H{down} 1000\n" if urgent else f"H{down}\n"
    first = head.encode() + (data[: up // 2] if urgent else data)
    sent, err = send_counted(s, first)
    if urgent and not err:
        sent += s.send(b"U", socket.MSG_OOB)
        more, err = send_counted(s, data[up // 2 :])
        sent += more
    out("SENT", sent)
    if err:
        out("SEND_ERROR", err)
    else:
        shut_write(s)
    got = bytearray()
    read_to_eof(s, got.extend)
    out("RECEIVED", len(got))
    line, _, body = bytes(got).partition(b"\n")
    if line == f"{up} {hashlib.sha256(data).hexdigest()}".encode():
        out("UP_OK", up)
    if body == pseudo_random(down):
        out("DOWN_OK", down)


def cmd_echo(host, port, n):
    n = int(n)
    s, code, _ = open_tunnel(host, port)
    if code != "200":
        out("CONNECT", code)
        return
    data = b"e" + pseudo_random(n - 1)
    got = bytearray()
    reader = threading.Thread(target=read_to_eof, args=(s, got.extend))
    reader.start()
    sent, err = send_counted(s, data)
    if not err:
        shut_write(s)
    reader.join()
    out("SENT", sent)
    out("RECEIVED", len(got))
    if got == data:
        out("ECHO_OK", n)


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit("usage: egress_client.py get|post|tunnel|socks|urllib|connect ARGS...")
    cmd, args = a[0], a[1:]
    shut = bool(args) and args[-1] == "shut"
    if shut:
        args = args[:-1]
    t0 = time.monotonic()
    if cmd == "get":
        cmd_get(args[0], shut)
    elif cmd == "post":
        cmd_get(args[0], body=b"p" * int(args[1]), method="POST")
    elif cmd == "tunnel":
        cmd_tunnel(args[0], args[1], args[2], shut)
    elif cmd == "socks":
        cmd_socks(args[0], args[1], args[2], shut)
    elif cmd == "urllib":
        cmd_urllib(*args)
    elif cmd == "connect":
        cmd_connect(args[0], args[1])
    elif cmd == "gets":
        for url in args:
            cmd_get(url)
    elif cmd == "hold":
        cmd_hold(*args)
    elif cmd == "manyhosts":
        cmd_manyhosts(*args)
    elif cmd == "bulk":
        cmd_bulk(*args)
    elif cmd == "echo":
        cmd_echo(*args)
    else:
        sys.exit(f"unknown command {cmd}")
    out("ELAPSED", f"{time.monotonic() - t0:.1f}")


main()

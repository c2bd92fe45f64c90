# egress_sink.py PORTFILE: a TCP sink on the host's 127.0.0.1 for test_egress.sh and
# bench/egress. It accepts every connection (backlog 4096, so a burst of connects is not held
# back by SYN retries), reads and drops what comes until EOF, then closes; a connection whose
# first byte is 'e' is echoed back instead (bench/egress's latency). One thread, one
# selector: thousands of connections cost it no threads. The port it listens on is written
# to PORTFILE (atomically: PORTFILE.tmp, then renamed).
import os, resource, selectors, socket, sys

portfile = sys.argv[1]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4096)
srv.setblocking(False)
sel = selectors.DefaultSelector()
sel.register(srv, selectors.EVENT_READ, None)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
buf = bytearray(1 << 20)
while True:
    for key, _ in sel.select():
        s = key.fileobj
        if s is srv:
            while True:
                try:
                    c, _ = srv.accept()
                except BlockingIOError:
                    break
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ, "new")
            continue
        try:
            n = s.recv_into(buf)
        except BlockingIOError:
            continue
        except OSError:
            n = 0
        if n == 0:
            sel.unregister(s)
            s.close()
            continue
        if key.data == "new":
            sel.modify(s, selectors.EVENT_READ, "echo" if buf[0:1] == b"e" else "sink")
        if sel.get_key(s).data == "echo":
            s.setblocking(True)
            s.sendall(memoryview(buf)[:n])
            s.setblocking(False)

# egress_sink.py PORTFILE: a TCP sink on the host's 127.0.0.1 for test_egress.sh and
# bench/egress. It accepts every connection (backlog 1024, so a burst of connects is not held
# back by SYN retries), reads and drops what comes until EOF, then closes. One thread, one
# selector: thousands of connections cost it no threads. The port it listens on is written
# to PORTFILE (atomically: PORTFILE.tmp, then renamed).
import os, selectors, socket, sys

portfile = sys.argv[1]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1024)
srv.setblocking(False)
sel = selectors.DefaultSelector()
sel.register(srv, selectors.EVENT_READ)
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
                sel.register(c, selectors.EVENT_READ)
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

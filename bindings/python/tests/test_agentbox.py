# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""The package against a real agentbox (AGENTBOX_BINARY; profiles on AGENTBOX_PROFILE_PATH):
the control socket's protocol, a run, and a harness's agent loop over a session: execs in a
row, a background server, a timeout, errors with their causes, then a per-file review; and a
session's live policy (allow, deny, [http] rules, refused past the profile's grant) and its ask
hook (a callback's answers, the questions iterated and answered, one past its time, a
malformed answer and its effect) against a server on the host's loopback."""
from __future__ import annotations

import array
import errno
import functools
import http.server
import os
import pty
import shutil
import socket
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import agentbox
from agentbox import _wire

PROFILE = os.environ.get("AGENTBOX_TEST_PROFILE", "python")


class Wire(unittest.TestCase):
    def test_exec_request_layout(self) -> None:
        data = _wire.encode_request(_wire.EXEC, ["echo", "hi"], ["A=1"], "/w", 1500)
        head = _wire.HEADER.unpack_from(data, _wire.FRAME.size)
        self.assertEqual(head, (_wire.MAGIC, _wire.EXEC, 0, 1, 1500, 2, 1))
        self.assertEqual(data[_wire.FRAME.size + _wire.HEADER.size :], b"/w\0echo\0hi\0A=1\0")
        self.assertEqual(data[: _wire.FRAME.size], bytes(_wire.FRAME.size))

    def test_refuses_what_the_supervisor_would(self) -> None:
        for argv, env in ((["a\0b"], []), (["x"], ["1A=x"]), (["x"], ["NOEQ"]), ([], [])):
            with self.assertRaises(ValueError):
                _wire.encode_request(_wire.EXEC, argv, env)
        with self.assertRaises(ValueError):
            _wire.encode_request(_wire.EXEC, ["x" * _wire.MAX_REQUEST])

    def test_policy_and_answer_requests(self) -> None:
        data = _wire.encode_request(_wire.POLICY, ["pypi.org:443"], value=_wire.POLICY_ALLOW)
        head = _wire.HEADER.unpack_from(data, _wire.FRAME.size)
        self.assertEqual(head, (_wire.MAGIC, _wire.POLICY, 1, 0, 0, 1, 0))
        self.assertEqual(data[_wire.FRAME.size + _wire.HEADER.size :], b"pypi.org:443\0")
        data = _wire.encode_request(_wire.ANSWER, ["run"], value=12)
        self.assertEqual(_wire.HEADER.unpack_from(data, _wire.FRAME.size)[2], 12)
        for kind, argv in ((_wire.POLICY, []), (_wire.POLICY, ["a", "b"]), (_wire.POLICY, [""]),
                           (_wire.ANSWER, ["maybe"])):
            with self.assertRaises(ValueError):
                _wire.encode_request(kind, argv, value=1)

    def test_reply_with_data(self) -> None:
        frame = _wire.FRAME.pack(_wire.REPLY_INFO, 7, 3, b"line\0junk")
        reply = _wire.decode_reply(frame + b'{"id":"x"}')
        self.assertEqual((reply.type, reply.value, reply.id, reply.text), (103, 7, 3, "line"))
        self.assertEqual(reply.data, b'{"id":"x"}')
        with self.assertRaises(ValueError):
            _wire.decode_reply(b"short")


class Base(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(dir=os.environ.get("TEST_WORKDIR"))
        self.addCleanup(shutil.rmtree, self.dir, True)


class Run(Base):
    def test_outcomes(self) -> None:
        r = agentbox.run(["sh", "-c", "echo out; echo err >&2; exit 3"], profile=PROFILE)
        self.assertEqual((r.status, r.cause, r.code, r.signal), (3, "exited", 3, None))
        self.assertEqual((r.stdout, r.stderr), (b"out\n", b"err\n"))
        self.assertFalse(r.ok)
        self.assertEqual(set(r.denials), {"net", "http", "dns", "credential", "syscall"})
        r = agentbox.run(["cat"], profile=PROFILE, input=b"x" * 300000)
        self.assertTrue(r.ok)
        self.assertEqual(len(r.stdout or b""), 300000)
        r = agentbox.run(["sleep", "10"], profile=PROFILE, timeout=0.3)
        self.assertEqual((r.cause, r.status), ("timeout", 124))
        r = agentbox.run(["sh", "-c", "kill -TERM $$"], profile=PROFILE)
        self.assertEqual((r.cause, r.signal, r.status), ("signaled", 15, 143))

    def test_setup_error_is_an_exception_with_the_cause(self) -> None:
        bad = os.path.join(self.dir, "bad.ini")
        with open(bad, "w") as f:
            f.write("[filesystem]\nrwx = /\n")
        with self.assertRaises(agentbox.SetupError) as caught:
            agentbox.run(["true"], profile=bad)
        self.assertEqual((caught.exception.cause, caught.exception.status), ("setup-error", 125))
        self.assertIn("rwx", caught.exception.message)


class AgentLoop(Base):
    """A harness's task: many execs, a server left running, a timeout, then review."""

    def test_loop(self) -> None:
        with agentbox.Session(PROFILE, overlay=[self.dir]) as s:
            info = s.info()
            self.assertEqual(info["id"], s.id)
            for i in range(20):
                r = s.exec(["sh", "-c", f"echo {i} >f{i}.txt; cat f{i}.txt"], cwd=self.dir)
                self.assertTrue(r.ok, r)
                self.assertEqual((r.stdout, r.exec, r.run), (f"{i}\n".encode(), i + 1, s.id))
            self.assertEqual(s.info()["execs"], 20)
            self.background_server(s)
            r = s.exec(["sleep", "10"], timeout=0.3)
            self.assertEqual((r.cause, r.status), ("timeout", 124))
            r = s.exec(["sh", "-c", 'echo "$A $B"'], env={"A": "one", "B": "two"})
            self.assertEqual(r.stdout, b"one two\n")
            self.assertFalse(os.path.exists(os.path.join(self.dir, "f0.txt")))
            with self.assertRaises(agentbox.ReviewError):
                s.promote()  # a live session's changes are not promoted
        self.review(s)

    def background_server(self, s: agentbox.Session) -> None:
        """A server the command leaves running holds no exec open, and a later exec reaches
        it."""
        start = time.monotonic()
        r = s.exec(["sh", "-c", "python3 -m http.server -b 127.0.0.1 8123 >/dev/null 2>&1 &"],
                   cwd=self.dir)
        self.assertTrue(r.ok, r)
        self.assertLess(time.monotonic() - start, 5)
        path = s.port(8123)
        self.assertEqual(s.port(8123), path)  # the same forward
        body = b""
        for _ in range(100):  # a request over the forward, from this side
            # until the server listens, the forward closes each connection at once: the send
            # may find it closed (MSG_NOSIGNAL: EPIPE, not the SIGPIPE this process dies of)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                try:
                    c.connect(path)
                    c.sendmsg([b"GET /f3.txt HTTP/1.0\r\n\r\n"], [], socket.MSG_NOSIGNAL)
                    body = b"".join(iter(lambda: c.recv(65536), b""))
                except OSError:
                    body = b""
            if body.endswith(b"\r\n\r\n3\n"):
                break
            time.sleep(0.1)
        self.assertTrue(body.endswith(b"\r\n\r\n3\n"), body)
        s.port(8123, close=True)
        self.assertFalse(os.path.exists(path))
        fetch = ("import time, urllib.request\n"
                 "for _ in range(100):\n"
                 "    try:\n"
                 "        print(urllib.request.urlopen('http://127.0.0.1:8123/f3.txt').read())\n"
                 "        break\n"
                 "    except OSError:\n"
                 "        time.sleep(0.1)\n")
        r = s.exec(["python3", "-c", fetch])
        self.assertEqual(r.stdout, b"b'3\\n'\n", r)

    def review(self, s: agentbox.Session) -> None:
        pending = s.changes().pending
        self.assertEqual(len(pending), 20)
        # one file, then another of the same directory, then the rest: each in its turn
        for name in ("f3.txt", "f4.txt"):
            done = s.promote(os.path.join(self.dir, name))
            self.assertEqual((done.status, done.results["applied"]), ("ok", 1))
            with open(os.path.join(self.dir, name)) as f:
                self.assertEqual(f.read(), name[1:-4] + "\n")
        left = s.changes().pending
        self.assertEqual(len(left), 18)
        self.assertNotIn(os.path.join(self.dir, "f3.txt"), [c.path for c in left])
        # accepted: all but one, named by their exact bytes; the one left is rejected
        rest = s.promote(*[c.path_bytes for c in left[1:]])
        self.assertEqual(rest.results["applied"], 17)
        self.assertEqual([c.path for c in s.changes().pending], [left[0].path])
        thrown = s.discard()
        self.assertEqual(thrown.results["discarded"], 1)
        self.assertFalse(os.path.exists(left[0].path))


class ExecErrors(Base):
    def test_causes(self) -> None:
        with agentbox.Session(PROFILE) as s:
            with self.assertRaises(agentbox.StartError) as caught:
                s.exec(["true"], cwd="/nonexistent")
            self.assertEqual((caught.exception.cause, caught.exception.status),
                             ("start-error", 125))
            self.assertIn("/nonexistent", caught.exception.message)
            with self.assertRaises(agentbox.StartError) as caught:
                s.exec(["no-such-command"])
            self.assertEqual(caught.exception.status, 127)
            # a command's own 125 is a result, not agentbox's failure
            r = s.exec(["sh", "-c", "exit 125"])
            self.assertEqual((r.cause, r.code), ("exited", 125))
            master, slave = pty.openpty()
            try:
                with self.assertRaises(ValueError):
                    s.exec(["true"], stdout=slave)
            finally:
                os.close(master)
                os.close(slave)
            r = s.exec(["true"])  # the session still serves
            self.assertTrue(r.ok)
        with self.assertRaises(agentbox.SessionError) as ended:
            s.exec(["true"])
        self.assertEqual(ended.exception.cause, "session-ended")
        s.stop()  # stopped already: nothing to do

    def test_another_version_is_refused(self) -> None:
        with agentbox.Session(PROFILE) as s:
            request = bytearray(_wire.encode_request(_wire.INFO))
            request[_wire.FRAME.size : _wire.FRAME.size + 4] = b"ABX2"[::-1]
            with s._connect() as sock:
                sock.sendall(bytes(request))
                reply = _wire.decode_reply(sock.recv(_wire.MAX_REPLY))
            self.assertEqual(reply.type, _wire.REPLY_ERROR)
            self.assertIn("version 1", reply.text)
            self.assertTrue(s.exec(["true"]).ok)

    def test_session_killed_under_a_command(self) -> None:
        s = agentbox.Session(PROFILE).start()
        self.addCleanup(lambda: s.live and s.stop())
        pid = s.info()["pid"]
        killer = subprocess.Popen(["sh", "-c", f"sleep 0.5; kill -9 {pid}"])
        self.addCleanup(killer.wait)
        with self.assertRaises(agentbox.SessionError) as caught:
            s.exec(["sleep", "30"])
        self.assertEqual(caught.exception.cause, "session-ended")
        s.live = False

    def test_bad_profile(self) -> None:
        with self.assertRaises(agentbox.SetupError) as caught:
            agentbox.Session(os.path.join(self.dir, "missing.ini")).start()
        self.assertIn("missing.ini", caught.exception.message)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


# A fetch from inside the sandbox through its proxy (the profile's environment names it): the
# body, or the proxy's refusal.
FETCH = ("import sys, urllib.request, urllib.error\n"
         "try:\n"
         "    print(urllib.request.urlopen(sys.argv[1], timeout=30).read().decode(), end='')\n"
         "except urllib.error.HTTPError as e:\n"
         "    print(e.code, e.read().decode(), end='')\n")


class LivePolicy(Base):
    """A harness that widens a session's rules within the profile's grant, narrows them, and
    answers the questions of the ask hook."""

    def setUp(self) -> None:
        super().setUp()
        with open(os.path.join(self.dir, "file.txt"), "w") as f:
            f.write("live-body\n")
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(_Quiet, directory=self.dir))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.port = server.server_port
        self.profile = os.path.join(self.dir, "live.ini")
        with open(self.profile, "w") as f:
            f.write(f"[sandbox]\ninclude = {PROFILE}.ini\n[network]\nmode = proxy\n"
                    "resolve = a.live.test=127.0.0.1, b.live.test=127.0.0.1\n"
                    f"grantable = *.live.test:{self.port}\nask-timeout = 2s\n"
                    f"[http]\ngrantable = GET b.live.test/**\n")

    def fetch(self, s: agentbox.Session, host: str) -> bytes:
        r = s.exec(["python3", "-c", FETCH, f"http://{host}:{self.port}/file.txt"])
        self.assertTrue(r.ok, r)
        return r.stdout or b""

    def test_allow_deny_and_the_grant(self) -> None:
        with agentbox.Session(self.profile) as s:
            self.assertIn(b"no allow rule matches a.live.test", self.fetch(s, "a.live.test"))
            change = s.allow(f"a.live.test:{self.port}")
            self.assertEqual((change.action, change.rule, change.changed, change.grant),
                             ("allow", f"a.live.test:{self.port}", True,
                              f"*.live.test:{self.port}"))
            self.assertEqual(self.fetch(s, "a.live.test"), b"live-body\n")
            self.assertFalse(s.allow(f"a.live.test:{self.port}").changed)
            for beyond in ("a.live.test", "pypi.org:443"):
                with self.assertRaises(agentbox.PolicyError) as refused:
                    s.allow(beyond)
                self.assertEqual(refused.exception.errno, errno.EPERM)
                self.assertIn("beyond what the profile lets a harness allow",
                              refused.exception.message)
            with self.assertRaises(agentbox.PolicyError) as bad:
                s.allow("not a rule")
            self.assertEqual(bad.exception.errno, errno.EINVAL)
            change = s.deny("*.live.test")
            self.assertEqual(change.removed, (f"a.live.test:{self.port}",))
            self.assertIn(b"denied by rule '*.live.test'", self.fetch(s, "a.live.test"))
            # [http]: within its grant, and not past it
            with self.assertRaises(agentbox.PolicyError):
                s.http_rule("GET a.live.test/**")
            self.assertTrue(s.http_rule("GET b.live.test/file.txt").changed)
            self.assertTrue(s.http_rule("* b.live.test/**", deny=True).changed)

    def test_ask_callback(self) -> None:
        with agentbox.Session(self.profile) as s:
            answers = iter(["once", "deny", "run"])
            asked = []

            def decide(q: agentbox.Question) -> str:
                asked.append((q.id, q.host, q.port, q.protocol, q.grant))
                return next(answers)

            with s.ask(decide) as hook:
                self.assertEqual(self.fetch(s, "a.live.test"), b"live-body\n")
                self.assertIn(b"the harness denied it (question 2)", self.fetch(s, "a.live.test"))
                self.assertEqual(self.fetch(s, "a.live.test"), b"live-body\n")
                self.assertEqual(self.fetch(s, "a.live.test"), b"live-body\n")  # run: no question
            self.assertEqual(hook.errors, [])
            self.assertEqual(
                asked, [(i, "a.live.test", self.port, "http", f"*.live.test:{self.port}")
                        for i in (1, 2, 3)])
            # the subscription ended: refusals are at once again
            self.assertIn(b"no allow rule matches b.live.test", self.fetch(s, "b.live.test"))

    def test_questions_iterated(self) -> None:
        with agentbox.Session(self.profile) as s, s.questions() as asker:
            self.assertEqual(asker.timeout_ms, 2000)
            done: list = []
            t = threading.Thread(target=lambda: done.append(self.fetch(s, "a.live.test")))
            t.start()
            q = asker.next(timeout=10)
            assert q is not None
            self.assertEqual((q.id, q.host, q.port, q.exec), (1, "a.live.test", self.port, 1))
            self.assertEqual(q.answer("once"), 1)
            t.join(30)
            self.assertEqual(done, [b"live-body\n"])
            # a question past its time is not open any more
            t = threading.Thread(target=lambda: done.append(self.fetch(s, "a.live.test")))
            t.start()
            q = asker.next(timeout=10)
            assert q is not None
            t.join(30)
            self.assertIn(b"no answer from the harness within 2000 ms", done[-1])
            with self.assertRaises(agentbox.PolicyError) as late:
                q.answer("run")
            self.assertEqual(late.exception.errno, errno.ESRCH)
            self.assertEqual(asker.settled.get(q.id), "timeout")

    def test_malformed_answer_drops_the_subscriber(self) -> None:
        """An answer that is not one of the three words is refused, and the subscriber with
        it: its open question is denied at once."""
        with agentbox.Session(self.profile) as s:
            sock = s._connect()
            self.addCleanup(sock.close)
            sock.sendall(_wire.encode_request(_wire.ASK))
            self.assertEqual(_wire.decode_reply(sock.recv(_wire.MAX_REPLY)).type,
                             _wire.REPLY_ASKING)
            done: list = []
            t = threading.Thread(target=lambda: done.append(self.fetch(s, "a.live.test")))
            t.start()
            q = _wire.decode_reply(sock.recv(_wire.MAX_REPLY))
            self.assertEqual((q.type, q.id, q.value, q.text),
                             (_wire.REPLY_QUESTION, 1, self.port, "a.live.test"))
            bad = bytearray(_wire.encode_request(_wire.ANSWER, ["once"], value=1))
            bad[-5:-1] = b"yes!"
            sock.sendall(bytes(bad))
            reply = _wire.decode_reply(sock.recv(_wire.MAX_REPLY))
            self.assertEqual(reply.type, _wire.REPLY_ERROR)
            self.assertIn("malformed", reply.text)
            self.assertEqual(sock.recv(_wire.MAX_REPLY), b"")  # dropped
            t.join(30)
            self.assertIn(b"the harness left before answering question 1", done[0])

    def test_asked_connection_takes_answers_only(self) -> None:
        """The subscriber's connection cannot start an exec or make any other request: refused,
        and the subscription ends (a new one is taken)."""
        with agentbox.Session(self.profile) as s:
            sock = s._connect()
            self.addCleanup(sock.close)
            sock.sendall(_wire.encode_request(_wire.ASK))
            self.assertEqual(_wire.decode_reply(sock.recv(_wire.MAX_REPLY)).type,
                             _wire.REPLY_ASKING)
            with open(os.devnull, "rb") as null:
                fds = [null.fileno()] * 3
                sock.sendmsg([_wire.encode_request(_wire.EXEC, ["true"])],
                              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            reply = _wire.decode_reply(sock.recv(_wire.MAX_REPLY))
            self.assertEqual(reply.type, _wire.REPLY_ERROR)
            self.assertIn("a request this connection cannot make", reply.text)
            self.assertEqual(sock.recv(_wire.MAX_REPLY), b"")
            with s.questions() as again:
                self.assertEqual(again.timeout_ms, 2000)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    unittest.main()

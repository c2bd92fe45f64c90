# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""A session: one sandbox for a task's many commands, driven over its control socket."""
from __future__ import annotations

import array
import json
import os
import selectors
import socket
import subprocess
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _wire
from ._ask import Asker, AskThread, Question
from ._run import Path, Stream, binary, last_line, review, timeout_ms
from ._types import (
    AgentboxError,
    PolicyChange,
    PolicyError,
    Result,
    Review,
    SessionError,
    SetupError,
    StartError,
)

# Output still coming, after the command's end, from what it left running with its fds: read
# for this long at most, as `agentbox mcp` does, so that a background server does not hold an
# exec open.
DRAIN_AFTER_EXIT = 0.5


class Session:
    """`with Session("python", overlay=[repo]) as s: s.exec(["make"])`, then review.

    The session starts on entering the block (or start()) and stops on leaving it (or stop());
    its changes stay for changes(), diff(), promote() and discard(), which need it stopped."""

    def __init__(
        self,
        profile: str,
        *,
        overlay: Sequence[Path] = (),
        options: Sequence[str] = (),
        binary_path: Optional[str] = None,
    ) -> None:
        self.profile = profile
        self.overlay = list(overlay)
        self.options = list(options)
        self.binary = binary(binary_path)
        self.id: Optional[str] = None
        self.socket_path: Optional[str] = None
        self.changes_dir: Optional[str] = None
        self.live = False

    def __enter__(self) -> "Session":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        try:
            self.stop()
        except AgentboxError:
            if exc[0] is None:
                raise  # else the block's own exception is the one to see

    def start(self) -> "Session":
        if self.id is not None:
            raise SessionError("this session was started already")
        argv = [self.binary, "session", "start", "--json", "-p", self.profile]
        for path in self.overlay:
            argv += ["--overlay", os.fsdecode(path)]
        proc = subprocess.run(
            argv + self.options, stdin=subprocess.DEVNULL, capture_output=True
        )
        if proc.returncode != 0:
            raise SetupError(last_line(proc.stderr), cause="setup-error", status=proc.returncode)
        info = json.loads(proc.stdout)
        self.id, self.socket_path = info["id"], info["socket"]
        self.changes_dir = info.get("changes")
        self.live = True
        return self

    def stop(self) -> None:
        """Ends everything in the session; returns once its trail is written and its changes
        are released. A session that has ended already is left as it is."""
        if not self.live:
            return
        try:
            sock = self._connect()
        except SessionError:
            self.live = False  # ended already (stopped elsewhere, or its supervisor died)
            return
        with sock:
            sock.sendall(_wire.encode_request(_wire.STOP))
            reply = self._recv(sock)
            while sock.recv(_wire.MAX_REPLY):  # its end: the supervisor has exited
                pass
        self.live = False
        if reply is None or reply.type != _wire.REPLY_STOPPED or reply.value != 0:
            raise SessionError(
                "the session did not stop cleanly: see its audit trail",
                status=reply.value if reply else None,
            )

    def info(self) -> Dict[str, Any]:
        """The session as its supervisor describes it (id, execs, profile...)."""
        with self._connect() as sock:
            sock.sendall(_wire.encode_request(_wire.INFO))
            reply = self._recv(sock)
        if reply is None or reply.type != _wire.REPLY_INFO:
            raise SessionError(reply.text if reply else "the session did not answer")
        return dict(json.loads(reply.data))

    def port(self, port: int, *, close: bool = False) -> str:
        """A host-side Unix socket (in the session's private directory) that reaches PORT on
        the sandbox's 127.0.0.1 (or ::1): connect to it to talk to a server the command
        started, e.g. `curl --unix-socket PATH http://x/`. The same path for the same port;
        close=True removes it. Each connection is audited."""
        if not 1 <= port <= 65535:
            raise ValueError(f"{port} is not a port number")
        with self._connect() as sock:
            sock.sendall(
                _wire.encode_request(_wire.PORT_CLOSE if close else _wire.PORT, value=port)
            )
            reply = self._recv(sock)
        if reply is None or reply.type != _wire.REPLY_PORT:
            raise SessionError(reply.text if reply else "the session did not answer")
        return reply.text

    def allow(self, host: str) -> PolicyChange:
        """Lets the session's proxy through to HOST ([network] rule syntax: pypi.org:443,
        *.example.com, 10.0.0.0/8) from now on, when the profile's `[network] grantable` covers
        it; PolicyError (errno EPERM) when it does not. Audited."""
        return self._change(_wire.POLICY_ALLOW, host)

    def deny(self, host: str) -> PolicyChange:
        """Refuses HOST's new connections from now on (any host: narrowing needs no grant);
        connections open already go on. Audited."""
        return self._change(_wire.POLICY_DENY, host)

    def http_rule(self, rule: str, *, deny: bool = False) -> PolicyChange:
        """Adds an [http] rule, `METHOD HOST/PATH-GLOB`: an allow one within the profile's
        `[http] grantable`, a deny one at will. Decides each request from now on."""
        return self._change(_wire.POLICY_HTTP_DENY if deny else _wire.POLICY_HTTP_ALLOW, rule)

    def questions(self) -> Asker:
        """Subscribes this client to the session's questions (one client at a time): iterate
        the Asker for them and answer each (once, run, deny). Connections wait at most the
        profile's `[network] ask-timeout` (default 10 s); unanswered, they are refused."""
        sock = self._connect()
        try:
            sock.sendall(_wire.encode_request(_wire.ASK))
        except OSError:
            sock.close()
            raise
        return Asker(sock)

    def ask(self, callback: Callable[[Question], Optional[str]]) -> AskThread:
        """Answers the session's questions with callback(question) -> "once" | "run" |
        "deny" | None, on a thread of its own, until stop() (or the block of a `with`)."""
        return AskThread(self.questions(), callback)

    def _change(self, op: int, rule: str) -> PolicyChange:
        with self._connect() as sock:
            sock.sendall(_wire.encode_request(_wire.POLICY, argv=[rule], value=op))
            reply = self._recv(sock)
        if reply is not None and reply.type == _wire.REPLY_ERROR:
            raise PolicyError(reply.text, errno=reply.value)
        if reply is None or reply.type != _wire.REPLY_POLICY:
            raise SessionError("the session did not answer the change")
        return PolicyChange.from_json(json.loads(reply.data))

    def exec(
        self,
        command: Sequence[Union[str, bytes]],
        *,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        input: Optional[bytes] = None,
        stdin: Stream = None,
        stdout: Stream = subprocess.PIPE,
        stderr: Stream = subprocess.PIPE,
    ) -> Result:
        """Runs COMMAND in the session, no process started on this side. stdin is /dev/null
        unless `input` or `stdin` (a file or fd) is given; stdout and stderr are captured
        unless given. A terminal is refused: what the command leaves running would keep it
        (the agentbox exec command gives a command a pty of its own instead). `env` adds to
        the session's environment. Exits, signals and timeouts are Results; StartError when
        the command could not start, SessionError when the session refused it or ended."""
        request = _wire.encode_request(
            _wire.EXEC,
            argv=list(command),
            env=[f"{k}={v}" for k, v in (env or {}).items()],
            cwd=cwd,
            timeout_ms=timeout_ms(timeout) if timeout is not None else 0,
        )
        with _Stdio(input, stdin, stdout, stderr) as io, self._connect() as sock:
            sock.sendmsg(
                [request],
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", io.theirs))],
            )
            io.sent()
            return self._wait(sock, io)

    def changes(self, *paths: Path) -> Review:
        return review("changes", self._id(), paths, binary_path=self.binary)

    def diff(self, *paths: Path, max_bytes: Optional[int] = None) -> Review:
        extra = ["--max-bytes", str(max_bytes)] if max_bytes is not None else []
        return review("diff", self._id(), paths, extra, binary_path=self.binary)

    def promote(self, *paths: Path) -> Review:
        """Applies the pending changes at or below PATHS (all without) to the host."""
        return review("promote", self._id(), paths, binary_path=self.binary)

    def discard(self) -> Review:
        """Throws away every pending change (the ones not promoted): the run is done."""
        return review("discard", self._id(), (), binary_path=self.binary)

    def _id(self) -> str:
        if self.id is None:
            raise SessionError("the session was not started")
        return self.id

    def _connect(self) -> socket.socket:
        if not self.live or self.socket_path is None:
            raise SessionError("the session is not running", cause="session-ended")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        try:
            sock.connect(self.socket_path)
        except OSError as err:
            sock.close()
            raise SessionError(
                f"cannot reach the session at {self.socket_path}: {err.strerror}",
                cause="session-ended",
            ) from None
        return sock

    @staticmethod
    def _recv(sock: socket.socket) -> Optional[_wire.Reply]:
        data = sock.recv(_wire.MAX_REPLY)
        return _wire.decode_reply(data) if data else None

    def _wait(self, sock: socket.socket, io: "_Stdio") -> Result:
        with selectors.DefaultSelector() as sel:
            sel.register(sock, selectors.EVENT_READ)
            io.register(sel)
            return self._replies(sel, sock, io)

    def _replies(self, sel: selectors.BaseSelector, sock: socket.socket, io: "_Stdio") -> Result:
        started, result, notes = False, None, []
        while True:
            for key, _ in sel.select(io.wait_time()):
                if key.fileobj is not sock:
                    io.step(key)
                    continue
                reply = self._recv(sock)
                if reply is None:
                    sel.unregister(sock)
                    raise SessionError(
                        "the session ended before telling the command's status",
                        cause="session-ended" if started else None,
                    )
                if reply.type == _wire.REPLY_ERROR:
                    raise SessionError(f"the session refused the command: {reply.text}")
                if reply.type == _wire.REPLY_STARTED:
                    started = True
                elif reply.type == _wire.REPLY_NOTE:
                    notes.append(reply.text)
                elif reply.type == _wire.REPLY_RESULT:
                    result = json.loads(reply.text)
                elif reply.type == _wire.REPLY_EXIT:
                    sel.unregister(sock)
                    io.exited()
                    return _finish(reply, result, io.drain(), tuple(notes))


def _finish(
    exit_reply: _wire.Reply,
    obj: Optional[Dict[str, Any]],
    output: Tuple[Optional[bytes], Optional[bytes]],
    notes: Tuple[str, ...],
) -> Result:
    if obj is None:  # a supervisor that predates results: the status and cause alone
        obj = {"v": 1, "status": exit_reply.value, "cause": exit_reply.text}
    result = Result.from_json(obj, stdout=output[0], stderr=output[1], notes=notes)
    if result.cause == "start-error":
        raise StartError(result.error or "", cause=result.cause, status=result.status,
                         result=result)
    if result.cause in ("setup-error", "session-ended"):
        raise SessionError(result.error or f"the exec ended: {result.cause}",
                           cause=result.cause, status=result.status, result=result)
    return result


class _Stdio:
    """The exec's three fds: theirs (what the session is sent) and ours (the pipe ends this
    side feeds and reads), all closed on every way out."""

    def __init__(self, input: Optional[bytes], stdin: Stream, stdout: Stream,
                 stderr: Stream) -> None:
        self.theirs: List[int] = []
        self.close_after_send: List[int] = []
        self.ours: Dict[int, str] = {}
        self.captured: Dict[str, List[bytes]] = {}
        self.to_write = memoryview(input or b"")
        self.drain_until: Optional[float] = None
        self.sel: Optional[selectors.BaseSelector] = None
        try:
            if input is not None:
                self._pipe("stdin", reading=False)
            elif stdin is None:
                null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
                self.close_after_send.append(null)
                self.theirs.append(null)
            else:
                self._given(stdin)
            for name, default, given in (("stdout", 1, stdout), ("stderr", 2, stderr)):
                if given == subprocess.PIPE:
                    self._pipe(name, reading=True)
                else:
                    self._given(default if given is None else given)
        except BaseException:
            self.close()
            raise

    def _pipe(self, name: str, reading: bool) -> None:
        r, w = os.pipe2(os.O_CLOEXEC)
        ours, theirs = (r, w) if reading else (w, r)
        self.ours[ours] = name
        self.close_after_send.append(theirs)
        self.theirs.append(theirs)
        os.set_blocking(ours, False)
        if reading:
            self.captured[name] = []

    def _given(self, stream: Any) -> None:
        fd = stream if isinstance(stream, int) else stream.fileno()
        if os.isatty(fd):
            raise ValueError("a terminal cannot be an exec's stdio here: use the agentbox "
                             "exec command, which gives the command a pty of its own")
        self.theirs.append(fd)

    def __enter__(self) -> "_Stdio":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def sent(self) -> None:
        """The session holds its own copies now: ours of their ends go, so EOF can come."""
        for fd in self.close_after_send:
            os.close(fd)
        self.close_after_send = []

    def register(self, sel: selectors.BaseSelector) -> None:
        self.sel = sel
        for fd, name in self.ours.items():
            sel.register(fd, selectors.EVENT_WRITE if name == "stdin" else selectors.EVENT_READ)

    def step(self, key: selectors.SelectorKey) -> None:
        """Feeds stdin or reads an output as far as it goes without blocking."""
        fd, name = key.fd, self.ours[key.fd]
        try:
            if name == "stdin":
                self.to_write = self.to_write[os.write(fd, self.to_write[:65536]):]
                if self.to_write:
                    return
            else:
                chunk = os.read(fd, 65536)
                if chunk:
                    self.captured[name].append(chunk)
                    return
        except BlockingIOError:
            return
        except BrokenPipeError:  # the command closed its stdin: the rest is not read
            pass
        if self.sel is not None:
            self.sel.unregister(fd)
        os.close(fd)
        del self.ours[fd]

    def wait_time(self) -> Optional[float]:
        if self.drain_until is None:
            return None
        return max(0.0, self.drain_until - time.monotonic())

    def exited(self) -> None:
        self.drain_until = time.monotonic() + DRAIN_AFTER_EXIT

    def drain(self) -> Tuple[Optional[bytes], Optional[bytes]]:
        """What the outputs hold until their EOF or the drain's end."""
        while self.sel is not None and any(n != "stdin" for n in self.ours.values()):
            left = self.wait_time()
            if left is not None and left <= 0:
                break
            for key, _ in self.sel.select(left):
                self.step(key)
        return self._output("stdout"), self._output("stderr")

    def _output(self, name: str) -> Optional[bytes]:
        chunks = self.captured.get(name)
        return None if chunks is None else b"".join(chunks)

    def close(self) -> None:
        for fd in self.close_after_send + list(self.ours):
            os.close(fd)
        self.close_after_send, self.ours = [], {}

# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""A session's ask hook (docs/sessions.md, "Asked about a connection"): a connection the rules
refused to a host the profile's `[network] grantable` covers waits while the one client asked
answers once (this connection and those waiting with it), run (the host and port allowed for
the rest of the session) or deny. No answer in time denies; this client going away denies every
open question at once."""
from __future__ import annotations

import collections
import json
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, Iterator, Mapping, Optional

from . import _wire
from ._types import PolicyError, SessionError

ANSWERS = _wire.ANSWERS


@dataclass(frozen=True)
class Question:
    """One connection (and those to the same host and port while it is open) held for an
    answer: `host` as the rules compare it, `port`, the `exec` whose process connected (its
    number, "session" for a process no exec holds, None when not placed), the `protocol` it came
    by, the profile's `grant` that covers it, and how long it waits (`timeout_ms`)."""

    id: int
    host: str
    port: int
    exec: Any
    protocol: str
    grant: str
    timeout_ms: int
    raw: Mapping[str, Any] = field(default_factory=dict)
    _asker: Optional["Asker"] = field(default=None, repr=False, compare=False)

    def answer(self, answer: str) -> int:
        """once, run or deny: the number of connections it settled. PolicyError when the
        question is no longer open (past its time, or decided by a change of the rules)."""
        if self._asker is None:
            raise SessionError("this question came from no session")
        return self._asker.answer(self.id, answer)


class Asker:
    """The session's one asked client, over a connection of its own. Iterate it for the
    questions, in the order they come; answer each with Question.answer, from the same thread.
    close() (from any thread, or leaving a `with` block) ends the subscription: the open
    questions are denied."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._queue: Deque[_wire.Reply] = collections.deque()
        self.settled: Dict[int, str] = {}  # how each question ended: an answer, timeout, rule
        self.closed = False
        reply = self._read()
        if reply is None or reply.type != _wire.REPLY_ASKING:
            sock.close()
            self.closed = True
            if reply is not None and reply.type == _wire.REPLY_ERROR:
                raise PolicyError(reply.text, errno=reply.value)
            raise SessionError("the session did not take the subscription")
        self.timeout_ms = reply.value

    def __enter__(self) -> "Asker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> Iterator[Question]:
        while True:
            q = self.next()
            if q is None:
                return
            yield q

    def next(self, timeout: Optional[float] = None) -> Optional[Question]:
        """The next question; None when the session ended or the subscription was closed
        (`closed` is then true), or (with a timeout, in seconds) when none came in time."""
        while True:
            reply = self._take(timeout)
            if reply is None:
                return None
            if reply.type == _wire.REPLY_QUESTION:
                obj = json.loads(reply.data)
                return Question(
                    id=reply.id,
                    host=str(obj["host"]),
                    port=int(obj["port"]),
                    exec=obj.get("exec"),
                    protocol=str(obj["protocol"]),
                    grant=str(obj["grant"]),
                    timeout_ms=int(obj["timeout_ms"]),
                    raw=obj,
                    _asker=self,
                )
            self._note(reply)

    def answer(self, question: int, answer: str) -> int:
        if answer not in ANSWERS:
            raise ValueError(f"an answer is one of {', '.join(ANSWERS)}, not {answer!r}")
        self._sock.sendall(_wire.encode_request(_wire.ANSWER, argv=[answer], value=question))
        # its reply comes among the frames of other questions: those wait in the queue
        held = []
        try:
            while True:
                reply = self._read()
                if reply is None:
                    raise SessionError("the session ended before the answer was taken",
                                       cause="session-ended")
                if reply.id == question and reply.type == _wire.REPLY_ERROR:
                    raise PolicyError(reply.text, errno=reply.value)
                if (reply.id == question and reply.type == _wire.REPLY_SETTLED
                        and reply.text == answer):
                    self.settled[question] = answer
                    return reply.value
                self._note(reply)
                if reply.type == _wire.REPLY_QUESTION:
                    held.append(reply)
        finally:
            self._queue.extend(held)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()

    def _note(self, reply: _wire.Reply) -> None:
        if reply.type == _wire.REPLY_SETTLED:
            self.settled[reply.id] = reply.text

    def _take(self, timeout: Optional[float]) -> Optional[_wire.Reply]:
        if self._queue:
            return self._queue.popleft()
        if self.closed:
            return None
        self._sock.settimeout(timeout)
        try:
            reply = self._read()
            if reply is None:  # the session ended
                self.close()
            return reply
        except socket.timeout:
            return None
        except OSError:
            if self.closed:
                return None
            raise
        finally:
            if not self.closed:
                self._sock.settimeout(None)

    def _read(self) -> Optional[_wire.Reply]:
        data = self._sock.recv(_wire.MAX_REPLY)
        return _wire.decode_reply(data) if data else None


class AskThread:
    """Session.ask(callback): the questions answered by callback(question) on a thread of its
    own, each with what it returns (once, run, deny; None leaves it to its timeout; an
    exception denies it). stop() ends the subscription."""

    def __init__(self, asker: Asker, callback: Callable[[Question], Optional[str]]) -> None:
        self.asker = asker
        self.callback = callback
        self.errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, name="agentbox-ask", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for q in self.asker:
                try:
                    answer = self.callback(q)
                except Exception as err:  # the harness's bug must not allow anything
                    self.errors.append(err)
                    answer = "deny"
                if answer is not None:
                    try:
                        q.answer(answer)
                    except PolicyError:
                        pass  # past its time meanwhile: denied already
        except (OSError, SessionError) as err:
            if not self.asker.closed:
                self.errors.append(err)

    def stop(self) -> None:
        self.asker.close()
        self._thread.join(5)

    def __enter__(self) -> "AskThread":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

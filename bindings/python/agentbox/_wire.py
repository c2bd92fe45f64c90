# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""A session's control socket, protocol version 1 (docs/sessions.md, "The control socket").

Every message is one SOCK_SEQPACKET datagram in the host's byte order. Client to supervisor: a
frame (ignored by the supervisor: zeros) followed by a request, whose header starts with the
magic "ABX1"; an exec request carries the command's stdin, stdout and stderr by SCM_RIGHTS.
Supervisor to client: a frame (type, value, id, a NUL-terminated text), for INFO, POLICY and
QUESTION followed by a JSON object.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

FRAME = struct.Struct("=iiI1024s")  # type, value, id, text
HEADER = struct.Struct("=IIiIQII")  # magic, kind, value, has_cwd, timeout_ms, argc, envc
MAGIC = 0x41425831  # "ABX1": the protocol's version is its last character
MAX_REQUEST = 128 * 1024
MAX_REPLY = FRAME.size + 64 * 1024

EXEC, STOP, INFO, SIGNAL, PORT, PORT_CLOSE, POLICY, ASK, ANSWER = range(1, 10)
(
    REPLY_STARTED,
    REPLY_EXIT,
    REPLY_ERROR,
    REPLY_INFO,
    REPLY_STOPPED,
    REPLY_RESULT,
    REPLY_NOTE,
    REPLY_PORT,
    REPLY_POLICY,
    REPLY_ASKING,
    REPLY_QUESTION,
    REPLY_SETTLED,
) = range(100, 112)

# POLICY's value: the change
POLICY_ALLOW, POLICY_DENY, POLICY_HTTP_ALLOW, POLICY_HTTP_DENY = 1, 2, 3, 4
ANSWERS = ("once", "run", "deny")

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Reply:
    type: int
    value: int
    id: int
    text: str
    data: bytes = b""


def _strings(items: Iterable[str | bytes], what: str) -> bytes:
    out = bytearray()
    for s in items:
        b = s.encode() if isinstance(s, str) else bytes(s)
        if b"\0" in b:
            raise ValueError(f"{what} holds a NUL byte: {s!r}")
        out += b + b"\0"
    return bytes(out)


def encode_request(
    kind: int,
    argv: Sequence[str | bytes] = (),
    env: Sequence[str] = (),
    cwd: Optional[str] = None,
    timeout_ms: int = 0,
    value: int = 0,
) -> bytes:
    """A frame and a request, ready for sendmsg; ValueError for what the supervisor refuses."""
    for entry in env:
        name, eq, _ = entry.partition("=")
        if not eq or not _ENV_NAME.match(name):
            raise ValueError(f"an environment entry is not NAME=VALUE: {entry!r}")
    if kind == EXEC and not argv:
        raise ValueError("an exec needs a command")
    if kind in (POLICY, ANSWER) and (len(argv) != 1 or not argv[0]):
        raise ValueError("a change of the rules and an answer take one argument")
    if kind == ANSWER and argv[0] not in ANSWERS:
        raise ValueError(f"an answer is one of {', '.join(ANSWERS)}, not {argv[0]!r}")
    if cwd is not None and not cwd:
        raise ValueError("cwd is empty")
    if timeout_ms < 0:
        raise ValueError("timeout is negative")
    body = (_strings([cwd], "cwd") if cwd is not None else b"") + _strings(argv, "the command")
    body += _strings(env, "the environment")
    head = HEADER.pack(MAGIC, kind, value, cwd is not None, timeout_ms, len(argv), len(env))
    if len(head) + len(body) > MAX_REQUEST:
        raise ValueError(
            f"the command, its environment and cwd take {len(head) + len(body)} bytes; "
            f"a session's request holds at most {MAX_REQUEST}"
        )
    return bytes(FRAME.size) + head + body


def decode_reply(data: bytes) -> Reply:
    if len(data) < FRAME.size:
        raise ValueError(f"a reply of {len(data)} bytes: a frame is {FRAME.size}")
    kind, value, ident, text = FRAME.unpack_from(data)
    text = text.split(b"\0", 1)[0].decode("utf-8", "replace")
    return Reply(kind, value, ident, text, bytes(data[FRAME.size :]))

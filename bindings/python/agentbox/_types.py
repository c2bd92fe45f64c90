# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""What a run, an exec and a review give back, and the errors agentbox's side can raise."""
from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple


@dataclass(frozen=True)
class Result:
    """How a run or an exec ended: the `--result` object (docs/harness.md), typed.

    `status` is agentbox's exit status; read `cause` (exited, signaled, timeout, ...) rather than
    decoding it. `stdout` and `stderr` are what was captured (None when not captured); `notes`
    the lines agentbox said about the exec (a client that refused the run's certificate)."""

    status: int
    cause: str
    code: Optional[int] = None
    signal: Optional[int] = None
    limit: Optional[str] = None
    duration_ms: Optional[int] = None
    denials: Dict[str, int] = field(default_factory=dict)
    session_denials: Optional[Dict[str, int]] = None
    run: Optional[str] = None
    exec: Optional[int] = None
    error: Optional[str] = None
    stdout: Optional[bytes] = None
    stderr: Optional[bytes] = None
    notes: Tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """The command ran and exited 0."""
        return self.cause == "exited" and self.code == 0

    @classmethod
    def from_json(
        cls,
        obj: Mapping[str, Any],
        stdout: Optional[bytes] = None,
        stderr: Optional[bytes] = None,
        notes: Tuple[str, ...] = (),
    ) -> "Result":
        if obj.get("v") != 1:
            raise AgentboxError(f"a result of version {obj.get('v')!r}: this package reads 1")
        return cls(
            status=int(obj["status"]),
            cause=str(obj["cause"]),
            code=obj.get("code"),
            signal=obj.get("signal"),
            limit=obj.get("limit"),
            duration_ms=obj.get("duration_ms"),
            denials=dict(obj.get("denials") or {}),
            session_denials=obj.get("session_denials"),
            run=obj.get("run"),
            exec=obj.get("exec"),
            error=obj.get("error"),
            stdout=stdout,
            stderr=stderr,
            notes=notes,
            raw=dict(obj),
        )


def _exact(obj: Mapping[str, Any], key: str) -> Optional[bytes]:
    """A file name's exact bytes: KEY_b64 when the name is not UTF-8, else KEY encoded."""
    if obj.get(key + "_b64") is not None:
        return base64.b64decode(obj[key + "_b64"])
    value = obj.get(key)
    return None if value is None else os.fsencode(value)


@dataclass(frozen=True)
class Change:
    """One change of an overlay run (docs/sessions.md, "Review as data")."""

    path: str
    rel: str
    root: str
    kind: str
    type: str
    promoted: bool
    conflict: bool
    refused: Optional[str] = None
    result: Optional[str] = None
    diff: Optional[str] = None
    note: Optional[str] = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def path_bytes(self) -> bytes:
        """The host path's exact bytes: what to give promote or discard for this change."""
        exact = _exact(self.raw, "path")
        assert exact is not None
        return exact

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Change":
        return cls(
            path=obj["path"],
            rel=obj["rel"],
            root=obj["root"],
            kind=obj["kind"],
            type=obj["type"],
            promoted=bool(obj.get("promoted")),
            conflict=bool(obj.get("conflict")),
            refused=obj.get("refused"),
            result=obj.get("result"),
            diff=obj.get("diff"),
            note=obj.get("note"),
            raw=dict(obj),
        )


@dataclass(frozen=True)
class Review:
    """The document of changes, diff, promote or discard --json. `status` is ok, or conflict
    for a promote a conflict held (nothing of it written); an error raises ReviewError."""

    command: str
    run: str
    status: str
    changes: List[Change]
    counts: Mapping[str, int]
    results: Mapping[str, int]
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def pending(self) -> List[Change]:
        return [c for c in self.changes if not c.promoted]

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Review":
        return cls(
            command=obj["command"],
            run=obj.get("run", ""),
            status=obj["status"],
            changes=[Change.from_json(c) for c in obj.get("changes") or []],
            counts=dict(obj.get("counts") or {}),
            results=dict(obj.get("results") or {}),
            raw=dict(obj),
        )


@dataclass(frozen=True)
class PolicyChange:
    """A change of a running session's rules (docs/sessions.md, "Live policy"): `action`
    (allow, deny, http-allow, http-deny), the `rule` as the session keeps it, `changed` (False:
    it was in force already), `grant` (the profile's grantable rule that let an allow through)
    and `removed` (rules added earlier that this one lifted or withdrew)."""

    action: str
    rule: str
    changed: bool
    grant: Optional[str] = None
    removed: Tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "PolicyChange":
        return cls(
            action=str(obj["action"]),
            rule=str(obj["rule"]),
            changed=obj.get("outcome") == "applied",
            grant=obj.get("grant"),
            removed=tuple(obj.get("removed") or ()),
            raw=dict(obj),
        )


class AgentboxError(Exception):
    """agentbox's side failed. `cause` names how (the --result causes where one applies:
    setup-error, start-error, session-ended); `result` is the Result when one came."""

    def __init__(
        self,
        message: str,
        *,
        cause: Optional[str] = None,
        status: Optional[int] = None,
        result: Optional[Result] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        self.status = status
        self.result = result


class SetupError(AgentboxError):
    """The sandbox or session could not be set up: nothing ran (exit 125)."""


class StartError(AgentboxError):
    """The session could not start the command: its cwd, not found (127), not executable
    (126). Nothing of the command ran."""


class SessionError(AgentboxError):
    """The session refused the request, or is gone; cause session-ended when it ended while
    the command ran."""


class PolicyError(SessionError):
    """The session refused a change of its rules or an answer: beyond what the profile grants
    (`errno` EPERM), not a rule (EINVAL), past a bound (ENOSPC), a question no longer open
    (ESRCH), another client asked already (EBUSY)."""

    def __init__(self, message: str, *, errno: int = 0) -> None:
        super().__init__(message, cause="refused")
        self.errno = errno


class ReviewError(AgentboxError):
    """changes, diff, promote or discard failed (status error)."""

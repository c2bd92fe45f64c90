# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""agentbox from Python: sandboxed runs, sessions, and the review of their changes.

    import agentbox
    r = agentbox.run(["python3", "gen.py"], profile="python", timeout=60)
    with agentbox.Session("python", overlay=["."]) as s:
        s.exec(["make", "test"])
        s.allow("pypi.org:443")          # within the profile's [network] grantable
    review = s.changes()

Standard library only; it runs the agentbox binary (AGENTBOX_BINARY, or agentbox on PATH) and
talks to a session's control socket directly, so an exec starts no process on this side.
docs/harness.md says what a result holds, docs/sessions.md the control socket's protocol.
"""
from ._ask import Asker, AskThread, Question
from ._run import binary, run
from ._session import Session
from ._types import (
    AgentboxError,
    Change,
    PolicyChange,
    PolicyError,
    Result,
    Review,
    ReviewError,
    SessionError,
    SetupError,
    StartError,
)

__all__ = [
    "AgentboxError",
    "AskThread",
    "Asker",
    "Change",
    "PolicyChange",
    "PolicyError",
    "Question",
    "Result",
    "Review",
    "ReviewError",
    "Session",
    "SessionError",
    "SetupError",
    "StartError",
    "binary",
    "run",
]
__version__ = "0.1.0"

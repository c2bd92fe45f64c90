# SPDX-License-Identifier: LicenseRef-agentbox-unlicensed
"""The agentbox binary, and one-shot runs of it: a sandboxed command, a review command."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Union

from ._types import AgentboxError, Result, ReviewError, Review, SetupError

Path = Union[str, bytes, "os.PathLike[str]"]
Stream = Union[int, IO[Any], None]


def binary(path: Optional[str] = None) -> str:
    """The agentbox to run: PATH given, else $AGENTBOX_BINARY, else agentbox on $PATH."""
    found = path or os.environ.get("AGENTBOX_BINARY") or shutil.which("agentbox")
    if not found:
        raise AgentboxError(
            "agentbox is not on PATH: install it (cmake --install build) or pass binary= "
            "(or set AGENTBOX_BINARY) to the built one"
        )
    return found


def timeout_ms(seconds: float) -> int:
    """A timeout in seconds in whole milliseconds, at least 1."""
    if seconds <= 0:
        raise ValueError("a timeout must be positive")
    return max(1, round(seconds * 1000))


def last_line(data: Optional[bytes]) -> str:
    """agentbox's own line among what stderr holds (it starts with 'agentbox: '), else the
    last line."""
    lines = (data or b"").decode("utf-8", "replace").splitlines()
    ours = [line for line in lines if line.startswith("agentbox: ")]
    return (ours or lines or [""])[-1]


def read_all(fd: int) -> bytes:
    chunks: List[bytes] = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def run(
    command: Sequence[Union[str, bytes]],
    *,
    profile: str,
    overlay: Sequence[Path] = (),
    options: Sequence[str] = (),
    timeout: Optional[float] = None,
    cwd: Optional[Path] = None,
    env: Optional[Mapping[str, str]] = None,
    input: Optional[bytes] = None,
    stdout: Stream = subprocess.PIPE,
    stderr: Stream = subprocess.PIPE,
    binary_path: Optional[str] = None,
) -> Result:
    """Runs COMMAND in a sandbox of PROFILE and returns how it ended.

    `options` are more of agentbox's options (`["--net", "proxy", "--allow", "pypi.org"]`);
    `overlay` paths are shown writable with every change kept aside (`Result.raw["changes"]`
    is where). stdout and stderr are captured unless given (a file, an fd, or None for this
    process's own); agentbox's own lines on stderr start with `agentbox: `. `env` is the
    environment agentbox starts with (the profile's `[env]` decides what the command sees).
    A command that exits non-zero, is killed or times out is a Result; SetupError when the
    sandbox could not be made (nothing ran)."""
    if not command:
        raise ValueError("no command given")
    argv: List[Union[str, bytes]] = [binary(binary_path), "-p", profile]
    for path in overlay:
        argv += ["--overlay", os.fsdecode(path)]
    if timeout is not None:
        argv += ["--timeout", f"{timeout_ms(timeout)}ms"]
    r, w = os.pipe2(os.O_CLOEXEC)
    try:
        argv += ["--result", f"fd:{w}", *options, "--", *command]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            pass_fds=(w,),
        )
        os.close(w)
        w = -1
        out, err = proc.communicate(input)
        text = read_all(r)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    if not text.strip():
        raise AgentboxError(
            f"agentbox ended (status {proc.returncode}) without saying how the run went: "
            f"{last_line(err) or 'no message'}",
            status=proc.returncode,
        )
    result = Result.from_json(json.loads(text), stdout=out, stderr=err)
    if result.cause == "setup-error":
        raise SetupError(
            result.error or last_line(err), cause=result.cause, status=result.status, result=result
        )
    return result


def review(
    command: str,
    run_id: str,
    paths: Sequence[Path],
    extra: Sequence[str] = (),
    binary_path: Optional[str] = None,
) -> Review:
    """changes, diff, promote or discard --json of a run (an id or a changes directory)."""
    argv: List[Union[str, bytes]] = [binary(binary_path), command, "--json", *extra, run_id]
    argv += [os.fsencode(p) for p in paths]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True)
    try:
        doc: Dict[str, Any] = json.loads(proc.stdout)
    except ValueError:
        raise ReviewError(
            f"agentbox {command}: {last_line(proc.stderr) or 'no document'}",
            status=proc.returncode,
        ) from None
    if doc.get("status") == "error":
        raise ReviewError(doc.get("error") or last_line(proc.stderr), status=proc.returncode)
    return Review.from_json(doc)

"""`fsbm trace record`: run a command under strace with the flags the parser wants.

-f follows children, -ttt gives epoch timestamps (so per-process logs merge), -T gives
each call's duration, -y resolves descriptors to paths (the parser then need not infer
them).  Only the syscall classes that touch files or processes are traced, and with
--seccomp-bpf the others do not stop the program at all, which keeps strace's overhead
(and its distortion of the program's own time) down.

Tracing still costs tens of microseconds per traced call here, far more than most of the
calls themselves, so the traced wall time is no measure of the program's own.  The command
therefore runs under fsrusage (traces/native/fsrusage.c), which writes the CPU time the
program's process tree used beside the log (LOG.recording.json); `trace parse` carries it
into the event table and the predictor takes the time outside the filesystem from it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbm.errors import FsbmError, UsageError
from fsbm.locations import native_binary
from fsbm.microbench.system import require_program

STRACE_FLAGS = ["-f", "--seccomp-bpf", "-ttt", "-T", "-y", "-q", "-s", "64",
                "-e", "trace=%file,%desc,%process,%memory"]
RECORDING_SUFFIX = ".recording.json"


def recording_path(log: Path) -> Path:
    """Where the recording facts of a log are kept: beside it."""
    return Path(log).with_name(Path(log).name + RECORDING_SUFFIX)


def read_recording(log: Path) -> dict[str, Any] | None:
    """The facts `record` kept beside a log, or None for a log recorded some other way."""
    path = recording_path(log)
    if not path.exists():
        return None
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} is not a readable recording file: {exc}") from exc
    if not isinstance(body, dict) or not isinstance(body.get("user_cpu_ns"), int):
        raise UsageError(f"{path} is not an fsbm recording file (no user_cpu_ns)")
    return body


@dataclass
class Recording:
    log: Path
    returncode: int
    wall_seconds: float
    facts: dict[str, Any]


def record(command: list[str], log: Path, *, force: bool = False, cwd: Path | None = None,
           scope: Path | None = None, quiet: bool = False) -> Recording:
    """Run `command` under strace, writing the log to `log` and its recording facts beside
    it; the command's exit status is returned.  `scope`, kept with the facts, is the
    directory the workload's files live in: the characterizer's default scope.  `quiet`
    sends the command's standard output to /dev/null."""
    if not command:
        raise UsageError("give the command to trace after --, e.g. fsbm trace record -o t.log -- make")
    log = Path(log)
    facts_path = recording_path(log)
    for path in (log, facts_path):
        if path.exists() and not force:
            raise UsageError(f"{path} exists; choose another name or pass --force")
    facts_path.unlink(missing_ok=True)
    strace = require_program("strace", "strace")
    rusage = native_binary("fsrusage", Path(__file__).parent)
    started = time.monotonic()
    try:
        done = subprocess.run([strace, *STRACE_FLAGS, "-o", str(log), "--",
                               str(rusage), "--output", str(facts_path.resolve()), "--", *command], cwd=cwd,
                              stdout=subprocess.DEVNULL if quiet else None)
    except OSError as exc:
        raise FsbmError(f"cannot run strace: {exc.strerror}") from exc
    wall = time.monotonic() - started
    if not log.exists():
        raise FsbmError(f"strace wrote no log (exit {done.returncode}); could the command be started?")
    facts = read_recording(log)
    if facts is None:
        raise FsbmError(f"the command ran but {facts_path} was not written (exit {done.returncode})")
    facts.update({"command": command, "cwd": str(Path(cwd or os.getcwd()).resolve()), "traced_wall_ns": int(wall * 1e9),
                  "strace_flags": STRACE_FLAGS, "scope": str(Path(scope).resolve()) if scope else None})
    facts_path.write_text(json.dumps(facts, indent=1))
    return Recording(log, done.returncode, wall, facts)

"""`fsbm trace record`: run a command under strace with the flags the parser wants.

-f follows children, -ttt gives epoch timestamps (so per-process logs merge), -T gives
each call's duration, -y resolves descriptors to paths (the parser then need not infer
them).  Only the syscall classes that touch files or processes are traced, which keeps
strace's overhead (and its distortion of the program's own time) down.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from fsbm.errors import FsbmError, UsageError
from fsbm.microbench.system import require_program

STRACE_FLAGS = ["-f", "-ttt", "-T", "-y", "-q", "-s", "64", "-e", "trace=%file,%desc,%process,%memory"]


@dataclass
class Recording:
    log: Path
    returncode: int
    wall_seconds: float


def record(command: list[str], log: Path, *, force: bool = False, cwd: Path | None = None) -> Recording:
    """Run `command` under strace, writing the log to `log`; the command's exit status is returned."""
    if not command:
        raise UsageError("give the command to trace after --, e.g. fsbm trace record -o t.log -- make")
    log = Path(log)
    if log.exists() and not force:
        raise UsageError(f"{log} exists; choose another name or pass --force")
    strace = require_program("strace", "strace")
    started = time.monotonic()
    try:
        done = subprocess.run([strace, *STRACE_FLAGS, "-o", str(log), "--", *command], cwd=cwd)
    except OSError as exc:
        raise FsbmError(f"cannot run strace: {exc.strerror}") from exc
    if not log.exists():
        raise FsbmError(f"strace wrote no log (exit {done.returncode}); could the command be started?")
    return Recording(log, done.returncode, time.monotonic() - started)

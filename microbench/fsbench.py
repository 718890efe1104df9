"""Drive the native fsbench binary: options in, one JSON document out, progress as it runs.

fsbench reports progress on a pipe of its own (``--progress-fd``) so its stderr stays
for errors.  Ctrl-C reaches fsbench too (same process group); it finishes the operation
in flight and writes what it measured, which is kept and marked interrupted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbm.errors import FsbmError, Terminated, UsageError
from fsbm.locations import native_binary

ProgressCallback = Callable[[int, int, str], None]


def fsbench_binary() -> Path:
    """The built fsbench: $FSBM_FSBENCH, the package's bin/, or PATH."""
    return native_binary("fsbench", Path(__file__).parent)


@dataclass
class FsbenchOptions:
    """What to run; None means fsbench's own default (which depends on `quick`)."""

    quick: bool = False
    only: str | None = None
    sizes: str | None = None
    orders: str | None = None
    caches: str | None = None
    reps: int | None = None
    ops: int | None = None
    files: int | None = None
    file_size: str | None = None
    warmup: int | None = None
    case_seconds: float | None = None
    min_rep_seconds: float | None = None
    block_size: int | None = None
    seed: int | None = None
    cpu: str | None = None
    data_file: str | None = None
    aging_state: str | None = None

    def arguments(self) -> list[str]:
        args = ["--quick"] if self.quick else []
        for name, value in vars(self).items():
            if name != "quick" and value is not None:
                args += ["--" + name.replace("_", "-"), str(value)]
        return args


def check_target(target: Path) -> Path:
    """Refuse, before anything runs, a target that is not a directory this user may write."""
    target = Path(target)
    if not target.exists():
        raise UsageError(f"target {target} does not exist")
    if not target.is_dir():
        raise UsageError(f"target {target} is not a directory")
    if not os.access(target, os.W_OK | os.X_OK):
        raise UsageError(f"target {target} is not a directory this user may write")
    return target


def _read_progress(fd: int, on_progress: ProgressCallback | None) -> None:
    with os.fdopen(fd, "r") as lines:
        for line in lines:
            parts = line.rstrip("\n").split(" ", 3)
            if on_progress and len(parts) == 4 and parts[0] == "progress":
                on_progress(int(parts[1]), int(parts[2]), parts[3])


def plan(target: Path, options: FsbenchOptions) -> tuple[list[str], str]:
    """fsbench --dry-run: the cases it would run and its time estimate line."""
    check_target(target)
    command = [str(fsbench_binary()), "--target", str(target), "--dry-run", *options.arguments()]
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode == 2:
        raise UsageError(done.stderr.strip().removeprefix("fsbench: ").splitlines()[0])
    if done.returncode != 0:
        raise FsbmError(f"fsbench --dry-run failed: {done.stderr.strip()}")
    return done.stdout.splitlines(), done.stderr.strip().removeprefix("fsbench: ")


def run_fsbench(target: Path, options: FsbenchOptions, *, on_progress: ProgressCallback | None = None) -> dict[str, Any]:
    """Run fsbench on `target`; returns its JSON document (possibly partial, see its flags)."""
    check_target(target)
    binary = fsbench_binary()
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryDirectory(prefix="fsbm-fsbench-") as tmp:
        out_path = Path(tmp) / "fsbench.json"
        command = [str(binary), "--target", str(target), "--json", str(out_path),
                   "--progress-fd", str(write_fd), *options.arguments()]
        reader = threading.Thread(target=_read_progress, args=(read_fd, on_progress), daemon=True)
        reader.start()
        try:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                    pass_fds=(write_fd,))
        finally:
            os.close(write_fd)
        try:
            _, stderr = proc.communicate()
        except (KeyboardInterrupt, Terminated):
            # Tell fsbench (it may not share our signal) to stop after the operation in
            # flight; it writes what it measured, which is kept and marked interrupted.
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate()
        reader.join(timeout=5)
        return _result(proc.returncode, stderr, out_path)


def _result(returncode: int, stderr: str, out_path: Path) -> dict[str, Any]:
    messages = [line.removeprefix("fsbench: ") for line in stderr.splitlines() if line.strip()]
    if returncode == 2:
        raise UsageError(messages[0] if messages else "fsbench rejected its arguments")
    if not out_path.is_file():
        detail = "; ".join(messages[-3:]) or f"exit {returncode}"
        raise FsbmError(f"fsbench failed and wrote no results: {detail}")
    try:
        doc: dict[str, Any] = json.loads(out_path.read_text())
    except ValueError as exc:
        raise FsbmError(f"fsbench wrote unreadable results ({exc})") from exc
    doc.setdefault("errors", [])
    doc["exit_code"] = returncode
    return doc

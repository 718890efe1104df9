"""Running a native tool (fsbench, fsreplay): progress lines on a pipe of their own, so
stderr stays for errors; Ctrl-C or SIGTERM passed on so the tool stops after the operation
in flight and writes what it has, which is kept; its JSON read back with clear errors.  If
fsbm itself dies, even by SIGKILL, which no handler sees, the kernel sends the tool SIGTERM:
no tool runs on orphaned."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fsbm.errors import FsbmError, Terminated, UsageError

PR_SET_PDEATHSIG = 1  # prctl(2)


def _dies_with(parent: int) -> Callable[[], None]:
    """For the child between fork and exec: SIGTERM when the thread that started it ends,
    and an exit now if `parent` has already gone (the signal would never come)."""
    def arm() -> None:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
        if os.getppid() != parent:
            os._exit(1)
    return arm


def run_with_progress(command: Callable[[int], list[str]], on_line: Callable[[str], None] | None) -> tuple[int, str]:
    """Run command(progress_fd); each line the tool writes on that descriptor goes to on_line."""
    read_fd, write_fd = os.pipe()

    def read_lines() -> None:
        with os.fdopen(read_fd, "r") as lines:
            for line in lines:
                if on_line:
                    on_line(line.rstrip("\n"))

    reader = threading.Thread(target=read_lines, daemon=True)
    reader.start()
    try:
        proc = subprocess.Popen(command(write_fd), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                pass_fds=(write_fd,), preexec_fn=_dies_with(os.getpid()))
    finally:
        os.close(write_fd)
    try:
        _, stderr = proc.communicate()
    except (KeyboardInterrupt, Terminated):
        # The tool may not share our signal: tell it to stop after the operation in flight.
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate()
    reader.join(timeout=5)
    return proc.returncode, stderr


def count_progress(on_progress: Callable[[int, int], None] | None) -> Callable[[str], None]:
    """A line handler for tools that report "DONE TOTAL" lines (fsreplay, fsage)."""
    def parse(line: str) -> None:
        done, _, total = line.partition(" ")
        if on_progress and done.isdigit() and total.isdigit():
            on_progress(int(done), int(total))
    return parse


def load_result(tool: str, returncode: int, stderr: str, out_path: Path) -> dict[str, Any]:
    """The tool's JSON document; exit 2 is a usage error, a missing document a failure."""
    messages = [line.removeprefix(f"{tool}: ") for line in stderr.splitlines() if line.strip()]
    if returncode == 2:
        raise UsageError(messages[0] if messages else f"{tool} rejected its arguments")
    if not out_path.is_file() or out_path.stat().st_size == 0:
        detail = "; ".join(messages[-3:]) or f"exit {returncode}"
        raise FsbmError(f"{tool} failed and wrote no results: {detail}")
    try:
        doc: dict[str, Any] = json.loads(out_path.read_text())
    except ValueError as exc:
        raise FsbmError(f"{tool} wrote unreadable results ({exc}): {'; '.join(messages[-3:])}") from exc
    doc.setdefault("errors", [])
    doc["warnings"] = messages
    doc["exit_code"] = returncode
    return doc

"""A memory cgroup for one measurement: the page cache it may use is pinned to a size, so
a probe of the cache has a known answer and does not need a file larger than the machine's
memory (DESIGN: the page-cache size can be pinned with a cgroup memory limit)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fsbm.errors import FsbmError

V1_MEMORY = Path("/sys/fs/cgroup/memory")
V2_ROOT = Path("/sys/fs/cgroup")


@contextmanager
def memory_cgroup(limit_bytes: int) -> Iterator[Path]:
    """A fresh memory cgroup (v1 or v2) limited to `limit_bytes`, removed afterwards with the
    page cache charged to it.  A process joins by writing its pid to cgroup.procs."""
    if V1_MEMORY.is_dir():
        base, limit_file = V1_MEMORY, "memory.limit_in_bytes"
    elif (V2_ROOT / "cgroup.controllers").exists() and "memory" in (V2_ROOT / "cgroup.controllers").read_text():
        base, limit_file = V2_ROOT, "memory.max"
    else:
        raise FsbmError("this machine has no memory cgroup controller to pin the page cache with")
    path = base / f"fsbm-{os.getpid()}-{time.monotonic_ns()}"
    try:
        path.mkdir()
        (path / limit_file).write_text(str(limit_bytes))
    except OSError as exc:
        raise FsbmError(f"cannot make a memory cgroup at {path}: {exc.strerror} (needs root)") from exc
    try:
        yield path
    finally:
        if base is V1_MEMORY:
            try:
                (path / "memory.force_empty").write_text("0")
            except OSError:
                pass
        for _ in range(50):  # the last task's exit is noticed a moment later
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def run_inside(cgroup: Path, command: list[str]) -> list[str]:
    """The command, wrapped so it joins the cgroup before it runs (no preexec_fn: the
    caller has threads)."""
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(cgroup / "cgroup.procs"), *command]

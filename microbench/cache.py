"""Cache control from Python, for replay and validation runs (fsbench does its own in C).

Three declared states (DESIGN): cold by a global drop (sync, then drop page cache,
dentries and inodes: needs root) or per file (fsync + posix_fadvise DONTNEED, no root,
leaves metadata cached), warm by reading through, and O_DIRECT, which bypasses the page
cache for data altogether.
"""

from __future__ import annotations

import os
from pathlib import Path

from fsbm.errors import FsbmError
from fsbm.microbench.settle import settle_deferred_frees

DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def can_drop_all() -> bool:
    return os.access(DROP_CACHES, os.W_OK)


def drop_all() -> None:
    """sync, then drop clean page cache, dentries and inodes system-wide."""
    os.sync()
    try:
        DROP_CACHES.write_text("3")
    except OSError as exc:
        raise FsbmError(f"cannot drop caches: writing {DROP_CACHES}: {exc.strerror}", hint="run as root") from exc


def drop_all_settled(path: Path) -> None:
    """What the filesystem `path` lies on deferred after deletions settled (settle.py), then
    drop_all: how a timed cold run on it starts."""
    settle_deferred_frees(path)
    drop_all()


def evict_file(path: Path) -> None:
    """Write one file back and evict its pages (its metadata stays cached)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise FsbmError(f"cannot open {path} to evict it: {exc.strerror}") from exc
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm_file(path: Path, chunk: int = 1 << 20) -> int:
    """Read a file through so its pages are cached; returns the bytes read.  Without
    touching its access time where that is allowed (O_NOATIME: root or the owner), since
    warming a system file for a measurement should leave it as it was."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOATIME)
    except PermissionError:
        fd = os.open(path, os.O_RDONLY)
    total = 0
    with open(fd, "rb", buffering=0) as src:
        while block := src.read(chunk):
            total += len(block)
    return total


def open_direct(path: Path, flags: int = os.O_RDONLY) -> int:
    """Open with O_DIRECT; a clear error where the filesystem refuses it."""
    try:
        return os.open(path, flags | os.O_DIRECT)
    except OSError as exc:
        raise FsbmError(f"{path}: the filesystem refuses O_DIRECT ({exc.strerror})") from exc

"""Files fsbm writes for the user, written whole or not at all."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """Where to write `path`: a partial file beside it, renamed over it once the block ends
    without an error and removed if it raises, so a half-written file never takes the place
    of what was there.  A symbolic link is followed (its target is replaced, the link
    stays), and a path that exists and is not a regular file (/dev/null, a FIFO, a
    terminal) is written in place: renamed over, it would become a file where the device
    was."""
    path = Path(path)
    if path.exists() and not path.is_file():
        yield path
        return
    target = Path(os.path.realpath(path))
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        yield partial
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)

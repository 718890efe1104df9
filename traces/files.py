"""Opening trace files as they are kept: plain, gzip or bzip2, told apart by magic bytes."""

from __future__ import annotations

import bz2
import gzip
import zlib
from pathlib import Path
from typing import BinaryIO

# What reading a damaged or cut compressed file raises: bad input, never a bug in fsbm.
DAMAGED_INPUT = (OSError, EOFError, zlib.error)


def open_decompressed(path: Path) -> BinaryIO:
    """A binary reader of the file's content, decompressing gzip and bzip2 on the fly."""
    with open(path, "rb") as probe:
        magic = probe.read(3)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if magic == b"BZh":
        return bz2.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")

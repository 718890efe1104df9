"""The event table every part of fsbm reads (DESIGN.md: Event).

One row per completed operation.  Columns beyond DESIGN's list: ``seq`` (order in the
trace, for logs without timestamps), ``path2`` (where a rename goes, what a link or
symlink points to, where an in-kernel copy reads from: replay needs it) and ``record``
(the line or packet number the event came from, so any number can be traced back to its
source).  ``ret`` of an NFS READDIR is the bytes its reply's names would take as
getdents64 records (traces/nfs.py), so a listing is priced by its size wherever it came from.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 1

EVENT_SCHEMA = pa.schema(
    [
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("ts", pa.int64()),         # start, ns: epoch, or time of day (see ts_origin)
        pa.field("dur", pa.int64()),        # ns, when known
        pa.field("actor", pa.string()),     # pid/tid, or NFS client address
        pa.field("op", pa.string()),        # DESIGN's operation vocabulary (fsbm.traces.vocabulary)
        pa.field("orig", pa.string()),      # syscall or NFS procedure as traced
        pa.field("file", pa.string()),      # stable id: path, fd-resolved path, or file-handle hash
        pa.field("path", pa.string()),
        pa.field("path2", pa.string()),
        pa.field("offset", pa.int64()),
        pa.field("size", pa.int64()),       # bytes requested
        pa.field("ret", pa.int64()),        # bytes done, new fd, or -1
        pa.field("errno", pa.string()),
        pa.field("record", pa.int64()),     # source line or packet number
    ]
)

COLUMNS = EVENT_SCHEMA.names


def metadata(**values: object) -> dict[bytes, bytes]:
    """Parquet key/value metadata: schema version plus whatever describes the source."""
    meta = {b"fsbm.schema_version": str(SCHEMA_VERSION).encode()}
    for key, value in values.items():
        meta[f"fsbm.{key}".encode()] = str(value).encode()
    return meta

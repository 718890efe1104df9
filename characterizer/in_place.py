"""Sequential writes that rewrite their file in place (native/in_place.c finds them).

A write that ends within what its file already held finds its blocks allocated and its
pages, where the workload wrote or read them, in the cache: it dirties them again.  A write
past the end allocates blocks, grows the file and sets up its pages.  SQLite in WAL mode
writes its log again from the start after each checkpoint, and a checkpoint rewrites the
database's pages in page order: such writes cost about half what appends of the same sizes
do (docs/model-evidence.md, "A rewrite's price").  A sequential write class keeps how many
of its writes rewrote in place and followed on from the file's previous write (in_place),
and the predictor prices them at fsbench's overwrite in sequential order.

What a file held is what the trace showed of it: the largest end a read or write reached
since a create made the file or a truncate cut it.  A file that existed before the trace and
is rewritten before anything of it is read counts as extended: the trace cannot tell.
"""

from __future__ import annotations

import numpy as np

from fsbm.characterizer.arrays import OP_INDEX, EventArrays, access_lengths, sequence_order
from fsbm.characterizer.classes import by_size_bucket, copy_calls
from fsbm.characterizer.kernels import library


def in_place_writes(ev: EventArrays) -> np.ndarray:
    """Per event, whether it is a write that rewrote its file in place and followed on from
    the file's previous write: one pass in C over the events in trace order."""
    flags = np.zeros(ev.n, np.uint8)
    if not ev.n or not (ev.op == OP_INDEX["write"]).any():
        return flags.view(np.bool_)
    order = sequence_order(ev)
    op, failed = np.ascontiguousarray(ev.op, np.int8), np.ascontiguousarray(ev.failed, np.bool_)
    file, orig = np.ascontiguousarray(ev.file, np.int32), np.ascontiguousarray(ev.orig, np.int32)
    offset, size, ret = (np.ascontiguousarray(a, np.int64) for a in (ev.offset, ev.size, ev.ret))
    copies = np.ascontiguousarray(copy_calls(ev), np.bool_)
    found = library().fsbm_in_place(
        ev.n, order.ctypes.data if order is not None else None, op.ctypes.data, failed.ctypes.data,
        file.ctypes.data, max(len(ev.files), 1), orig.ctypes.data, copies.ctypes.data, offset.ctypes.data,
        size.ctypes.data, ret.ctypes.data, OP_INDEX["read"], OP_INDEX["write"], OP_INDEX["create"],
        OP_INDEX["setattr"], flags.ctypes.data)
    if found < 0:
        raise MemoryError("writes in place: out of memory")
    return flags.view(np.bool_)


def rewrites_in_place(ev: EventArrays, in_place: np.ndarray) -> dict[str, dict[str, int]]:
    """The writes `in_place` marks (in_place_writes), by size bucket as the data classes bucket
    them ({bucket: {"count", "bytes"}}: the sequential writes' "in_place")."""
    rows = np.flatnonzero(in_place)
    return by_size_bucket(access_lengths(ev, rows)) if len(rows) else {}


def with_rewrites(data: dict[str, dict], rewrites: dict[str, dict[str, int]]) -> dict[str, dict]:
    """The data classes with each sequential write bucket's "in_place": how many of its writes
    rewrote their file in place (rewrites_in_place), at most the bucket's count."""
    sequential = data.get("write", {}).get("sequential")
    if not sequential or not rewrites:
        return data
    out = dict(sequential)
    for bucket, counts in rewrites.items():
        entry = out.get(bucket)
        if entry is not None:
            out[bucket] = {**entry, "in_place": min(counts["count"], entry["count"])}
    return {**data, "write": {**data["write"], "sequential": out}}

"""What each sync had to make durable (fsync, fdatasync, sync_file_range, NFS COMMIT).

A sync's cost depends less on how many bytes are dirty than on whether the filesystem
must commit metadata.  Measured on ext4 (a 4 KiB request): a sync after a write that grew
the file costs about 650 us (a journal commit), an fdatasync after rewriting allocated
blocks about 200 us (the data only), and a sync with nothing dirty about 90 us (a cache
flush).  SQLite makes all of these in every transaction.  So each sync is put in one of
four kinds, by what happened to its file since that file's previous sync:

- ``metadata``: the file grew, was created, or the call was a full fsync after a write
  (its times changed): the filesystem commits metadata as well as the data;
- ``data``: an fdatasync (or sync_file_range) after rewriting bytes inside the file;
- ``directory``: a directory synced after entries were made, removed or renamed in it
  since its previous sync (SQLite syncs its directory after creating the journal).  On
  ext4 and xfs the file's own sync has already committed the new name (about 1 us); btrfs
  logs the directory on its own (about 450 us);
- ``clean``: nothing was written to the file since its previous sync.

Per file, in trace order.  "Grew" compares a stretch's writes with the largest offset any
read or write reached before it, so a file that existed before the trace and is first
rewritten in place counts as rewritten, not grown.

Each kind also counts the runs its bytes came in: the writes that did not begin where the
stretch's previous write ended.  Written back, separate runs are separate writes to the
device, and a data-only sync of a database's scattered pages costs two to three times one
of the same bytes in one request (fsbench's fdatasync_overwrite, random against sequential).
And it counts the requests they came in (the writes that moved bytes): written a page or
less at a time, new bytes stay in pages of their own where one large request puts them in
large folios, and on ext4 and xfs writing them back costs about 1.3 times as much.
"""

from __future__ import annotations

import posixpath

import numpy as np

from fsbm.characterizer.arrays import OP_INDEX, EventArrays, of_operations, sequence_order
from fsbm.characterizer.classes import by_size_bucket
from fsbm.characterizer.kernels import library

KINDS = ("metadata", "data", "clean", "directory")
CLEAN, DIRECTORY = KINDS.index("clean"), KINDS.index("directory")  # the C pass gives the other three
DEFINITION = ("per file, what was written since its previous sync: metadata (it grew, was created, or a full fsync "
              "followed a write), data (fdatasync after rewriting bytes in place), directory (a directory whose "
              "entries changed), clean (nothing written)")
# Calls that change a directory's entries (a rename counts in its source's directory).
NAMESPACE_OPS = ("create", "unlink", "mkdir", "rmdir", "rename", "link", "symlink")
# The operations whose order, per file, says what a sync had to make durable.
SYNC_OPS = ("read", "write", "fsync", "create")
# Original calls that make data durable without the file's metadata.
DATA_ONLY = ("fdatasync", "sync_file_range")


def _entries_changed(ev: EventArrays, directory: np.ndarray, after: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Whether an entry of each `directory` (a file id) was made, removed or renamed between
    sequence numbers `after` and `before`: the namespace calls keyed by (parent, seq),
    sorted once, and two binary searches a sync."""
    rows = np.flatnonzero(of_operations(ev, NAMESPACE_OPS) & ~ev.failed)
    if not len(rows):
        return np.zeros(len(directory), bool)
    ids = {name: i for i, name in enumerate(ev.files)}
    named, index = np.unique(ev.file[rows], return_inverse=True)
    parent_of = np.array([ids.get(posixpath.dirname(ev.files[f]), -1) for f in named], np.int64)
    parent = parent_of[index]
    known = parent >= 0
    span = np.int64(max(int(ev.seq.max()), int(before.max())) + 2)
    keys = np.sort(parent[known] * span + ev.seq[rows][known] + 1)
    low = np.searchsorted(keys, directory * span + after + 1, side="right")
    high = np.searchsorted(keys, directory * span + before + 1, side="left")
    return high > low


def sync_kinds(ev: EventArrays) -> dict[str, dict[str, int]]:
    """{kind: {"count": syncs, "bytes": bytes they made durable, "runs": the separate runs of
    writes those bytes came in, "requests": the writes (native/syncs.c), "bytes_log2": the same
    by the power of two at or below each sync's bytes}} over the successful syncs:
    one pass in C over the events in trace order, a stretch's state per file
    (characterizer/native/syncs.c), then, for the clean syncs, whether their directory's
    entries changed."""
    out = {kind: {"count": 0, "bytes": 0, "runs": 0, "requests": 0} for kind in KINDS}
    syncs = int((ev.op == OP_INDEX["fsync"]).sum())
    if not syncs:
        return out
    order = sequence_order(ev)
    op, failed = np.ascontiguousarray(ev.op, np.int8), np.ascontiguousarray(ev.failed, np.bool_)
    file, orig = np.ascontiguousarray(ev.file, np.int32), np.ascontiguousarray(ev.orig, np.int32)
    offset, ret = np.ascontiguousarray(ev.offset, np.int64), np.ascontiguousarray(ev.ret, np.int64)
    full = np.array([name.rsplit(".", 1)[-1].lower() not in DATA_ONLY for name in ev.origs] or [True], np.bool_)
    row, previous, dirty, runs, requests = (np.empty(syncs, np.int64) for _ in range(5))
    kind = np.empty(syncs, np.int8)
    count = library().fsbm_sync_kinds(
        ev.n, order.ctypes.data if order is not None else None, op.ctypes.data, failed.ctypes.data,
        file.ctypes.data, max(len(ev.files), 1), orig.ctypes.data, full.ctypes.data, offset.ctypes.data,
        ret.ctypes.data, OP_INDEX["read"], OP_INDEX["write"], OP_INDEX["fsync"], OP_INDEX["create"],
        row.ctypes.data, kind.ctypes.data, dirty.ctypes.data, runs.ctypes.data, requests.ctypes.data,
        previous.ctypes.data)
    if count < 0:
        raise MemoryError("sync kinds: out of memory")
    row, kind, dirty, runs, requests, previous = (a[:count] for a in (row, kind, dirty, runs, requests, previous))
    clean = np.flatnonzero(kind == CLEAN)
    if len(clean):
        before = np.where(previous[clean] >= 0, ev.seq[np.maximum(previous[clean], 0)], -1)
        changed = _entries_changed(ev, ev.file[row[clean]].astype(np.int64), before, ev.seq[row[clean]])
        kind[clean[changed]] = DIRECTORY
    for i, name in enumerate(KINDS):
        picked = kind == i
        out[name] = {"count": int(picked.sum()), "bytes": int(dirty[picked].sum()), "runs": int(runs[picked].sum()),
                     "requests": int(requests[picked].sum()),
                     "bytes_log2": by_size_bucket(dirty[picked], runs=runs[picked], requests=requests[picked])}
    return out

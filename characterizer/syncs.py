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
"""

from __future__ import annotations

import posixpath

import numpy as np

from fsbm.characterizer.arrays import MISSING, OP_INDEX, EventArrays, file_order

KINDS = ("metadata", "data", "clean", "directory")
DEFINITION = ("per file, what was written since its previous sync: metadata (it grew, was created, or a full fsync "
              "followed a write), data (fdatasync after rewriting bytes in place), directory (a directory whose "
              "entries changed), clean (nothing written)")
# Calls that change a directory's entries (a rename counts in its source's directory).
NAMESPACE_OPS = ("create", "unlink", "mkdir", "rmdir", "rename", "link", "symlink")
# The operations whose order, per file, says what a sync had to make durable.
SYNC_OPS = ("read", "write", "fsync", "create")
# Original calls that make data durable without the file's metadata.
DATA_ONLY = ("fdatasync", "sync_file_range")


def _restarting_cummax(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Running maximum of `values` that starts again wherever `group` (ascending) changes:
    dense ranks offset by group, so one np.maximum.accumulate does every group at once."""
    if not len(values):
        return values
    levels, rank = np.unique(values, return_inverse=True)
    span = np.int64(len(levels))
    return levels[np.maximum.accumulate(group * span + rank) - group * span]


def _entries_changed(ev: EventArrays, directory: np.ndarray, after: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Whether an entry of each `directory` (a file id) was made, removed or renamed between
    sequence numbers `after` and `before`: the namespace calls keyed by (parent, seq),
    sorted once, and two binary searches a sync."""
    rows = np.flatnonzero(np.isin(ev.op, [OP_INDEX[op] for op in NAMESPACE_OPS]) & ~ev.failed)
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
    """{kind: {"count": syncs, "bytes": bytes they made durable}} over the successful syncs."""
    ops = tuple(OP_INDEX[op] for op in SYNC_OPS)
    rows = np.flatnonzero(np.isin(ev.op, ops) & ~ev.failed)
    out = {kind: {"count": 0, "bytes": 0} for kind in KINDS}
    if not (ev.op[rows] == OP_INDEX["fsync"]).any():
        return out
    rows = file_order(ev, rows)
    op, file = ev.op[rows], ev.file[rows]
    is_sync = op == OP_INDEX["fsync"]
    is_write = op == OP_INDEX["write"]
    moved = np.where(ev.ret[rows] > 0, ev.ret[rows], 0)
    known = (ev.offset[rows] != MISSING) & (op != OP_INDEX["create"])
    end = np.where(known, ev.offset[rows] + moved, 0)

    # A stretch: a file's events up to and including a sync; the next starts after it.
    starts = np.ones(len(rows), bool)
    starts[1:] = (file[1:] != file[:-1]) | is_sync[:-1]
    stretch = np.cumsum(starts) - 1
    count = int(stretch[-1]) + 1
    dirty = np.bincount(stretch, weights=np.where(is_write, moved, 0), minlength=count)
    created = np.bincount(stretch, weights=op == OP_INDEX["create"], minlength=count) > 0
    write_end = np.zeros(count, np.int64)
    np.maximum.at(write_end, stretch, np.where(is_write, end, 0))
    reached = np.zeros(count, np.int64)
    np.maximum.at(reached, stretch, end)
    stretch_file = file[starts]
    group = np.cumsum(np.concatenate(([False], stretch_file[1:] != stretch_file[:-1])))
    before = np.zeros(count, np.int64)   # the largest offset reached before each stretch
    first_of_file = np.concatenate(([True], group[1:] != group[:-1]))
    before[~first_of_file] = _restarting_cummax(reached, group)[:-1][~first_of_file[1:]]
    grew = created | (write_end > before)

    sync_rows = np.flatnonzero(is_sync)
    s = stretch[sync_rows]
    data_only = np.array([name.rsplit(".", 1)[-1].lower() in DATA_ONLY for name in ev.origs] or [False])
    full = ~data_only[ev.orig[rows[sync_rows]]]
    kind = np.where(dirty[s] == 0, 2, np.where(grew[s] | full, 0, 1))
    clean = np.flatnonzero(kind == 2)
    if len(clean):
        sync_file, sync_seq = file[sync_rows], ev.seq[rows[sync_rows]]
        previous = np.full(len(sync_rows), -1, np.int64)
        same = np.concatenate(([False], sync_file[1:] == sync_file[:-1]))
        previous[same] = sync_seq[:-1][same[1:]]
        changed = _entries_changed(ev, sync_file[clean], previous[clean], sync_seq[clean])
        kind[clean[changed]] = 3
    for i, name in enumerate(KINDS):
        picked = kind == i
        out[name] = {"count": int(picked.sum()), "bytes": int(dirty[s][picked].sum())}
    return out

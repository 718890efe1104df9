"""Sequential and random access (DESIGN.md: Sequential) and Ellard's runs.

For reads and writes, per actor and file, in trace order:
- consecutive (DESIGN's sequential, Darshan's CONSEC): the offset equals the end of the
  previous access; the first access after an open counts from offset 0, so a file read
  front to back is 100% consecutive.
- sequential (Darshan's SEQ): the offset is at or past the previous end (Darshan tests
  offset > last byte, the same thing); it includes the consecutive ones.
- random: neither.
The end of an access is offset + bytes done (ret), or + bytes asked when ret is unknown.

Runs (Ellard et al.): the accesses between an open and its close (strace), or for NFS,
which has no open, between idle gaps of 30 s on the same file by the same client.  A run
is *entire* if it read or wrote the whole file front to back, *sequential* if every access
was consecutive, else *random*; and read-only, write-only or read-write.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsbm.characterizer.arrays import MISSING, OP_INDEX, EventArrays, access_lengths, group_order, present

NFS_RUN_GAP_NS = 30 * 1_000_000_000


@dataclass
class Access:
    """The data accesses in (actor, file, time) order, with their classification."""

    index: np.ndarray        # positions in the event arrays
    run: np.ndarray          # run id of each access
    consecutive: np.ndarray  # bool
    sequential: np.ndarray   # bool
    end: np.ndarray          # offset + length


def classify(ev: EventArrays, nfs: bool) -> Access:
    data = ((ev.op == OP_INDEX["read"]) | (ev.op == OP_INDEX["write"])) & (ev.offset != MISSING) & ~ev.failed
    opens = (ev.op == OP_INDEX["open"]) | (ev.op == OP_INDEX["create"])
    # Opens go in the same ordering so that each starts a new run of its (actor, file).
    idx = np.flatnonzero(data | opens)
    is_open = opens[idx]
    # "Previous" in time: NFS events are written when their reply arrives, not in call order.
    clock = ev.ts[idx] if ev.has_time else ev.seq[idx]
    order = group_order(ev, idx, clock)
    idx, is_open = idx[order], is_open[order]
    actor, file = ev.actor[idx], ev.file[idx]
    new_group = np.ones(len(idx), bool)
    new_group[1:] = (actor[1:] != actor[:-1]) | (file[1:] != file[:-1])
    boundary = new_group | is_open
    if nfs and len(idx) and ev.has_time:
        ts = ev.ts[idx]
        gap = np.zeros(len(idx), bool)
        gap[1:] = ts[1:] - ts[:-1] > NFS_RUN_GAP_NS
        boundary |= gap
    run = np.cumsum(boundary) - 1
    offset = np.where(is_open, 0, ev.offset[idx])
    end = np.where(is_open, 0, offset + access_lengths(ev, idx))
    prev_end = np.zeros(len(idx), np.int64)
    prev_end[1:] = end[:-1]
    prev_end[boundary] = 0  # a new run starts from offset 0
    consecutive = offset == prev_end
    sequential = offset >= prev_end
    keep = ~is_open
    return Access(idx[keep], run[keep], consecutive[keep], sequential[keep], end[keep])


def percentages(ev: EventArrays, acc: Access) -> dict[str, dict[str, float]]:
    """Per op: % consecutive, % sequential (Darshan), % random, and the counts."""
    out = {}
    for name in ("read", "write"):
        mask = ev.op[acc.index] == OP_INDEX[name]
        n = int(mask.sum())
        consecutive = int(acc.consecutive[mask].sum())
        sequential = int(acc.sequential[mask].sum())
        out[name] = {
            "count": n, "consecutive": consecutive, "sequential": sequential,
            "consecutive_pct": 100.0 * consecutive / n if n else 0.0,
            "sequential_pct": 100.0 * sequential / n if n else 0.0,
            "random_pct": 100.0 * (n - sequential) / n if n else 0.0,
        }
    return out


def file_sizes(ev: EventArrays, acc: Access) -> np.ndarray:
    """Per file touched by data: max(offset + size) (Tang 5.4)."""
    if len(acc.index) == 0:
        return np.zeros(0, np.int64)
    files = ev.file[acc.index]
    sizes = np.zeros(len(ev.files), np.int64)
    np.maximum.at(sizes, files, acc.end)
    return sizes[present(files, len(ev.files))]


def runs(ev: EventArrays, acc: Access, sizes_by_file: np.ndarray) -> dict[str, object]:
    """Ellard's run classes: counts by pattern and by direction."""
    if len(acc.index) == 0:
        return {"count": 0}
    run = acc.run
    starts = np.flatnonzero(np.concatenate(([True], run[1:] != run[:-1])))
    all_consecutive = np.logical_and.reduceat(acc.consecutive, starts)
    reads = np.add.reduceat((ev.op[acc.index] == OP_INDEX["read"]).astype(np.int64), starts)
    lengths = np.diff(np.concatenate((starts, [len(run)])))
    writes = lengths - reads
    last_end = acc.end[np.concatenate((starts[1:], [len(run)])) - 1]
    file_size = sizes_by_file[ev.file[acc.index][starts]]
    entire = all_consecutive & (last_end >= file_size)
    sequential = all_consecutive & ~entire
    n = len(starts)
    return {
        "count": n,
        "entire": int(entire.sum()), "sequential": int(sequential.sum()),
        "random": int(n - entire.sum() - sequential.sum()),
        "read_only": int((writes == 0).sum()), "write_only": int((reads == 0).sum()),
        "read_write": int(((reads > 0) & (writes > 0)).sum()),
        "definition": "open to close (strace) or 30 s idle gap (NFS), per actor and file",
    }

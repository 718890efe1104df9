"""Sequential and random access (DESIGN.md: Sequential) and Ellard's runs.

For reads and for writes separately (as Darshan counts them, and as fio tracks position),
per actor and file, in time order:
- consecutive (DESIGN's sequential, Darshan's CONSEC): the offset equals the end of the
  previous read (for a read) or write (for a write); the first after an open counts from
  offset 0, so a file read front to back is 100% consecutive.
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

from fsbm.characterizer.arrays import MISSING, OP_INDEX, EventArrays, access_lengths, group_key, group_order

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
    idx = np.flatnonzero(data | opens)
    # "Previous" in time: NFS events are written when their reply arrives, not in call order.
    clock = ev.ts[idx] if ev.has_time else ev.seq[idx]
    order = group_order(ev, idx, clock)  # the one sort: (actor, file), then time
    idx, clock = idx[order], clock[order]
    is_open = opens[idx]
    key = group_key(ev, idx)
    new_group = np.ones(len(idx), bool)
    new_group[1:] = key[1:] != key[:-1]
    run = _run_ids(new_group, is_open, clock, nfs)
    consecutive, sequential, end = _per_direction(ev, idx, is_open, new_group)
    data_rows = ~is_open
    return Access(idx[data_rows], run[data_rows], consecutive[data_rows], sequential[data_rows], end[data_rows])


def _run_ids(new_group: np.ndarray, is_open: np.ndarray, clock: np.ndarray, nfs: bool) -> np.ndarray:
    """Run ids along the (actor, file, time) order: a new run at each open, or for NFS after
    30 s idle."""
    boundary = new_group | is_open
    if nfs and len(clock):
        gap = np.zeros(len(clock), bool)
        gap[1:] = clock[1:] - clock[:-1] > NFS_RUN_GAP_NS
        boundary |= gap
    return np.cumsum(boundary) - 1


def _per_direction(ev: EventArrays, idx: np.ndarray, is_open: np.ndarray,
                   new_group: np.ndarray) -> tuple[np.ndarray, ...]:
    """Consecutive and sequential flags and ends along the (actor, file, time) order, each
    access judged against the previous one in its direction; an open resets both.  The
    reads (or writes) and the opens are a subsequence of that order: no sort is needed."""
    n = len(idx)
    consecutive, sequential, ends = np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, np.int64)
    is_write = ev.op[idx] == OP_INDEX["write"]
    group_id = np.cumsum(new_group)
    for direction in (False, True):
        rows = np.flatnonzero(is_open | (~is_open & (is_write == direction)))
        opening = is_open[rows]
        boundary = np.ones(len(rows), bool)
        boundary[1:] = group_id[rows][1:] != group_id[rows][:-1]
        boundary |= opening
        offset = np.where(opening, 0, ev.offset[idx[rows]])
        end = np.where(opening, 0, offset + access_lengths(ev, idx[rows]))
        prev_end = np.zeros(len(rows), np.int64)
        prev_end[1:] = end[:-1]
        prev_end[boundary] = 0  # a new run starts from offset 0
        mine = rows[~opening]
        consecutive[mine] = (offset == prev_end)[~opening]
        sequential[mine] = (offset >= prev_end)[~opening]
        ends[mine] = end[~opening]
    return consecutive, sequential, ends


def direction_counts(ev: EventArrays, acc: Access) -> dict[str, dict[str, int]]:
    """Per direction: accesses, consecutive ones, sequential ones (Darshan)."""
    out = {}
    for name in ("read", "write"):
        mask = ev.op[acc.index] == OP_INDEX[name]
        out[name] = {"count": int(mask.sum()), "consecutive": int(acc.consecutive[mask].sum()),
                     "sequential": int(acc.sequential[mask].sum())}
    return out


def percentages(counts: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    """Per direction: % consecutive, % sequential (Darshan), % random, and the counts."""
    out = {}
    for name, c in counts.items():
        n = c["count"]
        out[name] = {**c, "consecutive_pct": 100.0 * c["consecutive"] / n if n else 0.0,
                     "sequential_pct": 100.0 * c["sequential"] / n if n else 0.0,
                     "random_pct": 100.0 * (n - c["sequential"]) / n if n else 0.0}
    return out


def runs(ev: EventArrays, acc: Access) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """Ellard's runs, counted in a form that merges: (counts, size of every file id as these
    events show it, max offset + length (Tang 5.4), and per file id the runs that went front
    to back all the way to that size).  A run is *entire* if it reaches the file's size over
    the whole trace; a part that holds some of a file's actors knows only its own maximum,
    so whole-file runs are kept per file and only those at the global maximum survive merging.
    """
    sizes = np.zeros(len(ev.files), np.int64)
    if len(acc.index) == 0:
        return {"count": 0, "all_consecutive": 0, "read_only": 0, "write_only": 0, "read_write": 0}, sizes, sizes
    files = ev.file[acc.index]
    np.maximum.at(sizes, files, acc.end)
    run = acc.run
    starts = np.flatnonzero(np.concatenate(([True], run[1:] != run[:-1])))
    all_consecutive = np.logical_and.reduceat(acc.consecutive, starts)
    reads = np.add.reduceat((ev.op[acc.index] == OP_INDEX["read"]).astype(np.int64), starts)
    lengths = np.diff(np.concatenate((starts, [len(run)])))
    writes = lengths - reads
    last_end = acc.end[np.concatenate((starts[1:], [len(run)])) - 1]
    run_file = files[starts]
    whole = all_consecutive & (last_end >= sizes[run_file])
    counts = {"count": len(starts), "all_consecutive": int(all_consecutive.sum()),
              "read_only": int((writes == 0).sum()), "write_only": int((reads == 0).sum()),
              "read_write": int(((reads > 0) & (writes > 0)).sum())}
    return counts, sizes, np.bincount(run_file[whole], minlength=len(ev.files)).astype(np.int64)


def run_classes(counts: dict[str, int], entire: int) -> dict[str, object]:
    """Ellard's run classes from merged counts: entire, sequential (all consecutive, not entire), random."""
    if not counts["count"]:
        return {"count": 0}
    return {"count": counts["count"], "entire": entire, "sequential": counts["all_consecutive"] - entire,
            "random": counts["count"] - counts["all_consecutive"],
            "read_only": counts["read_only"], "write_only": counts["write_only"], "read_write": counts["read_write"],
            "definition": "open to close (strace) or 30 s idle gap (NFS), per actor and file"}

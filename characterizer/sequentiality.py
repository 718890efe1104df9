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

import ctypes
from dataclasses import dataclass

import numpy as np

from fsbm.characterizer.arrays import OP_INDEX, EventArrays, costed
from fsbm.characterizer.kernels import library

NFS_RUN_GAP_NS = 30 * 1_000_000_000


@dataclass
class Access:
    """The data accesses in time order, with their classification."""

    index: np.ndarray        # positions in the event arrays
    run: np.ndarray          # run id of each access, 0 .. runs-1
    consecutive: np.ndarray  # bool
    sequential: np.ndarray   # bool
    last_of_run: np.ndarray  # bool
    interleaved: np.ndarray  # bool: the actor made other costed calls since the run's previous access
    resumes: np.ndarray      # bool: consecutive, after an access this way since the open that was not
    end: np.ndarray          # offset + length
    gap: np.ndarray          # offset less where the previous access this way ended (< 0: back)
    runs: int
    directions: dict[str, dict[str, int]]  # per direction: accesses, consecutive ones, sequential ones (Darshan)


def classify(ev: EventArrays, nfs: bool) -> Access:
    """One pass in C (characterizer/native/sequence.c) over the events in time order: by
    trace order when time never goes back in it (strace), else by time, stably (NFS events
    are written when their reply arrives, not in call order)."""
    clock = np.ascontiguousarray(ev.ts if ev.has_time else ev.seq, dtype=np.int64)
    order = None
    if ev.n > 1 and not (np.diff(clock) >= 0).all():
        order = np.ascontiguousarray(np.argsort(clock, kind="stable"), dtype=np.int64)
    # Named, so each array outlives the call that reads it through a raw pointer.
    op, failed = np.ascontiguousarray(ev.op, np.int8), np.ascontiguousarray(ev.failed, np.bool_)
    counted = np.ascontiguousarray(costed(ev), np.bool_)
    actor, file = np.ascontiguousarray(ev.actor, np.int32), np.ascontiguousarray(ev.file, np.int32)
    offset, size, ret = (np.ascontiguousarray(a, np.int64) for a in (ev.offset, ev.size, ev.ret))
    index, run, end, gap = (np.empty(ev.n, np.int64) for _ in range(4))
    flags = np.zeros(ev.n, np.uint8)
    runs = ctypes.c_int64(0)
    directions = np.zeros(6, np.int64)
    count = library().fsbm_sequence(
        ev.n, order.ctypes.data if order is not None else None, op.ctypes.data, failed.ctypes.data,
        counted.ctypes.data, actor.ctypes.data, file.ctypes.data,
        max(len(ev.files), 1), offset.ctypes.data, size.ctypes.data, ret.ctypes.data, clock.ctypes.data,
        OP_INDEX["read"], OP_INDEX["write"], OP_INDEX["open"], OP_INDEX["create"], NFS_RUN_GAP_NS if nfs else 0,
        index.ctypes.data, run.ctypes.data, flags.ctypes.data, end.ctypes.data, gap.ctypes.data, ctypes.byref(runs),
        directions.ctypes.data)
    if count < 0:
        raise MemoryError("sequence classification: out of memory")
    flags = flags[:count]
    return Access(index[:count], run[:count], (flags & 1).astype(bool), (flags & 2).astype(bool),
                  (flags & 4).astype(bool), (flags & 8).astype(bool), (flags & 16).astype(bool), end[:count],
                  gap[:count], runs.value,
                  {name: {"count": int(directions[3 * d]), "consecutive": int(directions[3 * d + 1]),
                          "sequential": int(directions[3 * d + 2])} for d, name in enumerate(("read", "write"))})


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
    n = acc.runs
    broken = np.bincount(acc.run, weights=~acc.consecutive, minlength=n)
    reads = np.bincount(acc.run, weights=ev.op[acc.index] == OP_INDEX["read"], minlength=n).astype(np.int64)
    writes = np.bincount(acc.run, minlength=n) - reads
    last_end, run_file = np.zeros(n, np.int64), np.zeros(n, np.int64)
    last_end[acc.run[acc.last_of_run]] = acc.end[acc.last_of_run]
    run_file[acc.run[acc.last_of_run]] = files[acc.last_of_run]
    all_consecutive = broken == 0
    whole = all_consecutive & (last_end >= sizes[run_file])
    counts = {"count": n, "all_consecutive": int(all_consecutive.sum()),
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

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

from fsbm.characterizer.arrays import OP_INDEX, EventArrays, costed
from fsbm.characterizer.kernels import library

NFS_RUN_GAP_NS = 30 * 1_000_000_000
# An access's classification, as the bits sequence.c sets: consecutive and sequential
# (above); interleaved: the actor made other costed calls since the run's previous access;
# resumes: consecutive, after an access this way since the open that was not; in_stream: the
# access before it this way since the open skipped at most 16 KiB (access_flags.h's
# STREAM_GAP_BYTES), so readahead may be riding a stream it is in.
FLAGS = {"consecutive": 1, "sequential": 2, "interleaved": 8, "resumes": 16, "in_stream": 32}


@dataclass
class Access:
    """The data accesses in time order, with their classification, and their runs."""

    index: np.ndarray        # positions in the event arrays
    flags: np.ndarray        # uint8: the FLAGS bits each access has
    gap: np.ndarray          # offset less where the previous access this way ended (< 0: back)
    directions: dict[str, dict[str, int]]  # per direction: accesses, consecutive ones, sequential ones (Darshan)
    runs: "Runs"

    def flag(self, name: str) -> np.ndarray:
        """Which accesses have the flag `name` (one of FLAGS), as booleans."""
        return (self.flags & FLAGS[name]).astype(bool)


@dataclass
class Runs:
    """Ellard's runs, counted in a form that merges: the counts (RUN_COUNTS), and per file id
    the furthest any access ended (max offset + length: the file's size as these events show
    it, Tang 5.4) and how many of its runs went front to back all the way to that size.  A
    run is *entire* if it reaches the file's size over the whole trace; a part that holds
    some of a file's actors knows only its own maximum, so whole-file runs are kept per file
    and only those at the global maximum survive merging (partial.FileState)."""

    counts: dict[str, int]
    file_size: np.ndarray
    entire: np.ndarray


RUN_COUNTS = ("count", "all_consecutive", "read_only", "write_only", "read_write")  # sequence.c's RUNS_ order


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
    index, gap = np.empty(ev.n, np.int64), np.empty(ev.n, np.int64)
    flags = np.zeros(ev.n, np.uint8)
    run_counts = np.zeros(len(RUN_COUNTS), np.int64)
    file_size, entire = np.zeros(max(len(ev.files), 1), np.int64), np.zeros(max(len(ev.files), 1), np.int64)
    directions = np.zeros(6, np.int64)
    count = library().fsbm_sequence(
        ev.n, order.ctypes.data if order is not None else None, op.ctypes.data, failed.ctypes.data,
        counted.ctypes.data, actor.ctypes.data, file.ctypes.data,
        max(len(ev.files), 1), offset.ctypes.data, size.ctypes.data, ret.ctypes.data, clock.ctypes.data,
        OP_INDEX["read"], OP_INDEX["write"], OP_INDEX["open"], OP_INDEX["create"], NFS_RUN_GAP_NS if nfs else 0,
        index.ctypes.data, flags.ctypes.data, gap.ctypes.data, run_counts.ctypes.data, file_size.ctypes.data,
        entire.ctypes.data, directions.ctypes.data)
    if count < 0:
        raise MemoryError("sequence classification: out of memory")
    files = len(ev.files)
    return Access(index[:count], flags[:count], gap[:count],
                  {name: {"count": int(directions[3 * d]), "consecutive": int(directions[3 * d + 1]),
                          "sequential": int(directions[3 * d + 2])} for d, name in enumerate(("read", "write"))},
                  Runs(dict(zip(RUN_COUNTS, map(int, run_counts))), file_size[:files], entire[:files]))


def percentages(counts: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    """Per direction: % consecutive, % sequential (Darshan), % random, and the counts."""
    out = {}
    for name, c in counts.items():
        n = c["count"]
        out[name] = {**c, "consecutive_pct": 100.0 * c["consecutive"] / n if n else 0.0,
                     "sequential_pct": 100.0 * c["sequential"] / n if n else 0.0,
                     "random_pct": 100.0 * (n - c["sequential"]) / n if n else 0.0}
    return out


def run_classes(counts: dict[str, int], entire: int) -> dict[str, object]:
    """Ellard's run classes from merged counts: entire, sequential (all consecutive, not entire), random."""
    if not counts["count"]:
        return {"count": 0}
    return {"count": counts["count"], "entire": entire, "sequential": counts["all_consecutive"] - entire,
            "random": counts["count"] - counts["all_consecutive"],
            "read_only": counts["read_only"], "write_only": counts["write_only"], "read_write": counts["read_write"],
            "definition": "open to close (strace) or 30 s idle gap (NFS), per actor and file"}

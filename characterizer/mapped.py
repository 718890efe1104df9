"""Reads through file mappings: data a program reads that no read call shows.

A program that maps a file and touches its pages reads it through page faults, which
strace does not see: only the mmap call is in the trace.  git hashes every file over 32 KiB
that way (19.7 of the 24 MB it adds in the validation corpus), ripgrep and linkers map
their inputs, and on a cold cache each of those faults waits for the disk as a read does.

The trace cannot say which pages were touched, so a mapped region is taken to be read
through once, as git, a hash or a copy tool reads it: one request of the region's length
(a fault reads around the faulting page, readahead's window at a time, so a region within
that window comes in at once, as a read of its length would).  A process that maps the same
bytes again (ld.so maps a library whole, then each segment over it; git maps its config as
it grows) touches them once, so each process's regions of one file are joined where they
overlap.  Programs that map a large file to read a little of it (a memory-mapped database)
are over-counted by this rule; the profile keeps the mapped bytes apart (classes.data.mmap)
so a reader sees how much of a prediction rests on it.

Mapped regions are not read calls: Tang's table and Darshan's counts, which count calls,
leave them out; the data classes and the reuse curve, which count bytes a cache sees,
take them in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsbm.characterizer.arrays import MISSING, OP_INDEX, EventArrays, group_key


@dataclass
class Regions:
    """Mapped regions, one per (actor, file) stretch of overlapping mappings, in trace order
    of their first mapping."""

    rows: np.ndarray    # the event of each region's first mapping
    file: np.ndarray    # int64 file ids
    offset: np.ndarray  # int64
    length: np.ndarray  # int64, > 0

    def __len__(self) -> int:
        return len(self.rows)


def mapped_regions(ev: EventArrays) -> Regions:
    """The regions the successful file mappings of `ev` cover, joined per actor and file
    where they overlap or touch (module docstring)."""
    rows = np.flatnonzero((ev.op == OP_INDEX["mmap"]) & ~ev.failed & (ev.size != MISSING) & (ev.size > 0))
    offset = np.where(ev.offset[rows] != MISSING, ev.offset[rows], 0)
    end = offset + ev.size[rows]
    key = group_key(ev, rows)
    order = np.lexsort((rows, offset, key))
    rows, offset, end, key = rows[order], offset[order], end[order], key[order]
    # A region starts at a group's first mapping or where a mapping begins past every end
    # before it in its group.
    starts = np.ones(len(rows), bool)
    reach = np.empty(len(rows), np.int64)
    group_start = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1]))) if len(rows) else np.zeros(0, int)
    for first, stop in zip(group_start, np.append(group_start[1:], len(rows))):
        reach[first:stop] = np.maximum.accumulate(end[first:stop])
        starts[first + 1:stop] = offset[first + 1:stop] > reach[first:stop - 1]
    region = np.cumsum(starts) - 1
    count = int(starts.sum())
    first_row = np.full(count, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first_row, region, rows)
    region_end = np.zeros(count, np.int64)
    np.maximum.at(region_end, region, end)
    region_offset = offset[starts]
    in_trace_order = np.argsort(first_row, kind="stable")
    return Regions(first_row[in_trace_order], ev.file[first_row[in_trace_order]].astype(np.int64),
                   region_offset[in_trace_order], (region_end - region_offset)[in_trace_order])

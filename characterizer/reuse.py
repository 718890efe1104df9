"""The page-cache reuse curve: for every cache size, the fraction of 4 KiB block reads that
would hit in an LRU cache of that size (Mattson stack distances, one pass; DESIGN.md).

Reads and writes both reference blocks (a write leaves the block cached); only reads are
scored.  The stack-distance pass itself runs in C (characterizer/native/stackdist.c).

Each point also says what share of the files' first reads hit (`first_read_hit_fraction`):
a file read from its start is first a random read (predictor/model.py), and whether that
read misses depends on the file, not on the workload's reads overall.  A program that unpacks
an archive and then reads what it unpacked misses on the archive alone: its overall miss
fraction, spread over every file's first read, would have each of them miss half the time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsbm.characterizer.arrays import MISSING, OP_INDEX, EventArrays, access_lengths
from fsbm.characterizer.kernels import library

BLOCK = 4096
# Above this many block references the curve is computed on coarser blocks (powers of two
# of 4 KiB), so a trace that moved terabytes stays within memory; the profile says so.
MAX_REFERENCES = 64_000_000


@dataclass
class References:
    """The data accesses a cache sees, in trace order: file ids, offsets, bytes, read or not."""

    file: np.ndarray     # int64 ids
    offset: np.ndarray   # int64
    length: np.ndarray   # int64, > 0
    is_read: np.ndarray  # bool


def data_accesses(ev: EventArrays) -> np.ndarray:
    """Which events reference blocks: reads and writes with an offset that moved bytes."""
    data = ((ev.op == OP_INDEX["read"]) | (ev.op == OP_INDEX["write"])) & (ev.offset != MISSING)
    return data & (access_lengths(ev) > 0)


def block_references(refs: References, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(block key, is_read, 4 KiB blocks each reference stands for, granularity) for every block
    each read and write touched, at the finest granularity that stays under MAX_REFERENCES."""
    offset, length = refs.offset, refs.length
    while block < (1 << 30):
        first = offset // block
        last = (offset + length - 1) // block
        counts = (last - first + 1).astype(np.int64)
        if counts.sum() <= MAX_REFERENCES:
            break
        block *= 2
    total = int(counts.sum())
    starts = np.repeat(first - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    blocks = starts + np.arange(total)
    files = np.repeat(refs.file.astype(np.int64), counts)
    keys = (files << 40) | blocks
    is_read = np.repeat(refs.is_read, counts)
    # A coarse reference stands for the request's 4 KiB blocks, at most the ones it covers.
    if block == BLOCK:
        weight = np.ones(total, np.int64)
    else:
        weight = np.repeat(np.minimum(np.maximum(1, length // BLOCK), block // BLOCK), counts)
    return keys, is_read, weight, block


def previous_reference(keys: np.ndarray) -> np.ndarray:
    """For each reference, the index of the previous one to the same key, or -1."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    same = np.concatenate(([False], sorted_keys[1:] == sorted_keys[:-1]))
    prev_sorted = np.where(same, np.concatenate(([-1], order[:-1])), -1)
    prev = np.empty_like(order)
    prev[order] = prev_sorted
    return prev


def stack_distances(keys: np.ndarray) -> np.ndarray:
    prev = np.ascontiguousarray(previous_reference(keys), dtype=np.int64)
    out = np.empty(len(keys), dtype=np.int64)
    if len(keys) and library().fsbm_stack_distances(prev.ctypes.data, len(keys), out.ctypes.data) != 0:
        raise MemoryError("stack distances: out of memory")
    return out


def reuse_curve(refs: References, max_points: int = 48) -> dict[str, object]:
    """Hit fraction of block reads for cache sizes from 1 block to the whole working set."""
    keys, is_read, weight, block = block_references(refs)
    if len(keys) == 0:
        return {"block_size": BLOCK, "granularity_bytes": BLOCK, "block_reads": 0, "distinct_blocks": 0,
                "points": []}
    all_distances = stack_distances(keys)
    distinct = int((all_distances < 0).sum())  # every block's first reference has no distance
    distances = all_distances[is_read]
    weights = weight[is_read]
    reads = float(weights.sum())
    order = np.argsort(distances, kind="stable")
    sorted_distances, cumulative = distances[order], np.cumsum(weights[order])
    first_finite = np.searchsorted(sorted_distances, 0, side="left")
    hits_before = cumulative[first_finite - 1] if first_finite > 0 else 0
    sizes = np.unique(np.geomspace(1, max(distinct, 1), num=max_points).astype(np.int64))
    ends = np.searchsorted(sorted_distances, sizes, side="left")  # distance < size hits
    hits = [float(cumulative[e - 1] - hits_before) if e > first_finite else 0.0 for e in ends]
    # Each file's first block read, in trace order, and its distance (-1: never referenced before).
    _, first_read = np.unique(keys[is_read] >> 40, return_index=True)
    first_distances = np.sort(distances[first_read])
    first_cold = int(np.searchsorted(first_distances, 0, side="left"))
    first_hits = np.searchsorted(first_distances, sizes, side="left") - first_cold
    unit = block // BLOCK
    points = [{"cache_blocks": int(s) * unit, "cache_bytes": int(s) * block,
               "hit_fraction": h / reads if reads else 0.0,
               "first_read_hit_fraction": float(f) / len(first_distances) if len(first_distances) else 0.0}
              for s, h, f in zip(sizes, hits, np.maximum(first_hits, 0))]
    return {"block_size": BLOCK, "granularity_bytes": block, "block_reads": int(reads),
            "distinct_blocks": distinct * unit, "cold_misses": int(weights[distances < 0].sum()),
            "first_reads": int(len(first_distances)), "first_reads_cold": first_cold, "points": points}

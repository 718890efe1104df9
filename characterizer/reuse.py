"""The page-cache reuse curve: for every cache size, the fraction of 4 KiB block reads that
would hit in an LRU cache of that size (Mattson stack distances, one pass; DESIGN.md).

Reads and writes both reference blocks (a write leaves the block cached); only reads are
scored.  The stack-distance pass itself runs in C (characterizer/native/stackdist.c).
"""

from __future__ import annotations

import ctypes
from functools import lru_cache
from pathlib import Path

import numpy as np

from fsbm.characterizer.arrays import MISSING, OP_INDEX, EventArrays, access_lengths
from fsbm.locations import native_binary

BLOCK = 4096


@lru_cache(maxsize=1)
def _kernel() -> ctypes.CDLL:
    library = ctypes.CDLL(str(native_binary("libfsbm_stackdist.so", Path(__file__).parent)))
    library.fsbm_stack_distances.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
    library.fsbm_stack_distances.restype = ctypes.c_int
    return library


def block_references(ev: EventArrays) -> tuple[np.ndarray, np.ndarray]:
    """(block key, is_read) for every 4 KiB block every read and write touched, in order."""
    data = ((ev.op == OP_INDEX["read"]) | (ev.op == OP_INDEX["write"])) & (ev.offset != MISSING)
    length = access_lengths(ev)
    data &= length > 0
    first = ev.offset[data] // BLOCK
    last = (ev.offset[data] + length[data] - 1) // BLOCK
    counts = (last - first + 1).astype(np.int64)
    total = int(counts.sum())
    starts = np.repeat(first - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    blocks = starts + np.arange(total)
    files = np.repeat(ev.file[data].astype(np.int64), counts)
    keys = (files << 40) | blocks
    is_read = np.repeat(ev.op[data] == OP_INDEX["read"], counts)
    return keys, is_read


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
    if len(keys) and _kernel().fsbm_stack_distances(prev.ctypes.data, len(keys), out.ctypes.data) != 0:
        raise MemoryError("stack distances: out of memory")
    return out


def reuse_curve(ev: EventArrays, max_points: int = 48) -> dict[str, object]:
    """Hit fraction of block reads for cache sizes from 1 block to the whole working set."""
    keys, is_read = block_references(ev)
    if len(keys) == 0:
        return {"block_size": BLOCK, "block_reads": 0, "distinct_blocks": 0, "points": []}
    distances = stack_distances(keys)[is_read]
    reads = len(distances)
    distinct = int(len(np.unique(keys)))
    finite = np.sort(distances[distances >= 0])
    sizes = np.unique(np.geomspace(1, max(distinct, 1), num=max_points).astype(np.int64))
    hits = np.searchsorted(finite, sizes, side="left")  # distance < size hits
    points = [{"cache_blocks": int(s), "cache_bytes": int(s) * BLOCK,
               "hit_fraction": float(h) / reads if reads else 0.0} for s, h in zip(sizes, hits)]
    return {"block_size": BLOCK, "block_reads": reads, "distinct_blocks": distinct,
            "cold_misses": int((distances < 0).sum()), "points": points}

"""Histograms and distributions the profile reports: Darshan's ten request-size buckets,
log2 buckets, and exact percentiles kept as value counts so partial results merge exactly.

Why value counts: a profile built on a Dask cluster, or the profile of two traces merged,
must equal the one built in one pass over everything.  Sorted distinct values with their
counts merge exactly, and percentiles taken as nearest rank (the smallest value with at
least q% of the observations at or below it, as HdrHistogram and most latency tools
report) are then the same numbers either way.  Values are integers (ns, bytes), so sums
are exact too.  Traced latencies and sizes have few distinct values, so this stays small.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsbm.characterizer.kernels import library

# Darshan's POSIX_SIZE_* buckets (bytes): 0-100, 100-1K, 1K-10K, ... 1G+.
DARSHAN_EDGES = (0, 100, 1_000, 10_000, 100_000, 1_000_000, 4_000_000, 10_000_000, 100_000_000, 1_000_000_000)
DARSHAN_LABELS = ("0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M", "10M-100M",
                  "100M-1G", "1G+")
PERCENTILES = (50, 90, 99)
DENSE_RANGE = 1 << 20  # values spanning no more than this (or than their number) are counted, not sorted


@dataclass
class ValueCounts:
    """A multiset of integers: sorted distinct values and how often each occurred."""

    values: np.ndarray  # int64, ascending, distinct
    counts: np.ndarray  # int64, > 0

    @classmethod
    def of(cls, values: np.ndarray) -> "ValueCounts":
        """The counts of `values`: a bincount where their range is no wider than about their
        number (linear time; sizes and latencies of a long trace repeat), else a sort."""
        values = np.asarray(values, dtype=np.int64)
        if not len(values):
            return cls.empty()
        low, high = int(values.min()), int(values.max())
        if high - low <= max(len(values), DENSE_RANGE):
            counts = np.bincount(values - low)
            seen = np.flatnonzero(counts)
            return cls(seen + low, counts[seen].astype(np.int64))
        distinct, counts = np.unique(values, return_counts=True)
        return cls(distinct, counts.astype(np.int64))

    @classmethod
    def of_significant(cls, values: np.ndarray, bits: int = 10) -> "ValueCounts":
        """The counts of `significant(values, bits)`, without a sort: in C, each value >= 0 is
        coded as (shift, its top bits), a code below 64 x 2^bits whose order is the rounded
        values' order, and counted in a table (characterizer/native/significant.c).
        Negative values, which `significant` leaves as they are, are counted apart."""
        values = np.ascontiguousarray(values, dtype=np.int64)
        counts = np.zeros(64 << bits, np.int64)
        negative = library().fsbm_significant_counts(values.ctypes.data, len(values), bits, counts.ctypes.data)
        seen = np.flatnonzero(counts)
        rounded = cls((seen & ((1 << bits) - 1)) << (seen >> bits), counts[seen])
        return rounded.merge(cls.of(values[values < 0])) if negative else rounded

    @classmethod
    def empty(cls) -> "ValueCounts":
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64))

    def merge(self, other: "ValueCounts") -> "ValueCounts":
        if not len(other.values):
            return self
        if not len(self.values):
            return other
        distinct, inverse = np.unique(np.concatenate((self.values, other.values)), return_inverse=True)
        counts = np.zeros(len(distinct), np.int64)
        np.add.at(counts, inverse, np.concatenate((self.counts, other.counts)))
        return ValueCounts(distinct, counts)

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def total(self) -> int:
        """The exact sum, as a Python int: high and low 32 bits summed apart cannot overflow."""
        high, low = self.values >> 32, self.values & 0xFFFFFFFF
        return (int((high * self.counts).sum()) << 32) + int((low * self.counts).sum())

    def percentile(self, q: int) -> int:
        """Nearest rank: the smallest value with at least q% of the observations at or below it."""
        rank = max(1, -(-q * self.n // 100))  # ceil(q * n / 100), integers only
        return int(self.values[np.searchsorted(np.cumsum(self.counts), rank)])

    def distribution(self) -> dict[str, object]:
        """Count, mean, percentiles, max and a log2 histogram: a distribution, never a lone mean."""
        n = self.n
        if n == 0:
            return {"count": 0}
        out: dict[str, object] = {"count": n, "mean": self.total() / n}
        out.update({f"p{q}": self.percentile(q) for q in PERCENTILES})
        out["max"] = int(self.values[-1])
        out["histogram_log2"] = log2_histogram(self.values, self.counts)
        return out

    def darshan(self) -> dict[str, int]:
        """Counts per Darshan bucket; a bucket holds [edge, next edge)."""
        buckets = np.searchsorted(np.array(DARSHAN_EDGES[1:]), self.values, side="right")
        counts = np.bincount(buckets, weights=self.counts, minlength=len(DARSHAN_LABELS))
        return {label: int(c) for label, c in zip(DARSHAN_LABELS, counts)}


def significant(values: np.ndarray, bits: int = 10) -> np.ndarray:
    """Each value rounded down to its `bits` most significant bits (smaller ones kept as they
    are): within 2^(1 - bits) of itself, 0.2% for 10 bits.  For a statistic whose values are
    all different (the time between calls, in ns), so its value counts stay bounded (at most
    2^bits per power of two) whatever the trace's length; the rounding depends on the value
    alone, so parts still merge to what one pass gives."""
    values = np.asarray(values, dtype=np.int64)
    large = values >= 1 << bits
    if not large.any():
        return values
    shift = np.zeros(len(values), np.int64)
    shift[large] = bit_lengths(values[large]) - bits
    return (values >> shift) << shift


def bit_lengths(values: np.ndarray) -> np.ndarray:
    """Each value's bit length (int.bit_length): 0 for 0 and for negative values.  From
    frexp's exponent, which is exact below 2^53; above, a value's rounding to float64 can
    carry it into the next power of two, so the length is checked against the value."""
    values = np.asarray(values, dtype=np.int64)
    length = np.frexp(np.maximum(values, 0).astype(np.float64))[1].astype(np.int64)
    length -= (values >> np.clip(length - 1, 0, 63)) == 0
    return np.maximum(length, 0)


def log2_histogram(values: np.ndarray, counts: np.ndarray | None = None) -> list[dict[str, int]]:
    """[{lo, hi, count}] over non-empty buckets [2^k, 2^(k+1)); zero and below fall in the first."""
    if len(values) == 0:
        return []
    clipped = np.maximum(np.asarray(values, dtype=np.int64), 1)
    buckets = np.floor(np.log2(clipped)).astype(np.int64)
    per_bucket = np.bincount(buckets, weights=counts)
    return [{"lo": 0 if k == 0 else 1 << k, "hi": 1 << (k + 1), "count": int(c)}
            for k, c in enumerate(per_bucket) if c]


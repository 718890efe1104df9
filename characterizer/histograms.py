"""Histograms the profile reports: Darshan's ten request-size buckets and log2 buckets."""

from __future__ import annotations

import numpy as np

# Darshan's POSIX_SIZE_* buckets (bytes): 0-100, 100-1K, 1K-10K, ... 1G+.
DARSHAN_EDGES = (0, 100, 1_000, 10_000, 100_000, 1_000_000, 4_000_000, 10_000_000, 100_000_000, 1_000_000_000)
DARSHAN_LABELS = ("0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M", "10M-100M",
                  "100M-1G", "1G+")


def darshan_histogram(sizes: np.ndarray) -> dict[str, int]:
    """Counts per Darshan bucket; a bucket holds [edge, next edge)."""
    buckets = np.searchsorted(np.array(DARSHAN_EDGES[1:]), sizes, side="right")
    counts = np.bincount(buckets, minlength=len(DARSHAN_LABELS))
    return {label: int(c) for label, c in zip(DARSHAN_LABELS, counts)}


def log2_histogram(values: np.ndarray) -> list[dict[str, int]]:
    """[{lo, hi, count}] over non-empty buckets [2^k, 2^(k+1)); zero falls in the first."""
    if len(values) == 0:
        return []
    clipped = np.maximum(values, 1)
    buckets = np.floor(np.log2(clipped)).astype(np.int64)
    counts = np.bincount(buckets)
    return [{"lo": 0 if k == 0 else 1 << k, "hi": 1 << (k + 1), "count": int(c)} for k, c in enumerate(counts) if c]


def distribution(values: np.ndarray) -> dict[str, object]:
    """Percentiles, mean and a log2 histogram: a distribution, never a lone mean."""
    if len(values) == 0:
        return {"count": 0}
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {"count": int(len(values)), "mean": float(values.mean()), "p50": float(p50), "p90": float(p90),
            "p99": float(p99), "max": float(values.max()), "histogram_log2": log2_histogram(values)}

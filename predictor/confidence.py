"""How sure a prediction is of which of two candidates runs faster, and how well such
confidences held against measured runs.

A verdict ("ext4 is faster than xfs, 93% sure") is P(the measured ratio of the two
runtimes favours the one predicted faster).  The predicted ratio's log is taken as normal
around the truth, with a spread from two sources that differ between the candidates:
- the model's error of a ratio of two runtimes (RuntimeEstimator.ratio_log_sd), learnt from
  the ratios it predicted for programs it was not fitted on;
- each candidate's cost measurements: the spread of its filesystem time from its cost
  table, as a share of its runtime (cost_log_sd), independent between candidates.
The runtimes' own intervals would count the error both candidates share, the time outside
the filesystem, as if it could reorder them.

`predict` states its verdicts with order_confidence, and the validation judges them with the
same function on every pair of targets it measured (reliability): a confidence is honest where
the pairs called at 90% are right about 90% of the time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy import stats

Z95 = float(stats.norm.ppf(0.975))
# The confidence bins a validation counts its pairs in (lower edges): coin flips, leanings,
# verdicts, and verdicts the report calls "very likely".
CONFIDENCE_BINS = (0.5, 0.8, 0.9, 0.95)


def normal_cdf(z: float) -> float:
    """The standard normal distribution function (scipy's norm.cdf costs 0.1 ms a call)."""
    return 0.5 * math.erfc(-z / math.sqrt(2))


def cost_log_sd(fs_low_s: float, fs_high_s: float, fs_scale: float, runtime_s: float) -> float:
    """One standard deviation of a candidate's runtime from its cost measurements alone, as a
    share of the runtime: its filesystem time's 95% interval (`fs_low_s`..`fs_high_s`, as the
    cost table prices it) times the factor the model scaled that time by (`fs_scale`)."""
    if runtime_s <= 0:
        return 0.0
    return (fs_high_s - fs_low_s) / (2 * Z95) * fs_scale / runtime_s


def cost_log_sds(rows: Sequence[Mapping[str, Any]], fs_s: Sequence[float], runtime_s: Sequence[float]) -> list[float]:
    """cost_log_sd of each of a workload's runtime model rows (estimator.COLUMNS: the cost
    table's `fs_s` and its interval), whose filesystem part the model made `fs_s` and whose
    runtime `runtime_s`, in the form the verdict is about."""
    return [cost_log_sd(row["fs_low_s"], row["fs_high_s"], fs / row["fs_s"] if row["fs_s"] > 0 else 1.0, runtime)
            for row, fs, runtime in zip(rows, fs_s, runtime_s)]


def order_confidence(faster_s: float, slower_s: float, log_sds: Sequence[float]) -> float:
    """P(the candidate predicted to take `faster_s` really is the faster of the two), the
    predicted ratio's log against the spreads `log_sds` (independent; module docstring)."""
    if faster_s <= 0 or slower_s <= 0:
        return 0.5
    spread = math.hypot(*log_sds)
    return normal_cdf(math.log(slower_s / faster_s) / max(spread, 1e-12))


@dataclass(frozen=True)
class ConfidenceBin:
    """The judged pairs whose verdict's confidence fell in [low, high): how many, how sure the
    verdicts were on average, and how many were right."""

    low: float
    high: float
    pairs: int
    mean_confidence: float
    right: int


@dataclass(frozen=True)
class Reliability:
    """How well verdicts' confidences held on a set of judged pairs: by bin, and in all (the
    right count against the count the confidences expect, and the Brier score, 0 for sure and
    right every time, 0.25 for coin flips)."""

    bins: list[ConfidenceBin]
    pairs: int
    right: int
    expected_right: float
    brier: float

    @property
    def sure(self) -> ConfidenceBin | None:
        """The verdicts at 90% confidence or more, merged: the ones a buyer acts on."""
        picked = [b for b in self.bins if b.low >= 0.9 and b.pairs]
        if not picked:
            return None
        pairs = sum(b.pairs for b in picked)
        mean = sum(b.mean_confidence * b.pairs for b in picked) / pairs
        return ConfidenceBin(0.9, 1.0, pairs, mean, sum(b.right for b in picked))


def reliability(confidences: Sequence[float], right: Sequence[bool]) -> Reliability:
    """The reliability of verdicts with these `confidences` (each >= 0.5) that were or were not
    `right` against measured runs."""
    edges = [*CONFIDENCE_BINS, 1.0 + 1e-9]
    bins = []
    for low, high in zip(edges, edges[1:]):
        picked = [(c, r) for c, r in zip(confidences, right) if low <= c < high]
        mean = sum(c for c, _ in picked) / len(picked) if picked else 0.0
        bins.append(ConfidenceBin(low, min(high, 1.0), len(picked), mean, sum(r for _, r in picked)))
    n = len(confidences)
    brier = sum((c - float(r)) ** 2 for c, r in zip(confidences, right)) / n if n else float("nan")
    return Reliability(bins, n, int(sum(right)), float(sum(confidences)), brier)

"""Park and Lipton's per-request cost model, fitted to fsbench measurements.

    t(b) = S + ceil(b / d) * D + C * b          (Park and Lipton 1986, eq. for T_r, T_w)

S is the fixed cost of a request (system call, seek, lookup), D the cost of each block
of size d it touches, C the per-byte cost (copying).  An overwrite that does not end on
a block boundary first reads the block (their T_ow): that read is the extra term R,
fitted only where the sizes include both partial and whole blocks.

Fitted by ordinary least squares (statsmodels) on the repetition means of each size,
so the 95% intervals reflect how much the measurements varied.  When the sizes cannot
separate a term (e.g. all below one block, so ceil(b/d) is constant), that term is
left out and the fit says so instead of reporting a meaningless number.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

TERMS = ("S", "D", "C", "R")


@dataclass(frozen=True)
class Estimate:
    value: float
    ci95_low: float
    ci95_high: float


@dataclass
class ParkLiptonFit:
    """Fitted S (ns), D (ns per block), C (ns per byte), R (ns per partial block) with intervals."""

    bench: str
    op: str
    order: str
    cache: str
    block_size: int
    params: dict[str, Estimate]
    r_squared: float
    observations: int
    sizes: list[int]
    omitted: list[str] = field(default_factory=list)

    def predict_ns(self, size: int) -> float:
        """Modelled mean latency of one request of `size` bytes."""
        value = 0.0
        for term, x in zip(TERMS, _regressors(size, self.block_size)):
            if term in self.params:
                value += self.params[term].value * x
        return value

    def to_json(self) -> dict[str, Any]:
        body = asdict(self)
        body["params"] = {k: asdict(v) for k, v in self.params.items()}
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> "ParkLiptonFit":
        body = dict(body)
        body["params"] = {k: Estimate(**v) for k, v in body["params"].items()}
        return cls(**body)


def order_label(case: dict[str, Any]) -> str:
    """A case's order, with its gap for forward reads ("forward+65536"): each gap is a
    curve of its own, fitted and looked up apart from the others."""
    return f"{case['order']}+{case['gap']}" if case.get("gap") else case["order"]


def _regressors(size: int, block_size: int) -> tuple[float, float, float, float]:
    """(1, ceil(b/d), b, [b not a multiple of d]) for one request size."""
    return (1.0, float(math.ceil(size / block_size)), float(size), float(size % block_size != 0))


def fit(bench: str, op: str, order: str, cache: str, block_size: int,
        observations: Iterable[tuple[int, float]]) -> ParkLiptonFit | None:
    """Fit one (benchmark, order, cache) curve from (size, mean latency ns) pairs.

    Returns None when fewer than three distinct sizes were measured: three or more
    parameters cannot be told apart from fewer points.
    """
    points = [(int(s), float(t)) for s, t in observations if t is not None and math.isfinite(t)]
    sizes = sorted({s for s, _ in points})
    if len(sizes) < 3:
        return None
    # Loaded here, not at the top: statsmodels takes a second, and most commands never fit.
    import numpy as np
    import statsmodels.api as sm

    x = np.array([_regressors(s, block_size) for s, _ in points])
    y = np.array([t for _, t in points])
    use_rmw = bench == "overwrite"
    columns, omitted = [0], []
    for index, term in ((1, "D"), (2, "C"), (3, "R")):
        if term == "R" and not use_rmw:
            continue
        candidate = columns + [index]
        if np.linalg.matrix_rank(x[:, candidate]) == len(candidate):
            columns = candidate
        else:
            omitted.append(term)
    names = [TERMS[i] for i in columns]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny samples make statsmodels chatty about kurtosis tests
        result = sm.OLS(y, x[:, columns]).fit()
        intervals = np.asarray(result.conf_int(alpha=0.05))
    params = {
        name: Estimate(float(result.params[i]), float(intervals[i][0]), float(intervals[i][1]))
        for i, name in enumerate(names)
    }
    r_squared = float(result.rsquared) if math.isfinite(result.rsquared) else 1.0
    return ParkLiptonFit(bench, op, order, cache, block_size, params, r_squared, len(points), sizes, omitted)


def fit_fsbench_results(results: list[dict[str, Any]]) -> list[ParkLiptonFit]:
    """One fit per data (benchmark, order, cache) in an fsbench document's results, over
    the cases each made in one request of its size (not those in a workload's requests)."""
    groups: dict[tuple[str, str, str, str, int], list[tuple[int, float]]] = {}
    for r in results:
        if r.get("family") != "data" or r.get("size") is None or r.get("request_sizes"):
            continue
        key = (r["bench"], r["op"], order_label(r), r["cache"], int(r["block_size"]))
        groups.setdefault(key, []).extend((r["size"], m) for m in r.get("rep_means_ns", []))
    fits = []
    for (bench, op, order, cache, block_size), points in sorted(groups.items()):
        fitted = fit(bench, op, order, cache, block_size, points)
        if fitted is not None:
            fits.append(fitted)
    return fits


def nonnegative_fit(points: Iterable[tuple[int, float]], block_size: int, *, with_rmw: bool = False) -> dict[str, float]:
    """S, D, C (and R) >= 0 minimizing the *relative* error over (size, mean latency ns) points.

    The OLS fit above is for reading: its terms and intervals say what a request costs.
    With sizes from 512 B to 1 MiB, ceil(b/d) and b are nearly collinear, so OLS often
    trades a negative D against a large C, and its absolute-error fit is ruled by the big
    requests.  Prediction between measured sizes needs a curve that never goes negative and
    fits the small requests as well as the large: non-negative least squares on rows
    divided by the latency they should reproduce.
    """
    import numpy as np
    from scipy.optimize import nnls

    rows = [(s, t) for s, t in points if t is not None and math.isfinite(t) and t > 0]
    if not rows:
        return {}
    terms = 4 if with_rmw else 3
    x = np.array([_regressors(s, block_size)[:terms] for s, _ in rows])
    y = np.array([t for _, t in rows])
    solution, _ = nnls(x / y[:, None], np.ones(len(y)))
    return {name: float(v) for name, v in zip(TERMS[:terms], solution)}


def evaluate(params: dict[str, float], size: int, block_size: int) -> float:
    """t(size) under parameters from nonnegative_fit."""
    return sum(params.get(term, 0.0) * x for term, x in zip(TERMS, _regressors(size, block_size)))

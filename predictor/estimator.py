"""The runtime model (DESIGN: Prediction): a workload's runtime on a candidate is the time it
spends outside the filesystem plus its time in the filesystem, count x cost, taken by the
candidate's calibration factor:

    runtime = outside + factor x filesystem

This is the one formula: `fsbm predict` and its relative form, the report's chart of cache
sizes and both validations all compute a runtime through `RuntimeEstimator` or
`runtime_seconds`.  The estimator keeps scikit-learn's contract (`__init__` stores
parameters, `fit(X, y)` learns from y, `predict(X)` has no side effects), so validation is
ordinary grouped cross-validation: with LeaveOneGroupOut over programs, no program is judged
by a model that saw it.

X holds one row per (workload, candidate); COLUMNS names its columns:
- `key`: the candidate's filesystem and state ("xfs fresh", calibration_key), which a model
  stored when factors were kept per filesystem looks its factor up by;
- `fs_s`, `fs_low_s`, `fs_high_s`: count x cost in the filesystem over the workload's
  processes working at once (predict.concurrency), and the 95% interval of those costs;
- `outside_s`, `outside_low_s`, `outside_high_s`: the time outside the filesystem, and its band;
- `evidence`: what that time rests on, one of EVIDENCE;
- for the relative form (evidence "measured"), `measured_s` (a runtime measured on the
  traced candidate), `traced_key`, `traced_fs_s`, `traced_fs_low_s`, `traced_fs_high_s`
  (count x cost there) and `traced` (whether the row is the traced candidate).  The time
  outside is then the measured runtime less the traced filesystem's part (Mesnier's
  relative fitness: only the filesystem part changes).  Where the model prices the
  filesystem above the whole measured runtime, nothing is left outside and the filesystem
  times are scaled down to the measurement.  Where it leaves more outside than a plain trace
  told (`outside_evidence`, the trace's evidence), the trace's call durations say which
  operations were priced low on the traced candidate, and by how much (EXCESS_COLUMN,
  told_costs.TracedExcess): up to that much of the difference is theirs, carried to each
  candidate by its own price of those operations (CARRY_COLUMN): 8,000 copies that ext4
  made slower than priced are no work that xfs, cloning the same files, does too.  What is
  still left outside beyond the top of the trace's band (the band `gap_shift_` gives it,
  _outside_band) is the traced filesystem's time too, of no operation the durations name:
  the time outside is the band's top, and the filesystem times are scaled up to the
  measurement alike.  A recording's or a capture's difference stays outside, as the rest of
  this form's.

y: measured runtimes, in seconds.  What `fit` learns from it:
- `factors_`: with `calibrate`, one factor for every candidate (kept under POOLED): the
  multiple of count x cost that makes the runtimes right, fitted to the log of predicted
  over measured runtime (_fit_runtime_factor).  Each program weighs by how far the factor
  moves its runtime, the share of it the filesystem's part is: a compile whose filesystem
  part is 7 ms of 3.4 s says nothing of that part's price, and a ratio of the two leftovers
  would say anything.  One factor, not one per filesystem: the model's prices stood below
  the replays alike on every filesystem and operation (docs/model-evidence.md), and a
  factor per filesystem would fit each image's drift of the hour into the ratios;
- `errors_`: per evidence, the 90% prediction interval of a new workload's error
  (predicted / measured - 1; _error_band), which gives its runtime's 90% interval.  Given
  `groups` (the programs), each row's error is that of a model fitted without its group.
  Where the time outside came with a band of its own (a plain trace's, from the tracing
  calibration: programs neither set holds), the interval spans both: a dozen programs'
  errors do not show that a new program's time outside is told better than that.  A log
  without -T (evidence "trace-untimed") is the exception: its calibration band is that of
  small warm loops almost all tracing, which its rule tells from -90% to +600%, and the
  errors learnt on whole programs left out replace it, wider either side, in quadrature, by
  column `outside_lean_s` where X has it (what the estimate took off for the trace's lean),
  and spanned together with the per-gap band of `gap_shift_` below where the fit learnt one;
- `table_spread_`: how far one cost table's filesystem time strays from another's of the
  same candidate, measured independently (a standard deviation of its log, from the column
  `fs_table_log_diff`, log of one table's time over the other's, where X has it).  The
  errors above were judged against one table's prices; a user's own table is another draw,
  so each interval is widened by this spread, in quadrature, in proportion to the share of
  the runtime the filesystem's part is (what a second table moves);
- `gap_shift_`: for plain traces (column `outside_per_gap_s`, how far the time outside moves
  per ns a gap is taken to have cost under tracing), how far that per-gap constant would have
  had to move to make each program's runtime right ((predicted - measured) / that column;
  a program's median over its candidates, from programs whose runtime the constant moves by
  at least MIN_GAP_SENSITIVITY a microsecond), as a 90% prediction interval over the programs
  (`low`, `high`, in ns).  The time outside of a new trace is then given the band those
  constants span, which for a trace of 80,000 calls is wide and for one of 2,000 narrow, in
  place of the tracing calibration's band (programs whose gaps are not a new program's), and
  so is a log without -T's, whose rule takes a median off each gap in place of the constant
  (column `outside_per_gap_s` counts its gaps the same way);
  its low end is divided by column `outside_stretch` where X has it (how far sharing the
  cores with the tracer may have slowed the trace's work, tracing.shared_cores_stretch), and
  each end lies further, in quadrature, by column `outside_lean_s` where X has it (what the
  estimate took off for the trace's own lean, uncertain by as much again: spread_by);
- `host_drift_`: for recordings (column `outside_then_s`, the time outside as the recording
  made before the runs told it, where `outside_s` is the runs' own), how far that moved each
  program's runtime (log of the runtime with the one over the runtime with the other, a
  program's median over its candidates), as a root mean square over the programs about 0:
  a user's recording is made once, at one minute of a shared host, and the host may be faster
  or slower when the program runs, whichever way it moved in the runs this was measured on.
  The errors above are then learnt from rows whose time outside came from the runs
  themselves, and a recording's interval is widened by this spread, in quadrature;
- `ratio_errors_`: per evidence, how far the ratio of two of one workload's predictions
  (two candidates) strays from the measured ratio, as a standard deviation of its log:
  what a ranking's confidence rests on.  Errors a workload makes on every candidate alike
  (its time outside) cancel in a ratio, so this is narrower than the runtimes' band.  Before
  any fit it is RATIO_LOG_SD_PRIOR, an assumption, not a measurement.
An estimator fitted on nothing predicts count x cost plus the time outside, with the
intervals of the costs and of the time outside: what a prediction rests on before any
validation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.model_selection import LeaveOneGroupOut

SCHEMA_VERSION = 1
POOLED = "*"
# What the time outside the filesystem rests on.
EVIDENCE = ("recording", "trace", "trace-untimed", "capture", "measured", "none")
UNTIMED_EVIDENCE = "trace-untimed"  # a plain trace without call durations (strace without -T)
ABSOLUTE_COLUMNS = ("key", "fs_s", "fs_low_s", "fs_high_s", "outside_s", "outside_low_s", "outside_high_s",
                    "evidence")
RELATIVE_COLUMNS = ("measured_s", "traced", "traced_key", "traced_fs_s", "traced_fs_low_s", "traced_fs_high_s")
COLUMNS = ABSOLUTE_COLUMNS + RELATIVE_COLUMNS
TABLE_COLUMN = "fs_table_log_diff"  # optional: log of one table's filesystem time over a second table's
# Optional: seconds a plain trace's time outside falls per ns more taken off each gap (Outside.per_gap_s).
GAP_COLUMN = "outside_per_gap_s"
# Optional: the most a plain trace's work may have been slowed beside its tracer (Outside.stretch).
STRETCH_COLUMN = "outside_stretch"
# Optional: what a plain trace's time outside took off for tracing's lean (Outside.lean_s).
LEAN_COLUMN = "outside_lean_s"
# Optional: a recording's time outside as the recording made before the runs told it, where
# outside_s is the runs' own (host_drift_).
THEN_COLUMN = "outside_then_s"
# Optional, relative form: what a trace's call durations told its operations took beyond their
# prices on the traced candidate, seconds (told_costs.TracedExcess), and per second of it
# there, the seconds it carries to on this row's candidate (TracedExcess.carry).
EXCESS_COLUMN = "traced_told_excess_s"
CARRY_COLUMN = "told_carry"
# A program tells how far the per-gap constant strays only where a microsecond more of it moves
# its runtime by at least this share (on the development set's afternoon runs, checkpoint's 455
# calls moved it 0.3% and said -99 us; every program of thousands of calls moved it 1-13%).
MIN_GAP_SENSITIVITY = 0.01
Z90 = float(stats.norm.ppf(0.95))  # half a 90% interval, in standard deviations
# A ratio of two predictions before a validation measured how far ratios stray: assumed off by
# 10% (one standard deviation of its log), the size of the ratio errors the validations publish
# (docs/validation-plain-dev.md) between their median and their largest.
RATIO_LOG_SD_PRIOR = 0.10
NO_FACTOR = {"factor": 1.0, "low": 1.0, "high": 1.0, "log_sd": 0.0, "n": 0}
PARTS = ("runtime", "low", "high", "fs", "outside")


def runtime_seconds(outside_s: Any, fs_s: Any, factor: Any = 1.0) -> Any:
    """The runtime formula, for scalars or arrays alike."""
    return outside_s + factor * fs_s


def _t_interval(logs: np.ndarray, n: int, alpha: float) -> tuple[float, float, float]:
    """The mean of `logs`, their spread, and the half-width of a 1 - alpha prediction interval
    for a new one, with `n` independent observations behind them (t, n - 1 degrees of
    freedom); a spread of log 2 where there is one."""
    centre = float(np.mean(logs))
    spread = float(np.std(logs, ddof=1)) if len(logs) > 1 else math.log(2.0)
    n = max(n, 1)
    return centre, spread, float(stats.t.ppf(1 - alpha / 2, max(n - 1, 1))) * spread * math.sqrt(1 + 1 / n)


# The most a fitted factor may take count x cost by, either way.
FACTOR_BOUND = 4.0


def _fit_runtime_factor(outside: np.ndarray, fs: np.ndarray, y: np.ndarray, alpha: float) -> dict[str, float]:
    """The factor f that makes runtimes outside + f x fs nearest the measured y, by the sum of
    squared log errors (within 1/FACTOR_BOUND and FACTOR_BOUND), and a 1 - alpha interval of
    its log: the residuals' spread over how far f moves the predictions (each row's share of
    the filesystem's part, d log runtime / d log f), t with n - 1 degrees of freedom."""
    def loss(log_f: float) -> float:
        return float(np.sum(np.log((outside + math.exp(log_f) * fs) / y) ** 2))

    bound = math.log(FACTOR_BOUND)
    log_f = float(optimize.minimize_scalar(loss, bounds=(-bound, bound), method="bounded").x)
    factor = math.exp(log_f)
    predicted = outside + factor * fs
    residuals = np.log(predicted / y)
    share = factor * fs / predicted
    n = len(y)
    spread = float(np.sqrt(np.sum(residuals ** 2) / max(n - 1, 1)))
    leverage = float(np.sqrt(np.sum(share ** 2)))
    log_sd = spread / leverage if leverage > 0 else math.log(2.0)
    half = float(stats.t.ppf(1 - alpha / 2, max(n - 1, 1))) * log_sd
    return {"factor": factor, "low": math.exp(log_f - half), "high": math.exp(log_f + half), "log_sd": log_sd,
            "n": n}


def _error_band(errors: np.ndarray, groups: int, alpha: float) -> dict[str, float]:
    """The 1 - alpha prediction interval of a new workload's error, from `errors` (predicted
    / measured - 1) of `groups` programs: on log(1 + error), with as many independent
    observations as programs, not rows, since a program's errors on its candidates move
    together.  A handful of programs cannot pin the tails: their empirical 5th and 95th
    percentiles held too few of the programs left out of the fit."""
    centre, spread, half = _t_interval(np.log1p(errors), max(groups, 2), alpha)
    return {"p5": math.expm1(centre - half), "p95": math.expm1(centre + half), "log_mean": centre,
            "log_sd": spread, "programs": groups, "n": int(len(errors))}


def _ratio_spread(log_errors: np.ndarray, groups: np.ndarray) -> dict[str, float] | None:
    """The spread of the log of a predicted ratio over the measured one, from the log errors
    of every pair of rows of one group (one program on two candidates): the root mean square
    of their differences (the ratio is right on average when the errors are).  None without
    a pair."""
    diffs, programs = [], 0
    for g in set(groups):
        mine = log_errors[groups == g]
        diffs += [a - b for i, a in enumerate(mine) for b in mine[i + 1:]]
        programs += len(mine) > 1
    if not diffs:
        return None
    return {"log_sd": float(np.sqrt(np.mean(np.square(diffs)))), "pairs": len(diffs), "programs": programs}


def _table_spread(X: pd.DataFrame) -> dict[str, float] | None:
    """One table's standard deviation of log filesystem time, from the differences between
    two independent tables of the same candidates: the root mean square of the difference
    over sqrt(2), since each of the two is a draw.  None where X has no second table."""
    diffs = _Columns(X)(TABLE_COLUMN, dtype=float)
    diffs = diffs[np.isfinite(diffs)]
    if not len(diffs):
        return None
    return {"log_sd": float(np.sqrt(np.mean(np.square(diffs)) / 2)), "n": int(len(diffs))}


def _host_drift(X: pd.DataFrame, groups: np.ndarray) -> dict[str, float] | None:
    """How far the host moved a recording's runtime between the recording and the runs: per
    row, the log of the runtime with the time outside the recording told (THEN_COLUMN) over the
    runtime with the runs' own; a program's median over its rows; their root mean square about
    0 over the programs, since the host's next move may go either way.  None where X has no
    such column."""
    column = _Columns(X)
    then = column(THEN_COLUMN, dtype=float)
    fs = column("fs_s", dtype=float)
    now = runtime_seconds(column("outside_s", dtype=float), fs)
    pick = np.isfinite(then) & (now > 0) & (column("evidence", "none") == "recording")
    if not pick.any():
        return None
    logs = pd.Series(np.log(runtime_seconds(then[pick], fs[pick]) / now[pick])).groupby(groups[pick]).median()
    return {"log_sd": float(np.sqrt(np.mean(np.square(logs)))), "programs": int(len(logs)),
            "log_mean": float(np.mean(logs))}


def _gap_shift(X: pd.DataFrame, y: np.ndarray, over: np.ndarray, groups: np.ndarray,
               alpha: float) -> dict[str, float] | None:
    """The 1 - alpha prediction interval of the shift of a plain trace's per-gap constant
    that would make a new program's runtime right (ns), from the plain-trace rows' `over`
    (predicted less measured seconds) over GAP_COLUMN, a median per program; None with fewer
    than three programs.  Only rows whose measured runtime `y` the constant moves by at least
    MIN_GAP_SENSITIVITY a microsecond count: a program of a few hundred calls that errs by a
    quarter for another reason would otherwise say the constant strayed by 100 us."""
    column = _Columns(X)
    slope = column(GAP_COLUMN, 0.0, dtype=float)
    sensitive = slope * 1_000 >= MIN_GAP_SENSITIVITY * np.where(y > 0, y, np.inf)
    rows = (column("evidence", "none") == "trace") & (slope > 0) & sensitive & np.isfinite(over)
    shift = np.where(rows, over / np.where(slope > 0, slope, 1.0), np.nan)
    shifts = [float(np.median(shift[rows & (groups == g)])) for g in sorted(set(groups[rows]))]
    if len(shifts) < 3:
        return None
    centre, spread, half = _t_interval(np.asarray(shifts), len(shifts), alpha)
    return {"low": centre - half, "high": centre + half, "programs": len(shifts), "sd": spread}


def spread_by(centre: Any, low: Any, high: Any, extra: Any) -> tuple[Any, Any]:
    """The band `low`..`high` about `centre` with `extra` seconds more either side, in
    quadrature (the low end never below 0), for scalars or arrays alike: an uncertainty
    independent of the one the band holds.  Each end moves out by what `extra` adds to its
    distance from the centre, so a band that lies off its centre (a per-gap shift that did
    not straddle 0) keeps its place, and no `extra` leaves it as it was."""
    below, above = np.abs(centre - low), np.abs(high - centre)
    return (np.maximum(low - (np.hypot(below, extra) - below), 0.0),
            high + (np.hypot(above, extra) - above))


def _widened(runtime: np.ndarray, low: np.ndarray, high: np.ndarray, extra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each side of an interval widened by `extra` (a log half-width) in quadrature."""
    safe = np.where(runtime > 0, runtime, 1.0)
    down = np.log(safe / np.where(low > 0, low, safe * 1e-9))
    up = np.log(np.where(high > 0, high, safe) / safe)
    widened_low = safe * np.exp(-np.hypot(np.maximum(down, 0.0), extra))
    widened_high = safe * np.exp(np.hypot(np.maximum(up, 0.0), extra))
    return np.where(runtime > 0, widened_low, low), np.where(runtime > 0, widened_high, high)


class _Columns:
    """X's columns as arrays.  X is a DataFrame with COLUMNS, or the same rows as a list of
    dicts: a single prediction's handful of rows, where building a DataFrame and reading its
    columns costs more than the arithmetic."""

    def __init__(self, X: pd.DataFrame | list[dict[str, Any]]) -> None:
        self.n = len(X)
        if isinstance(X, pd.DataFrame):
            self._arrays = {name: X[name].to_numpy() for name in X.columns}
        else:
            names = {name for row in X for name in row}
            self._arrays = {name: np.array([row.get(name, np.nan) for row in X]) for name in names}

    def __call__(self, name: str, default: Any = np.nan, dtype: Any = None) -> np.ndarray:
        """Column `name`, or `default` in every row where X has no such column."""
        values = self._arrays.get(name)
        if values is None:
            values = np.full(self.n, default, dtype=object if isinstance(default, str) else None)
        return values.astype(dtype, copy=False) if dtype is not None else values


class RuntimeEstimator(BaseEstimator, RegressorMixin):
    """Runtime seconds = outside + factor x filesystem seconds (module docstring).

    `calibrate`: learn a factor per key from y (False: every factor is 1, the raw model);
    `alpha`: the factors' and the errors' prediction intervals are 1 - alpha."""

    def __init__(self, calibrate: bool = False, alpha: float = 0.1) -> None:
        self.calibrate = calibrate
        self.alpha = alpha

    # -- learning ------------------------------------------------------------------------------

    def fit(self, X: pd.DataFrame, y: Any, groups: Any = None) -> "RuntimeEstimator":
        y = np.asarray(y, float)
        self.factors_: dict[str, dict[str, float]] = self._fit_factors(X, y) if self.calibrate else {}
        self.table_spread_: dict[str, float] | None = _table_spread(X)
        self.errors_: dict[str, dict[str, float]] = {}
        self.ratio_errors_: dict[str, dict[str, float]] = {}
        self.gap_shift_: dict[str, float] | None = None
        self.host_drift_: dict[str, float] | None = None
        if len(X) == 0 or (groups is not None and len(set(np.asarray(groups))) < 2):
            return self  # errors are learnt from programs left out, and one program leaves none
        if groups is None:
            predicted = self.predict(X)
        else:
            predicted = np.full(len(X), np.nan)
            for train, test in LeaveOneGroupOut().split(X, groups=groups):
                model = clone(self).fit(X.iloc[train], y[train])
                predicted[test] = model.predict(X.iloc[test])
        errors = predicted / y - 1
        evidence = _Columns(X)("evidence", "none")
        groups = np.asarray(groups) if groups is not None else np.arange(len(X))
        self.gap_shift_ = _gap_shift(X, y, predicted - y, groups, self.alpha)
        self.host_drift_ = _host_drift(X, groups)
        for kind in sorted(set(evidence)):
            pick = (evidence == kind) & np.isfinite(errors) & (errors > -1)
            if pick.any():
                self.errors_[kind] = _error_band(errors[pick], len(set(groups[pick])), self.alpha)
                spread = _ratio_spread(np.log1p(errors[pick]), groups[pick])
                if spread is not None:
                    self.ratio_errors_[kind] = spread
        return self

    def _fit_factors(self, X: pd.DataFrame, y: np.ndarray) -> dict[str, dict[str, float]]:
        """One factor for every candidate (POOLED), fitted to the runtimes (_fit_runtime_factor).
        The relative form's rows are left out: their time outside comes from a measurement
        that already holds the factor."""
        column = _Columns(X)
        outside, fs = column("outside_s", dtype=float), column("fs_s", dtype=float)
        usable = (column("evidence", "none") != "measured") & (fs > 0) & (y > 0) & (outside >= 0)
        if not usable.any():
            return {}
        return {POOLED: _fit_runtime_factor(outside[usable], fs[usable], y[usable], self.alpha)}

    # -- predicting ----------------------------------------------------------------------------

    def factor(self, key: str) -> dict[str, Any]:
        """The factor a candidate's filesystem time is taken by, and which fit it is: the one
        for every filesystem, its key's own (a model stored when factors were kept per key), or
        none (1)."""
        factors = getattr(self, "factors_", {})
        if key in factors:
            return {**factors[key], "key": key}
        if POOLED in factors:
            return {**factors[POOLED], "key": "one for every filesystem"}
        why = "none (the raw model validated better)" if self.validated and not self.calibrate else "none"
        return {**NO_FACTOR, "key": why}

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.predict_parts(X)["runtime"]

    def predict_parts(self, X: pd.DataFrame) -> dict[str, np.ndarray]:
        """Per row: `runtime`, its 90% band `low` and `high`, `fs` (the filesystem's part, with
        its factor) and `outside`.  X: a DataFrame, or its rows as a list of dicts (_Columns)."""
        column = _Columns(X)
        factor = np.array([self.factor(k)["factor"] for k in column("key")], float)
        fs_s, fs_low, fs_high = (column(c, dtype=float) for c in ("fs_s", "fs_low_s", "fs_high_s"))
        fs = factor * fs_s
        outside = column("outside_s", dtype=float)
        evidence = column("evidence", "none")
        gap_banded = self._gap_banded(column, evidence)
        outside_low, outside_high = self._outside_band(column, gap_banded, outside)
        low = runtime_seconds(outside_low, fs_low, factor)
        high = runtime_seconds(outside_high, fs_high, factor)
        traced_row = column("traced", False, dtype=bool)
        relative = evidence == "measured"
        # What a second table of the traced candidate moves a relative row by, in seconds: its
        # filesystem part where the time outside rests on it; where the parts were scaled up to
        # the measurement (`beyond`), the row's own part, in proportion.
        other_fs = np.zeros(len(X))
        if relative.any():
            measured = column("measured_s", dtype=float)
            traced_factor = np.array([self.factor(k)["factor"] if isinstance(k, str) else 1.0
                                      for k in column("traced_key")], float)
            traced = traced_factor * column("traced_fs_s", dtype=float)
            # More left outside than a plain trace told: the durations' excess goes to the
            # operations they name (by_class); beyond the top of its band, the rest is the
            # traced filesystem's time alike (module docstring).
            told = column("outside_s", dtype=float)
            told_banded = self._gap_banded(column, column("outside_evidence", "none"))
            _, told_high = self._outside_band(column, told_banded, told)
            named = np.minimum(measured - traced - told, np.nan_to_num(column(EXCESS_COLUMN, 0.0, dtype=float)))
            by_class = np.where(relative & told_banded & (traced > 0), np.maximum(named, 0.0), 0.0)
            beyond = relative & told_banded & (traced > 0) & (measured - traced - by_class > told_high)
            per_traced = np.where(traced > 0, traced, 1.0)
            scale = np.where(traced > measured, measured / per_traced,
                             np.where(beyond, (measured - told_high - by_class) / per_traced, 1.0))
            outside = np.where(relative, np.where(beyond, told_high, np.maximum(measured - traced - by_class, 0.0)),
                               outside)
            fs = np.where(relative, scale * fs + by_class * np.nan_to_num(column(CARRY_COLUMN, 0.0, dtype=float)), fs)
            other_fs = np.where(relative, np.where(beyond, fs, scale * traced), 0.0)
            # The costs' spread of the difference between two candidates; none on the traced one.
            own = scale * factor * (fs_high - fs_low) / 2
            there = traced_factor * (column("traced_fs_high_s", dtype=float)
                                     - column("traced_fs_low_s", dtype=float)) / 2
            # Scaled up to the measurement, a candidate's part moves with the traced part's price
            # in proportion, not by its seconds: the time outside no longer rests on it.
            there = np.where(beyond, fs * there / per_traced, scale * there)
            half = np.where(traced_row, 0.0, np.hypot(own, there))
            centre = runtime_seconds(outside, fs)
            low = np.where(relative, np.maximum(centre - half, 0.0), low)
            high = np.where(relative, centre + half, high)
        runtime = runtime_seconds(outside, fs)
        # A time outside told with a band of its own (a trace's, from the tracing calibration)
        # keeps it: the programs the errors were learnt from are a few, and their band is no
        # evidence that a new program's time outside is told better than the calibration's.
        # But a log without -T's: the calibration's untimed band is its small warm loops' (almost
        # all tracing, which its rule mistakes by -90% to +600%), and the errors learnt from
        # whole programs left out of the fit replace it, as gap_shift_ does a timed trace's; or
        # span it together with the per-gap band (_outside_band) where the fit learnt one: the
        # errors of a dozen programs say little of one whose gaps are ten times theirs.
        own_band = (outside_high > outside_low) & ~relative
        learnt_untimed = (evidence == UNTIMED_EVIDENCE) & (UNTIMED_EVIDENCE in getattr(self, "errors_", {}))
        own_band &= ~learnt_untimed | gap_banded
        for kind, band in getattr(self, "errors_", {}).items():
            rows = evidence == kind
            if kind == "measured":
                rows &= ~traced_row
            learnt_low, learnt_high = runtime / (1 + band["p95"]), runtime / (1 + band["p5"])
            low = np.where(rows, np.where(own_band, np.minimum(learnt_low, low), learnt_low), low)
            high = np.where(rows, np.where(own_band, np.maximum(learnt_high, high), learnt_high), high)
        if learnt_untimed.any():
            # What the estimate took off for the trace's own lean is uncertain by as much again,
            # either side, as a timed trace's is (_outside_band).
            lean_low, lean_high = spread_by(runtime, low, high, column(LEAN_COLUMN, 0.0, dtype=float))
            low, high = np.where(learnt_untimed, lean_low, low), np.where(learnt_untimed, lean_high, high)
        spread = getattr(self, "table_spread_", None)
        if spread:
            # A second table moves the filesystem's part; in the relative form, both candidates'.
            moved = np.where(relative & traced_row, 0.0, np.hypot(fs, other_fs))
            share = moved / np.where(runtime > 0, runtime, 1.0)
            low, high = _widened(runtime, low, high, Z90 * spread["log_sd"] * share)
        drift = getattr(self, "host_drift_", None)
        if drift:
            # A recording's time outside was measured at one minute of the host, the run at another.
            extra = np.where(evidence == "recording", Z90 * drift["log_sd"], 0.0)
            low, high = _widened(runtime, low, high, extra)
        return {"runtime": runtime, "low": low, "high": high, "fs": fs, "outside": outside}

    def _gap_banded(self, column: "_Columns", evidence: np.ndarray) -> np.ndarray:
        """The rows whose time outside moves with what tracing is taken to have cost a gap
        (GAP_COLUMN), a plain trace's with or without -T, where the fit learnt how far that
        constant strays between programs (gap_shift_)."""
        slope = column(GAP_COLUMN, 0.0, dtype=float)
        learnt = bool(getattr(self, "gap_shift_", None))
        return learnt & np.isin(evidence, ("trace", UNTIMED_EVIDENCE)) & (slope > 0)

    def _outside_band(self, column: "_Columns", gap_banded: np.ndarray,
                      outside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The time outside's band: as X gives it, but on the `gap_banded` rows (a plain trace's,
        _gap_banded) from the per-gap constant's shifts learnt by the fit (gap_shift_), its low
        end divided by how far sharing the cores with the tracer may have slowed the trace's work
        (STRETCH_COLUMN).
        A log without -T takes a median off each gap rather than the constant, but what tracing
        cost a gap strays as much either way, so a program of many calls is uncertain by that
        much whatever the errors of other such logs (predict_parts spans both)."""
        low, high = column("outside_low_s", dtype=float), column("outside_high_s", dtype=float)
        shift = getattr(self, "gap_shift_", None)
        if not shift:
            return low, high
        slope = column(GAP_COLUMN, 0.0, dtype=float)
        stretch = np.maximum(column(STRETCH_COLUMN, 1.0, dtype=float), 1.0)
        shifted_low, shifted_high = spread_by(outside, outside - shift["high"] * slope, outside - shift["low"] * slope,
                                              column(LEAN_COLUMN, 0.0, dtype=float))
        return (np.where(gap_banded, np.maximum(shifted_low, 0.0) / stretch, low),
                np.where(gap_banded, np.maximum(shifted_high, 0.0), high))

    def ratio_log_sd(self, evidence: str) -> float:
        """One standard deviation of the log of a ratio of two predictions with this evidence:
        learned by the fit, or RATIO_LOG_SD_PRIOR where it learned none."""
        learned = getattr(self, "ratio_errors_", {}).get(evidence)
        return float(learned["log_sd"]) if learned else RATIO_LOG_SD_PRIOR

    # -- keeping -------------------------------------------------------------------------------

    def to_json(self, fitted_on: str) -> dict[str, Any]:
        """The fitted model as a store document; `fitted_on` says what it learned from."""
        return {"kind": "runtime_model", "schema_version": SCHEMA_VERSION, "calibrate": self.calibrate,
                "alpha": self.alpha, "factors": getattr(self, "factors_", {}), "errors": getattr(self, "errors_", {}),
                "ratio_errors": getattr(self, "ratio_errors_", {}), "table_spread": getattr(self, "table_spread_", None),
                "gap_shift": getattr(self, "gap_shift_", None), "host_drift": getattr(self, "host_drift_", None),
                "fitted_on": fitted_on}

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> "RuntimeEstimator":
        model = cls(calibrate=bool(body.get("calibrate")), alpha=float(body.get("alpha", 0.1)))
        model.factors_ = dict(body.get("factors") or {})
        model.errors_ = dict(body.get("errors") or {})
        model.ratio_errors_ = dict(body.get("ratio_errors") or {})
        model.table_spread_ = body.get("table_spread")
        model.gap_shift_ = body.get("gap_shift")
        model.host_drift_ = body.get("host_drift")
        model.fitted_on_ = body.get("fitted_on")
        return model

    @classmethod
    def unfitted(cls) -> "RuntimeEstimator":
        """The model before any validation: factor 1, the intervals of the costs and of the
        time outside (fitted on nothing)."""
        return cls().fit(pd.DataFrame(columns=list(COLUMNS)), [])

    @property
    def validated(self) -> bool:
        """Whether a validation fitted it (else its intervals are the costs' alone)."""
        return bool(getattr(self, "fitted_on_", None))

    @property
    def intervals_from(self) -> str:
        """What this model's 90% intervals rest on, in words a validation document prints."""
        if self.validated:
            return f"the runtime model fitted on {self.fitted_on_}"
        return ("the costs' own spread and the trace's evidence alone: no validation has fitted a runtime "
                "model in this store (`fsbm validate --plain --set dev` fits the one a trace's prediction takes)")


# What a validation's intervals rest on where each program is judged by a model fitted
# without it (predict_left_out), in the words its document prints.
LEFT_OUT_INTERVALS = "the errors of the other programs of this set (leave-one-program-out)"


def predict_left_out(fit: Callable[[Any], RuntimeEstimator], frames: list[pd.DataFrame],
                     groups: list[np.ndarray]) -> list[dict[str, np.ndarray]]:
    """Each row of each frame predicted (predict_parts) by `fit(group)`, a model the caller
    fits without that group's rows: leave-one-group-out over the groups (the programs) of
    every frame together."""
    out = [{key: np.full(len(frame), np.nan) for key in PARTS} for frame in frames]
    everyone = np.concatenate(groups)
    for _, test in LeaveOneGroupOut().split(everyone, groups=everyone):
        held_out = everyone[test[0]]
        model = fit(held_out)
        for frame, group, parts in zip(frames, groups, out):
            mine = group == held_out
            if mine.any():
                predicted = model.predict_parts(frame[mine])
                for key in PARTS:
                    parts[key][mine] = predicted[key]
    return out

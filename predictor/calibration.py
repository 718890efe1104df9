"""Calibration: correction coefficients fitted against measurements of training workloads
(issue 7), as scikit-learn estimators (fit/predict, so cross-validation works) whose
coefficients and intervals come from statsmodels.

FsCalibration, per candidate: how the time the replay of a workload really spends in
the filesystem compares with the count x cost sum.  Fitted as one factor per candidate on
log(replayed / modelled), so it is a ratio with an interval ("replays on xfs take 1.3x
what fsbench's costs say, 90% of workloads within 0.9-1.8x"), not a free regression on a
handful of rows.

RuntimeModel joins it with the time outside the filesystem: predicted runtime = outside +
(calibrated) filesystem time.  Whether the calibration is used at all is decided by
measurement: `fsbm validate` compares it with the raw model under leave-one-program-out
and keeps the better (predictor/judge.py).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from sklearn.base import BaseEstimator, RegressorMixin

from fsbm.predictor.model import GROUPS
from fsbm.predictor.outside import outside_seconds

FS_COLUMNS = tuple(f"fs_{g}_s" for g in GROUPS)
POOLED = "*"


def _log_ratio_fit(ratios: np.ndarray, alpha: float) -> dict[str, float]:
    """Geometric mean of ratios and a prediction interval for a new one (t on the logs)."""
    logs = np.log(ratios)
    n = len(logs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.OLS(logs, np.ones((n, 1))).fit()
    centre = float(fit.params[0])
    spread = float(np.sqrt(fit.scale)) if n > 1 else math.log(2.0)
    t = float(stats.t.ppf(1 - alpha / 2, max(n - 1, 1)))
    half = t * spread * math.sqrt(1 + 1 / n)
    return {"factor": math.exp(centre), "low": math.exp(centre - half), "high": math.exp(centre + half),
            "log_sd": spread, "n": n}


class FsCalibration(BaseEstimator, RegressorMixin):
    """Replayed filesystem seconds from modelled ones, one factor per candidate.

    X: a DataFrame with a `candidate` column and FS_COLUMNS (modelled seconds per group);
    y: replayed seconds.  A candidate not seen in fit gets the factor pooled over all."""

    def __init__(self, alpha: float = 0.1) -> None:
        self.alpha = alpha

    def fit(self, X: pd.DataFrame, y: Any) -> "FsCalibration":
        modelled = X[list(FS_COLUMNS)].sum(axis=1).to_numpy(float)
        replayed = np.asarray(y, float)
        usable = (modelled > 0) & (replayed > 0)
        self.factors_: dict[str, dict[str, float]] = {}
        ratios = replayed[usable] / modelled[usable]
        if len(ratios):
            self.factors_[POOLED] = _log_ratio_fit(ratios, self.alpha)
        candidates = X["candidate"].to_numpy()
        for candidate in sorted(set(candidates[usable])):
            pick = usable & (candidates == candidate)
            self.factors_[candidate] = _log_ratio_fit(replayed[pick] / modelled[pick], self.alpha)
        return self

    def factor(self, candidate: str) -> dict[str, float]:
        return self.factors_.get(candidate) or self.factors_.get(POOLED) or {"factor": 1.0, "low": 1.0, "high": 1.0,
                                                                              "log_sd": 0.0, "n": 0}

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        modelled = X[list(FS_COLUMNS)].sum(axis=1).to_numpy(float)
        return np.array([m * self.factor(c)["factor"] for m, c in zip(modelled, X["candidate"])])

    def predict_interval(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        modelled = X[list(FS_COLUMNS)].sum(axis=1).to_numpy(float)
        found = [self.factor(c) for c in X["candidate"]]
        return (np.array([m * f["low"] for m, f in zip(modelled, found)]),
                np.array([m * f["high"] for m, f in zip(modelled, found)]))


class RuntimeModel(BaseEstimator, RegressorMixin):
    """Runtime seconds = outside + filesystem time, calibrated or not.

    X holds per (workload, candidate) the candidate, FS_COLUMNS, outside.py's features and
    `replay_s` (the replay's measured seconds, what FsCalibration is fitted on).  The
    outside time is taken as measured (outside.py), not fitted: with a handful of training
    programs, every fitted outside model tried did worse under leave-one-program-out than
    the CPU time itself (docs/validation.md).  `calibrate=False` is the raw model."""

    def __init__(self, alpha: float = 0.1, calibrate: bool = True) -> None:
        self.alpha = alpha
        self.calibrate = calibrate

    def fit(self, X: pd.DataFrame, y: Any = None) -> "RuntimeModel":
        self.fs_ = FsCalibration(self.alpha).fit(X, X["replay_s"]) if self.calibrate else None
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.predict_parts(X)["runtime"]

    def predict_parts(self, X: pd.DataFrame) -> dict[str, np.ndarray]:
        modelled = X[list(FS_COLUMNS)].sum(axis=1).to_numpy(float)
        if self.fs_ is not None:
            fs = self.fs_.predict(X)
            fs_low, fs_high = self.fs_.predict_interval(X)
        else:
            fs, fs_low, fs_high = modelled, modelled, modelled
        out = outside_seconds(X).to_numpy(float)
        return {"fs": fs, "outside": out, "runtime": fs + out, "low": fs_low + out, "high": fs_high + out}

    def to_json(self) -> dict[str, Any]:
        return {"kind": "calibration", "schema_version": 2, "alpha": self.alpha,
                "fs_factors": self.fs_.factors_ if self.fs_ is not None else {}}

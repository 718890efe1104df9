"""Calibration: correction coefficients fitted against measurements of training workloads
(issue 7), as scikit-learn estimators (fit/predict, so cross-validation works) whose
coefficients and intervals come from statsmodels.

Two corrections, because the raw model misses in two different places:

- FsCalibration, per candidate: how the time the replay of a workload really spends in
  the filesystem compares with the count x cost sum.  Fitted as one factor per candidate
  on log(replayed / modelled), so it is a ratio with an interval ("replays on xfs take 1.3x
  what fsbench's costs say, 90% of workloads within 0.9-1.8x"), not a free regression on
  a handful of rows.
- OutsideCalibration, per machine: the time a program spends outside the filesystem,
  from what the trace can say about it without tracing's inflation: the CPU time the
  program's processes used, how many processes and threads it ran (each a start-up: exec,
  dynamic loading, page faults on a cold cache), and the time of its calls on other
  filesystems.  Fitted by OLS without intercept; a feature whose coefficient comes out
  negative is dropped (time cannot be negative) and the rest refitted.

RuntimeModel joins them: predicted runtime = outside + calibrated filesystem time.
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

FS_COLUMNS = tuple(f"fs_{g}_s" for g in GROUPS)
OUTSIDE_COLUMNS = ("user_cpu_s", "actors", "outside_calls_s")
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


class OutsideCalibration(BaseEstimator, RegressorMixin):
    """Seconds outside the filesystem from OUTSIDE_COLUMNS, by OLS through the origin."""

    def __init__(self, alpha: float = 0.1) -> None:
        self.alpha = alpha

    def fit(self, X: pd.DataFrame, y: Any) -> "OutsideCalibration":
        target = np.asarray(y, float)
        columns = list(OUTSIDE_COLUMNS)
        while True:
            design = X[columns].to_numpy(float)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = sm.OLS(target, design).fit()
            negative = [c for c, v in zip(columns, result.params) if v < 0]
            if not negative or len(columns) == 1:
                break
            columns.remove(min(negative, key=lambda c: result.params[columns.index(c)]))
        self.columns_ = columns
        self.result_ = result
        intervals = np.asarray(result.conf_int(alpha=self.alpha))
        self.coefficients_ = {c: {"value": float(v), "low": float(lo), "high": float(hi)}
                              for c, v, (lo, hi) in zip(columns, result.params, intervals)}
        self.residual_sd_ = float(np.sqrt(result.scale)) if result.df_resid > 0 else 0.0
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.clip(X[self.columns_].to_numpy(float) @ np.array([self.coefficients_[c]["value"]
                                                                      for c in self.columns_]), 0, None)

    def predict_interval(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        frame = self.result_.get_prediction(X[self.columns_].to_numpy(float)).summary_frame(alpha=self.alpha)
        return (np.clip(frame["obs_ci_lower"].to_numpy(), 0, None), np.clip(frame["obs_ci_upper"].to_numpy(), 0, None))


class RuntimeModel(BaseEstimator, RegressorMixin):
    """Runtime seconds = outside + calibrated filesystem time.

    fit(X, y): X holds per (workload, candidate) the candidate, FS_COLUMNS, OUTSIDE_COLUMNS
    and `replay_s` (the replay's measured seconds: what FsCalibration is fitted on); y is the
    program's measured runtime there.  The outside part is fitted on y less the calibrated
    filesystem time, over every candidate (a program's outside time is the same on each)."""

    def __init__(self, alpha: float = 0.1) -> None:
        self.alpha = alpha

    def fit(self, X: pd.DataFrame, y: Any) -> "RuntimeModel":
        self.fs_ = FsCalibration(self.alpha).fit(X, X["replay_s"])
        outside = np.asarray(y, float) - self.fs_.predict(X)
        self.outside_ = OutsideCalibration(self.alpha).fit(X, outside)
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.fs_.predict(X) + self.outside_.predict(X)

    def predict_parts(self, X: pd.DataFrame) -> dict[str, np.ndarray]:
        fs_low, fs_high = self.fs_.predict_interval(X)
        out_low, out_high = self.outside_.predict_interval(X)
        fs, out = self.fs_.predict(X), self.outside_.predict(X)
        # Independent errors: the half-widths add in quadrature.
        low = fs + out - np.sqrt((fs - fs_low) ** 2 + (out - out_low) ** 2)
        high = fs + out + np.sqrt((fs_high - fs) ** 2 + (out_high - out) ** 2)
        return {"fs": fs, "outside": out, "runtime": fs + out, "low": np.clip(low, 0, None), "high": high}

    def to_json(self) -> dict[str, Any]:
        return {"kind": "calibration", "schema_version": 1, "alpha": self.alpha,
                "fs_factors": self.fs_.factors_, "outside_coefficients": self.outside_.coefficients_,
                "outside_residual_sd_s": self.outside_.residual_sd_}

"""Predictions for a workload on candidate filesystems (issue 7: `fsbm predict`).

Per candidate: the runtime with a 90% interval, in two forms when it can:
- absolute: time outside the filesystem + calibrated count x cost.  Every trace gets one.
  The time outside comes from the best evidence the profile has: a `fsbm trace record`
  recording's untraced CPU time (outside.py); else the trace's own gaps between calls and
  its calls not on files, each less what tracing cost it (tracing.py); else, for a trace
  without timestamps or call durations, nothing.  `outside_evidence` says which.
- relative (Mesnier's relative fitness): a runtime measured on the traced filesystem, its
  filesystem part replaced by the candidate's.  Only the filesystem part changes: the rest
  of the measured runtime (CPU, waits on other devices) stays as measured.
and where the time goes, operation by operation; then the ranking and how sure it is.

The calibration is the newest one `fsbm validate` stored: a factor per filesystem and
state ("xfs aged"), used only if it predicted better than the raw model there, and the
spread of the validation's errors, which is the interval.  Without a validation the
interval is the measured costs' alone, and the output says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy import stats

from fsbm.errors import UsageError
from fsbm.predictor.calibration import POOLED
from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.model import CpuScales, FsTime, price_workload
from fsbm.predictor.outside import calls_cpu_seconds, cpu_scales, outside_features, outside_seconds
from fsbm.predictor.pricing import Pricer
from fsbm.predictor.tracing import Timeline, TracingCalibration, untraced_outside

SCHEMA_VERSION = 1
Z90 = float(stats.norm.ppf(0.95))


def calibration_key(table: CostTable) -> str:
    """What a calibration factor is kept under: filesystem type and whether it was aged."""
    aging = str(table.environment.get("aging_state") or "fresh")
    return f"{table.environment.get('fs_type', table.candidate)} {'aged' if aging.startswith('aged') else 'fresh'}"


@dataclass
class Calibration:
    """What `fsbm validate` measured: per-filesystem factors (used only when they were
    measured to help) and the spread of its leave-one-program-out errors (the interval)."""

    body: dict[str, Any] | None
    document_id: int | None = None

    @property
    def measured(self) -> bool:
        return self.body is not None

    def fs_factor(self, key: str) -> dict[str, Any]:
        if not self.body or not self.body.get("adopted"):
            return {"factor": 1.0, "key": "none (the raw model validated better)" if self.body else "none"}
        factors = self.body.get("fs_factors", {})
        found = factors.get(key) or factors.get(POOLED)
        if not found:
            return {"factor": 1.0, "key": "none"}
        return {**found, "key": key if key in factors else "pooled over all filesystems"}

    def interval(self, runtime: float) -> tuple[float, float] | None:
        """The 90% band of real runtimes given a prediction: from the validation's errors
        (error = predicted / real - 1), or None without a validation."""
        if not self.body or "error_p5" not in self.body:
            return None
        return _band(runtime, [self.body["error_p5"], self.body["error_p95"]])


def _candidate(profile: dict[str, Any], pricer: Pricer, table_id: int | None, calibration: Calibration,
               outside: "Outside", cache_bytes: int, start: str, scales: CpuScales) -> dict[str, Any]:
    table = pricer.table
    fs: FsTime = price_workload(profile, pricer, cache_bytes=cache_bytes, start=start, cpu_scales=scales)
    key = calibration_key(table)
    factor = calibration.fs_factor(key)
    modelled = fs.total_ns / 1e9
    fs_s = modelled * factor["factor"]
    runtime = fs_s + outside.seconds
    band = calibration.interval(runtime)
    if band is None:  # no validation yet: the 95% intervals of the measured costs and of the time outside
        band = (outside.low + fs.low_ns * factor["factor"] / 1e9, outside.high + fs.high_ns * factor["factor"] / 1e9)
    scale = factor["factor"] / 1e9
    return {
        "candidate": table.candidate, "calibration_key": key, "cost_table_id": table_id,
        "cost_table_measured_at": table.measured_at, "environment": {k: table.environment.get(k) for k in
                                                                      ("fs_type", "mount_options", "aging_state")},
        "runtime_s": runtime, "low_s": band[0], "high_s": band[1],
        "fs_s": fs_s, "fs_modelled_s": modelled, "fs_factor": factor, "outside_s": outside.seconds,
        "breakdown_s": {op: ns * scale for op, ns in fs.by_op().items()},
        "lines": [line.to_json() for line in fs.lines],
    }


@dataclass(frozen=True)
class Outside:
    """The time the workload spends outside the filesystem, with its 90% band, and what it
    rests on."""

    seconds: float
    low: float
    high: float
    evidence: str

    @classmethod
    def exactly(cls, seconds: float, evidence: str) -> "Outside":
        return cls(seconds, seconds, seconds, evidence)


def outside_from_trace(profile: dict[str, Any], calibration: TracingCalibration | None) -> Outside:
    """The time outside the filesystem of a plain trace (tracing.untraced_outside), or
    nothing, saying why."""
    estimate = untraced_outside(Timeline.of(profile.get("timeline")), calibration)
    if estimate is not None:
        return Outside(estimate.seconds, estimate.low, estimate.high, estimate.evidence)
    if profile.get("protocol") == "nfs":
        why = "an NFS capture's time outside the server is not modelled yet"
    elif not (profile.get("timeline") or {}).get("span_ns"):
        why = "the trace has no timestamps (strace -tt)"
    else:
        why = "the trace has no call durations (strace -T)"
    return Outside.exactly(0.0, f"none: {why}, so only the filesystem's time is predicted; "
                                "--measured adds the relative form")


def _band(seconds: float, errors: list[float]) -> tuple[float, float]:
    """The 90% band of real runtimes given a prediction, from the 5th and 95th percentiles of
    measured errors (error = predicted / real - 1)."""
    p5, p95 = errors
    return seconds / (1 + p95), seconds / (1 + p5)


def _sigma(entry: dict[str, Any], low: str = "low_s", high: str = "high_s") -> float:
    return max((entry[high] - entry[low]) / (2 * Z90), 1e-12)


def _ranking(entries: list[dict[str, Any]], value: str, low: str, high: str) -> dict[str, Any]:
    order = sorted(entries, key=lambda e: e[value])
    out: dict[str, Any] = {"order": [e["candidate"] for e in order], "by": value}
    if len(order) > 1:
        best, second = order[0], order[1]
        gap = second[value] - best[value]
        spread = math.hypot(_sigma(best, low, high), _sigma(second, low, high))
        out.update({"best": best["candidate"], "runner_up": second["candidate"],
                    "faster_by": second[value] / best[value] - 1 if best[value] else None,
                    "confidence": float(stats.norm.cdf(gap / spread))})
    return out


def predict(profile: dict[str, Any], tables: list[tuple[int | None, Pricer]], *, cache_bytes: int,
            start: str = "cold", calibration: Calibration | None = None,
            measured: float | None = None, traced_on: str | None = None,
            tracing: TracingCalibration | None = None, model_error: dict[str, Any] | None = None) -> dict[str, Any]:
    """The prediction document for a profile on each candidate's cost table (its Pricer).

    `traced_on`: the candidate the workload was traced on, whose costs tell the system time
    outside the filesystem (outside.py); `measured`: a real runtime there, for the relative
    form; `tracing`: how well this machine's traces tell their untraced time (the band of a
    plain trace's time outside); `model_error`: the 5th and 95th percentiles of the errors
    `fsbm validate --plain --set dev` measured, per form ({"absolute": [p5, p95], ...}): where
    given, a plain trace's 90% intervals are those errors' spread (the model's own error)."""
    if not tables:
        raise UsageError("give at least one candidate")
    if measured is not None and traced_on is None:
        raise UsageError("a measured runtime needs the candidate it was measured on (--traced-on)")
    calibration = calibration or Calibration(None)
    on_traced = None  # the modelled CPU seconds of its filesystem calls where it was traced
    scales = CpuScales()  # outside.cpu_scales: known only where it was traced
    if traced_on is not None:
        traced = next((pricer for _, pricer in tables if pricer.table.candidate == traced_on), None)
        if traced is None:
            raise UsageError(f"--traced-on {traced_on} is not one of the candidates "
                             f"({', '.join(pricer.table.candidate for _, pricer in tables)})")
        on_traced = calls_cpu_seconds(profile, traced, cache_bytes=cache_bytes, start=start)
        scales = cpu_scales(profile, traced, cache_bytes=cache_bytes, start=start)
    if profile.get("recording"):
        features = outside_features(profile, on_traced, start)
        outside = Outside.exactly(outside_seconds(features), "the recording's untraced CPU time and waits")
    else:
        features = None
        outside = outside_from_trace(profile, tracing)
    entries = [_candidate(profile, pricer, table_id, calibration, outside, cache_bytes, start, scales)
               for table_id, pricer in tables]
    plain_band = model_error if model_error and not profile.get("recording") else None
    if plain_band:
        for e in entries:
            e["low_s"], e["high_s"] = _band(e["runtime_s"], plain_band["absolute"])
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "kind": "prediction", "workload": profile.get("source"),
        "scope": profile.get("scope"), "cache_bytes": cache_bytes, "start": start, "cpu_scales": scales.factors,
        "traced_cpu_ns": scales.traced_ns,
        "calibration_id": calibration.document_id, "validated": calibration.measured,
        "calibrated": bool(calibration.body and calibration.body.get("adopted")),
        "outside_features": features, "outside_evidence": outside.evidence, "traced_on": traced_on,
        "model_error": plain_band,
        "absolute": True, "candidates": entries,
    }
    doc["ranking"] = _ranking(entries, "runtime_s", "low_s", "high_s")
    if measured is not None:
        base = next(e for e in entries if e["candidate"] == traced_on)
        # The measured runtime less the traced filesystem's modelled part is what stays; where
        # the model prices the filesystem above the whole measured runtime, the runtime scales.
        stays = max(measured - base["fs_s"], 0.0)
        for e in entries:
            whole = stays + base["fs_s"]
            ratio = (stays + e["fs_s"]) / whole if whole else 1.0
            relative_spread = math.hypot(_sigma(e) / e["runtime_s"], _sigma(base) / base["runtime_s"]) \
                if e is not base and e["runtime_s"] else 0.0
            e["relative_s"] = measured * ratio
            e["relative_low_s"] = max(e["relative_s"] * (1 - Z90 * relative_spread), 0.0)
            e["relative_high_s"] = e["relative_s"] * (1 + Z90 * relative_spread)
            if plain_band and e is not base:
                e["relative_low_s"], e["relative_high_s"] = _band(e["relative_s"], plain_band["relative"])
        doc["measured"] = {"seconds": measured, "on": traced_on}
        doc["relative_ranking"] = _ranking(entries, "relative_s", "relative_low_s", "relative_high_s")
    return doc

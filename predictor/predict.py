"""Predictions for a workload on candidate filesystems (issue 7: `fsbm predict`).

Per candidate: the runtime with a 90% interval, in two forms when it can:
- absolute: time outside the filesystem + calibrated count x cost;
- relative (Mesnier's relative fitness): a runtime measured on the traced filesystem,
  scaled by the modelled ratio of the candidate to that filesystem.
and where the time goes, operation by operation; then the ranking and how sure it is.

The calibration is the newest one `fsbm validate` stored: a factor per filesystem and
state ("xfs aged"), and the outside-time coefficients of this machine.  Without one the
prediction is the raw model and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy import stats

from fsbm.errors import UsageError
from fsbm.predictor.calibration import POOLED
from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.model import FsTime, price_workload
from fsbm.predictor.outside import outside_features
from fsbm.predictor.pricing import Pricer

SCHEMA_VERSION = 1
Z90 = float(stats.norm.ppf(0.95))


def calibration_key(table: CostTable) -> str:
    """What a calibration factor is kept under: filesystem type and whether it was aged."""
    aging = str(table.environment.get("aging_state") or "fresh")
    return f"{table.environment.get('fs_type', table.candidate)} {'aged' if aging.startswith('aged') else 'fresh'}"


@dataclass
class Calibration:
    body: dict[str, Any] | None
    document_id: int | None = None

    def fs_factor(self, key: str) -> dict[str, float]:
        factors = (self.body or {}).get("fs_factors", {})
        found = factors.get(key) or factors.get(POOLED)
        if found:
            return {**found, "key": key if key in factors else "pooled over all filesystems"}
        return {"factor": 1.0, "low": 1.0, "high": 1.0, "key": "uncalibrated"}

    def outside(self, features: dict[str, float]) -> tuple[float, float, float, str]:
        """Outside seconds with a 90% interval, and how they were found."""
        if not self.body:
            value = features["user_cpu_s"] + features["outside_calls_s"]
            return value, value, value, "uncalibrated: CPU time + calls on other filesystems"
        coefficients = self.body["outside_coefficients"]
        value = max(sum(c["value"] * features[name] for name, c in coefficients.items()), 0.0)
        half = Z90 * self.body.get("outside_residual_sd_s", 0.0)
        terms = " + ".join(f"{c['value']:.3g} x {name}" for name, c in coefficients.items())
        return value, max(value - half, 0.0), value + half, f"calibrated: {terms}"


def _candidate(profile: dict[str, Any], table: CostTable, table_id: int | None, calibration: Calibration,
               outside: tuple[float, float, float, str], cache_bytes: int, start: str) -> dict[str, Any]:
    fs: FsTime = price_workload(profile, Pricer(table), cache_bytes=cache_bytes, start=start)
    key = calibration_key(table)
    factor = calibration.fs_factor(key)
    modelled = fs.total_ns / 1e9
    fs_s = modelled * factor["factor"]
    # The interval of the filesystem part: the calibration's spread of replayed/modelled, or
    # without one the 95% intervals of the measured costs.
    fs_low = modelled * factor["low"] if calibration.body else fs.low_ns / 1e9
    fs_high = modelled * factor["high"] if calibration.body else fs.high_ns / 1e9
    out, out_low, out_high, out_source = outside
    runtime = fs_s + out
    low = runtime - math.hypot(fs_s - fs_low, out - out_low)
    high = runtime + math.hypot(fs_high - fs_s, out_high - out)
    scale = factor["factor"] / 1e9
    return {
        "candidate": table.candidate, "calibration_key": key, "cost_table_id": table_id,
        "cost_table_measured_at": table.measured_at, "environment": {k: table.environment.get(k) for k in
                                                                      ("fs_type", "mount_options", "aging_state")},
        "runtime_s": runtime, "low_s": max(low, 0.0), "high_s": high,
        "fs_s": fs_s, "fs_modelled_s": modelled, "fs_factor": factor, "outside_s": out, "outside_source": out_source,
        "breakdown_s": {op: ns * scale for op, ns in fs.by_op().items()},
        "lines": [line.to_json() for line in fs.lines],
    }


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


def predict(profile: dict[str, Any], tables: list[tuple[int | None, CostTable]], *, cache_bytes: int,
            start: str = "cold", calibration: Calibration | None = None,
            measured: tuple[float, str] | None = None) -> dict[str, Any]:
    """The prediction document for a profile on each candidate's cost table.

    `measured` = (seconds, candidate): a real runtime on one of the candidates (the traced
    filesystem), for the relative form."""
    if not tables:
        raise UsageError("give at least one candidate")
    calibration = calibration or Calibration(None)
    try:
        features = outside_features(profile)
        outside = calibration.outside(features)
    except UsageError:
        if measured is None:
            raise
        features, outside = None, (0.0, 0.0, 0.0, "unknown: relative form only")
    entries = [_candidate(profile, table, table_id, calibration, outside, cache_bytes, start)
               for table_id, table in tables]
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "kind": "prediction", "workload": profile.get("source"),
        "scope": profile.get("scope"), "cache_bytes": cache_bytes, "start": start,
        "calibration_id": calibration.document_id, "calibrated": calibration.body is not None,
        "outside_features": features, "absolute": features is not None, "candidates": entries,
    }
    if features is not None:
        doc["ranking"] = _ranking(entries, "runtime_s", "low_s", "high_s")
    if measured is not None:
        seconds, on = measured
        base = next((e for e in entries if e["candidate"] == on), None)
        if base is None:
            raise UsageError(f"--traced-on {on} is not one of the candidates ({', '.join(e['candidate'] for e in entries)})")
        for e in entries:
            ratio = e["runtime_s"] / base["runtime_s"] if base["runtime_s"] else float("nan")
            relative_spread = math.hypot(_sigma(e) / e["runtime_s"], _sigma(base) / base["runtime_s"]) \
                if e is not base and e["runtime_s"] else 0.0
            e["relative_s"] = seconds * ratio
            e["relative_low_s"] = max(e["relative_s"] * (1 - Z90 * relative_spread), 0.0)
            e["relative_high_s"] = e["relative_s"] * (1 + Z90 * relative_spread)
        doc["measured"] = {"seconds": seconds, "on": on}
        doc["relative_ranking"] = _ranking(entries, "relative_s", "relative_low_s", "relative_high_s")
    return doc

"""The cold start no plain trace holds (predictor/cold_start.py): measured for real on this
machine's small programs, kept with the tracing calibration, and added to cold predictions
from plain traces only."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsbm.errors import UsageError
from fsbm.predictor import cold_start as cold_start_module
from fsbm.predictor.cold_start import COLD_START_PROGRAMS, ColdStart, ColdStartRun, measure_cold_start
from fsbm.predictor.predict import outside_from_trace
from fsbm.predictor.tracing import TracingCalibration, newest_current, untraced_outside
from fsbm.predictor.tracing_runs import calibration_trace_timeline, run_timed, trace_timed
from tests.conftest import require_root

MS = 1_000_000
PROFILE = {"schema_version": 3, "classes": {"data": {}, "metadata": {}}, "reuse": {},
           "namespace": {"files_touched": 0, "directories_touched": 0},
           "timeline": {"calls": 1000, "timed_calls": 1000, "span_ns": 300 * MS, "lifetimes_ns": 300 * MS,
                        "user_ns": 150 * MS}}


def _measured(*missing_ms: float) -> ColdStart:
    """A cold start whose programs took `missing_ms` more untraced than their traces told."""
    return ColdStart([ColdStartRun(f"p{k}", [int((10 + m) * MS)] * 3, [10.0 * MS] * 3) for k, m in enumerate(missing_ms)])


@pytest.mark.cores_shared
def test_the_estimate_is_the_programs_median_and_its_band_their_range() -> None:
    start = _measured(4.0, 9.0, 7.0)
    assert start.seconds == pytest.approx(0.007)
    assert start.band == pytest.approx((0.004, 0.009))
    assert "7.0 ms (4.0-9.0)" in start.words() and "p1 9.0 ms" in start.words()
    # A program whose trace told more than its untraced run took counts for none below 0.
    assert _measured(-3.0, -1.0).seconds == 0.0 and _measured(-3.0, 2.0).band == pytest.approx((0.0, 0.002))
    assert ColdStart().seconds == 0.0 and ColdStart().band == (0.0, 0.0)


@pytest.mark.cores_shared
def test_it_is_kept_with_the_tracing_calibration() -> None:
    kept = TracingCalibration(cold_start=_measured(5.0, 6.0)).to_json()
    again = TracingCalibration.from_json(kept)
    assert again.cold_start is not None and again.cold_start.seconds == pytest.approx(0.0055)
    assert [r.name for r in again.cold_start.runs] == ["p0", "p1"]
    assert TracingCalibration.from_json(TracingCalibration().to_json()).cold_start is None


@pytest.mark.cores_shared
def test_a_later_calibration_without_it_keeps_the_newest_one_measured() -> None:
    measured = TracingCalibration(cold_start=_measured(5.0), measured_at="then").to_json()
    newer = TracingCalibration(cold_start=_measured(7.0), measured_at="later").to_json()
    plain = TracingCalibration(measured_at="now").to_json()
    kept = newest_current([plain, {**plain, "schema_version": 1}, newer, measured])
    assert kept is not None and kept.measured_at == "now" and kept.cold_start is not None
    assert kept.cold_start.seconds == pytest.approx(0.007)  # the newest measured, not the older
    assert newest_current([newer, plain]).cold_start.seconds == pytest.approx(0.007)
    assert newest_current([plain]).cold_start is None and newest_current([]) is None


@pytest.mark.cores_shared
def test_only_a_cold_prediction_from_a_plain_trace_adds_it() -> None:
    measured = TracingCalibration(cold_start=_measured(6.0, 8.0, 10.0))
    without = outside_from_trace(PROFILE, TracingCalibration(), "cold")
    cold = outside_from_trace(PROFILE, measured, "cold")
    assert cold.seconds == pytest.approx(without.seconds + 0.008)
    assert cold.low == pytest.approx(without.low + 0.006) and cold.high == pytest.approx(without.high + 0.010)
    assert "cold start no trace holds" in cold.evidence and "8.0 ms (6.0-10.0)" in cold.evidence
    assert "--cold-start" in without.evidence  # not measured: it says so, and how to measure it
    warm = outside_from_trace(PROFILE, measured, "warm")
    assert warm.seconds == pytest.approx(without.seconds) and "cold start" not in warm.evidence
    nfs = outside_from_trace({**PROFILE, "protocol": "nfs"}, measured, "cold")
    assert "cold start" not in nfs.evidence  # a capture starts no program


@pytest.mark.cores_shared
def test_measuring_it_without_root_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr(cold_start_module, "can_drop_all", lambda: False)
    with pytest.raises(UsageError, match="needs root"):
        measure_cold_start(1, run=lambda command: ran.append(command) or 0, trace=lambda command, log: 0,
                           tell=lambda log: 0.0, logs=tmp_path)
    assert ran == []


@pytest.mark.root
def test_it_is_measured_for_real_on_programs_run_cold(tmp_path: Path) -> None:
    require_root()
    calibration = TracingCalibration()
    lines: list[str] = []

    def tell(log: Path) -> float:
        told = untraced_outside(calibration_trace_timeline(log, lines.append), calibration)
        assert told is not None
        return told.seconds * 1e9

    start = measure_cold_start(1, run=lambda command: run_timed(command, tmp_path),
                               trace=lambda command, log: trace_timed(command, log, tmp_path),
                               tell=tell, logs=tmp_path, progress=lines.append)
    assert [r.name for r in start.runs] == [name for name, _ in COLD_START_PROGRAMS]
    for run in start.runs:
        assert len(run.untraced_ns) == len(run.told_ns) == 1 and run.untraced_ns[0] > 0 and run.told_ns[0] >= 0
    assert list(tmp_path.iterdir()) == []  # every log it traced into is gone
    assert len([line for line in lines if "no trace holds" in line]) == len(COLD_START_PROGRAMS)

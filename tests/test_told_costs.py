"""What a trace's call durations tell each operation took where it was traced, and the relative
form giving the rest of a measured runtime to the operations the durations say were priced
low (predictor/told_costs.py, estimator.RuntimeEstimator)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fsbm.characterizer.characterize import characterize_files
from fsbm.documents import Profile
from fsbm.predictor.estimator import CARRY_COLUMN, EXCESS_COLUMN, Z90, RuntimeEstimator
from fsbm.predictor.model import FsTime, Line
from fsbm.predictor.predict import relative_rows
from fsbm.predictor.pricing import Price
from fsbm.predictor.told_costs import ToldDurations, TracedExcess
from fsbm.traces.ingest import ingest
from tests.conftest import strace_tt

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

COPIES = 200


def _profile(tmp_path: Path, timed: bool = True) -> Profile:
    """A job that copies COPIES files in the kernel, each copy 300 us, and stats each file
    first, 20 us: every other call it makes takes 20 us too, so its median call is 20 us."""
    lines, at = [], 0

    def call(text: str, us: int) -> None:
        nonlocal at
        lines.append(f"4242 {strace_tt(at)} {text}" + (f" <{us / 1e6:.6f}>" if timed else ""))
        at += us + 30

    for k in range(COPIES):
        call(f'newfstatat(AT_FDCWD, "/w/src/f{k}", {{st_mode=S_IFREG|0644, st_size=65536, ...}}, 0) = 0', 20)
        call(f'openat(AT_FDCWD, "/w/src/f{k}", O_RDONLY) = 3</w/src/f{k}>', 20)
        call(f'openat(AT_FDCWD, "/w/dst/f{k}", O_WRONLY|O_CREAT|O_EXCL, 0644) = 4</w/dst/f{k}>', 20)
        call(f"copy_file_range(3</w/src/f{k}>, NULL, 4</w/dst/f{k}>, NULL, 65536, 0) = 65536", 300)
        call(f"close(4</w/dst/f{k}>) = 0", 20)
        call(f"close(3</w/src/f{k}>) = 0", 20)
    name = "copy" if timed else "copy-untimed"
    log = tmp_path / f"{name}.strace"
    log.write_text("\n".join(lines) + "\n")
    return Profile.of(characterize_files([ingest([log], tmp_path / f"{name}.parquet").output], scope="/w").body)


def _time(candidate: str, **ns_by_op: float) -> FsTime:
    """A candidate's modelled time: `COPIES` calls of each operation at its price (ns each)."""
    return FsTime(candidate, tuple(Line(op, "write" if op == "copy" else "metadata", op, COPIES,
                                        Price(ns, ns, ns, "test")) for op, ns in ns_by_op.items()))


def test_the_durations_less_each_calls_share_of_tracing_tell_what_each_operation_took(tmp_path: Path) -> None:
    told = ToldDurations.of(_profile(tmp_path), None)
    assert told.per_call_ns == pytest.approx(20_000, rel=0.01)  # the median call; no lean
    calls, copy_ns = told.ops["copy"]
    assert calls == COPIES and copy_ns == pytest.approx(COPIES * 280_000, rel=0.01)
    assert told.ops["stat"][1] == pytest.approx(0.0, abs=1e-6)
    # Beyond a price of 100 us a copy, less what tracing's scatter could make of 200 calls.
    assert told.beyond_chance_ns("copy", COPIES * 100_000) == pytest.approx(
        COPIES * 180_000 - Z90 * told.per_call_ns * COPIES ** 0.5, rel=0.01)
    # A log without -T tells nothing of its calls' durations.
    assert ToldDurations.of(_profile(tmp_path, timed=False), None).ops == {}


def test_the_excess_carries_to_a_candidate_by_its_price_of_the_same_operation(tmp_path: Path) -> None:
    told = ToldDurations.of(_profile(tmp_path), None)
    ext4 = _time("ext4", copy=100_000, stat=5_000)
    xfs = _time("xfs", copy=1_000, stat=8_000)  # xfs clones: a copy costs next to nothing
    excess = TracedExcess.of(told, ext4)
    assert set(excess.ns) == {"copy", "stat"} and excess.ns["stat"] == 0.0  # stats took what they were priced
    assert excess.carry(ext4) == pytest.approx(1.0)
    assert excess.carry(xfs) == pytest.approx(0.01)
    # Nothing told beyond the prices: nothing to carry.
    assert TracedExcess.of(ToldDurations(), ext4).carry(xfs) == 0.0


def _copy_rows(excess_s: float | None, carry_xfs: float) -> pd.DataFrame:
    """A copy traced on ext4 (modelled 0.78 s there, 0.007 s on xfs, which clones) whose
    trace told 0.01 s outside, with a band reaching 0.41 s."""
    rows = pd.DataFrame([{"key": key, "fs_s": fs, "fs_low_s": fs, "fs_high_s": fs, "outside_s": 0.01,
                          "outside_low_s": 0.005, "outside_high_s": 16.0, "evidence": "trace",
                          "outside_per_gap_s": 200_000 / 1e9} for key, fs in (("ext4 fresh", 0.78), ("xfs fresh", 0.007))])
    out = relative_rows(rows, traced=0, measured=1.3)
    if excess_s is not None:
        out = out.assign(**{EXCESS_COLUMN: excess_s, CARRY_COLUMN: [1.0, carry_xfs]})
    return out


def test_the_relative_form_gives_the_rest_to_the_operations_the_durations_say_were_priced_low() -> None:
    """The measured 1.3 s leaves 0.51 s beyond the modelled 0.78 s and the 0.01 s the trace told
    outside.  The durations told 0.3 s of copying beyond its price: that much moves from outside
    to the copies, at xfs's price of a copy (1% of ext4's); the rest stays outside, within the
    band.  Told more than the rest, the whole rest goes to the copies."""
    model = RuntimeEstimator.unfitted()
    model.gap_shift_ = {"low": -2_000.0, "high": 2_000.0, "sd": 1_000.0, "programs": 10}
    parts = model.predict_parts(_copy_rows(0.3, carry_xfs=0.01))
    assert parts["runtime"][0] == pytest.approx(1.3)
    assert parts["outside"] == pytest.approx([1.3 - 0.78 - 0.3] * 2)
    assert parts["runtime"][1] == pytest.approx(1.3 - 0.78 - 0.3 + 0.007 + 0.3 * 0.01)
    whole = model.predict_parts(_copy_rows(0.9, carry_xfs=0.01))
    assert whole["outside"] == pytest.approx([0.01, 0.01])
    assert whole["runtime"][1] == pytest.approx(0.01 + 0.007 + 0.51 * 0.01)
    # Told nothing beyond the prices, the rest stays outside up to the band's top, and every
    # candidate's filesystem part scales up to the measurement beyond it.
    uniform = model.predict_parts(_copy_rows(None, carry_xfs=0.01))
    assert uniform["outside"] == pytest.approx([0.41, 0.41])
    assert uniform["runtime"][1] == pytest.approx(0.41 + 0.007 * (1.3 - 0.41) / 0.78)

"""The host's processor in a validation's runs: how far a program's user time moved, and the
errors against runs with it held steady (predictor/cpu_speed.py and the judges' use of it)."""

from __future__ import annotations

import pandas as pd
import pytest

from fsbm.predictor.cpu_speed import STEADY_MIN_USER_S, moved_sentence, steadied, user_cpu_spread

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared


def _run(program: str, target: str, rnd: int, user: float, rest: float = 0.1, system: float = 0.0,
         overlap: float = 1.0) -> dict:
    """A real run: `user` seconds of CPU at the moment's speed, spread over `overlap`
    processes at once, plus `rest` seconds of waiting."""
    return {"kind": "real", "program": program, "target": target, "round": rnd, "seconds": user / overlap + rest,
            "user_cpu_s": user, "system_cpu_s": system}


def test_each_run_is_given_its_programs_median_user_time() -> None:
    records = [_run("gzip", "ext4", 0, 1.0), _run("gzip", "xfs", 0, 1.5), _run("gzip", "ext4", 1, 1.2),
               {"kind": "replay", "program": "gzip", "target": "ext4", "round": 0, "seconds": 0.3}]
    steady = steadied(records)
    assert [r["seconds"] for r in steady[:3]] == pytest.approx([1.3, 1.3, 1.3])
    assert steady[3] == records[3] and records[0]["seconds"] == pytest.approx(1.1)  # the input is left as it was
    spread = user_cpu_spread(records)
    assert spread is not None and spread.programs == 1 and spread.largest_program == "gzip"
    assert spread.median == pytest.approx(0.5) and spread.largest == pytest.approx(0.5)
    assert "50%" in moved_sentence(spread.to_json())


def test_overlapping_processes_move_the_wall_time_by_the_difference_over_their_overlap() -> None:
    # Two processes at once: 2 s of user time in 1 s of wall time, against a usual 1.6 s.
    records = [_run("make", "ext4", 0, 2.0, rest=0.0, overlap=2.0), _run("make", "ext4", 1, 1.6, rest=0.0, overlap=2.0),
               _run("make", "ext4", 2, 1.2, rest=0.0, overlap=2.0)]
    assert [r["seconds"] for r in steadied(records)] == pytest.approx([0.8, 0.8, 0.8])


def test_programs_of_little_user_time_are_left_as_measured() -> None:
    little = STEADY_MIN_USER_S / 2
    records = [_run("sqlite", "ext4", 0, little, system=0.4), _run("sqlite", "ext4", 1, 2 * little, system=0.4)]
    assert steadied(records) == records and user_cpu_spread(records) is None
    # A run without CPU times (measurements from before they were kept) leaves its program as measured.
    unknown = [_run("gzip", "ext4", 0, 1.0), {**_run("gzip", "ext4", 1, 1.4), "user_cpu_s": None}]
    assert steadied(unknown) == unknown


def _records_at_two_speeds() -> list[dict]:
    """gzip: 1 s of user time at the usual speed and 0.1 s of filesystem on ext4, 0.2 s on
    xfs; xfs's runs of two rounds met a processor 30% slower.  As measured, xfs takes 1.5 s
    (median) and 1.36 times ext4; at the usual speed, 1.2 s and 1.09 times."""
    out = []
    for rnd, (ext4_user, xfs_user) in enumerate([(1.0, 1.3), (1.0, 1.3), (1.0, 1.0)]):
        out += [_run("gzip", "ext4 fresh", rnd, ext4_user, rest=0.1), _run("gzip", "xfs fresh", rnd, xfs_user, rest=0.2)]
    return out


def test_the_recorded_judge_says_what_its_errors_would_be_with_the_processor_steady() -> None:
    from fsbm.predictor.judge import _cpu_steadied

    records = _records_at_two_speeds()
    rows = pd.DataFrame({"program": ["gzip", "gzip"], "candidate": ["ext4 fresh", "xfs fresh"],
                         "real_s": [1.1, 1.5], "predicted_s": [1.1, 1.2], "low_s": [1.0, 1.1], "high_s": [1.2, 1.3],
                         "relative_s": [1.1, 1.2], "relative_low_s": [1.0, 1.1], "relative_high_s": [1.2, 1.3]})
    rows["predicted_ratio"] = rows["predicted_s"] / 1.1
    steady = _cpu_steadied(rows, records, "ext4 fresh")
    assert steady is not None and steady["pairs_compared"] == 0  # 9% apart: too close to rank
    # The model that knows the usual speed: exact against the steadied runs.
    assert steady["max_abs_error"] == pytest.approx(0.0, abs=1e-9)
    assert steady["max_ratio_error"] == pytest.approx(0.0, abs=1e-9)
    assert steady["max_relative_error"] == pytest.approx(0.0, abs=1e-9)
    assert steady["user_cpu_spread"]["largest"] == pytest.approx(0.3)


def test_the_plain_judge_says_what_each_forms_errors_would_be_with_the_processor_steady() -> None:
    from fsbm.predictor.plain_judge import _cpu_steadied

    records = _records_at_two_speeds()
    frame = pd.DataFrame({"program": ["gzip", "gzip"], "target": ["ext4 fresh", "xfs fresh"], "traced": [True, False],
                          "real_s": [1.1, 1.5]})
    for form, (ext4, xfs) in {"absolute": (1.1, 1.2), "relative": (1.1, 1.2)}.items():
        frame[f"{form}_s"], frame[f"{form}_low_s"], frame[f"{form}_high_s"] = [ext4, xfs], [1.0, 1.1], [1.2, 1.3]
        frame[f"{form}_ratio"] = [1.0, xfs / ext4]
    steady = _cpu_steadied(frame, records, ["relative", "absolute"], "ext4 fresh")
    assert steady is not None
    for form in ("relative", "absolute"):
        assert steady[form]["runtime"]["largest"] == pytest.approx(0.0, abs=1e-9)
        assert steady[form]["ratio"]["largest"] == pytest.approx(0.0, abs=1e-9)


def test_the_plain_judge_says_how_far_the_host_moved_between_the_traces_and_the_rounds() -> None:
    from fsbm.predictor.plain_judge import _host_between, _host_between_lines, _with_errors

    # Traced in a fast minute (the runs beside the traces took 0.8 s), timed in slow ones (1.0 s):
    # a prediction that told the traced minute exactly is 20% short of the rounds.
    frame = pd.DataFrame({"program": ["python", "python", "tar"], "target": ["ext4 fresh", "xfs fresh", "ext4 fresh"],
                          "traced": [True, False, True], "real_s": [1.0, 1.1, 2.0]})
    for form in ("absolute", "untimed"):
        frame[f"{form}_s"], frame[f"{form}_low_s"], frame[f"{form}_high_s"] = [0.8, 0.9, 2.2], [0.7] * 3, [2.5] * 3
        frame[f"{form}_ratio"], frame["measured_ratio"] = [1.0, 1.1, 1.0], [1.0, 1.1, 1.0]
    frame = _with_errors(frame, ["absolute", "untimed"])
    doc = {"traced_on": "ext4 fresh", "programs": [
        {"name": "python", "beside_runs": [{"seconds": 0.79}, {"seconds": 0.81}]},
        {"name": "tar", "beside_runs": [{"seconds": 2.0}, {"seconds": 2.0}]}]}
    between = _host_between(frame, doc, ["relative", "absolute", "untimed"])
    assert between is not None and between["programs"] == 2 and "relative" not in between
    assert between["moved"]["high"] == pytest.approx(0.25) and between["moved"]["low"] == pytest.approx(0.0)
    assert between["absolute"]["rounds"]["largest"] == pytest.approx(0.2)
    assert between["absolute"]["beside"]["median"] == pytest.approx(0.05)
    assert between["absolute"]["beside"]["largest"] == pytest.approx(0.1)
    text = "\n".join(_host_between_lines({"host_between": between}, "ext4 fresh"))
    assert "| absolute | 15.0% / 20.0% | 5.0% / 10.0% |" in text
    # Measurements made before the runs beside the traces: nothing to say.
    assert _host_between(frame, {"programs": [{"name": "python"}]}, ["absolute"]) is None


def test_the_overview_sets_each_plain_forms_errors_against_the_runs_beside_the_traces() -> None:
    from fsbm.api.validation_overview import FormVerdict, _host_between_section
    from fsbm.predictor.targets import TARGETS

    common = dict(trace="plain", measured_at="2026-12-02 18:55", doc="validation-plain-test.md", median=0.114,
                  largest=0.347, ratio_median=0.06, ratio_largest=0.18, covered=21, intervals=21, pairs_right=6,
                  pairs=6, bound=TARGETS.absolute, misses=())
    judged = FormVerdict(split="test", form="absolute", host_moved=(0.08, 0.0, 0.16), against_rounds=(0.114, 0.347),
                         against_beside=(0.093, 0.326), **common)
    before = FormVerdict(split="dev", form="absolute", **common)  # measured before the runs beside the traces
    lines = _host_between_section([before, judged])
    assert "| test | plain strace log (`-f -tt -T -y`), absolute | +8% (+0% to +16%) | 11.4% / 34.7% | 9.3% / 32.6% |" \
        in lines
    assert not any(line.startswith("| dev |") for line in lines)
    assert _host_between_section([before]) == []

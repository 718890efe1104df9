"""What tracing adds to a job, and a plain trace's untraced runtime (predictor/tracing.py),
from real strace runs; and the fixed development and test sets of the suite."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fsbm.predictor.predict import outside_from_trace
from fsbm.predictor.suite import programs
from fsbm.predictor.tracing import STRACE_FLAGS, CalibrationRun, Timeline, TracingOverhead, fit, untraced_runtime
from fsbm.traces.strace import StraceReader
from tests.conftest import Served, run_fsbm


def _traced(tmp_path: Path, script: str) -> Timeline:
    log = tmp_path / "job.strace"
    subprocess.run(["strace", *STRACE_FLAGS, "-o", str(log), "sh", "-c", script], check=True, cwd=tmp_path,
                   stdout=subprocess.DEVNULL)
    reader = StraceReader(log)
    for _ in reader.batches():
        pass
    assert reader.stats is not None
    return Timeline.of(reader.stats.timeline)


def test_the_parser_counts_every_call_process_exec_and_fork_of_a_traced_job(tmp_path: Path) -> None:
    timeline = _traced(tmp_path, "i=0; while [ $i -lt 5 ]; do /bin/true; i=$((i+1)); done")
    # sh and five children, each exec'd: the child's exec is counted even where its line
    # came before the parent's vfork returned (the child's unfinished call survives the fork).
    assert timeline.processes == 6 and timeline.forks == 5 and timeline.execs == 6
    assert timeline.calls > 5 * 10 and timeline.timed_calls >= timeline.calls - 10
    # sh waits for each child: that time is the child's, not sh's own work.
    assert timeline.blocking_calls >= 5 and 0 < timeline.blocked_ns < timeline.lifetimes_ns
    assert timeline.span_ns > 0 and timeline.gauge_calls > 0


def test_a_pipeline_counts_its_reader_blocked_on_the_pipe(tmp_path: Path) -> None:
    (tmp_path / "data").write_bytes(b"x" * 200_000)
    timeline = _traced(tmp_path, "cat data data data | wc -c > /dev/null")
    # wc's reads from the pipe wait for cat, and cat's writes into a full pipe wait for wc:
    # blocked, so the two count as working at once no more than two cores let them.
    assert timeline.blocking_calls > 3
    assert 1.0 <= timeline.concurrency <= 2.0
    assert timeline.concurrency < (timeline.lifetimes_ns / timeline.span_ns)


def _run(name: str, runtime_ms: float, calls: int, execs: int = 1, forks: int = 0, costs=(80_000, 500_000, 100_000)):
    """A calibration run whose traced span is exactly its runtime plus `costs` per call, exec, fork."""
    span = runtime_ms * 1e6 + calls * costs[0] + execs * costs[1] + forks * costs[2]
    timeline = Timeline(processes=forks + 1, calls=calls, execs=execs, forks=forks, span_ns=int(span),
                        lifetimes_ns=int(span), timed_calls=calls)
    return CalibrationRun(name, [int(runtime_ms * 1e6)] * 3, timeline)


def test_the_fit_recovers_the_costs_that_made_the_spans() -> None:
    runs = [_run("a", 10, 20_000), _run("b", 50, 5_000), _run("c", 30, 2_000, execs=100, forks=100),
            _run("d", 80, 10_000, execs=3, forks=2), _run("e", 5, 1_000, execs=40, forks=10)]
    costs = fit(runs)
    assert costs["calls"] == pytest.approx(80_000, rel=1e-6)
    assert costs["execs"] == pytest.approx(500_000, rel=1e-6)
    assert costs["forks"] == pytest.approx(100_000, rel=1e-6)


def test_the_untraced_runtime_is_the_span_less_what_tracing_added_on_the_critical_path() -> None:
    overhead = TracingOverhead({"calls": 100_000.0, "execs": 0.0, "forks": 0.0}, errors=[-0.1, 0.1])
    serial = Timeline(processes=1, calls=1000, timed_calls=1000, span_ns=300_000_000, lifetimes_ns=300_000_000)
    assert untraced_runtime(serial, overhead).seconds == pytest.approx(0.2)
    # Two processes working side by side the whole span: each one's stops overlap the other's work.
    parallel = Timeline(processes=2, calls=1000, timed_calls=1000, span_ns=300_000_000, lifetimes_ns=600_000_000)
    assert parallel.concurrency == pytest.approx(2.0)
    assert untraced_runtime(parallel, overhead).seconds == pytest.approx(0.25)
    estimate = untraced_runtime(serial, overhead)
    assert estimate.low < estimate.seconds < estimate.high
    assert untraced_runtime(Timeline(calls=10), overhead) is None  # no timestamps, no span


def test_a_plain_trace_always_gets_a_time_outside_and_says_what_it_rests_on() -> None:
    overhead = TracingOverhead({"calls": 100_000.0, "execs": 0.0, "forks": 0.0})
    profile = {"timeline": {"calls": 1000, "timed_calls": 1000, "span_ns": 300_000_000, "lifetimes_ns": 300_000_000}}
    outside = outside_from_trace(profile, overhead, traced_fs_s=0.05)
    assert outside.seconds == pytest.approx(0.15) and "untraced runtime 0.200 s" in outside.evidence
    nothing = outside_from_trace({}, overhead, traced_fs_s=0.05)
    assert nothing.seconds == 0.0 and "no timestamps" in nothing.evidence


def test_the_suite_has_a_fixed_test_set_held_apart_from_the_development_set() -> None:
    dev, test = programs(split="dev"), programs(split="test")
    assert len(dev) + len(test) == len(programs()) >= 14
    assert {p.name for p in test} == {"rsync", "pip-install", "make-j2", "sqlite-wal", "find-stat", "write-fsync",
                                      "python-import"}
    assert not {p.name for p in dev} & {p.name for p in test}


def test_a_plain_strace_log_is_predicted_in_both_forms_from_a_real_calibration(served: Served, tmp_path: Path) -> None:
    log = tmp_path / "plain.strace"
    subprocess.run(["strace", *STRACE_FLAGS, "-o", str(log), "sh", "-c", served.command], check=True,
                   stdout=subprocess.DEVNULL)
    calibrated = run_fsbm("trace", "calibrate", env=served.env)
    assert calibrated.returncode == 0, calibrated.stderr
    assert "tracing overhead" in calibrated.stdout and "held-out error" in calibrated.stdout
    out = tmp_path / "p.json"
    ext4, tmpfs = served.candidates
    done = run_fsbm("predict", str(log), "--candidates", f"{ext4},{tmpfs}", "--traced-on", ext4,
                    "--measured", "0.5", "--json", str(out), env=served.env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["absolute"] and doc["outside_evidence"].startswith("untraced runtime")
    by_name = {c["candidate"]: c for c in doc["candidates"]}
    assert doc["ranking"]["order"]
    for entry in by_name.values():
        assert entry["outside_s"] > 0 and entry["low_s"] <= entry["runtime_s"] <= entry["high_s"]
    # The relative form keeps what the measured runtime spent outside the filesystem: only the
    # filesystem's part changes from one candidate to another.
    base, other = by_name[ext4], by_name[tmpfs]
    assert base["relative_s"] == pytest.approx(0.5)
    assert other["relative_s"] - base["relative_s"] == pytest.approx(other["fs_s"] - base["fs_s"], abs=1e-9)

"""What tracing adds to a job's wall time, and the job's runtime without it.

strace stops the traced process twice per system call (ptrace), and with `-y` also reads
the link of every descriptor a call names.  A traced job's wall span is therefore its
runtime plus a cost per call that is large here (tens of microseconds) and not the same for
every call, plus a larger cost per fork and per exec.  Subtracting one constant per call
cannot work (issue 35: the strace span was 2.5-33x the real runtime over seven programs).

So fsbm measures the costs on the machine it runs on (`calibrate`): it runs a few small
programs of different mixes untraced and under `strace -f -tt -T -y`, and fits the traced
span's excess as

    span - runtime = (c_call * calls + c_exec * execs + c_fork * forks) / concurrency

by non-negative least squares.  The trace also carries its own gauge of how slow tracing
was while it was taken (the mean traced duration of calls that cost almost nothing
untraced: close, brk, getpid, ...); it is reported beside the estimate.  Scaling the
per-call cost by it was tried on the calibration programs and did worse: the gauge moves
with the mix of calls (5-50 us here), not only with the machine's speed.  `untraced_runtime` applies the fitted costs to a traced
job's own counts (traces/native/timeline.h).  `concurrency` is how many of the job's
processes worked at once, on average: the processes' lifetimes less the time they were
blocked waiting for one another (wait4, poll, a read on a pipe), over the span.  Only the
overhead on the critical path lengthens the span; where two processes work at once, each
one's stops overlap the other's work.

The calibration's own leave-one-program-out error is kept with it and widens the interval.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import nnls

from fsbm.errors import FsbmError

STRACE_FLAGS = ("-f", "-tt", "-T", "-y", "-s", "64")
COST_NAMES = ("calls", "execs", "forks")
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Timeline:
    """A traced job's calls and process lifetimes, as the strace parser counted them."""

    processes: int = 0
    calls: int = 0
    fd_calls: int = 0  # calls naming a descriptor -y annotated
    timed_calls: int = 0
    blocking_calls: int = 0
    execs: int = 0
    forks: int = 0
    gauge_calls: int = 0
    calls_ns: int = 0
    blocked_ns: int = 0
    gauge_ns: int = 0
    lifetimes_ns: int = 0
    span_ns: int = 0

    @classmethod
    def of(cls, counts: dict[str, Any] | None) -> "Timeline":
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{k: int(v) for k, v in (counts or {}).items() if k in known})

    @property
    def known(self) -> bool:
        """Whether the trace had timestamps: without them there is no span to start from."""
        return self.span_ns > 0

    @property
    def concurrency(self) -> float:
        """Processes working at once, on average (module docstring); 1 where the trace has no
        call durations, so no blocked time is known."""
        if not self.span_ns or not self.timed_calls:
            return 1.0
        return max((self.lifetimes_ns - self.blocked_ns) / self.span_ns, 1.0)

    @property
    def gauge_ns_per_call(self) -> float | None:
        """The mean traced duration of calls that cost almost nothing untraced (module
        docstring); None where the trace has none (no -T)."""
        return self.gauge_ns / self.gauge_calls if self.gauge_calls else None

    def counts(self) -> np.ndarray:
        """The terms the overhead is fitted on (COST_NAMES)."""
        return np.array([getattr(self, name) for name in COST_NAMES], float)


@dataclass(frozen=True)
class CalibrationRun:
    """One calibration program: its untraced runtimes and its traced timeline."""

    name: str
    untraced_ns: list[int]
    timeline: Timeline

    @property
    def runtime_ns(self) -> float:
        return float(statistics.median(self.untraced_ns))

    def excess_ns(self) -> float:
        return self.timeline.span_ns - self.runtime_ns


@dataclass(frozen=True)
class TracingOverhead:
    """The fitted cost of tracing, per call, descriptor-naming call, exec and fork (ns), and
    how well it predicted calibration programs it was not fitted on."""

    costs_ns: dict[str, float]
    runs: list[CalibrationRun] = field(default_factory=list)
    errors: list[float] = field(default_factory=list)  # leave-one-program-out: added predicted / added - 1
    flags: tuple[str, ...] = STRACE_FLAGS
    measured_at: str = ""
    schema_version: int = SCHEMA_VERSION

    def added_ns(self, timeline: Timeline) -> float:
        """What tracing added to the job's span."""
        return float(timeline.counts() @ self._vector()) / timeline.concurrency

    def _vector(self) -> np.ndarray:
        return np.array([self.costs_ns.get(name, 0.0) for name in COST_NAMES], float)

    @property
    def error_band(self) -> tuple[float, float]:
        """The 90% band of the calibration's held-out relative errors of what tracing added
        (no narrower than +-5%: a handful of programs cannot show a tighter one).  Of what
        was added, not of the runtime: a job whose span is 30 times its runtime turns a 3%
        error in the overhead into a 90% error in the runtime, and the band must say so."""
        if not self.errors:
            return -0.25, 0.25
        low, high = np.percentile(self.errors, [5, 95])
        return min(float(low), -0.05), max(float(high), 0.05)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "tracing_overhead", "schema_version": self.schema_version, "costs_ns": self.costs_ns,
                "errors": self.errors, "flags": list(self.flags), "measured_at": self.measured_at,
                "runs": [{"name": r.name, "untraced_ns": r.untraced_ns, "timeline": asdict(r.timeline)}
                         for r in self.runs]}

    @classmethod
    def from_runs(cls, runs: list[CalibrationRun], measured_at: str = "") -> "TracingOverhead":
        """The costs fitted on calibration runs, with each run's held-out error."""
        return cls(fit(runs), runs, _held_out_errors(runs), measured_at=measured_at)

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> "TracingOverhead":
        """A stored calibration, fitted again from its runs where it kept them (so a stored
        one is judged by this fsbm's fit and error rule)."""
        runs = [CalibrationRun(r["name"], r["untraced_ns"], Timeline.of(r["timeline"])) for r in body.get("runs", [])]
        if len(runs) > len(COST_NAMES):
            return cls.from_runs(runs, body.get("measured_at", ""))
        return cls(dict(body["costs_ns"]), runs, list(body.get("errors", [])), tuple(body.get("flags", STRACE_FLAGS)),
                   body.get("measured_at", ""))


@dataclass(frozen=True)
class UntracedRuntime:
    """A traced job's runtime without tracing, with its 90% interval, in seconds."""

    seconds: float
    low: float
    high: float
    traced_span_s: float
    tracing_s: float
    concurrency: float
    evidence: str


def untraced_runtime(timeline: Timeline, overhead: TracingOverhead) -> UntracedRuntime | None:
    """The job's runtime untraced: its traced span less what tracing added on its critical
    path; None where the trace has no timestamps."""
    if not timeline.known:
        return None
    span = timeline.span_ns / 1e9
    added = overhead.added_ns(timeline) / 1e9
    # Never below a tenth of the span: a fit that takes more than that has met calls it was
    # not calibrated on, and the interval below says how little is known.
    floor = span / 10
    seconds = max(span - added, floor)
    low_error, high_error = overhead.error_band
    gauge = timeline.gauge_ns_per_call
    evidence = (f"the trace's span ({span:.3f} s) less what tracing added, {added:.3f} s: {timeline.calls} calls "
                + (f"(tracing took {gauge / 1e3:.0f} us a near-free call then), " if gauge else "")
                + f"{timeline.execs} execs and {timeline.forks} forks at the costs this machine's calibration "
                f"measured, over {timeline.concurrency:.2f} processes working at once")
    low = max(span - added / (1 + low_error), 0.0)  # tracing added more than predicted
    high = max(span - added / (1 + high_error), floor)
    return UntracedRuntime(seconds, min(low, seconds), max(high, seconds), span, span - seconds,
                           timeline.concurrency, evidence)


# -- calibration ------------------------------------------------------------------------------

def _calibration_programs(work: Path) -> list[tuple[str, list[str]]]:
    """Small programs of different mixes of calls, descriptors, execs and forks, each run in
    `work` with warm caches."""
    python = [sys.executable, "-S", "-B", "-c"]
    return [
        ("plain-calls", [*python, "import os\nfor _ in range(20000): os.getppid()"]),
        ("working-calls", [*python, "import os\nfor _ in range(4000): os.getppid(); sum(range(2000))"]),
        ("stats", [*python, "import os\nfor _ in range(40):\n for e in os.scandir('files'): os.stat(e.path)"]),
        ("reads", ["sh", "-c", "cat files/* files/* files/* > /dev/null"]),
        ("writes", ["dd", "if=/dev/zero", "of=written", "bs=4k", "count=20000", "status=none"]),
        ("listing", ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do ls -lR files > /dev/null; done"]),
        ("processes", ["sh", "-c", "i=0; while [ $i -lt 150 ]; do /bin/true; i=$((i+1)); done"]),
        ("pipeline", ["sh", "-c", "cat files/* files/* | wc -c > /dev/null"]),
    ]


def _make_files(work: Path, count: int = 1000) -> None:
    files = work / "files"
    files.mkdir()
    for i in range(count):
        (files / f"f{i:04d}").write_bytes(bytes(512 + (i % 7) * 1024))


def _timeline_of(log: Path) -> Timeline:
    from fsbm.traces.strace import StraceReader

    reader = StraceReader(log)
    for _ in reader.batches():
        pass
    assert reader.stats is not None
    return Timeline.of(reader.stats.timeline)


def _run(command: list[str], cwd: Path) -> int:
    started = time.perf_counter_ns()
    done = subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter_ns() - started
    if done.returncode != 0:
        raise FsbmError(f"tracing calibration: {' '.join(command[:3])} failed (exit {done.returncode}): "
                        f"{done.stderr.decode(errors='replace').strip()[:200]}")
    return elapsed


def fit(runs: list[CalibrationRun]) -> dict[str, float]:
    """Non-negative least squares of the runs' excess spans on their counts (module docstring),
    each run weighted by 1 / its runtime so that every program's relative error counts alike."""
    x = np.array([r.timeline.counts() / r.timeline.concurrency for r in runs])
    y = np.array([r.excess_ns() for r in runs])
    w = 1 / np.array([max(r.runtime_ns, 1.0) for r in runs])
    costs, _ = nnls(x * w[:, None], y * w)
    return dict(zip(COST_NAMES, map(float, costs)))


def _held_out_errors(runs: list[CalibrationRun]) -> list[float]:
    """What tracing added to each program's span as a fit on the others predicts it, against
    what it added (its span less its untraced runtime)."""
    errors = []
    for i, run in enumerate(runs):
        others = TracingOverhead(fit(runs[:i] + runs[i + 1:]), runs[:i] + runs[i + 1:])
        errors.append(others.added_ns(run.timeline) / max(run.excess_ns(), 1.0) - 1)
    return errors


def calibrate(base: Path, *, untraced_runs: int = 5, traced_runs: int = 3, progress=lambda line: None) -> TracingOverhead:
    """Measure tracing's costs on this machine, in a temporary directory beneath `base`."""
    if shutil.which("strace") is None:
        raise FsbmError("strace is not installed; the tracing calibration needs it")
    base.mkdir(parents=True, exist_ok=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="tracing-calibration-", dir=base) as tmp:
        work = Path(tmp)
        _make_files(work)
        for name, command in _calibration_programs(work):
            _run(command, work)  # warm every cache the program uses
            untraced = [_run(command, work) for _ in range(untraced_runs)]
            timelines = []
            for k in range(traced_runs):
                log = work / f"{name}-{k}.strace"
                _run(["strace", *STRACE_FLAGS, "-o", str(log), *command], work)
                timelines.append(_timeline_of(log))
                log.unlink()
            middle = sorted(timelines, key=lambda t: t.span_ns)[len(timelines) // 2]
            runs.append(CalibrationRun(name, untraced, middle))
            progress(f"{name}: {statistics.median(untraced) / 1e6:.1f} ms untraced, "
                     f"{middle.span_ns / 1e6:.1f} ms traced, {middle.calls} calls")
    return TracingOverhead.from_runs(runs, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))

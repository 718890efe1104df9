"""The tracing calibration, measured here: small programs run untraced and under strace,
whose traces the rule (tracing.py) tells against their measured runtimes, and a loop of bare
calls that says what tracing costs a call and a gap on this machine, today.  What the
measurements mean, and how a prediction uses them, is tracing.py's."""

from __future__ import annotations

import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from fsbm.documents import Timeline
from fsbm.errors import FsbmError
from fsbm.host import usable_cores
from fsbm.predictor.cold_start import check_can_measure, measure_cold_start
from fsbm.predictor.tracing import (START_TO_START_PROGRAMS, STRACE_FLAGS, UNTIMED_CAP_SHARE, CalibrationRun,
                                    TracingCalibration, untraced_outside)

# The calibration skips a line of its own traces it cannot read, up to one in this many.
MAX_UNREAD_SHARE = 100
# Untraced and traced runs of each calibration program: a full calibration's, and a quick
# one's (`fsbm trace calibrate --quick`: about half the time, from noisier runs).
FULL_CALIBRATION_RUNS = (5, 3)
QUICK_CALIBRATION_RUNS = (3, 1)
BARE_LOOP_CALLS = 20_000  # dd's 1-byte reads and writes, a loop of bare calls



def _calibration_programs(work: Path) -> list[tuple[str, list[str]]]:
    """Small programs whose time is spent outside their file calls, as the rule estimates it,
    in different mixes: work between calls, calls dense or sparse, one process or several,
    in turn or at once; each run in `work` with warm caches.  Programs that spend their time
    in file calls are no test of it: what the rule would tell of them, their calls' traced
    excess, no prediction uses (the cost model prices file calls), and loops of bare calls
    are none either: what tracing costs is all there is in their gaps."""
    python = [sys.executable, "-S", "-B", "-c"]
    return [
        ("python-work", [*python, "import os\nfor _ in range(4000): os.getppid(); sum(range(2000))"]),
        ("python-calls", [*python, "import os\nfor _ in range(20000): os.getppid(); sum(range(40))"]),
        ("python-compile", [*python, "import glob, py_compile\nfor f in sorted(glob.glob('src/*.py')): "
                                     "py_compile.compile(f, cfile=f + 'c')"]),
        ("compress", ["sh", "-c", "tar -cf - files files files | gzip -c > /dev/null"]),
        ("compress-twice", ["sh", "-c", "tar -cf - files files | gzip -c > /dev/null & "
                                        "tar -cf - files files | gzip -c > /dev/null & wait"]),
        ("sort", ["sort", "-o", "sorted.txt", "lines.txt"]),
        ("processes", ["sh", "-c", "i=0; while [ $i -lt 60 ]; do /bin/true; i=$((i+1)); done"]),
    ]


def _make_files(work: Path, count: int = 1000) -> None:
    """Small files, an archive of them, Python sources to compile and lines to sort."""
    rng = random.Random(5)
    files = work / "files"
    files.mkdir()
    for i in range(count):
        (files / f"f{i:04d}").write_text("".join(f"def f{i}_{j}(x): return x * {rng.random():.6f}\n"
                                                 for j in range(8 + i % 40)))
    with tarfile.open(work / "files.tar", "w") as tar:
        tar.add(files, arcname="files")
    src = work / "src"
    src.mkdir()
    for i in range(40):
        (src / f"m{i}.py").write_text("".join(f"def g{j}(a, b):\n    return [a * k + b for k in range({j})]\n\n"
                                              for j in range(150)))
    (work / "lines.txt").write_text("".join(f"{rng.random():.12f} {rng.randrange(10**9)}\n" for _ in range(300_000)))


def calibration_trace_timeline(log: Path, progress: Callable[[str], None]) -> Timeline:
    """The timeline of one of the calibration's own traces.  A line the parser cannot read
    is skipped and told through `progress`, with what it held: one odd line costs a gap
    or two of thousands, not the calibration.  More than one line in a hundred is a parser
    that does not know this strace, and that is an error."""
    from fsbm.traces.strace import StraceReader

    reader = StraceReader(log, keep_going=True)
    for _ in reader.batches():
        pass
    stats = reader.stats
    assert stats is not None
    if stats.bad_lines:
        first = stats.first_errors[0] if stats.first_errors else "no message"
        if stats.bad_lines * MAX_UNREAD_SHARE > max(stats.lines, 1):
            raise FsbmError(f"tracing calibration: {stats.bad_lines} of the {stats.lines} lines strace wrote could not "
                            f"be read; the first: {first}")
        progress(f"skipped {stats.bad_lines} of the {stats.lines} lines strace wrote, which fsbm could not read "
                 f"(please report it); the first: {first}")
    return Timeline.of(stats.timeline)


def run_timed(command: list[str], cwd: Path) -> int:
    """Nanoseconds `command` took, run in `cwd` with no input and its output dropped; a
    failure is an error saying what it wrote."""
    started = time.perf_counter_ns()
    done = subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter_ns() - started
    if done.returncode != 0:
        raise FsbmError(f"tracing calibration: {' '.join(command[:3])} failed (exit {done.returncode}): "
                        f"{done.stderr.decode(errors='replace').strip()[:200]}")
    return elapsed


def trace_timed(command: list[str], log: Path, cwd: Path) -> int:
    """`command` run in `cwd` under strace with the calibration's flags into `log` (run_timed)."""
    return run_timed(["strace", *STRACE_FLAGS, "-o", str(log), *command], cwd)


@dataclass(frozen=True)
class BareLoop:
    """What tracing costs a loop of bare calls here (measure_bare_loop)."""

    gap_over_call_ns: float  # how much longer a gap takes than its process's median call
    start_to_start_ns: float  # from one call's start to the next's: a log without -T's gap
    call_lean_ns: float  # how far a bare call lies above its process's median call, on average


def measure_bare_loop(work: Path, untraced_runs: int, traced_runs: int,
                      progress: Callable[[str], None] = lambda line: None) -> BareLoop:
    """What tracing costs a loop of bare calls (dd's 1-byte reads and writes), the median of
    `traced_runs` traces: its gaps less their calls' medians, per gap, less what a gap takes
    untraced (the loop's runtime less dd's own start, per call); and its span per call, what
    a gap from one call's start to the next holds where the log has no -T."""
    loop = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", f"count={BARE_LOOP_CALLS}"]
    run_timed(loop, work)
    untraced = statistics.median(run_timed(loop, work) for _ in range(untraced_runs))
    start = statistics.median(run_timed([*loop[:-1], "count=0"], work) for _ in range(untraced_runs))
    untraced_gap = max(untraced - start, 0) / (2 * BARE_LOOP_CALLS)
    over_call, start_to_start, lean = [], [], []
    for k in range(traced_runs):
        log = work / f"bare-calls-{k}.strace"
        trace_timed(loop, log, work)
        timeline = calibration_trace_timeline(log, progress)
        log.unlink()
        if timeline.timed_gaps:
            over_call.append((timeline.timed_gaps_ns - timeline.timed_gaps_call_median_ns) / timeline.timed_gaps
                             - untraced_gap)
            start_to_start.append(timeline.span_ns / timeline.calls)
            if timeline.other_calls:
                lean.append(timeline.calls_signed_ns / timeline.other_calls)
    if not over_call:
        raise FsbmError("tracing calibration: strace timed no call of a loop of bare calls")
    return BareLoop(float(statistics.median(over_call)), float(statistics.median(start_to_start)),
                    float(statistics.median(lean)) if lean else 0.0)


def _traced_both_ways(command: list[str], log: Path, progress: Callable[[str], None]) -> tuple[Timeline, Timeline]:
    """`command` traced once into `log` (removed after): the trace's timeline, and the same
    log's with its call durations taken out, as strace without -T would have written it."""
    from fsbm.traces.strace import without_call_durations

    trace_timed(command, log, log.parent)
    try:
        timed = calibration_trace_timeline(log, progress)
        log.write_bytes(without_call_durations(log.read_bytes()))
        return timed, calibration_trace_timeline(log, progress)
    finally:
        log.unlink()


def calibrate(base: Path, *, untraced_runs: int = FULL_CALIBRATION_RUNS[0], traced_runs: int = FULL_CALIBRATION_RUNS[1],
              cold_start_runs: int = 0, progress: Callable[[str], None] = lambda line: None) -> TracingCalibration:
    """Run the calibration programs untraced and traced here, in a temporary directory
    beneath `base` (module docstring); with `cold_start_runs`, that many cold runs each way of
    the cold start's programs too (cold_start.py: drops every cache, root only)."""
    if shutil.which("strace") is None:
        raise FsbmError("strace is not installed; the tracing calibration needs it")
    if cold_start_runs:
        check_can_measure()
    base.mkdir(parents=True, exist_ok=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="tracing-calibration-", dir=base) as tmp:
        work = Path(tmp)
        bare = measure_bare_loop(work, untraced_runs, traced_runs, progress)
        measured = TracingCalibration(measured_gap_over_call_ns=bare.gap_over_call_ns,
                                      measured_start_to_start_ns=bare.start_to_start_ns,
                                      measured_call_lean_ns=bare.call_lean_ns)
        progress(f"a bare gap traced takes {bare.gap_over_call_ns / 1e3:.1f} us longer than its process's median "
                 f"call, a bare call lies {bare.call_lean_ns / 1e3:.1f} us above its median on average, and a bare "
                 f"call and gap take {bare.start_to_start_ns / 1e3:.1f} us")
        _make_files(work)
        for name, command in _calibration_programs(work):
            run_timed(command, work)  # warm every cache the program uses
            untraced = [run_timed(command, work) for _ in range(untraced_runs)]
            traces = [_traced_both_ways(command, work / f"{name}-{k}.strace", progress) for k in range(traced_runs)]
            middle, untimed = sorted(traces, key=lambda both: both[0].span_ns)[len(traces) // 2]
            runs.append(CalibrationRun(name, untraced, middle, bare.call_lean_ns, untimed))
            so_far = replace(measured, runs=runs)
            rule = measured.gap_over_call_of(middle)
            progress(f"{name}: {statistics.median(untraced) / 1e6:.1f} ms untraced, {middle.span_ns / 1e6:.1f} ms "
                     f"traced, {middle.calls} calls; told from the trace "
                     f"{middle.outside_ns_at(rule, runs[-1].lean_ns) / 1e6:.1f} ms, "
                     f"a gap {rule / 1e3:.1f} us over its calls ({100 * runs[-1].error_at(rule):+.0f}%; "
                     f"without -T {100 * (so_far.untimed_error_of(runs[-1]) or 0):+.0f}%)")
        cold_start = None
        if cold_start_runs:
            def tell(log: Path) -> float:
                told = untraced_outside(calibration_trace_timeline(log, progress), measured)
                return told.seconds * 1e9 if told else 0.0

            cold_start = measure_cold_start(cold_start_runs, run=lambda command: run_timed(command, work),
                                            trace=lambda command, log: trace_timed(command, log, work),
                                            tell=tell, logs=work, progress=progress)
    calibration = replace(measured, runs=runs, measured_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                          cores=usable_cores(), cold_start=cold_start)
    progress(f"without -T, a gap's median counts for no more than {calibration.untimed_cap_ns / 1e3:.0f} us, "
             f"{UNTIMED_CAP_SHARE:g} times a call's start to the next's in the bare loop and "
             f"{' and '.join(START_TO_START_PROGRAMS)} (the slowest, {calibration.start_to_start_ns / 1e3:.1f} us)")
    progress(f"each process more at once makes a traced gap {calibration.contention_ns / 1e3:.1f} us longer "
             "(a trace's own median holds that already; taken off only where a profile has no such median)")
    return calibration

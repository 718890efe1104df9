"""Drive the native fsbench binary: options in, one JSON document out, progress as it runs.

fsbench reports progress on a pipe of its own (native_run.py) (``--progress-fd``) so its stderr stays
for errors.  Ctrl-C reaches fsbench too (same process group); it finishes the operation
in flight and writes what it measured, which is kept and marked interrupted.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbm.errors import FsbmError, UsageError
from fsbm.locations import native_binary
from fsbm.microbench.native_run import load_result, run_with_progress

ProgressCallback = Callable[[int, int, str], None]


def fsbench_binary() -> Path:
    """The built fsbench: $FSBM_FSBENCH, the package's bin/, or PATH."""
    return native_binary("fsbench", Path(__file__).parent)


@dataclass
class FsbenchOptions:
    """What to run; None means fsbench's own default (which depends on `quick`)."""

    quick: bool = False
    only: str | None = None
    sizes: str | None = None
    orders: str | None = None
    gaps: str | None = None
    caches: str | None = None
    reps: int | None = None
    ops: int | None = None
    files: int | None = None
    file_size: str | None = None
    warmup: int | None = None
    case_seconds: float | None = None
    min_rep_seconds: float | None = None
    block_size: int | None = None
    seed: int | None = None
    cpu: str | None = None
    data_file: str | None = None
    aging_state: str | None = None
    file_sizes: str | None = None
    request_sizes: str | None = None

    def arguments(self) -> list[str]:
        args = ["--quick"] if self.quick else []
        for name, value in vars(self).items():
            if name != "quick" and value is not None:
                args += ["--" + name.replace("_", "-"), str(value)]
        return args


# What `fsbench --quick` runs where it is given no --reps or --case-seconds (fsbench.c, apply_defaults();
# its --dry-run says them, and tests/test_fsbench_arguments.py checks the two agree).
QUICK_REPS = 3
QUICK_CASE_SECONDS = 0.25


@dataclass(frozen=True)
class TableEffort:
    """How long a quick cost table measures each case: fsbench's ``--reps`` and
    ``--case-seconds``, None for quick's own.  Less is a faster table and a less precise one;
    the table's run keeps the options it was measured with."""

    reps: int | None = None
    case_seconds: float | None = None

    def quick(self, **options: Any) -> FsbenchOptions:
        """A quick run at this effort, with the other `options` given."""
        return FsbenchOptions(quick=True, reps=self.reps, case_seconds=self.case_seconds, **options)

    @property
    def resolved(self) -> tuple[int, float]:
        """(repetitions, seconds a case) as fsbench runs them at this effort."""
        return (self.reps if self.reps is not None else QUICK_REPS,
                self.case_seconds if self.case_seconds is not None else QUICK_CASE_SECONDS)

    def shortfall(self, config: dict[str, Any] | None) -> str | None:
        """Why a table measured by a run of `config` (its stored options) is less than this
        effort, in words; None where it measured at least as long a case, as many times."""
        reps, seconds = self.resolved
        if not config or "reps" not in config or "case_seconds" not in config:
            return "its run recorded no effort"
        if config["reps"] < reps or config["case_seconds"] < seconds:
            return (f"it was measured at {config['reps']} repetitions of {config['case_seconds']:g} s a case, "
                    f"less than the {reps} of {seconds:g} s asked for")
        return None

    def held_to(self, reps: int | None, case_seconds: float) -> tuple[int | None, float]:
        """A workload case's (repetitions, seconds a case), None for quick's own repetitions,
        held to this effort where it sets one: a command told to measure its tables at less
        than quick's effort measures the workload's own cases no longer than that either."""
        if self.reps is not None:
            reps = min(reps if reps is not None else QUICK_REPS, self.reps)
        if self.case_seconds is not None:
            case_seconds = min(case_seconds, self.case_seconds)
        return reps, case_seconds


# A run measuring a workload's own cases (options_measuring): a data file of four requests of
# the largest size, made anew each repetition, and ten repetitions, so that a 64 MiB sync is
# timed some thirty times (with three, two tables' 48 MiB syncs differed by 1.6x).
REGIME_REQUESTS_PER_FILE = 4
REGIME_REPS = 10
REGIME_CASE_SECONDS = 5.0
# A metadata case measured at a workload's count whose calls cost more the longer the stream
# before them (a stream of unlinks: on btrfs 24,000 cost 37-47 us each, a thousand 20-29 us),
# timed whole: no call left out as warm-up, and a budget of WHOLE_STREAM_CAP_NS a call, five
# times the dearest such stream's mean here (rm -rf on xfs, 44 us an unlink), so that no
# repetition is cut short and the run's estimate (its cap) stays within reach of its length.
# Measured unpinned (--cpu none), as the programs that make such streams run: the unlinks
# defer work to other CPUs (xfs inactivates its inodes in per-CPU workers), and pinned,
# fsbench's xfs unlinks of files holding 4 KiB cost 18 us where rm -rf paid 26-28; unpinned,
# fsbench paid 24-27.
WHOLE_STREAM_BENCHES = frozenset({"unlink", "unlink_entries"})
WHOLE_STREAM_CAP_NS = 200_000
# unlink_entries empties readdir_entries' directories: about LISTED_ENTRIES (40,000) entries
# in all, and at least MIN_LISTINGS (4) directories of the entries asked for (meta.c).
EMPTIED_ENTRIES, EMPTIED_DIRECTORIES = 40_000, 4


def whole_stream_calls(bench: str, files: int) -> int:
    """The most calls a repetition of a whole stream makes at a workload's count `files`: an
    unlink's stream that many, unlink_entries' directories of that many entries each."""
    return max(EMPTIED_ENTRIES, EMPTIED_DIRECTORIES * files) if bench == "unlink_entries" else files


def options_measuring(cases: Iterable[tuple[str, str, str, int, tuple[int, ...], tuple[int, ...], int | None]], *,
                      seed: int | None = None, aging_state: str | None = None,
                      effort: TableEffort = TableEffort()) -> list[FsbenchOptions]:
    """fsbench runs that measure exactly these (benchmark, order, cache, request size, mix of
    file sizes, mix of request sizes, files among which: None for fsbench's own count) cases:
    one per benchmark, order, cache, mixes and count of files, three
    sizes at most a run (fsbench times its syncs after the first three sizes only), each on a
    data file of REGIME_REQUESTS_PER_FILE requests of its largest size (at least quick's 64
    MiB).  A case with a mix (a *_mix benchmark's) is measured at that mix (and write_new_mix
    at its mix of request sizes), its size being the mean, in quick's repetitions: each makes
    a thousand files, which on btrfs hold some fifteen of the waits the case is there to
    measure.  A metadata case at a workload's count (size 0: readdir_entries) takes no
    --sizes; one of WHOLE_STREAM_BENCHES is timed whole, in quick's repetitions.  `effort`
    holds every run to a command's --table-reps and --table-case-seconds (TableEffort.held_to),
    but for a whole stream's seconds, which a cut would make another measurement."""
    groups: dict[tuple[str, str, str, tuple[int, ...], tuple[int, ...], int], set[int]] = {}
    for bench, order, cache, size, file_sizes, request_sizes, files in cases:
        key = (bench, order, cache, tuple(file_sizes), tuple(request_sizes), files or 0)
        groups.setdefault(key, set()).add(int(size))
    runs = []
    for (bench, order, cache, file_sizes, request_sizes, files), sizes in sorted(groups.items()):
        ordered = sorted(sizes)
        mix = ",".join(map(str, file_sizes)) or None
        for start in range(0, len(ordered), 3):
            chunk = ordered[start:start + 3]
            whole = bench in WHOLE_STREAM_BENCHES and bool(files)
            reps, case_seconds = effort.held_to(None if mix or whole else REGIME_REPS, REGIME_CASE_SECONDS)
            if whole:
                case_seconds = (reps or QUICK_REPS) * whole_stream_calls(bench, files) * WHOLE_STREAM_CAP_NS / 1e9
            runs.append(FsbenchOptions(quick=True, only=bench, sizes=None if mix or not any(chunk) else
                                       ",".join(map(str, chunk)),
                                       orders=order, caches=cache, reps=reps,
                                       file_size=str(max(REGIME_REQUESTS_PER_FILE * chunk[-1], 64 << 20)),
                                       case_seconds=case_seconds, warmup=0 if whole else None, seed=seed,
                                       aging_state=aging_state, files=files or None,
                                       cpu="none" if whole else None,
                                       file_sizes=mix, request_sizes=",".join(map(str, request_sizes)) or None))
    return runs


def completed(doc: dict[str, Any]) -> bool:
    """Whether an fsbench run measured every case it planned: not interrupted, no case failed.
    Only such a run makes a cost table, or grows one."""
    return not doc.get("interrupted") and not doc.get("errors")


def check_target(target: Path) -> Path:
    """Refuse, before anything runs, a target that is not a directory this user may write."""
    target = Path(target)
    if not target.exists():
        raise UsageError(f"target {target} does not exist")
    if not target.is_dir():
        raise UsageError(f"target {target} is not a directory")
    if not os.access(target, os.W_OK | os.X_OK):
        raise UsageError(f"target {target} is not a directory this user may write")
    return target


def _progress_line(on_progress: ProgressCallback | None) -> Callable[[str], None]:
    def parse(line: str) -> None:
        parts = line.split(" ", 3)
        if on_progress and len(parts) == 4 and parts[0] == "progress":
            on_progress(int(parts[1]), int(parts[2]), parts[3])
    return parse


def plan(target: Path, options: FsbenchOptions) -> tuple[list[str], str]:
    """fsbench --dry-run: the cases it would run and its time estimate line."""
    check_target(target)
    command = [str(fsbench_binary()), "--target", str(target), "--dry-run", *options.arguments()]
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode == 2:
        raise UsageError(done.stderr.strip().removeprefix("fsbench: ").splitlines()[0])
    if done.returncode != 0:
        raise FsbmError(f"fsbench --dry-run failed: {done.stderr.strip()}")
    return done.stdout.splitlines(), done.stderr.strip().removeprefix("fsbench: ")


def run_fsbench(target: Path, options: FsbenchOptions, *, on_progress: ProgressCallback | None = None) -> dict[str, Any]:
    """Run fsbench on `target`; returns its JSON document (possibly partial, see its flags)."""
    check_target(target)
    binary = fsbench_binary()
    with tempfile.TemporaryDirectory(prefix="fsbm-fsbench-") as tmp:
        out_path = Path(tmp) / "fsbench.json"
        returncode, stderr = run_with_progress(
            lambda fd: [str(binary), "--target", str(target), "--json", str(out_path), "--progress-fd", str(fd),
                        *options.arguments()], _progress_line(on_progress))
        doc = load_result("fsbench", returncode, stderr, out_path)
        doc.pop("warnings", None)
        return doc

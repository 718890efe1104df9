"""The part of a job's cold start that no plain trace of it holds, measured on this machine.

A plain trace begins at the traced program's execve.  Before it, strace has already looked
the program up on the PATH, and run with the loader and the C library mapped, so a cold run
traced that way finds the PATH's directories, the program's inode and the pages strace used
in memory, where an untraced cold run reads them from disk.  Nothing in the trace shows that
wait, and it is the same on every candidate (the system disk, not the filesystem under
study), so a cold prediction from a plain trace adds it once, as measured here: small
programs started by name, as a job's first program is, each run cold untraced, and traced
cold as a user's job would be, its trace told by the rule (predictor/tracing.py).  What the
untraced run took beyond what its trace tells is that program's cold start no trace holds.

The programs link different libraries, and the wait differs with them (the C library alone,
or more: what the traced run reads after its execve is in its trace), so the estimate is
their median and its band their range.  Measuring it drops every cache of the machine
(microbench/cache.drop_all, root), which is why the calibration does it only when asked
(`fsbm trace calibrate --cold-start`, and the plain validation).
docs/model-evidence.md, "The cold start no trace holds", keeps the measurements.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsbm.errors import UsageError
from fsbm.microbench.cache import can_drop_all, drop_all

# Programs from the base system, started by name through the PATH as a job's first program
# is, that do next to nothing once started: what each run takes beyond its trace's told time
# is its start.  They link the C library alone (true, cat, sh) or further libraries (ls, find).
COLD_START_PROGRAMS = (("true", ["true"]), ("cat", ["cat", "/dev/null"]), ("sh", ["sh", "-c", ":"]),
                       ("ls", ["ls", "--version"]), ("find", ["find", "--version"]))
# Cold runs of each program, untraced and traced: a full calibration's, a quick one's.
FULL_COLD_START_RUNS = 3
QUICK_COLD_START_RUNS = 2


@dataclass(frozen=True)
class ColdStartRun:
    """One program's cold runs: untraced, and what the rule told from each cold trace of it."""

    name: str
    untraced_ns: list[int]
    told_ns: list[float]

    @property
    def missing_ns(self) -> float:
        """How much longer the untraced cold runs took than their traces tell (medians)."""
        return float(statistics.median(self.untraced_ns) - statistics.median(self.told_ns))


@dataclass(frozen=True)
class ColdStart:
    """The cold start no plain trace holds, per program measured (module docstring)."""

    runs: list[ColdStartRun] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """The estimate a cold prediction adds: the programs' median, never below 0."""
        return max(float(statistics.median(r.missing_ns for r in self.runs)), 0.0) / 1e9 if self.runs else 0.0

    @property
    def band(self) -> tuple[float, float]:
        """Seconds: the least and the most any program's cold start took, never below 0."""
        if not self.runs:
            return 0.0, 0.0
        missing = [r.missing_ns for r in self.runs]
        return max(min(missing), 0.0) / 1e9, max(max(missing), 0.0) / 1e9

    def each_program(self) -> str:
        """Each program's cold start, in words: "true 6.6 ms, cat 7.8 ms, ..."."""
        return ", ".join(f"{r.name} {r.missing_ns / 1e6:.1f} ms" for r in self.runs)

    def words(self) -> str:
        """What it is and what it rests on, for a prediction's evidence."""
        low, high = self.band
        each = self.each_program()
        return (f"the cold start no trace holds (strace looked the program up and loaded the C library before the "
                f"trace begins), {1e3 * self.seconds:.1f} ms ({1e3 * low:.1f}-{1e3 * high:.1f}), measured here on "
                f"small programs run cold untraced and traced: {each}")

    def to_json(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "band": list(self.band),
                "runs": [{"name": r.name, "untraced_ns": r.untraced_ns, "told_ns": r.told_ns} for r in self.runs]}

    @classmethod
    def from_json(cls, body: dict[str, Any] | None) -> "ColdStart | None":
        if not body:
            return None
        return cls([ColdStartRun(r["name"], list(r["untraced_ns"]), list(r["told_ns"])) for r in body.get("runs", [])])


def check_can_measure() -> None:
    """Refuse, saying why, where this process cannot drop the caches (not root)."""
    if not can_drop_all():
        raise UsageError("measuring the cold start drops the machine's caches, which needs root",
                         hint="run `fsbm trace calibrate --cold-start` as root, or leave --cold-start out")


def measure_cold_start(runs: int, *, run: Callable[[list[str]], int], trace: Callable[[list[str], Path], int],
                       tell: Callable[[Path], float], logs: Path,
                       progress: Callable[[str], None] = lambda line: None) -> ColdStart:
    """Each of COLD_START_PROGRAMS `runs` times cold untraced (`run`: its nanoseconds) and as
    many times traced cold into a log beneath `logs` (`trace`), each trace told by `tell` (ns
    outside its file calls, the rule's), untraced and traced runs taking turns.  Drops every
    cache before each run: root only."""
    check_can_measure()
    measured = []
    for name, command in COLD_START_PROGRAMS:
        untraced, told = [], []
        for k in range(runs):
            drop_all()
            untraced.append(run(command))
            log = logs / f"cold-{name}-{k}.strace"
            drop_all()
            trace(command, log)
            try:
                told.append(tell(log))
            finally:
                log.unlink()
        measured.append(ColdStartRun(name, untraced, told))
        progress(f"{name}, cold: {statistics.median(untraced) / 1e6:.1f} ms untraced, told "
                 f"{statistics.median(told) / 1e6:.1f} ms from its cold traces: a start of "
                 f"{measured[-1].missing_ns / 1e6:.1f} ms that no trace holds")
    return ColdStart(measured)

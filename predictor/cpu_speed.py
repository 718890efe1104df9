"""The host's CPU speed in a validation's real runs, and the runs with it held steady.

A program of the suite does the same work in every run, so its user CPU time would be the
same in every run on a steady processor, whatever the filesystem: the filesystem's work is
system time, and waiting is neither.  On a shared host it is not: tar-gzip's gzip took 1.41
s of user time in one run and 1.84 s in another on the same target, minutes apart, and the
runtime moved with it.  Such a move is the host's, and it falls on whichever target ran in
that minute, so it moves the measured ratios between targets as much as the device's drift
does.

`steadied` gives each real run the user time of its program's median run instead of its
own: the runtime it would have had at the program's usual speed.  A run whose processes
overlapped (its CPU time more than its wall time: make -j2, xargs -P 2) moves by the
difference over that overlap, as its wall time moved.  A judge reports its
errors against these beside the errors against the runs as measured (which remain the
verdict): the difference is how much of an error was the host's processor, not the model.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from fsbm.units import percent

# Programs with less user time than this in some run are left as they were measured.  The
# kernel (tick accounting) splits a process's CPU time into user and system time by where its
# clock ticks (every 4 ms at 250 Hz) found it, so a program of 0.1 s of user time among more
# system time has a user time the sampling alone moves: sqlite's moved 2.3x between runs where
# the programs of mostly user time moved 40%.
STEADY_MIN_USER_S = 0.2


@dataclass(frozen=True)
class UserCpuSpread:
    """How far each program's user CPU time moved between its real runs (max / min - 1),
    over the programs with enough of it: the median and the largest, and whose."""

    programs: int
    median: float
    largest: float
    largest_program: str

    def to_json(self) -> dict[str, object]:
        return {"programs": self.programs, "median": self.median, "largest": self.largest,
                "largest_program": self.largest_program}


def _user_times(records: list[dict]) -> dict[str, list[float]]:
    """Per program whose processor is steadied, the user CPU time of each of its real runs
    (on every target): the programs with two runs or more, each of STEADY_MIN_USER_S or more."""
    out: dict[str, list[float]] = {}
    for r in records:
        if r["kind"] == "real":
            out.setdefault(r["program"], []).append(r.get("user_cpu_s"))
    return {program: [float(t) for t in times] for program, times in out.items()
            if len(times) > 1 and None not in times and min(times) >= STEADY_MIN_USER_S}


def user_cpu_spread(records: list[dict]) -> UserCpuSpread | None:
    """The spread of user CPU time over each steadied program's real runs (_user_times); None
    where there is none."""
    spreads = {program: max(times) / min(times) - 1 for program, times in _user_times(records).items()}
    if not spreads:
        return None
    worst = max(spreads, key=spreads.__getitem__)
    return UserCpuSpread(len(spreads), statistics.median(spreads.values()), spreads[worst], worst)


def steadied(records: list[dict]) -> list[dict]:
    """The records with each real run of a steadied program (_user_times) given its program's
    median user CPU time in place of its own (every other record as it was)."""
    usual = {program: statistics.median(times) for program, times in _user_times(records).items()}
    out = []
    for r in records:
        if r["kind"] == "real" and r["program"] in usual and r["seconds"] > 0:
            overlap = max(1.0, (r["user_cpu_s"] + (r.get("system_cpu_s") or 0.0)) / r["seconds"])
            r = {**r, "seconds": r["seconds"] + (usual[r["program"]] - r["user_cpu_s"]) / overlap}
        out.append(r)
    return out


def moved_sentence(spread: dict[str, object]) -> str:
    """What a judge's document says of the processor's moves (UserCpuSpread.to_json)."""
    return (f"A program does the same work in every run, yet its user CPU time moved between its runs by a median of "
            f"{percent(float(spread['median']), digits=0)} over the {spread['programs']} programs of "
            f"{STEADY_MIN_USER_S:g} s or more a run (at most "
            f"{percent(float(spread['largest']), digits=0)}, {spread['largest_program']}): the shared host's processor "
            "ran at different speeds from one minute to the next, and each target's runs took the speed of their "
            "minute. With each run given its program's median user time instead of its own, the errors would be "
            "these (a diagnosis of how much of each error is the processor's, not the verdict):")

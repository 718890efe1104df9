"""The time a recorded workload spends outside the filesystem (`fsbm trace record`).

Tracing inflates every traced call many times over, by an amount that varies between
programs, so the time outside starts from what tracing does not bend: the CPU time of the
program's untraced runs.
- Its user time is outside the filesystem, all of it.
- Its system time is partly the filesystem's calls and partly not (exec, page faults,
  pipes, calls on other filesystems).  The calls' CPU time on the traced filesystem is
  taken off: measured where a cold replay there bracketed every call with the CPU clock
  (`--replay-in`), else priced from fsbench's CPU time per call (cpu_ns).  Only their CPU
  time, not their latency: a cold call's time is mostly a wait for the device.
- A cold prediction takes the cold runs' CPU time, a warm one the runs with every file read
  in first: a cold run spends CPU that no call of its workload holds.
- Where the recording has cold runs with their syncs skipped (libeatmydata, and replays
  that skip them too), the time outside starts from those, and what skipping the syncs
  saved the cold runs is the syncs' CPU: a sync causes work beside itself that no bracket
  around it holds.  A workload that flushes nothing ran the same way in both kinds of run,
  so its time outside starts from the mean of the two: a difference of two measured CPU
  times is small beside either, and one run's minute moves it.
- The calls' measured CPU, by group (metadata, reads, writes, syncs), scales fsbench's CPU
  prices of that group on every candidate (cpu_scales, model.CpuScales).
- A cold run also waits for the files it reads from outside the workload (executables,
  libraries), and every run idles starting and reaping its processes: both are measured by
  the recording and added as they are.
- CPU time is summed over processes, and processes that compute at once (make -j2, xargs
  -P 2) spend it in parallel: a run with every file cached whose CPU time exceeds its wall
  time computed on that many cores at once, on average (`cpu_parallelism`), and the CPU
  time outside counts over it.  One process, or processes that take turns, count it whole.

Without the traced filesystem's costs, the time outside is the user time plus the traced
time of calls on other filesystems less the per-call inflation measured in the same trace.
Nothing here is fitted.  docs/model-evidence.md keeps the measurements behind each rule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from fsbm.documents import OutsideReading, Profile
from fsbm.errors import UsageError
from fsbm.predictor.estimator import spread_by
from fsbm.predictor.model import CpuScales, FsTime, price_workload
from fsbm.predictor.pricing import Pricer
from fsbm.traces.record import (CALLS_CPU_FIELDS, OUTSIDE_WAIT_FIELD, UNTRACED_CALLS_CPU_SYNCS_SKIPPED,
                                UNTRACED_NOSYNC_FIELDS, UNTRACED_WARM_FIELDS, UNTRACED_WARM_SYNCS_SKIPPED,
                                WARM_IDLE_FIELD)

WARM_USER, WARM_SYSTEM = UNTRACED_WARM_FIELDS
NOSYNC_USER, NOSYNC_SYSTEM = UNTRACED_NOSYNC_FIELDS
COLD_USER, COLD_SYSTEM = "untraced_user_cpu_ns", "untraced_system_cpu_ns"
EVERYTHING_CACHED = 1 << 62  # a page cache that holds any workload


@dataclass(frozen=True)
class Outside:
    """The time a workload spends outside the filesystem, seconds, with its 90% band; `kind`
    is the evidence it rests on (estimator.EVIDENCE), `evidence` says it in words."""

    seconds: float
    low: float
    high: float
    kind: str
    evidence: str
    # A plain trace's: how many seconds the estimate falls for each ns more that each gap is
    # taken to have cost under tracing (tracing.untraced_outside); 0 where nothing so moves it.
    per_gap_s: float = 0.0
    # A plain trace's: the most its processes' work may have been slowed by sharing the cores
    # with the tracer (tracing.shared_cores_stretch); the band's low end is divided by it.
    stretch: float = 1.0
    # A plain trace's: the work in its gaps right after a call that mapped a file, where the
    # program read what it mapped (Timeline.mapped_gaps_work_ns); predict.Workload takes the
    # modelled read of the mapped regions off the estimate, up to this, as the cost model
    # prices that read already.
    mapped_s: float = 0.0
    # A plain trace's: what the estimate took off for tracing's lean in it (Timeline.lean_off_ns),
    # which is uncertain by as much again: the band is wider by it either side, in quadrature.
    lean_s: float = 0.0
    # What the user should know before trusting the estimate ("" where nothing), as
    # tracing.stall_warning says it.
    warning: str = ""
    # Where the estimate is the mean of a trace's readings (tracing.both_readings), each one's.
    readings: tuple[OutsideReading, ...] = ()

    @property
    def evidence_in_full(self) -> str:
        """The evidence and, where the estimate is the mean of readings, how each told its own:
        one paragraph, as a validation's page lists it."""
        return "; ".join([self.evidence, *(f"{r.reading}: {r.evidence}" for r in self.readings)])

    @classmethod
    def exactly(cls, seconds: float, kind: str, evidence: str) -> "Outside":
        return cls(seconds, seconds, seconds, kind, evidence)

    @classmethod
    def within(cls, seconds: float, band: tuple[float, float], kind: str, evidence: str,
               stretch: float = 1.0, lean_s: float = 0.0) -> "Outside":
        """An estimate whose relative error (estimate / truth - 1) lies in `band`, or whose
        truth may be as little as a `stretch`-th of the band's low end: the truth lies between
        seconds / (1 + high) / stretch and seconds / (1 + low), each end further by `lean_s`
        in quadrature (estimator.spread_by)."""
        low_error, high_error = band
        low, high = spread_by(seconds, seconds / (1 + high_error), seconds / (1 + low_error), lean_s)
        return cls(seconds, float(low) / stretch, float(high), kind, evidence, stretch=stretch, lean_s=lean_s)

    def more(self, seconds: float, band: tuple[float, float], why: str) -> "Outside":
        """This time and `seconds` more, its band widened by `band` (the least and the most
        those seconds may be), the evidence saying `why`."""
        low, high = band
        return replace(self, seconds=self.seconds + seconds, low=self.low + low, high=self.high + high,
                       evidence=f"{self.evidence}, and {why}")

    def less(self, seconds: float, why: str) -> "Outside":
        """This time less `seconds` (never below 0), the evidence saying `why`."""
        return replace(self, seconds=max(self.seconds - seconds, 0.0), low=max(self.low - seconds, 0.0),
                       high=max(self.high - seconds, 0.0), evidence=f"{self.evidence}, {why}")


def _recording(profile: Profile) -> dict[str, Any]:
    """The recording's measurements by name (traces/record.py), none for a plain trace."""
    return profile.recording.measured() if profile.recording else {}


def _warm_runs(profile: Profile, start: str) -> bool:
    """Whether the CPU time comes from the runs with every file read in: for a warm
    prediction, where the recording has them."""
    recording = _recording(profile)
    return start == "warm" and WARM_USER in recording and WARM_SYSTEM in recording


# How far a workload's measured calls' CPU may move fsbench's CPU prices of a group
# (cpu_scales): a replay that measured more than twice or less than half of what fsbench
# prices is more likely a replay gone wrong (calls that failed, a loaded machine) than calls
# that costly.
CPU_SCALE_BOUNDS = (0.5, 2.0)


def _without_syncs(profile: Profile, start: str) -> bool:
    """Whether a cold prediction's CPU time comes from the cold runs made with their syncs
    skipped: where the recording has them, and replays that measured the calls' CPU skipping
    the syncs too (module docstring)."""
    recording = _recording(profile)
    needed = (NOSYNC_USER, NOSYNC_SYSTEM, COLD_USER, COLD_SYSTEM, *CALLS_CPU_FIELDS.values())
    return (start == "cold" and bool(recording.get(UNTRACED_CALLS_CPU_SYNCS_SKIPPED))
            and all(name in recording for name in needed))


def _makes_syncs(profile: Profile) -> bool:
    """Whether the traced workload flushed any file (fsync, fdatasync, sync_file_range)."""
    kinds = profile.fsync.kinds or {}
    return any(kind.count for kind in kinds.values()) or "fsync" in profile.classes.metadata


def _pooled_cold_cpu(recording: dict[str, Any]) -> tuple[float, float]:
    """(user, system) CPU ns of a workload's cold runs where it flushes nothing: its runs with
    syncs skipped are cold runs too, so both kinds are taken, as the mean of the two."""
    return ((recording[COLD_USER] + recording[NOSYNC_USER]) / 2,
            (recording[COLD_SYSTEM] + recording[NOSYNC_SYSTEM]) / 2)


def _syncs_skipped(profile: Profile, start: str) -> bool:
    """Whether the runs a `start` prediction's CPU time comes from skipped their syncs."""
    if _warm_runs(profile, start):
        return bool(_recording(profile).get(UNTRACED_WARM_SYNCS_SKIPPED))
    return _without_syncs(profile, start)


def _measured(profile: Profile, start: str) -> dict[str, int] | None:
    """The calls' CPU time measured, by group: by replay, and the syncs', where the replays
    skipped them, as what skipping them saved the cold runs; None for a warm prediction or
    where the recording has none."""
    recording = _recording(profile)
    if start != "cold" or not all(name in recording for name in CALLS_CPU_FIELDS.values()):
        return None
    measured = {group: recording[name] for group, name in CALLS_CPU_FIELDS.items()}
    if _without_syncs(profile, start):
        saved = recording[COLD_USER] + recording[COLD_SYSTEM] - recording[NOSYNC_USER] - recording[NOSYNC_SYSTEM]
        measured["sync"] = max(saved, 0) if _makes_syncs(profile) else 0
    return measured


def _scales(measured: dict[str, int] | None, priced: FsTime, sync_from_runs: bool = False) -> dict[str, float]:
    """Per group, measured / priced CPU, bounded (but the syncs' where the runs measured it,
    `sync_from_runs`: CPU_SCALE_BOUNDS guard against a replay gone wrong, and no replay
    measured it); 1 where either is unknown or nothing is priced."""
    low, high = CPU_SCALE_BOUNDS
    out = {}
    for group, ns in priced.by_group(cpu=True).items():
        if not measured or ns <= 0:
            out[group] = 1.0
        elif group == "sync" and sync_from_runs:
            out[group] = measured[group] / ns
        else:
            out[group] = min(max(measured[group] / ns, low), high)
    return out


def cpu_scales(profile: Profile | dict[str, Any], traced: Pricer, *, cache_bytes: int, start: str = "cold") -> CpuScales:
    """Per group of operations, how many times fsbench's CPU time per call the profile's calls
    took on the filesystem it was traced on (`traced`'s cost table), where a cold replay
    there measured them (CALLS_CPU_FIELDS), 1 elsewhere; with fsbench's CPU prices of them
    there.  price_workload takes every candidate's CPU prices of a group by it (module
    docstring; model.CpuScales says how)."""
    profile = Profile.of(profile)
    priced = price_workload(profile, traced, cache_bytes=cache_bytes, start=start)
    return CpuScales(_scales(_measured(profile, start), priced, _without_syncs(profile, start)),
                     priced.by_group(cpu=True))


def calls_cpu_seconds(profile: Profile | dict[str, Any], traced: Pricer, *, cache_bytes: int, start: str = "cold") -> float:
    """The CPU time the profile's filesystem calls take on the filesystem it was traced on
    (`traced`'s cost table), priced as the runs its CPU time comes from ran (module
    docstring): from a `start` cache of `cache_bytes`, each group at cpu_scales times
    fsbench's CPU prices; or, from the all-warm runs, with every file cached; either without
    its syncs where those runs skipped them (traces/nosync.py).  What outside_features takes
    from the CPU time of the runs."""
    profile = Profile.of(profile)
    if _warm_runs(profile, start):  # fsbench's prices
        spent = CpuScales({}, price_workload(profile, traced, cache_bytes=EVERYTHING_CACHED,
                                             start="warm").by_group(cpu=True))
    else:
        spent = cpu_scales(profile, traced, cache_bytes=cache_bytes, start=start)
    skipped = _syncs_skipped(profile, start)
    return sum(ns * spent.factors.get(group, 1.0) for group, ns in spent.traced_ns.items()
               if not (skipped and group == "sync")) / 1e9


def outside_features(profile: Profile | dict[str, Any], traced_cpu_s: float | None = None,
                     start: str = "cold") -> dict[str, float]:
    """user_cpu_s, system_cpu_s, outside_calls_s and outside_wait_s of a profile made by
    `fsbm trace record`, for runs that start from a `start` cache.
    `traced_cpu_s`: the CPU time of its filesystem calls on the filesystem it was traced on
    (calls_cpu_seconds, with the same `start`); with it, and untraced runs, the system time
    outside it counts (module docstring)."""
    profile = Profile.of(profile)
    recording = _recording(profile)
    if not recording or not profile.trace_time.known:
        raise UsageError(f"the profile of {profile.source or 'this trace'} has no recording facts: the time "
                         "outside the filesystem is unknown",
                         hint="record the program with `fsbm trace record` (it keeps the CPU time beside the log), "
                              "or use the relative form (--measured SECONDS --traced-on CANDIDATE)")
    if _warm_runs(profile, start):
        user, system = recording[WARM_USER], recording[WARM_SYSTEM]
    elif _without_syncs(profile, start):
        user, system = ((recording[NOSYNC_USER], recording[NOSYNC_SYSTEM]) if _makes_syncs(profile)
                        else _pooled_cold_cpu(recording))
    else:
        user = recording.get(COLD_USER, recording["user_cpu_ns"])
        system = recording.get(COLD_SYSTEM)
    # A warm run finds the files outside the workload cached too: it does not wait for them.
    # Every run idles as a run with every file cached does (module docstring).
    wait = {"outside_wait_s": 0.0 if start == "warm" else recording.get(OUTSIDE_WAIT_FIELD, 0) / 1e9,
            "outside_idle_s": max(recording.get(WARM_IDLE_FIELD, 0), 0) / 1e9,
            "cpu_parallelism": cpu_parallelism(recording)}
    if traced_cpu_s is not None and system is not None and _measured(profile, start):
        # The calls' CPU measured: taken from the whole CPU time, whose split is by ticks (module docstring).
        outside_cpu = max((user + system) / 1e9 - traced_cpu_s, 0.0)
        return {"user_cpu_s": min(user / 1e9, outside_cpu), "system_cpu_s": max(outside_cpu - user / 1e9, 0.0),
                "outside_calls_s": 0.0, **wait}
    if traced_cpu_s is not None and system is not None:
        return {"user_cpu_s": user / 1e9, "system_cpu_s": max(system / 1e9 - traced_cpu_s, 0.0), "outside_calls_s": 0.0,
                **wait}
    return {"user_cpu_s": user / 1e9, "system_cpu_s": 0.0,
            "outside_calls_s": profile.trace_time.outside_calls_corrected_ns / 1e9, **wait}


def cpu_parallelism(recording: dict[str, Any]) -> float:
    """On how many cores at once the recorded program computed, on average: the CPU time of
    its runs with every file cached over their wall time (their CPU time plus their idle
    time), where that exceeds 1; else 1 (one process, or processes taking turns)."""
    cpu = recording.get(WARM_USER, 0) + recording.get(WARM_SYSTEM, 0)
    wall = cpu + recording.get(WARM_IDLE_FIELD, 0)
    return cpu / wall if wall > 0 and cpu > wall else 1.0


def outside_seconds(features: Any) -> Any:
    """Seconds outside the filesystem: CPU time over the cores it ran on at once + calls on
    other filesystems + the wait for files outside the workload + the idle time of every
    run.  `features` is a dict from outside_features or a DataFrame of such rows (then one
    value per row); rows made before the wait, the idle time or the parallelism was measured
    have none."""
    return ((features["user_cpu_s"] + features["system_cpu_s"]) / features.get("cpu_parallelism", 1.0)
            + features["outside_calls_s"] + features.get("outside_wait_s", 0.0) + features.get("outside_idle_s", 0.0))

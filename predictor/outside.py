"""What a profile says about the time its program spends outside the filesystem.

Tracing inflates each traced call by tens of microseconds here (ptrace stops on both sides
of the call), which for a program making tens of thousands of calls is many times its
untraced runtime, and the inflation per call varies by a third between programs: no
subtraction from the traced wall time survives that.  So the time outside starts from what
tracing does not bend, the CPU time of untraced runs (`fsbm trace record --untraced-runs`):

- its user time is outside the filesystem, all of it;
- its system time is partly the filesystem's (the calls under study) and partly not
  (exec, page faults, pipes, calls on other filesystems).  When the cost table of the
  filesystem the program was traced on is known, the CPU time of its calls there is
  modelled as their time is, from fsbench's CPU time per call (cpu_ns); system time less
  that, never below zero, was outside.  Not less their whole modelled time: a cold call's
  time is mostly a wait for the device (a cold 4 KiB read here: 95 us, 21 us of it CPU),
  and taking waits from CPU time left git's system time outside at 0 where it is 0.2 s.
  A cost table measured before fsbench kept CPU time prices the CPU at the whole latency,
  the older upper bound.

Which runs the CPU time comes from: the runs that start as the predicted ones do.
`fsbm trace record --cold` with a scope makes cold runs and, beside them, runs that start
with every file read in, the workload's and those outside it (traces/record.py:
untraced_warm_*).  A cold prediction takes the cold runs' CPU time, less its calls' CPU
priced cold; a warm one takes the all-warm runs', less its calls' CPU priced warm (those
runs skip their syncs, traces/nosync.py says why, and then the syncs' CPU is not taken
either).  Why not the all-warm runs for both, as fsbm did until 2026-11-24: a cold run
spends CPU that no call of its workload holds.  On tmpfs, where the workload's files never
leave memory, a run after every cache was dropped used more CPU than an all-warm one:
compile 2.67 s against 1.93, git 0.67 against 0.58, sqlite 0.25 against 0.18, random-reads
0.026 against 0.015 (medians of 5 and 5); the warm runs' outside time missed compile's
tmpfs runtime by 0.3 s.  Over validation runs 9-11 the cold runs gave the better median
error (9.5, 7.2, 7.3% against 11.5, 12.4, 10.9%).  What the cold runs do worse: a call
whose cold CPU fsbench underprices leaves its excess outside, counted on every candidate
(sqlite's syncs: 0.17 s of CPU outside its ext4 runs, 0.13 s of time outside on tmpfs).
Older recordings have only the cold runs, and a warm prediction then takes those.

Where the calls' CPU time was measured, not priced: a cold replay of the trace on the
traced filesystem, every call bracketed by the CPU clock (`fsbm trace record --replay-in`,
traces/record.py: replay_calls_cpu), says how much CPU its calls took there, by group
(metadata, reads, writes, syncs).  fsbench's CPU prices of the same calls are off by a
factor particular to the workload and the group: SQLite's 1204 syncs and 61,000 small writes
took 0.236 s of CPU replayed on ext4 where fsbench's prices add up to 0.153 s (validation
run 15), and that excess, left outside, was added to every candidate (sqlite on tmpfs:
+31% in run 14, +62% in run 15).  Measured, it is the calls': each group's CPU prices on
every candidate are taken measured / priced times (cpu_scales), and the time outside is the
cold runs' CPU time less the calls' so corrected.  On the traced filesystem the prediction
is then what it was (the CPU moves from outside into the calls); elsewhere the excess
follows the calls of its group, in proportion to their CPU prices but never more than it
was where measured (model.CpuScales: btrfs's syncs are not twice as dear because ext4's were).
Why by group: one factor for every call took ext4's journal CPU, 1.54 times fsbench's for
sqlite, to tmpfs's writes, which it overpriced by a third.  Why from the whole CPU time and
not its system part: the kernel splits user from system by sampling ticks (4 ms here), and
sqlite's measured calls took more than its runs' system share.  A warm prediction, and a
recording without the replay, keep fsbench's prices (every factor 1).

A cold run also waits for the files it reads from outside the workload (its executables,
libraries, headers): `fsbm trace record --cold` measures that wait (traces/outside_files.py)
and a cold prediction adds it as it is; a warm one, and a recording without it, add nothing.

Where the syncs were measured, from the runs, not the replay: a cold run spends CPU time
on its syncs that no bracket around them holds.  Replayed cold on ext4 (2026-11-25), sqlite's
calls took 0.19-0.23 s of CPU with their 1204 syncs and 0.13 s with them skipped, a
difference of 0.10 s where the brackets around the syncs held 0.05 s; sqlite itself took
0.275 s cold, 0.171 s with its syncs skipped, and 0.142 s on tmpfs either way.  The rest is
work the syncs cause beside themselves (writes find their pages clean again and dirty them
anew; interrupts land on the caller), and the bracketed replay left it outside the
filesystem, on every candidate: sqlite on tmpfs came out at +26 to +32% over validation runs
22-24, its outside time 0.095-0.114 s where tmpfs's runs showed 0.05-0.08.  So `fsbm trace
record --replay-in` also makes cold runs with their syncs skipped, and replays that skip
them: the time outside starts from those runs' CPU time less those replays' calls', with
no sync in either, and the syncs' CPU is what skipping them saved the cold runs, which
their group's scale carries to each candidate (model.CpuScales: none on tmpfs, the excess
once on btrfs).  That scale is not bounded: CPU_SCALE_BOUNDS guard against a replay gone
wrong, and no replay measures it.  A recording without libeatmydata keeps the bracketed
replay's syncs and the cold runs' CPU time, as before.

Every run also idles, neither on a processor nor in a call of its workload: starting its
processes, waiting for them and reaping them.  The pairs' run with every file read in and
its syncs skipped has nothing else to wait for, and idled 2-3 ms (tar, cp and rm, grep,
sqlite3; 5 runs each on ext4 and on tmpfs, 2026-11-25), where the tmpfs runs of validation
run 25 idled 6-9 ms, their wait for the files outside the workload 3-4 ms of it.  No cost
table or CPU time holds it, and a program of 20-40 ms on tmpfs missed by that much; so a
prediction adds that run's idle time (untraced_warm_idle_ns), cold or warm.

Without the traced filesystem's costs, the time outside is the user time plus the traced
time of calls on other filesystems, less the per-call inflation measured in the same trace:
the older form, which the inflation's noise makes poor for programs with many such calls.
Neither form is fitted: every fitted form tried validated worse (docs/validation.md).
"""

from __future__ import annotations

from typing import Any

from fsbm.errors import UsageError
from fsbm.predictor.model import CpuScales, FsTime, price_workload
from fsbm.predictor.pricing import Pricer
from fsbm.traces.record import (CALLS_CPU_FIELDS, OUTSIDE_WAIT_FIELD, UNTRACED_CALLS_CPU_SYNCS_SKIPPED,
                                UNTRACED_NOSYNC_FIELDS, UNTRACED_WARM_FIELDS, UNTRACED_WARM_SYNCS_SKIPPED,
                                WARM_IDLE_FIELD)

WARM_USER, WARM_SYSTEM = UNTRACED_WARM_FIELDS
NOSYNC_USER, NOSYNC_SYSTEM = UNTRACED_NOSYNC_FIELDS
COLD_USER, COLD_SYSTEM = "untraced_user_cpu_ns", "untraced_system_cpu_ns"
EVERYTHING_CACHED = 1 << 62  # a page cache that holds any workload


def _warm_runs(profile: dict[str, Any], start: str) -> bool:
    """Whether the CPU time comes from the runs with every file read in: for a warm
    prediction, where the recording has them."""
    recording = profile.get("recording") or {}
    return start == "warm" and WARM_USER in recording and WARM_SYSTEM in recording


# How far a workload's measured calls' CPU may move fsbench's CPU prices of a group
# (cpu_scales): a replay that measured more than twice or less than half of what fsbench
# prices is more likely a replay gone wrong (calls that failed, a loaded machine) than calls
# that costly.
CPU_SCALE_BOUNDS = (0.5, 2.0)


def _without_syncs(profile: dict[str, Any], start: str) -> bool:
    """Whether a cold prediction's CPU time comes from the cold runs made with their syncs
    skipped: where the recording has them, and replays that measured the calls' CPU skipping
    the syncs too (module docstring)."""
    recording = profile.get("recording") or {}
    needed = (NOSYNC_USER, NOSYNC_SYSTEM, COLD_USER, COLD_SYSTEM, *CALLS_CPU_FIELDS.values())
    return (start == "cold" and bool(recording.get(UNTRACED_CALLS_CPU_SYNCS_SKIPPED))
            and all(name in recording for name in needed))


def _syncs_skipped(profile: dict[str, Any], start: str) -> bool:
    """Whether the runs a `start` prediction's CPU time comes from skipped their syncs."""
    if _warm_runs(profile, start):
        return bool((profile.get("recording") or {}).get(UNTRACED_WARM_SYNCS_SKIPPED))
    return _without_syncs(profile, start)


def _measured(profile: dict[str, Any], start: str) -> dict[str, int] | None:
    """The calls' CPU time measured, by group: by replay, and the syncs', where the replays
    skipped them, as what skipping them saved the cold runs; None for a warm prediction or
    where the recording has none."""
    recording = profile.get("recording") or {}
    if start != "cold" or not all(name in recording for name in CALLS_CPU_FIELDS.values()):
        return None
    measured = {group: recording[name] for group, name in CALLS_CPU_FIELDS.items()}
    if _without_syncs(profile, start):
        saved = recording[COLD_USER] + recording[COLD_SYSTEM] - recording[NOSYNC_USER] - recording[NOSYNC_SYSTEM]
        measured["sync"] = max(saved, 0)
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


def cpu_scales(profile: dict[str, Any], traced: Pricer, *, cache_bytes: int, start: str = "cold") -> CpuScales:
    """Per group of operations, how many times fsbench's CPU time per call the profile's calls
    took on the filesystem it was traced on (`traced`'s cost table), where a cold replay
    there measured them (CALLS_CPU_FIELDS), 1 elsewhere; with fsbench's CPU prices of them
    there.  price_workload takes every candidate's CPU prices of a group by it (module
    docstring; model.CpuScales says how)."""
    priced = price_workload(profile, traced, cache_bytes=cache_bytes, start=start)
    return CpuScales(_scales(_measured(profile, start), priced, _without_syncs(profile, start)),
                     priced.by_group(cpu=True))


def calls_cpu_seconds(profile: dict[str, Any], traced: Pricer, *, cache_bytes: int, start: str = "cold") -> float:
    """The CPU time the profile's filesystem calls take on the filesystem it was traced on
    (`traced`'s cost table), priced as the runs its CPU time comes from ran (module
    docstring): from a `start` cache of `cache_bytes`, each group at cpu_scales times
    fsbench's CPU prices; or, from the all-warm runs, with every file cached; either without
    its syncs where those runs skipped them (traces/nosync.py).  What outside_features takes
    from the CPU time of the runs."""
    if _warm_runs(profile, start):  # fsbench's prices
        spent = CpuScales({}, price_workload(profile, traced, cache_bytes=EVERYTHING_CACHED,
                                             start="warm").by_group(cpu=True))
    else:
        spent = cpu_scales(profile, traced, cache_bytes=cache_bytes, start=start)
    skipped = _syncs_skipped(profile, start)
    return sum(ns * spent.factors.get(group, 1.0) for group, ns in spent.traced_ns.items()
               if not (skipped and group == "sync")) / 1e9


def outside_features(profile: dict[str, Any], traced_cpu_s: float | None = None,
                     start: str = "cold") -> dict[str, float]:
    """user_cpu_s, system_cpu_s, outside_calls_s and outside_wait_s of a profile made by
    `fsbm trace record`, for runs that start from a `start` cache.
    `traced_cpu_s`: the CPU time of its filesystem calls on the filesystem it was traced on
    (calls_cpu_seconds, with the same `start`); with it, and untraced runs, the system time
    outside it counts (module docstring)."""
    recording = profile.get("recording")
    trace_time = profile.get("trace_time") or {}
    if not recording or not trace_time.get("known"):
        raise UsageError(f"the profile of {profile.get('source') or 'this trace'} has no recording facts: the time "
                         "outside the filesystem is unknown",
                         hint="record the program with `fsbm trace record` (it keeps the CPU time beside the log), "
                              "or use the relative form (--measured SECONDS --traced-on CANDIDATE)")
    if _warm_runs(profile, start):
        user, system = recording[WARM_USER], recording[WARM_SYSTEM]
    elif _without_syncs(profile, start):
        user, system = recording[NOSYNC_USER], recording[NOSYNC_SYSTEM]
    else:
        user = recording.get(COLD_USER, recording["user_cpu_ns"])
        system = recording.get(COLD_SYSTEM)
    # A warm run finds the files outside the workload cached too: it does not wait for them.
    # Every run idles as a run with every file cached does (module docstring).
    wait = {"outside_wait_s": 0.0 if start == "warm" else recording.get(OUTSIDE_WAIT_FIELD, 0) / 1e9,
            "outside_idle_s": max(recording.get(WARM_IDLE_FIELD, 0), 0) / 1e9}
    if traced_cpu_s is not None and system is not None and _measured(profile, start):
        # The calls' CPU measured: taken from the whole CPU time, whose split is by ticks (module docstring).
        outside_cpu = max((user + system) / 1e9 - traced_cpu_s, 0.0)
        return {"user_cpu_s": min(user / 1e9, outside_cpu), "system_cpu_s": max(outside_cpu - user / 1e9, 0.0),
                "outside_calls_s": 0.0, **wait}
    if traced_cpu_s is not None and system is not None:
        return {"user_cpu_s": user / 1e9, "system_cpu_s": max(system / 1e9 - traced_cpu_s, 0.0), "outside_calls_s": 0.0,
                **wait}
    return {"user_cpu_s": user / 1e9, "system_cpu_s": 0.0,
            "outside_calls_s": trace_time.get("outside_calls_corrected_ns", 0) / 1e9, **wait}


def outside_seconds(features: Any) -> Any:
    """Seconds outside the filesystem: CPU time + calls on other filesystems + the wait for
    files outside the workload + the idle time of every run.  `features` is a dict from
    outside_features or a DataFrame of such rows (then one value per row); rows made before
    the wait or the idle time was measured have none."""
    return (features["user_cpu_s"] + features["system_cpu_s"] + features["outside_calls_s"]
            + features.get("outside_wait_s", 0.0) + features.get("outside_idle_s", 0.0))

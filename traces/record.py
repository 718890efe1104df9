"""`fsbm trace record`: run a command under strace with the flags the parser wants.

-f follows children, -ttt gives epoch timestamps (so per-process logs merge), -T gives
each call's duration, -y resolves descriptors to paths (the parser then need not infer
them).  Only the syscall classes that touch files or processes are traced, and with
--seccomp-bpf the others do not stop the program at all, which keeps strace's overhead
(and its distortion of the program's own time) down.

Tracing still costs tens of microseconds per traced call here, far more than most of the
calls themselves, so the traced wall time is no measure of the program's own.  The command
therefore runs under fsrusage (traces/native/fsrusage.c), which writes the CPU time the
program's process tree used beside the log (LOG.recording.json); `trace parse` carries it
into the event table and the predictor takes the time outside the filesystem from it.

Even CPU time is bent by tracing: the kernel splits it into user and system time by
sampling ticks, and under ptrace most ticks land in the system (measured here: the same
program's traced user time 0 ms one run and 51 ms the next; 0-10 ms untraced).  For a
command that does the same work every time, `untraced_runs` first runs it that many times
without strace, under fsrusage alone, and keeps its median run's times (untraced_*): what the
predictor prefers when they are there.

Run cold (`cold`: caches dropped before every run), a program also waits for files no cost
table prices: its executables, libraries and the rest it reads from outside the workload's
directory.  After the trace names them, as many pairs of runs start cold with the
workload's own files read in, one of each pair with the outside files read in too; their
difference in idle time (wall less CPU time), bounded by the time those files take to read
cold, is the wait for them (measure_outside_wait, traces/outside_files.py), which the
predictor adds to the time outside the filesystem.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsbm.errors import FsbmError, UsageError
from fsbm.locations import native_binary
from fsbm.microbench.cache import drop_all_settled
from fsbm.microbench.fsbench import check_target
from fsbm.microbench.replay import cold_replay_beneath, mismatches
from fsbm.microbench.system import require_program
from fsbm.traces.nosync import environment_without_syncs
from fsbm.traces.outside_files import UsedFiles, bounded_wait_ns, cold_read_ns, read_in, used_files
from fsbm.traces.vocabulary import GROUPS, REPLAYED_GROUP

STRACE_FLAGS = ["-f", "--seccomp-bpf", "-ttt", "-T", "-y", "-q", "-s", "64",
                "-e", "trace=%file,%desc,%process,%memory"]
RECORDING_SUFFIX = ".recording.json"
OUTSIDE_WAIT_FIELD = "untraced_outside_wait_ns"  # a cold run's wait for files outside the scope (measure_outside_wait)
# The idle time (wall less CPU time) of a run with every file read in and its syncs skipped:
# starting, waiting for and reaping its processes, in every run on every candidate, no call's
# (measure_outside_wait); a pair's, and as a recording keeps it.
WARM_IDLE = "warm_idle_ns"
WARM_IDLE_FIELD = f"untraced_{WARM_IDLE}"
# The CPU time the trace's calls in the scope took replayed cold on the traced filesystem,
# by the predictor's group of operations (replay_calls_cpu; predictor/outside.py: cpu_scales):
# as a replay measures it, and as a recording keeps it; and how many calls of one such replay
# ended otherwise than traced.
CALLS_CPU_NAMES = {group: f"calls_cpu_{group}_ns" for group in GROUPS}
CALLS_CPU_FIELDS = {group: f"untraced_{name}" for group, name in CALLS_CPU_NAMES.items()}
CALLS_CPU_MISMATCHES = "calls_cpu_mismatches"
CALLS_CPU_CALLS = "calls_cpu_calls"  # the calls that replay made
# The calls' CPU time in all as the bracketed replay counted it (the sum of its groups), and
# as a replay of the same calls without the brackets did (replay_calls_cpu says why the
# groups are scaled to the second).
CALLS_CPU_BRACKETED = "calls_cpu_bracketed_ns"
CALLS_CPU_UNBRACKETED = "calls_cpu_unbracketed_ns"
# A measuring replay is left out where more than this share of its calls ended otherwise
# than traced.  One call that did (git's stat of the probe symlink it made, which the trace
# did not follow and fsreplay's stat does) moves the CPU time by its own cost, under a
# microsecond; git init's two mkdirs that failed took 50 calls beneath them along (0.5%).
MISMATCHED_SHARE_KEPT = 0.001


def recording_path(log: Path) -> Path:
    """Where the recording facts of a log are kept: beside it."""
    return Path(log).with_name(Path(log).name + RECORDING_SUFFIX)


def read_recording(log: Path) -> dict[str, Any] | None:
    """The facts `record` kept beside a log, or None for a log recorded some other way."""
    path = recording_path(log)
    if not path.exists():
        return None
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} is not a readable recording file: {exc}") from exc
    if not isinstance(body, dict) or not isinstance(body.get("user_cpu_ns"), int):
        raise UsageError(f"{path} is not an fsbm recording file (no user_cpu_ns)")
    return body


@dataclass
class Recording:
    log: Path
    returncode: int
    wall_seconds: float
    facts: dict[str, Any]
    used: UsedFiles = field(default_factory=UsedFiles)  # files used in and outside the scope, when cold runs measured them


UNTRACED_FIELDS = ("user_cpu_ns", "system_cpu_ns", "wall_ns")
# The CPU time of the pairs' runs that started with every file read in, the workload's and
# those outside it (outside_wait_pair): kept as untraced_warm_*, the time outside the
# filesystem's source where measured (predictor/outside.py says why).
WARM_CPU_FIELDS = ("warm_user_cpu_ns", "warm_system_cpu_ns")
UNTRACED_WARM_FIELDS = tuple(f"untraced_{name}" for name in WARM_CPU_FIELDS)  # as a recording keeps them
# Whether those runs had their syncs skipped (traces/nosync.py): a pair's, and as a recording keeps it.
WARM_SYNCS_SKIPPED = "warm_syncs_skipped"
UNTRACED_WARM_SYNCS_SKIPPED = f"untraced_{WARM_SYNCS_SKIPPED}"
# The CPU time of cold untraced runs with their syncs skipped (measure_without_syncs), as a
# run's facts name it and as a recording keeps it; and whether the replays measuring the
# calls' CPU skipped theirs too.  Where both were, the time outside the filesystem starts
# from those runs and the syncs' CPU is what skipping them saved (predictor/outside.py).
NOSYNC_CPU_FIELDS = ("nosync_user_cpu_ns", "nosync_system_cpu_ns")
UNTRACED_NOSYNC_FIELDS = tuple(f"untraced_{name}" for name in NOSYNC_CPU_FIELDS)
CALLS_CPU_SYNCS_SKIPPED = "calls_cpu_syncs_skipped"
UNTRACED_CALLS_CPU_SYNCS_SKIPPED = f"untraced_{CALLS_CPU_SYNCS_SKIPPED}"


def median_cpu(samples: list[dict[str, Any]], user: str, system: str) -> tuple[int, int]:
    """The user and system CPU time of the median run of `samples` (under the keys `user`
    and `system`): their median total, split at the runs' median user share of it.  Why not
    the median of each part: the kernel splits a run's CPU time by sampling ticks (4 ms
    here), so a short run's user part is 4 ms in one run and 20 in the next, its system
    part moving the other way, and the two medians added up to no run's time (random-reads:
    33.1 ms where the median run took 36.9)."""
    totals = [s[user] + s[system] for s in samples]
    total = statistics.median(totals)
    share = statistics.median(s[user] / t if t > 0 else 0.0 for s, t in zip(samples, totals))
    user_ns = int(total * share)
    return user_ns, int(total) - user_ns


def untraced_medians(samples: list[dict[str, Any]]) -> dict[str, int]:
    """Untraced runs' facts (UNTRACED_FIELDS) as a recording keeps them: the median run's
    user and system CPU time (median_cpu) and the median wall time, as untraced_*."""
    user, system = median_cpu(samples, "user_cpu_ns", "system_cpu_ns")
    return {"untraced_user_cpu_ns": user, "untraced_system_cpu_ns": system,
            "untraced_wall_ns": int(statistics.median(s["wall_ns"] for s in samples))}


def measure_untraced(command: list[str], runs: int, *, cwd: Path | None = None, quiet: bool = False,
                     before_each: Callable[[], None] | None = None,
                     env: dict[str, str] | None = None) -> dict[str, int]:
    """Run `command` `runs` times without tracing, under fsrusage: the median of each of its
    CPU and wall times, as untraced_user_cpu_ns and so on.  `before_each` (e.g. removing
    the last run's outputs and dropping caches) runs before every run; `env`, if given, is
    the runs' environment."""
    rusage = native_binary("fsrusage", Path(__file__).parent)
    samples: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fsbm-untraced-") as tmp:
        for run in range(runs):
            if before_each is not None:
                before_each()
            facts_path = Path(tmp) / f"run-{run}.json"
            try:
                done = subprocess.run([str(rusage), "--output", str(facts_path), "--", *command], cwd=cwd, env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL if quiet else None)
            except OSError as exc:
                raise FsbmError(f"cannot run {command[0]}: {exc.strerror}") from exc
            if not facts_path.exists():
                raise FsbmError(f"untraced run {run + 1} of {' '.join(command)} could not be started "
                                f"(exit {done.returncode})")
            samples.append(json.loads(facts_path.read_text()))
    statuses = sorted({s["exit_status"] for s in samples})
    if len(statuses) > 1:
        raise FsbmError(f"the untraced runs of {' '.join(command)} exited {' and '.join(map(str, statuses))}: it does "
                        "not do the same work every time, so leave out --untraced-runs")
    out = untraced_medians(samples)
    out.update(untraced_runs=runs, untraced_exit_status=statuses[0])
    return out


def _then_drop_caches(before_each: Callable[[], None] | None, where: Path) -> Callable[[], None]:
    """`before_each`, then what the filesystem of `where` deferred after deletions settled
    (microbench/settle.py), then every cache dropped: how each run of `record(cold=True)`
    starts."""
    def start_cold() -> None:
        if before_each is not None:
            before_each()
        drop_all_settled(where)
    return start_cold


def outside_wait_pair(command: list[str], used: UsedFiles, *, cwd: Path | None = None, quiet: bool = False,
                      before_each: Callable[[], None], outside_first: bool = False,
                      expected_status: int = 0) -> dict[str, int]:
    """One pair of untraced runs that start as the cold ones do (`before_each`) and then read
    the workload's own files in (`used.inside`), one of them the outside files too, in the
    order `outside_first` says (alternate it, so neither is always first); and the time the
    outside files take to read cold.  Both runs skip their syncs where libeatmydata is
    installed (traces/nosync.py): the CPU time then holds none of theirs, and the difference
    none of their noise.  Returns the difference of the runs' idle times, wall less CPU time
    (outside_wait_ns: the run that found them uncached less the other; outside_files.py says
    why not the walls'), the walls' difference (outside_wall_difference_ns), outside_read_ns,
    the CPU and idle time of the run that had every file read in (WARM_CPU_FIELDS, WARM_IDLE)
    and whether its syncs were skipped (WARM_SYNCS_SKIPPED).  Both runs must exit
    `expected_status`, as the cold runs did: a run that failed did other work, and its time
    measures nothing (nor, with its syncs skipped, may the program fail without them)."""
    env = environment_without_syncs()

    def run(with_outside: bool) -> dict[str, int]:
        def start() -> None:
            before_each()
            read_in(used.inside)
            if with_outside:
                read_in(used.outside)
        return measure_untraced(command, 1, cwd=cwd, quiet=quiet, before_each=start, env=env)

    runs = {with_outside: run(with_outside) for with_outside in ((True, False) if outside_first else (False, True))}
    before_each()
    for with_outside, facts in runs.items():
        if facts["untraced_exit_status"] != expected_status:
            which = "the files outside it" if with_outside else "only its own files"
            raise FsbmError(f"{' '.join(command)} exited {facts['untraced_exit_status']} in the run that read in "
                            f"{which} first, where its cold runs exited {expected_status}: the wait for the "
                            "files outside the scope cannot be measured from runs that did other work")
    warm = runs[True]
    return {"outside_wait_ns": _idle_ns(runs[False]) - _idle_ns(warm),
            "outside_wall_difference_ns": runs[False]["untraced_wall_ns"] - warm["untraced_wall_ns"],
            WARM_IDLE: _idle_ns(warm),
            "outside_read_ns": cold_read_ns(used.outside),
            **{name: warm[f"untraced_{name.removeprefix('warm_')}"] for name in WARM_CPU_FIELDS},
            WARM_SYNCS_SKIPPED: env is not None}


def _idle_ns(facts: dict[str, int]) -> int:
    """A run's wall time less its CPU time (measure_untraced's facts): the time it waited."""
    return facts["untraced_wall_ns"] - facts["untraced_user_cpu_ns"] - facts["untraced_system_cpu_ns"]


def measure_outside_wait(command: list[str], runs: int, used: UsedFiles, *, cwd: Path | None = None,
                         quiet: bool = False, before_each: Callable[[], None], expected_status: int = 0) -> dict[str, int]:
    """How long a cold run waits for the files it used outside its scope (`used.outside`,
    traces/outside_files.py): `runs` pairs (outside_wait_pair), their median difference
    bounded by the median cold read (bounded_wait_ns) as OUTSIDE_WAIT_FIELD; and the median
    CPU time of their runs with every file read in, as untraced_warm_*, with whether their
    syncs were skipped, and those runs' median idle time (WARM_IDLE_FIELD)."""
    pairs = [outside_wait_pair(command, used, cwd=cwd, quiet=quiet, before_each=before_each, outside_first=i % 2 == 1,
                               expected_status=expected_status)
             for i in range(runs)]
    return {OUTSIDE_WAIT_FIELD: bounded_wait_ns([p["outside_wait_ns"] for p in pairs],
                                                [p["outside_read_ns"] for p in pairs]),
            "outside_files": len(used.outside), "outside_bytes": sum(_size(f) for f in used.outside),
            "outside_read_ns": int(statistics.median(p["outside_read_ns"] for p in pairs)),
            **dict(zip(UNTRACED_WARM_FIELDS, median_cpu(pairs, *WARM_CPU_FIELDS))),
            WARM_IDLE_FIELD: int(statistics.median(p[WARM_IDLE] for p in pairs)),
            UNTRACED_WARM_SYNCS_SKIPPED: all(p[WARM_SYNCS_SKIPPED] for p in pairs)}


def measure_without_syncs(command: list[str], runs: int, *, cwd: Path | None = None, quiet: bool = False,
                          before_each: Callable[[], None] | None = None, expected_status: int = 0) -> dict[str, int]:
    """`runs` untraced runs that start as the cold ones do (`before_each`) with their syncs
    skipped (traces/nosync.py): their median run's CPU time as untraced_nosync_*; nothing
    where libeatmydata is missing.  Every run must exit `expected_status`, as the cold runs
    did: a program that fails without its syncs did other work."""
    env = environment_without_syncs()
    if env is None or runs <= 0:
        return {}
    facts = measure_untraced(command, runs, cwd=cwd, quiet=quiet, before_each=before_each, env=env)
    if facts["untraced_exit_status"] != expected_status:
        raise FsbmError(f"{' '.join(command)} exited {facts['untraced_exit_status']} with its syncs skipped, where its "
                        f"cold runs exited {expected_status}: the runs without syncs did other work")
    return dict(zip(UNTRACED_NOSYNC_FIELDS, (facts["untraced_user_cpu_ns"], facts["untraced_system_cpu_ns"])))


def check_replay_directory(replay_in: Path, scope: Path) -> None:
    """Refuse, before anything runs, a directory the calls cannot be replayed in for
    measure_calls_cpu: it must exist, be empty (nothing of the user's is touched) and be on
    the filesystem the scope is on (the calls' CPU is that filesystem's)."""
    check_target(replay_in)
    if any(Path(replay_in).iterdir()):
        raise UsageError(f"--replay-in {replay_in} is not empty; give an empty directory (nothing in it is touched "
                         "but what the replays make and remove)")
    if os.stat(replay_in).st_dev != os.stat(scope).st_dev:
        raise UsageError(f"--replay-in {replay_in} is not on the filesystem of --scope {scope}: the calls' CPU time "
                         "must be measured on the filesystem they were traced on")


def scaled_to_total(by_group: dict[str, int], total: int) -> dict[str, int]:
    """`by_group` scaled in proportion so that it adds up to `total` (all 0 where it adds up
    to nothing)."""
    counted = sum(by_group.values())
    if counted <= 0:
        return dict.fromkeys(by_group, 0)
    return {group: round(ns * total / counted) for group, ns in by_group.items()}


def as_bracketed(sample: dict[str, Any]) -> dict[str, Any]:
    """A measuring replay's facts (replay_calls_cpu) with its groups as the bracketed replay
    counted them, before they were scaled to the unbracketed total: how fsbm once measured
    the calls' CPU, judged beside it.  Facts measured before both totals were
    kept are returned as they are (they were the bracketed counts)."""
    if CALLS_CPU_BRACKETED not in sample:
        return sample
    groups = {group: sample[name] for group, name in CALLS_CPU_NAMES.items()}
    return {**sample, **{CALLS_CPU_NAMES[group]: ns
                         for group, ns in scaled_to_total(groups, sample[CALLS_CPU_BRACKETED]).items()}}


def replay_calls_cpu(plan: Path, base: Path, *, without_syncs: bool = False) -> dict[str, int]:
    """The CPU time the calls of `plan` take replayed cold beneath `base`, by the predictor's
    group of operations (under CALLS_CPU_NAMES), from two cold serial replays: one with every
    call bracketed by the CPU clock (fsreplay --cpu-per-op), for each group's share, and one
    without the brackets, for the total, which the groups are scaled to add up to.

    Why two: a bracket's cost is estimated in a warm loop, and after a call that blocked it
    costs more, so the bracketed replay counts more CPU for its calls than they take.  Cold
    on ext4 the bracketed replays of one validation counted 28-39 ms for random-reads'
    calls where the unbracketed replays of the same rounds took 21-34 ms, and the excess,
    taken off the program's CPU time, was missing outside the filesystem on every candidate
    (random-reads on tmpfs: -51% and -54% in two validations).  The shares by group still
    come from the brackets: nothing else measures them.  Both totals are kept
    (CALLS_CPU_BRACKETED, CALLS_CPU_UNBRACKETED), and so are the calls of the bracketed
    replay that ended otherwise than traced (CALLS_CPU_MISMATCHES: the more of the two
    replays') of all it made (CALLS_CPU_CALLS).  Neither is a replay whose time is judged.
    `without_syncs`: the syncs skipped (fsreplay --skip-syncs), as the runs of
    measure_without_syncs skip them; CALLS_CPU_SYNCS_SKIPPED says whether they were."""
    bracketed = cold_replay_beneath(plan, base, prefix="calls-cpu-", cpu_per_op=True, skip_syncs=without_syncs)
    unbracketed = cold_replay_beneath(plan, base, prefix="calls-cpu-", skip_syncs=without_syncs)
    by_group = dict.fromkeys(GROUPS, 0)
    for kind, entry in bracketed.get("operations", {}).items():
        by_group[REPLAYED_GROUP.get(kind, "metadata")] += int(entry.get("cpu_ns", 0))
    total = int(unbracketed["cpu"]["calls_ns"])
    scaled = scaled_to_total(by_group, total)
    return {**{CALLS_CPU_NAMES[group]: ns for group, ns in scaled.items()},
            CALLS_CPU_BRACKETED: sum(by_group.values()), CALLS_CPU_UNBRACKETED: total,
            CALLS_CPU_MISMATCHES: max(mismatches(bracketed), mismatches(unbracketed)),
            CALLS_CPU_CALLS: int(bracketed.get("operations_run", 0)),
            CALLS_CPU_SYNCS_SKIPPED: bool(bracketed.get("syncs_skipped", False))}


def clean_replays(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The measuring replays whose calls ended as traced but for at most
    MISMATCHED_SHARE_KEPT of them (any, where the replay's calls were not counted; those
    measured before mismatches were kept count as clean): a replay whose calls failed
    measured other work."""
    return [s for s in samples
            if s.get(CALLS_CPU_MISMATCHES, 0) <= MISMATCHED_SHARE_KEPT * s.get(CALLS_CPU_CALLS, 0)]


def measure_calls_cpu(log: Path, scope: Path, replay_in: Path, runs: int, *,
                      without_syncs: bool = False) -> dict[str, int]:
    """The CPU time the trace's calls in `scope` take on its filesystem, by group: the
    median of `runs` replays (replay_calls_cpu, skipping the syncs if `without_syncs`)
    beneath `replay_in`, of those whose calls ended as traced (clean_replays); none kept if
    none did, and the predictor prices the calls' CPU.  Why the predictor wants it:
    predictor/outside.py (cpu_scales)."""
    # Imported here: the ingester reads recordings with this module's read_recording.
    from fsbm.traces.ingest import ingest, read_events
    from fsbm.traces.replay_plan import write_plan

    with tempfile.TemporaryDirectory(prefix="fsbm-calls-cpu-") as tmp:
        events = ingest([log], Path(tmp) / "events.parquet").output
        plan = Path(tmp) / "replay.plan"
        write_plan(read_events(events), plan, scope=str(Path(scope).resolve()))
        samples = [replay_calls_cpu(plan, replay_in, without_syncs=without_syncs) for _ in range(runs)]
    clean = clean_replays(samples)
    kept: dict[str, int] = {"calls_cpu_replays": len(clean), "calls_cpu_replays_dropped": runs - len(clean)}
    if clean:
        # As a recording keeps them: each group's under CALLS_CPU_FIELDS, and both totals.
        kept.update({f"untraced_{name}": int(statistics.median(s[name] for s in clean))
                     for name in (*CALLS_CPU_NAMES.values(), CALLS_CPU_BRACKETED, CALLS_CPU_UNBRACKETED)})
        kept[UNTRACED_CALLS_CPU_SYNCS_SKIPPED] = all(s[CALLS_CPU_SYNCS_SKIPPED] for s in clean)
    return kept


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _check_runnable(program: str, cwd: Path | None) -> None:
    """Refuse, before anything is written or run, a program that cannot be run: a path (taken
    from `cwd`) that is not an executable file, or a name not on PATH."""
    if os.sep in program:
        path = Path(cwd or ".") / program
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise UsageError(f"cannot run {program}: {'not executable' if path.is_file() else 'no such file'}")
    elif shutil.which(program) is None:
        raise UsageError(f"cannot run {program}: no such program on PATH",
                         hint="a shell's own commands run through one: -- sh -c '...'")


def record(command: list[str], log: Path, *, force: bool = False, cwd: Path | None = None,
           scope: Path | None = None, quiet: bool = False, untraced_runs: int = 0,
           before_each: Callable[[], None] | None = None, cold: bool = False,
           replay_in: Path | None = None) -> Recording:
    """Run `command` under strace, writing the log to `log` and its recording facts beside
    it; the command's exit status is returned.  `scope`, kept with the facts, is the
    directory the workload's files live in: the characterizer's default scope.  `quiet`
    sends the command's standard output to /dev/null.  `untraced_runs` > 0 measures the
    command untraced first (measure_untraced, with `before_each` before every run,
    the traced one included).  `cold` drops every cache after `before_each` (root); with
    untraced runs and a scope it also measures the wait for the files outside the scope
    (measure_outside_wait), and with `replay_in` as well, as many cold runs with their syncs
    skipped (measure_without_syncs) and the CPU time of the calls in the scope, replayed cold
    as many times in that empty directory, skipping their syncs where those runs did
    (measure_calls_cpu)."""
    if not command:
        raise UsageError("give the command to trace after --, e.g. fsbm trace record -o t.log -- make")
    _check_runnable(command[0], cwd)
    log = Path(log)
    facts_path = recording_path(log)
    for path in (log, facts_path):
        if path.exists() and not force:
            raise UsageError(f"{path} exists; choose another name or pass --force")
    if replay_in is not None:
        if not (untraced_runs and cold and scope is not None):
            raise UsageError("measuring the calls' CPU time by replay (--replay-in) needs --untraced-runs, --cold "
                             "and --scope")
        check_replay_directory(replay_in, scope)
    facts_path.unlink(missing_ok=True)
    strace = require_program("strace", "strace")
    rusage = native_binary("fsrusage", Path(__file__).parent)
    if cold:
        before_each = _then_drop_caches(before_each, scope or cwd or Path.cwd())
    untraced = measure_untraced(command, untraced_runs, cwd=cwd, quiet=quiet, before_each=before_each) \
        if untraced_runs > 0 else {}
    if before_each is not None:
        before_each()
    started = time.monotonic()
    try:
        done = subprocess.run([strace, *STRACE_FLAGS, "-o", str(log), "--",
                               str(rusage), "--output", str(facts_path.resolve()), "--", *command], cwd=cwd,
                              stdout=subprocess.DEVNULL if quiet else None)
    except OSError as exc:
        raise FsbmError(f"cannot run strace: {exc.strerror}") from exc
    wall = time.monotonic() - started
    if not log.exists():
        raise FsbmError(f"strace wrote no log (exit {done.returncode}); could the command be started?")
    facts = read_recording(log)
    if facts is None:
        raise FsbmError(f"the command ran but {facts_path} was not written (exit {done.returncode})")
    if untraced and untraced["untraced_exit_status"] != facts.get("exit_status"):
        raise FsbmError(f"the untraced runs exited {untraced['untraced_exit_status']} but the traced run "
                        f"{facts.get('exit_status')}: the command did not do the same work each time "
                        f"(the log {log} is kept; record again without --untraced-runs)")
    used = UsedFiles()
    if untraced and cold and scope is not None:
        used = used_files(log, scope, Path(cwd or os.getcwd()))
        untraced.update(measure_outside_wait(command, untraced_runs, used, cwd=cwd, quiet=quiet,
                                             before_each=before_each, expected_status=untraced["untraced_exit_status"]))
        if replay_in is not None:
            nosync = measure_without_syncs(command, untraced_runs, cwd=cwd, quiet=quiet, before_each=before_each,
                                           expected_status=untraced["untraced_exit_status"])
            untraced.update(nosync)
            untraced.update(measure_calls_cpu(log, scope, replay_in, untraced_runs, without_syncs=bool(nosync)))
    facts.update({"command": command, "cwd": str(Path(cwd or os.getcwd()).resolve()), "traced_wall_ns": int(wall * 1e9),
                  "strace_flags": STRACE_FLAGS, "scope": str(Path(scope).resolve()) if scope else None, **untraced})
    facts_path.write_text(json.dumps(facts, indent=1))
    return Recording(log, done.returncode, wall, facts, used)

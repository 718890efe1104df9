"""Measuring the suite for real: traces on the traced filesystem, then interleaved rounds of
untraced cold runs and cold replays on every target (DESIGN: Validation).

This machine's disk speed drifts by up to 2x over minutes, so no target is measured in a
block of its own: each round runs every program on every target once, and every error is
later computed within rounds (ratios between targets of the same round) as well as over
medians.  A round is blocked by program (round_order): a program's runs on the targets
follow one another, so the ratios between them are taken seconds apart, not minutes.  Every
run starts cold: its outputs removed, `sync`, caches dropped.
"""

from __future__ import annotations

import random
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from fsbm.characterizer.characterize import characterize_files
from fsbm.errors import FsbmError
from fsbm.host_activity import Counters, device_bytes_of
from fsbm.microbench import cache
from fsbm.microbench.replay import cold_replay_beneath, mismatches
from fsbm.microbench.settle import settle_deferred_frees
from fsbm.predictor.suite import Inputs, Program, clean, run_command, staged_once
from fsbm.traces.ingest import ingest, read_events
from fsbm.traces.outside_files import UsedFiles
from fsbm.traces.record import (NOSYNC_CPU_FIELDS, UNTRACED_FIELDS, UNTRACED_NOSYNC_FIELDS, measure_untraced,
                                measure_without_syncs, outside_wait_pair, record, replay_calls_cpu)
from fsbm.traces.replay_plan import write_plan

Progress = Callable[[str], None]
WORK_DIRECTORY = "fsbm-validate"
REPLAYS = "replays"  # beside the programs' directories in it: where the replays are made


@dataclass(frozen=True)
class Target:
    """One filesystem the suite runs on: which cost table prices it, where it is mounted."""

    label: str        # e.g. "xfs aged"
    candidate: str    # the cost table's name
    mount: Path
    state: str        # fresh | aged

    def work(self, program: Program) -> Path:
        return self.mount / WORK_DIRECTORY / program.name


@dataclass
class Traced:
    """A program's trace on the traced filesystem, and what was made of it."""

    program: str
    log: Path
    events: Path
    plan: Path
    profile: dict[str, Any]
    used: UsedFiles  # the files it used in and outside its work directory (record's used_files)


def release_staged(target: Target, keep: set[str]) -> list[str]:
    """Remove from the target's work directory the inputs staged for programs other than
    those named in `keep` (the other set's, or programs since left out): an image holds
    every program's inputs once staged, the development and test sets' together come to
    about 0.9 GiB, and fsbench's tables between the rounds need room beside them (a 2 GiB
    btrfs once ran out in the last of them).  They are staged again when next run.  The
    names removed."""
    root = target.mount / WORK_DIRECTORY
    gone = sorted(path.name for path in root.iterdir()
                  if path.is_dir() and path.name not in keep and path.name != REPLAYS) if root.is_dir() else []
    for name in gone:
        shutil.rmtree(root / name)
    return gone


def stage(program: Program, target: Target, inputs: Inputs) -> Path:
    """The program's inputs on the target, staged once; a half-staged directory is redone."""
    return staged_once(target.work(program), f"{inputs.corpus.name} scale {inputs.scale:g}\n",
                       lambda work: program.stage(work, inputs))


def start_cold(work: Path, program: Program) -> None:
    """What every run, traced or not, starts from: the last run's outputs removed, everything
    written back, what the filesystem deferred after deletions settled (settle.py), every
    cache dropped."""
    clean(work, program)
    cache.drop_all_settled(work)


UNTRACED_RUNS = 3
# A program whose untraced cold run took less than SHORT_RUN_NS makes SHORT_RUN_RECORDINGS
# recording runs a round (record_cpu), where the others make one: its time outside the
# filesystem is a small difference of two CPU times that each move by more than it from
# round to round, and a median of more runs steadies it (docs/model-evidence.md).
SHORT_RUN_NS = 200_000_000
SHORT_RUN_RECORDINGS = 3


def trace_program(program: Program, target: Target, inputs: Inputs, directory: Path) -> Traced:
    """Record the program cold on `target` with `fsbm trace record` (after UNTRACED_RUNS cold
    untraced runs, for its CPU time, and as many replays for its calls' CPU, as --replay-in
    makes them), then parse, characterize (scoped to its work directory) and plan its
    replay."""
    work = stage(program, target, inputs)
    log = directory / f"{program.name}.strace"
    replay_in = Path(tempfile.mkdtemp(prefix=f"{program.name}-record-", dir=replays_directory(target)))
    try:
        recording = record(program.command, log, force=True, cwd=work, scope=work, quiet=True,
                           untraced_runs=UNTRACED_RUNS, before_each=partial(clean, work, program), cold=True,
                           replay_in=replay_in)
    finally:
        shutil.rmtree(replay_in, ignore_errors=True)
    if recording.returncode not in program.ok_exits:
        raise FsbmError(f"traced run of {program.name} failed (exit {recording.returncode})")
    clean(work, program)
    events = ingest([log], directory / f"{program.name}.parquet", force=True).output
    profile = characterize_files([events]).to_json()
    profile["source"] = f"{program.name}: {program.description}"
    plan = directory / f"{program.name}.plan"
    write_plan(read_events(events), plan, scope=str(work))
    return Traced(program.name, log, events, plan, profile, recording.used)


def time_run(program: Program, target: Target, inputs: Inputs) -> dict[str, float]:
    """One untraced cold run: its seconds, the CPU seconds its process tree used (from this
    process's children's rusage, so the run has no wrapper that could change it; the
    user/system split is sampled by ticks, the sum is what to read), and what else the
    machine did meanwhile (host_activity)."""
    work = stage(program, target, inputs)
    start_cold(work, program)
    counters = Counters.now(target.mount)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    run_command(program, work)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    host = counters.until_now()
    clean(work, program)
    return {"seconds": seconds, "user_cpu_s": after.ru_utime - before.ru_utime,
            "system_cpu_s": after.ru_stime - before.ru_stime, "host": host.to_json()}


def replays_directory(target: Target) -> Path:
    """Where the replays on a target are made, each in a directory of its own."""
    base = target.mount / WORK_DIRECTORY / REPLAYS
    base.mkdir(parents=True, exist_ok=True)
    return base


def time_replay(traced: Traced, target: Target) -> dict[str, Any]:
    """One cold serial replay of the program's plan on the target: its seconds, its
    mismatches, and the time inside the replayed calls of each operation (ops_ns), which is
    where the model's miss can be found operation by operation; and what else the machine
    did meanwhile (host_activity: over the whole replay, its own cache drop included)."""
    settle_deferred_frees(target.mount)  # as start_cold does; fsreplay drops the caches itself
    counters = Counters.now(target.mount)
    report = cold_replay_beneath(traced.plan, replays_directory(target), prefix=f"{traced.program}-")
    host = counters.until_now()
    ops_ns = {op: entry["latency_ns"]["total"] for op, entry in report.get("operations", {}).items()
              if entry.get("latency_ns")}
    return {"seconds": report["runtime_ns"] / 1e9, "mismatches": mismatches(report), "ops_ns": ops_ns,
            "calls_cpu_s": report["cpu"]["calls_ns"] / 1e9, "host": host.to_json()}


def table_boundaries(rounds: int, repeats: int) -> list[int]:
    """Where, between rounds, each target's cost table is measured: `repeats` times, spread
    evenly from before the first round (0) to after the last (`rounds`)."""
    if repeats <= 1:
        return [0]
    return sorted({round(i * rounds / (repeats - 1)) for i in range(repeats)})


def recordings_per_round(traced: Traced) -> int:
    """How many recording runs a round makes of the program (SHORT_RUN_RECORDINGS says why)."""
    wall = (traced.profile.get("recording") or {}).get("untraced_wall_ns")
    return SHORT_RUN_RECORDINGS if wall is not None and wall < SHORT_RUN_NS else 1


def record_cpu(program: Program, target: Target, inputs: Inputs, traced: Traced, pair_index: int) -> dict[str, int]:
    """One untraced cold run under fsrusage, one pair for the wait for the files outside the
    workload (record.outside_wait_pair, which goes first alternating by `pair_index`), one cold
    run with its syncs skipped (record.measure_without_syncs) and one pair of replays that
    measures its calls' CPU time, skipping its syncs where that run did (record.replay_calls_cpu), as
    `fsbm trace record --untraced-runs --cold --replay-in` makes them: the CPU time, the
    pair's difference (outside_wait_ns) and cold read time (outside_read_ns), the CPU time
    without syncs, and the calls' CPU by group, that the predictor takes the time outside
    the filesystem from."""
    work = stage(program, target, inputs)
    cold = partial(start_cold, work, program)
    facts = measure_untraced(program.command, 1, cwd=work, quiet=True, before_each=cold)
    status = facts["untraced_exit_status"]
    pair = outside_wait_pair(program.command, traced.used, cwd=work, quiet=True, before_each=cold,
                             outside_first=pair_index % 2 == 1, expected_status=status)
    nosync = measure_without_syncs(program.command, 1, cwd=work, quiet=True, before_each=cold, expected_status=status)
    clean(work, program)
    nosync_fields = dict(zip(NOSYNC_CPU_FIELDS, (nosync[name] for name in UNTRACED_NOSYNC_FIELDS))) if nosync else {}
    return {**{name: facts[f"untraced_{name}"] for name in UNTRACED_FIELDS}, **pair, **nosync_fields,
            **replay_calls_cpu(traced.plan, replays_directory(target), without_syncs=bool(nosync))}


def measure_rounds(programs: list[Program], targets: list[Target], inputs: Inputs, traced: dict[str, Traced], *,
                   rounds: int, seed: int, progress: Progress,
                   at_boundary: Callable[[int], None] = lambda boundary: None,
                   recording_on: Target | None = None) -> list[dict[str, Any]]:
    """`rounds` rounds; in each, every (program, target) runs once for real and is replayed
    once, in a shuffled order blocked by program (round_order).  One record per
    measurement.  `at_boundary(b)` runs before round b and, with b = rounds, after the
    last: where the cost tables are measured, so they see the disk the rounds saw.

    With `recording_on` (the traced filesystem), each round also makes every program's
    recording run again (record_cpu, a run of its own, not one of the runs judged; a short
    program's several times, recordings_per_round): this
    machine's CPU speed drifts as its disk does (compile's CPU time 1.4 s in one hour, 1.9
    s two hours later), so the CPU time the prediction starts from is measured beside the
    runs it is judged against, as the cost tables are."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    recordings = {p.name: recordings_per_round(traced[p.name]) for p in programs} if recording_on else {}
    made: dict[str, int] = dict.fromkeys(recordings, 0)
    for r in range(rounds):
        at_boundary(r)
        order = round_order(programs, targets, recordings, rng)
        started = time.monotonic()
        for program, target in order:
            if target is None:
                records.append({"round": r, "program": program.name, "target": recording_on.label,
                                "kind": "recording", "at": time.time(),
                                **record_cpu(program, recording_on, inputs, traced[program.name],
                                             made[program.name])})
                made[program.name] += 1
                continue
            records.append({"round": r, "program": program.name, "target": target.label, "kind": "real",
                            **time_run(program, target, inputs), "at": time.time()})
            records.append({"round": r, "program": program.name, "target": target.label, "kind": "replay",
                            **time_replay(traced[program.name], target), "at": time.time()})
        progress(f"round {r + 1} of {rounds}: {len(order)} runs and replays in {time.monotonic() - started:.0f} s")
    at_boundary(rounds)
    return records


def round_order(programs: list[Program], targets: list[Target], recordings: dict[str, int],
                rng: random.Random) -> list[tuple[Program, Target | None]]:
    """One round's order: the programs shuffled, and each program's runs on every target (and
    its `recordings` recording runs, target None, none where it has no entry) shuffled and
    kept together.

    A randomized complete block design with the program as the block: the sync latency of
    this machine's disk swings 3x within minutes (sqlite's cold replay on ext4 took 0.85 s
    and 1.06 s in one pair of minutes, 2.18 s ten minutes later, 3.25 s four after that;
    its syncs on ext4 aged took 0.66 s forty seconds before those 3.25 s), so a ratio
    between two targets is only as good as the runs behind it are close in time.  Shuffled
    over the whole round they were up to ten minutes apart; blocked, within a minute.  The order within a block is still shuffled, so
    no target always runs first (or after the same neighbour)."""
    blocks = programs[:]
    rng.shuffle(blocks)
    order: list[tuple[Program, Target | None]] = []
    for program in blocks:
        block: list[tuple[Program, Target | None]] = [(program, target) for target in targets]
        block += [(program, None)] * recordings.get(program.name, 0)
        rng.shuffle(block)
        order += block
    return order


def targets_json(targets: list[Target]) -> list[dict[str, Any]]:
    """The targets as a validation document keeps them, each with the size of the device its
    filesystem is on (None for tmpfs): how much room a filesystem has decides some of its costs
    (btrfs commits to reclaim metadata space when little of its device is unallocated)."""
    return [{**asdict(t), "mount": str(t.mount), "device_bytes": device_bytes_of(t.mount)} for t in targets]

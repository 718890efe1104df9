"""`fsbm validate --plain`: the predictor judged as a new user meets it, on one set of the
suite (predictor/suite.py: dev or test) traced with plain `strace -f -tt -T -y -s 64`.

Measured here, on direct-I/O loop images of each candidate type, made anew for the run
(unless its stored tables are reused, whose images are kept as they were measured):
- each candidate's quick cost table, twice (fsbench seeds 1 and 2): the predictions use the
  per-case median, and the two tables' difference is the reproducibility reported;
- how well traces tell their untraced time here (predictor/tracing.py), calibrated anew and kept
  as the store's tracing calibration;
- each program traced twice, cold, on the traced candidate, with plain strace (no `fsbm
  trace record`: no untraced CPU time, no replays): the first trace is the one judged, the
  second says how far a prediction moves from one trace to the next; the first log with
  the call durations taken out, as strace without -T writes it, is characterized too; an
  untraced cold run just before the first trace and one just after the second take the
  program's runtime at the host's speed of that minute (not the verdict: how far the host
  moved between the traces and the rounds);
- every program run for real, cold, on every candidate, in interleaved rounds (shuffled,
  blocked by program, as validate.round_order does), the traces made amid them (after half
  the rounds, rounded down): a shared host's speed moves from minute to minute, and a trace
  tells the work at the speed of its own;
- each table grown by the cases the traced programs are priced from beyond it, at their own
  sizes (as `fsbm bench --for` does), unless `workload_cases` is off.
The logs go to a temporary directory, or stay in the one `keep_traces` names, where a rule
for logs can be tried against the runs it has to tell.  The measurements are one JSON
document; predictor/plain_judge.py judges them, and can judge them again (`--from`) after a
model change without measuring anything.  `validate_plain` does the whole of `fsbm validate
--plain` but the writing and printing.
"""

from __future__ import annotations

import random
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from fsbm.api import track_record
from fsbm.api.provision import add_programs_cases, measure_cost_table, measured_elsewhere, provision
from fsbm.api.prediction_service import PLAIN_MODEL
from fsbm.api.validation import IMAGE_BYTES, machine, stored_runtime_model, utc
from fsbm.characterizer.characterize import characterize_files
from fsbm.errors import FsbmError
from fsbm.locations import data_dir
from fsbm.microbench.fsbench import TableEffort
from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.plain_judge import PlainJudged, judge_plain
from fsbm.predictor.suite import Inputs, Split, build_corpus, programs
from fsbm.pipeline import calibrate_tracing
from fsbm.predictor.tracing import STRACE_FLAGS
from fsbm.predictor.validate import Target, round_order, stage, start_cold, targets_json, time_run
from fsbm.traces.ingest import ingest
from fsbm.traces.strace import without_call_durations

TABLE_SEEDS = (1, 2)


@dataclass
class PlainOptions:
    split: Split = "dev"
    candidates: tuple[str, ...] = ("ext4", "xfs", "btrfs")
    traced_on: str = "ext4"
    rounds: int = 3
    scale: float = 1.0
    seed: int = 1
    reuse_tables: bool = False  # the newest stored tables of each target instead of measuring them again
    workload_cases: bool = True  # each table grown by the cases the traced programs need (`fsbm bench --for`)
    table_effort: TableEffort = TableEffort()  # how long each table measures a case
    keep_traces: Path | None = None  # where the strace logs go and stay (an empty or new directory)


def ready_to_keep(keep: Path) -> None:
    """Make `keep` for the logs, refusing a directory that holds anything already: no log the
    user had is overwritten.  Checked before anything is measured."""
    try:
        keep.mkdir(parents=True, exist_ok=True)
        if any(keep.iterdir()):
            raise FsbmError(f"--keep-traces {keep}: the directory is not empty; give a new or empty one")
    except OSError as exc:
        raise FsbmError(f"--keep-traces {keep}: {exc.strerror or exc}") from None


@contextmanager
def kept_or_temporary(keep: Path | None, prefix: str) -> Iterator[Path]:
    """Where the traces and their event tables go: `keep` (ready_to_keep), left in place, or a
    temporary directory named from `prefix`, removed afterwards."""
    if keep is not None:
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def trace_plainly(program: Any, target: Target, inputs: Inputs, directory: Path, again: bool = False) -> dict[str, Any]:
    """One cold run of the program under plain strace on `target`; its profile, scoped to its
    work directory, with the traced wall time; the first trace's (not `again`) from the same
    log without -T too.  The logs and their event tables are left in `directory` (the second
    trace of a program named -again)."""
    work = stage(program, target, inputs)
    start_cold(work, program)
    log = directory / f"{program.name}{'-again' if again else ''}.strace"
    started = time.perf_counter()
    done = subprocess.run(["strace", *STRACE_FLAGS, "-o", str(log), *program.command], cwd=work,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    traced_s = time.perf_counter() - started
    if done.returncode not in program.ok_exits:
        raise FsbmError(f"traced run of {program.name} failed (exit {done.returncode}): {done.stderr.strip()[:300]}")
    logs = {"profile": log}
    if not again:  # the first trace is the one judged, in both forms
        logs["profile_untimed"] = directory / f"{log.stem}-untimed.strace"
        logs["profile_untimed"].write_bytes(without_call_durations(log.read_bytes()))
    profiles = {}
    for key, path in logs.items():
        events = ingest([path], directory / f"{path.stem}.parquet", force=True).output
        profiles[key] = characterize_files([events], scope=str(work)).to_json()
        profiles[key]["source"] = f"{program.name}: {program.description}"
    return {"name": program.name, "description": program.description, "command": program.command,
            "split": program.split, "traced_wall_s": traced_s, **profiles}


def _beside(program: Any, target: Target, inputs: Inputs) -> dict[str, float]:
    """One untraced cold run of the program on the traced candidate, beside its traces: what it
    took at the host's speed of the minute it was traced in (plain_judge.host_between)."""
    return {**time_run(program, target, inputs), "at": time.time()}


def interleaved_rounds(suite: list[Any], targets: list[Target], rng: random.Random, rounds: range, of: int,
                       run: Callable[[Any, Target], dict[str, Any]], console: Console) -> list[dict[str, Any]]:
    """Rounds `rounds` (of `of`) of cold runs of every program on every target, in
    validate.round_order: each run's record, `run`'s measurements in it."""
    records = []
    for r in rounds:
        began = time.monotonic()
        for program, target in round_order(suite, targets, {}, rng):
            assert target is not None
            records.append({"round": r, "program": program.name, "target": target.label, "kind": "real",
                            **run(program, target), "at": time.time()})
        console.print(f"  round {r + 1} of {of}: {len(suite) * len(targets)} cold runs in "
                      f"{time.monotonic() - began:.0f} s")
    return records


def provision_targets(settings: Any, candidates: tuple[str, ...], reuse_tables: bool, effort: TableEffort,
                      console: Console, seeds: tuple[int, ...] = TABLE_SEEDS,
                      ) -> tuple[list[Target], dict[str, Any], dict[str, list[CostTable]]]:
    """A fresh direct-I/O loop image of each candidate type (val-TYPE), made anew unless the
    stored tables are reused (then kept as they were measured), and a quick cost table of it
    for each fsbench seed of `seeds`, measured, or the newest as many stored: the targets,
    their filesystems by name, and their tables by name."""
    targets, filesystems = [], {}
    for fstype in candidates:
        # Made anew unless stored tables are reused: the tables and the runs see one freshly made
        # filesystem (a kept btrfs drifts with its history: docs/model-evidence.md).
        fs = provision(settings, f"val-{fstype}", fstype, IMAGE_BYTES, None, console, fresh=not reuse_tables)
        targets.append(Target(f"{fstype} fresh", fs.name, fs.mount_point, "fresh"))
        filesystems[fs.name] = fs
    tables: dict[str, list[CostTable]] = {t.candidate: [] for t in targets}
    with settings.store() as store:
        if reuse_tables:
            for name in filesystems:
                kept = store.documents("cost_table", name=name)[:len(seeds)]
                if len(kept) < len(seeds):
                    raise FsbmError(f"the store has {len(kept)} cost tables of {name}; --reuse-tables needs "
                                    f"{len(seeds)}")
                tables[name] = [CostTable.from_json(body, f"cost table {i}") for i, _, body in kept]
                if other := measured_elsewhere(tables[name], filesystems[name].mount_point):
                    raise FsbmError(f"the stored cost tables of {name} were measured on {other}, and its image is now "
                                    f"{filesystems[name].size_bytes >> 20} MiB; --reuse-tables takes tables of "
                                    "a filesystem of its size only", hint="run once without --reuse-tables")
                console.print(f"[dim]{escape(name)}: cost tables {', '.join(str(i) for i, _, _ in kept)} from the store[/]")
        for seed in () if reuse_tables else seeds:
            console.print(f"[bold]cost tables[/] (fsbench seed {seed})")
            for name, fs in filesystems.items():
                tables[name].append(measure_cost_table(settings, fs, store, seed=seed, effort=effort))
    return targets, filesystems, tables


def measure_plain(settings: Any, options: PlainOptions, console: Console) -> dict[str, Any]:
    """Everything measured (module docstring): the document plain_judge reads."""
    if options.keep_traces is not None:
        ready_to_keep(options.keep_traces)
    started = time.time()
    suite = programs(options.scale, split=options.split)
    home = data_dir() / "validation"
    inputs = Inputs(build_corpus(home / f"corpus-{options.scale:g}.tar", int(24e6 * options.scale)), options.scale)
    targets, filesystems, tables = provision_targets(settings, options.candidates, options.reuse_tables,
                                                     options.table_effort, console)
    console.print("[bold]tracing calibration[/]")
    with settings.store() as store:  # kept: plain traces predicted later take their band from it
        _, calibration = calibrate_tracing(store, progress=lambda line: console.print(f"  {escape(line)}"),
                                           cold_start=True)
    baseline = next(t for t in targets if t.label == f"{options.traced_on} fresh")
    rng = random.Random(options.seed)
    records: list[dict[str, Any]] = []

    def run_rounds(first: int, last: int) -> None:
        records.extend(interleaved_rounds(suite, targets, rng, range(first, last), options.rounds,
                                          lambda program, target: time_run(program, target, inputs), console))

    # The traces are made amid the rounds, so that the host's speed of their minutes sits among
    # the rounds' and not minutes before them all.
    traced_after = options.rounds // 2
    run_rounds(0, traced_after)
    console.print(f"[bold]tracing[/] {len(suite)} programs ({options.split} set) on {escape(baseline.label)} with "
                  f"plain strace {' '.join(STRACE_FLAGS)}")
    with kept_or_temporary(options.keep_traces, "fsbm-validate-plain-") as logs:
        traced = []
        for program in suite:
            before = _beside(program, baseline, inputs)
            traced.append(trace_plainly(program, baseline, inputs, logs))
            # Traced again, as it was: how far one trace's prediction moves from the next's.
            again = trace_plainly(program, baseline, inputs, logs, again=True)
            traced[-1].update(profile_again=again["profile"], traced_wall_again_s=again["traced_wall_s"],
                              beside_runs=[before, _beside(program, baseline, inputs)])
            console.print(f"  {program.name}: traced in {traced[-1]['traced_wall_s']:.1f} s, again in "
                          f"{again['traced_wall_s']:.1f} s")
    run_rounds(traced_after, options.rounds)
    profiles = [t[key] for t in traced for key in ("profile", "profile_again", "profile_untimed")]
    added = add_programs_cases(settings, filesystems, tables, profiles, console,
                               options.table_effort) if options.workload_cases else {}
    return {
        "schema_version": 1, "kind": "plain_validation_measurements", "started": started, "finished": time.time(),
        "machine": machine(), "traced_on": baseline.label,
        "options": {**asdict(options), "keep_traces": str(options.keep_traces) if options.keep_traces else None},
        "targets": targets_json(targets),
        "cost_table_runs": {name: [t.to_json() for t in found] for name, found in tables.items()},
        "workload_cases": added,
        "tracing_calibration": calibration.to_json(), "programs": traced, "records": records,
        "traced_after_round": traced_after,
    }


@dataclass
class PlainValidation:
    """A judged plain validation: its measurements, the judgement, and what was stored."""

    doc: dict[str, Any]
    judged: PlainJudged
    measurements_id: int | None  # None: judged from measurements given, not stored again
    model_id: int | None  # the runtime model fitted on a development set; a test set fits none


def validate_plain(settings: Any, doc: dict[str, Any] | None, options: PlainOptions,
                   console: Console) -> PlainValidation:
    """Measure one set (or take `doc`), keep the measurements, judge them.  A development set
    fits the runtime model for plain traces, kept for `fsbm predict`; a test set is judged by
    the kept model, and nothing is ever fitted on it."""
    measurements_id = None
    if doc is None:
        doc = measure_plain(settings, options, console)
        with settings.store() as store:
            measurements_id = store.save_document("plain_validation_measurements", doc, name=options.split)
    dev = doc["options"]["split"] == "dev"
    with settings.store() as store:
        stored = stored_runtime_model(store, PLAIN_MODEL)
    judged = judge_plain(doc, model=None if dev else stored)
    model_id = None
    with settings.store() as store:
        if dev:
            body = judged.model.to_json(f"the development set measured {utc(doc['finished'])} UTC")
            model_id = store.save_document("runtime_model", body, name=PLAIN_MODEL)
        track_record.save(store, "plain", doc["options"]["split"], doc["finished"],
                          track_record.forms_of(judged.summary, ("absolute", "untimed", "relative")))
    return PlainValidation(doc, judged, measurements_id, model_id)

"""The main job, the same for the command line, the HTTP API, the demo and a notebook: a
trace becomes events, events a profile, a profile a prediction; cost tables are measured,
and traces replayed, through the same calls.

    import fsbm
    events = fsbm.parse("build.strace")                   # a pandas DataFrame, one row per call
    profile = fsbm.characterize("build.strace")           # Tang's table, sizes, reuse curve
    profile.to_frame()                                    # its operations as a DataFrame
    prediction = fsbm.predict(profile, ["ext4", "xfs"])   # cost tables by name, from the store
    prediction.to_frame()                                 # runtime, interval and split per candidate
    fsbm.cost_table("ext4").to_frame()                   # what each call costs there
    fsbm.replay("build.strace", "/mnt/scratch/empty")    # the trace's calls, run for real there

Every function takes what the CLI takes, raises FsbmError (or a subclass) on bad input with
the file and line, and keeps nothing in the store unless told to (`predict(..., keep=True)`;
the CLI keeps every profile and prediction).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from fsbm.errors import UsageError
from fsbm.store import ResultsStore

if TYPE_CHECKING:
    import pandas as pd

    from fsbm.characterizer.profile import Profile
    from fsbm.documents import Prediction
    from fsbm.microbench.fsbench import TableEffort
    from fsbm.predictor.cost_table import CostTable
    from fsbm.traces.nfs import CaptureOptions
    from fsbm.traces.replay_plan import PlanStats

PathLike = Union[str, os.PathLike]


def absolute_scope(scope: Optional[str]) -> Optional[str]:
    """A scope as an absolute path (trace paths are absolute); "/" for everything."""
    return os.path.abspath(scope) if scope is not None else None


def _open(store: Optional[ResultsStore | PathLike], stack: ExitStack) -> ResultsStore:
    """The store given, or one opened from a path (the default store's without one) for as
    long as `stack` lasts."""
    if isinstance(store, ResultsStore):
        return store
    return stack.enter_context(ResultsStore(Path(store) if store is not None else None))


def _capture(capture: Optional["CaptureOptions"]) -> "CaptureOptions":
    from fsbm.traces.nfs import CaptureOptions

    return capture or CaptureOptions()


def events_table(source: PathLike | Sequence[PathLike], stack: ExitStack, *, keep_going: bool = False,
                 capture: Optional["CaptureOptions"] = None, workers: Any = None) -> Path:
    """An event table (Parquet) for a trace (one file, or the per-pid logs of one strace -ff
    run) or a table: a trace is parsed into a temporary one that lives as long as `stack`,
    on `workers` where it is -ff logs and they are given (fsbm.cluster)."""
    from fsbm.traces.ingest import ingest

    paths = [Path(source)] if isinstance(source, (str, os.PathLike)) else [Path(s) for s in source]
    if len(paths) == 1 and (paths[0].suffix == ".parquet" or paths[0].is_dir()):
        return paths[0]
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fsbm-events-")))
    return ingest(paths, tmp / "events.parquet", keep_going=keep_going, capture=_capture(capture),
                  workers=workers).output


def parse(source: PathLike | Sequence[PathLike], *, keep_going: bool = False,
          capture: Optional["CaptureOptions"] = None) -> "pd.DataFrame":
    """A trace (strace log, strace -ff logs, NFS capture or Ellard text) as one DataFrame of
    events, DESIGN.md's Event columns."""
    from fsbm.traces.ingest import ingest, read_events

    sources = [Path(source)] if isinstance(source, (str, os.PathLike)) else [Path(s) for s in source]
    with tempfile.TemporaryDirectory(prefix="fsbm-parse-") as tmp:
        table = ingest(sources, Path(tmp) / "events.parquet", keep_going=keep_going, capture=_capture(capture))
        return read_events(table.output).to_pandas()


def characterize(source: PathLike | Sequence[PathLike] | "pd.DataFrame", *, scope: Optional[str] = None,
                 keep_going: bool = False, capture: Optional["CaptureOptions"] = None) -> "Profile":
    """The workload profile of a trace (a file, or the per-pid logs of one strace -ff run), an
    event table, a profile file (JSON, read as it is), or a DataFrame of events (`parse`'s).
    `scope`: only calls on files beneath this directory are the workload.  A DataFrame holds
    the events alone: not what `fsbm trace record` kept beside them (the scope it was given,
    the CPU time) nor the trace's timeline, so a trace or its table gives the fuller profile."""
    from fsbm.characterizer.characterize import characterize_files
    from fsbm.characterizer.profile import Profile
    from fsbm.traces.strace import run_name

    if not isinstance(source, (str, os.PathLike, Sequence)):
        import pyarrow as pa

        from fsbm.characterizer.characterize import characterize as characterize_table
        from fsbm.traces.schema import EVENT_SCHEMA

        table = pa.Table.from_pandas(source, schema=EVENT_SCHEMA, preserve_index=False)
        return characterize_table(table, scope=absolute_scope(scope))
    paths = [Path(source)] if isinstance(source, (str, os.PathLike)) else [Path(s) for s in source]
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path} does not exist")
    if len(paths) == 1 and paths[0].suffix == ".json":
        if scope is not None:
            raise UsageError("--scope applies to a trace; a profile was characterized with its scope already")
        return Profile.load(paths[0])
    with ExitStack() as stack:
        profile = characterize_files([events_table(paths, stack, keep_going=keep_going, capture=capture)],
                                     scope=absolute_scope(scope))
    profile.body["source"] = run_name(paths)
    return profile


def needs_tracing_calibration(store: ResultsStore, profile: dict[str, Any]) -> bool:
    """A plain trace (no recording) with timestamps, and no current tracing calibration
    stored: the band of its time outside comes from one (predictor/tracing.py)."""
    from fsbm.predictor.tracing import newest_current

    if profile.get("recording") or not (profile.get("timeline") or {}).get("span_ns"):
        return False
    stored = (store.document(document_id, "tracing_calibration")
              for document_id, _, _ in store.document_names("tracing_calibration"))
    return newest_current(found[2] if found else None for found in stored) is None


def calibrate_capture(store: ResultsStore, pairs: int, progress: Callable[[str], None] = lambda line: None,
                      share_in: Path | None = None) -> tuple[int, Any]:
    """Measure what capturing NFS traffic costs a job on this machine's loopback (root: an NFS
    server and tshark), its share in `share_in` (cold runs) or in memory, and the client's own
    start no capture holds (up to CLIENT_START_RUNS cold runs of each small job, never more
    than `pairs`), keep it; its id and the calibration (predictor/capture_cost.py)."""
    from dataclasses import asdict
    from datetime import datetime, timezone

    from fsbm.documents import Timeline
    from fsbm.microbench.capture_cost import CLIENT_START_RUNS, TRANSFER_MIB, measure_capture_pairs, measure_client_starts
    from fsbm.predictor.capture_cost import CALIBRATED_ON, CAPTURE_CALIBRATION, CaptureCost

    def span_of(capture: Path) -> float:
        return Timeline.of(characterize(capture).to_json()["timeline"]).span_ns / 1e9

    measured = measure_capture_pairs(pairs, TRANSFER_MIB, progress, share_in)
    starts = measure_client_starts(span_of, min(pairs, CLIENT_START_RUNS), progress, share_in)
    cost = CaptureCost([asdict(pair) for pair in measured], datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       str(share_in) if share_in else None, [asdict(start) for start in starts])
    return store.save_document(CAPTURE_CALIBRATION, cost.to_json(), name=CALIBRATED_ON), cost


def calibrate_tracing(store: ResultsStore, progress: Callable[[str], None] = lambda line: None,
                      quick: bool = False, cold_start: bool = False) -> tuple[int, Any]:
    """Measure what strace adds to a job on this machine, keep it; its id and the calibration.
    `quick`: QUICK_CALIBRATION_RUNS of each program, in about half the time, from noisier runs.
    `cold_start`: also the cold start no plain trace holds (predictor/cold_start.py), which
    drops every cache of the machine (root)."""
    from fsbm.locations import data_dir
    from fsbm.predictor.cold_start import FULL_COLD_START_RUNS, QUICK_COLD_START_RUNS
    from fsbm.predictor.tracing_runs import FULL_CALIBRATION_RUNS, QUICK_CALIBRATION_RUNS, calibrate

    untraced, traced = QUICK_CALIBRATION_RUNS if quick else FULL_CALIBRATION_RUNS
    cold_runs = (QUICK_COLD_START_RUNS if quick else FULL_COLD_START_RUNS) if cold_start else 0
    calibration = calibrate(data_dir() / "tracing", untraced_runs=untraced, traced_runs=traced,
                            cold_start_runs=cold_runs, progress=progress)
    return store.save_document("tracing_calibration", calibration.to_json(), name="strace"), calibration


def predict(profile: "Profile | dict[str, Any]", candidates: Sequence[str], *,
            store: Optional[ResultsStore | PathLike] = None, cache_bytes: Optional[int] = None,
            start: str = "cold", measured: Optional[float] = None, traced_on: Optional[str] = None,
            uncalibrated: bool = False, keep: bool = False, name: Optional[str] = None) -> "Prediction":
    """The runtime of a profiled workload on each candidate (cost tables by name, the newest of
    each in the store): 90% interval, split, ranking; with `measured` (s, on `traced_on`) the
    relative form too.  `keep` stores the profile and the prediction (the prediction then has
    its id, its report's too)."""
    from fsbm.api.prediction_service import PredictionService
    from fsbm.predictor.model import STARTS

    if start not in STARTS:
        raise UsageError(f"start must be one of {', '.join(STARTS)}, not {start!r}")
    if measured is not None and traced_on is None:
        raise UsageError("a measured runtime needs the candidate it was measured on (traced_on)")
    body = profile if isinstance(profile, dict) else profile.to_json()
    with ExitStack() as stack:
        store = _open(store, stack)
        predictor = PredictionService(store.path)
        profile_id = store.save_document("profile", body, name=name or body.get("source")) if keep else None
        prediction = predictor.predict(store, body, list(candidates), cache_bytes=cache_bytes, start=start,
                                       uncalibrated=uncalibrated, measured=measured, traced_on=traced_on,
                                       profile_id=profile_id)
        if keep:
            predictor.save(store, prediction, name=name or body.get("source") or "profile")
    return prediction


def measure_costs(target: PathLike, options: Any, candidate: str, store: ResultsStore, *,
                  console: Any = None, show: bool = False, keep_table: bool = True) -> tuple[dict[str, Any], "CostTable"]:
    """Run fsbench on `target` (with `show`, its estimate and a progress bar on `console`),
    store the run and (with `keep_table`) its cost table under `candidate`; returns both.  An interrupted run, or
    one whose cases failed (a full filesystem), is kept, but not as a cost table: predictions
    and the reuse of stored tables would take its missing cases for a complete measurement."""
    from rich.markup import escape

    from fsbm.api.render import progress_bar
    from fsbm.microbench.fsbench import completed, plan, run_fsbench
    from fsbm.predictor.cost_table import CostTable

    target = Path(target)
    if show:
        from rich.console import Console

        console = console or Console()
        console.print(f"[dim]{escape(candidate or str(target))}: {escape(plan(target, options)[1])}[/]")
    with progress_bar(console, escape(candidate or str(target)), show) as on_progress:
        doc = run_fsbench(target, options, on_progress=on_progress)
    label = candidate or doc.get("environment", {}).get("fs_type", "unknown")
    run_id = store.save_fsbench(doc, label=label)
    table = CostTable.from_fsbench(doc, label, run_id)
    probe_id = store.newest_document_id("probe", label)
    probe = store.document(probe_id, "probe") if probe_id is not None else None
    if probe:  # what fsprobe found on this candidate goes with its costs
        table = table.with_parameters(probe[2], probe_id)
    if keep_table and completed(doc):
        store.save_document("cost_table", table.to_json(), name=label, run_id=run_id)
    doc["run_id"] = run_id
    return doc, table


def add_workload_cases(target: PathLike, table: "CostTable", profiles: Sequence["Profile | dict[str, Any]"],
                       store: ResultsStore, *, cache_bytes: int, console: Any = None, show: bool = False,
                       effort: Optional["TableEffort"] = None) -> tuple[list[dict[str, Any]], "CostTable"]:
    """Measure on `target` the cases any of `profiles` is priced from beyond `table`
    (predictor.regime), at the workloads' sizes, with the table's fsbench seed, held to
    `effort` where a command set one (fsbench.options_measuring); the fsbench runs (each
    stored as a run) and the table grown by those that completed."""
    from fsbm.documents import Profile as ProfileDocument
    from fsbm.microbench.fsbench import TableEffort, completed, options_measuring
    from fsbm.predictor.regime import unmeasured_cases

    documents = [ProfileDocument.of(p if isinstance(p, (dict, ProfileDocument)) else p.to_json()) for p in profiles]
    cases = sorted({case for profile in documents for case in unmeasured_cases(profile, table, cache_bytes)})
    runs = []
    for options in options_measuring([(c.bench, c.order, c.cache, c.size, c.file_sizes, c.request_sizes, c.files)
                                      for c in cases],
                                     seed=table.seed, aging_state=table.environment.get("aging_state"),
                                     effort=effort or TableEffort()):
        doc, _ = measure_costs(target, options, table.candidate, store, console=console, show=show, keep_table=False)
        runs.append(doc)
        if completed(doc) and doc.get("results"):  # a run whose every case was skipped adds nothing
            table = table.with_measurements(doc, doc["run_id"])
    return runs, table


def newest_cost_table(store: ResultsStore, candidate: str) -> Optional["CostTable"]:
    """The newest cost table stored under `candidate`; None where there is none."""
    from fsbm.predictor.cost_table import CostTable

    table_id = store.newest_document_id("cost_table", candidate)
    newest = store.document(table_id, "cost_table") if table_id is not None else None
    if newest is None:
        return None
    return CostTable.from_json(newest[2], f"cost table {table_id}")


def cost_table_to_grow(store: ResultsStore, candidate: str) -> "CostTable":
    """The newest cost table of `candidate`, which `fsbm bench --for` adds a workload's cases
    to; a clear error where the candidate has none yet."""
    table = newest_cost_table(store, candidate)
    if table is None:
        raise UsageError(f"the store has no cost table for '{candidate}' to add the workload's cases to",
                         hint="measure it first with `fsbm bench --quick`")
    return table


def measure_regime(target: PathLike, profile: "Profile | dict[str, Any]", candidate: str, store: ResultsStore, *,
                   cache_bytes: int, console: Any = None, show: bool = False,
                   effort: Optional["TableEffort"] = None) -> tuple[list[dict[str, Any]], Optional[int]]:
    """`fsbm bench --for`: the cases `profile` is priced from beyond `candidate`'s newest cost
    table measured on `target` (add_workload_cases), the grown table kept as the candidate's
    newest, held to `effort` where a command set one.  The fsbench runs and the new table's
    id; no runs and None where the table already covers the profile.  A run that failed or
    was interrupted is kept as a run and added to nothing."""
    table = cost_table_to_grow(store, candidate)
    runs, grown = add_workload_cases(target, table, [profile], store, cache_bytes=cache_bytes, console=console,
                                     show=show, effort=effort)
    if grown is table:
        return runs, None
    return runs, store.save_document("cost_table", grown.to_json(), name=candidate, run_id=grown.fsbench_run_id)


def add_parameters(store: ResultsStore, candidate: str, probe_id: int) -> Optional[int]:
    """The probe results stored as `probe_id` added to the newest cost table of `candidate`,
    as a new version of it: its id, or None where the candidate has no cost table yet
    (`measure_costs` then takes the parameters)."""
    newest = newest_cost_table(store, candidate)
    if newest is None:
        return None
    probe = store.document(probe_id, "probe")
    if probe is None:
        raise UsageError(f"the store holds no probe results {probe_id}")
    table = newest.with_parameters(probe[2], probe_id)
    return store.save_document("cost_table", table.to_json(), name=candidate, run_id=table.fsbench_run_id)


def cost_table(name: str, *, store: Optional[ResultsStore | PathLike] = None) -> "CostTable":
    """The newest cost table of that name in the store (`fsbm bench` measures them), found as
    a prediction finds it."""
    from fsbm.api.prediction_service import PredictionService

    with ExitStack() as stack:
        store = _open(store, stack)
        [(_, pricer)] = PredictionService(store.path).newest_tables(store, [name])
        return pricer.table


def check_replay(source: PathLike, mode: str) -> None:
    """What `replay` refuses before it reads or writes anything: an unknown mode, a missing source."""
    from fsbm.microbench.replay import MODES

    if mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}, not {mode!r}")
    if not Path(source).exists():
        raise UsageError(f"{source} does not exist")


def replay(source: PathLike, target: PathLike, *, mode: str = "serial", cold: bool = False,
           keep_going: bool = False, plan_out: Optional[PathLike] = None,
           on_plan: Callable[["PlanStats"], None] = lambda stats: None,
           on_progress: Optional[Callable[[int, int], None]] = None) -> dict[str, Any]:
    """Replay a trace (or its event table) for real beneath `target`, an empty directory
    (microbench/replay.py): the replay's report, with what the plan held and left out.
    `plan_out` keeps the plan; `on_plan` hears its counts before the replay starts."""
    from fsbm.microbench.replay import run_replay
    from fsbm.traces.ingest import read_events
    from fsbm.traces.replay_plan import write_plan

    check_replay(source, mode)
    with ExitStack() as stack:
        events = events_table(source, stack, keep_going=keep_going)
        plan_path = Path(plan_out) if plan_out is not None else \
            Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fsbm-plan-"))) / "plan"
        stats = write_plan(read_events(events), plan_path)
        on_plan(stats)
        doc = run_replay(plan_path, Path(target), mode=mode, cold=cold, on_progress=on_progress,
                         tree_bytes=stats.tree_bytes)
    doc.update(source=str(source), plan={"events": stats.events, "operations": stats.operations,
                                         "skipped": dict(stats.skipped), "implicit_opens": stats.implicit_opens})
    return doc


def age(directory: PathLike, options: Any, *, fs_name: Optional[str] = None, scratch_root: Optional[PathLike] = None,
        on_progress: Optional[Callable[..., None]] = None) -> dict[str, Any]:
    """Age a directory's filesystem (Tang, appendix E; microbench/age.py): the aging report.
    With `fs_name`, the tree goes in that scratch filesystem's aged/ directory and the
    filesystem is labelled with what was done, "partly ..." where the aging was interrupted
    (the tree was changed, so the old label would say it was not)."""
    from fsbm.microbench import scratch
    from fsbm.microbench.age import run_aging

    directory = Path(directory)
    if fs_name:
        directory = directory / "aged"
        directory.mkdir(exist_ok=True)
    doc = run_aging(directory, options, on_progress=on_progress)
    state = options.describe()
    if doc.get("interrupted"):
        state = f"partly {state} ({doc['rounds_completed']} of {doc['rounds']} rounds done)"
    doc["aging_state"] = state
    if fs_name:
        scratch.set_aging_state(fs_name, state, Path(scratch_root) if scratch_root is not None else None)
    return doc

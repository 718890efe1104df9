"""`fsbm validate --capture`: predictions from NFS captures judged against real runs.

A user with a capture of an NFS server's traffic asks how long the clients' work would take
were the server's filesystem another.  Measured here, for one set of the NFS suite
(predictor/nfs_suite.py):
- each candidate's direct-I/O loop image and its quick cost tables, as the plain validation
  makes them (plain_validation.provision_targets), grown by the cases the captures need;
- every client job run for real against a real NFS server (microbench/nfs_server.py)
  exporting a directory of every candidate, cold (every cache dropped, a server started for
  the run), in interleaved rounds blocked by job (validate.round_order);
- each job captured once with tshark on the traced candidate, amid the rounds (after half of
  them, rounded down), as a user's capture would be: on the server they have.
The capture is parsed and characterized as `fsbm predict` does, and predictor/capture_judge.py
judges the predictions it gives; it can judge them again (`--from`) after a model change.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from fsbm.api import track_record
from fsbm.api.plain_validation import (TABLE_SEEDS, PlainOptions, interleaved_rounds, kept_or_temporary,
                                      provision_targets, ready_to_keep)
from fsbm.api.prediction_service import PLAIN_MODEL
from fsbm.api.provision import add_programs_cases
from fsbm.api.validation import machine, stored_runtime_model
from fsbm.characterizer.characterize import characterize_files
from fsbm.errors import FsbmError
from fsbm.host_activity import Counters
from fsbm.locations import data_dir
from fsbm.microbench import cache
from fsbm.microbench.capture_cost import PAIRS, TRANSFER_MIB
from fsbm.microbench.nfs_server import capturing, missing_tools, serving
from fsbm.pipeline import calibrate_capture
from fsbm.predictor.capture_cost import CaptureCost
from fsbm.predictor.capture_judge import FORMS, CaptureJudged, judge_capture
from fsbm.predictor.nfs_suite import NfsProgram, clean_sides, nfs_programs, run_job, stage_side
from fsbm.predictor.validate import Target, targets_json
from fsbm.traces.ingest import ingest

SHARE_DIRECTORY = "fsbm-validate-nfs"
CAPTURE_SCRATCH = Path("/dev/shm")  # where a capture is written while its job runs (_captured)


@dataclass
class CaptureOptions(PlainOptions):
    """A capture validation's choices are a plain validation's, `keep_traces` keeping the
    captures and their event tables; how many quick cost tables of each target its
    predictions take the per-case median of (fsbench seeds 1 and 2, or 1 alone); and how
    many pairs calibrate what capturing costs."""

    tables: int = len(TABLE_SEEDS)
    # Pairs of transfers, captured and not, that measure what capturing costs a job here
    # (pipeline.calibrate_capture) before the rounds; 0: not measured, no band allows for it.
    capture_cost_pairs: int = PAIRS


@dataclass(frozen=True)
class _Sides:
    """Where a job's share and its client's own files are, on one target."""

    share: Path
    client: Path
    server_home: Path  # the server's configuration, log and state


def _sides(program: NfsProgram, target: Target, scale: float) -> _Sides:
    """The job's inputs staged on the target's share and beside its client (once each)."""
    home = data_dir() / "validation" / "nfs"
    share = stage_side(target.mount / SHARE_DIRECTORY / program.name, program.stage_server, scale)
    client = stage_side(home / "clients" / f"{program.name}-{scale:g}", program.stage_client, scale)
    return _Sides(share, client, home / "server")


def cold_job(program: NfsProgram, target: Target, scale: float, capture: Path | None = None) -> dict[str, Any]:
    """One cold run of the job against a server exporting its share on `target`: the last
    run's leavings removed, every cache dropped, a server started for it; its seconds (the
    job's alone, not the server's start), captured into `capture` where given (with the
    packets the capture dropped), and what else the machine did meanwhile (host_activity)."""
    sides = _sides(program, target, scale)
    clean_sides(program, sides.share, sides.client)
    cache.drop_all_settled(sides.share)
    with serving([sides.share], sides.server_home) as server, ExitStack() as stack:
        url = server.url(sides.share)
        captured = stack.enter_context(capturing(capture)) if capture is not None else None
        counters = Counters.now(target.mount)
        started = time.perf_counter()
        run_job(program, sides.client, url)
        seconds = time.perf_counter() - started
        host = counters.until_now()
    clean_sides(program, sides.share, sides.client)
    run = {"seconds": seconds, "host": host.to_json()}
    return run if captured is None else {**run, "dropped": captured.dropped}


def _captured(program: NfsProgram, target: Target, scale: float, directory: Path) -> dict[str, Any]:
    """The job captured cold on `target`, and the capture characterized as `fsbm predict`
    characterizes one.  The capture is written to memory (CAPTURE_SCRATCH) while the job runs,
    then moved to `directory`: written beside the loop images, a large job's packets took the
    disk the server's filesystem was on."""
    scratch = CAPTURE_SCRATCH if CAPTURE_SCRATCH.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="fsbm-capture-", dir=scratch) as tmp:
        run = cold_job(program, target, scale, capture=Path(tmp) / f"{program.name}.pcapng")
        path = Path(shutil.move(Path(tmp) / f"{program.name}.pcapng", directory / f"{program.name}.pcapng"))
    events = ingest([path], directory / f"{program.name}.parquet", force=True).output
    profile = characterize_files([events]).to_json()
    profile["source"] = f"{program.name}: {program.description}"
    return {"name": program.name, "description": program.description, "split": program.split,
            "script": program.script, "captured_run_s": run["seconds"], "capture_dropped": run["dropped"],
            "profile": profile}


def calibrated(settings: Any, pairs: int, share_in: Path | None, console: Console) -> CaptureCost:
    """What capturing costs a job here (pipeline.calibrate_capture), measured in `pairs` of
    each direction against a share in `share_in`, cold, or in memory; stored, and said."""
    where = f"a share in {share_in}, cold" if share_in else "a share in memory"
    console.print(f"[bold]calibrating[/] what capturing NFS traffic costs a job here: {pairs} reads and {pairs} "
                  f"writes of {TRANSFER_MIB} MiB over the loopback ({escape(where)}), each captured (tshark) and not, "
                  "then small client jobs run cold and captured")
    with settings.store() as store:
        document_id, cost = calibrate_capture(store, pairs, progress=lambda line: console.print(f"  {escape(line)}"),
                                              share_in=share_in)
    console.print(f"capture calibration {document_id} stored: capturing costs a job here {cost.words()}, where its "
                  f"client and server share the host; {escape(cost.start_words())}")
    return cost


def measure_capture(settings: Any, options: CaptureOptions, console: Console) -> dict[str, Any]:
    """Everything measured (module docstring): the document capture_judge reads."""
    if missing := missing_tools():
        raise FsbmError(f"the NFS validation needs {', '.join(missing)}", hint="`make deps` installs them")
    if options.keep_traces is not None:
        ready_to_keep(options.keep_traces)
    started = time.time()
    suite = nfs_programs(options.split)
    targets, filesystems, tables = provision_targets(settings, options.candidates, options.reuse_tables,
                                                     options.table_effort, console, TABLE_SEEDS[:options.tables])
    baseline = next(t for t in targets if t.label == f"{options.traced_on} fresh")
    capture_cost = calibrated(settings, options.capture_cost_pairs, baseline.mount, console) \
        if options.capture_cost_pairs else None
    rng = random.Random(options.seed)
    records: list[dict[str, Any]] = []

    def run_rounds(first: int, last: int) -> None:
        records.extend(interleaved_rounds(suite, targets, rng, range(first, last), options.rounds,
                                          lambda program, target: cold_job(program, target, options.scale), console))

    console.print(f"[bold]rounds[/]: {len(suite)} NFS jobs ({options.split} set) on {len(targets)} candidates")
    captured_after = options.rounds // 2
    run_rounds(0, captured_after)
    console.print(f"[bold]capturing[/] each job on {escape(baseline.label)} (tshark, loopback, port 2049)")
    with kept_or_temporary(options.keep_traces, "fsbm-validate-capture-") as directory:
        captured = []
        for program in suite:
            captured.append(_captured(program, baseline, options.scale, directory))
            dropped = captured[-1]["capture_dropped"]
            console.print(f"  {program.name}: {captured[-1]['profile']['events']:,} events in "
                          f"{captured[-1]['captured_run_s']:.2f} s"
                          + (f" [red]({dropped:,} packets dropped: the prediction misses their calls)[/]"
                             if dropped else ""))
    run_rounds(captured_after, options.rounds)
    profiles = [c["profile"] for c in captured]
    added = add_programs_cases(settings, filesystems, tables, profiles, console,
                               options.table_effort) if options.workload_cases else {}
    return {
        "schema_version": 1, "kind": "capture_validation_measurements", "started": started, "finished": time.time(),
        "machine": machine(), "traced_on": baseline.label,
        "options": {**asdict(options), "keep_traces": str(options.keep_traces) if options.keep_traces else None},
        "targets": targets_json(targets),
        "cost_table_runs": {name: [t.to_json() for t in found] for name, found in tables.items()},
        "workload_cases": added, "programs": captured, "records": records, "captured_after_round": captured_after,
        "capture_calibration": capture_cost.to_json() if capture_cost else None,
    }


@dataclass
class CaptureValidation:
    """A judged capture validation: its measurements, the judgement, and where they were stored."""

    doc: dict[str, Any]
    judged: CaptureJudged
    measurements_id: int | None  # None: judged from measurements given, not stored again


def validate_capture(settings: Any, doc: dict[str, Any] | None, options: CaptureOptions,
                     console: Console) -> CaptureValidation:
    """Measure one set of the NFS suite (or take `doc`), keep the measurements, and judge them
    by the runtime model `fsbm predict` takes for a capture; nothing is fitted on them."""
    measurements_id = None
    with settings.store() as store:
        model = stored_runtime_model(store, PLAIN_MODEL)
    if doc is None:
        if not model.validated:
            console.print("[yellow]note[/]: no runtime model is stored yet, so this run is judged with the costs' "
                          "own intervals; `fsbm validate --plain --set dev` fits the one a trace's prediction "
                          "takes, and `fsbm validate --capture --from FILE` judges the measurements kept by --json again "
                          "after it")
        doc = measure_capture(settings, options, console)
        with settings.store() as store:
            measurements_id = store.save_document("capture_validation_measurements", doc, name=options.split)
    with settings.store() as store:
        judged = judge_capture(doc, model)
        track_record.save(store, "capture", doc["options"]["split"], doc["finished"],
                          track_record.forms_of(judged.summary, FORMS))
    return CaptureValidation(doc, judged, measurements_id)

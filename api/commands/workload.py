"""`fsbm characterize`, `fsbm predict` and `fsbm report`: from a trace to a profile, a
prediction and the report a buyer reads."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.markup import escape

from fsbm.api import render
from fsbm.api.commands.common import (DISPLAY_FILTER_OPTION, NFS_PORT_OPTION, Settings, calibrate_tracing_here,
                                      candidate_names, capture_options, check_start, console, json_option,
                                      output_format_option, page_cache_bytes, profile_of, refuse_overwrite, settings_of,
                                      show, write_json, write_text)
from fsbm.errors import UsageError

if TYPE_CHECKING:
    from fsbm.documents import Prediction


def characterize_command(
    ctx: typer.Context,
    sources: list[Path] = typer.Argument(..., help="Event tables (Parquet: a file or a directory of files) or traces "
                                              "(strace logs, captures; the per-pid logs of an strace -ff run are one "
                                              "trace); several give one profile of them run together."),
    every: Optional[int] = typer.Option(None, "--every", min=1, help="Also give the statistics every N events."),
    json_out: Optional[Path] = json_option("the profile"),
    force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
    keep_going: bool = typer.Option(False, "--keep-going", help="When parsing a trace, skip bad records."),
    nfs_ports: Optional[list[int]] = NFS_PORT_OPTION,
    display_filter: Optional[str] = DISPLAY_FILTER_OPTION,
    fio_out: Optional[Path] = typer.Option(None, "--fio", help="Also write the data side as a fio job file."),
    fio_directory: str = typer.Option("/tmp/fsbm-fio", "--fio-directory", help="Where that fio job puts files."),
    synthetic_out: Optional[Path] = typer.Option(None, "--synthetic", help="Also write a synthetic workload with "
                                                 "this profile (an event table `fsbm replay` runs) here."),
    synthetic_events: int = typer.Option(20_000, "--synthetic-events", min=100, help="Calls in that workload."),
    workers: Optional[int] = typer.Option(None, "--dask-workers", min=1,
                                          help="Run on a local Dask cluster of N worker processes."),
    scheduler: Optional[str] = typer.Option(None, "--dask", metavar="ADDRESS",
                                            help="Run on the Dask cluster whose scheduler is at ADDRESS."),
    scope: Optional[str] = typer.Option(None, "--scope", metavar="DIR", help="The workload is the calls on files "
                                        "beneath DIR (default: the --scope given to `fsbm trace record`; else "
                                        "all, '/'). Calls elsewhere count as time outside."),
    output_format: str = output_format_option(),
) -> None:
    """The workload profile of a trace: Tang's table, sequentiality, runs, sizes, reuse curve."""
    from fsbm.characterizer.characterize import characterize_files
    from fsbm.pipeline import absolute_scope, events_table
    from fsbm.traces.ingest import trace_runs
    from fsbm.traces.strace import run_name

    refuse_overwrite(json_out, force)
    refuse_overwrite(fio_out, force)
    refuse_overwrite(synthetic_out, force)
    if workers and scheduler:
        raise UsageError("give --dask-workers (a local cluster) or --dask (a running one), not both")
    for source in sources:
        if not source.exists():
            raise UsageError(f"{source} does not exist")
    with ExitStack() as stack:
        client = None
        if workers or scheduler:
            from fsbm.cluster import dask_client

            client = stack.enter_context(dask_client(workers, scheduler))
        # The per-pid logs of one strace -ff run are one trace: parsed together (on the
        # cluster, if there is one), so forks carry descriptors and offsets between them.
        runs = trace_runs(sources)
        tables = [events_table(run, stack, keep_going=keep_going, capture=capture_options(nfs_ports, display_filter),
                               workers=client) for run in runs]
        names = [run_name(run) for run in runs]
        profile = characterize_files(tables, every=every, client=client, scope=absolute_scope(scope),
                                     progress=lambda line: console.print(escape(line)), names=names)
        profile.body["source"] = ", ".join(names)
    with settings_of(ctx).store() as store:
        profile_id = store.save_document("profile", profile.to_json(), name=profile.body["source"])
    show(render.profile_table(profile.to_json()), profile.to_json(), output_format)
    console.print(f"profile {profile_id} stored in {escape(str(store.path))}")
    if json_out is not None:
        write_json(json_out, profile.to_json())
    if fio_out is not None:
        from fsbm.characterizer.fio_job import fio_job

        try:
            fio_out.write_text(fio_job(profile, fio_directory))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        console.print(f"fio job written to {escape(str(fio_out))}")
    if synthetic_out is not None:
        from fsbm.characterizer.synthetic import write_synthetic

        try:
            n = write_synthetic(profile, synthetic_out, events=synthetic_events)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        console.print(f"synthetic workload of {n:,} calls written to {escape(str(synthetic_out))} "
                      f"(run it: fsbm replay {escape(str(synthetic_out))} --target DIR)")


def predict_command(
    ctx: typer.Context,
    sources: list[Path] = typer.Argument(..., help="A workload: a profile (JSON from `fsbm characterize --json`), a "
                                                   "trace (strace log, the per-pid logs of an strace -ff run, capture) "
                                                   "or an event table (Parquet)."),
    candidates: str = typer.Option(..., "--candidates", help="Cost tables by name, e.g. ext4,xfs,btrfs (see "
                                                             "`fsbm store list tables`; `fsbm bench` makes them)."),
    cache_size: Optional[str] = typer.Option(None, "--cache-size", help="Page cache of the target machine, e.g. 8G "
                                                                        "(default: memory available here now)."),
    start: str = typer.Option("cold", "--start", help="cold (nothing cached when the workload starts) or warm."),
    measured: Optional[float] = typer.Option(None, "--measured", min=0.0, help="A measured runtime (s) of the "
                                             "workload on --traced-on: adds the relative form."),
    traced_on: Optional[str] = typer.Option(None, "--traced-on", help="The candidate the workload was traced (and "
                                            "--measured) on: its costs tell the system time outside the filesystem."),
    scope: Optional[str] = typer.Option(None, "--scope", metavar="DIR", help="For a trace: see `fsbm characterize`."),
    uncalibrated: bool = typer.Option(False, "--uncalibrated", help="Ignore the stored calibration: the raw model."),
    json_out: Optional[Path] = json_option("the prediction"),
    force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
    keep_going: bool = typer.Option(False, "--keep-going", help="When parsing a trace, skip bad records."),
    output_format: str = output_format_option(),
) -> None:
    """Predict the workload's runtime on each candidate: interval, breakdown, ranking."""
    refuse_overwrite(json_out, force)
    check_start(start)
    if measured is not None and traced_on is None:
        raise UsageError("--measured needs --traced-on, the candidate it was measured on")
    doc = _prediction(settings_of(ctx), one_workload(sources), candidate_names(candidates), keep_going=keep_going,
                      scope=scope, cache_bytes=page_cache_bytes(cache_size), start=start, uncalibrated=uncalibrated,
                      measured=measured, traced_on=traced_on)
    show(render.prediction_table(doc), doc.model_dump(mode="json"), output_format, frame=doc.to_frame())
    _tell_warnings(doc)
    if output_format == "table":
        _print_outside_note(doc)
        observed = render.observed_table(doc)
        if observed is not None:
            console.print(observed)
    _tell_stale_tables(doc)
    console.print(f"prediction {doc.id} stored (its report: fsbm report {doc.id} -o report.html)")
    if json_out is not None:
        write_json(json_out, doc.model_dump(mode="json"))


def _print_outside_note(doc: "Prediction") -> None:
    """The line under a prediction's table saying what its time outside the filesystem rests on."""
    note = render.outside_note(doc)
    if note:
        console.print(escape(note))


def _tell_warnings(prediction: "Prediction") -> None:
    """The prediction's warnings (Prediction.warnings), each on a line of its own."""
    for warning in prediction.warnings:
        console.print(f"[yellow]warning: {escape(warning)}[/]")


# A cost table older than this is named beside a prediction: one from another part of the
# same day once put the demo's ratios 20% off (docs/model-evidence.md).
STALE_TABLE_HOURS = 24.0


def _tell_stale_tables(prediction: "Prediction") -> None:
    from datetime import datetime, timezone

    from fsbm.api.provision import stale_table_notes

    for note in stale_table_notes([(c.candidate, c.cost_table_measured_at) for c in prediction.candidates],
                                  datetime.now(timezone.utc), STALE_TABLE_HOURS):
        console.print(f"[dim]{escape(note)}[/]")


def one_workload(sources: list[Path]) -> Path | list[Path]:
    """The workload of a command that takes one: a file, or the per-pid logs of one strace -ff run."""
    from fsbm.traces.ingest import trace_runs
    from fsbm.traces.strace import run_name

    runs = trace_runs(sources)
    if len(runs) > 1:
        raise UsageError(f"give one workload, not {len(runs)} ({', '.join(run_name(run) for run in runs[:3])}); "
                         "`fsbm characterize` takes several traces run together")
    return runs[0] if len(runs[0]) > 1 else runs[0][0]


def _needs_tracing_calibration(settings: Settings, profile: dict[str, Any]) -> bool:
    from fsbm.pipeline import needs_tracing_calibration

    with settings.store() as store:
        return needs_tracing_calibration(store, profile)


def _prediction(settings: Settings, source: Path | list[Path], names: list[str], *, keep_going: bool,
                scope: Optional[str], cache_bytes: int, start: str, uncalibrated: bool,
                measured: Optional[float] = None, traced_on: Optional[str] = None) -> "Prediction":
    """Predict a workload (profile file, trace or event table) and keep the profile and the
    prediction in the store; the prediction, with its id."""
    from fsbm.api.prediction_service import newest_table_ids
    from fsbm.pipeline import predict
    from fsbm.traces.strace import run_name

    with settings.store() as store:
        newest_table_ids(store, names)  # a name without a table is refused before any work
    profile = profile_of(source, keep_going, scope)
    if _needs_tracing_calibration(settings, profile):
        calibrate_tracing_here(settings)
    with settings.store() as store:
        return predict(profile, names, store=store, cache_bytes=cache_bytes, start=start, uncalibrated=uncalibrated,
                       measured=measured, traced_on=traced_on, keep=True, name=run_name(source))


def report_command(
    ctx: typer.Context,
    sources: list[str] = typer.Argument(..., help="A stored prediction's id (from `fsbm predict`), or a workload as "
                                                  "`fsbm predict` takes it: with --candidates, predicted and reported; "
                                                  "without, the workload's own report."),
    output: Path = typer.Option(..., "-o", "--output", help="The HTML file to write."),
    candidates: Optional[str] = typer.Option(None, "--candidates", help="For a workload: cost tables by name."),
    cache_size: Optional[str] = typer.Option(None, "--cache-size", help="For a workload: see `fsbm predict`."),
    start: str = typer.Option("cold", "--start", help="For a workload: cold or warm."),
    scope: Optional[str] = typer.Option(None, "--scope", metavar="DIR", help="For a trace: see `fsbm characterize`."),
    uncalibrated: bool = typer.Option(False, "--uncalibrated", help="For a workload: the raw model."),
    force: bool = typer.Option(False, "--force", help="Allow replacing an existing output file."),
    keep_going: bool = typer.Option(False, "--keep-going", help="When parsing a trace, skip bad records."),
) -> None:
    """The purchase-decision report (self-contained HTML) of a prediction, or of a new one; or,
    for a workload without --candidates, a report of the workload alone."""
    from fsbm.api.report import report_for_prediction
    from fsbm.api.prediction_service import PredictionService

    refuse_overwrite(output, force)
    settings = settings_of(ctx)
    source = sources[0]
    if len(sources) == 1 and source.isdigit():
        if candidates:
            raise UsageError("--candidates applies to a workload; a stored prediction has its candidates")
        prediction_id = int(source)
    elif not candidates:  # the workload alone
        from fsbm.api.report import workload_report

        for given in sources:
            if not Path(given).exists():
                raise UsageError(f"{given} is neither a prediction id nor a file (a profile, a trace or an event "
                                 "table)")
        from fsbm.traces.strace import run_name

        workload = one_workload([Path(s) for s in sources])
        write_text(output, workload_report(profile_of(workload, keep_going, scope)))
        console.print(f"report of the workload {escape(run_name(workload))} written to {escape(str(output))} (with "
                      "--candidates: a prediction and its report)")
        return
    else:
        check_start(start)
        doc = _prediction(settings, one_workload([Path(s) for s in sources]), candidate_names(candidates),
                          keep_going=keep_going, scope=scope,
                          cache_bytes=page_cache_bytes(cache_size), start=start, uncalibrated=uncalibrated)
        console.print(render.prediction_table(doc))
        _tell_warnings(doc)
        _print_outside_note(doc)
        prediction_id = doc.id
    with settings.store() as store:
        try:
            html = report_for_prediction(PredictionService(settings.store_path), store, prediction_id)
        except LookupError as exc:
            raise UsageError(f"{exc} (see `fsbm store runs`; `fsbm predict` makes predictions)") from None
    write_text(output, html)
    console.print(f"report of prediction {prediction_id} written to {escape(str(output))}")

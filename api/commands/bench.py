"""`fsbm bench`: a filesystem's per-operation costs, measured by fsbench into a cost table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.markup import escape

from fsbm.api import render
from fsbm.api.commands.common import (Settings, console, errors, hold_freed_memory_option, json_option,
                                      measuring_memory, page_cache_bytes, profile_of, refuse_overwrite, settings_of,
                                      target_directory, write_json)
from fsbm.errors import Interrupted, UsageError
from fsbm.microbench.fsbench import FsbenchOptions, plan
from fsbm.store import ResultsStore

if TYPE_CHECKING:
    from fsbm.predictor.cost_table import CostTable


def measure(target: Path, options: FsbenchOptions, candidate: str, store: ResultsStore,
            show: bool = True) -> tuple[dict[str, Any], CostTable]:
    """fsbench with its estimate and a progress bar shown (pipeline.measure_costs)."""
    from fsbm.pipeline import measure_costs

    return measure_costs(target, options, candidate, store, console=console, show=show)


def _report_outcome(doc: dict[str, Any]) -> None:
    for failure in doc.get("errors", []):
        errors.print(f"[red]failed[/] {escape(failure['case'])}: {escape(failure['reason'])}")
    if doc.get("interrupted"):
        raise Interrupted(f"bench interrupted: what was measured is kept as run {doc['run_id']}, not as a cost table")
    if doc.get("errors"):
        errors.print(f"{len(doc['errors'])} cases failed: the run is kept as run {doc['run_id']}, not as a cost table")
        raise typer.Exit(1)


def bench(
    ctx: typer.Context,
    target: Optional[Path] = typer.Option(None, "--target", help="Directory on the filesystem to measure."),
    fs_name: Optional[str] = typer.Option(None, "--fs", help="A scratch filesystem by name (instead of --target)."),
    quick: bool = typer.Option(False, "--quick", help="Short run, under a minute per filesystem."),
    only: Optional[str] = typer.Option(None, "--only", help="meta, data, or benchmark names (see fsbench --list)."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Request sizes, e.g. 4k,d-1,d,d+1,1M."),
    orders: Optional[str] = typer.Option(None, "--orders", help="sequential,random,forward (forward: cold reads)."),
    gaps: Optional[str] = typer.Option(None, "--gaps", help="Forward reads' mean gaps, e.g. 4k,16k,64k,256k."),
    caches: Optional[str] = typer.Option(None, "--caches", help="cold,warm,direct."),
    reps: Optional[int] = typer.Option(None, "--reps", min=1, help="Repetitions per case."),
    ops: Optional[int] = typer.Option(None, "--ops", min=1, help="Data operations per repetition."),
    files: Optional[int] = typer.Option(None, "--files", min=1, help="Entries per metadata hierarchy."),
    file_size: Optional[str] = typer.Option(None, "--file-size", help="Data file size, e.g. 256M or 0.25mem."),
    case_seconds: Optional[float] = typer.Option(None, "--case-seconds", min=0.001, help="Timed budget per case."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="Seed of the random orders."),
    json_out: Optional[Path] = json_option("the results and fits"),
    force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the plan and the time estimate only."),
    for_workload: Optional[Path] = typer.Option(None, "--for", metavar="WORKLOAD", help="A profile, trace or event "
                                                "table: measure only the cases its prices reach beyond this "
                                                "candidate's cost table, at its own sizes, and add them to it."),
    hold_freed_memory: bool = hold_freed_memory_option(),
) -> None:
    """Measure per-operation costs with fsbench; results and the cost table go to the store."""
    settings = settings_of(ctx)
    directory, candidate, aging = target_directory(settings, target, fs_name)
    refuse_overwrite(json_out, force)
    if for_workload is not None:
        shaping = {"--quick": quick, "--only": only, "--sizes": sizes, "--orders": orders, "--gaps": gaps,
                   "--caches": caches, "--reps": reps, "--ops": ops, "--files": files, "--file-size": file_size,
                   "--case-seconds": case_seconds, "--seed": seed}
        given = [name for name, value in shaping.items() if value not in (None, False)]
        if given:
            raise UsageError(f"--for chooses the cases and sizes from the workload: give it without {', '.join(given)}")
        with measuring_memory(hold_freed_memory, timed=not dry_run):
            _bench_for(settings, directory, candidate, fs_name, for_workload, dry_run, json_out)
        return
    options = FsbenchOptions(quick=quick, only=only, sizes=sizes, orders=orders, gaps=gaps, caches=caches, reps=reps, ops=ops,
                             files=files, file_size=file_size, case_seconds=case_seconds, seed=seed,
                             aging_state=aging)
    if dry_run:
        cases, estimate = plan(directory, options)
        console.print("\n".join(cases))
        console.print(estimate)
        return
    with settings.store() as store, measuring_memory(hold_freed_memory):
        doc, table = measure(directory, options, candidate, store)
    for t in render.results_tables(doc):
        console.print(t)
    if table.fits:
        console.print(render.fits_table(table.fits))
    console.print(f"stored as run {doc['run_id']} (cost table '{escape(table.candidate)}') in {escape(str(store.path))}")
    if json_out is not None:
        write_json(json_out, dict(doc, cost_table=table.to_json()))
    _report_outcome(doc)


def _bench_for(settings: Settings, directory: Path, candidate: str, fs_name: Optional[str], source: Path,
               dry_run: bool, json_out: Optional[Path]) -> None:
    """`bench --for`: the workload's own cases measured and added to the candidate's table: a
    scratch filesystem's own, where the store keeps its tables under its name (`fsbm demo`
    and `fsbm validate` do), else its candidate label's."""
    from fsbm.documents import Profile
    from fsbm.microbench.mounts import mount_containing
    from fsbm.pipeline import cost_table_to_grow, measure_regime
    from fsbm.predictor.regime import unmeasured_cases

    if not candidate:
        mount = mount_containing(directory)
        candidate = mount.fstype if mount else "unknown"
    profile = Profile.of(profile_of(source, False, None))
    cache_bytes = page_cache_bytes(None)
    with settings.store() as store:
        if fs_name and store.newest_document_id("cost_table", fs_name) is not None:
            candidate = fs_name
        if dry_run:
            cases = unmeasured_cases(profile, cost_table_to_grow(store, candidate), cache_bytes)
            console.print("\n".join(f"{c.bench} {c.size} B {c.order} {c.cache}"
                                    + (f" ({render.file_sizes_text(c.file_sizes, c.request_sizes)})"
                                       if c.file_sizes or c.request_sizes else "")
                                    + render.case_files_text(c.bench, c.files)
                                    for c in cases)
                          or f"nothing: the cost table of {escape(candidate)} covers this workload")
            return
        runs, table_id = measure_regime(directory, profile, candidate, store, cache_bytes=cache_bytes,
                                        console=console, show=True)
    for doc in runs:
        for t in render.results_tables(doc):
            console.print(t)
    for skip in (s for doc in runs for s in doc.get("skipped", ())):
        errors.print(f"not measured here: {escape(skip['case'])}: {escape(skip['reason'])}; predictions price it "
                     "from the cases the table has", highlight=False)
    if table_id is None and not runs:
        console.print(f"nothing to measure: the cost table of {escape(candidate)} covers this workload's sizes")
    elif table_id is None:
        errors.print("the workload's cases were not measured: the runs are kept, the cost table is as it was")
    else:
        console.print(f"{len(runs)} fsbench run(s) added to the cost table '{escape(candidate)}', stored as "
                      f"document {table_id}")
    if json_out is not None:
        write_json(json_out, {"candidate": candidate, "cost_table_id": table_id, "runs": runs})
    for doc in runs:
        _report_outcome(doc)

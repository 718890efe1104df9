"""The `fsbm` command line.

Every command turns an FsbmError into one line on stderr and its exit code (2 for bad
arguments or input, 1 for a failure while running), never a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.console import Console
from rich.markup import escape

from fsbm import __version__
from fsbm.errors import FsbmError, Interrupted, Terminated, UsageError, raise_terminated
from fsbm.api import render
from fsbm.microbench import scratch
from fsbm.microbench.fsbench import FsbenchOptions, plan
from fsbm.predictor.cost_table import CostTable
from fsbm.store import DOCUMENT_KINDS, RUN_KINDS, ResultsStore

if TYPE_CHECKING:
    from fsbm.api.plain_validation import PlainOptions
    from fsbm.documents import Prediction

app = typer.Typer(help="fsbm: filesystem workload characterizer and runtime predictor.",
                  pretty_exceptions_enable=False, no_args_is_help=True, add_completion=False)
fs_app = typer.Typer(help="Scratch filesystems on loop images: create, list, mount, destroy.", no_args_is_help=True)
store_app = typer.Typer(help="The results store (SQLite).", no_args_is_help=True)
trace_app = typer.Typer(help="Record and parse traces (strace logs) into event tables.", no_args_is_help=True)
app.add_typer(fs_app, name="fs")
app.add_typer(trace_app, name="trace")
app.add_typer(store_app, name="store")

# Paths and trace text are printed as they are: no emoji codes (":100:" is a line number).
console = Console(emoji=False)
errors = Console(stderr=True, soft_wrap=True, emoji=False)


@dataclass
class Settings:
    store_path: Optional[Path]
    scratch_root: Optional[Path]

    def store(self) -> ResultsStore:
        return ResultsStore(self.store_path)


def _settings(ctx: typer.Context) -> Settings:
    return ctx.obj if isinstance(ctx.obj, Settings) else Settings(None, None)


def _version(value: bool) -> None:
    if value:
        console.print(f"fsbm {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    store: Optional[Path] = typer.Option(None, "--store", envvar="FSBM_STORE",
                                         help="Results store (SQLite file). Default: $FSBM_HOME/fsbm.sqlite."),
    scratch_root: Optional[Path] = typer.Option(None, "--scratch-root", envvar="FSBM_SCRATCH_ROOT",
                                                help="Where scratch filesystems live. Default: $FSBM_HOME/scratch."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    ctx.obj = Settings(store, scratch_root)


STDOUT = Path("-")


def _results_on_stdout() -> None:
    """The results are the command's standard output, so everything else it prints goes to
    standard error."""
    console.file = sys.stderr


def _json_to_stdout(value: Optional[Path]) -> Optional[Path]:
    """`--json -`: the JSON is the command's standard output (as fio's --output-format=json
    makes it)."""
    if value == STDOUT:
        _results_on_stdout()
    return value


def json_option(what: str) -> Any:
    """The --json option every command that has results shares: a file, or - for stdout."""
    return typer.Option(None, "--json", metavar="FILE|-", callback=_json_to_stdout,
                        help=f"Write {what} (JSON) to FILE, or to standard output with -.")


OUTPUT_FORMATS = ("table", "json", "csv")


def _output_to_stdout(value: str) -> str:
    """--output-format json or csv: the results are the command's standard output."""
    _one_of("--output-format", value, OUTPUT_FORMATS)
    if value != "table":
        _results_on_stdout()
    return value


def output_format_option() -> Any:
    """The --output-format option every command that prints results shares."""
    return typer.Option("table", "--output-format", callback=_output_to_stdout, metavar="table|json|csv",
                        help="Print the results as a table (for people), or as JSON or CSV on standard output (for "
                             "programs; everything else then goes to standard error).")


def _show(table: Any, document: Any, output_format: str) -> None:
    """The results in the format asked for: the table, the JSON document, or the table as CSV."""
    if output_format == "json":
        _write_json(STDOUT, document)
    elif output_format == "csv":
        import csv

        headers, rows = render.plain_cells(table)
        writer = csv.writer(sys.stdout)
        writer.writerow(headers)
        writer.writerows(rows)
    else:
        console.print(table)


def _one_of(what: str, value: Optional[str], choices: tuple[str, ...]) -> None:
    """An unknown choice is an error naming the choices, never an empty result."""
    if value is not None and value not in choices:
        raise UsageError(f"{what} {value!r} is not one of: {', '.join(choices)}")


def _refuse_overwrite(path: Optional[Path], force: bool) -> None:
    """Nothing the user had is overwritten unless they say so."""
    if path is not None and path != STDOUT and path.exists() and not force:
        raise UsageError(f"{path} exists; choose another name or pass --force")


def _write_text(path: Path, text: str) -> None:
    """Written whole or not at all: a partial file, then renamed over."""
    tmp = path.with_name(f".{path.name}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    os.replace(tmp, path)


def _write_json(path: Path, body: Any) -> None:
    text = json.dumps(body, indent=1)
    if path == STDOUT:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    else:
        _write_text(path, text)


# -- fs --------------------------------------------------------------------------------


@fs_app.command("create")
def fs_create(
    ctx: typer.Context,
    fstype: str = typer.Argument(..., help=f"One of: {', '.join(scratch.FILESYSTEMS)}."),
    size: str = typer.Option("2G", "--size", help="Image (or tmpfs) size, e.g. 512M, 2G."),
    mkfs_opts: str = typer.Option("", "--mkfs-opts", help="Extra mkfs options, e.g. '-b 1024'."),
    mount_opts: str = typer.Option("", "--mount-opts", help="Mount options, e.g. 'data=journal' or 'compress=zstd'."),
    name: Optional[str] = typer.Option(None, "--name", help="Name (default: from type and options)."),
) -> None:
    """Create, format and mount a scratch filesystem on a loop image fsbm owns."""
    created = scratch.create(fstype, scratch.parse_size(size), mkfs_opts=mkfs_opts.split(), mount_opts=mount_opts,
                             name=name, root=_settings(ctx).scratch_root)
    console.print(f"created [bold]{escape(created.name)}[/] ({escape(created.candidate)}) mounted at {escape(str(created.mount_point))}")


@fs_app.command("list")
def fs_list(ctx: typer.Context, json_out: Optional[Path] = json_option("the list"),
            force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
            output_format: str = output_format_option()) -> None:
    """List scratch filesystems and whether each is mounted."""
    _refuse_overwrite(json_out, force)
    found = scratch.list_all(_settings(ctx).scratch_root)
    listed = [dict(fs.to_json(), status=fs.status, candidate=fs.candidate) for fs in found]
    if json_out is not None:
        _write_json(json_out, listed)
    elif not found and output_format == "table":
        console.print("no scratch filesystems (create one with `fsbm fs create ext4`)")
    else:
        _show(render.scratch_table(found), listed, output_format)


@fs_app.command("mount")
def fs_mount(ctx: typer.Context, name: str) -> None:
    """Re-attach and mount a scratch filesystem (e.g. after a reboot)."""
    fs = scratch.mount(name, _settings(ctx).scratch_root)
    console.print(f"{fs.name} mounted at {fs.mount_point}")


@fs_app.command("snapshot")
def fs_snapshot(ctx: typer.Context, name: str = typer.Argument(..., help="The scratch filesystem to copy."),
                new_name: str = typer.Argument(..., help="The copy's name.")) -> None:
    """Copy a scratch filesystem (its image, frozen while copied), e.g. to start many runs from one aged state."""
    fs = scratch.snapshot(name, new_name, _settings(ctx).scratch_root)
    console.print(f"{fs.name} ({fs.fstype}, {escape(fs.aging_state)}) mounted at {escape(str(fs.mount_point))}")


@fs_app.command("destroy")
def fs_destroy(ctx: typer.Context, names: list[str] = typer.Argument(None, help="Names to destroy."),
               all_: bool = typer.Option(False, "--all", help="Destroy every scratch filesystem.")) -> None:
    """Unmount, detach and delete scratch filesystems."""
    root = _settings(ctx).scratch_root
    if all_ and names:
        raise UsageError("give names or --all, not both")
    if not all_ and not names:
        raise UsageError("name a scratch filesystem to destroy, or pass --all")
    targets = [fs.name for fs in scratch.list_all(root)] if all_ else list(names)
    if not targets:
        console.print("no scratch filesystems to destroy")
    for name in targets:
        scratch.destroy(name, root)
        console.print(f"destroyed {name}")


# -- bench -----------------------------------------------------------------------------


def _bench_target(settings: Settings, target: Optional[Path], fs_name: Optional[str]) -> tuple[Path, str, str]:
    """(directory, candidate label, aging state) for --target or --fs."""
    if (target is None) == (fs_name is None):
        raise UsageError("give exactly one of --target DIR or --fs NAME")
    if fs_name is not None:
        fs = scratch.get(fs_name, settings.scratch_root)
        if fs.status != "mounted":
            raise FsbmError(f"scratch filesystem {fs_name} is {fs.status}", hint=f"fsbm fs mount {fs_name}")
        return fs.mount_point, fs.candidate, fs.aging_state
    assert target is not None
    owner = scratch.find_by_path(target, settings.scratch_root) if target.exists() else None
    if owner is not None:
        return target, owner.candidate, owner.aging_state
    return target, "", "unknown"


def _progress(description: str, show: bool = True) -> Any:
    """A progress bar on the command's console (render.progress_bar)."""
    return render.progress_bar(console, description, show)


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


@app.command("bench")
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
) -> None:
    """Measure per-operation costs with fsbench; results and the cost table go to the store."""
    settings = _settings(ctx)
    directory, candidate, aging = _bench_target(settings, target, fs_name)
    _refuse_overwrite(json_out, force)
    if for_workload is not None:
        shaping = {"--quick": quick, "--only": only, "--sizes": sizes, "--orders": orders, "--gaps": gaps,
                   "--caches": caches, "--reps": reps, "--ops": ops, "--files": files, "--file-size": file_size,
                   "--case-seconds": case_seconds, "--seed": seed}
        given = [name for name, value in shaping.items() if value not in (None, False)]
        if given:
            raise UsageError(f"--for chooses the cases and sizes from the workload: give it without {', '.join(given)}")
        _bench_for(settings, directory, candidate, for_workload, dry_run, json_out)
        return
    options = FsbenchOptions(quick=quick, only=only, sizes=sizes, orders=orders, gaps=gaps, caches=caches, reps=reps, ops=ops,
                             files=files, file_size=file_size, case_seconds=case_seconds, seed=seed,
                             aging_state=aging)
    if dry_run:
        cases, estimate = plan(directory, options)
        console.print("\n".join(cases))
        console.print(estimate)
        return
    with settings.store() as store:
        doc, table = measure(directory, options, candidate, store)
    for t in render.results_tables(doc):
        console.print(t)
    if table.fits:
        console.print(render.fits_table(table.fits))
    console.print(f"stored as run {doc['run_id']} (cost table '{escape(table.candidate)}') in {escape(str(store.path))}")
    if json_out is not None:
        _write_json(json_out, dict(doc, cost_table=table.to_json()))
    _report_outcome(doc)


def _bench_for(settings: Settings, directory: Path, candidate: str, source: Path, dry_run: bool,
               json_out: Optional[Path]) -> None:
    """`bench --for`: the workload's own cases measured and added to the candidate's table."""
    from fsbm.documents import Profile
    from fsbm.microbench.mounts import mount_containing
    from fsbm.pipeline import cost_table_to_grow, measure_regime
    from fsbm.predictor.regime import unmeasured_cases

    if not candidate:
        mount = mount_containing(directory)
        candidate = mount.fstype if mount else "unknown"
    profile = Profile.of(_profile_of(source, False, None))
    cache_bytes = _page_cache_bytes(None)
    with settings.store() as store:
        if dry_run:
            cases = unmeasured_cases(profile, cost_table_to_grow(store, candidate), cache_bytes)
            console.print("\n".join(f"{c.bench} {c.size} B {c.order} {c.cache}" for c in cases)
                          or f"nothing: the cost table of {escape(candidate)} covers this workload")
            return
        runs, table_id = measure_regime(directory, profile, candidate, store, cache_bytes=cache_bytes,
                                        console=console, show=True)
    for doc in runs:
        for t in render.results_tables(doc):
            console.print(t)
    if table_id is None and not runs:
        console.print(f"nothing to measure: the cost table of {escape(candidate)} covers this workload's sizes")
    elif table_id is None:
        errors.print("the workload's cases were not measured: the runs are kept, the cost table is as it was")
    else:
        console.print(f"{len(runs)} fsbench run(s) added to the cost table '{escape(candidate)}', stored as "
                      f"document {table_id}")
    if json_out is not None:
        _write_json(json_out, {"candidate": candidate, "cost_table_id": table_id, "runs": runs})
    for doc in runs:
        _report_outcome(doc)


# -- trace -----------------------------------------------------------------------------


@trace_app.command("record", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def trace_record(
    ctx: typer.Context,
    output: Path = typer.Option(Path("trace.strace"), "-o", "--output", help="Where the strace log goes."),
    force: bool = typer.Option(False, "--force", help="Replace an existing log."),
    scope: Optional[Path] = typer.Option(None, "--scope", metavar="DIR", help="The directory the workload's files "
                                         "live in (on the filesystem under study); calls elsewhere count as time "
                                         "outside. Kept with the log as characterize's default --scope."),
    untraced_runs: int = typer.Option(0, "--untraced-runs", min=0, max=20, metavar="N",
                                      help="First run the command N times without tracing, to measure its CPU time "
                                           "untouched by strace (the predictor prefers it). Only for a command that "
                                           "does the same work every time: nothing is undone between runs."),
    cold: bool = typer.Option(False, "--cold", help="Drop every cache before each run (root). With --untraced-runs "
                                                    "and --scope, as many runs again read the files the program "
                                                    "used outside the scope in first, to measure the wait for them "
                                                    "(its executables, libraries), and with every file read in and "
                                                    "its syncs skipped (libeatmydata), its CPU time outside the "
                                                    "filesystem."),
    replay_in: Optional[Path] = typer.Option(None, "--replay-in", metavar="DIR",
                                             help="An empty directory on the --scope's filesystem: with --cold and "
                                                  "--untraced-runs N, the trace's calls in the scope are replayed "
                                                  "there N times, cold, to measure the CPU time they take (the "
                                                  "predictor scales fsbench's CPU prices by it); with libeatmydata "
                                                  "the command also runs N times cold with its syncs skipped, and "
                                                  "the replays skip them too."),
) -> None:
    """Run a command under strace: fsbm trace record -o LOG -- CMD [ARGS...]."""
    from fsbm.traces.record import (CALLS_CPU_BRACKETED, CALLS_CPU_FIELDS, CALLS_CPU_UNBRACKETED,
                                    MISMATCHED_SHARE_KEPT, OUTSIDE_WAIT_FIELD, UNTRACED_CALLS_CPU_SYNCS_SKIPPED,
                                    UNTRACED_NOSYNC_FIELDS, UNTRACED_WARM_SYNCS_SKIPPED, record)

    if scope is not None and not scope.is_dir():
        raise UsageError(f"--scope {scope} is not a directory")
    if cold and untraced_runs and scope is None:
        errors.print("[dim]--cold without --scope: the wait for files outside the workload is not measured[/]")
    recording = record(list(ctx.args), output, force=force, scope=scope, untraced_runs=untraced_runs, cold=cold,
                       replay_in=replay_in)
    facts = recording.facts
    wait_ns = facts.get(OUTSIDE_WAIT_FIELD)
    console.print(f"traced in {recording.wall_seconds:.2f} s (exit {recording.returncode}); log: {escape(str(output))}")
    if wait_ns is not None:
        console.print(f"cold runs wait {wait_ns / 1e6:.1f} ms for {facts['outside_files']} files outside "
                      f"{escape(str(scope))} (reading them cold takes {facts['outside_read_ns'] / 1e6:.1f} ms)")
        if not facts.get(UNTRACED_WARM_SYNCS_SKIPPED):
            errors.print("[yellow]libeatmydata is not installed: the runs' CPU time holds their syncs', which the "
                         "predictor can only estimate (install Debian's eatmydata)[/]")
    if facts.get("calls_cpu_replays_dropped"):
        errors.print(f"[yellow]{facts['calls_cpu_replays_dropped']} replays measuring the calls' CPU had more "
                     f"than {MISMATCHED_SHARE_KEPT:.1%} of their calls end otherwise than traced; they are left out[/]")
    if facts.get("calls_cpu_replays"):
        skipped = facts.get(UNTRACED_CALLS_CPU_SYNCS_SKIPPED)
        groups = ", ".join(f"{group} {facts[name] / 1e6:.1f}" for group, name in CALLS_CPU_FIELDS.items()
                           if not (skipped and group == "sync"))
        console.print(f"CPU time of its calls in the scope, replayed cold{', syncs skipped' if skipped else ''}, in "
                      f"ms: {groups} (median of {facts['calls_cpu_replays']} pairs of replays: "
                      f"{facts[f'untraced_{CALLS_CPU_UNBRACKETED}'] / 1e6:.1f} in all without brackets, shared by "
                      f"group as {facts[f'untraced_{CALLS_CPU_BRACKETED}'] / 1e6:.1f} bracketed were)")
    if UNTRACED_NOSYNC_FIELDS[0] in facts:
        with_syncs = (facts["untraced_user_cpu_ns"] + facts["untraced_system_cpu_ns"]) / 1e6
        without = (facts[UNTRACED_NOSYNC_FIELDS[0]] + facts[UNTRACED_NOSYNC_FIELDS[1]]) / 1e6
        console.print(f"CPU time of its cold runs: {with_syncs:.1f} ms, {without:.1f} ms with its syncs skipped")
    elif "calls_cpu_replays" in facts:
        errors.print("[yellow]no replay ran its calls as traced: the predictor prices the calls' CPU time[/]")
    if recording.returncode != 0:
        raise typer.Exit(recording.returncode)


@trace_app.command("calibrate")
def trace_calibrate_command(ctx: typer.Context) -> None:
    """Check how well a plain trace tells its untraced time on this machine (about half a
    minute): small programs run untraced and traced.  Until `fsbm validate --plain --set dev`
    has measured the model's own errors, these give a plain trace's intervals; `fsbm predict`
    runs this on first need."""
    _calibrate_tracing(_settings(ctx))


def _calibrate_tracing(settings: Settings) -> None:
    from fsbm.pipeline import calibrate_tracing

    console.print("[bold]calibrating[/] how well traces tell their untraced time here (strace -f -tt -T -y; "
                  "about half a minute)")
    with settings.store() as store:
        document_id, calibration = calibrate_tracing(store, progress=lambda line: console.print(f"  {escape(line)}"))
    low, high = calibration.error_band
    console.print(f"tracing calibration {document_id} stored: 90% of the programs told within "
                  f"{100 * low:+.0f}% to {100 * high:+.0f}%")


def _needs_tracing_calibration(settings: Settings, profile: dict[str, Any]) -> bool:
    from fsbm.pipeline import needs_tracing_calibration

    with settings.store() as store:
        return needs_tracing_calibration(store, profile)


NFS_PORT_OPTION = typer.Option(None, "--nfs-port", min=1, max=65535,
                               help="NFS is also served on this port (2049 always is); repeatable.")
DISPLAY_FILTER_OPTION = typer.Option(None, "--filter", help="A tshark display filter the capture's packets must also "
                                     "pass, e.g. 'ip.addr == 10.0.0.7' for one client.")


def _capture_options(nfs_ports: Optional[list[int]], display_filter: Optional[str]) -> Any:
    from fsbm.traces.nfs import CaptureOptions

    return CaptureOptions(tuple(nfs_ports or ()), display_filter or None)


@trace_app.command("parse")
def trace_parse(
    inputs: list[Path] = typer.Argument(..., help="strace logs (plain or .gz; -ff per-pid files together), "
                                                  "or NFS captures (pcap/pcapng, plain, .gz or .bz2)."),
    output: Path = typer.Option(..., "-o", "--output", help="The Parquet event table to write."),
    keep_going: bool = typer.Option(False, "--keep-going", help="Skip bad records, count them, keep the rest."),
    force: bool = typer.Option(False, "--force", help="Replace an existing output file."),
    nfs_ports: Optional[list[int]] = NFS_PORT_OPTION,
    display_filter: Optional[str] = DISPLAY_FILTER_OPTION,
) -> None:
    """Parse traces into one event table (Parquet)."""
    from fsbm.traces.ingest import ingest

    result = ingest(list(inputs), output, keep_going=keep_going, force=force,
                    capture=_capture_options(nfs_ports, display_filter))
    s = result.stats
    unit = "lines" if result.format == "strace" else "NFS frames"
    console.print(f"{result.events} events from {s.lines} {unit} ({result.format}) -> {escape(str(output))}")
    if result.format == "strace":
        console.print(f"  not file operations: {s.ignored_calls} calls; signals {s.signals}; "
                      f"interrupted and restarted {s.restarted}; unfinished at the end {s.unfinished_at_end}")
    else:
        console.print(f"  calls {s.calls}, replies {s.replies}; retransmissions counted once {s.retransmissions}; "
                      f"replies without a call {s.replies_without_call}; calls without a reply "
                      f"{s.calls_without_reply}; duplicate replies {s.duplicate_replies}; RPC frames tshark "
                      f"could not decode {s.undecodable_rpc_frames}")
    if s.bad_lines:
        errors.print(f"skipped {s.bad_lines} bad records; the first:", highlight=False)
        for message in s.first_errors:
            errors.print(f"  {message}", highlight=False, markup=False)


# -- characterize ----------------------------------------------------------------------


@app.command("characterize")
def characterize_command(
    ctx: typer.Context,
    sources: list[Path] = typer.Argument(..., help="Event tables (Parquet: a file or a directory of files) or traces "
                                              "(strace logs, captures); several give one profile of them run together."),
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

    _refuse_overwrite(json_out, force)
    _refuse_overwrite(fio_out, force)
    _refuse_overwrite(synthetic_out, force)
    if workers and scheduler:
        raise UsageError("give --dask-workers (a local cluster) or --dask (a running one), not both")
    for source in sources:
        if not source.exists():
            raise UsageError(f"{source} does not exist")
    with ExitStack() as stack:
        tables = []
        for source in sources:
            tables.append(events_table(source, stack, keep_going=keep_going,
                                       capture=_capture_options(nfs_ports, display_filter)))
        client = None
        if workers or scheduler:
            from fsbm.characterizer.scale import dask_client

            client = stack.enter_context(dask_client(workers, scheduler))
        profile = characterize_files(tables, every=every, client=client, scope=absolute_scope(scope))
        profile.body["source"] = ", ".join(str(s) for s in sources)
    with _settings(ctx).store() as store:
        profile_id = store.save_document("profile", profile.to_json(), name=profile.body["source"])
    _show(render.profile_table(profile.to_json()), profile.to_json(), output_format)
    console.print(f"profile {profile_id} stored in {escape(str(store.path))}")
    if json_out is not None:
        _write_json(json_out, profile.to_json())
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


def _profile_of(source: Path, keep_going: bool, scope: Optional[str]) -> dict[str, Any]:
    """A profile from a profile JSON file, or from a trace or event table (characterized now)."""
    from fsbm.pipeline import characterize

    return characterize(source, scope=scope, keep_going=keep_going).to_json()


def _page_cache_bytes(given: Optional[str]) -> int:
    """--cache-size, else the memory the kernel says is available now (what a page cache can grow to)."""
    from fsbm.api.prediction_service import memory_available_bytes

    return scratch.parse_size(given) if given else memory_available_bytes()


@app.command("predict")
def predict_command(
    ctx: typer.Context,
    source: Path = typer.Argument(..., help="A workload: a profile (JSON from `fsbm characterize --json`), a trace "
                                            "(strace log, capture) or an event table (Parquet)."),
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
    _refuse_overwrite(json_out, force)
    _check_start(start)
    if measured is not None and traced_on is None:
        raise UsageError("--measured needs --traced-on, the candidate it was measured on")
    doc = _prediction(_settings(ctx), source, _names(candidates), keep_going=keep_going, scope=scope,
                      cache_bytes=_page_cache_bytes(cache_size), start=start, uncalibrated=uncalibrated,
                      measured=measured, traced_on=traced_on)
    _show(render.prediction_table(doc), doc.model_dump(mode="json"), output_format)
    observed = render.observed_table(doc)
    if observed is not None and output_format == "table":
        console.print(observed)
    console.print(f"prediction {doc.id} stored (its report: fsbm report {doc.id} -o report.html)")
    if json_out is not None:
        _write_json(json_out, doc.model_dump(mode="json"))


def _check_start(start: str) -> None:
    from fsbm.predictor.model import STARTS

    if start not in STARTS:
        raise UsageError(f"--start must be one of {', '.join(STARTS)}, not {start!r}")


def _names(candidates: str) -> list[str]:
    names = [n.strip() for n in candidates.split(",") if n.strip()]
    if not names:
        raise UsageError("--candidates names no cost table")
    return names


def _prediction(settings: Settings, source: Path, names: list[str], *, keep_going: bool, scope: Optional[str],
                cache_bytes: int, start: str, uncalibrated: bool,
                measured: Optional[float] = None, traced_on: Optional[str] = None) -> "Prediction":
    """Predict a workload (profile file, trace or event table) and keep the profile and the
    prediction in the store; the prediction, with its id."""
    from fsbm.pipeline import predict

    profile = _profile_of(source, keep_going, scope)
    if _needs_tracing_calibration(settings, profile):
        _calibrate_tracing(settings)
    with settings.store() as store:
        return predict(profile, names, store=store, cache_bytes=cache_bytes, start=start, uncalibrated=uncalibrated,
                       measured=measured, traced_on=traced_on, keep=True, name=str(source))


@app.command("report")
def report_command(
    ctx: typer.Context,
    source: str = typer.Argument(..., help="A stored prediction's id (from `fsbm predict`), or a workload as "
                                           "`fsbm predict` takes it (then --candidates)."),
    output: Path = typer.Option(..., "-o", "--output", help="The HTML file to write."),
    candidates: Optional[str] = typer.Option(None, "--candidates", help="For a workload: cost tables by name."),
    cache_size: Optional[str] = typer.Option(None, "--cache-size", help="For a workload: see `fsbm predict`."),
    start: str = typer.Option("cold", "--start", help="For a workload: cold or warm."),
    scope: Optional[str] = typer.Option(None, "--scope", metavar="DIR", help="For a trace: see `fsbm characterize`."),
    uncalibrated: bool = typer.Option(False, "--uncalibrated", help="For a workload: the raw model."),
    force: bool = typer.Option(False, "--force", help="Allow replacing an existing output file."),
    keep_going: bool = typer.Option(False, "--keep-going", help="When parsing a trace, skip bad records."),
) -> None:
    """The purchase-decision report (self-contained HTML) of a prediction, or of a new one."""
    from fsbm.api.report import report_for_prediction
    from fsbm.api.prediction_service import PredictionService

    _refuse_overwrite(output, force)
    settings = _settings(ctx)
    if source.isdigit():
        if candidates:
            raise UsageError("--candidates applies to a workload; a stored prediction has its candidates")
        prediction_id = int(source)
    else:
        if not candidates:
            raise UsageError(f"{source} is not a prediction id; to predict it, give --candidates")
        _check_start(start)
        doc = _prediction(settings, Path(source), _names(candidates), keep_going=keep_going, scope=scope,
                          cache_bytes=_page_cache_bytes(cache_size), start=start, uncalibrated=uncalibrated)
        console.print(render.prediction_table(doc))
        prediction_id = doc.id
    with settings.store() as store:
        try:
            html = report_for_prediction(PredictionService(settings.store_path), store, prediction_id)
        except LookupError as exc:
            raise UsageError(f"{exc} (see `fsbm store runs`; `fsbm predict` makes predictions)") from None
    _write_text(output, html)
    console.print(f"report of prediction {prediction_id} written to {escape(str(output))}")


@app.command("serve")
def serve_command(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to listen on."),
    max_upload: str = typer.Option("1G", "--max-upload", help="Largest trace upload accepted."),
    workers: int = typer.Option(1, "--workers", min=1, max=64, help="Server processes."),
) -> None:
    """The HTTP prediction API (FastAPI): traces, jobs, profiles, predictions, filesystems, reports.

    Set FSBM_API_KEY to require that key in the X-API-Key header.  OpenAPI at /docs."""
    import uvicorn

    settings = _settings(ctx)
    limit = scratch.parse_size(max_upload)
    if settings.store_path:
        os.environ["FSBM_STORE"] = str(settings.store_path)
    os.environ["FSBM_MAX_UPLOAD"] = str(limit)
    console.print(f"fsbm API on http://{host}:{port} (docs at /docs), store {escape(str(settings.store().path))}"
                  + (", API key required" if os.environ.get("FSBM_API_KEY") else ""))
    uvicorn.run("fsbm.api.http_api:app_from_environment", factory=True, host=host, port=port, workers=workers,
                log_level="warning")


def _plain_candidates(candidates: str) -> tuple[str, ...]:
    """The disk filesystems of --candidates: a plain validation's targets are direct-I/O loop images."""
    return tuple(c.strip() for c in candidates.split(",") if c.strip() and c.strip() != "tmpfs")


def _validate_plain(settings: Settings, doc: Optional[dict[str, Any]], options: "PlainOptions",
                    doc_out: Optional[Path], json_out: Optional[Path]) -> None:
    """`fsbm validate --plain` (plain_validation.validate_plain), written and printed."""
    from fsbm.api.plain_validation import validate_plain
    from fsbm.predictor.plain_judge import markdown

    done = validate_plain(settings, doc, options, console)
    if done.measurements_id is not None:
        console.print(f"measurements stored as document {done.measurements_id}")
    if json_out is not None:
        _write_json(json_out, done.doc)
    if done.model_id is not None:
        console.print(f"the runtime model for plain traces stored as document {done.model_id}: `fsbm predict` gives "
                      "plain traces their intervals from its errors")
    out = doc_out or Path(f"docs/validation-plain-{done.doc['options']['split']}.md")
    _write_text(out, markdown(done.doc, done.judged))
    s = done.judged.summary
    for form in (form for form in ("relative", "absolute", "untimed") if form in s):
        f = s[form]
        console.print(f"{form}: median {100 * f['runtime']['median']:.1f}%, largest {100 * f['runtime']['largest']:.1f}%,"
                      f" ratios {100 * f['ratio']['median']:.1f}% / {100 * f['ratio']['largest']:.1f}%, intervals "
                      f"{f['covered']} of {f['intervals']}, pairs {f['pairs_right']} of {f['pairs']}")
    console.print(f"written to {escape(str(out))}")


@app.command("validate")
def validate_command(
    ctx: typer.Context,
    candidates: str = typer.Option("ext4,xfs,btrfs,tmpfs", "--candidates", help="Filesystem types to run on."),
    states: str = typer.Option("fresh,aged", "--states", help="fresh, aged or both (tmpfs is never aged)."),
    traced_on: str = typer.Option("ext4", "--traced-on", help="The filesystem type the programs are traced on (fresh)."),
    rounds: int = typer.Option(5, "--rounds", min=1, help="Interleaved rounds of real runs and replays."),
    scale: float = typer.Option(1.0, "--scale", min=0.05, max=4.0, help="Size of the programs' work (1: full)."),
    only: Optional[str] = typer.Option(None, "--only", help="Programs to run, e.g. untar,grep (default: all)."),
    seed: int = typer.Option(1, "--seed", min=0, help="Seed of the shuffled order."),
    fresh: bool = typer.Option(False, "--fresh", help="Remake the val-* filesystems (provisioned and aged)."),
    table_repeats: int = typer.Option(3, "--table-repeats", min=1, help="Cost-table measurements per target, spread "
                                      "over the rounds; each case is judged at their median."),
    measurements: Optional[Path] = typer.Option(None, "--from", help="Judge these stored measurements (JSON) "
                                                "instead of measuring."),
    doc_out: Optional[Path] = typer.Option(None, "--doc", help="Where the validation table goes (default: "
                                           "docs/validation-recorded-SET.md, or docs/validation-plain-SET.md with "
                                           "--plain; docs/validation.md with --overview)."),
    json_out: Optional[Path] = json_option("the measurements"),
    force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
    plain: bool = typer.Option(False, "--plain", help="Trace with plain strace (no `fsbm trace record`), on fresh "
                               "filesystems, and judge both forms as a new user meets them."),
    split: str = typer.Option("dev", "--set", help="The suite's dev or test set. The test set is held out: nothing "
                              "is tuned on it, and every run of it is reported."),
    overview: bool = typer.Option(False, "--overview", help="Measure nothing: judge the newest stored measurements "
                                  "of every validation (recorded and plain, both sets) and write them side by side."),
    reuse_tables: bool = typer.Option(False, "--reuse-tables", help="With --plain: the two newest stored cost tables "
                                      "of each val-* filesystem, on the filesystems as they are, instead of making "
                                      "them anew and measuring them again."),
    workload_cases: bool = typer.Option(True, "--workload-cases/--no-workload-cases", help="Grow each cost table "
                                        "by the cases the traced programs need at their own sizes, as `fsbm bench "
                                        "--for` does."),
) -> None:
    """Measure the predictor's error on real programs (fresh and aged filesystems) and calibrate it."""
    from fsbm.api.plain_validation import PlainOptions
    from fsbm.api.validation import ValidationOptions, markdown, split_of, validate_recorded
    from fsbm.predictor.suite import SPLITS, programs

    _refuse_overwrite(json_out, force)
    settings = _settings(ctx)
    if split not in SPLITS:
        raise UsageError(f"--set takes {' or '.join(SPLITS)}, not {split!r}")
    if overview:
        from fsbm.api.validation_overview import overview as write_overview

        with settings.store() as store:
            text = write_overview(store, _page_cache_bytes(None))
        out = doc_out or Path("docs/validation.md")
        _write_text(out, text)
        console.print(f"every validation judged again, side by side: written to {escape(str(out))}")
        return
    loaded = None
    if measurements is not None:
        try:
            loaded = json.loads(measurements.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read measurements {measurements}: {exc}") from None
    if plain or (loaded or {}).get("kind") == "plain_validation_measurements":
        _validate_plain(settings, loaded, PlainOptions(split=split, candidates=_plain_candidates(candidates),  # type: ignore[arg-type]
                                                       traced_on=traced_on, rounds=rounds, scale=scale, seed=seed,
                                                       reuse_tables=reuse_tables, workload_cases=workload_cases),
                        doc_out, json_out)
        return
    options = None
    if loaded is not None:
        if loaded.get("kind") != "validation_measurements":
            raise UsageError(f"{measurements} is not a validation measurements file")
    else:
        known = {p.name for p in programs(split=split)}  # type: ignore[arg-type]
        chosen = tuple(n.strip() for n in only.split(",")) if only else None
        unknown = sorted(set(chosen or ()) - known)
        if unknown:
            raise UsageError(f"unknown program {', '.join(unknown)}; choose from {', '.join(sorted(known))}")
        if len(chosen or known) < 2:
            raise UsageError("leave-one-program-out needs at least two programs")
        types = tuple(c.strip() for c in candidates.split(",") if c.strip())
        bad = sorted(set(types) - set(scratch.FILESYSTEMS))
        if bad:
            raise UsageError(f"unknown filesystem {', '.join(bad)}; choose from {', '.join(scratch.FILESYSTEMS)}")
        wanted_states = tuple(x.strip() for x in states.split(",") if x.strip())
        if not wanted_states or set(wanted_states) - {"fresh", "aged"}:
            raise UsageError("--states takes fresh, aged or fresh,aged")
        options = ValidationOptions(candidates=types, states=wanted_states, traced_on=traced_on, rounds=rounds,
                                    scale=scale, only=chosen, seed=seed, fresh=fresh,
                                    table_repeats=table_repeats, split=split,  # type: ignore[arg-type]
                                    workload_cases=workload_cases)
    done = validate_recorded(settings, loaded, options or ValidationOptions(), console, _page_cache_bytes(None))
    if done.measurements_id is not None:
        console.print(f"measurements stored as document {done.measurements_id}")
    if json_out is not None:
        _write_json(json_out, done.doc)
    console.print(render.validation_table(done.judged.rows, done.judged.summary))
    out = doc_out or Path(f"docs/validation-recorded-{split_of(done.doc)}.md")
    _write_text(out, markdown(done.doc, done.judged))
    if done.model_id is not None:
        console.print(f"runtime model {done.model_id} stored (fsbm predict uses it for recordings)")
    console.print(f"table written to {escape(str(out))}")


def _one_target(positional: Optional[Path], option: Optional[Path]) -> Optional[Path]:
    """TARGET may be given as an argument or as --target, not both."""
    if positional is not None and option is not None:
        raise UsageError("give the target once: as an argument or as --target")
    return positional if positional is not None else option


def _keep_report(settings: Settings, kind: str, doc: dict[str, Any], name: str, table: Any,
                 json_out: Optional[Path]) -> int:
    """A native tool's report: stored, shown with its warnings, and written to --json; its id."""
    with settings.store() as store:
        document_id = store.save_document(kind, doc, name=name)
    console.print(table)
    for warning in doc.get("warnings", []):
        errors.print(f"warning: {warning}", markup=False, highlight=False)
    console.print(f"{kind} {document_id} stored in {escape(str(store.path))}")
    if json_out is not None:
        _write_json(json_out, doc)
    return document_id


# -- probe -----------------------------------------------------------------------------


@app.command("probe")
def probe_command(
    ctx: typer.Context,
    target_arg: Optional[Path] = typer.Argument(None, metavar="[TARGET]", help="Same as --target."),
    target: Optional[Path] = typer.Option(None, "--target", help="A directory on the filesystem to probe."),
    fs_name: Optional[str] = typer.Option(None, "--fs", help="A scratch filesystem by name (instead of --target)."),
    only: Optional[str] = typer.Option(None, "--only", help="Probes to run, e.g. block-size,readahead."),
    quick: bool = typer.Option(False, "--quick", help="Smaller files: seconds, not minutes."),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help="Run in a memory cgroup of this size, "
                                                                           "e.g. 256M (the cache-size probe needs it)."),
    json_out: Optional[Path] = json_option("the results"),
    force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
) -> None:
    """Find the parameters that decide performance (block size, readahead, direct blocks, page cache)."""
    from fsbm.microbench.probe import PROBES, run_probes
    from fsbm.pipeline import add_parameters

    target = _one_target(target_arg, target)
    settings = _settings(ctx)
    _refuse_overwrite(json_out, force)
    names = [n.strip() for n in only.split(",")] if only else None
    unknown = sorted(set(names or []) - set(PROBES))
    if unknown:
        raise UsageError(f"unknown probe {', '.join(unknown)}; choose from {', '.join(PROBES)}")
    directory, candidate, aging = _bench_target(settings, target, fs_name)
    limit = scratch.parse_size(memory_limit) if memory_limit else None
    with console.status("probing"):
        doc = run_probes(directory, only=names, quick=quick, memory_limit=limit)
    doc.update(candidate=candidate, aging_state=aging)
    probe_id = _keep_report(settings, "probe", doc, candidate or str(directory), render.probe_table(doc), json_out)
    if candidate:
        with settings.store() as store:
            table_id = add_parameters(store, candidate, probe_id)
        if table_id is not None:
            console.print(f"parameters added to cost table '{escape(candidate)}' (document {table_id})")
        else:
            console.print(f"[dim]no cost table for '{escape(candidate)}' yet: `fsbm bench` will take these "
                          "parameters[/]")
    failed = [name for name, result in doc["probes"].items() if "error" in result]
    if failed:
        raise FsbmError(f"probe {', '.join(failed)} failed; the others are stored")


# -- age -------------------------------------------------------------------------------


@app.command("age")
def age_command(
    ctx: typer.Context,
    target_arg: Optional[Path] = typer.Argument(None, metavar="[TARGET]", help="Same as --target."),
    target: Optional[Path] = typer.Option(None, "--target", help="An empty directory to lay the tree down in."),
    fs_name: Optional[str] = typer.Option(None, "--fs", help="A scratch filesystem (tree in its aged/ directory); "
                                                           "its aging state is recorded."),
    rounds: int = typer.Option(10, "--rounds", min=0, max=1000, help="Rounds of delete-and-recreate (Tang: 10)."),
    files: Optional[int] = typer.Option(None, "--files", min=1, help="Files in the tree (default 1000)."),
    fill: Optional[float] = typer.Option(None, "--fill", min=1, max=98, help="Fill the filesystem to this % instead."),
    max_file: Optional[str] = typer.Option(None, "--max-file", help="Largest file, e.g. 64M."),
    seed: int = typer.Option(1, "--seed", min=0, help="The same seed ages the same way."),
    from_profile: Optional[Path] = typer.Option(None, "--from-profile", help="File sizes from a profile (JSON)."),
    listing: Optional[Path] = typer.Option(None, "--file-sizes", help="File sizes from an `ls -l` listing or "
                                                                      "lines starting with a size."),
    snapshot_name: Optional[str] = typer.Option(None, "--snapshot", help="Then copy the aged --fs image into a new "
                                                                         "scratch filesystem of this name."),
    json_out: Optional[Path] = json_option("the aging report"),
    force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
    any_fs: bool = typer.Option(False, "--fill-any-filesystem", help="Allow --fill on a filesystem that is not an "
                                                                     "fsbm scratch filesystem."),
) -> None:
    """Age a filesystem (Tang, appendix E) and measure its layout before and after (FIEMAP)."""
    from fsbm.characterizer.profile import Profile
    from fsbm.microbench.age import AgingOptions, sizes_from_listing, sizes_from_profile
    from fsbm.pipeline import age

    target = _one_target(target_arg, target)
    settings = _settings(ctx)
    _refuse_overwrite(json_out, force)
    if files and fill:
        raise UsageError("give --files or --fill, not both")
    if from_profile and listing:
        raise UsageError("give --from-profile or --sizes, not both")
    if snapshot_name and not fs_name:
        raise UsageError("--snapshot copies a scratch filesystem: give --fs NAME")
    directory, candidate, _ = _bench_target(settings, target, fs_name)
    if fill and target is not None and not any_fs and scratch.find_by_path(target, settings.scratch_root) is None:
        raise UsageError(f"--fill {fill:g} fills the whole filesystem {target} is on, and it is not an fsbm scratch "
                         "filesystem; use --fs NAME, or --fill-any-filesystem if that is what you mean")
    sizes = sizes_from_profile(Profile.load(from_profile).body, seed) if from_profile else \
        sizes_from_listing(listing) if listing else None
    options = AgingOptions(rounds=rounds, files=files, fill_pct=fill, max_file=max_file, seed=seed, sizes=sizes)
    with _progress("aging") as update:
        doc = age(directory, options, fs_name=fs_name, scratch_root=settings.scratch_root, on_progress=update)
    doc["candidate"] = candidate
    _keep_report(settings, "aging", doc, fs_name or str(directory), render.aging_table(doc), json_out)
    if doc.get("interrupted"):
        raise Interrupted(f"aging interrupted after {doc['rounds_completed']} of {doc['rounds']} rounds; the tree "
                          "is whole, what was measured is stored, and the filesystem is labelled partly aged")
    if snapshot_name:
        copy = scratch.snapshot(fs_name, snapshot_name, settings.scratch_root)
        console.print(f"snapshot {copy.name} mounted at {escape(str(copy.mount_point))} ({escape(copy.aging_state)})")


# -- replay ----------------------------------------------------------------------------


@app.command("replay")
def replay_command(
    ctx: typer.Context,
    source: Path = typer.Argument(..., help="A trace (strace log, capture) or an event table (Parquet)."),
    target: Optional[Path] = typer.Option(None, "--target", help="An empty directory to replay beneath."),
    fs_name: Optional[str] = typer.Option(None, "--fs", help="A scratch filesystem by name (instead of --target)."),
    mode: str = typer.Option("serial", "--mode", help="serial (Tang), threads (per actor, ARTC order) or timed."),
    cold: bool = typer.Option(False, "--cold", help="Drop caches after building the tree."),
    plan_out: Optional[Path] = typer.Option(None, "--plan", help="Also keep the replay plan here."),
    json_out: Optional[Path] = json_option("the replay report"),
    force: bool = typer.Option(False, "--force", help="Allow --json and --plan to replace existing files."),
    keep_going: bool = typer.Option(False, "--keep-going", help="When parsing a trace, skip bad records."),
    keep_tree: bool = typer.Option(False, "--keep-tree", help="With --fs: keep the directory the replay made "
                                   "(default: removed after it)."),
) -> None:
    """Replay a trace for real beneath a directory: runtime, latencies, errors against the trace.

    With --fs, the replay runs in a fresh directory on the scratch filesystem (fsbm-replay-*),
    removed afterwards unless --keep-tree; with --target, beneath that empty directory."""
    import shutil
    import tempfile

    from fsbm.pipeline import check_replay, replay

    check_replay(source, mode)
    _refuse_overwrite(json_out, force)
    _refuse_overwrite(plan_out, force)
    settings = _settings(ctx)
    directory, candidate, aging = _bench_target(settings, target, fs_name)

    def show_plan(stats: Any) -> None:
        console.print(f"[dim]plan: {stats.operations:,} operations by {stats.actors} actors; tree "
                      f"{stats.tree_directories:,} directories, {stats.tree_files:,} files "
                      f"({stats.tree_bytes / 2**20:.1f} MiB); left out: "
                      f"{', '.join(f'{n:,} {why}' for why, n in stats.skipped.items()) or 'nothing'}[/]")

    with ExitStack() as stack:
        if fs_name is not None:  # never the mount's root: a directory of its own, each time
            directory = Path(tempfile.mkdtemp(prefix="fsbm-replay-", dir=directory))
            if keep_tree:
                console.print(f"[dim]replaying in {escape(str(directory))} (kept)[/]")
            else:
                stack.callback(shutil.rmtree, directory, True)
        with _progress(f"replaying ({mode})") as advance:
            doc = replay(source, directory, mode=mode, cold=cold, keep_going=keep_going, plan_out=plan_out,
                         on_plan=show_plan, on_progress=advance)
    doc.update(candidate=candidate, aging_state=aging)
    _keep_report(settings, "replay", doc, str(source), render.replay_table(doc), json_out)
    if doc.get("interrupted"):
        raise Interrupted(f"replay interrupted after {doc['operations_run']:,} of {doc['planned_operations']:,} "
                        "operations; what ran is stored")


# -- store -----------------------------------------------------------------------------


@store_app.command("info")
def store_info(ctx: typer.Context) -> None:
    """Where the store is, its schema version and what it holds."""
    with _settings(ctx).store() as store:
        console.print(f"store: {store.path}\nschema version: {store.schema_version}\njournal: {store.journal_mode}")
        for table, count in store.counts().items():
            console.print(f"{table}: {count}")


@store_app.command("runs")
def store_runs(ctx: typer.Context,
               kind: Optional[str] = typer.Option(None, "--kind",
                                                  help=f"Only runs of this kind: {', '.join(RUN_KINDS)}."),
               limit: int = typer.Option(50, "--limit", min=1),
               output_format: str = output_format_option()) -> None:
    """List recent runs."""
    _one_of("--kind", kind, RUN_KINDS)
    with _settings(ctx).store() as store:
        runs = store.runs(kind, limit)
    _show(render.runs_table(runs), [dataclasses.asdict(r) for r in runs], output_format)


@store_app.command("list")
def store_list(ctx: typer.Context,
               kind: str = typer.Argument(..., help=f"What to list: {', '.join(DOCUMENT_KINDS)}."),
               limit: int = typer.Option(50, "--limit", min=1),
               json_out: Optional[Path] = json_option("the list"),
               force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
               output_format: str = output_format_option()) -> None:
    """List stored documents of one kind (newest first): tables, profiles, predictions, ..."""
    _one_of("KIND", kind, tuple(DOCUMENT_KINDS))
    _refuse_overwrite(json_out, force)
    with _settings(ctx).store() as store:
        records = store.document_records(DOCUMENT_KINDS[kind], limit)
    listed = [dataclasses.asdict(r) for r in records]
    if json_out is not None:
        _write_json(json_out, listed)
    else:
        _show(render.documents_table(records, f"{kind} in the results store"), listed, output_format)


@store_app.command("export")
def store_export(ctx: typer.Context, document_id: int = typer.Argument(..., help="The document's id (store list)."),
                 output: Path = typer.Option(..., "-o", "--output", callback=_json_to_stdout,
                                             help="The file to write, or - for stdout."),
                 force: bool = typer.Option(False, "--force", help="Replace an existing file.")) -> None:
    """Write one stored document (a cost table, a profile, ...) to a file another store can import."""
    _refuse_overwrite(output, force)
    with _settings(ctx).store() as store:
        doc = store.export_document(document_id)
    if doc is None:
        raise UsageError(f"no stored document {document_id} (`fsbm store list tables` lists cost tables)")
    _write_json(output, doc)
    console.print(f"{doc['kind']} {document_id} written to {escape(str(output))}")


@store_app.command("import")
def store_import(ctx: typer.Context, source: Path = typer.Argument(..., help="A file of `fsbm store export`."),
                 name: Optional[str] = typer.Option(None, "--as", help="Store it under this name (default: its "
                                                    "name, suffixed with @ and the machine it came from).")) -> None:
    """Keep a document another store exported (a cost table measured on another machine, say)."""
    from fsbm.api.exchange import check_import

    doc = check_import(source)
    stored_name = name or doc.stored_name
    with _settings(ctx).store() as store:
        document_id = store.save_document(doc.kind, doc.body, name=stored_name)
    console.print(f"{doc.kind} stored as {document_id}, named {escape(stored_name or '')}")


@app.command("compare")
def compare(ctx: typer.Context,
            a: str = typer.Argument(..., help="A cost table or profile: a JSON file, a stored id, or a stored name."),
            b: str = typer.Argument(..., help="The other, of the same kind."),
            json_out: Optional[Path] = json_option("the comparison"),
            force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
            output_format: str = output_format_option()) -> None:
    """Two cost tables, or two workload profiles, side by side (like darshan-diff)."""
    from fsbm.api.compare import compare_profiles, compare_tables, geometric_mean_ratio, resolve

    _refuse_overwrite(json_out, force)
    with _settings(ctx).store() as store:
        left, right = resolve(store, a), resolve(store, b)
    if left.kind != right.kind:
        raise UsageError(f"{a} is a {left.kind} and {b} a {right.kind}; compare two of the same kind")
    if left.kind == "cost_table":
        rows = compare_tables(CostTable.from_json(left.body, left.label), CostTable.from_json(right.body, right.label))
        overall = geometric_mean_ratio(rows)
        shown = render.cost_table_comparison(rows, left.label, right.label, overall)
        result: dict[str, Any] = {"kind": "cost_table_comparison", "a": left.label, "b": right.label,
                                  "b_over_a_geometric_mean": overall,
                                  "cases": [dict(dataclasses.asdict(r), b_over_a=r.ratio) for r in rows]}
    else:
        statistics = compare_profiles(left.body, right.body)
        shown = render.profile_comparison(statistics, left.body, right.body, left.label, right.label)
        result = {"kind": "profile_comparison", "a": left.label, "b": right.label,
                  "statistics": [dataclasses.asdict(s) for s in statistics]}
    _show(shown, result, output_format)
    if json_out is not None:
        _write_json(json_out, result)


# -- demo ------------------------------------------------------------------------------

DEMO_FILESYSTEMS = ("ext4", "xfs", "btrfs", "tmpfs")


@app.command("demo")
def demo(ctx: typer.Context, size: str = typer.Option("1G", "--size", help="Size of each scratch filesystem."),
         rounds: int = typer.Option(5, "--rounds", min=1, max=20, help="Cold rounds of real runs and replays."),
         candidates: str = typer.Option(",".join(DEMO_FILESYSTEMS), "--candidates",
                                        help="Filesystem types to compare (the first is traced on).")) -> None:
    """The main job on embedded defaults: scratch ext4, xfs, btrfs and tmpfs measured; a real program
    recorded, characterized and predicted on each; replayed and run on each; the verdict and the report."""
    from fsbm.api.demo import run_demo

    types = tuple(_names(candidates))
    bad = sorted(set(types) - set(scratch.FILESYSTEMS))
    if bad:
        raise UsageError(f"unknown filesystem {', '.join(bad)}; choose from {', '.join(scratch.FILESYSTEMS)}")
    run_demo(_settings(ctx), console, types, scratch.parse_size(size), rounds=rounds)


def main() -> None:
    """Entry point: run the app; FsbmError becomes one line and an exit code."""
    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        app()
    except FsbmError as exc:
        errors.print(f"[red]fsbm: error:[/] {escape(exc.message)}", highlight=False)
        if exc.hint:
            errors.print(f"  hint: {escape(exc.hint)}", highlight=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        errors.print("fsbm: interrupted")
        sys.exit(130)
    except Terminated as exc:
        errors.print(f"fsbm: {exc}")
        sys.exit(128 + exc.signum)
    except Exception as exc:  # a bug in fsbm: one line for the user, the details in a file
        log = _save_traceback()
        errors.print(f"fsbm: internal error: {type(exc).__name__}: {exc}", highlight=False, markup=False)
        errors.print(f"  this is a bug in fsbm; the traceback is in {log}", highlight=False, markup=False)
        sys.exit(70)


def _save_traceback() -> Path:
    import tempfile
    import traceback

    from fsbm.locations import data_dir

    try:
        directory = data_dir()
    except OSError:
        directory = Path(tempfile.gettempdir())
    log = directory / "last-error.log"
    log.write_text(traceback.format_exc())
    return log


if __name__ == "__main__":
    main()

"""The `fsbm` command line: its shape.  Each command lives, with its arguments and what it
prints, in a module of api/commands by what it works on; this module puts them together and
runs them.

Every command turns an FsbmError into one line on stderr and its exit code (2 for bad
arguments or input, 1 for a failure while running), never a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from fsbm import __version__
from fsbm.api.commands import bench, native_tools, store, validate, workload
from fsbm.api.commands.common import (Settings, candidate_names, console, errors, hold_freed_memory_option,
                                      measuring_memory, settings_of, table_case_seconds_option, table_reps_option)
from fsbm.api.commands.filesystems import fs_app
from fsbm.api.commands.store import store_app
from fsbm.api.commands.tracing import trace_app
from fsbm.errors import FsbmError, Terminated, UsageError, raise_terminated
from fsbm.microbench import scratch

app = typer.Typer(help="fsbm: filesystem workload characterizer and runtime predictor.",
                  pretty_exceptions_enable=False, no_args_is_help=True, add_completion=False)
app.add_typer(fs_app, name="fs")
app.add_typer(trace_app, name="trace")
app.add_typer(store_app, name="store")
app.command("bench")(bench.bench)
app.command("characterize")(workload.characterize_command)
app.command("predict")(workload.predict_command)
app.command("report")(workload.report_command)
app.command("validate")(validate.validate_command)
app.command("probe")(native_tools.probe_command)
app.command("age")(native_tools.age_command)
app.command("replay")(native_tools.replay_command)
app.command("compare")(store.compare)


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


APP_FACTORY = "fsbm.api.http_api:app_from_environment"


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

    settings = settings_of(ctx)
    limit = scratch.parse_size(max_upload)
    if settings.store_path:
        os.environ["FSBM_STORE"] = str(settings.store_path)
    os.environ["FSBM_MAX_UPLOAD"] = str(limit)
    console.print(f"fsbm API on http://{host}:{port} (docs at /docs), store {escape(str(settings.store().path))}"
                  + (", API key required" if os.environ.get("FSBM_API_KEY") else ""))
    if workers == 1:
        uvicorn.run(APP_FACTORY, factory=True, host=host, port=port, log_level="warning")
    else:  # a listening socket each, so connections are spread over the processes (server_workers.py)
        from fsbm.api.server_workers import serve

        serve(APP_FACTORY, host, port, workers)


DEMO_FILESYSTEMS = ("ext4", "xfs", "btrfs", "tmpfs")
# How old a stored cost table the demo prices with may be: it judges its prediction against
# runs it makes now, the host's disk drifts over hours, and tables from the morning once put
# its ratios 20% off in the evening.
DEMO_TABLE_MAX_AGE_HOURS = 6.0


@app.command("demo")
def demo(ctx: typer.Context, size: str = typer.Option("1G", "--size", help="Size of each scratch filesystem."),
         rounds: int = typer.Option(5, "--rounds", min=1, max=20, help="Cold rounds of real runs and replays."),
         candidates: str = typer.Option(",".join(DEMO_FILESYSTEMS), "--candidates",
                                        help="Filesystem types to compare (the first is traced on)."),
         table_max_age: float = typer.Option(DEMO_TABLE_MAX_AGE_HOURS, "--table-max-age", min=0.0,
                                             help="Hours a stored cost table is reused before it is measured "
                                                  "again."),
         table_reps: Optional[int] = table_reps_option(),
         table_case_seconds: Optional[float] = table_case_seconds_option(),
         hold_freed_memory: bool = hold_freed_memory_option()) -> None:
    """The main job on embedded defaults: scratch ext4, xfs, btrfs and tmpfs measured; a real program
    recorded, characterized and predicted on each; replayed and run on each; the verdict and the report."""
    from fsbm.api.demo import run_demo
    from fsbm.microbench.fsbench import TableEffort

    types = tuple(candidate_names(candidates))
    bad = sorted(set(types) - set(scratch.FILESYSTEMS))
    if bad:
        raise UsageError(f"unknown filesystem {', '.join(bad)}; choose from {', '.join(scratch.FILESYSTEMS)}")
    with measuring_memory(hold_freed_memory):
        run_demo(settings_of(ctx), console, types, scratch.parse_size(size), table_max_age_hours=table_max_age,
                 rounds=rounds, effort=TableEffort(table_reps, table_case_seconds))


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

"""What every command shares: the consoles, the settings, the output options, writing files
whole, and the helpers several commands call."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.markup import escape

from fsbm.api import render
from fsbm.errors import FsbmError, UsageError
from fsbm.microbench import freed_memory, scratch
from fsbm.store import ResultsStore
from fsbm.written import written_whole


# Paths and trace text are printed as they are: no emoji codes (":100:" is a line number).
console = Console(emoji=False)
errors = Console(stderr=True, soft_wrap=True, emoji=False)


@dataclass
class Settings:
    store_path: Optional[Path]
    scratch_root: Optional[Path]

    def store(self) -> ResultsStore:
        return ResultsStore(self.store_path)


def settings_of(ctx: typer.Context) -> Settings:
    return ctx.obj if isinstance(ctx.obj, Settings) else Settings(None, None)


STDOUT = Path("-")


def results_on_stdout() -> None:
    """The results are the command's standard output, so everything else it prints goes to
    standard error."""
    console.file = sys.stderr


def json_to_stdout(value: Optional[Path]) -> Optional[Path]:
    """`--json -`: the JSON is the command's standard output (as fio's --output-format=json
    makes it)."""
    if value == STDOUT:
        results_on_stdout()
    return value


def json_option(what: str) -> Any:
    """The --json option every command that has results shares: a file, or - for stdout."""
    return typer.Option(None, "--json", metavar="FILE|-", callback=json_to_stdout,
                        help=f"Write {what} (JSON) to FILE, or to standard output with -.")


def table_reps_option() -> Any:
    """--table-reps, shared by the commands that measure quick cost tables themselves."""
    return typer.Option(None, "--table-reps", min=1, help="Repetitions of each case in every quick cost table "
                        "measured (fsbench --reps; default: quick's), and at most this many of each of the "
                        "workloads' own cases. Fewer: a faster table, a less precise one.")


def table_case_seconds_option() -> Any:
    """--table-case-seconds, beside --table-reps."""
    return typer.Option(None, "--table-case-seconds", min=0.001, help="Timed budget of each case in every quick "
                        "cost table measured (fsbench --case-seconds; default: quick's), and at most this of each "
                        "of the workloads' own cases.")


def hold_freed_memory_option() -> Any:
    """--hold-freed-memory, shared by the commands that time runs and cost tables."""
    return typer.Option(False, "--hold-freed-memory", help="On a virtual machine that hands memory it frees back "
                        "to its host (virtio-balloon free page reporting), keep it from the host while measuring and "
                        "set the kernel's setting back after: a run then does not pay the host's page faults for "
                        "memory a pause let go (microbench/freed_memory.py). Changes a setting of the whole machine.")


@contextmanager
def measuring_memory(hold: bool, timed: bool = True) -> Iterator[None]:
    """The block measures with memory freed in it kept from the host where `hold`; otherwise,
    once it has measured, it says where this machine reports freed memory that the timings
    depend on it.  A block that times nothing (`timed` false) is left alone."""
    if not timed:
        yield
        return
    if hold:
        with freed_memory.held():
            console.print(f"[dim]freed memory is kept from the host while measuring "
                          f"(page_reporting min_free_ms {freed_memory.HOLD_MS} until the end)[/]")
            yield
        return
    yield
    if freed_memory.state() == freed_memory.REPORTED:
        errors.print("note: this machine hands the memory it frees back to its host, and a run that needs more than "
                     "the last few seconds freed pays the host's page faults (3-8 us per 4 KiB here): timings move with "
                     "what ran before them. --hold-freed-memory keeps it while measuring.")


OUTPUT_FORMATS = ("table", "json", "csv")


def output_to_stdout(value: str) -> str:
    """--output-format json or csv: the results are the command's standard output."""
    one_of("--output-format", value, OUTPUT_FORMATS)
    if value != "table":
        results_on_stdout()
    return value


def output_format_option() -> Any:
    """The --output-format option every command that prints results shares."""
    return typer.Option("table", "--output-format", callback=output_to_stdout, metavar="table|json|csv",
                        help="Print the results as a table (for people), or as JSON or CSV on standard output (for "
                             "programs; everything else then goes to standard error).")


def show(table: Any, document: Any, output_format: str, frame: Any = None) -> None:
    """The results in the format asked for: the table, the JSON document, or CSV: of `frame`
    (a pandas DataFrame of numbers in SI units, for a program to read) where the command has
    one, else of the table's cells as they are printed."""
    if output_format == "json":
        write_json(STDOUT, document)
    elif output_format == "csv" and frame is not None:
        frame.to_csv(sys.stdout)
    elif output_format == "csv":
        import csv

        headers, rows = render.plain_cells(table)
        writer = csv.writer(sys.stdout)
        writer.writerow(headers)
        writer.writerows(rows)
    else:
        console.print(table)


def one_of(what: str, value: Optional[str], choices: tuple[str, ...]) -> None:
    """An unknown choice is an error naming the choices, never an empty result."""
    if value is not None and value not in choices:
        raise UsageError(f"{what} {value!r} is not one of: {', '.join(choices)}")


def refuse_overwrite(path: Optional[Path], force: bool) -> None:
    """Nothing the user had is overwritten unless they say so."""
    if path is not None and path != STDOUT and path.exists() and not force:
        raise UsageError(f"{path} exists; choose another name or pass --force")


def write_text(path: Path, text: str) -> None:
    """Written whole or not at all (written_whole)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with written_whole(path) as partial:
            partial.write_text(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def write_json(path: Path, body: Any) -> None:
    text = json.dumps(body, indent=1)
    if path == STDOUT:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    else:
        write_text(path, text)


def target_directory(settings: Settings, target: Optional[Path], fs_name: Optional[str]) -> tuple[Path, str, str]:
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


def progress_bar(description: str, show: bool = True) -> Any:
    """A progress bar on the command's console (render.progress_bar)."""
    return render.progress_bar(console, description, show)


def profile_of(source: Path | list[Path], keep_going: bool, scope: Optional[str]) -> dict[str, Any]:
    """A profile from a profile JSON file, or from a trace or event table (characterized now)."""
    from fsbm.pipeline import characterize

    return characterize(source, scope=scope, keep_going=keep_going).to_json()


def page_cache_bytes(given: Optional[str]) -> int:
    """--cache-size, else the memory the kernel says is available now (what a page cache can grow to)."""
    from fsbm.host import memory_available_bytes

    return scratch.parse_size(given) if given else memory_available_bytes()


def check_start(start: str) -> None:
    from fsbm.predictor.model import STARTS

    if start not in STARTS:
        raise UsageError(f"--start must be one of {', '.join(STARTS)}, not {start!r}")


def candidate_names(candidates: str) -> list[str]:
    names = [n.strip() for n in candidates.split(",") if n.strip()]
    if not names:
        raise UsageError("--candidates names no cost table")
    return names


def calibrate_capture_here(settings: Settings, share_in: Path | None = None) -> None:
    """Measure what capturing costs a job here and keep it, saying so (capture_validation.calibrated)."""
    from fsbm.api.capture_validation import calibrated
    from fsbm.microbench.capture_cost import PAIRS
    from fsbm.microbench.nfs_server import missing_tools

    if missing := missing_tools():
        raise UsageError(f"measuring what capturing costs needs {', '.join(missing)}", hint="`make deps` installs them")
    calibrated(settings, PAIRS, share_in, console)


def calibrate_tracing_here(settings: Settings, quick: bool = False, cold_start: bool = False) -> None:
    from fsbm.pipeline import calibrate_tracing

    console.print("[bold]calibrating[/] how well traces tell their untraced time here (strace -f -tt -T -y; "
                  f"{'about a quarter of a minute, quick' if quick else 'about half a minute'}"
                  f"{', and cold starts, dropping the caches' if cold_start else ''})")
    with settings.store() as store:
        document_id, calibration = calibrate_tracing(store, progress=lambda line: console.print(f"  {escape(line)}"),
                                                     quick=quick, cold_start=cold_start)
    (low, high), (untimed_low, untimed_high) = calibration.error_band, calibration.untimed_error_band
    console.print(f"tracing calibration {document_id} stored: 90% of the programs told within "
                  f"{100 * low:+.0f}% to {100 * high:+.0f}%, and from logs without -T within "
                  f"{100 * untimed_low:+.0f}% to {100 * untimed_high:+.0f}%")
    if calibration.uneven_warning:
        console.print(f"[yellow]warning: {escape(calibration.uneven_warning)}[/]")
    if calibration.cold_start:
        start_low, start_high = calibration.cold_start.band
        console.print(f"a cold prediction from a plain trace adds {1e3 * calibration.cold_start.seconds:.1f} ms "
                      f"({1e3 * start_low:.1f}-{1e3 * start_high:.1f}) of cold start no trace holds")


NFS_PORT_OPTION = typer.Option(None, "--nfs-port", min=1, max=65535,
                               help="NFS is also served on this port (2049 always is); repeatable.")


DISPLAY_FILTER_OPTION = typer.Option(None, "--filter", help="A tshark display filter the capture's packets must also "
                                     "pass, e.g. 'ip.addr == 10.0.0.7' for one client.")


def capture_options(nfs_ports: Optional[list[int]], display_filter: Optional[str]) -> Any:
    from fsbm.traces.nfs import CaptureOptions

    return CaptureOptions(tuple(nfs_ports or ()), display_filter or None)

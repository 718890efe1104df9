"""`fsbm trace`: record a program under strace, calibrate what tracing costs here, parse traces."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from fsbm.api.commands.common import (DISPLAY_FILTER_OPTION, NFS_PORT_OPTION, calibrate_capture_here,
                                      calibrate_tracing_here, capture_options,
                                      console, errors, hold_freed_memory_option, measuring_memory, settings_of)
from fsbm.errors import UsageError


trace_app = typer.Typer(help="Record and parse traces (strace logs) into event tables.", no_args_is_help=True)


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
    hold_freed_memory: bool = hold_freed_memory_option(),
) -> None:
    """Run a command under strace: fsbm trace record -o LOG -- CMD [ARGS...]."""
    from fsbm.traces.record import (CALLS_CPU_BRACKETED, CALLS_CPU_FIELDS, CALLS_CPU_UNBRACKETED,
                                    MISMATCHED_SHARE_KEPT, OUTSIDE_WAIT_FIELD, UNTRACED_CALLS_CPU_SYNCS_SKIPPED,
                                    UNTRACED_NOSYNC_FIELDS, UNTRACED_WARM_SYNCS_SKIPPED, record)

    if scope is not None and not scope.is_dir():
        raise UsageError(f"--scope {scope} is not a directory")
    if cold and untraced_runs and scope is None:
        errors.print("[dim]--cold without --scope: the wait for files outside the workload is not measured[/]")
    with measuring_memory(hold_freed_memory, timed=untraced_runs > 0):
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
def trace_calibrate_command(ctx: typer.Context,
                            quick: bool = typer.Option(False, "--quick", help="Fewer runs of each program (3 untraced, "
                                                       "1 traced, where 5 and 3 is the default): about half the "
                                                       "time, from noisier runs."),
                            cold_start: bool = typer.Option(False, "--cold-start", help="Also measure the part of a "
                                                            "cold job's start that no plain trace holds (strace loads "
                                                            "the program before the trace begins), which cold "
                                                            "predictions from plain traces add.  Drops every cache of "
                                                            "the machine between runs: root only."),
                            capture: bool = typer.Option(False, "--capture", help="Instead, measure what capturing "
                                                         "NFS traffic (tshark) costs a job whose client and server "
                                                         "share this host: transfers over the loopback, captured and "
                                                         "not, in pairs, and small client jobs run cold and "
                                                         "captured (about half a minute; root, NFS-Ganesha). The "
                                                         "band of a prediction from such a capture allows for the "
                                                         "cost; a cold one adds the client's start no capture holds."),
                            share_in: Optional[Path] = typer.Option(None, "--share-in", metavar="DIR",
                                                                    help="With --capture: the share goes in a new "
                                                                    "directory here, on the filesystem the captured "
                                                                    "server exported, and every transfer runs cold "
                                                                    "(default: in memory, warm).")) -> None:
    """Check how well a plain trace tells its untraced time on this machine (about half a
    minute): small programs run untraced and traced.  Until `fsbm validate --plain --set dev`
    has measured the model's own errors, these give a plain trace's intervals; `fsbm predict`
    runs this on first need.  With --capture, what capturing NFS traffic costs here instead."""
    if share_in is not None and not (capture and share_in.is_dir()):
        raise UsageError("--share-in takes an existing directory, with --capture")
    if capture:
        calibrate_capture_here(settings_of(ctx), share_in=share_in)
        return
    calibrate_tracing_here(settings_of(ctx), quick=quick, cold_start=cold_start)


@trace_app.command("parse")
def trace_parse(
    inputs: list[Path] = typer.Argument(..., help="strace logs (plain or .gz; -ff per-pid files together), "
                                                  "or NFS captures (pcap/pcapng, plain, .gz or .bz2)."),
    output: Path = typer.Option(..., "-o", "--output", help="The Parquet event table to write."),
    keep_going: bool = typer.Option(False, "--keep-going", help="Skip bad records, count them, keep the rest."),
    force: bool = typer.Option(False, "--force", help="Replace an existing output file."),
    nfs_ports: Optional[list[int]] = NFS_PORT_OPTION,
    display_filter: Optional[str] = DISPLAY_FILTER_OPTION,
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Parse strace -ff logs a process group "
                                       "at a time, or a capture in parts, on N threads here."),
    cut: str = typer.Option("time", "--cut", help="How a capture parsed in parallel is cut: 'time' (slices of it, "
                            "each connection moved on between two RPC records) or 'connection' (each "
                            "connection whole in one part)."),
    dask_workers: Optional[int] = typer.Option(None, "--dask-workers", min=1, help="... on a local Dask cluster "
                                               "of N worker processes."),
    scheduler: Optional[str] = typer.Option(None, "--dask", metavar="ADDRESS", help="... on the Dask cluster whose "
                                            "scheduler is at ADDRESS (its workers see the logs at the same paths)."),
) -> None:
    """Parse traces into one event table (Parquet)."""
    from fsbm.cluster import workers_of
    from fsbm.traces.ingest import ingest, trace_runs

    with workers_of(jobs, dask_workers, scheduler) as workers:
        result = ingest(list(inputs), output, keep_going=keep_going, force=force,
                        capture=capture_options(nfs_ports, display_filter), workers=workers, capture_cut=cut)
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
    if workers is not None and not (result.format == "pcap" or
                                    (result.format == "strace" and len(trace_runs(list(inputs))[0]) > 1)):
        console.print("[dim]parsed in this process: the per-pid logs of an strace -ff run and captures parse in "
                      "parallel, other traces do not[/dim]")
    if s.bad_lines:
        errors.print(f"skipped {s.bad_lines} bad records; the first:", highlight=False)
        for message in s.first_errors:
            errors.print(f"  {message}", highlight=False, markup=False)

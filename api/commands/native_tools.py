"""`fsbm probe`, `fsbm age` and `fsbm replay`: the native tools, their reports stored."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape

from fsbm.api import render
from fsbm.api.commands.common import (Settings, console, errors, json_option, progress_bar, refuse_overwrite,
                                      settings_of, target_directory, write_json)
from fsbm.errors import FsbmError, Interrupted, UsageError
from fsbm.microbench import scratch


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
        write_json(json_out, doc)
    return document_id


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
    settings = settings_of(ctx)
    refuse_overwrite(json_out, force)
    names = [n.strip() for n in only.split(",")] if only else None
    unknown = sorted(set(names or []) - set(PROBES))
    if unknown:
        raise UsageError(f"unknown probe {', '.join(unknown)}; choose from {', '.join(PROBES)}")
    directory, candidate, aging = target_directory(settings, target, fs_name)
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
    settings = settings_of(ctx)
    refuse_overwrite(json_out, force)
    if files and fill:
        raise UsageError("give --files or --fill, not both")
    if from_profile and listing:
        raise UsageError("give --from-profile or --sizes, not both")
    if snapshot_name and not fs_name:
        raise UsageError("--snapshot copies a scratch filesystem: give --fs NAME")
    directory, candidate, _ = target_directory(settings, target, fs_name)
    if fill and target is not None and not any_fs and scratch.find_by_path(target, settings.scratch_root) is None:
        raise UsageError(f"--fill {fill:g} fills the whole filesystem {target} is on, and it is not an fsbm scratch "
                         "filesystem; use --fs NAME, or --fill-any-filesystem if that is what you mean")
    sizes = sizes_from_profile(Profile.load(from_profile).body, seed) if from_profile else \
        sizes_from_listing(listing) if listing else None
    options = AgingOptions(rounds=rounds, files=files, fill_pct=fill, max_file=max_file, seed=seed, sizes=sizes)
    with progress_bar("aging") as update:
        doc = age(directory, options, fs_name=fs_name, scratch_root=settings.scratch_root, on_progress=update)
    doc["candidate"] = candidate
    _keep_report(settings, "aging", doc, fs_name or str(directory), render.aging_table(doc), json_out)
    if doc.get("interrupted"):
        raise Interrupted(f"aging interrupted after {doc['rounds_completed']} of {doc['rounds']} rounds; the tree "
                          "is whole, what was measured is stored, and the filesystem is labelled partly aged")
    if snapshot_name:
        copy = scratch.snapshot(fs_name, snapshot_name, settings.scratch_root)
        console.print(f"snapshot {copy.name} mounted at {escape(str(copy.mount_point))} ({escape(copy.aging_state)})")


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
    refuse_overwrite(json_out, force)
    refuse_overwrite(plan_out, force)
    settings = settings_of(ctx)
    directory, candidate, aging = target_directory(settings, target, fs_name)

    def show_plan(stats: Any) -> None:
        console.print(f"[dim]plan: {stats.operations:,} operations by {stats.actors} actors; tree "
                      f"{stats.tree_directories:,} directories, {stats.tree_files:,} files, {stats.tree_links:,} links "
                      f"({stats.tree_bytes / 2**20:.1f} MiB); left out: "
                      f"{', '.join(f'{n:,} {why}' for why, n in stats.skipped.items()) or 'nothing'}[/]")

    with ExitStack() as stack:
        if fs_name is not None:  # never the mount's root: a directory of its own, each time
            directory = Path(tempfile.mkdtemp(prefix="fsbm-replay-", dir=directory))
            if keep_tree:
                console.print(f"[dim]replaying in {escape(str(directory))} (kept)[/]")
            else:
                stack.callback(shutil.rmtree, directory, True)
        with progress_bar(f"replaying ({mode})") as advance:
            doc = replay(source, directory, mode=mode, cold=cold, keep_going=keep_going, plan_out=plan_out,
                         on_plan=show_plan, on_progress=advance)
    doc.update(candidate=candidate, aging_state=aging)
    _keep_report(settings, "replay", doc, str(source), render.replay_table(doc), json_out)
    if doc.get("interrupted"):
        raise Interrupted(f"replay interrupted after {doc['operations_run']:,} of {doc['planned_operations']:,} "
                        "operations; what ran is stored")

"""`fsbm validate`: the predictor's error measured on real programs, and the model fitted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.markup import escape

from fsbm.api import render
from fsbm.api.commands.common import (Settings, console, hold_freed_memory_option, json_option, measuring_memory,
                                      page_cache_bytes, refuse_overwrite, settings_of, table_case_seconds_option,
                                      table_reps_option, write_json, write_text)
from fsbm.errors import UsageError
from fsbm.microbench import scratch
from fsbm.microbench.capture_cost import PAIRS as CAPTURE_COST_PAIRS
from fsbm.microbench.fsbench import TableEffort

if TYPE_CHECKING:
    from fsbm.api.capture_validation import CaptureOptions
    from fsbm.api.plain_validation import PlainOptions


DISK_CANDIDATES = "ext4,xfs,btrfs"  # a plain or capture validation's targets unless --candidates names others
ALL_CANDIDATES = f"{DISK_CANDIDATES},tmpfs"  # a recorded validation's


def _types(candidates: str) -> tuple[str, ...]:
    """The filesystem types --candidates names, each one fsbm makes scratch filesystems of."""
    types = tuple(c.strip() for c in candidates.split(",") if c.strip())
    bad = sorted(set(types) - set(scratch.FILESYSTEMS))
    if bad:
        raise UsageError(f"unknown filesystem {', '.join(bad)}; choose from {', '.join(scratch.FILESYSTEMS)}")
    return types


def _plain_candidates(candidates: str) -> tuple[str, ...]:
    """The disk filesystems of --candidates: a plain validation's targets are direct-I/O loop images."""
    return tuple(c for c in _types(candidates) if c != "tmpfs")


def _validate_plain(settings: Settings, doc: Optional[dict[str, Any]], options: "PlainOptions",
                    doc_out: Optional[Path], json_out: Optional[Path]) -> None:
    """`fsbm validate --plain` (plain_validation.validate_plain), written and printed."""
    from fsbm.api.plain_validation import validate_plain
    from fsbm.predictor.plain_judge import markdown

    done = validate_plain(settings, doc, options, console)
    _kept(done.measurements_id, done.doc, json_out)
    if done.model_id is not None:
        console.print(f"the runtime model for plain traces stored as document {done.model_id}: `fsbm predict` gives "
                      "plain traces their intervals from its errors")
    out = doc_out or Path(f"docs/validation-plain-{done.doc['options']['split']}.md")
    write_text(out, markdown(done.doc, done.judged, judged_again=doc is not None))
    _print_forms(done.judged.summary, ("relative", "absolute", "untimed"), out)


def _kept(measurements_id: Optional[int], doc: dict[str, Any], json_out: Optional[Path]) -> None:
    """Where the measurements went: the store (None: judged from a file, not stored again),
    and --json."""
    if measurements_id is not None:
        console.print(f"measurements stored as document {measurements_id}")
    if json_out is not None:
        write_json(json_out, doc)


def _print_forms(summary: dict[str, Any], forms: tuple[str, ...], out: Path) -> None:
    """Each judged form's errors, intervals and pairs in a line, and where the document went."""
    for form in (form for form in forms if form in summary):
        f = summary[form]
        console.print(f"{form}: median {100 * f['runtime']['median']:.1f}%, largest {100 * f['runtime']['largest']:.1f}%,"
                      f" ratios {100 * f['ratio']['median']:.1f}% / {100 * f['ratio']['largest']:.1f}%, intervals "
                      f"{f['covered']} of {f['intervals']}, pairs {f['pairs_right']} of {f['pairs']}")
    console.print(f"written to {escape(str(out))}")


def _validate_capture(settings: Settings, doc: Optional[dict[str, Any]], options: "CaptureOptions",
                       doc_out: Optional[Path], json_out: Optional[Path]) -> None:
    """`fsbm validate --capture` (capture_validation.validate_capture), written and printed."""
    from fsbm.api.capture_validation import validate_capture
    from fsbm.predictor.capture_judge import FORMS, markdown

    done = validate_capture(settings, doc, options, console)
    _kept(done.measurements_id, done.doc, json_out)
    out = doc_out or Path(f"docs/validation-capture-{done.doc['options']['split']}.md")
    write_text(out, markdown(done.doc, done.judged, judged_again=doc is not None))
    _print_forms(done.judged.summary, FORMS, out)


def validate_command(
    ctx: typer.Context,
    candidates: Optional[str] = typer.Option(None, "--candidates", help="Filesystem types to run on (default: "
                                             "ext4,xfs,btrfs,tmpfs; with --plain or --capture, ext4,xfs,btrfs: a plain "
                                             "validation leaves tmpfs out, a capture validation takes it where named)."),
    states: str = typer.Option("fresh,aged", "--states", help="fresh, aged or both (tmpfs is never aged)."),
    traced_on: str = typer.Option("ext4", "--traced-on", help="The filesystem type the programs are traced on (fresh)."),
    rounds: int = typer.Option(5, "--rounds", min=1, help="Interleaved rounds of real runs and replays."),
    scale: float = typer.Option(1.0, "--scale", min=0.05, max=4.0, help="Size of the programs' work (1: full)."),
    only: Optional[str] = typer.Option(None, "--only", help="Programs of the recorded validation to run, e.g. untar,grep (default: all; --plain and --capture run their whole set); a run of part of a set is a trial: it stores no model for `fsbm predict`, and the overview keeps showing the whole set's run."),
    seed: int = typer.Option(1, "--seed", min=0, help="Seed of the shuffled order."),
    fresh: bool = typer.Option(False, "--fresh", help="Remake the val-* filesystems (provisioned and aged)."),
    table_repeats: int = typer.Option(3, "--table-repeats", min=1, help="Cost-table measurements per target, spread "
                                      "over the rounds; each case is judged at their median. With --capture, at "
                                      "most 2 (fsbench seeds 1 and 2)."),
    measurements: Optional[Path] = typer.Option(None, "--from", help="Judge these stored measurements (JSON) "
                                                "instead of measuring."),
    doc_out: Optional[Path] = typer.Option(None, "--doc", help="Where the validation table goes (default: "
                                           "docs/validation-recorded-SET.md, or docs/validation-plain-SET.md with "
                                           "--plain; docs/validation.md with --overview)."),
    json_out: Optional[Path] = json_option("the measurements"),
    force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
    plain: bool = typer.Option(False, "--plain", help="Trace with plain strace (no `fsbm trace record`), on fresh "
                               "filesystems, and judge both forms as a new user meets them."),
    capture: bool = typer.Option(False, "--capture", help="Validate predictions from NFS captures: real NFS "
                                 "client jobs against a real NFS server (NFS-Ganesha) on each candidate, captured "
                                 "with tshark on the traced one."),
    split: str = typer.Option("dev", "--set", help="The suite's dev or test set. The test set is held out: nothing "
                              "is tuned on it, and every run of it is reported."),
    overview: bool = typer.Option(False, "--overview", help="Measure nothing: judge the newest stored measurements "
                                  "of every validation (recorded and plain, both sets) and write them side by side."),
    reuse_tables: bool = typer.Option(False, "--reuse-tables", help="With --plain or --capture: the two newest stored cost tables "
                                      "of each val-* filesystem, on the filesystems as they are, instead of making "
                                      "them anew and measuring them again."),
    workload_cases: bool = typer.Option(True, "--workload-cases/--no-workload-cases", help="Grow each cost table "
                                        "by the cases the traced programs need at their own sizes, as `fsbm bench "
                                        "--for` does."),
    capture_cost_pairs: int = typer.Option(CAPTURE_COST_PAIRS, "--capture-cost-pairs", min=0, max=50,
                                           help="With --capture: pairs of loopback transfers (each way), captured and "
                                           "not, that calibrate what capturing costs a job here before the rounds, "
                                           "and as many cold runs (at most 3) of each small client job that tell the "
                                           "client's start no capture holds; 0: not calibrated."),
    keep_traces: Optional[Path] = typer.Option(None, "--keep-traces", help="With --plain or --capture: leave the "
                                               "strace logs (with and without -T) or the captures, and their event "
                                               "tables, in this new or empty directory instead of removing them."),
    table_reps: Optional[int] = table_reps_option(),
    table_case_seconds: Optional[float] = table_case_seconds_option(),
    hold_freed_memory: bool = hold_freed_memory_option(),
) -> None:
    """Measure the predictor's error on real programs (fresh and aged filesystems) and calibrate it."""
    from fsbm.api.plain_validation import PlainOptions
    from fsbm.api.validation import ValidationOptions, markdown, part_of_the_set, split_of, validate_recorded
    from fsbm.predictor.suite import SPLITS, programs

    refuse_overwrite(json_out, force)
    settings = settings_of(ctx)
    effort = TableEffort(table_reps, table_case_seconds)
    if split not in SPLITS:
        raise UsageError(f"--set takes {' or '.join(SPLITS)}, not {split!r}")
    if plain and capture:
        raise UsageError("--plain and --capture are two validations: give one of them")
    if only and (plain or capture):
        raise UsageError(f"--only picks programs of the recorded validation; --{'plain' if plain else 'capture'} "
                         "runs its whole set (its judge and the overview compare whole sets)")
    if overview:
        from fsbm.api.validation_overview import overview as write_overview

        with settings.store() as store:
            text = write_overview(store, page_cache_bytes(None))
        out = doc_out or Path("docs/validation.md")
        write_text(out, text)
        console.print(f"every validation judged again, side by side: written to {escape(str(out))}")
        return
    loaded = None
    if measurements is not None:
        try:
            loaded = json.loads(measurements.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read measurements {measurements}: {exc}") from None
    memory = measuring_memory(hold_freed_memory, timed=loaded is None)  # stored measurements: nothing timed
    if capture or (loaded or {}).get("kind") == "capture_validation_measurements":
        from fsbm.api.capture_validation import CaptureOptions

        with memory:
            _validate_capture(settings, loaded, CaptureOptions(split=split,  # type: ignore[arg-type]
                                                               candidates=_types(candidates or DISK_CANDIDATES),
                                                               traced_on=traced_on, rounds=rounds, scale=scale,
                                                               seed=seed, reuse_tables=reuse_tables,
                                                               workload_cases=workload_cases, table_effort=effort,
                                                               keep_traces=keep_traces,
                                                               tables=min(table_repeats, 2),
                                                               capture_cost_pairs=capture_cost_pairs),
                              doc_out, json_out)
        return
    if plain or (loaded or {}).get("kind") == "plain_validation_measurements":
        with memory:
            plain_types = _plain_candidates(candidates or DISK_CANDIDATES)
            _validate_plain(settings, loaded, PlainOptions(split=split, candidates=plain_types,  # type: ignore[arg-type]
                                                           traced_on=traced_on, rounds=rounds, scale=scale, seed=seed,
                                                           reuse_tables=reuse_tables, workload_cases=workload_cases,
                                                           table_effort=effort, keep_traces=keep_traces),
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
        types = _types(candidates or ALL_CANDIDATES)
        wanted_states = tuple(x.strip() for x in states.split(",") if x.strip())
        if not wanted_states or set(wanted_states) - {"fresh", "aged"}:
            raise UsageError("--states takes fresh, aged or fresh,aged")
        options = ValidationOptions(candidates=types, states=wanted_states, traced_on=traced_on, rounds=rounds,
                                    scale=scale, only=chosen, seed=seed, fresh=fresh,
                                    table_repeats=table_repeats, split=split,  # type: ignore[arg-type]
                                    workload_cases=workload_cases, table_effort=effort)
    with memory:
        done = validate_recorded(settings, loaded, options or ValidationOptions(), console, page_cache_bytes(None))
    if done.measurements_id is not None:
        console.print(f"measurements stored as document {done.measurements_id}")
    if json_out is not None:
        write_json(json_out, done.doc)
    console.print(render.validation_table(done.judged.rows, done.judged.summary))
    out = doc_out or Path(f"docs/validation-recorded-{split_of(done.doc)}.md")
    write_text(out, markdown(done.doc, done.judged, judged_again=loaded is not None))
    if done.model_id is not None:
        console.print(f"runtime model {done.model_id} stored (fsbm predict uses it for recordings)")
    elif part_of_the_set(done.doc):
        console.print("part of the set (--only): its measurements are kept apart, and neither its model nor its "
                      "figures replace the whole set's")
    console.print(f"table written to {escape(str(out))}")

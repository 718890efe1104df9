"""`fsbm validate`: provision the candidates (fresh and aged), measure their costs, trace the
suite on the traced filesystem, measure it for real and by replay in interleaved rounds,
then judge the predictor on it (predictor/judge.py) and write
docs/validation-recorded-SET.md.  `validate_recorded` does the whole of `fsbm validate` but
the writing and printing.  The development set fits the runtime model `fsbm predict` uses for
recordings; the test set is judged by that model, and nothing is fitted on it.

Scratch filesystems are named val-<type>[-aged] and kept between runs, so a second run
provisions and ages nothing; --fresh remakes them.  Their cost tables are measured anew,
several times spread over the rounds (each kept in the store, each with its own fsbench
seed), and judged at their per-case median: this machine's disk drifts, and the tables
must see the disk the rounds saw.  Each is grown by the cases the traced programs are priced
from beyond it, at their own sizes, as `fsbm bench --for` does (unless `workload_cases` is off).
"""

from __future__ import annotations

import platform
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.markup import escape

from fsbm.errors import FsbmError
from fsbm.locations import data_dir
from fsbm.api import track_record
from fsbm.api.prediction_service import RECORDED_MODEL
from fsbm.api.provision import AGING, add_programs_cases, measure_cost_table, provision
from fsbm.microbench import freed_memory
from fsbm.microbench.fsbench import TableEffort
from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.estimator import RuntimeEstimator
from fsbm.predictor.judge import Judged, judge, largest_departure, target_images_sentence
from fsbm.predictor.plain_judge import workload_cases_section
from fsbm.predictor.suite import Inputs, Split, build_corpus, programs
from fsbm.predictor.targets import TARGETS
from fsbm.predictor.unsteady_runs import unsteady_runs_section
from fsbm.predictor.validate import (Target, measure_rounds, release_staged, table_boundaries, targets_json,
                                    trace_program)
from fsbm.traces.record import (CALLS_CPU_BRACKETED, CALLS_CPU_MISMATCHES, CALLS_CPU_SYNCS_SKIPPED,
                                CALLS_CPU_UNBRACKETED, MISMATCHED_SHARE_KEPT, NOSYNC_CPU_FIELDS, clean_replays)
from fsbm.units import percent, percents
from fsbm.predictor.cpu_speed import moved_sentence

# Each validation image's size.  It holds every suite's staged inputs (about 1.1 GiB) with
# most of the device still unallocated: a btrfs left with little unallocated space (2 GiB
# images kept about 240 MiB) reclaims metadata space by committing whole transactions while
# a program syncs, which a user's roomier filesystem does not do.
IMAGE_BYTES = 4 << 30


@dataclass
class ValidationOptions:
    candidates: tuple[str, ...] = ("ext4", "xfs", "btrfs", "tmpfs")
    states: tuple[str, ...] = ("fresh", "aged")
    traced_on: str = "ext4"
    rounds: int = 5
    scale: float = 1.0
    only: tuple[str, ...] | None = None
    seed: int = 1
    fresh: bool = False
    table_repeats: int = 3  # cost-table measurements per target, spread over the rounds
    split: Split = "dev"  # the suite's development or (held-out) test set
    workload_cases: bool = True  # each table grown by the cases the traced programs need (`fsbm bench --for`)
    table_effort: TableEffort = TableEffort()  # how long each table measures a case


def utc(seconds: float) -> str:
    """A time as the validation documents name it: UTC, to the minute."""
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(seconds))


def machine() -> dict[str, Any]:
    """Where a validation measured: the host, its kernel, and what it did with memory the runs
    freed (microbench/freed_memory.py: reported to the host, held from it, or not reported)."""
    return {"hostname": platform.node(), "kernel": platform.release(), "python": platform.python_version(),
            "freed_memory": freed_memory.state()}


def measure_suite(settings: Any, options: ValidationOptions, console: Console) -> dict[str, Any]:
    """Everything measured: the document the judge reads (also kept in the store)."""
    started = time.time()
    suite = [p for p in programs(options.scale, split=options.split) if not options.only or p.name in options.only]
    home = data_dir() / "validation"
    inputs = Inputs(build_corpus(home / f"corpus-{options.scale:g}.tar", int(24e6 * options.scale)), options.scale)
    targets: list[Target] = []
    filesystems = {}
    for fstype in options.candidates:
        for state in options.states:
            if state == "aged" and fstype == "tmpfs":
                continue  # memory has no layout to age
            name = f"val-{fstype}" + ("-aged" if state == "aged" else "")
            fs = provision(settings, name, fstype, IMAGE_BYTES, AGING if state == "aged" else None, console,
                           options.fresh)
            targets.append(Target(f"{fstype} {state}", fs.name, fs.mount_point, state))
            filesystems[fs.name] = fs
    for target in targets:
        gone = release_staged(target, {p.name for p in suite})
        if gone:
            console.print(f"[dim]{escape(target.candidate)}: inputs staged for {len(gone)} other programs removed "
                          f"(they are staged again when run): {escape(', '.join(gone))}[/]")
    measured: dict[str, list[CostTable]] = {t.candidate: [] for t in targets}
    added: dict[str, list[str]] = {}  # per target, the programs' own cases its tables were grown by
    failed: list[dict[str, Any]] = []  # the later tables that could not be measured, and why
    boundaries = table_boundaries(options.rounds, options.table_repeats)

    def measure_tables(boundary: int) -> None:
        """Every target's table once more.  The k-th measurement of each reads with fsbench
        seed k: a forward stream's cost is a lottery its offsets decide (README), so the
        per-case median is the middle of several draws, the same draws on every target."""
        if boundary not in boundaries:
            return
        k = boundaries.index(boundary) + 1
        console.print(f"[bold]cost tables[/] ({k} of {len(boundaries)}, "
                      f"{'before round ' + str(boundary + 1) if boundary < options.rounds else 'after the last round'})")
        fresh = more_tables(lambda store: {name: [measure_cost_table(settings, fs, store, seed=k,
                                                                      effort=options.table_effort)]
                                           for name, fs in filesystems.items()},
                            settings, measured, failed, f"cost tables {k} of {len(boundaries)}", console)
        if fresh is None:
            return
        if options.workload_cases:
            for name, cases in add_programs_cases(settings, filesystems, fresh, [t.profile for t in traced.values()],
                                                  console, options.table_effort).items():
                added[name] = sorted({*added.get(name, ()), *cases})
        for name, (table,) in fresh.items():
            measured[name].append(table)

    baseline = next((t for t in targets if t.label == f"{options.traced_on} fresh"), targets[0])
    console.print(f"[bold]tracing[/] {len(suite)} programs on {escape(baseline.label)}")
    with tempfile.TemporaryDirectory(prefix="fsbm-validate-") as tmp:
        traced = {p.name: trace_program(p, baseline, inputs, Path(tmp)) for p in suite}  # measure_tables reads it
        console.print(f"[bold]measuring[/] {options.rounds} rounds x {len(suite)} programs x {len(targets)} targets "
                      "(real runs and replays, cold, shuffled and blocked by program; and each program's recording run again)")
        records = measure_rounds(suite, targets, inputs, traced, rounds=options.rounds, seed=options.seed,
                                 progress=lambda line: console.print(f"  {escape(line)}"), at_boundary=measure_tables,
                                 recording_on=baseline)
    tables = {name: CostTable.median_of(found).to_json() for name, found in measured.items()}
    return {
        "schema_version": 1, "kind": "validation_measurements", "started": started, "finished": time.time(),
        "machine": machine(), "options": asdict(options),
        "traced_on": baseline.label, "targets": targets_json(targets), "cost_tables": tables,
        "cost_table_runs": {name: [t.to_json() for t in found] for name, found in measured.items()},
        "cost_tables_failed": failed,
        "workload_cases": added,
        "programs": [{"name": p.name, "description": p.description, "command": p.command,
                      "profile": traced[p.name].profile} for p in suite],
        "records": records,
    }


def more_tables(measure: Callable[[Any], dict[str, list[CostTable]]], settings: Any,
                measured: dict[str, list[CostTable]], failed: list[dict[str, Any]], label: str,
                console: Console) -> dict[str, list[CostTable]] | None:
    """Every target's table measured once more (`measure`, given the store), or None where
    fsbench failed (a case that could not run: a full filesystem) and every target has a
    table from before: the rounds go on, priced by the tables measured so far, and `failed`
    keeps what `label` was and why, for the validation's document to say.  Rounds already
    made are many minutes of measurement; one table fewer of the several spread over them
    is not a reason to lose them.  Without a table of every target there is nothing to
    price by, and the error stands."""
    try:
        with settings.store() as store:
            return measure(store)
    except FsbmError as error:
        if not measured or not all(measured.values()):
            raise
        failed.append({"tables": label, "error": str(error)})
        console.print(f"[yellow]{escape(label)} not measured: {escape(str(error))}; the rounds go on, priced by "
                      "the tables measured before[/]")
        return None


@dataclass
class RecordedValidation:
    """A judged validation of recordings: its measurements, the judgement, what was stored."""

    doc: dict[str, Any]
    judged: Judged
    measurements_id: int | None  # None: judged from measurements given, not stored again
    model_id: int | None  # the runtime model a development set fitted; a test set fits none


def split_of(doc: dict[str, Any]) -> str:
    """Which set of the suite a recorded validation measured (measurements made before the
    suite had a test set measured its development set)."""
    return doc.get("options", {}).get("split", "dev")


def part_of_the_set(doc: dict[str, Any]) -> bool:
    """Whether a recorded validation measured only some of its set's programs (`--only`): a
    trial, whose fit and figures stand for those programs, not for the set."""
    return bool(doc.get("options", {}).get("only"))


def measurements_name(doc: dict[str, Any]) -> str:
    """The name a recorded validation's measurements are kept under: its set's, which the
    overview reads the newest of, or for part of the set (part_of_the_set) a name of its own,
    so a trial never stands in the overview for the set it was part of."""
    return f"{split_of(doc)}, part" if part_of_the_set(doc) else split_of(doc)


def stored_runtime_model(store: Any, name: str) -> RuntimeEstimator:
    """The runtime model kept under `name` (RECORDED_MODEL, PLAIN_MODEL) the newest development
    set fitted, or an unfitted one."""
    document_id = store.newest_document_id("runtime_model", name)
    found = store.document(document_id, "runtime_model") if document_id is not None else None
    return RuntimeEstimator.from_json(found[2]) if found else RuntimeEstimator.unfitted()


def validate_recorded(settings: Any, doc: dict[str, Any] | None, options: ValidationOptions, console: Console,
                      cache_bytes: int) -> RecordedValidation:
    """Measure one set of the suite (or take `doc`), keep the measurements before judging them
    (the measuring takes many minutes, the judging can be redone with --from), and judge
    them.  A development set fits the runtime model `fsbm predict` uses for recordings, kept
    with its judgement; a test set is judged by the kept model, and nothing is fitted on it.
    Part of a set (`--only`) is judged the same way, but neither its model nor its figures
    replace the whole set's: its measurements are kept under a name of their own
    (measurements_name), and its model and track record are not kept."""
    measurements_id = None
    if doc is None:
        doc = measure_suite(settings, options, console)
        with settings.store() as store:
            measurements_id = store.save_document("validation_measurements", doc, name=measurements_name(doc))
    dev = split_of(doc) == "dev"
    whole = not part_of_the_set(doc)
    held = None
    if not dev:
        with settings.store() as store:
            held = stored_runtime_model(store, RECORDED_MODEL)
    judged = judge(doc, cache_bytes=cache_bytes, model=held)
    measured_at = utc(doc["finished"]) if doc.get("finished") else "?"
    model_id = None
    with settings.store() as store:
        if dev and whole:
            model_id = store.save_document("runtime_model", judged.model.to_json(
                f"fsbm validate's recordings of {len(doc['programs'])} programs, measured {measured_at} UTC"),
                name=RECORDED_MODEL)
        s = judged.summary
        if whole:
            track_record.save(store, "recorded", split_of(doc), doc.get("finished") or time.time(), {
                "absolute": track_record.FormRecord(s["median_abs_error"], s["max_abs_error"], s["pairs_ranked_right"],
                                                    s["pairs_compared"]),
                "relative": track_record.FormRecord(s["median_relative_error"], s["max_relative_error"], 0, 0)})
        store.save_document("validation", {"kind": "validation", "summary": judged.summary,
                                           "rows": judged.rows.to_dict(orient="records"),
                                           "pairs": judged.pairs.to_dict(orient="records"),
                                           "model_id": model_id, "split": split_of(doc)}, name=doc["traced_on"])
    return RecordedValidation(doc, judged, measurements_id, model_id)


def _coverage(summary: dict[str, Any], covered: str, intervals: str) -> str:
    """"n of m" intervals covering; "-" for a judgement made before they were counted."""
    return f"{summary[covered]} of {summary[intervals]}" if intervals in summary else "-"


def _before_coverage(summary: dict[str, Any]) -> list[str]:
    """The summary's row of intervals covering where the CPU time came from the recording made
    before the rounds, as a user's recording is `fsbm predict`'s (none where the verdict's own
    CPU source is that one)."""
    from fsbm.predictor.judge import CPU_BEFORE

    before = (summary.get("variants") or {}).get(CPU_BEFORE, {}).get(summary["adopted"])
    if summary.get("cpu") == CPU_BEFORE or not before or "intervals" not in before:
        return []
    return [f"| 90% intervals covering, the CPU time from the recording before the rounds (a user's recording): "
            f"absolute form | {_coverage(before, 'covered', 'intervals')} | >= {percent(TARGETS.coverage)} |"]


def _operations_section(operations: Any) -> list[str]:
    """Modelled / replayed seconds per operation and target: where the model misses."""
    if not len(operations) or not operations["replay_s"].sum():
        return []  # measurements made before replays kept their operations' times
    targets = list(dict.fromkeys(operations["candidate"]))
    cells = {(r.op, r.candidate): r for r in operations.itertuples()}
    ops = operations.groupby("op")["replay_s"].sum().sort_values(ascending=False).index
    lines = ["", "## Model against replay, operation by operation", "",
             "Raw modelled seconds / replayed seconds inside each operation, summed over the programs (the replayed "
             "seconds in brackets). Creates count with the opens (fsreplay makes a file by opening it) and "
             "in-kernel copies with the writes (replays made before fsreplay copied wrote their bytes instead).", "",
             "| operation | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    for op in ops:
        row = []
        for t in targets:
            r = cells.get((op, t))
            row.append("-" if r is None or r.ratio != r.ratio else f"{r.ratio:.2f} ({r.replay_s:.3f})")
        lines.append(f"| {op} | " + " | ".join(row) + " |")
    return lines


# The two cases the device's drift moves most (docs/validation.md): a cold 4 KiB random read,
# and an fsync after a 4 KiB write.
DRIFT_CASES = (("read", 4096, "random", "cold"), ("fsync", 4096, "sequential", "warm"))
UNSTEADY = 1.5  # a drift case whose slowest measurement is this much its fastest: an unsteady device
STEADY_BELOW_NS = 10_000  # a case this fast has no device under it (tmpfs's fsync): its moves are not drift


def _left_outside(records: list[dict]) -> dict[tuple[str, str], float]:
    """Per (program, target), the median real run's CPU time less the median replay's calls'
    CPU time: what the runs spent outside the calls the replay makes, measured on that target."""
    cpu: dict[tuple[str, str], dict[str, list[float]]] = {}
    for r in records:
        samples = cpu.setdefault((r["program"], r["target"]), {})
        if r["kind"] == "real" and "user_cpu_s" in r:
            samples.setdefault("real", []).append(r["user_cpu_s"] + r["system_cpu_s"])
        elif r["kind"] == "replay" and "calls_cpu_s" in r:
            samples.setdefault("calls", []).append(r["calls_cpu_s"])
    return {key: statistics.median(v["real"]) - statistics.median(v["calls"]) for key, v in cpu.items()
            if v.get("real") and v.get("calls")}


def _mismatched(records: list[dict], kind: str, field: str) -> str:
    """How many of the replays a kind of record holds had calls that ended otherwise than
    traced (`field` counts them), as a sentence's end: a replay with any did other work."""
    counts = [r[field] for r in records if r["kind"] == kind and field in r]
    bad = sum(1 for n in counts if n)
    return f"{bad} of {len(counts)}" + (f" ({sum(counts)} calls in all)" if bad else "")


def _outside_section(doc: dict[str, Any], rows: Any) -> list[str]:
    """The CPU time outside the filesystem the verdict predicts, beside what each target's
    real runs spent outside their calls (_left_outside), and the scales the measuring
    replays set on each group's CPU prices: where the outside time is right, the first
    stands inside the range of the second on every target."""
    left = _left_outside(doc["records"])
    if not left:
        return []  # measurements made before real runs and replays kept their CPU time
    lines = ["", "## Time outside the filesystem, checked on every target", "",
             "*Predicted*: the CPU part of the time outside the filesystem the verdict adds on every target. *Left "
             "outside, measured*: on each target, the median real run's CPU time (user and system) less the median "
             "replay's calls' CPU time (fsreplay's `cpu.calls_ns`); its range over the targets. *CPU scales*: "
             "per group, the calls' CPU the measuring replays on the traced filesystem took over fsbench's CPU "
             "prices of them (metadata / read / write / sync).", "",
             "| program | predicted, s | left outside, measured, s (targets' range) | CPU scales |", "|---|---|---|---|"]
    for program, group in rows.groupby("program", sort=False):
        measured = [left[(program, t)] for t in group["candidate"] if (program, t) in left]
        first = group.iloc[0]
        scales = first.get("cpu_scales") or {}
        lines.append(f"| {program} | {first['user_cpu_s'] + first['system_cpu_s']:.3f} | "
                     f"{statistics.median(measured):.3f} ({min(measured):.3f} to {max(measured):.3f}) | "
                     + (" / ".join(f"{scales[g]:.2f}" for g in scales) if scales else "-") + " |")
    measuring = [r for r in doc["records"] if r["kind"] == "recording" and CALLS_CPU_MISMATCHES in r]
    if measuring:
        lines += ["", "Measuring replays with calls that ended otherwise than traced: "
                  + _mismatched(measuring, "recording", CALLS_CPU_MISMATCHES) + f"; left out of the calls' CPU "
                  f"(more than {MISMATCHED_SHARE_KEPT:.1%} of their calls, or any where the calls were not counted): "
                  f"{len(measuring) - len(clean_replays(measuring))}."]
    lines += _brackets_line(measuring)
    return lines


def _brackets_line(measuring: list[dict]) -> list[str]:
    """Per program, the calls' CPU the measuring replays counted with every call bracketed by
    the CPU clock against the same calls replayed without brackets (medians over the rounds):
    what the brackets add, and the verdict's groups no longer carry (record.replay_calls_cpu)."""
    totals: dict[str, list[tuple[int, int]]] = {}
    for r in measuring:
        if CALLS_CPU_BRACKETED in r:
            totals.setdefault(r["program"], []).append((r[CALLS_CPU_BRACKETED], r[CALLS_CPU_UNBRACKETED]))
    if not totals:
        return []
    parts = [f"{program} {statistics.median(b for b, _ in pairs) / 1e6:.1f} / "
             f"{statistics.median(u for _, u in pairs) / 1e6:.1f}" for program, pairs in totals.items()]
    return ["", "The measuring replays' calls' CPU, bracketed / unbracketed (median ms over the rounds; the "
            "groups are scaled to the second): " + ", ".join(parts) + "."]


def _verdicts_runs(records: list[dict]) -> str:
    """Which runs the verdict's CPU time came from, and which replays its calls' CPU: those
    that skipped their syncs (predictor/outside.py says why) where every round's did."""
    recordings = [r for r in records if r["kind"] == "recording"]
    if recordings and all(r.get(CALLS_CPU_SYNCS_SKIPPED) and NOSYNC_CPU_FIELDS[0] in r for r in recordings):
        return ("the cold runs made with their syncs skipped, less their calls' CPU as a cold replay on the traced "
                "filesystem that skipped them too measured it by group; the syncs' CPU is what skipping them saved "
                "the cold runs")
    return "the cold runs, less their calls' CPU as a cold replay on the traced filesystem measured it by group"


def _case_means(tables: list[dict]) -> dict[tuple, list[float]]:
    """Each case's mean latency in each of a target's cost-table measurements, in order."""
    cases: dict[tuple, list[float]] = {}
    for table in tables:
        for e in table["entries"]:  # stored JSON: a case without a size (metadata) has none written
            cases.setdefault((e["bench"], e.get("size"), e["order"], e["cache"]), []).append(e["latency_ns"]["mean"])
    return cases


def _cost_tables_section(doc: dict[str, Any]) -> list[str]:
    """How much each target's cost table moved between its measurements: the drift the
    per-case median is there to ride out."""
    runs = doc.get("cost_table_runs")
    if not runs:
        return []  # measurements made before cost tables were repeated
    labels = {t["candidate"]: t["label"] for t in doc["targets"]}
    seeds = sorted({t["seed"] for tables in runs.values() for t in tables if t.get("seed") is not None})
    draws = (f" (fsbench seeds {', '.join(map(str, seeds))} in turn, the same on every target: a forward stream's "
             "cost is a lottery its offsets decide)" if len(seeds) > 1 else "")
    lines = ["", "## Cost tables", "",
             f"Each target's quick fsbench table was measured several times, spread over the rounds{draws}, and every "
             "case is judged at its median. *Median spread*: a case's slowest measurement over its fastest, the median over "
             "the cases; the last columns have the mean of two cases the device's drift moves most, in each "
             "measurement, in order: a cold 4 KiB random read, and an fsync after a 4 KiB write (a journal commit "
             "and a cache flush: SQLite's commits are made of these).", "",
             "| target | measurements | measured | median spread | cold 4 KiB random read, us | 4 KiB fsync, us |",
             "|---|---|---|---|---|---|"]
    for name, tables in runs.items():
        cases = _case_means(tables)
        spreads = sorted(max(v) / min(v) for v in cases.values() if len(v) > 1 and min(v) > 0)
        spread = f"{spreads[len(spreads) // 2]:.2f}x" if spreads else "-"
        read, sync = (", ".join(f"{v / 1e3:.0f}" for v in cases.get(case, []) if v > 0) or "-" for case in DRIFT_CASES)
        times = sorted(t["measured_at"] for t in tables)
        lines.append(f"| {labels.get(name, name)} | {len(tables)} | {times[0][11:16]}-{times[-1][11:16]} UTC | "
                     f"{spread} | {read} | {sync} |")
    return lines


def _unsteady_section(doc: dict[str, Any]) -> list[str]:
    """The targets whose device moved by UNSTEADY or more between their cost tables, in a
    drift case: where the errors are this run's hour as much as the model's.  Why: sqlite's
    syncs on ext4 took 0.64 s in one round and 2.94 in another, and fsbench's 4 KiB fsync
    934 us and 3363 in one run's tables."""
    labels = {t["candidate"]: t["label"] for t in doc["targets"]}
    moved = []
    for name, tables in (doc.get("cost_table_runs") or {}).items():
        cases = _case_means(tables)
        for (bench, size, order, cache), what in zip(DRIFT_CASES, ("cold 4 KiB random read", "4 KiB fsync")):
            values = [v for v in cases.get((bench, size, order, cache), []) if v > 0]
            if len(values) > 1 and max(values) >= UNSTEADY * min(values) and max(values) >= STEADY_BELOW_NS:
                moved.append(f"{labels.get(name, name)}'s {what} {min(values) / 1e3:.0f}-{max(values) / 1e3:.0f} us "
                             f"({max(values) / min(values):.1f}x)")
    if not moved:
        return []
    return ["", f"**The device was not steady in this run.** Between their cost tables, {'; '.join(moved)}. "
                "The errors of programs bound by that case on those targets (sqlite by its syncs, random-reads by "
                "its cold reads) are this hour's as much as the model's."]


def _noise_section(floor: dict[str, Any] | None) -> list[str]:
    """How precisely the rounds measured what the errors are taken against (judge.noise_floor)."""
    if not floor or not floor["runtimes"]["medians"]:
        return []
    lines = ["", "### How precise the measurements are", "",
             "Every error above is against a median of the rounds: of a program's runs on a target, or of its "
             "per-round ratios to the traced filesystem. Drawn again from the same runs (bootstrap), those medians "
             "move by this much; an error of this size is this machine's, not the model's.", "",
             "| median of | medians | typical move | 90th percentile | 90th percentile, least precise median |",
             "|---|---|---|---|---|"]
    for name, label in (("runtimes", "runs (runtime)"), ("ratios", "rounds' ratios")):
        f = floor[name]
        if f["medians"]:
            lines.append(f"| {label} | {f['medians']} | {percent(f['median'], digits=1)} | "
                         f"{percent(f['p90'], digits=1)} | "
                         f"{percent(f['worst_p90'], digits=1)} |")
    return lines


def _cpu_speed_section(summary: dict[str, Any]) -> list[str]:
    """How far the host's processor moved the runs, and the judged summary's errors beside
    those with it held steady (judge._cpu_steadied)."""
    steady = summary.get("cpu_steadied")
    if not steady:
        return []
    return ["", "### The host's processor", "", moved_sentence(steady["user_cpu_spread"]), "",
            "| measure | as measured | processor held steady |", "|---|---|---|",
            *(f"| {label} | {value} | {value_steady} |" for label, value, value_steady in _steady_rows(summary, steady))]


def _steady_rows(measured: dict[str, Any], steady: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The summary's measures, as measured and with the processor held steady."""
    errors = [(f"{what}: median / largest error", f"median_{key}_error", f"max_{key}_error")
              for what, key in (("runtimes", "abs"), ("ratios", "ratio"), ("relative form", "relative"))]
    return [*((label, percents(measured[median], measured[largest]), percents(steady[median], steady[largest]))
              for label, median, largest in errors),
            ("pairs ranked right", f"{measured['pairs_ranked_right']} of {measured['pairs_compared']}",
             f"{steady['pairs_ranked_right']} of {steady['pairs_compared']}")]


def _rounds_part(pair: Any) -> str:
    """In how many rounds the faster one really was faster, where the measurements have rounds."""
    rounds = getattr(pair, "rounds", 0)
    return f" (it was the faster in {pair.rounds_faster} of {rounds} rounds)" if rounds else ""


def _by_medians_part(counts: dict[str, int] | None) -> str:
    """The ranking counted the other way, by the ratio of the two targets' medians, where the
    judged run has it: a reader can see what the choice of measure changed."""
    if not counts:
        return ""
    return (f" Counted by the ratio of the two targets' medians instead, {counts['ranked_right']} of "
            f"{counts['compared']} pairs are.")


def _wait_part(row: Any) -> str:
    """The wait for files outside the work directory and the idle time of every run, where
    the measurements have them."""
    wait, idle = getattr(row, "outside_wait_s", 0.0), getattr(row, "outside_idle_s", 0.0)
    parts = ([f"waiting for files outside its directory: {wait:.3f} s"] if wait else []) + \
        ([f"idle in every run: {idle:.3f} s"] if idle == idle and idle else [])
    return f" ({'; '.join(parts)})" if parts else ""


def _miss(row: Any) -> str:
    """One largest miss, split into the filesystem's part and the part outside it."""
    fs_part = row.fs_calibrated_s - row.replay_s
    seen_outside = row.real_s - row.replay_s
    departure = largest_departure(row.model_ops_s, row.replay_ops_s)
    op_part = (f"; most in {departure[0]}: modelled {1e3 * departure[1]:.1f} ms raw, replayed "
               f"{1e3 * departure[2]:.1f} ms" if departure else "")
    return (f"- {row.program} on {row.candidate}: predicted {row.predicted_s:.3f} s, measured {row.real_s:.3f} s "
            f"({percent(row.abs_error, signed=True)}). Filesystem: modelled {row.fs_calibrated_s:.3f} s, replayed "
            f"{row.replay_s:.3f} s "
            f"({fs_part:+.3f} s{op_part}). Outside: predicted {row.outside_s:.3f} s{_wait_part(row)}, the runs less "
            f"the replay {seen_outside:.3f} s ({row.outside_s - seen_outside:+.3f} s).")


def _with_interval(row: Any) -> str:
    """Predicted seconds, with the 90% interval the runtime model fitted on the other programs
    gives it."""
    if row.high_s > row.low_s:
        return f"{row.predicted_s:.3f} ({row.low_s:.3f}-{row.high_s:.3f})"
    return f"{row.predicted_s:.3f}"


def markdown(doc: dict[str, Any], judged: Any, judged_again: bool = False) -> str:
    """docs/validation-recorded-SET.md: what was measured, how close the predictions came,
    where they miss; `judged_again`: stored measurements judged by today's code."""
    from fsbm.predictor.judge import provenance

    s = judged.summary
    verdict = "met" if s["targets_met"] else "NOT met"
    split = split_of(doc)
    lines = [
        f"# Validation of recordings: the {'test' if split == 'test' else 'development'} set",
        "",
        provenance(f"fsbm validate --set {split}", doc, judged_again),
        f"Traced with `fsbm trace record` on **{doc['traced_on']}**; {doc['options']['rounds']} interleaved rounds "
        "(every program on every target once per round, shuffled, a program's runs back to back), cold cache for "
        f"every run; scale {doc['options']['scale']:g}. " + target_images_sentence(doc),
        ("The test set is held out: every program is predicted by "
         + (f"the runtime model fitted on the development set ({judged.model.fitted_on_})" if judged.model.validated
            else "no fitted runtime model (none is stored yet)")
         + "; nothing was fitted or chosen on these measurements." if s.get("held_out") else
         "Predictions are leave-one-program-out: each program is predicted by the runtime model fitted on the others."),
        "",
        "## Summary",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| median absolute error, runtimes | {100 * s['median_abs_error']:.1f}% | <= {100 * TARGETS.relative.median:.0f}% |",
        f"| largest absolute error, runtimes | {100 * s['max_abs_error']:.1f}% | <= {100 * TARGETS.relative.largest:.0f}% |",
        f"| median error of ratios to {doc['traced_on']} | {percent(s['median_ratio_error'], digits=1)} | "
        f"<= {100 * TARGETS.relative.median:.0f}% |",
        f"| largest error of ratios | {percent(s['max_ratio_error'], digits=1)} | <= {100 * TARGETS.relative.largest:.0f}% |",
        f"| relative form (the runtime measured on {doc['traced_on']}, its filesystem part replaced): median / "
        f"largest error | {percents(s.get('median_relative_error'), s.get('max_relative_error'))} | "
        f"<= {100 * TARGETS.relative.median:.0f}% / {100 * TARGETS.relative.largest:.0f}% |",
        f"| pairs (> {100 * TARGETS.rank_gap:.0f}% apart, same rounds) ranked right | {s['pairs_ranked_right']} of "
        f"{s['pairs_compared']} | all |",
        f"| 90% intervals covering the measured runtime: absolute form | {_coverage(s, 'covered', 'intervals')} | "
        f">= {percent(TARGETS.coverage)} |",
        f"| 90% intervals covering the measured runtime: relative form | "
        f"{_coverage(s, 'relative_covered', 'relative_intervals')} | >= {percent(TARGETS.coverage)} |",
        *_before_coverage(s),
        "",
        f"Targets **{verdict}** (form {'of the development set' if s.get('held_out') else 'adopted'}: "
        f"{s['adopted']}; CPU time measured {s['cpu']}).",
        *_noise_section(s.get("noise_floor")),
        *_unsteady_section(doc),
        *unsteady_runs_section(doc["records"]),
        *_cpu_speed_section(s),
        "",
        "## Per program and target",
        "",
        "Seconds. *measured*: median of the real runs (min-max); *replayed*: median cold serial replay of the "
        "trace's calls beneath the workload directory; *predicted*: absolute form, with the 90% interval of "
        "the model's errors; *ratio predicted*: the absolute form's ratio to the traced target; *relative*: the "
        f"runtime measured on {doc['traced_on']} less its modelled filesystem time there, plus the target's; "
        "*error, CPU before*: the error had the CPU time been taken from the recording before the rounds.",
        "",
        "| program | target | measured | replayed | model (fs) | predicted | error | error, CPU before | ratio measured "
        "| ratio predicted | ratio error | relative | error |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in judged.rows.itertuples():
        lines.append(
            f"| {r.program} | {r.candidate} | {r.real_s:.3f} ({r.real_min_s:.3f}-{r.real_max_s:.3f}) | "
            f"{r.replay_s:.3f} | {r.fs_calibrated_s:.3f} | {_with_interval(r)} | "
            f"{percent(r.abs_error, signed=True)} | {percent(r.abs_error_cpu_before, signed=True)} | "
            f"{r.measured_ratio:.2f} | {r.predicted_ratio:.2f} | "
            f"{percent(r.ratio_error, signed=True)} | {r.relative_s:.3f} | {percent(r.relative_error, signed=True)} |")
    lines += ["", "Timed replays with calls that ended otherwise than traced: "
              + _mismatched(doc["records"], "replay", "mismatches") + "."]
    wrong = judged.pairs[~judged.pairs["right"]] if len(judged.pairs) else judged.pairs
    lines += ["", "## Rankings", "",
              f"{s['pairs_ranked_right']} of {s['pairs_compared']} pairs whose measured runtimes differ by more than "
              f"{100 * TARGETS.rank_gap:.0f}% are predicted in the right order. How far apart a pair measured is "
              "the median over rounds of the slower one's runtime over the faster one's in the same round, as for "
              "the ratios above: the rounds are interleaved so that the disk's drift falls on both alike."
              + _by_medians_part(s.get("pairs_by_medians"))]
    for r in wrong.itertuples():
        lines.append(f"- {r.program}: {r.faster} measured {100 * r.measured_gap:.0f}% faster than {r.slower} "
                     f"({percent(r.gap_of_medians, signed=True)} by their medians), predicted slower{_rounds_part(r)}.")
    worst = judged.rows.assign(size=judged.rows["abs_error"].abs()).nlargest(6, "size")
    lines += ["", "## Largest misses", ""]
    lines += ["Each miss split in two: the filesystem's part (modelled against the replay of the trace's calls, "
              "with the operation departing most) and the time outside it (predicted against the real runs less "
              "the replay); the two add up to the miss.", ""]
    lines += [_miss(r) for r in worst.itertuples()]
    lines += ["", "## Raw against calibrated, and where the CPU time was measured", "",
              ("The form the development set adopted, by its model (nothing is chosen on a held-out set). "
               if s.get("held_out") else
               "Both forms, each leave-one-program-out; the calibrated one is adopted (above) only where it is no "
               "worse than the raw one by any measure the targets name (median and largest error of runtimes and "
               "of ratios, pairs ranked right), and the adopted one is what `fsbm predict` uses. ")
              + "The time outside the filesystem starts from the CPU time of untraced runs "
              f"on {doc['traced_on']}: made in every round, beside the runs judged (the verdict's), or once, with "
              "the trace, before the rounds. The difference between the two is this machine's drift, not the "
              "model's error. In the rounds, the verdict takes " + _verdicts_runs(doc["records"]) + " (each "
              "group's CPU prices on every target scaled to match), as `fsbm predict` does for a recording made "
              "with `--replay-in`, the calls' CPU by group as a replay that brackets each call with the CPU clock "
              "shares it, scaled to the total of a replay without the brackets; *calls' CPU bracketed* takes the "
              "groups as the brackets counted them; *calls' CPU priced* takes "
              "the same runs less the calls' CPU fsbench prices; *all-warm "
              "runs* takes the runs beside them that start with every file read in, their calls' CPU priced warm "
              "(each an earlier verdict's source: docs/model-evidence.md).", "",
              "| CPU time measured | form | median error | largest | median ratio error | pairs right |",
              "|---|---|---|---|---|---|"]
    for source, forms in s["variants"].items():
        for name, v in forms.items():
            adopted = " (adopted)" if (source, name) == (s["cpu"], s["adopted"]) else ""
            lines.append(f"| {source} | {name}{adopted} | {100 * v['median_abs_error']:.1f}% | "
                         f"{100 * v['max_abs_error']:.1f}% | {percent(v['median_ratio_error'], digits=1)} | "
                         f"{v['pairs_ranked_right']} of {v['pairs_compared']} |")
    lines += _outside_section(doc, judged.rows)
    lines += _operations_section(judged.operations)
    lines += _cost_tables_section(doc)
    lines += workload_cases_section(doc)
    model = judged.model
    fitted_on = "the development set's runtimes" if s.get("held_out") else "every program's runtimes"
    lines += ["", f"## Calibration factor (fitted on {fitted_on})", "",
              "One factor for every filesystem: the multiple of count x cost that makes the runtimes (time outside "
              "plus factor x count x cost) nearest the measured ones, by the sum of squared log errors, each program "
              "weighing by the share of its runtime the filesystem's part is; "
              + ("the adopted form uses it." if model.calibrate else "the adopted form, the raw model, does not."),
              "", "| filesystem | factor | 90% interval |", "|---|---|---|"]
    for key, f in sorted((s.get("calibration_factors") or {}).items()):
        lines.append(f"| {'every filesystem' if key == '*' else key} | {f['factor']:.2f} | {f['low']:.2f}-{f['high']:.2f} |")
    band = model.errors_.get("recording", {"p5": float("nan"), "p95": float("nan")})
    lines += ["", f"Outside the filesystem: the CPU time of the program's untraced cold runs ({s['cpu']}), "
              f"less the CPU time of its calls on {doc['traced_on']} (fsbench's cpu_ns per call, each group's scaled "
              "by what the rounds' measuring replays there took: the same scale prices that group's CPU on every "
              "target), plus the wait for the files it reads from outside its work directory "
              "(executables, libraries: each round, a pair of cold runs that read the workload's own files in first, "
              "one of them those files too; the median of the pairs' differences, held between 0 and the time the "
              "files take to read cold), not fitted. "
              "`fsbm predict`'s 90% band for a recording is the prediction interval of the errors the recording "
              "made before the rounds gives, as a user's recording is made once before the runs it predicts (a t "
              "interval on log(1 + error), as many observations as programs) "
              f"({percent(band['p5'], signed=True)} to {percent(band['p95'], signed=True)}).", ""]
    return "\n".join(lines) + "\n"

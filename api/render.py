"""Tables people read in a terminal: scratch filesystems, fsbench results, fits, runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Optional

from rich.markup import escape
from rich.table import Table

from fsbm.units import percent, readable_bytes

if TYPE_CHECKING:  # types only: the cost table's models take a tenth of a second to build
    from fsbm.documents import Prediction
    from fsbm.microbench.scratch import ScratchFs
    from fsbm.predictor.cost_table import Case, CostTable, WarmShift
    from fsbm.predictor.park_lipton import ParkLiptonFit
    from fsbm.store import RunRecord


# (label, benchmark, size or None for metadata, order, cache[, forward gap]): the costs a
# person compares candidates by first (the demo's table, the report's).
HEADLINE: tuple[tuple[Any, ...], ...] = (
    ("create (warm)", "create", None, "creation", "warm"),
    ("unlink (warm)", "unlink", None, "creation", "warm"),
    ("stat, random order (cold)", "stat_file", None, "random", "cold"),
    ("readdir of 100 (cold)", "readdir", None, "random", "cold"),
    ("mkdir (warm)", "mkdir", None, "creation", "warm"),
    ("read 4K random (cold)", "read", 4096, "random", "cold"),
    ("read 4K sorted lookups, 64K apart (cold)", "read", 4096, "forward", "cold", 65536),
    ("read 1M sequential (cold)", "read", 1048576, "sequential", "cold"),
    ("read a mapped 64K region (warm: the faults)", "mmap_read", 65536, "random", "warm"),
    ("overwrite 4095 B random (cold, RMW)", "overwrite", 4095, "random", "cold"),
    ("write 64K sequential", "write", 65536, "sequential", "warm"),
    ("fsync after 4K write", "fsync", 4096, "sequential", "warm"),
    ("fdatasync after 4K rewrite", "fdatasync_overwrite", 4096, "sequential", "warm"),
    ("copy a 64K file (cold source)", "copy", 65536, "sequential", "cold"),
)


def headline_costs(table: CostTable) -> list[tuple[str, Case | None]]:
    """Each HEADLINE case's label and the table's measurement of it (None: not measured)."""
    return [(label, table.entry(bench, order, cache, size, *gap)) for label, bench, size, order, cache, *gap in HEADLINE]


@contextmanager
def progress_bar(console: Any, description: str, show: bool = True) -> Iterator[Callable[..., None]]:
    """A progress bar on `console`; yields update(done, total[, label]) for a tool's progress callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[case]}"), console=console,
                  transient=True, disable=not show) as progress:
        task = progress.add_task(description, total=None, case="")

        def update(done: int, total: int, label: str = "") -> None:
            progress.update(task, completed=done, total=total, case=escape(label))

        yield update


def plain_cells(table: Table) -> tuple[list[str], list[list[str]]]:
    """A table's headers and rows as plain text, its markup taken out (for CSV)."""
    from rich.text import Text

    def plain(cell: Any) -> str:
        if isinstance(cell, Text):
            return cell.plain
        return Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)

    columns = table.columns
    headers = [plain(c.header) for c in columns]
    rows = [[plain(cell) for cell in cells] for cells in zip(*(c.cells for c in columns))]
    return headers, rows


def format_ns(ns: float | None) -> str:
    """Latency with a unit a person reads at a glance: 850 ns, 12.3 us, 4.56 ms, 1.20 s."""
    if ns is None:
        return "-"
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if abs(ns) >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.0f} ns"


def format_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for scale, unit in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def scratch_table(filesystems: list[ScratchFs]) -> Table:
    table = Table(title="scratch filesystems")
    for column in ("name", "candidate", "size", "status", "mount point", "device", "aging"):
        table.add_column(column)
    for fs in filesystems:
        device = fs.loop_device or "-"
        if fs.loop_device:
            device += " (direct I/O)" if fs.direct_io else " (buffered)"
        table.add_row(escape(fs.name), escape(fs.candidate), format_bytes(fs.size_bytes), escape(fs.status),
                      escape(str(fs.mount_point)), device, escape(fs.aging_state))
    return table


def _cell(r: dict[str, Any]) -> str:
    lat = r["latency_ns"]
    mark = " *" if r.get("bimodal") else ""
    return f"{format_ns(lat['p50'])} / {format_ns(lat['p99'])}{mark}"


def results_tables(doc: dict[str, Any]) -> list[Table]:
    """Metadata: a row per benchmark; data: a row per benchmark and size.  Cells: p50 / p99."""
    results = doc.get("results", [])
    env = doc.get("environment", {})
    title = escape(f"{env.get('fs_type', '?')} at {env.get('mount_point', '?')}: p50 / p99 per operation (* bimodal)")
    tables = []
    for family in ("meta", "data"):
        rows = [r for r in results if r["family"] == family]
        if not rows:
            continue
        columns = sorted({(r["order"], r["cache"]) for r in rows}, key=lambda oc: (oc[1], oc[0]))
        table = Table(title=f"{title}: {'metadata' if family == 'meta' else 'data'}")
        table.add_column("operation")
        if family == "data":
            table.add_column("size", justify="right")
        for order, cache in columns:
            table.add_column(f"{order}\n{cache}", justify="right")
        keys: list[tuple[str, int | None]] = []
        for r in rows:
            if (r["bench"], r["size"]) not in keys:
                keys.append((r["bench"], r["size"]))
        for bench, size in keys:
            cells = []
            for order, cache in columns:
                match = next((r for r in rows if r["bench"] == bench and r["size"] == size
                              and r["order"] == order and r["cache"] == cache), None)
                cells.append(_cell(match) if match else "")
            lead = [bench] + ([format_bytes(size)] if family == "data" else [])
            table.add_row(*lead, *cells)
        tables.append(table)
    return tables


def fits_table(fits: list[ParkLiptonFit]) -> Table:
    table = Table(title="Park and Lipton fits: t = S + ceil(b/d)*D + C*b (+ R if partial overwrite), 95% intervals")
    for column in ("benchmark", "order", "cache", "S", "D per block", "C per KiB", "R (RMW)", "R²"):
        table.add_column(column, justify="right" if column not in ("benchmark", "order", "cache") else "left")

    def show(fit: ParkLiptonFit, term: str, scale: float = 1.0) -> str:
        if term not in fit.params:
            return "n/a" if term in fit.omitted else "-"
        e = fit.params[term]
        return f"{format_ns(e.value * scale)} ±{format_ns((e.ci95_high - e.value) * scale)}"

    for fit in fits:
        table.add_row(fit.bench, fit.order, fit.cache, show(fit, "S"), show(fit, "D"), show(fit, "C", 1024.0),
                      show(fit, "R"), f"{fit.r_squared:.3f}")
    return table


def runs_table(runs: list[RunRecord]) -> Table:
    table = Table(title="runs in the results store")
    for column in ("id", "kind", "label", "status", "started", "measurements"):
        table.add_column(column)
    for run in runs:
        table.add_row(str(run.id), run.kind, run.label or "", run.status, run.started, str(run.measurements))
    return table


def profile_rows(body: dict[str, Any]) -> list[tuple[str, str]]:
    """Tang's table 5.3 and the numbers a person looks at first, as (statistic, value)."""
    tang = body["tang"]
    rows = [(f"{row} calls", percent(tang[f"{row}_pct"] / 100, digits=1))
            for row in ("read", "write", "create", "delete", "mkdir", "rmdir", "readdir", "getattr", "lookup")]
    rows.append(("reads sequential / random",
                 f"{percent(tang['reads_sequential_pct'] / 100, digits=1)} / "
                 f"{percent(tang['reads_random_pct'] / 100, digits=1)}"))
    rows.append(("writes sequential / random",
                 f"{percent(tang['writes_sequential_pct'] / 100, digits=1)} / "
                 f"{percent(tang['writes_random_pct'] / 100, digits=1)}"))
    rows.append(("open files (mean ± std)", f"{tang['open_files_mean']:.2f} ± {tang['open_files_std']:.2f}"))
    ns = body["namespace"]
    rows.append(("files / directories touched", f"{ns['files_touched']:,} / {ns['directories_touched']:,}"))
    rows.append(("working set", readable_bytes(body["working_set_bytes"])))
    runs = body["runs"]
    if runs.get("count"):
        rows.append(("runs entire / sequential / random",
                     f"{runs['entire']} / {runs['sequential']} / {runs['random']}"))
    io = body["timing"]["inside_outside"]
    if io.get("known"):
        rows.append(("time inside the filesystem", f"{format_ns(io['inside_ns'])} of {format_ns(io['actor_span_ns'])}"))
    points = body["reuse"]["points"]
    if points and body["reuse"]["block_reads"]:
        half = next((p for p in points if p["hit_fraction"] >= 0.5 * points[-1]["hit_fraction"]), points[-1])
        rows.append(("page cache for half the best hit ratio", readable_bytes(half["cache_bytes"])))
        rows.append(("best block-read hit ratio", percent(points[-1]["hit_fraction"], digits=1)))
        sampling = body["reuse"].get("sampling")
        if sampling:
            rows.append(("reuse curve sampled (SHARDS)", f"{percent(sampling['rate'], digits=1)} of blocks, hit ratios "
                                                         f"± {100 * sampling['hit_fraction_error']:.1f} points"))
    return rows


def _profile_title(body: dict[str, Any]) -> str:
    return f"{body.get('source') or ''} ({body['events']:,} events, {body['protocol']})"


def profile_table(body: dict[str, Any]) -> Table:
    """Tang's table 5.3 and the numbers a person looks at first."""
    table = Table(title=escape(f"workload profile: {_profile_title(body)}"), show_header=False)
    table.add_column("statistic")
    table.add_column("value", justify="right")
    for statistic, value in profile_rows(body):
        table.add_row(statistic, value)
    return table


def profile_comparison(rows: list[Any], a: dict[str, Any], b: dict[str, Any], a_label: str, b_label: str) -> Table:
    """Two profiles' statistics side by side (compare.compare_profiles); the rows where they
    differ are marked."""
    table = Table(title="two workload profiles")
    table.add_column("statistic")
    table.add_column(escape(f"A: {a_label}\n{_profile_title(a)}"), justify="right")
    table.add_column(escape(f"B: {b_label}\n{_profile_title(b)}"), justify="right")
    for row in rows:
        table.add_row(row.statistic, row.a or "-", row.b or "-", style="" if row.a == row.b else "bold")
    return table


def file_sizes_text(sizes: tuple[int, ...] | list[int], requests: tuple[int, ...] | list[int] = ()) -> str:
    """A case's mix of file sizes (a *_mix case's) and of request sizes (write_new_mix's, or
    a sync's bytes written in a workload's requests), as a listing of cases says it; empty
    where it has neither."""
    said = [f"files of {', '.join(map(str, sizes))} B"] if sizes else []
    return ", ".join(said + ([f"requests of {', '.join(map(str, requests))} B"] if requests else []))


def case_files_text(bench: str, files: int | None) -> str:
    """How many files a case ran among, as a listing of cases says it after its other words:
    a *_entries case's directories of that many entries (readdir_entries, unlink_entries),
    any other's count of files; empty for fsbench's own count."""
    if not files:
        return ""
    return f" in directories of {files} entries" if bench.endswith("_entries") else f" among {files} files"


def cost_table_comparison(rows: list[Any], a_label: str, b_label: str, overall: float | None,
                          warm: WarmShift | None = None) -> Table:
    """Two cost tables' cases side by side: each one's mean latency, and B over A; under them,
    how far the warm cases moved (cost_table.WarmShift, where given): what the processor's
    speed in the minutes each table was measured accounts for."""
    from fsbm.predictor.cost_table import UNPINNED

    summary = f"; B over A, geometric mean of the cases both measured: {overall:.2f}" if overall else ""
    caption = (f"the {warm.cases} warm cases, served from memory (the processor's speed, no device): B over A "
               f"{warm.ratio:.2f} at the median, each {100 * warm.spread:.0f}% either way at the median") if warm else None
    table = Table(title=escape(f"two cost tables{summary}"), caption=escape(caption) if caption else None)
    for column in ("case", "size", "order", "cache", f"A: {a_label}", f"B: {b_label}", "B / A"):
        table.add_column(escape(column), justify="left" if column in ("case", "order", "cache") else "right")
    for row in rows:
        ratio = row.ratio
        shown = "-" if ratio is None else f"{ratio:.2f}"
        if ratio is not None and not 0.8 <= ratio <= 1.25:
            shown = f"[bold]{shown}[/]"
        mix = f", {file_sizes_text(row.file_sizes, row.request_sizes)}" if row.file_sizes or row.request_sizes else ""
        mix += ("," + case_files_text(row.bench, row.files)) if row.files else ""
        mix += ", unpinned" if row.placement == UNPINNED else ""
        table.add_row(escape(f"{row.bench} ({row.op}{mix})"), format_bytes(row.size) if row.size else "",
                      escape(row.order), row.cache, format_ns(row.a_ns) if row.a_ns is not None else "-",
                      format_ns(row.b_ns) if row.b_ns is not None else "-", shown)
    return table


def documents_table(records: list[Any], title: str) -> Table:
    """Stored documents of one kind: id, name, when, and size."""
    table = Table(title=escape(title))
    for column in ("id", "name", "created", "size"):
        table.add_column(column, justify="right" if column in ("id", "size") else "left")
    for record in records:
        table.add_row(str(record.id), escape(record.name or ""), record.created, format_bytes(record.bytes))
    return table


def replay_table(doc: dict[str, Any]) -> Table:
    """A replay: runtime, and per operation its count, latency and errors against the trace."""
    table = Table(title=escape(f"replay ({doc['mode']}, {doc.get('cache', '?')} cache) of "
                               f"{doc['operations_run']:,} operations: {format_ns(doc['runtime_ns'])}"))
    for column in ("operation", "count", "p50", "p99", "total", "failed as traced", "mismatched"):
        table.add_column(column, justify="left" if column == "operation" else "right")
    for name, entry in doc["operations"].items():
        lat, errors = entry["latency_ns"], entry["errors"]
        mismatched = errors["failed_unexpectedly"] + errors["succeeded_unexpectedly"] + errors["failed_differently"]
        table.add_row(name, f"{entry['count']:,}", format_ns(lat["p50"]), format_ns(lat["p99"]),
                      format_ns(lat["total"]), f"{errors['failed_as_traced']:,}",
                      f"[red]{mismatched:,}[/]" if mismatched else "0")
    return table


def _layout_rows(layout: dict[str, Any]) -> list[str]:
    free = layout["free_space"]
    return [
        "-" if layout["layout_score"] is None else f"{layout['layout_score']:.4f}",
        f"{layout['extents_per_file_mean']:.2f}",
        f"{layout['extents_per_file_max']:,}",
        f"{free['extents']:,}" if free["supported"] else "-",
        f"{free['mean_extent_bytes'] / 2**20:.2f} MiB" if free["supported"] else "-",
        f"{100 * free['fraction_in_extents_of_1MiB_or_more']:.1f}%" if free["supported"] else "-",
    ]


def aging_table(doc: dict[str, Any]) -> Table:
    """Layout before and after aging: Smith and Seltzer's score, extents, free space."""
    table = Table(title=escape(f"aging: {doc['files']:,} files, {doc['bytes'] / 2**20:.0f} MiB, "
                               f"{doc['rounds_completed']} of {doc['rounds']} rounds, {doc['seconds']:.1f} s"))
    for column in ("", "before", "after"):
        table.add_column(column, justify="left" if not column else "right")
    labels = ("layout score (1 = contiguous)", "extents per file, mean", "extents per file, max",
              "free-space extents", "mean free extent", "free space in extents >= 1 MiB")
    for label, before, after in zip(labels, _layout_rows(doc["before"]), _layout_rows(doc["after"])):
        table.add_row(label, before, after)
    return table


def probe_table(doc: dict[str, Any]) -> Table:
    """Each probe's answer, with how it was found."""
    table = Table(title=escape(f"filesystem parameters of {doc['target']}"))
    for column in ("parameter", "value", "how", "time"):
        table.add_column(column, justify="right" if column in ("value", "time") else "left")
    rows = {"block-size": [("block size", "block_size_bytes", "block_size_method"),
                           ("page-cache transfer unit", "transfer_unit_bytes", "transfer_unit_method")],
            "readahead": [("readahead depth", "readahead_bytes", "method")],
            "direct-blocks": [("direct blocks per inode", "direct_blocks", "direct_blocks_method")],
            "name-cache": [("stat, name and inode cached", "stat_random_warm_ns", "method"),
                           ("stat, caches dropped", "stat_random_cold_ns", "method")],
            "cache-size": [("page cache (Shenoy)", "page_cache_bytes", "method"),
                           ("page cache (Tang's binary search)", "binary_search_bytes", "method")]}
    for probe, result in doc["probes"].items():
        for label, key, how in rows.get(probe, []):
            value = result.get(key)
            shown = "-" if value is None else (format_bytes(value) + "B" if key.endswith("_bytes") else
                                               format_ns(value) if key.endswith("_ns") else str(value))
            table.add_row(label, shown, escape(result.get("error") or result.get("skipped") or result.get(how, "")),
                          f"{result.get('seconds', 0):.2f} s")
    return table


def format_seconds(value: float | None) -> str:
    """Seconds with a unit a person reads at a glance (format_ns), '-' for none."""
    return "-" if value is None else format_ns(value * 1e9)


# Candidates predicted less than this share of the slower one's time apart are called too
# close: the terminal's verdict and the report's headline both say so rather than "choose".
CLOSE_CALL = 0.05


def ranking_sentence(ranking: Any) -> str:
    """The ranking in one plain sentence: which candidate, how much time it saves over the next
    (or that the two are too close to call, CLOSE_CALL, still in the model's order), how sure;
    references (tmpfs) only as a yardstick."""
    if not ranking or not ranking.best:
        return ""
    saves, sure = ranking.saves or 0, f"confidence {100 * (ranking.confidence or 0):.0f}%"
    if not ranking.runner_up:
        sentence = f"{ranking.best} is the only candidate that keeps its data"
    elif saves < CLOSE_CALL:
        sentence = (f"{ranking.best} and {ranking.runner_up} are predicted within {100 * saves:.0f}% of each other, "
                    f"{ranking.best} first: too close to call ({sure})")
    else:
        sentence = f"{ranking.best} is predicted to take {100 * saves:.0f}% less time than {ranking.runner_up} ({sure})"
    if ranking.references:
        sentence += f"; {', '.join(ranking.references)} keeps nothing across a reboot: a yardstick, not a choice"
    return sentence


def outside_note(prediction: Prediction) -> str:
    """What the time outside the filesystem rests on, or "" where nothing says: one line, and
    a line more for each reading of a trace read more than one way, saying how it told its own."""
    if not prediction.outside_evidence:
        return ""
    lines = [f"time outside the filesystem: {prediction.outside_evidence}"]
    lines += [f"  {r.reading}, {r.seconds:.3f} s: {r.evidence}"
              for r in prediction.outside_readings]
    return "\n".join(lines)


def prediction_table(prediction: Prediction) -> Table:
    """Per candidate: predicted runtime with its 90% interval, the split, the top operations."""
    if not prediction.validated:
        calibrated = "not validated here: intervals from the cost measurements alone; run `fsbm validate`"
    else:
        factor = prediction.candidates[0].fs_factor.factor if prediction.candidates else 1.0
        calibrated = (f"calibrated: count x cost x {factor:.2f}" if prediction.calibrated
                      else "raw model, which validated better than calibrated")
    ranking = prediction.verdict_ranking
    caption = ranking_sentence(ranking)
    table = Table(title=f"predicted runtime, {prediction.start} start ({calibrated})", caption=escape(caption) or None)
    table.add_column("candidate")
    if prediction.absolute:
        table.add_column("runtime (90%)", justify="right")
        table.add_column("outside", justify="right")
    # Without the time outside, the filesystem's part is the prediction, with its interval.
    table.add_column("in the filesystem" if prediction.absolute else "in the filesystem (90%)", justify="right")
    if prediction.measured:
        table.add_column(f"relative to {prediction.measured.on}", justify="right")
    table.add_column("where the filesystem time goes")
    order = ranking.order if ranking else [c.candidate for c in prediction.candidates]
    for entry in sorted(prediction.candidates, key=lambda c: order.index(c.candidate)):
        top = sorted(entry.breakdown_s.items(), key=lambda kv: -kv[1])[:3]
        total = entry.fs_s or 1.0
        split = ", ".join(f"{op} {100 * s / total:.0f}%" for op, s in top if s > 0)
        cells = [escape(entry.candidate)]
        if prediction.absolute:
            cells += [f"{format_seconds(entry.runtime_s)} ({format_seconds(entry.low_s)}-{format_seconds(entry.high_s)})",
                      format_seconds(entry.outside_s)]
        cells.append(format_seconds(entry.fs_s) if prediction.absolute else
                     f"{format_seconds(entry.fs_s)} ({format_seconds(entry.low_s)}-{format_seconds(entry.high_s)})")
        if prediction.measured:
            cells.append(f"{format_seconds(entry.relative_s)} ({format_seconds(entry.relative_low_s)} - "
                         f"{format_seconds(entry.relative_high_s)})")
        cells.append(escape(split))
        table.add_row(*cells)
    return table


def observed_table(prediction: Prediction, top: int = 6) -> Optional[Table]:
    """Per operation, what the trace's calls took where it was traced against what that
    candidate's cost table makes of them (count x cost); None without timed calls or without
    the traced candidate among the candidates."""
    traced = next((c for c in prediction.candidates if c.candidate == prediction.traced_on), None)
    if not prediction.observed_s or traced is None:
        return None
    modelled = traced.modelled_by_op()
    table = Table(title=f"the trace's own call durations on {traced.candidate}, against its cost table",
                  caption="as traced: strace -T or NFS reply times, tracing's share included (under strace, "
                          "15-100 us a call here)")
    told = prediction.told_s
    names = ("operation", "as traced", *(("less tracing",) if told else ()), f"count x cost on {traced.candidate}")
    for name in names:
        table.add_column(escape(name), justify="left" if name == "operation" else "right")
    for op, seconds in list(prediction.observed_s.items())[:top]:
        less = (format_seconds(told.get(op, 0.0)),) if told else ()
        table.add_row(escape(op), format_seconds(seconds), *less, format_seconds(modelled.get(op, 0.0)))
    return table


def validation_table(rows: Any, summary: dict[str, Any]) -> Table:
    """Measured against predicted, per program and target (leave-one-program-out)."""
    met = "targets met" if summary["targets_met"] else "targets NOT met"
    relative = (f"; relative form {100 * summary['median_relative_error']:.1f}% / "
                f"{100 * (summary['max_relative_error'] or 0):.1f}%" if summary.get("median_relative_error") is not None else "")
    caption = (f"median error {100 * summary['median_abs_error']:.1f}% (ratios "
               f"{100 * (summary['median_ratio_error'] or 0):.1f}%), largest {100 * summary['max_abs_error']:.1f}%"
               f"{relative}; intervals {summary['covered']}/{summary['intervals']}; "
               f"{summary['pairs_ranked_right']}/{summary['pairs_compared']} pairs ranked right: {met}")
    table = Table(title="validation: real runs against predictions", caption=caption)
    for name in ("program", "target", "measured", "replayed", "predicted", "error", "ratio error"):
        table.add_column(name, justify="left" if name in ("program", "target") else "right")
    for r in rows.itertuples():
        table.add_row(r.program, r.candidate, format_seconds(r.real_s), format_seconds(r.replay_s), format_seconds(r.predicted_s),
                      f"{100 * r.abs_error:+.0f}%", "-" if r.ratio_error != r.ratio_error else f"{100 * r.ratio_error:+.0f}%")
    return table

"""The purchase-decision report: one self-contained HTML page per prediction.

Its order is a reader's: the verdict first (which candidate, by how much, how sure), then
the predicted runtimes with their intervals, where the time goes, the workload in plain
words, how the answer moves with the page-cache size, the microbenchmark costs that
drove it, and predicted against measured wherever replays or real runs were kept.
Inline SVG and CSS only (charts.py): it opens offline, on a phone, and prints.
"""

from __future__ import annotations

import math
import platform
import time
from dataclasses import dataclass
from html import escape
from collections.abc import Sequence
from typing import Any, Optional

from fsbm import __version__
from fsbm.api import track_record
from fsbm.api.charts import IntervalBar, colours_for, interval_bars, log_lines, stacked_bars
from fsbm.api.render import CLOSE_CALL, format_ns, format_seconds, headline_costs
from fsbm.api.prediction_service import PredictionService
from fsbm.documents import verdict_field
from fsbm.predictor.estimator import RATIO_LOG_SD_PRIOR, runtime_seconds
from fsbm.predictor.model import CpuScales, price_workload
from fsbm.store import ResultsStore
from fsbm.units import percent, readable_bytes

TOP_OPERATIONS = 6      # the stacked chart shows these, the rest as "other"
TOP_LINES = 8           # priced classes shown per candidate
LATENCY_CHARTS = 4      # headline cases whose latency distributions are drawn


# -- what goes into a report ------------------------------------------------------------------


def cache_sweep(predictor: PredictionService, store: ResultsStore, prediction: dict[str, Any],
                profile: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """Each candidate's predicted runtime as the page cache grows, from 1 MiB to well past the
    workload's working set and this prediction's own cache size (calibration and time
    outside held as predicted)."""
    reuse = profile.get("reuse") or {}
    working_set = reuse.get("distinct_blocks", 0) * reuse.get("block_size", 4096)
    top = max(4 * working_set, 2 * prediction["cache_bytes"], 1 << 24)
    sizes = sorted({int(2 ** e) for e in range(20, int(math.log2(top)) + 1)} | {int(prediction["cache_bytes"])})
    sweep = {}
    at_once = prediction.get("concurrency", 1.0)  # the processes working at once (predict.concurrency)
    for entry in prediction["candidates"]:
        if entry.get("cost_table_id") is None:
            continue
        pricer = predictor.pricer(store, entry["cost_table_id"])
        factor = entry["fs_factor"]["factor"]
        sweep[entry["candidate"]] = [
            (size, runtime_seconds(entry["outside_s"], price_workload(
                profile, pricer, cache_bytes=size, start=prediction["start"],
                cpu_scales=CpuScales(prediction.get("cpu_scales") or {},
                                      prediction.get("traced_cpu_ns") or {})).total_ns / 1e9 / at_once, factor))
            for size in sizes]
    return sweep


def report_data(predictor: PredictionService, store: ResultsStore, prediction_id: int) -> dict[str, Any]:
    """Everything the page shows, gathered from the store (LookupError if the prediction is not there)."""
    found = store.document(prediction_id, "prediction")
    if found is None:
        raise LookupError(f"no prediction {prediction_id}")
    prediction = {**found[2], "id": prediction_id}
    profile = predictor.profile(store, prediction["profile_id"]) if prediction.get("profile_id") else None
    headlines, environments = {}, {}
    for entry in prediction["candidates"]:
        if entry.get("cost_table_id") is not None:
            table = predictor.pricer(store, entry["cost_table_id"]).table
            headlines[entry["candidate"]] = headline_costs(table)
            environments[entry["candidate"]] = {**table.environment, "measured_at": table.measured_at}
    observations = [body for _, _, body in store.documents("observation", name=str(prediction_id))]
    return {
        "prediction": prediction, "created": found[1], "profile": profile, "headline": headlines,
        "environments": environments,
        "sweep": cache_sweep(predictor, store, prediction, profile) if profile and prediction["absolute"] else {},
        "track_record": track_record.of_prediction(store, prediction),
        "observations": observations,
    }


def workload_report(profile: dict[str, Any]) -> str:
    """A page about a workload alone, before any candidate is measured (in the manner of
    Darshan's job summary): its operation mix and Tang's table, what its calls took as
    traced, its request sizes, the time between its calls, and its reuse curve."""
    source = profile.get("source") or "workload"
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = [
        f"<header><h1>What {escape(str(source))} does with its files</h1>"
        f'<p class="meta">{profile.get("events", 0):,} events ({escape(str(profile.get("protocol") or "?"))}); '
        f"report made {made} by fsbm {__version__} on {escape(platform.node())}. `fsbm predict` with "
        "--candidates says how long it would take on each filesystem.</p></header>",
        _profile_section(profile),
        _operations_section(profile),
        _sizes_section(profile),
    ]
    return _page(str(source), body)


def _operations_section(profile: dict[str, Any]) -> str:
    """Each operation's calls, failures and durations as traced (tracing's own cost included)."""
    operations = profile.get("operations") or {}
    if not operations:
        return ""
    order = sorted(operations, key=lambda op: -operations[op].get("count", 0))
    rows = "".join(
        f"<tr><td>{escape(op)}</td><td>{operations[op].get('count', 0):,}</td>"
        f"<td>{operations[op].get('failed', 0):,}</td>"
        f"<td>{format_ns((operations[op].get('latency_ns') or {}).get('p50'))}</td>"
        f"<td>{format_ns((operations[op].get('latency_ns') or {}).get('p99'))}</td></tr>" for op in order)
    return ("<section><h2>Its calls</h2><p>How many calls of each operation, how many failed, and how long they "
            "took as traced (a trace's durations hold what tracing cost each call).</p><div class=\"scroll\"><table>"
            "<thead><tr><th>operation</th><th>calls</th><th>failed</th><th>p50</th><th>p99</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div></section>")


def _sizes_section(profile: dict[str, Any]) -> str:
    """The request sizes of its reads and writes, and the time between its calls, as log2
    histograms drawn as lines."""
    operations = profile.get("operations") or {}
    sizes = [(op, _log2_points(operations[op]["request_size_log2"]))
             for op in ("read", "write") if operations.get(op, {}).get("request_size_log2")]
    timing = profile.get("timing") or {}
    gaps = [(label, _log2_points(timing[key]["histogram_log2"]))
            for label, key in (("start to start", "inter_arrival_ns"), ("end to start (think time)", "think_ns"))
            if (timing.get(key) or {}).get("histogram_log2")]
    figures = []
    if sizes:
        figures.append(_counts_figure("Request sizes", "request-sizes", sizes, readable_bytes,
                                      "calls by request size (log2 buckets)",
                                      "Calls per request size, by the power of two it is at least (calls that "
                                      "moved nothing, as reads at the end of a file do, at 1 B)."))
    if gaps:
        figures.append(_counts_figure("Time between calls", "gaps", gaps, format_ns,
                                      "gaps between one actor's calls (log2 buckets)",
                                      "One actor's calls, by the time from one to the next."))
    return f"<section><h2>Sizes and time</h2>{''.join(figures)}</section>" if figures else ""


def _log2_points(buckets: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """A log2 histogram's counts at each power of two from its first bucket to its last, the
    empty ones as 0 (a line drawn between two buckets must not say the ones between held
    calls); the bucket of 0 at 1."""
    counts: dict[int, float] = {}
    for b in buckets:
        k = max(int(b["lo"]), 1).bit_length() - 1
        counts[k] = counts.get(k, 0.0) + float(b["count"])
    return [(float(1 << k), counts.get(k, 0.0)) for k in range(min(counts), max(counts) + 1)] if counts else []


def _counts_figure(title: str, name: str, series: list[tuple[str, list[tuple[float, float]]]], x_fmt: Any,
                   description: str, caption: str) -> str:
    """Counts per log2 bucket, a line per series, under a heading."""
    chart = log_lines(name, series, x_fmt, lambda v: f"{v:,.0f}", description)
    return f"<h3>{escape(title)}</h3><figure>{chart}<figcaption>{escape(caption)}</figcaption></figure>"


def report_for_prediction(predictor: PredictionService, store: ResultsStore, prediction_id: int) -> str:
    return render(report_data(predictor, store, prediction_id))


# -- the page ----------------------------------------------------------------------------------


def _ranked(prediction: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """Candidates in predicted order, the ranking used, and the runtime field it ranks by."""
    field = verdict_field(prediction.get("absolute", True), bool(prediction.get("ranking")),
                          bool(prediction.get("relative_ranking")))
    ranking = (prediction.get("relative_ranking") if field == "relative_s" else prediction.get("ranking")) or {}
    entries = sorted(prediction["candidates"], key=lambda e: e.get(field) or 0.0)
    return entries, ranking, field


@dataclass(frozen=True)
class MeasuredRuns:
    """A candidate's real runs kept with a prediction: their median (the upper middle of an
    even number), fastest and slowest, in seconds."""

    median: float
    fastest: float
    slowest: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> "MeasuredRuns":
        ordered = sorted(seconds)
        return cls(ordered[len(ordered) // 2], ordered[0], ordered[-1])

    def apart_from(self, other: "MeasuredRuns") -> bool:
        """Whether the runs tell the two candidates apart: every run of one faster than every
        run of the other.  Where their ranges overlap, which median came first is the host's
        noise as much as the filesystems'."""
        return self.slowest < other.fastest or other.slowest < self.fastest


def _measured_runs(observations: list[dict[str, Any]]) -> dict[str, MeasuredRuns]:
    """Per candidate, the real runs kept with the prediction (not replays)."""
    return {o["candidate"]: MeasuredRuns.of(o["seconds"]) for o in observations
            if o.get("compare_with") == "runtime_s" and o.get("seconds")}


def _measured_sentence(measured: dict[str, MeasuredRuns], best: str, runner_up: Optional[str]) -> str:
    """What the real runs say about the choice: they outrank any model where they tell the two
    apart; where the ranges of their runs overlap, they cannot say which is faster."""
    shown = ", ".join(f"{escape(name)} {format_seconds(runs.median)}"
                      for name, runs in sorted(measured.items(), key=lambda kv: kv[1].median))
    sentence = f"Measured here (median of the real runs): {shown}."
    if runner_up and best in measured and runner_up in measured:
        ours, theirs = measured[best], measured[runner_up]
        faster = best if ours.median <= theirs.median else runner_up
        if not ours.apart_from(theirs):
            gap = percent(abs(ours.median - theirs.median) / max(ours.median, theirs.median))
            sentence += (f" The runs cannot tell {escape(best)} from {escape(runner_up)}: {escape(faster)}'s median "
                         f"was {gap} faster, but the ranges of their runs overlap.")
        elif faster == best:
            sentence += f" The runs agree: {escape(best)} was faster than {escape(runner_up)}."
        else:
            sentence += (f" <b>The runs disagree:</b> {escape(runner_up)} was faster than {escape(best)} "
                         f"in every run; trust the runs.")
    return sentence


def _verdict(prediction: dict[str, Any], record: Optional[track_record.TrackRecord],
             observations: Sequence[dict[str, Any]] = ()) -> str:
    entries, ranking, field = _ranked(prediction)
    by_name = {e["candidate"]: e for e in entries}
    references = set(ranking.get("references") or [])
    choices = [e for e in entries if e["candidate"] not in references]
    best = by_name.get(ranking.get("best") or "") or (choices or entries)[0]
    runner_up = (by_name.get(ranking.get("runner_up") or "") if ranking else
                 next((e for e in choices if e is not best), None))
    if runner_up is None:
        headline = f"{escape(best['candidate'])}: {format_seconds(best.get(field))} predicted."
    else:
        saves = ranking.get("saves")
        if saves is None:
            saves = 1 - (best.get(field) or 0.0) / (runner_up.get(field) or 1.0)
        confidence = ranking.get("confidence") or 0.0
        runner = escape(runner_up["candidate"])
        if saves < CLOSE_CALL:
            headline = (f"Too close to call: <b>{escape(best['candidate'])}</b> and <b>{runner}</b> are predicted "
                        f"within {percent(saves)} of each other. Choose on other grounds.")
        else:
            sure = ("very likely" if confidence >= 0.95 else "likely" if confidence >= 0.8 else
                    "more likely than not" if confidence >= 0.6 else "uncertain")
            headline = (f"Choose <b>{escape(best['candidate'])}</b>: predicted {format_seconds(best.get(field))}, "
                        f"it <b>takes {percent(saves)} less time</b> than {runner}, the next best. The model is "
                        f"{percent(confidence)} sure of that order ({sure}).")
    notes = []
    measured = _measured_runs(list(observations))
    if measured:
        notes.append(_measured_sentence(measured, best["candidate"], runner_up["candidate"] if runner_up else None))
    if references:
        notes.append(f"{', '.join(escape(r) for r in sorted(references))} keeps nothing across a reboot: it is "
                     "shown as a yardstick, never as the choice.")
    states = {e["candidate"]: _aging(e) for e in choices}  # a yardstick in memory has no layout to age
    if len(set(states.values())) > 1:
        notes.append("The candidates are not in the same state (" +
                     ", ".join(f"{escape(name)} {state}" for name, state in states.items()) +
                     "): an aged filesystem is slower than a fresh one of the same kind, so compare like with like.")
    if notes:
        headline += "</p><p>" + " ".join(notes)
    if record is not None:
        trust = record.sentence()
    else:
        trust = ("Predictions of this form have not been validated on this machine: the intervals cover only the "
                 "spread of the measured costs, and the confidence in the order assumes the predicted ratio of two runtimes is off "
                 f"by {percent(RATIO_LOG_SD_PRIOR)} (one standard deviation), not a figure measured here. Run "
                 "<code>fsbm validate</code> for measured error bars.")
    return f'<section class="verdict"><h2>Verdict</h2><p class="headline">{headline}</p><p>{trust}</p></section>'


def _colours(prediction: dict[str, Any]) -> dict[str, str]:
    """Each candidate's colour in every chart: by its place in the prediction."""
    return colours_for([e["candidate"] for e in prediction["candidates"]])


def _aging(entry: dict[str, Any]) -> str:
    state = str((entry.get("environment") or {}).get("aging_state") or "fresh")
    return "aged" if state.startswith("aged") or state.startswith("partly") else "fresh"


def _warnings(prediction: dict[str, Any]) -> str:
    """The prediction's warnings (a trace made while tracing ran unevenly), where it has any."""
    return "".join(f'<p class="warning" role="note"><strong>Warning:</strong> {escape(w)}.</p>'
                   for w in prediction.get("warnings") or [])


def _runtime_section(prediction: dict[str, Any]) -> str:
    entries, _, field = _ranked(prediction)
    # Where the time outside is not known the runtime is the filesystem's part, and so is its interval.
    low, high = ("relative_low_s", "relative_high_s") if field == "relative_s" else ("low_s", "high_s")
    colours = _colours(prediction)
    bars = [IntervalBar(e["candidate"], e[field], e.get(low) or e[field], e.get(high) or e[field], i == 0,
                        colours[e["candidate"]]) for i, e in enumerate(entries)]
    chart = interval_bars("runtime", bars, format_seconds, "predicted runtime per candidate with 90% intervals")
    rows = "".join(
        f"<tr><td>{escape(e['candidate'])}</td><td>{format_seconds(e.get(field))}</td>"
        f"<td>{format_seconds(e.get(low))} to {format_seconds(e.get(high))}</td><td>{format_seconds(e['outside_s'])}</td>"
        f"<td>{format_seconds(e['fs_s'])}</td><td>{escape(e['environment'].get('aging_state') or '-')}</td></tr>"
        for e in entries)
    form = {"runtime_s": "absolute form: time outside the filesystem plus count x cost",
            "relative_s": f"relative form: the runtime measured on {escape(prediction['measured']['on'])} scaled by "
                          "the modelled ratio" if prediction.get("measured") else "",
            "fs_s": "time inside the filesystem only: nothing in the workload tells the time outside it"}[field]
    evidence = prediction.get("outside_evidence")
    outside = f"<p>Time outside the filesystem: {escape(evidence)}.</p>" if evidence else ""
    readings = prediction.get("outside_readings") or []
    if readings:
        outside += "<ul>" + "".join(
            f"<li>{escape(r['reading'].capitalize())}: {format_seconds(r['seconds'])}, {escape(r['evidence'])}.</li>"
            for r in readings) + "</ul>"
    return (f'<section><h2>Predicted runtime</h2><p>{form}; bars are the prediction, whiskers its 90% interval, '
            f'{escape(prediction["start"])} start, page cache {readable_bytes(prediction["cache_bytes"])}.</p>{outside}'
            f'<figure>{chart}</figure><div class="scroll"><table><thead><tr><th>candidate</th><th>predicted</th>'
            f'<th>90% interval</th><th>outside the fs</th><th>in the fs</th><th>aging</th></tr></thead>'
            f'<tbody>{rows}</tbody></table></div></section>')


def _breakdown_section(prediction: dict[str, Any]) -> str:
    entries, _, _ = _ranked(prediction)
    totals: dict[str, float] = {}
    for e in entries:
        for op, s in e["breakdown_s"].items():
            totals[op] = totals.get(op, 0.0) + s
    top = [op for op, _ in sorted(totals.items(), key=lambda kv: -kv[1])[:TOP_OPERATIONS]]
    rows = []
    for e in entries:
        parts = {"outside the fs": e["outside_s"]} if prediction["absolute"] else {}
        parts.update({op: e["breakdown_s"].get(op, 0.0) for op in top})
        rest = sum(s for op, s in e["breakdown_s"].items() if op not in top)
        if rest > 0:
            parts["other operations"] = rest
        rows.append((e["candidate"], parts))
    chart = stacked_bars("breakdown", rows, format_seconds,
                         "where the predicted time goes, per candidate and operation")
    return ('<section><h2>Where the time goes</h2><p>Per candidate, the predicted time split by operation '
            '(calibrated), and the time the program spends outside the filesystem, which no filesystem changes.</p>'
            f'<figure>{chart}</figure></section>')


def _profile_words(profile: dict[str, Any]) -> str:
    tang, ns = profile.get("tang", {}), profile.get("namespace", {})
    mix = sorted(((k[:-4], v) for k, v in tang.items() if k.endswith("_pct") and not k.startswith(("reads_", "writes_"))
                  and v), key=lambda kv: -kv[1])
    said = ", ".join(f"{v:.0f}% {k}" for k, v in mix[:4] if v >= 1)
    sentences = [f"{tang.get('calls', profile.get('events', 0)):,} filesystem calls" + (f": {said}." if said else ".")]
    if tang.get("read_pct"):
        sentences.append(f"Reads are {tang.get('reads_sequential_pct', 0):.0f}% sequential.")
    if tang.get("write_pct"):
        sentences.append(f"Writes are {tang.get('writes_sequential_pct', 0):.0f}% sequential.")
    if ns:
        directories = ns.get("directories_touched", 0)  # none known from a capture's file handles
        where = f" in {directories:,} directories" if directories else ""
        sentences.append(f"It touches {ns.get('files_touched', 0):,} files{where}, "
                         f"{readable_bytes(ns.get('file_bytes_total') or 0)} of file data.")
    fsync = profile.get("fsync") or {}
    if fsync.get("count"):
        sentences.append(f"It calls fsync {fsync['count']:,} times, every {readable_bytes(fsync.get('bytes_written_per_fsync') or 0)} "
                         "written: durability is part of its cost.")
    if profile.get("working_set_bytes"):
        sentences.append(f"Its working set is {readable_bytes(profile['working_set_bytes'])}.")
    return " ".join(sentences)


def _profile_section(profile: Optional[dict[str, Any]]) -> str:
    if not profile:
        return "<section><h2>The workload</h2><p>The profile of this prediction is not in the store.</p></section>"
    tang = profile.get("tang", {})
    labels = [("read", "read_pct"), ("write", "write_pct"), ("create", "create_pct"), ("delete", "delete_pct"),
              ("mkdir", "mkdir_pct"), ("rmdir", "rmdir_pct"), ("readdir", "readdir_pct"), ("getattr", "getattr_pct"),
              ("lookup", "lookup_pct"), ("reads sequential", "reads_sequential_pct"),
              ("writes sequential", "writes_sequential_pct")]
    rows = "".join(f"<tr><td>{name}</td><td>{tang[key]:.1f}%</td></tr>" for name, key in labels if key in tang)
    if "open_files_mean" in tang:
        rows += f"<tr><td>open files, mean ± sd</td><td>{tang['open_files_mean']:.2f} ± {tang['open_files_std']:.2f}</td></tr>"
    reuse = profile.get("reuse") or {}
    points = [(p["cache_bytes"], 100 * p["hit_fraction"]) for p in reuse.get("points", []) if p["cache_bytes"] > 0]
    if not any(hit for _, hit in points):
        points = []  # no cache holds a block it reads again: a flat line at 0 says less than the sentence
    curve = (f"<figure>{log_lines('reuse', [('block-read hit ratio', points)], readable_bytes, lambda v: f'{v:.0f}%', 'reuse curve: hit ratio against page-cache size')}"
             "<figcaption>Reuse curve: the share of block reads a page cache of each size would hold (LRU)."
             + (f" Estimated from {percent(reuse['sampling']['rate'], digits=1)} of the blocks (SHARDS): each hit "
                f"ratio within about {100 * reuse['sampling']['hit_fraction_error']:.1f} points."
                if reuse.get("sampling") else "")
             + "</figcaption>"
             "</figure>" if points else "<p>The workload reads no file data twice: no reuse curve.</p>")
    return (f'<section><h2>The workload</h2><p class="source">{escape(profile.get("source") or "")}</p>'
            f'<p>{escape(_profile_words(profile))}</p><div class="two"><div><h3>Tang\'s table</h3>'
            f'<table class="narrow"><tbody>{rows}</tbody></table></div><div><h3>Reuse</h3>{curve}</div></div></section>')


def _sweep_section(prediction: dict[str, Any], sweep: dict[str, list[tuple[float, float]]]) -> str:
    if not sweep:
        return ""
    sizes = [size for size, _ in next(iter(sweep.values()))]
    # The choice is among the candidates that keep their data; a yardstick (tmpfs) is drawn, not chosen.
    references = [c for c in ((prediction.get("ranking") or {}).get("references") or []) if c in sweep]
    choices = [c for c in sweep if c not in references] or list(sweep)
    winners = [min(choices, key=lambda c: sweep[c][i][1]) for i in range(len(sizes))]
    changes = [(sizes[i], winners[i - 1], winners[i]) for i in range(1, len(sizes)) if winners[i] != winners[i - 1]]
    apart = (f" ({', '.join(escape(r) for r in references)}, a yardstick that keeps nothing across a reboot, left "
             "out)" if references and len(choices) < len(sweep) else "")
    if not changes:
        said = (f"{escape(winners[0])} is predicted fastest{apart} at every page-cache size from {readable_bytes(sizes[0])} "
                f"to {readable_bytes(sizes[-1])}: the choice does not depend on how much memory the machine has.")
    else:
        said = f"The ranking{apart} changes with the page cache: " + "; ".join(
            f"from {readable_bytes(size)}, {escape(new)} overtakes {escape(old)}" for size, old, new in changes) + "."
    chart = log_lines("cache-sweep", list(sweep.items()), readable_bytes, format_seconds,
                      "predicted runtime against page-cache size per candidate", marker_x=prediction["cache_bytes"],
                      colours=_colours(prediction))
    return (f'<section><h2>If the machine had more or less memory</h2><p>{said}</p><figure>{chart}</figure></section>')


def _microbench_section(prediction: dict[str, Any], headline: dict[str, list[tuple[str, Any]]]) -> str:
    entries, ranking, _ = _ranked(prediction)
    # The two the verdict weighs against each other (never a yardstick), else the two fastest.
    named = [e for name in (ranking.get("best"), ranking.get("runner_up")) for e in entries if e["candidate"] == name]
    drivers = []
    for e in named or entries[:2]:
        lines = sorted(e["lines"], key=lambda line: -line["total_ns"])[:TOP_LINES]
        rows = "".join(f"<tr><td>{escape(line['op'])}</td><td>{escape(line['detail'])}</td>"
                       f"<td>{line['count']:,.0f}</td><td>{format_ns(line['ns_each'])}</td>"
                       f"<td>{format_seconds(line['total_ns'] / 1e9)}</td><td class=\"src\">{escape(line['source'])}</td></tr>"
                       for line in lines)
        drivers.append(f"<h3>{escape(e['candidate'])}: the costliest classes of calls</h3><div class=\"scroll\"><table>"
                       "<thead><tr><th>op</th><th>class</th><th>calls</th><th>each</th><th>total (raw)</th>"
                       f"<th>measured by</th></tr></thead><tbody>{rows}</tbody></table></div>")
    names = [e["candidate"] for e in entries if e["candidate"] in headline]
    costs = ""
    if names:
        head = "".join(f"<th>{escape(n)}</th>" for n in names)
        body = ""
        for i, (label, *_rest) in enumerate(headline[names[0]]):
            cells = []
            for n in names:
                entry = headline[n][i][1]
                cells.append(f"<td>{format_ns(entry.latency_ns.p50) if entry else '-'}</td>")
            body += f"<tr><td>{escape(label)}</td>{''.join(cells)}</tr>"
        costs = (f"<h3>Headline fsbench costs (p50)</h3><div class=\"scroll\"><table><thead><tr><th>operation</th>{head}"
                 f"</tr></thead><tbody>{body}</tbody></table></div>")
    return ('<section><h2>The measurements behind it</h2><p>Each prediction is a sum of calls times what fsbench '
            'measured each call to cost on that candidate; these are the terms that weigh most.</p>'
            + "".join(drivers) + costs + "</section>")


def _distribution_cases(prediction: dict[str, Any], headline: dict[str, list[tuple[str, Any]]],
                        names: list[str]) -> list[int]:
    """Which headline cases to draw: for each operation in order of the time the best candidate
    spends in it, the first headline case of it that some candidate measured with a histogram;
    then the rest in their order, up to LATENCY_CHARTS."""
    labels = headline[names[0]]
    drawable = [i for i in range(len(labels)) if any((case := headline[n][i][1]) is not None and case.histogram
                                                     for n in names)]
    weights = _ranked(prediction)[0][0].get("breakdown_s") or {}
    chosen = []
    for op in sorted(weights, key=lambda op: -weights[op]):
        first = next((i for i in drawable if any(headline[n][i][1] is not None and headline[n][i][1].op == op
                                                 for n in names)), None)
        if first is not None and first not in chosen:
            chosen.append(first)
    chosen += [i for i in drawable if i not in chosen]
    return chosen[:LATENCY_CHARTS]


def _cumulative(histogram: Sequence[Any]) -> list[tuple[float, float]]:
    """A log-linear histogram as its CDF: the share of calls (%) done by each bucket's upper bound."""
    total = sum(bucket.count for bucket in histogram)
    points, done = [], 0
    for bucket in histogram:
        done += bucket.count
        points.append((float(bucket.hi_ns), 100 * done / total))
    return points


def _latency_section(prediction: dict[str, Any], headline: dict[str, list[tuple[str, Any]]]) -> str:
    """How each candidate's calls of the cases that weigh most spread: their latency CDFs, from
    fsbench's log-linear histograms, one colour per candidate as in every chart, with p50,
    p99 and p99.9."""
    names = [e["candidate"] for e in _ranked(prediction)[0] if e["candidate"] in headline]
    if not names:
        return ""
    colours = _colours(prediction)
    figures = []
    for i in _distribution_cases(prediction, headline, names):
        label = headline[names[0]][i][0]
        measured = [(n, case) for n in names if (case := headline[n][i][1]) is not None and case.histogram]
        chart = log_lines(f"latency-{i}", [(n, _cumulative(case.histogram)) for n, case in measured], format_ns,
                          lambda v: f"{v:.0f}%", f"latency distribution of {label}: share of calls done within "
                          "each latency", colours=colours)
        rows = "".join(f"<tr><td>{escape(n)}</td><td>{format_ns(c.latency_ns.p50)}</td>"
                       f"<td>{format_ns(c.latency_ns.p99)}</td><td>{format_ns(c.latency_ns.p999)}</td></tr>"
                       for n, c in measured)
        figures.append(f"<h3>{escape(label)}</h3><figure>{chart}<figcaption>The share of calls done within each "
                       "latency.</figcaption></figure><div class=\"scroll\"><table><thead><tr><th>candidate</th>"
                       f"<th>p50</th><th>p99</th><th>p99.9</th></tr></thead><tbody>{rows}</tbody></table></div>")
    if not figures:
        return ""
    return ("<section><h2>How the calls spread</h2><p>A cost is a mean; these are the distributions behind the "
            "cases that weigh most here, as fsbench measured them (a bucket per 1/16 of a power of two).</p>"
            + "".join(figures) + "</section>")


MACHINE_FIELDS = ("hostname", "kernel", "cpu_model", "cpus_online", "memory_bytes")


def _machine_section(environments: dict[str, dict[str, Any]]) -> str:
    """Where each candidate's costs were measured: the machine (one line where all share it,
    a warning where they do not) and each filesystem's device, options and size."""
    if not environments:
        return ""

    def machine(env: dict[str, Any]) -> str:
        memory = env.get("memory_bytes")
        return (f"{env.get('hostname') or '?'} (Linux {env.get('kernel') or '?'}; {env.get('cpu_model') or '?'}, "
                f"{env.get('cpus_online') or '?'} CPUs; {readable_bytes(memory) if memory else '?'} of memory)")

    machines = {machine(env) for env in environments.values()}
    if len(machines) == 1:
        said = f"Every candidate's costs were measured on {escape(machines.pop())}."
    else:
        each = "; ".join(f"{escape(n)} on {escape(machine(env))}" for n, env in environments.items())
        said = ("<b>The candidates' costs were measured on different machines</b>, so their differences hold the "
                f"machines' too: {each}.")
    rows = "".join(
        f"<tr><td>{escape(n)}</td><td>{escape(str(env.get('fs_type') or '-'))}</td>"
        f"<td>{escape(str(env.get('mount_source') or env.get('device') or '-'))}</td>"
        f"<td>{escape(str(env.get('mount_options') or '-'))}</td>"
        f"<td>{readable_bytes(env['fs_size_bytes']) if env.get('fs_size_bytes') else '-'}</td>"
        f"<td>{escape(str(env.get('aging_state') or '-'))}</td>"
        f"<td>{escape(str(env.get('measured_at') or '-'))}</td></tr>"
        for n, env in environments.items())
    return (f"<section><h2>Where it was measured</h2><p>{said}</p><div class=\"scroll\"><table><thead><tr>"
            "<th>candidate</th><th>filesystem</th><th>device</th><th>mount options</th><th>size</th><th>state</th>"
            f"<th>measured</th></tr></thead><tbody>{rows}</tbody></table></div></section>")


DOWNLOAD_COLUMNS = ("candidate", "runtime_s", "low_s", "high_s", "fs_s", "outside_s", "relative_s", "relative_low_s",
                    "relative_high_s")


def _downloads(prediction: dict[str, Any]) -> str:
    """The prediction as files to save, inside the page (data: links, so it stays whole): the
    document as JSON, and one row per candidate as CSV."""
    import base64
    import csv
    import io
    import json

    table = io.StringIO()
    writer = csv.writer(table)
    writer.writerow(DOWNLOAD_COLUMNS)
    for e in prediction["candidates"]:
        writer.writerow([e.get(column, "") if e.get(column) is not None else "" for column in DOWNLOAD_COLUMNS])

    def link(text: str, kind: str, name: str, label: str) -> str:
        data = base64.b64encode(text.encode()).decode()
        return f'<a download="{name}" href="data:{kind};base64,{data}">{label}</a>'

    stem = f"prediction-{prediction.get('id', 'fsbm')}"
    whole = link(json.dumps(prediction, indent=1), "application/json", f"{stem}.json", "JSON")
    rows = link(table.getvalue(), "text/csv", f"{stem}.csv", "CSV")
    return (f'<p class="downloads">Save this prediction: {whole} (the whole document) or {rows} '
            "(a row per candidate).</p>")


def _observed_section(prediction: dict[str, Any], observations: list[dict[str, Any]]) -> str:
    if not observations:
        return ""
    by_name = {e["candidate"]: e for e in prediction["candidates"]}
    colours = _colours(prediction)
    rows, bars = [], []
    for o in observations:
        entry = by_name.get(o["candidate"])
        if entry is None or not o["seconds"]:
            continue
        predicted = entry[o["compare_with"]]
        runs = MeasuredRuns.of(o["seconds"])
        error = predicted / runs.median - 1 if runs.median else None
        what = "filesystem time vs replay" if o["compare_with"] == "fs_s" else "runtime vs real run"
        rows.append(f"<tr><td>{escape(o['candidate'])}</td><td>{escape(o['kind'])}</td><td>{what}</td>"
                    f"<td>{format_seconds(predicted)}</td><td>{format_seconds(runs.median)} ({len(o['seconds'])} runs, "
                    f"{format_seconds(runs.fastest)}-{format_seconds(runs.slowest)})</td>"
                    f"<td>{'-' if error is None else f'{100 * error:+.0f}%'}</td></tr>")
        colour = colours[o["candidate"]]
        bars.append(IntervalBar(f"{o['candidate']} predicted", predicted, predicted, predicted, False, colour))
        bars.append(IntervalBar(f"{o['candidate']} {o['kind']}", runs.median, runs.fastest, runs.slowest, True,
                                colour))
    if not bars:
        return ""
    chart = interval_bars("observed", bars, format_seconds, "predicted against measured per candidate (whiskers: "
                                                      "fastest to slowest measurement)")
    return ('<section><h2>Predicted against measured</h2><p>Where the workload was also replayed or run on a '
            'candidate, the prediction next to what was measured (median).</p>'
            f'<figure>{chart}</figure><div class="scroll"><table><thead><tr><th>candidate</th><th>measured by</th>'
            '<th>compares</th><th>predicted</th><th>measured</th><th>error</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div></section>")


STYLE = """
:root{--ink:#1b1f24;--muted:#5b6570;--line:#d5dbe1;--accent:#0072B2;--bg:#fff}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:var(--ink);background:var(--bg)}main{max-width:60rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0}h2{font-size:1.25rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;
margin-top:2rem}h3{font-size:1rem;margin:1rem 0 .4rem}.meta,.source,figcaption,.src{color:var(--muted);font-size:.85rem}
.verdict{background:#eef5fb;border-left:5px solid var(--accent);padding:.6rem 1rem;margin-top:1rem}
.verdict h2{border:0;margin-top:0}.headline{font-size:1.15rem}figure{margin:.5rem 0;overflow-x:auto}
svg.chart{width:100%;max-width:30rem;height:auto;display:block}svg.chart text{font-family:inherit !important}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.3rem .5rem;
border-bottom:1px solid var(--line);vertical-align:top}th{background:#f6f8fa}table.narrow{width:auto}
.scroll{overflow-x:auto}.two{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,2fr);gap:1rem}.two>div{min-width:0}
code{background:#f6f8fa;padding:0 .2rem}.warning{background:#fdf3e1;border-left:5px solid #E69F00;padding:.5rem 1rem;margin-top:1rem}
@media (max-width:40rem){.two{grid-template-columns:1fr}body{font-size:15px}}
@media print{main{max-width:none}section,figure,table{break-inside:avoid}.verdict{background:none}
a{color:inherit;text-decoration:none}}
"""


def render(data: dict[str, Any]) -> str:
    """The report page for the data `report_data` gathered."""
    prediction = data["prediction"]
    workload = prediction.get("workload") or (data["profile"] or {}).get("source") or "workload"
    names = ", ".join(e["candidate"] for e in prediction["candidates"])
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = [
        f"<header><h1>Which filesystem for {escape(str(workload))}?</h1>"
        f'<p class="meta">Prediction {prediction["id"]} of {escape(data["created"])} on {escape(names)}; '
        f"report made {made} by fsbm {__version__} on {escape(platform.node())}.</p></header>",
        _verdict(prediction, data["track_record"], data["observations"]),
        _warnings(prediction),
        _runtime_section(prediction),
        _breakdown_section(prediction),
        _profile_section(data["profile"]),
        _sweep_section(prediction, data["sweep"]),
        _microbench_section(prediction, data["headline"]),
        _latency_section(prediction, data["headline"]),
        _machine_section(data.get("environments") or {}),
        _observed_section(prediction, data["observations"]),
        '<footer><p class="meta">How this is made: the workload\'s calls are counted by class (operation, request '
        "size, sequential or random, page-cache hit or miss from the reuse curve) and each class is priced with "
        "the cost fsbench measured on the candidate; time outside the filesystem is a recording's CPU time, or "
        "what a plain trace's own gaps between calls tell less what tracing added (said above). See "
        "docs/validation.md for how close such predictions come.</p>" + _downloads(prediction)
        + "</footer>",
    ]
    return _page(str(workload), body)


def _page(title: str, body: list[str]) -> str:
    """A whole page of sections: one file, nothing fetched."""
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>fsbm report: {escape(title)}</title><style>{STYLE}</style></head>"
            f"<body><main>{''.join(body)}</main></body></html>\n")

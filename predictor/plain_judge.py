"""Judging predictions from plain traces (api/plain_validation.py measures them): both forms,
runtimes and ratios to the traced filesystem, interval coverage, rankings, and how much two
quick cost tables of one candidate move a program's modelled filesystem time.

Every prediction is what `fsbm predict` says for the trace (predict.Workload and the runtime
model), with the cost tables and the tracing calibration measured in the same run.  The
development set is judged leave-one-program-out and fits the runtime model for plain traces
(its error bands, no factors); any other set is judged by that stored model alone.  Each
form is judged again against the runs with the host's processor held steady
(cpu_speed.steadied): not the verdict, but how much of each error was the processor's; and
on the traced filesystem against the untraced runs made beside the traces, which say how far
the host moved between the minutes of the traces and the rounds (_host_between).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from fsbm.predictor.confidence import Reliability, cost_log_sds, order_confidence, reliability
from fsbm.predictor.cost_table import CostTable, warm_shift
from fsbm.predictor.cpu_speed import moved_sentence
from fsbm.predictor.estimator import LEFT_OUT_INTERVALS, TABLE_COLUMN, RuntimeEstimator, predict_left_out
from fsbm.predictor.judge import (against_steady_runs, measured_pairs, provenance, real_by_round, real_runs,
                                  same_round_ratio, target_images_sentence)
from fsbm.predictor.model import price_workload
from fsbm.predictor.predict import Workload
from fsbm.predictor.pricing import Pricer
from fsbm.predictor.targets import TARGETS, form_bound, targets_sentence
from fsbm.predictor.unsteady_runs import unsteady_runs_section
from fsbm.documents import MIN_BARE_CALLS, Profile, Timeline
from fsbm.predictor.tracing import (OWN_MEDIAN_CAP_SHARE, STALLED_LEAN_NS, START_TO_START_PROGRAMS, UNTIMED_CAP_SHARE,
                                    TracingCalibration)
from fsbm.units import percent, percents

# A page cache every program of the suite fits in: the runs start cold, and none rereads more
# than this machine's memory.
CACHE_BYTES = 8 << 30


@dataclass
class PlainJudged:
    rows: pd.DataFrame
    pairs: pd.DataFrame
    reproducibility: pd.DataFrame
    summary: dict[str, Any]
    model: RuntimeEstimator  # the runtime model fitted on this set (or the one it was judged by)
    verdicts: pd.DataFrame  # every pair of targets of a program, per form: how sure, and right or not


def table_pricers(doc: dict[str, Any]) -> tuple[dict[str, Pricer], dict[str, list[Pricer]]]:
    """Per candidate: the per-case median table's pricer, and each measured table's."""
    median, each = {}, {}
    for name, bodies in doc["cost_table_runs"].items():
        tables = [CostTable.from_json(b, f"cost table of {name}") for b in bodies]
        median[name] = Pricer(CostTable.median_of(tables) if len(tables) > 1 else tables[0])
        each[name] = [Pricer(t) for t in tables]
    return median, each


# The forms judged: the model's rows of each (_suite) and the rows the judge shows them in.
# "untimed" is the absolute form from the same trace without its call durations (strace
# without -T), where the measurements have it.
FORMS = ("relative", "absolute", "untimed")


@dataclass(frozen=True)
class _Suite:
    """The measured programs priced on every target: the runtime model's rows of each form
    (relative_rows for the relative form), the real runtime each row is judged against, and
    the program of each.  `again` holds the absolute form's rows from each program's second
    trace, for the rows `traced_twice` marks (a program traced twice), in their order: the fit
    learns from them too (a new trace is another draw of tracing's speed), the judge does not
    judge them."""

    forms: dict[str, pd.DataFrame]
    real_s: np.ndarray
    programs: np.ndarray
    evidence: dict[str, str]  # per program, what its time outside rests on
    warnings: dict[str, str]  # per program whose trace was made while tracing ran unevenly, the warning
    fs_by_table: dict[tuple[str, str], list[float]]  # per (program, candidate): raw filesystem seconds by each table
    ops_by_table: dict[tuple[str, str], list[dict[str, float]]]  # the same, per operation
    again: pd.DataFrame
    traced_twice: np.ndarray  # per row: whether `again` holds a row for it

    def without(self, program: str) -> "_Suite":
        keep = self.programs != program
        return _Suite({form: rows[keep].reset_index(drop=True) for form, rows in self.forms.items()},
                      self.real_s[keep], self.programs[keep], self.evidence, self.warnings, self.fs_by_table,
                      self.ops_by_table,
                      self.again[keep[self.traced_twice]].reset_index(drop=True), self.traced_twice[keep])


def _table_log_diff(seconds: list[float]) -> float:
    """log of the first table's filesystem time over the second's; NaN without two."""
    return math.log(seconds[0] / seconds[1]) if len(seconds) > 1 and min(seconds[:2]) > 0 else float("nan")


def _suite(doc: dict[str, Any], pricers: dict[str, Pricer], each_pricers: dict[str, list[Pricer]], runs: dict,
           labels: dict[str, str], traced_name: str) -> _Suite:
    """The measured programs priced on every target, each row with how far a second table of
    its candidate moves its filesystem time (estimator.TABLE_COLUMN)."""
    tracing = TracingCalibration.from_json(doc.get("tracing_calibration") or {})
    names = list(labels)
    untimed = all("profile_untimed" in program for program in doc["programs"])
    forms: dict[str, list[pd.DataFrame]] = {form: [] for form in FORMS if form != "untimed" or untimed}
    real, programs, evidence, warnings, fs_by_table, ops_by_table = [], [], {}, {}, {}, {}
    again: list[pd.DataFrame] = []
    traced_twice: list[bool] = []
    for program in doc["programs"]:
        name = program["name"]
        for c in names:
            times = [price_workload(program["profile"], p, cache_bytes=CACHE_BYTES, start="cold")
                     for p in each_pricers[c]]
            fs_by_table[(name, c)] = [t.total_ns / 1e9 for t in times]
            ops_by_table[(name, c)] = [{op: ns / 1e9 for op, ns in t.by_op().items()} for t in times]
        diffs = [_table_log_diff(fs_by_table[(name, c)]) for c in names]

        def priced(key: str) -> Workload:
            return Workload.priced(program[key], [pricers[c] for c in names], cache_bytes=CACHE_BYTES, start="cold",
                                   traced_on=traced_name, tracing=tracing)

        workload = priced("profile")
        measured = statistics.median(runs[(name, labels[traced_name])])
        forms["absolute"].append(workload.rows.assign(**{TABLE_COLUMN: diffs}))
        forms["relative"].append(workload.relative_rows(names.index(traced_name), measured)
                                 .assign(**{TABLE_COLUMN: diffs}))
        if untimed:
            forms["untimed"].append(priced("profile_untimed").rows.assign(**{TABLE_COLUMN: diffs}))
        real += [statistics.median(runs[(name, labels[c])]) for c in names]
        programs += [name] * len(names)
        evidence[name] = workload.outside.evidence_in_full
        if workload.outside.warning:
            warnings[name] = workload.outside.warning
        traced_twice += ["profile_again" in program] * len(names)
        if "profile_again" in program:
            again.append(priced("profile_again").rows.assign(**{TABLE_COLUMN: diffs}))
    return _Suite({form: pd.concat(rows, ignore_index=True) for form, rows in forms.items()}, np.array(real),
                  np.array(programs), evidence, warnings, fs_by_table, ops_by_table,
                  pd.concat(again, ignore_index=True) if again else pd.DataFrame(), np.array(traced_twice, bool))


def plain_model(suite: _Suite) -> RuntimeEstimator:
    """The runtime model for plain traces, fitted on a measured suite: no calibration factor,
    and the errors of each form (the relative form's on the candidates it was not measured
    on; the absolute form's from every trace of a program), each program's from a fit without
    it."""
    frames, real, groups = [], [], []
    for form, rows in suite.forms.items():
        pick = ~rows["traced"].to_numpy(bool) if form == "relative" else np.ones(len(rows), bool)
        frames.append(rows[pick])
        real.append(suite.real_s[pick])
        groups.append(suite.programs[pick])
    if len(suite.again):
        frames.append(suite.again)
        real.append(suite.real_s[suite.traced_twice])
        groups.append(suite.programs[suite.traced_twice])
    return RuntimeEstimator(calibrate=False).fit(pd.concat(frames, ignore_index=True), np.concatenate(real),
                                                 groups=np.concatenate(groups))


def _parts(suite: _Suite, model: RuntimeEstimator | None) -> dict[str, dict[str, np.ndarray]]:
    """Each form's predictions of every row: by `model` where given (a model fitted on
    another set), else each program's by a model fitted on the others (LeaveOneGroupOut)."""
    if model is not None:
        return {form: model.predict_parts(rows) for form, rows in suite.forms.items()}
    forms = list(suite.forms)
    parts = predict_left_out(lambda held_out: plain_model(suite.without(held_out)),
                             [suite.forms[form] for form in forms], [suite.programs] * len(forms))
    return dict(zip(forms, parts))


def judge_plain(doc: dict[str, Any], model: RuntimeEstimator | None = None) -> PlainJudged:
    """Every program predicted on every target in each form, against its real runs.
    `model`: the runtime model fitted on the development set, for judging another set; None
    judges the set by leave-one-program-out and fits `PlainJudged.model` on all of it."""
    labels = {t["candidate"]: t["label"] for t in doc["targets"]}
    traced_label = doc["traced_on"]
    traced_name = next(name for name, label in labels.items() if label == traced_label)
    runs, by_round = real_runs(doc["records"]), real_by_round(doc["records"])
    median_pricers, each_pricers = table_pricers(doc)
    suite = _suite(doc, median_pricers, each_pricers, runs, labels, traced_name)
    parts = _parts(suite, model)
    forms = list(suite.forms)
    rows, repro = [], []
    for i, (name, candidate) in enumerate(zip(suite.programs, list(labels) * len(doc["programs"]))):
        label, real = labels[candidate], runs[(name, labels[candidate])]
        base = i - list(labels).index(candidate) + list(labels).index(traced_name)
        row = {"program": name, "target": label, "traced": candidate == traced_name, "real_s": suite.real_s[i],
               "real_min_s": min(real), "real_max_s": max(real), "fs_s": parts["absolute"]["fs"][i],
               "outside_s": parts["absolute"]["outside"][i],
               "measured_ratio": same_round_ratio(by_round, name, label, traced_label),
               "evidence": suite.evidence[name]}
        for form in forms:
            runtime = parts[form]["runtime"]
            row.update({f"{form}_s": runtime[i], f"{form}_low_s": parts[form]["low"][i],
                        f"{form}_high_s": parts[form]["high"][i],
                        f"{form}_ratio": runtime[i] / runtime[base] if runtime[base] else float("nan")})
        if "untimed" in forms:
            row["untimed_outside_s"] = parts["untimed"]["outside"][i]
        rows.append(row)
        # The raw model's filesystem time: what a second table of the same candidate moves.
        fs_by_table = suite.fs_by_table[(name, candidate)]
        if len(fs_by_table) > 1 and min(fs_by_table) > 0:
            first, second = suite.ops_by_table[(name, candidate)][:2]
            moved = max(set(first) | set(second), key=lambda op: abs(first.get(op, 0.0) - second.get(op, 0.0)))
            repro.append({"program": name, "target": label, "fs_s": fs_by_table,
                          "spread": max(fs_by_table) / min(fs_by_table) - 1,
                          # What the device's drift moved the program's own cold runs by, between rounds.
                          "rounds_spread": max(real) / min(real) - 1,
                          "moved_most": (moved, first.get(moved, 0.0), second.get(moved, 0.0))})
    frame = _with_errors(pd.DataFrame(rows), forms)
    pairs = pairs_by_form(frame, by_round, forms)
    reproducibility = pd.DataFrame(repro)
    summary = _summary(frame, pairs, reproducibility, forms)
    if "reproducibility" in summary:
        summary["reproducibility"]["warm"] = _warm_shifts(each_pricers, labels)
    steady = _cpu_steadied(frame, doc["records"], forms, traced_label)
    if steady:
        summary["cpu_steadied"] = steady
    between = _host_between(frame, doc, forms)
    if between:
        summary["host_between"] = between
    if suite.warnings:
        traced_rows = frame[frame["traced"]].set_index("program")
        summary["warned"] = [{"program": name, "warning": warning,
                              "absolute_error": float(traced_rows.loc[name, "absolute_error"]),
                              "absolute_covered": bool(traced_rows.loc[name, "absolute_covered"])}
                             for name, warning in suite.warnings.items()]
    judged_by = plain_model(suite) if model is None else model
    verdicts = _verdicts(suite, parts, by_round, labels, judged_by)
    for form in forms:
        summary[form]["verdicts"] = asdict(reliability_of(verdicts, form))
    traces = _trace_reproducibility(suite, labels)
    if len(traces):
        summary["trace_reproducibility"] = {"median": float(traces["spread"].median()),
                                            "largest": float(traces["spread"].max()), "n": int(len(traces)),
                                            "largest_at": str(traces.loc[traces["spread"].idxmax(), "where"])}
    if model is None:
        summary["intervals_from"] = LEFT_OUT_INTERVALS
    else:
        summary["intervals_from"] = model.intervals_from
    return PlainJudged(frame, pairs, reproducibility, summary, judged_by, verdicts)


def _with_errors(frame: pd.DataFrame, forms: list[str]) -> pd.DataFrame:
    """The rows with each form's error, interval coverage and ratio error against real_s
    and measured_ratio."""
    for form in forms:
        frame[f"{form}_error"] = frame[f"{form}_s"] / frame["real_s"] - 1
        frame[f"{form}_covered"] = (frame[f"{form}_low_s"] <= frame["real_s"]) & (frame["real_s"] <= frame[f"{form}_high_s"])
        frame[f"{form}_ratio_error"] = frame[f"{form}_ratio"] / frame["measured_ratio"] - 1
    return frame


def _cpu_steadied(frame: pd.DataFrame, records: list[dict], forms: list[str], traced_label: str) -> dict[str, Any] | None:
    """Each form's errors again, against the real runs with the host's CPU speed held steady
    (judge.against_steady_runs), and how far that speed moved: what part of the errors was the
    host's processor.  None where the runs have no CPU times."""
    traced = frame["traced"].astype(bool)
    steady = against_steady_runs(frame, records, "target", traced)
    if steady is None:
        return None
    frame = steady.frame
    by_round = real_by_round(steady.records)
    if "relative" in forms:
        traced_runtime = frame["program"].map(frame.loc[traced, "relative_s"].set_axis(frame.loc[traced, "program"]))
        frame["relative_ratio"] = frame["relative_s"] / traced_runtime
    frame["measured_ratio"] = [same_round_ratio(by_round, p, t, traced_label)
                               for p, t in zip(frame["program"], frame["target"])]
    frame = _with_errors(frame, forms)
    summary = _summary(frame, pairs_by_form(frame, by_round, forms), pd.DataFrame(), forms)
    return {**summary, "user_cpu_spread": steady.spread.to_json()}


def _host_between(frame: pd.DataFrame, doc: dict[str, Any], forms: list[str]) -> dict[str, Any] | None:
    """How far the host moved between the traces and the rounds: per program, its rounds'
    median on the traced target against its untraced runs beside its traces (measure_plain),
    and each absolute form's errors on the traced target against those runs, beside its
    errors against the rounds.  A trace tells the work at the speed of the minute it was made
    in, and a shared host's speed moves from minute to minute; this is not the verdict, but how
    much of the errors that move was.  None where the measurements have no runs beside the
    traces (those before them)."""
    beside = {p["name"]: statistics.median(r["seconds"] for r in p["beside_runs"])
              for p in doc["programs"] if p.get("beside_runs")}
    traced = frame[frame["traced"].astype(bool) & frame["program"].isin(beside)]
    if not len(traced):
        return None
    at_trace = traced["program"].map(beside)
    moved = traced["real_s"] / at_trace - 1
    out: dict[str, Any] = {"programs": int(len(traced)), "moved": {
        "median": float(moved.median()), "low": float(moved.min()), "high": float(moved.max())}}
    for form in (form for form in forms if form != "relative"):  # the relative form is the measured runtime there
        out[form] = {"rounds": error_stats(traced[f"{form}_error"]), "beside": error_stats(traced[f"{form}_s"] / at_trace - 1)}
    return out


def _host_between_lines(summary: dict[str, Any], traced_on: str) -> list[str]:
    """The host between the traces and the rounds, in words and a table (_host_between)."""
    between = summary.get("host_between")
    if not between:
        return []
    moved = between["moved"]
    lines = ["", "## The host between the traces and the rounds", "",
             f"Each program was also run untraced, cold, on {traced_on} just before its first trace and just after its "
             f"second. Over the {between['programs']} programs, the rounds' median there stood "
             f"{percent(moved['median'], signed=True)} from those runs (from {percent(moved['low'], signed=True)} to "
             f"{percent(moved['high'], signed=True)}): how far the host's speed in the minutes of the traces differed "
             "from the rounds'. A trace tells the work at the speed of its own minute. The absolute forms' errors on "
             f"{traced_on} against the runs beside the traces, and against the rounds (the verdict):", "",
             "| form | against the rounds: median / largest | against the runs beside the traces |", "|---|---|---|"]
    for form in (form for form in FORMS if form in between):
        f = between[form]
        lines.append(f"| {form} | {percents(f['rounds']['median'], f['rounds']['largest'])} | "
                     f"{percents(f['beside']['median'], f['beside']['largest'])} |")
    return lines


def _verdicts(suite: _Suite, parts: dict[str, dict[str, np.ndarray]], by_round: dict, labels: dict[str, str],
              model: RuntimeEstimator) -> pd.DataFrame:
    """Every pair of targets of each program, in each form: the verdict `fsbm predict` would
    give (which is faster, and how sure: confidence.order_confidence, with the spreads predict
    takes, from `model`), and whether the same-round runs agree.  Pairs whose runs measured
    exactly alike are left out: they have no faster one."""
    names = list(labels)
    out = []
    for form, rows in suite.forms.items():
        runtime = parts[form]["runtime"]
        spreads = cost_log_sds(rows.to_dict("records"), parts[form]["fs"], runtime)
        ratio_sd = model.ratio_log_sd("measured" if form == "relative" else str(rows["evidence"].iloc[0]))
        for program in dict.fromkeys(suite.programs):
            at = np.flatnonzero(suite.programs == program)
            for i, a in enumerate(at):
                for b in at[i + 1:]:
                    measured = same_round_ratio(by_round, program, labels[names[b - at[0]]], labels[names[a - at[0]]])
                    if not np.isfinite(measured) or measured == 1 or min(runtime[a], runtime[b]) <= 0:
                        continue
                    fast, slow = (a, b) if runtime[a] <= runtime[b] else (b, a)
                    out.append({"form": form, "program": program, "faster": labels[names[fast - at[0]]],
                                "slower": labels[names[slow - at[0]]],
                                "confidence": order_confidence(runtime[fast], runtime[slow],
                                                               [ratio_sd, spreads[fast], spreads[slow]]),
                                "measured_gap": max(measured, 1 / measured) - 1,
                                "right": bool((measured > 1) == (fast == a))})
    return pd.DataFrame(out, columns=["form", "program", "faster", "slower", "confidence", "measured_gap", "right"])


def reliability_of(verdicts: pd.DataFrame, form: str) -> Reliability:
    """How well one form's verdicts (_verdicts) held."""
    mine = verdicts[verdicts["form"] == form]
    return reliability(list(mine["confidence"]), list(mine["right"]))


def pairs_by_form(rows: pd.DataFrame, by_round: dict, forms: list[str] | tuple[str, ...]) -> pd.DataFrame:
    """Every pair of targets of a program measured apart (judge.measured_pairs), and whether
    each form orders it right."""
    out = []
    for program, group in rows.groupby("program", sort=False):
        g = group.set_index("target")
        for pair in measured_pairs(by_round, program, dict(zip(group["target"], group["real_s"]))):
            out.append({"program": program, "faster": pair.faster, "slower": pair.slower, "gap": pair.gap,
                        **{f"{form}_right": bool(g.loc[pair.faster, f"{form}_s"] < g.loc[pair.slower, f"{form}_s"])
                           for form in forms}})
    return pd.DataFrame(out, columns=["program", "faster", "slower", "gap", *(f"{form}_right" for form in forms)])


def error_stats(errors: pd.Series) -> dict[str, float]:
    """The median and the largest of the errors' sizes, and how many there are."""
    size = errors.abs().dropna()
    return {"median": float(size.median()) if len(size) else float("nan"),
            "largest": float(size.max()) if len(size) else float("nan"), "n": int(len(size))}


def _trace_reproducibility(suite: _Suite, labels: dict[str, str]) -> pd.DataFrame:
    """Per program traced twice (measure_plain) and target: the absolute form's runtimes from
    each trace by the unfitted model (the time outside plus count x cost), both priced as the
    suite priced them, with the run's tracing calibration, and how far apart they are (the
    larger over the smaller, less 1)."""
    if not len(suite.again):
        return pd.DataFrame()
    model = RuntimeEstimator.unfitted()
    firsts = model.predict(suite.forms["absolute"][suite.traced_twice].reset_index(drop=True))
    seconds = model.predict(suite.again)
    candidates = list(labels.values()) * (len(suite.programs) // len(labels))  # the suite's rows: names in turn
    wheres = [f"{program} on {candidate}" for program, candidate, twice
              in zip(suite.programs, candidates, suite.traced_twice) if twice]
    return pd.DataFrame([{"where": where, "first_s": float(first), "second_s": float(second),
                          "spread": max(first, second) / min(first, second) - 1}
                         for where, first, second in zip(wheres, firsts, seconds) if min(first, second) > 0])


def _summary(rows: pd.DataFrame, pairs: pd.DataFrame, repro: pd.DataFrame, forms: list[str]) -> dict[str, Any]:
    """Per form: the errors of runtimes (the relative form's on the targets it was not
    measured on) and of ratios to the traced target, interval coverage and ranked pairs."""
    untraced = rows[~rows["traced"]]
    summary: dict[str, Any] = {}
    for form in forms:
        judged_rows = untraced if form == "relative" else rows
        summary[form] = {"runtime": error_stats(judged_rows[f"{form}_error"]),
                         "ratio": error_stats(untraced[f"{form}_ratio_error"]),
                         "covered": int(judged_rows[f"{form}_covered"].sum()), "intervals": int(len(judged_rows)),
                         "pairs_right": int(pairs[f"{form}_right"].sum()) if len(pairs) else 0,
                         "pairs": int(len(pairs))}
    if len(repro):
        summary["reproducibility"] = {"median": float(repro["spread"].median()),
                                      "largest": float(repro["spread"].max()),
                                      "within_5pct": int((repro["spread"] <= 0.05).sum()),
                                      "within_rounds": int((repro["spread"] <= repro["rounds_spread"]).sum()),
                                      "n": int(len(repro))}
    return summary


def _warm_shift_lines(shifts: dict[str, dict[str, float]]) -> list[str]:
    """The reproducibility section's sentence on the warm cases (_warm_shifts), or none."""
    if not shifts:
        return []
    each = "; ".join(f"{label}: {s['ratio']:.2f}x the first at the median, each case {100 * s['spread']:.0f}% "
                     f"either way at the median, over {s['cases']} cases" for label, s in shifts.items())
    return ["", "The cases served from the page cache, which touch no device, moved too, the second table's "
                f"against the first's ({each}). Their time is the processor's alone: this is how far the shared "
                "host moves a case no device touches, between two tables and between repetitions of one."]


def _warm_shifts(each_pricers: dict[str, list[Pricer]], labels: dict[str, str]) -> dict[str, dict[str, float]]:
    """Per target measured twice (table_pricers' tables of each), how far its second table's
    warm cases stood from its first's (cost_table.warm_shift): the share of the tables'
    difference that is the host's processor, not the device."""
    shifts = {}
    for name, pricers in each_pricers.items():
        if len(pricers) < 2:
            continue
        shift = warm_shift(pricers[0].table, pricers[1].table)
        if shift is not None:
            shifts[labels.get(name, name)] = asdict(shift)
    return shifts


def met_text(value: float, target: float) -> str:
    """An error as a validation table shows it: a percentage, marked where it misses `target`."""
    return f"{100 * value:.1f}%" + ("" if value <= target else " (missed)")


def _gap_shift_sentence(model: RuntimeEstimator) -> str:
    """What the fitted model learnt of the per-gap constant's spread between programs."""
    shift = getattr(model, "gap_shift_", None)
    if not shift:
        return "A timed trace's time outside is given the calibration's band too (no fit learnt the constant's spread)."
    return (f"A timed trace's time outside is given the band of the per-gap constant between programs: over the "
            f"{shift['programs']} programs of the fit, the constant that makes each one's runtime right strayed "
            f"from the rule's by a standard deviation of {shift['sd'] / 1e3:.1f} us, a 90% band of "
            f"{shift['low'] / 1e3:+.1f} to {shift['high'] / 1e3:+.1f} us, so a trace's band is as wide as its gaps "
            "make it; a trace without call durations is given that band too where it is wider than the one its form's "
            "errors on the other programs span.")


def _gap_constants(doc: dict[str, Any], tracing: TracingCalibration) -> str:
    """What the rule took off each program's gaps (TracingCalibration.gap_over_call_told), in
    words, saying where it was the calibration's rather than the trace's own."""
    told = []
    for program in doc["programs"]:
        constant = tracing.gap_over_call_told(Timeline.of(Profile.of(program["profile"]).timeline))
        told.append(f"{program['name']} {constant.ns / 1e3:.1f} us" + ("" if constant.from_trace else
                                                                        " (the calibration's)"))
    return ", ".join(told)


def _cold_start_sentence(tracing: TracingCalibration) -> str:
    """What a cold prediction adds for the start no trace holds (predictor/cold_start.py)."""
    start = tracing.cold_start
    if start is None:
        return "No cold start was measured: the time outside holds only what each trace shows."
    low, high = start.band
    return (f"Each cold prediction adds the cold start no trace holds, {1e3 * start.seconds:.1f} ms "
            f"({1e3 * low:.1f}-{1e3 * high:.1f} ms in its band), measured on small programs run cold untraced and "
            f"traced: {start.each_program()}.")


def workload_cases_section(doc: dict[str, Any]) -> list[str]:
    """The cases a validation's tables were grown by (as `fsbm bench --for` measures them), or
    that they were not; nothing for measurements made before tables were grown."""
    added = doc.get("workload_cases")
    if added:
        return ["", "## The programs' own cases", "",
                "Each table was grown by the cases the programs are priced from beyond it, measured at the programs' "
                "own sizes (as `fsbm bench --for` does):", "", *(f"- {name}: {', '.join(cases)}"
                                                                for name, cases in added.items())]
    if doc.get("options", {}).get("workload_cases") is False:
        return ["", "The tables were not grown by the programs' own cases (`--no-workload-cases`)."]
    return []


def _warned_lines(summary: dict[str, Any]) -> list[str]:
    """The traces whose prediction warned that tracing ran unevenly (tracing.stall_warning),
    each with the absolute form's error where it was traced: whether the warning was earned."""
    warned = summary.get("warned")
    if not warned:
        return []
    return ["", "## Traces made while tracing ran unevenly", "",
            f"`fsbm predict` warns of these traces: their bare calls lay {STALLED_LEAN_NS / 1e3:.0f} us or more "
            "above their median on average.", ""] + [
        f"- {w['program']}: absolute form {percent(w['absolute_error'], signed=True)} where it was traced, "
        f"{'inside' if w['absolute_covered'] else 'outside'} its interval; {w['warning']}." for w in warned]


def _verdicts_lines(judged: PlainJudged) -> list[str]:
    """How well each form's verdicts' confidences held on every pair of targets (_verdicts)."""
    lines = []
    for form in (form for form in FORMS if form in judged.summary):
        r = reliability_of(judged.verdicts, form)
        if not r.pairs:
            continue
        sure = r.sure
        lines.append(f"- {form}: {r.right} of {r.pairs} right, where the confidences expect {r.expected_right:.1f}; "
                     + (f"at 90% or more, {sure.right} of {sure.pairs} right" if sure else "none at 90% or more")
                     + f"; Brier {r.brier:.3f}")
    if not lines:
        return []
    return ["", "## How sure the verdicts were", "",
            "Every pair of targets of every program: the verdict `fsbm predict` gives (which runs faster, and how "
            "sure), against the same-round runs. Honest confidences are right about as often as they say.", "",
            *lines]


def _cpu_speed_lines(summary: dict[str, Any]) -> list[str]:
    """How far the host's processor moved the runs, and each form's errors beside those with
    it held steady (_cpu_steadied)."""
    steady = summary.get("cpu_steadied")
    if not steady:
        return []
    lines = ["", "## The host's processor", "", moved_sentence(steady["user_cpu_spread"]), "",
             "| form | as measured: median / largest error | held steady | ratios as measured | held steady | "
             "pairs ranked right as measured | held steady |", "|---|---|---|---|---|---|---|"]
    for form in (form for form in FORMS if form in steady):
        f, g = summary[form], steady[form]
        lines.append(" | ".join([f"| {form}", *(percents(x[kind]["median"], x[kind]["largest"])
                                                for kind in ("runtime", "ratio") for x in (f, g)),
                                 f"{f['pairs_right']} of {f['pairs']}", f"{g['pairs_right']} of {g['pairs']} |"]))
    return lines


def markdown(doc: dict[str, Any], judged: PlainJudged, judged_again: bool = False) -> str:
    """The validation document of one set, from plain traces; `judged_again`: stored
    measurements judged by today's code."""
    s = judged.summary
    options = doc["options"]
    tracing = TracingCalibration.from_json(doc.get("tracing_calibration") or {})
    lines = [
        f"# Validation from plain traces: the {options['split']} set",
        "",
        provenance(f"fsbm validate --plain --set {options['split']}", doc, judged_again) + " Each program was traced "
        + ("twice (the first trace is judged)" if all("profile_again" in p for p in doc["programs"]) else "once")
        + f", cold, on **{doc['traced_on']}** with plain "
        "`strace -f -tt -T -y -s 64` (not `fsbm trace record`), and run for real, cold, on every target in "
        f"{options['rounds']} interleaved rounds"
        + (f" (the traces made after round {doc['traced_after_round']})" if "traced_after_round" in doc else "")
        + f"; scale {options['scale']:g}. " + target_images_sentence(doc) + " "
        + ("The same log with its call durations taken out (as `strace` without `-T` writes it) gives the *untimed* "
           "form. " if "untimed" in s else "")
        + ("The *absolute* form's time outside is the mean of the log's two readings, with its call durations and "
           "without them. " if all((p["profile"].get("timeline") or {}).get("untimed") for p in doc["programs"]) else "")
        + ("This development set fits the runtime model's error bands, and each program here is judged by a model "
           "fitted on the others." if options["split"] == "dev" else
           "Nothing was fitted on these measurements: they are judged by the model the development set fitted."),
        "",
        "## Summary",
        "",
        "| form | median error | largest error | median ratio error | largest ratio error | 90% intervals covering | "
        f"pairs > {100 * TARGETS.rank_gap:.0f}% apart ranked right |",
        "|---|---|---|---|---|---|---|",
    ]
    for form in (form for form in FORMS if form in s):
        f, target = s[form], form_bound(form)
        ratios = TARGETS.relative
        lines.append(f"| {form} | {met_text(f['runtime']['median'], target.median)} | "
                     f"{met_text(f['runtime']['largest'], target.largest)} | "
                     f"{met_text(f['ratio']['median'], ratios.median)} | "
                     f"{met_text(f['ratio']['largest'], ratios.largest)} | {f['covered']} of {f['intervals']} | "
                     f"{f['pairs_right']} of {f['pairs']} |")
    lines += ["", f"The 90% intervals come from {s['intervals_from']}.", "",
              f"Targets (issue 35): {targets_sentence(TARGETS)}. The relative form is judged on the "
              "targets other than the traced one (there it is the measured runtime)."]
    lines += _cpu_speed_lines(s)
    lines += _host_between_lines(s, doc["traced_on"])
    lines += unsteady_runs_section(doc["records"])
    rep = s.get("reproducibility")
    if rep:
        lines += ["", "## Cost-table reproducibility", "",
                  f"Two quick tables of each target (fsbench seeds 1 and 2) change a program's modelled filesystem time "
                  f"by a median of {100 * rep['median']:.1f}% and at most {100 * rep['largest']:.1f}%; "
                  f"{rep['within_5pct']} of {rep['n']} program-target pairs are within 5% (target: all)"
                  + (f", and {rep['within_rounds']} of {rep['n']} within the spread of the program's own cold runs "
                     "between rounds (the device's drift, which no table measured at another time can beat)"
                     if "within_rounds" in rep else "") + "."]
        lines += _warm_shift_lines(rep.get("warm", {}))
        beyond = judged.reproducibility[judged.reproducibility["spread"] > 0.05] if len(judged.reproducibility) else []
        if len(beyond):
            lines += ["", "Those beyond 5%, and the operation whose time moved most between the tables:", ""]
            lines += [f"- {r.program} on {r.target}: {r.fs_s[0]:.4f} s and {r.fs_s[1]:.4f} s ({100 * r.spread:.0f}%; "
                      f"its cold runs {100 * r.rounds_spread:.0f}% apart); "
                      f"{r.moved_most[0]} {r.moved_most[1]:.4f} s and {r.moved_most[2]:.4f} s"
                      for r in beyond.sort_values("spread", ascending=False).itertuples()]
    lines += _warned_lines(s)
    lines += _verdicts_lines(judged)
    lines += workload_cases_section(doc)
    traces = s.get("trace_reproducibility")
    if traces:
        lines += ["", "## Trace-to-trace reproducibility", "",
                  f"Each program was traced a second time, as it was the first: the absolute form's runtime from the "
                  f"second trace differs from the first's by a median of {100 * traces['median']:.1f}% and at most "
                  f"{100 * traces['largest']:.1f}% ({traces['largest_at']}), over {traces['n']} program-target "
                  "pairs. Only the first trace is judged."]
    lines += ["", "## Tracing calibration", "",
              "Each calibration program's time outside its file calls as its trace tells it, against its measured "
              "runtime: " + ", ".join(f"{r.name} {percent(e, signed=True)}" for r, e in zip(tracing.runs, tracing.errors))
              + ". Each trace's gaps take off the trace's own median of how much longer a gap took than its "
              f"process's median call, counted for no more than {tracing.own_median_cap_ns / 1e3:.1f} us"
              + (f" ({OWN_MEDIAN_CAP_SHARE:g} times the most a gap took over its calls here in a loop of bare "
                 f"calls, {tracing.measured_gap_over_call_ns / 1e3:.1f} us, or in {' or '.join(START_TO_START_PROGRAMS)})"
                 if tracing.measured_gap_over_call_ns is not None else " (no bare loop was measured)")
              + ", or the calibration's constant where the trace has no such median above 0: "
              + _gap_constants(doc, tracing)
              + f". A trace with {MIN_BARE_CALLS} or more bare calls (close, fstat, getpid...) takes how far they lay above their "
                "process's median call, on average, off each gap as well, and off each call not on a file"
              + (f"; one with fewer takes {tracing.call_lean_ns / 1e3:.1f} us off each call not on a file, how far a "
                 "bare call of the loop lay above its median on average"
                 if tracing.measured_call_lean_ns is not None else "")
              + (f". Without -T a gap runs from one call's start to the next's; a bare loop's took "
                 f"{tracing.measured_start_to_start_ns / 1e3:.1f} us, and with {' and '.join(START_TO_START_PROGRAMS)}"
                 f" the slowest {tracing.start_to_start_ns / 1e3:.1f} us; a gap's median counts for no more than "
                 f"{UNTIMED_CAP_SHARE:g} times that, {tracing.untimed_cap_ns / 1e3:.0f} us; a log with "
                 f"{MIN_BARE_CALLS} or more gaps from one bare call to the next takes how far those lay above their "
                 "median, on average, off each of its gaps as well"
                 if tracing.measured_start_to_start_ns is not None else "")
              + ". A trace with call durations is given the band these errors span"
              + (" ({} to {})".format(*(percent(e, signed=True) for e in tracing.error_band)) if tracing.runs else "")
              + (", one without them the band of the same traces' errors told without them: "
                 + ", ".join(f"{r.name} {percent(e, signed=True)}" for r, e in
                             zip([r for r in tracing.runs if r.untimed], tracing.untimed_errors))
                 + " ({} to {})".format(*(percent(e, signed=True) for e in tracing.untimed_error_band))
                 if tracing.untimed_errors else "")
              + (f". Warned: {tracing.uneven_warning}" if tracing.uneven_warning else "")
              + ". " + _gap_shift_sentence(judged.model) + " Either way, a trace's band is wider, each side in "
              "quadrature, by what its estimate took off for its own lean (the lean times the gaps and calls it came "
              "off): how unevenly tracing ran while that trace was made. " + _cold_start_sentence(tracing),
              "", "## Per program and target", "",
              "Seconds. *real*: median of the cold runs (min-max); *fs*: modelled filesystem time; *outside*: the "
              "time outside the filesystem the absolute form adds; ratios are to the traced target, measured as the "
              "median of same-round ratios.", "",
              "| program | target | real | fs | outside | absolute (90%) | error | relative (90%) | error | ratio "
              "measured | ratio abs. | ratio rel. |" + (" untimed (90%) | error |" if "untimed" in s else ""),
              "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if "untimed" in s else "")]
    for r in judged.rows.itertuples():
        untimed = (f" {r.untimed_s:.3f} ({r.untimed_low_s:.3f}-{r.untimed_high_s:.3f}) | "
                   f"{percent(r.untimed_error, signed=True)} |"
                   if "untimed" in s else "")
        lines.append(
            f"| {r.program} | {r.target} | {r.real_s:.3f} ({r.real_min_s:.3f}-{r.real_max_s:.3f}) | {r.fs_s:.3f} | "
            f"{r.outside_s:.3f} | {r.absolute_s:.3f} ({r.absolute_low_s:.3f}-{r.absolute_high_s:.3f}) | "
            f"{percent(r.absolute_error, signed=True)} | "
            f"{r.relative_s:.3f} ({r.relative_low_s:.3f}-{r.relative_high_s:.3f}) | "
            f"{'-' if r.traced else percent(r.relative_error, signed=True)} | {r.measured_ratio:.2f} | "
            f"{r.absolute_ratio:.2f} | "
            f"{r.relative_ratio:.2f} |" + untimed)
    wrong = judged.pairs[~judged.pairs["relative_right"]] if len(judged.pairs) else judged.pairs
    if len(wrong):
        lines += ["", "Pairs the relative form orders wrong:", ""]
        lines += [f"- {p.program}: {p.faster} measured {100 * p.gap:.0f}% faster than {p.slower}" for p in wrong.itertuples()]
    lines += ["", "## Where the time outside comes from", ""]
    lines += [f"- {p['name']} (traced in {p['traced_wall_s']:.1f} s): "
              + judged.rows[judged.rows["program"] == p["name"]]["evidence"].iloc[0] for p in doc["programs"]]
    return "\n".join(lines) + "\n"

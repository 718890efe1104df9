"""Judging predictions from NFS captures (api/capture_validation.py measures them).

Every prediction is what `fsbm predict` says for the capture, with the cost tables measured
for the run (their per-case median) and the runtime model `fsbm predict` would take for it:
the absolute form from the capture alone, and the relative form with the job's median real
runtime on the traced candidate given as --measured.  Nothing is fitted on these
measurements, of either set: no rule about captures is fitted yet, so both sets say how well
the unfitted rules hold, and only the test set is held out from choosing them.

Judged as the plain traces are (predictor/plain_judge.py): runtimes against the median of
the cold runs, ratios to the traced candidate against the median of same-round ratios, 90%
intervals counted, and every pair of candidates measured more than TARGETS.rank_gap apart
ranked; the absolute form held to TARGETS.absolute, the relative to TARGETS.relative.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import pandas as pd

from fsbm.predictor.capture_cost import CaptureCost
from fsbm.predictor.estimator import RuntimeEstimator
from fsbm.predictor.judge import provenance, real_by_round, real_runs, same_round_ratio, target_images_sentence
from fsbm.predictor.plain_judge import CACHE_BYTES, error_stats, met_text, pairs_by_form, table_pricers
from fsbm.predictor.predict import predict
from fsbm.predictor.targets import TARGETS, form_bound, form_met, targets_sentence
from fsbm.predictor.unsteady_runs import unsteady_runs_section
from fsbm.units import percent

FORMS = ("absolute", "relative")


@dataclass
class CaptureJudged:
    rows: pd.DataFrame   # a row per job and target
    pairs: pd.DataFrame  # every pair of targets measured apart, and whether each form ranks it right
    summary: dict[str, Any]
    evidence: dict[str, str]  # per job, what the time outside its capture rests on


def _rows(doc: dict[str, Any], model: RuntimeEstimator) -> tuple[pd.DataFrame, dict[str, str]]:
    """Each job's predictions on every target beside its runs."""
    pricers, _ = table_pricers(doc)
    labels = {t["candidate"]: t["label"] for t in doc["targets"]}
    traced = next(t["candidate"] for t in doc["targets"] if t["label"] == doc["traced_on"])
    runs, by_round = real_runs(doc["records"]), real_by_round(doc["records"])
    names = list(labels)
    capture_cost = CaptureCost.from_json(doc.get("capture_calibration"))
    rows, evidence = [], {}
    for job in doc["programs"]:
        name = job["name"]
        measured = statistics.median(runs[(name, doc["traced_on"])])
        prediction = predict(job["profile"], [(None, pricers[c]) for c in names], cache_bytes=CACHE_BYTES,
                             model=model, measured=measured, traced_on=traced, capture_cost=capture_cost)
        evidence[name] = prediction.outside_evidence
        base = next(e for e in prediction.candidates if e.candidate == traced)
        for entry in prediction.candidates:
            label = labels[entry.candidate]
            seconds = runs[(name, label)]
            real = statistics.median(seconds)
            rows.append({
                "program": name, "split": job["split"], "target": label, "traced": entry.candidate == traced,
                "real_s": real, "real_min": min(seconds), "real_max": max(seconds),
                "fs_s": entry.fs_s, "outside_s": entry.outside_s,
                "absolute_s": entry.runtime_s, "absolute_low": entry.low_s, "absolute_high": entry.high_s,
                "relative_s": entry.relative_s, "relative_low": entry.relative_low_s,
                "relative_high": entry.relative_high_s,
                "ratio_measured": same_round_ratio(by_round, name, label, doc["traced_on"]),
                "absolute_ratio": entry.runtime_s / base.runtime_s,
                "relative_ratio": entry.relative_s / base.relative_s,
            })
    frame = pd.DataFrame(rows)
    for form in FORMS:
        frame[f"{form}_error"] = frame[f"{form}_s"] / frame["real_s"] - 1
        frame[f"{form}_ratio_error"] = frame[f"{form}_ratio"] / frame["ratio_measured"] - 1
        frame[f"{form}_covered"] = (frame[f"{form}_low"] <= frame["real_s"]) & (frame["real_s"] <= frame[f"{form}_high"])
    return frame, evidence


def _summary(rows: pd.DataFrame, pairs: pd.DataFrame, model: RuntimeEstimator) -> dict[str, Any]:
    """Per form: the errors of runtimes (the relative form's on the targets it was not given
    the runtime of) and of ratios, intervals covering, pairs ranked right, and whether the
    form meets its targets; and what the intervals rest on."""
    untraced = rows[~rows["traced"]]
    summary: dict[str, Any] = {"intervals_from": model.intervals_from}
    for form in FORMS:
        judged = untraced if form == "relative" else rows
        runtime, ratio = error_stats(judged[f"{form}_error"]), error_stats(untraced[f"{form}_ratio_error"])
        covered, intervals = int(judged[f"{form}_covered"].sum()), int(len(judged))
        right = int(pairs[f"{form}_right"].sum()) if len(pairs) else 0
        summary[form] = {
            "runtime": runtime, "ratio": ratio, "covered": covered, "intervals": intervals,
            "pairs_right": right, "pairs": int(len(pairs)),
            "met": form_met(form_bound(form), (runtime["median"], runtime["largest"]),
                            (ratio["median"], ratio["largest"]), covered, intervals, right, len(pairs)),
        }
    return summary


def judge_capture(doc: dict[str, Any], model: RuntimeEstimator | None = None) -> CaptureJudged:
    """The capture validation `doc` judged by `model` (the runtime model `fsbm predict` takes
    for a capture; unfitted where none is given)."""
    model = model or RuntimeEstimator.unfitted()
    rows, evidence = _rows(doc, model)
    pairs = pairs_by_form(rows, real_by_round(doc["records"]), FORMS)
    return CaptureJudged(rows, pairs, _summary(rows, pairs, model), evidence)


def host_between(doc: dict[str, Any], rows: pd.DataFrame) -> pd.DataFrame:
    """Per job, on the traced target: the captured run's seconds (a capture tells the work at
    the speed of its own minute) beside the rounds' median (how far they moved from it), and
    the absolute form's error against each: how much of its error is the host's between the
    capture and the rounds (a diagnosis, not the verdict)."""
    traced = rows[rows["traced"]].set_index("program")
    out = []
    for job in doc["programs"]:
        row = traced.loc[job["name"]]
        out.append({"program": job["name"], "captured_s": job["captured_run_s"], "real_s": row["real_s"],
                    "rounds_moved": row["real_s"] / job["captured_run_s"] - 1,
                    "absolute_s": row["absolute_s"], "against_rounds": row["absolute_error"],
                    "against_captured": row["absolute_s"] / job["captured_run_s"] - 1})
    return pd.DataFrame(out)


def _host_between_lines(doc: dict[str, Any], judged: CaptureJudged) -> list[str]:
    between = host_between(doc, judged.rows)
    lines = ["", "## The host between the capture and the rounds", "",
             f"A capture tells the work at the speed of its own minute. On {doc['traced_on']}: the captured run, the "
             "rounds' median, and the absolute form's error against each (against the captured run: a diagnosis, "
             "not the verdict).", "",
             "| job | captured run | rounds' median | absolute | against the rounds | against the captured run |",
             "|---|---|---|---|---|---|"]
    for r in between.itertuples():
        lines.append(f"| {r.program} | {_seconds(r.captured_s)} | {_seconds(r.real_s)} | {_seconds(r.absolute_s)} | "
                     f"{r.against_rounds:+.0%} | {r.against_captured:+.0%} |")
    return lines


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _calibration_sentence(doc: dict[str, Any]) -> str:
    """What capturing cost a job here, as the validation measured it before its rounds, which
    widens every prediction's band (the clients and the server share the host), and the
    client's start the absolute form adds; or that they were not measured."""
    cost = CaptureCost.from_json(doc.get("capture_calibration"))
    if cost is None or not cost.pairs:
        return "What capturing costs the captured job was not calibrated, and no band allows for it."
    where = f"cold, a share on {doc['traced_on']}" if cost.share_in else "a share in memory"
    said = (f"Capturing's own cost, calibrated before the rounds ({len(cost.pairs)} transfers of "
            f"{cost.pairs[0]['mib']:.0f} MiB captured and not, {where}): {cost.words()}; each capture's band "
            "reaches lower by it.")
    if not cost.starts:
        return f"{said} The client's own start and end, outside every capture, were not measured."
    return f"{said} Each absolute prediction adds {cost.start_words()} ({len(cost.starts)} runs)."


def markdown(doc: dict[str, Any], judged: CaptureJudged, judged_again: bool = False) -> str:
    """The validation document of one set of the NFS suite; `judged_again`: stored
    measurements judged by today's code."""
    options, s = doc["options"], judged.summary
    lines = [
        f"# Validation from NFS captures: the {options['split']} set",
        "",
        provenance(f"fsbm validate --capture --set {options['split']}", doc, judged_again)
        + " Each job is a real NFS client (libnfs's nfs-cp, nfs-cat, nfs-ls) against a real NFS server "
        "(NFS-Ganesha, NFSv3 over TCP on the loopback) exporting a directory of the target, started for every run. "
        f"Each was captured once with tshark on **{doc['traced_on']}**, cold, after round "
        f"{doc['captured_after_round']}, and run for real, cold, on every target in {options['rounds']} "
        f"interleaved rounds; scale {options['scale']:g}. " + target_images_sentence(doc) + " Nothing is fitted "
        "on these measurements. " + _calibration_sentence(doc),
        "",
        "## Summary",
        "",
        "| form | median error | largest error | median ratio error | largest ratio error | 90% intervals covering | "
        f"pairs > {percent(TARGETS.rank_gap)} apart ranked right | targets |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for form in FORMS:
        f, bound = s[form], form_bound(form)
        lines.append(f"| {form} | {met_text(f['runtime']['median'], bound.median)} | "
                     f"{met_text(f['runtime']['largest'], bound.largest)} | "
                     f"{met_text(f['ratio']['median'], TARGETS.relative.median)} | "
                     f"{met_text(f['ratio']['largest'], TARGETS.relative.largest)} | {f['covered']} of "
                     f"{f['intervals']} | {f['pairs_right']} of {f['pairs']} | {'met' if f['met'] else '**missed**'} |")
    lines += ["", f"The 90% intervals come from {s.get('intervals_from', 'a model this document did not name')}.",
              "", f"Targets (issue 35): {targets_sentence(TARGETS)}. The absolute form is the capture's alone; the "
              "relative form is given the job's median runtime on the traced target, and is judged on the others.",
              "", "## Per job and target", "",
              "Seconds. *real*: median of the cold runs (min-max); *fs*: modelled filesystem time; *outside*: the "
              "clients' time outside the server the capture tells; ratios are to the traced target, measured as the "
              "median of same-round ratios.", "",
              "| job | target | real | fs | outside | absolute (90%) | error | relative (90%) | error | "
              "ratio measured | ratio abs. | ratio rel. |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in judged.rows.itertuples():
        relative = "-" if r.traced else f"{r.relative_error:+.0%}"
        lines.append(
            f"| {r.program} | {r.target} | {_seconds(r.real_s)} ({_seconds(r.real_min)}-{_seconds(r.real_max)}) | "
            f"{_seconds(r.fs_s)} | {_seconds(r.outside_s)} | {_seconds(r.absolute_s)} ({_seconds(r.absolute_low)}-"
            f"{_seconds(r.absolute_high)}) | {r.absolute_error:+.0%} | {_seconds(r.relative_s)} "
            f"({_seconds(r.relative_low)}-{_seconds(r.relative_high)}) | {relative} | {r.ratio_measured:.2f} | "
            f"{r.absolute_ratio:.2f} | {r.relative_ratio:.2f} |")
    lines += ["", "## Pairs measured apart", ""]
    if len(judged.pairs):
        lines += [f"| job | faster | slower | apart | {' | '.join(FORMS)} |", "|---|---|---|---|" + "---|" * len(FORMS)]
        for p in judged.pairs.itertuples():
            lines.append(f"| {p.program} | {p.faster} | {p.slower} | {p.gap:.0%} | "
                         + " | ".join("right" if getattr(p, f"{form}_right") else "**wrong**" for form in FORMS) + " |")
    else:
        lines.append(f"No job's targets ran more than {percent(TARGETS.rank_gap)} apart.")
    lines += _host_between_lines(doc, judged)
    lines += unsteady_runs_section(doc["records"])
    lines += ["", "## Where the time outside comes from", ""]
    lines += [f"- {name}: {text}" for name, text in judged.evidence.items()]
    return "\n".join(lines) + "\n"

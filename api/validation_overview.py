"""docs/validation.md: every form of the prediction on both sets of the suite, in one page.

`fsbm validate --overview` judges the newest stored measurements of each validation (recorded,
plain and NFS captures, development and test set) again, as `fsbm validate --from` would, and sets their
verdicts side by side: errors of runtimes and of ratios, interval coverage, rankings, and the
reproducibility of cost tables and of traces.  Each row names the page with its detail
(docs/validation-recorded-SET.md, docs/validation-plain-SET.md, docs/validation-capture-SET.md).  Nothing is measured or
fitted here, and nothing is stored: the test sets are judged by the models their
development sets fitted, as when they were measured.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pandas as pd

from fsbm.api.prediction_service import PLAIN_MODEL, RECORDED_MODEL
from fsbm.api.validation import split_of, stored_runtime_model, utc
from fsbm.predictor.capture_judge import FORMS as CAPTURE_FORMS
from fsbm.predictor.capture_judge import host_between, judge_capture
from fsbm.predictor.confidence import Reliability
from fsbm.predictor.estimator import RuntimeEstimator
from fsbm.predictor.judge import judge
from fsbm.predictor.plain_judge import error_stats, judge_plain, reliability_of
from fsbm.predictor.nfs_suite import nfs_programs
from fsbm.predictor.suite import SPLITS, programs
from fsbm.predictor.cpu_speed import STEADY_MIN_USER_S
from fsbm.predictor.targets import TARGETS, ErrorBound, form_bound, form_met
from fsbm.units import percent, percents

FORM_NAMES = {
    ("recorded", "absolute"): "recording (`fsbm trace record`), absolute",
    ("recorded", "relative"): "recording, relative (runtime measured on the traced filesystem)",
    ("plain", "relative"): "plain strace log, relative (runtime measured on the traced filesystem)",
    ("plain", "absolute"): "plain strace log (`-f -tt -T -y`), absolute",
    ("plain", "untimed"): "plain strace log without `-T`, absolute",
    ("capture", "absolute"): "NFS capture (tshark), absolute",
    ("capture", "relative"): "NFS capture, relative (runtime measured on the traced filesystem)",
}


@dataclass(frozen=True)
class FormVerdict:
    """One form of the prediction judged on one set: its errors against the targets."""

    split: str
    trace: str  # recorded | plain
    form: str   # absolute | relative | untimed
    measured_at: str
    doc: str    # the page with its detail
    median: float
    largest: float
    ratio_median: float | None
    ratio_largest: float | None
    covered: int | None
    intervals: int | None
    pairs_right: int
    pairs: int
    bound: ErrorBound  # the errors this form is held to
    misses: tuple[tuple[str, str, float], ...]  # the largest errors: (program, target, error)
    # Every pair of targets' verdict, how sure and whether right (plain traces' judge only).
    verdicts: Reliability | None = None
    # The errors again with the host's processor held steady (cpu_speed): median and largest
    # of runtimes, and how far the user CPU time moved (the median and largest over programs).
    steady: tuple[float, float] | None = None
    user_cpu_moved: tuple[float, float] | None = None
    # Plain traces' absolute forms: how far the rounds stood from the untraced runs beside the
    # traces (median, least, most), and the errors on the traced target against the rounds and
    # against those runs (median and largest each; plain_judge._host_between).
    host_moved: tuple[float, float, float] | None = None
    against_rounds: tuple[float, float] | None = None
    against_beside: tuple[float, float] | None = None

    @property
    def met(self) -> bool:
        return form_met(self.bound, (self.median, self.largest), (self.ratio_median, self.ratio_largest),
                        self.covered, self.intervals, self.pairs_right, self.pairs)


@dataclass(frozen=True)
class Reproducibility:
    """How far a program's modelled time moves with a second cost table, or a second trace."""

    split: str
    what: str
    median: float
    largest: float
    within_5pct: int | None
    n: int
    # Of the n, those that moved no more than the program's own cold runs between rounds.
    within_rounds: int | None = None


def _largest(rows: pd.DataFrame, column: str, target: str, n: int = 3) -> tuple[tuple[str, str, float], ...]:
    worst = rows.assign(size=rows[column].abs()).nlargest(n, "size")
    return tuple((str(r["program"]), str(r[target]), float(r[column])) for _, r in worst.iterrows())


def _as_kept(model: RuntimeEstimator, doc: dict[str, Any]) -> RuntimeEstimator:
    """A model fitted here, as the store keeps it (with what it was fitted on)."""
    return RuntimeEstimator.from_json(model.to_json(f"the development set measured {utc(doc['finished'])} UTC"))


def recorded_verdicts(doc: dict[str, Any], model: RuntimeEstimator | None,
                      cache_bytes: int) -> tuple[list[FormVerdict], RuntimeEstimator]:
    """A recorded validation's absolute and relative forms, judged as `fsbm validate --from`
    would (by `model` for a test set), and the model a development set fits."""
    split = split_of(doc)
    judged = judge(doc, cache_bytes=cache_bytes, model=model if split == "test" else None)
    s, rows = judged.summary, judged.rows
    untraced = rows[rows["candidate"] != doc["traced_on"]]
    when, page = utc(doc["finished"]), f"validation-recorded-{split}.md"
    common = {"split": split, "trace": "recorded", "measured_at": when, "doc": page,
              "bound": TARGETS.relative}
    steady = s.get("cpu_steadied")
    moved = _moved(steady)
    return [
        FormVerdict(form="absolute", median=s["median_abs_error"], largest=s["max_abs_error"],
                    steady=(steady["median_abs_error"], steady["max_abs_error"]) if steady else None,
                    user_cpu_moved=moved,
                    ratio_median=s["median_ratio_error"], ratio_largest=s["max_ratio_error"],
                    covered=s.get("covered"), intervals=s.get("intervals"), pairs_right=s["pairs_ranked_right"],
                    pairs=s["pairs_compared"], misses=_largest(rows, "abs_error", "candidate"), **common),
        FormVerdict(form="relative", median=s["median_relative_error"], largest=s["max_relative_error"],
                    steady=(steady["median_relative_error"], steady["max_relative_error"]) if steady else None,
                    user_cpu_moved=moved,
                    ratio_median=None, ratio_largest=None, covered=s.get("relative_covered"),
                    intervals=s.get("relative_intervals"), pairs_right=0, pairs=0,
                    misses=_largest(untraced, "relative_error", "candidate"), **common),
    ], _as_kept(judged.model, doc)


def plain_verdicts(doc: dict[str, Any], model: RuntimeEstimator | None
                   ) -> tuple[list[FormVerdict], list[Reproducibility], RuntimeEstimator]:
    """A plain validation's forms (a test set's judged by `model`), its tables' and traces'
    reproducibility, and the model a development set fits."""
    split = split_of(doc)
    judged = judge_plain(doc, model=model if split == "test" else None)
    s, rows = judged.summary, judged.rows
    when, page = utc(doc["finished"]), f"validation-plain-{split}.md"
    verdicts = []
    steady = s.get("cpu_steadied")
    between = s.get("host_between") or {}
    for form in (f for f in ("relative", "absolute", "untimed") if f in s):
        moved, there = between.get("moved"), between.get(form)
        f = s[form]
        held = steady[form]["runtime"] if steady else None
        judged_rows = rows[~rows["traced"]] if form == "relative" else rows
        verdicts.append(FormVerdict(
            split=split, trace="plain", form=form, measured_at=when, doc=page, median=f["runtime"]["median"],
            largest=f["runtime"]["largest"], ratio_median=f["ratio"]["median"], ratio_largest=f["ratio"]["largest"],
            covered=f["covered"], intervals=f["intervals"], pairs_right=f["pairs_right"], pairs=f["pairs"],
            bound=form_bound(form),
            misses=_largest(judged_rows, f"{form}_error", "target"),
            verdicts=reliability_of(judged.verdicts, form),
            steady=(held["median"], held["largest"]) if held else None, user_cpu_moved=_moved(steady),
            host_moved=(moved["median"], moved["low"], moved["high"]) if moved and there else None,
            against_rounds=(there["rounds"]["median"], there["rounds"]["largest"]) if there else None,
            against_beside=(there["beside"]["median"], there["beside"]["largest"]) if there else None))
    spreads = []
    if "reproducibility" in s:
        r = s["reproducibility"]
        spreads.append(Reproducibility(split, "two cost tables of each target", r["median"], r["largest"],
                                       r["within_5pct"], r["n"], r.get("within_rounds")))
    if "trace_reproducibility" in s:
        r = s["trace_reproducibility"]
        spreads.append(Reproducibility(split, f"two plain traces of each program (largest: {r['largest_at']})",
                                       r["median"], r["largest"], None, r["n"]))
    return verdicts, spreads, _as_kept(judged.model, doc)


def capture_verdicts(doc: dict[str, Any], model: RuntimeEstimator) -> list[FormVerdict]:
    """An NFS capture validation's forms, judged by `model` (the one `fsbm predict` takes for a
    capture): nothing is fitted on either set."""
    split = split_of(doc)
    judged = judge_capture(doc, model)
    s, rows = judged.summary, judged.rows
    between = host_between(doc, rows)
    moved = between["rounds_moved"]
    verdicts = []
    for form in CAPTURE_FORMS:
        f = s[form]
        judged_rows = rows[~rows["traced"]] if form == "relative" else rows
        there = {} if form != "absolute" else {
            "host_moved": (float(moved.median()), float(moved.min()), float(moved.max())),
            "against_rounds": _median_largest(between["against_rounds"]),
            "against_beside": _median_largest(between["against_captured"])}
        verdicts.append(FormVerdict(**there,
            split=split, trace="capture", form=form, measured_at=utc(doc["finished"]),
            doc=f"validation-capture-{split}.md", median=f["runtime"]["median"], largest=f["runtime"]["largest"],
            ratio_median=f["ratio"]["median"], ratio_largest=f["ratio"]["largest"], covered=f["covered"],
            intervals=f["intervals"], pairs_right=f["pairs_right"], pairs=f["pairs"], bound=form_bound(form),
            misses=_largest(judged_rows, f"{form}_error", "target")))
    return verdicts


def _median_largest(errors: pd.Series) -> tuple[float, float]:
    """The median and the largest of the errors' sizes (plain_judge.error_stats)."""
    stats = error_stats(errors)
    return stats["median"], stats["largest"]


def _in_order(verdicts: list[FormVerdict]) -> list[FormVerdict]:
    """Verdicts as every table of the page lists them: by set (SPLITS), trace, then form."""
    return sorted(verdicts, key=lambda v: (SPLITS.index(v.split) if v.split in SPLITS else 9, v.trace, v.form))


def _moved(steady: dict[str, Any] | None) -> tuple[float, float] | None:
    """How far the user CPU time moved, from a judged summary's cpu_steadied."""
    return (steady["user_cpu_spread"]["median"], steady["user_cpu_spread"]["largest"]) if steady else None


def _processor_section(verdicts: list[FormVerdict]) -> list[str]:
    """Each form's errors beside those with the host's processor held steady."""
    held = [v for v in verdicts if v.steady is not None and v.user_cpu_moved is not None]
    if not held:
        return []
    lines = ["", "## The host's processor", "",
             "A program does the same work in every run, yet its user CPU time moved between its runs: the shared "
             "host's processor ran at different speeds from one minute to the next. With each run given its "
             f"program's median user time instead of its own (programs of {STEADY_MIN_USER_S:g} s of user time or "
             "more), the errors would be these: a diagnosis of how much of each error is the processor's, not the verdict (each "
             "page has the ratios and pairs too).", "",
             "| set | trace and form | user CPU moved: median / largest | as measured: median / largest | "
             "processor held steady |", "|---|---|---|---|---|"]
    for v in _in_order(held):
        assert v.steady is not None and v.user_cpu_moved is not None
        lines.append(f"| {v.split} | {FORM_NAMES[(v.trace, v.form)]} | {percents(*v.user_cpu_moved, digits=0)} | "
                     f"{percents(v.median, v.largest)} | {percents(*v.steady)} |")
    return lines


def _host_between_section(verdicts: list[FormVerdict]) -> list[str]:
    """Each plain absolute form's errors on the traced target against the rounds and against
    the untraced runs beside the traces: how much of them was the host's move in between."""
    found = [v for v in verdicts if v.host_moved and v.against_rounds and v.against_beside]
    if not found:
        return []
    lines = ["", "## The host between the traces and the rounds", "",
             "A trace tells a program's work at the speed of the minute it was traced in; the rounds ran minutes "
             "later. Each program was also run untraced beside its traces (an NFS job: the run its capture "
             "recorded): how far the rounds stood from those runs on the traced target, and "
             "each absolute form's errors there against the rounds (the verdict) and against those runs (a "
             "diagnosis, not the verdict).", "",
             "| set | trace and form | rounds against the runs beside: median (least to most) | against the rounds: "
             "median / largest | against the runs beside |", "|---|---|---|---|---|"]
    for v in _in_order(found):
        assert v.host_moved and v.against_rounds and v.against_beside
        middle, least, most = v.host_moved
        lines.append(f"| {v.split} | {FORM_NAMES[(v.trace, v.form)]} | {percent(middle, signed=True)} "
                     f"({percent(least, signed=True)} to {percent(most, signed=True)}) | "
                     f"{percents(*v.against_rounds)} | {percents(*v.against_beside)} |")
    return lines


def _verdicts_section(verdicts: list[FormVerdict]) -> list[str]:
    """How well the verdicts' confidences held: per set and form, against the count they expect."""
    judged = [v for v in verdicts if v.verdicts is not None and v.verdicts.pairs]
    if not judged:
        return []
    lines = ["", "## How sure the verdicts were", "",
             "For every pair of targets of every program, the verdict `fsbm predict` gives (which runs faster, and "
             "how sure: the model's ratio error and each candidate's cost measurements), against the same-round "
             "runs. Honest confidences are right about as often as they say: the count of right verdicts should be "
             "near the sum of the confidences, and the verdicts at 90% or more right about 90% of the time. "
             "*Brier*: the mean squared distance of confidence from outcome (0.25 for coin flips).", "",
             "| set | trace and form | pairs | right | the confidences expect | at 90% or more: right (mean confidence) "
             "| Brier |", "|---|---|---|---|---|---|---|"]
    for v in _in_order(judged):
        r = v.verdicts
        sure = r.sure
        sure_text = "-" if sure is None else f"{sure.right} of {sure.pairs} ({percent(sure.mean_confidence)})"
        lines.append(f"| {v.split} | {FORM_NAMES[(v.trace, v.form)]} | {r.pairs} | {r.right} | "
                     f"{r.expected_right:.1f} | {sure_text} | {r.brier:.3f} |")
    return lines


def _cover(v: FormVerdict) -> str:
    return "-" if v.covered is None or v.intervals is None else f"{v.covered} of {v.intervals}"


def markdown(verdicts: list[FormVerdict], spreads: list[Reproducibility], missing: list[str]) -> str:
    """The page (module docstring)."""
    sets = {split: [p.name for p in programs(split=split)] + [p.name for p in nfs_programs(split)] for split in SPLITS}
    lines = [
        "# Validation of the runtime predictor",
        "",
        f"Regenerated by `fsbm validate --overview` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: the "
        "newest stored measurements of each validation, judged again. Every runtime is measured for real, cold, on "
        "fresh direct-I/O loop images, in interleaved rounds; every prediction is made without the runs it is "
        "judged against.",
        "",
        f"- **Development set** ({', '.join(sets['dev'])}): what the model is fitted and tuned on; each program is "
        "predicted by the model fitted on the others (leave-one-program-out). Its figures are not evidence of "
        "accuracy.",
        f"- **Test set** ({', '.join(sets['test'])}): held out. Nothing is fitted, chosen or tuned on it; it is "
        "judged by the model the development set fitted, and every run of it is listed in "
        "[test-set-runs.md](test-set-runs.md).",
        "- The NFS jobs (the names beginning nfs-) are real NFS clients against a real NFS server on each candidate, "
        "predicted from their captures by the plain traces' model; nothing is fitted on either of their sets, and "
        "their test set is held out from choosing the rules as the programs' is.",
        "",
        f"Targets (issue 35): recordings and the relative form: median error <= {percent(TARGETS.relative.median)}, "
        f"largest <= {percent(TARGETS.relative.largest)}, for runtimes and ratios to the traced filesystem; absolute "
        f"forms from a plain trace: median <= {percent(TARGETS.absolute.median)}, largest <= "
        f"{percent(TARGETS.absolute.largest)} (ratios <= {percent(TARGETS.relative.median)} / "
        f"{percent(TARGETS.relative.largest)}); 90% intervals covering >= {percent(TARGETS.coverage)} of measured runtimes; "
        f"every pair of candidates more than {percent(TARGETS.rank_gap)} apart ranked right.",
        "",
        "## Every form on both sets",
        "",
        "| set | trace and form | measured | median / largest error | ratios: median / largest | 90% intervals "
        "covering | pairs ranked right | targets | detail |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for v in _in_order(verdicts):
        pairs = f"{v.pairs_right} of {v.pairs}" if v.pairs else "-"
        lines.append(f"| {v.split} | {FORM_NAMES[(v.trace, v.form)]} | {v.measured_at} | "
                     f"{percents(v.median, v.largest)} | {percents(v.ratio_median, v.ratio_largest)} | {_cover(v)} | {pairs} | "
                     f"{'met' if v.met else '**missed**'} | [{v.doc}]({v.doc}) |")
    if missing:
        lines += ["", "Not measured yet:", *(f"- {line}" for line in missing)]
    lines += ["", "## Reproducibility", "",
              "How far a program's modelled time moves when nothing but the measurement is repeated: a second "
              "quick cost table of the same target (fsbench seed 2 against seed 1), or a second plain trace of the "
              "same program. Target for the tables: every program within 5%. *Within its runs' spread*: the "
              "tables moved the program no more than its own cold runs moved between rounds, minutes apart on "
              "the same image (the device's drift, which no table measured at another time can beat).", "",
              "| set | repeated | median | largest | within 5% | within its runs' spread |",
              "|---|---|---|---|---|---|"]
    for r in spreads:
        within = "-" if r.within_5pct is None else f"{r.within_5pct} of {r.n}"
        rounds = "-" if r.within_rounds is None else f"{r.within_rounds} of {r.n}"
        lines.append(f"| {r.split} | {r.what} | {percent(r.median, digits=1)} | {percent(r.largest, digits=1)} | "
                     f"{within} | {rounds} |")
    lines += _verdicts_section(verdicts)
    lines += _processor_section(verdicts)
    lines += _host_between_section(verdicts)
    lines += ["", "## Where the test set misses most", ""]
    for v in (v for v in verdicts if v.split == "test"):
        worst = "; ".join(f"{program} on {target} {100 * error:+.0f}%" for program, target, error in v.misses)
        lines.append(f"- {FORM_NAMES[(v.trace, v.form)]}: {worst}.")
    lines += ["", "Why they miss, and what was tried, is in [model-evidence.md](model-evidence.md) and in "
              "[test-set-runs.md](test-set-runs.md)."]
    return "\n".join(lines) + "\n"


def _newest(store: Any, kind: str, split: str) -> dict[str, Any] | None:
    found = store.newest_document_id(kind, split)
    return store.document(found, kind)[2] if found is not None else None


def overview(store: Any, cache_bytes: int) -> str:
    """docs/validation.md from the newest stored measurements of every validation.  Each
    test set is judged by the model its development set's measurements fit here (the stored
    one where the development set's measurements are gone), as it was when measured."""
    verdicts: list[FormVerdict] = []
    spreads: list[Reproducibility] = []
    missing = []
    recorded_model = stored_runtime_model(store, RECORDED_MODEL)
    plain_model = stored_runtime_model(store, PLAIN_MODEL)
    for split in SPLITS:  # dev first: its models judge the test set
        doc = _newest(store, "validation_measurements", split)
        if doc is None:
            missing.append(f"recordings of the {split} set (`fsbm validate --set {split}`)")
        else:
            found, fitted = recorded_verdicts(doc, recorded_model, cache_bytes)
            verdicts += found
            recorded_model = fitted if split == "dev" else recorded_model
        doc = _newest(store, "plain_validation_measurements", split)
        if doc is None:
            missing.append(f"plain traces of the {split} set (`fsbm validate --plain --set {split}`)")
        else:
            found, spread, fitted = plain_verdicts(doc, plain_model)
            verdicts += found
            spreads += spread
            plain_model = fitted if split == "dev" else plain_model
        doc = _newest(store, "capture_validation_measurements", split)
        if doc is None:
            missing.append(f"NFS captures of the {split} set (`fsbm validate --capture --set {split}`)")
        else:
            verdicts += capture_verdicts(doc, plain_model)
    return markdown(verdicts, spreads, missing)

"""What the validations measured, as a prediction's report quotes it.

A prediction is only as good as the validation of its own form: a `fsbm trace record`
recording is judged by `fsbm validate`, a plain strace log (with or without -T) by `fsbm
validate --plain`, an NFS capture by `fsbm validate --capture`, each in an absolute and a
relative form.  Every validation keeps its forms' figures here (kind "track_record", named
TRACE-SET); the report quotes the held-out test set's of the prediction's own form, or the
development set's, said to be that, where no test set was judged.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from fsbm.documents import verdict_field
from fsbm.store import ResultsStore

KIND = "track_record"
# A prediction's evidence (Prediction.evidence) -> the validation that judges that form, and
# the form's name there.
TRACES = {"recording": ("recorded", "absolute"), "trace": ("plain", "absolute"),
          "trace-untimed": ("plain", "untimed"), "capture": ("capture", "absolute")}
COMMANDS = {"recorded": "fsbm validate", "plain": "fsbm validate --plain", "capture": "fsbm validate --capture"}
WHAT = {"recorded": "recordings", "plain": "plain strace logs", "capture": "NFS captures"}
FORM_WORDS = {"absolute": "absolute form", "relative": "relative form", "untimed": "logs without -T"}


@dataclass(frozen=True)
class FormRecord:
    """One form's errors on one set: median and largest of runtimes, pairs ranked right."""

    median: float
    largest: float
    pairs_right: int
    pairs: int


@dataclass(frozen=True)
class TrackRecord:
    trace: str  # recorded | plain | capture
    split: str  # test | dev
    form: str
    measured_at: str
    record: FormRecord

    @property
    def page(self) -> str:
        return f"docs/validation-{self.trace}-{self.split}.md"

    def sentence(self) -> str:
        """The record in words, as the report's verdict says it."""
        r = self.record
        held = ("the held-out test set" if self.split == "test"
                else "the development set (what the rules were chosen on: no held-out set judged yet)")
        pairs = (f", and it ranked {r.pairs_right} of {r.pairs} pairs of filesystems measured apart right"
                 if r.pairs else "")
        return (f"Predictions from {WHAT[self.trace]} ({FORM_WORDS[self.form]}) on this machine, judged on {held} measured "
                f"{self.measured_at} UTC: median error {100 * r.median:.0f}% (largest {100 * r.largest:.0f}%){pairs} "
                f"(<code>{COMMANDS[self.trace]} --set {self.split}</code>, {self.page}).")


def save(store: ResultsStore, trace: str, split: str, finished: float, forms: dict[str, FormRecord]) -> None:
    """Keep one validation's forms' figures for the reports of predictions of that form."""
    store.save_document(KIND, {"kind": KIND, "trace": trace, "split": split,
                               "measured_at": time.strftime("%Y-%m-%d %H:%M", time.gmtime(finished)),
                               "forms": {form: asdict(record) for form, record in forms.items()}},
                        name=f"{trace}-{split}")


def forms_of(summary: dict[str, Any], forms: tuple[str, ...]) -> dict[str, FormRecord]:
    """The forms' figures of a plain or capture judge's summary (plain_judge, capture_judge)."""
    return {form: FormRecord(summary[form]["runtime"]["median"], summary[form]["runtime"]["largest"],
                             summary[form]["pairs_right"], summary[form]["pairs"])
            for form in forms if form in summary}


def of_prediction(store: ResultsStore, prediction: dict[str, Any]) -> TrackRecord | None:
    """The figures that speak for `prediction`: those of its own evidence and form (relative
    where its verdict ranks by the relative form, documents.verdict_field), of the test set where one was judged, else
    of the development set; None where no validation of that form is kept."""
    evidence = prediction.get("evidence") or ("recording" if prediction.get("outside_features") else "trace")
    if evidence not in TRACES:
        return None
    trace, form = TRACES[evidence]
    if verdict_field(prediction.get("absolute", True), bool(prediction.get("ranking")),
                     bool(prediction.get("relative_ranking"))) == "relative_s":
        form = "relative"
    for split in ("test", "dev"):
        found = store.newest_document_id(KIND, f"{trace}-{split}")
        body = store.document(found, KIND)[2] if found is not None else None
        if body and form in body["forms"]:
            return TrackRecord(trace, split, form, body["measured_at"], FormRecord(**body["forms"][form]))
    return None

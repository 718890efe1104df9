"""Predicting from what the results store holds: one path for `fsbm predict`, `fsbm report`
and POST /v1/predictions.

Stored documents never change once written, so a cost table's Pricer (with its fitted
Park-Lipton curves and the prices it has worked out), a profile, a runtime model and a calibration are kept
by document id for as long as the service lives; only "which is the newest table of this
candidate" is asked of the store each time.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Optional

from fsbm.errors import UsageError
from fsbm.host import memory_available_bytes
from fsbm.lru import LruCache
from fsbm.predictor.cost_table import CostTable
from fsbm.documents import Prediction, Profile
from fsbm.predictor.capture_cost import CALIBRATED_ON, CAPTURE_CALIBRATION, CaptureCost
from fsbm.predictor.estimator import RuntimeEstimator
from fsbm.predictor.predict import predict
from fsbm.predictor.pricing import Pricer
from fsbm.predictor.tracing import TracingCalibration, newest_current
from fsbm.store import Checkpointer, ResultsStore

CACHED_DOCUMENTS = 256


def newest_table_ids(store: ResultsStore, names: list[str]) -> list[int]:
    """The id of the newest cost table of each named candidate; a clear error naming what the
    store has where one has none."""
    known = store.newest_document_ids("cost_table", names)
    for name in names:
        if name not in known:
            held = sorted({held for _, held, _ in store.document_names("cost_table") if held})
            raise UsageError(f"the store has no cost table for '{name}' (it has: {', '.join(held) or 'none'})",
                             hint="measure it with `fsbm bench --fs NAME` or `fsbm bench --target DIR`")
    return [known[name] for name in names]


class PredictionService:
    """Predictions against one store.  Thread-safe: SQLite handles are per thread."""

    def __init__(self, store_path: Optional[Path]) -> None:
        self.store_path = store_path
        self._checkpointer: Optional[Checkpointer] = None
        self._pricers = LruCache(CACHED_DOCUMENTS, long_lived=True)
        self._documents = LruCache(CACHED_DOCUMENTS, long_lived=True)
        self._profiles = LruCache(CACHED_DOCUMENTS, long_lived=True)
        self._models = LruCache(CACHED_DOCUMENTS, long_lived=True)  # predicting never changes a model
        self._local = threading.local()

    def store(self) -> ResultsStore:
        """This thread's handle on the store, opened on first use (a server thread keeps its own)."""
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = ResultsStore(self.store_path, checkpoints=self._checkpointer is None)
        return store

    def start_checkpoints(self) -> None:
        """For a long-lived service saving a prediction per request: the handles opened from now
        on leave the WAL's checkpoints to a thread of their own (Checkpointer), off the
        requests' path.  `close` stops it."""
        if self._checkpointer is None:
            self._checkpointer = Checkpointer(self.store_path)

    def close(self) -> None:
        """Stop the checkpoint thread, if there is one (after one last checkpoint)."""
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None

    def _document(self, store: ResultsStore, document_id: int, kind: str) -> Optional[dict[str, Any]]:
        def load() -> Optional[dict[str, Any]]:
            found = store.document(document_id, kind)
            return found[2] if found else None
        return self._documents.get((kind, document_id), load)

    def profile(self, store: ResultsStore, profile_id: int) -> dict[str, Any]:
        body = self._document(store, profile_id, "profile")
        if body is None:
            raise LookupError(f"no profile {profile_id} in the store")
        return body

    def validated_profile(self, store: ResultsStore, profile_id: int) -> Profile:
        """A stored profile, validated once and kept: validating a profile's every number takes
        longer than pricing it."""
        return self._profiles.get(profile_id, lambda: Profile.of(self.profile(store, profile_id)))

    def pricer(self, store: ResultsStore, table_id: int) -> Pricer:
        def build() -> Pricer:
            body = self._document(store, table_id, "cost_table")
            if body is None:
                raise LookupError(f"no cost table {table_id} in the store")
            return Pricer(CostTable.from_json(body, f"cost table {table_id}"))
        return self._pricers.get(table_id, build)

    def newest_tables(self, store: ResultsStore, names: list[str]) -> list[tuple[int, Pricer]]:
        """The newest cost table of each named candidate; a clear error naming what the store has."""
        return [(table_id, self.pricer(store, table_id)) for table_id in newest_table_ids(store, names)]

    def runtime_model(self, store: ResultsStore, profile: Profile | dict[str, Any],
                      uncalibrated: bool = False) -> tuple[Optional[int], RuntimeEstimator]:
        """The newest runtime model a validation fitted on workloads traced as `profile` was:
        by `fsbm validate` for a `fsbm trace record` recording, by `fsbm validate --plain
        --set dev` for a plain trace; with its document id.  Unfitted where there is none;
        `uncalibrated` keeps its errors but not its factors (the raw model)."""
        document_id = store.newest_document_id("runtime_model", model_name(profile))

        def build() -> RuntimeEstimator:
            if document_id is None:
                return RuntimeEstimator.unfitted()
            model = RuntimeEstimator.from_json(self._document(store, document_id, "runtime_model"))
            if uncalibrated:
                model.factors_ = {}
            return model
        return document_id, self._models.get((document_id, uncalibrated), build)

    def tracing(self, store: ResultsStore) -> Optional[TracingCalibration]:
        """The newest current tracing calibration (`fsbm trace calibrate`, or a plain
        validation's), or None."""
        return newest_current(self._document(store, document_id, "tracing_calibration")
                              for document_id, _, _ in store.document_names("tracing_calibration"))

    def capture_cost(self, store: ResultsStore) -> Optional[CaptureCost]:
        """The newest calibration of what capturing costs here (`fsbm trace calibrate
        --capture`, or a capture validation's), or None."""
        document_id = store.newest_document_id(CAPTURE_CALIBRATION, CALIBRATED_ON)
        return CaptureCost.from_json(self._document(store, document_id, CAPTURE_CALIBRATION)) \
            if document_id is not None else None

    def predict(self, store: ResultsStore, profile: Profile | dict[str, Any], names: list[str], *,
                cache_bytes: Optional[int] = None, start: str = "cold", uncalibrated: bool = False,
                measured: Optional[float] = None, traced_on: Optional[str] = None,
                profile_id: Optional[int] = None) -> Prediction:
        """The prediction (not stored: `save` does that)."""
        profile = Profile.of(profile)
        tables = self.newest_tables(store, names)
        model_id, model = self.runtime_model(store, profile, uncalibrated)
        try:
            prediction = predict(profile, tables, start=start, model=model, model_id=model_id, measured=measured,
                                 cache_bytes=memory_available_bytes() if cache_bytes is None else cache_bytes,
                                 traced_on=traced_on, tracing=self.tracing(store),
                                 capture_cost=self.capture_cost(store) if profile.protocol == "nfs" else None)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        prediction.profile_id = profile_id
        return prediction

    @staticmethod
    def save(store: ResultsStore, prediction: Prediction, name: str) -> str:
        """Keep a prediction; its id (also its report's) goes into it.  The prediction as the
        API answers it (JSON, with the id)."""
        def encode(document_id: int) -> str:
            prediction.id = document_id
            return prediction.model_dump_json()
        return store.save_named_document("prediction", encode, name=name)[1]

    def answer_key(self, store: ResultsStore, profile_id: int, names: list[str], **question: Any) -> str:
        """What makes two prediction requests the same question: the profile, the cost tables
        (by id: a newer table is a new question), the calibration and the rest of the request."""
        tables = [document_id for document_id, _ in self.newest_tables(store, names)]
        models = [document_id for document_id, _, _ in store.document_names("runtime_model")[:1]]
        return json.dumps([profile_id, tables, models, question], sort_keys=True, default=str)


RECORDED_MODEL, PLAIN_MODEL = "recorded", "plain"  # the names the two runtime models are kept under


def model_name(profile: Profile | dict[str, Any]) -> str:
    """What the runtime model for a profile is stored as: "recorded" for a `fsbm trace
    record` recording (fitted by `fsbm validate`), "plain" for any other trace (fitted by
    `fsbm validate --plain --set dev`)."""
    recording = profile.recording if isinstance(profile, Profile) else profile.get("recording")
    return RECORDED_MODEL if recording else PLAIN_MODEL


def cost_table_summaries(store: ResultsStore) -> list[dict[str, Any]]:
    """Every stored cost table, newest first: what it is of, when measured, in what environment."""
    out = []
    for document_id, created, body in store.documents("cost_table"):
        table = CostTable.from_json(body, f"cost table {document_id}")
        out.append({"id": document_id, "candidate": table.candidate, "created": created,
                    "measured_at": table.measured_at, "memory_only": table.memory_only,
                    "cases": len(table.entries), "environment": table.environment})
    return out

"""The contract: pydantic models of what fsbm hands out, shared by the HTTP API and the CLI's
--json, so the two cannot drift (STYLE: FastAPI).

A profile is the characterizer's document; only the parts the predictor reads are typed
strictly (an inline profile missing them is a 422 naming the field, not a crash in the
model), and the rest passes through as it is.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt, field_validator, model_validator

from fsbm.characterizer.classes import COSTED_OPERATIONS, DATA_CLASSES
from fsbm.predictor.model import STARTS

ORDERS = ("sequential", "forward", "random")
PROFILE_SCHEMA = 3


class _Open(BaseModel):
    """A part of a document that may carry more than fsbm reads from it.  No number in it may
    be NaN or infinite: JSON has no such numbers, and a body that sends them gets a 422."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


def _non_finite(value: Any, where: str) -> Optional[str]:
    """The first place in a JSON value that holds NaN or an infinity, or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "the body"
    if isinstance(value, dict):
        return next((found for k, v in value.items() if (found := _non_finite(v, f"{where}.{k}" if where else str(k)))),
                    None)
    if isinstance(value, list):
        return next((found for i, v in enumerate(value) if (found := _non_finite(v, f"{where}[{i}]"))), None)
    return None


# -- the workload profile (characterizer/profile.py) -------------------------------------------


class ClassCount(_Open):
    count: NonNegativeInt
    bytes: NonNegativeInt


class MetadataCount(_Open):
    done: NonNegativeInt
    failed: NonNegativeInt = 0
    empty: NonNegativeInt = 0


class Classes(_Open):
    """Event classes: data {op: {order: {size bucket: counts}}}, metadata {op: outcomes}."""

    data: dict[str, dict[str, dict[str, ClassCount]]]
    metadata: dict[str, MetadataCount]

    @field_validator("data")
    @classmethod
    def _data_names(cls, data: dict[str, dict[str, dict[str, ClassCount]]]) -> Any:
        for op, orders in data.items():
            if op not in DATA_CLASSES:
                raise ValueError(f"data class {op!r} is not one of {', '.join(DATA_CLASSES)}")
            for order, buckets in orders.items():
                if order not in ORDERS:
                    raise ValueError(f"order {order!r} of {op} is not one of {', '.join(ORDERS)}")
                for bucket in buckets:
                    if not bucket.isdigit():
                        raise ValueError(f"size bucket {bucket!r} of {op} {order} is not a number of bytes")
        return data

    @field_validator("metadata")
    @classmethod
    def _metadata_names(cls, metadata: dict[str, MetadataCount]) -> Any:
        unknown = sorted(set(metadata) - set(COSTED_OPERATIONS))
        if unknown:
            raise ValueError(f"unknown operation {', '.join(unknown)}; known: {', '.join(COSTED_OPERATIONS)}")
        return metadata


class ReusePoint(_Open):
    cache_bytes: NonNegativeInt
    hit_fraction: float = Field(ge=0, le=1)


class Reuse(_Open):
    """The reuse curve: the share of block reads a cache of each size holds."""

    block_reads: NonNegativeInt = 0
    distinct_blocks: NonNegativeInt = 0
    cold_misses: NonNegativeInt = 0
    block_size: int = Field(4096, gt=0)
    points: list[ReusePoint] = []


class Namespace(_Open):
    files_touched: NonNegativeInt
    directories_touched: NonNegativeInt


class Fsync(_Open):
    bytes_written_per_fsync: Optional[NonNegativeFloat] = None


class Runs(_Open):
    read_only: NonNegativeInt = 0
    read_write: NonNegativeInt = 0


class Recording(_Open):
    """What `fsbm trace record` measured of the traced run (fsrusage)."""

    user_cpu_ns: NonNegativeInt


class TraceTime(_Open):
    known: bool = False
    outside_calls_corrected_ns: NonNegativeFloat = 0


class Profile(_Open):
    """A workload profile (`fsbm characterize --json`), schema 3."""

    schema_version: int
    kind: str = "profile"
    source: Optional[str] = None
    scope: Optional[str] = None
    classes: Classes
    reuse: Reuse
    namespace: Namespace
    fsync: Fsync = Fsync()
    runs: Runs = Runs()
    recording: Optional[Recording] = None
    trace_time: TraceTime = TraceTime()
    tang: dict[str, Any] = {}

    @model_validator(mode="before")
    @classmethod
    def _finite(cls, data: Any) -> Any:
        """Fields fsbm passes through unread are checked too: a stored NaN breaks every reader later."""
        where = _non_finite(data, "")
        if where:
            raise ValueError(f"{where} is not a finite number")
        return data

    @field_validator("schema_version")
    @classmethod
    def _schema(cls, version: int) -> int:
        if version != PROFILE_SCHEMA:
            raise ValueError(f"profile schema {version}; this fsbm predicts from schema {PROFILE_SCHEMA} "
                             "(characterize the trace again)")
        return version


# -- a prediction (predictor/predict.py) -------------------------------------------------------


class PriceLine(_Closed):
    """One class of calls: how many, what each costs, and where that cost came from."""

    op: str
    group: str
    detail: str
    count: float
    ns_each: float
    cpu_ns_each: Optional[float] = Field(None, description="of ns_each, the caller's CPU time (fsbench cpu_ns); "
                                                           "null from a cost table measured before fsbench kept it")
    total_ns: float
    source: str


class FsFactor(_Open):
    factor: float
    key: str
    low: Optional[float] = None
    high: Optional[float] = None


class CandidatePrediction(_Closed):
    candidate: str
    calibration_key: str
    cost_table_id: Optional[int]
    cost_table_measured_at: Optional[str]
    environment: dict[str, Optional[str]]
    runtime_s: float = Field(description="Predicted runtime: outside_s + fs_s.")
    low_s: float = Field(description="Low end of the 90% interval.")
    high_s: float = Field(description="High end of the 90% interval.")
    fs_s: float = Field(description="Time inside the filesystem, calibrated.")
    fs_modelled_s: float = Field(description="Time inside the filesystem, count x cost before calibration.")
    fs_factor: FsFactor
    outside_s: float = Field(description="Time outside the filesystem (CPU time and calls elsewhere).")
    breakdown_s: dict[str, float] = Field(description="Filesystem time per operation, calibrated.")
    lines: list[PriceLine]
    relative_s: Optional[float] = None
    relative_low_s: Optional[float] = None
    relative_high_s: Optional[float] = None


class Ranking(_Closed):
    order: list[str]
    by: str
    best: Optional[str] = None
    runner_up: Optional[str] = None
    faster_by: Optional[float] = Field(None, description="Runner-up's runtime / best's - 1.")
    confidence: Optional[float] = Field(None, description="Probability the best is faster than the runner-up.")


class Measured(_Closed):
    seconds: float
    on: str


class Prediction(_Closed):
    """`fsbm predict --json`, and the body of POST /v1/predictions."""

    schema_version: int
    kind: Literal["prediction"] = "prediction"
    id: Optional[int] = Field(None, description="The stored prediction's id; also its report's id.")
    profile_id: Optional[int] = None
    workload: Optional[str]
    scope: Optional[str]
    cache_bytes: int
    start: str
    cpu_scales: dict[str, float] = Field({}, description="Per group of operations (metadata, read, write, sync), how "
                                                        "many times fsbench's CPU time per call the workload's calls "
                                                        "took, replayed cold where it was traced (fsbm trace record "
                                                        "--replay-in); each CPU price of the group is taken that many "
                                                        "times, where a candidate's CPU prices of the group are no "
                                                        "higher than the traced filesystem's (traced_cpu_ns); above "
                                                        "them it adds no more CPU than it did there. Empty or 1: not "
                                                        "measured.")
    traced_cpu_ns: dict[str, float] = Field({}, description="Per group of operations, fsbench's CPU prices of the "
                                                            "workload's calls on the filesystem it was traced on, in "
                                                            "ns: what the CPU scales were measured against.")
    calibration_id: Optional[int]
    validated: bool
    calibrated: bool
    outside_features: Optional[dict[str, float]]
    outside_evidence: Optional[str] = Field(None, description="What the time outside the filesystem rests on: a "
                                                              "recording's CPU time, a plain trace's span less what "
                                                              "tracing added, or nothing (then only the filesystem's "
                                                              "time is predicted).")
    model_error: Optional[dict[str, Any]] = Field(None, description="For a plain trace: the 5th and 95th "
                                                  "percentiles of the errors the development set measured, per form "
                                                  "(predicted / real - 1), which the 90% intervals are.")
    traced_on: Optional[str] = None
    absolute: bool
    candidates: list[CandidatePrediction]
    ranking: Optional[Ranking] = None
    measured: Optional[Measured] = None
    relative_ranking: Optional[Ranking] = None


class PredictionRequest(_Closed):
    """POST /v1/predictions: a stored profile (by id) or an inline one, and the candidates."""

    profile_id: Optional[int] = Field(None, ge=1, le=2**62)
    profile: Optional[Profile] = None
    candidates: list[str] = Field(min_length=1, max_length=32, description="Cost table names (GET /v1/filesystems).")
    cache_bytes: Optional[int] = Field(None, ge=0, le=2**62, description="Page cache of the target machine (default: the "
                                                                 "memory available on the server).")
    start: Literal[STARTS] = "cold"  # type: ignore[valid-type]
    measured_s: Optional[float] = Field(None, ge=0, le=1e9, description="A measured runtime on traced_on: adds the "
                                                                  "relative form.")
    traced_on: Optional[str] = Field(None, description="The candidate the workload was traced (and measured_s "
                                                       "measured) on: its costs tell the system time outside the "
                                                       "filesystem.")
    uncalibrated: bool = False

    @model_validator(mode="after")
    def _one_profile(self) -> "PredictionRequest":
        if (self.profile_id is None) == (self.profile is None):
            raise ValueError("give exactly one of profile_id and profile")
        if self.measured_s is not None and self.traced_on is None:
            raise ValueError("measured_s needs traced_on, the candidate it was measured on")
        if any(not name.strip() for name in self.candidates):
            raise ValueError("a candidate name is empty")
        return self


# -- the service's own records -----------------------------------------------------------------


class Job(_Closed):
    """A trace upload being turned into a profile."""

    id: str
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    progress: float = Field(ge=0, le=1)
    message: str
    created: str
    updated: str
    trace_name: Optional[str] = None
    size_bytes: Optional[int] = None
    profile_id: Optional[int] = None
    profile_url: Optional[str] = None
    error: Optional[str] = None


class StoredProfile(_Closed):
    id: int
    created: str
    profile: dict[str, Any]


class CostTableSummary(_Closed):
    id: int
    candidate: str
    created: str
    measured_at: Optional[str]
    memory_only: bool
    cases: int
    environment: dict[str, Any]


class Filesystems(_Closed):
    cost_tables: list[CostTableSummary]


class Health(_Closed):
    """GET /healthz, which needs no key: says nothing about where the server keeps things."""

    status: Literal["ok"]
    version: str
    schema_version: int


class ErrorBody(_Closed):
    detail: Any

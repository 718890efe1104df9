"""The HTTP API's own models: requests and the service's records.  The documents it hands
out, a profile and a prediction, are fsbm.documents, shared with the CLI's --json and every
package (STYLE: FastAPI).
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from fsbm.documents import ORDERS, PROFILE_SCHEMA, Prediction, Profile, _Closed
from fsbm.predictor.model import STARTS

__all__ = ["ORDERS", "PROFILE_SCHEMA", "Prediction", "PredictionRequest", "Profile"]


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


class StoredDocument(_Closed):
    """One stored document in a listing: its id (GET it by that id), name, when, and size."""

    id: int
    name: Optional[str]
    created: str
    bytes: int


class StoredDocuments(_Closed):
    """A page of a listing, newest first; `next_offset` asks for the next page (None: the last)."""

    items: list[StoredDocument]
    next_offset: Optional[int]


class Filesystems(_Closed):
    cost_tables: list[CostTableSummary]


class Health(_Closed):
    """GET /healthz, which needs no key: says nothing about where the server keeps things."""

    status: Literal["ok"]
    version: str
    schema_version: int


class ErrorBody(_Closed):
    detail: Any

"""Two cost tables or two profiles side by side (`fsbm compare`), as darshan-diff sets two
Darshan logs beside each other.

Either side is a JSON file (a cost table, a profile, or a `fsbm store export`), a stored
document's id, or a stored name (the newest cost table of that name, else the newest
profile).  Both sides must be of the same kind.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbm.api.render import profile_rows
from fsbm.errors import UsageError
from fsbm.predictor.cost_table import CostTable
from fsbm.store import EXPORT_FORMAT, ResultsStore

COMPARABLE = ("cost_table", "profile")


@dataclass(frozen=True)
class Side:
    """One side of a comparison: what it is, where it came from, and its body."""

    kind: str
    label: str
    body: dict[str, Any]


@dataclass(frozen=True)
class CaseComparison:
    """One fsbench case measured in both cost tables: its mean latency in each, and B over A."""

    bench: str
    op: str
    size: int | None
    order: str
    cache: str
    file_sizes: tuple[int, ...]  # a *_mix case's mix of file sizes; () for every other case
    request_sizes: tuple[int, ...]  # write_new_mix's mix of request sizes, or a sync's written in them; else ()
    files: int | None  # the files a case was measured among (cost_table.FILE_COUNT_BENCHES); else None
    placement: str  # where fsbench ran: pinned to a CPU or unpinned (cost_table.placement_of)
    a_ns: float | None
    b_ns: float | None

    @property
    def ratio(self) -> float | None:
        if not self.a_ns or self.b_ns is None:
            return None
        return self.b_ns / self.a_ns


def resolve(store: ResultsStore, given: str) -> Side:
    """A file, a stored document's id, or a stored name, as a Side."""
    path = Path(given)
    if path.is_file():
        try:
            body = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path} is not a JSON document: {exc}") from None
        if isinstance(body, dict) and body.get("format") == EXPORT_FORMAT:
            body = body.get("body")
        if not isinstance(body, dict) or body.get("kind") not in COMPARABLE:
            raise UsageError(f"{path} is neither a cost table nor a profile (its kind is "
                             f"{body.get('kind') if isinstance(body, dict) else None!r})")
        return Side(body["kind"], str(path), body)
    if given.isdigit():
        found = store.document(int(given))
        if found is None:
            raise UsageError(f"no stored document {given} (`fsbm store list tables` or `profiles` lists them)")
        kind, created, body = found
        if kind not in COMPARABLE:
            raise UsageError(f"stored document {given} is a {kind}; compare takes cost tables or profiles")
        return Side(kind, f"#{given} {body.get('candidate') or body.get('source') or ''} ({created})".strip(), body)
    for kind in COMPARABLE:
        documents = store.documents(kind, name=given)
        if documents:
            document_id, created, body = documents[0]
            return Side(kind, f"{given} (#{document_id}, {created})", body)
    raise UsageError(f"{given} is not a file, a stored document's id, or the name of a stored cost table or profile")


@dataclass(frozen=True)
class StatisticComparison:
    """One statistic of the profiles' summary (render.profile_rows) in each profile; None where
    a profile has no such row."""

    statistic: str
    a: str | None
    b: str | None


def compare_profiles(a: dict[str, Any], b: dict[str, Any]) -> list[StatisticComparison]:
    """Every summary statistic of either profile, in A's order then B's own."""
    rows_a, rows_b = dict(profile_rows(a)), dict(profile_rows(b))
    return [StatisticComparison(k, rows_a.get(k), rows_b.get(k))
            for k in [*rows_a, *(k for k in rows_b if k not in rows_a)]]


def compare_tables(a: CostTable, b: CostTable) -> list[CaseComparison]:
    """Every case of either table, in A's order then B's own, with each side's mean latency."""
    a_cases = {c.key: c for c in a.entries}
    b_cases = {c.key: c for c in b.entries}
    rows = []
    for k in [*a_cases, *(k for k in b_cases if k not in a_cases)]:
        found_a, found_b = a_cases.get(k), b_cases.get(k)
        rows.append(CaseComparison(*k, a_ns=found_a.latency_ns.mean if found_a else None,
                                   b_ns=found_b.latency_ns.mean if found_b else None))
    return rows


def geometric_mean_ratio(rows: list[CaseComparison]) -> float | None:
    """B over A across the cases both tables measured: one figure for "how much slower"."""
    ratios = [r.ratio for r in rows if r.ratio and r.ratio > 0]
    return math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None

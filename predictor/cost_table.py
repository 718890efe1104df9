"""Cost tables: what each operation costs on one filesystem, in one state, on one machine.

Built from an fsbench document (DESIGN: latency distributions across sizes, patterns and
cache states, plus the fitted Park and Lipton parameters), kept as JSON with a
schema_version and in the results store, so the predictor never re-runs a benchmark to
know a cost.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict

from fsbm.errors import UsageError
from fsbm.predictor.park_lipton import ParkLiptonFit, fit_fsbench_results, order_label

SCHEMA_VERSION = 1

# Filesystems that live in the page cache: they have no cold or O_DIRECT state, so fsbench
# skips those cases and their cost is the warm cost.
MEMORY_ONLY_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})


class _Part(BaseModel):
    """A part of a cost table's case: what fsbench wrote, every field kept, the ones the
    predictor reads typed."""

    model_config = ConfigDict(extra="allow")


class Latency(_Part):
    """A case's latency per call, ns: the mean with its 95% interval (and percentiles)."""

    mean: float
    ci95_low: Optional[float] = None
    ci95_high: Optional[float] = None
    p50: Optional[float] = None
    p99: Optional[float] = None
    p999: Optional[float] = None

    @property
    def low(self) -> float:
        return self.mean if self.ci95_low is None else self.ci95_low

    @property
    def high(self) -> float:
        return self.mean if self.ci95_high is None else self.ci95_high


class CpuTime(_Part):
    mean: float


class GapCost(_Part):
    """Of a forward stream, the reads that followed a gap of one power of two."""

    gap: int
    count: int
    mean_ns: float


class Repeats(_Part):
    """How many measurements a median table's case is the median of, and their means."""

    count: int
    means_ns: list[float]


class LatencyBucket(_Part):
    """One bucket of a case's log-linear latency histogram: `count` calls took lo_ns <= ns < hi_ns."""

    lo_ns: int
    hi_ns: int
    count: int


# The benchmarks measured at a workload's count (fsbench --files), and the field of fsbench's
# result that says the count a case is known by: the files stat_listed_mix was asked to run
# among (on btrfs a listed file's attributes cost 8 us among a thousand files of a mix and
# 14 among four thousand), the files create_written_mix was asked to make and write (on
# btrfs 5% of its creates wait among 200 files of a tree's mix, 22% among 1,000), and the
# entries of each directory readdir_entries listed (a directory of four thousand entries
# costs ext4 a cold listing some 27 times one of a hundred).  A mix's case is known by the
# count asked for, not the count made: fsbench makes fewer where the asked count of the mix
# would hold more than it writes a repetition, and the count asked for is the one a
# workload's price looks for (pricing.written_files, pricing.listed_files).  And the files unlink
# ran among, which are the length of its stream of unlinks: on btrfs 24,000 unlinks cost 37-47
# us each where the quick table's thousand cost 20-29 us (pricing.Pricer.unlink_among); and
# the entries of each directory unlink_entries emptied (pricing.Pricer.unlink_emptying).
FILE_COUNT_BENCHES = {"stat_listed_mix": "files_asked", "create_written_mix": "files_asked",
                      "readdir_entries": "entries_per_op", "unlink": "files_asked", "unlink_entries": "files_asked"}


# Where fsbench ran while it measured a case: pinned to one CPU (its default, --cpu N), or
# unpinned (--cpu none), free to move as the programs it prices are.  Part of a case's
# definition: the same unlinks in xfs's directories of 2,000 entries cost 17 us pinned and
# 29 us unpinned, where programs (unpinned) paid the latter, while a cold random read costs
# an unpinned fsbench some 1.3x what a program waiting for it pays.  A case measured by an
# fsbench that did not record its placement was measured as its run's environment says.
PINNED = "pinned"
UNPINNED = "unpinned"


def placement_of(environment: dict[str, Any]) -> str:
    """The placement of every case of a run measured in `environment` (fsbench's
    pinned_cpu: None when it ran unpinned; absent from runs older than the field, which
    pinned)."""
    return UNPINNED if "pinned_cpu" in environment and environment["pinned_cpu"] is None else PINNED


def counted_among(result: dict[str, Any]) -> int | None:
    """The count fsbench's `result` is known by (FILE_COUNT_BENCHES), None for a benchmark not
    measured at a workload's count.  A result of an fsbench that did not yet write
    files_asked is known by the files it made, which were the count asked for wherever the
    mix's bytes did not bind."""
    field = FILE_COUNT_BENCHES.get(result["bench"])
    if field is None:
        return None
    return result.get(field) or (result.get("objects") if field == "files_asked" else None) or None


class Case(_Part):
    """One measured case of fsbench: a benchmark at one request size, order (with the gap of
    a forward stream) and cache state, and what a call of it cost."""

    bench: str
    op: str
    size: Optional[int] = None
    # A *_mix benchmark's: the bytes written into each file, cycled (size is their mean).
    file_sizes: Optional[list[int]] = None
    # write_new_mix's: the workload's request sizes, cycled (size is their mean).
    request_sizes: Optional[list[int]] = None
    # A case measured at a workload's count (FILE_COUNT_BENCHES): the files it was asked to
    # run among, or the entries of each directory it listed.
    files: Optional[int] = None
    # A *_mix case's: the files its setup made, fewer than `files` where the asked count of
    # the mix would hold more bytes than fsbench writes a repetition.
    objects: Optional[int] = None
    order: str
    gap: Optional[int] = None
    cache: str
    # PINNED or UNPINNED (placement_of); a table fills it in from its run's environment.
    placement: str = PINNED
    ops: int = 0
    latency_ns: Latency
    cpu_ns: Optional[CpuTime] = None
    gap_costs: Optional[list[GapCost]] = None
    listed_bytes_per_op: Optional[float] = None
    entries_per_op: Optional[float] = None
    repeats: Optional[Repeats] = None
    # 16 buckets per power of two (fsbench's latency.h); none in tables measured before it kept them.
    histogram: list[LatencyBucket] = []

    def as_result(self) -> dict[str, Any]:
        """The case as fsbench wrote it (what park_lipton fits)."""
        return self.model_dump(exclude_none=True)

    @property
    def key(self) -> tuple[str, str, int | None, str, str, tuple[int, ...], tuple[int, ...], int | None, str]:
        """What makes two measurements the same case: benchmark, operation, size, order (with
        a forward stream's gap), cache, mixes of file and request sizes, the files it was
        measured among (FILE_COUNT_BENCHES), and where fsbench ran (its placement)."""
        return (self.bench, self.op, self.size, order_label(self.as_result()), self.cache, tuple(self.file_sizes or ()),
                tuple(self.request_sizes or ()), self.files, self.placement)


def pooled_gap_costs(rows: list[GapCost]) -> list[GapCost]:
    """Forward streams' reads by gap bucket (GapCost rows of one stream or several), pooled
    bucket by bucket: counts added, means weighed by them; smallest gap first."""
    counts: dict[int, int] = {}
    total_ns: dict[int, float] = {}
    for row in rows:
        counts[row.gap] = counts.get(row.gap, 0) + row.count
        total_ns[row.gap] = total_ns.get(row.gap, 0.0) + row.count * row.mean_ns
    return [GapCost(gap=gap, count=n, mean_ns=total_ns[gap] / n if n else 0.0) for gap, n in sorted(counts.items())]


def _by_ops(a: Case, b: Case, value: Callable[[Case], float | None]) -> float | None:
    """The two cases' `value`, weighed by how many calls each timed; None where either lacks it."""
    x, y = value(a), value(b)
    if x is None or y is None:
        return None
    wa, wb = max(a.ops, 1), max(b.ops, 1)
    return (wa * x + wb * y) / (wa + wb)


def _pooled_buckets(a: list[dict[str, int]], b: list[dict[str, int]]) -> list[dict[str, int]]:
    """Two histograms' buckets ({lo_ns, hi_ns, count}) added, bucket by bucket."""
    counts: dict[tuple[int, int], int] = {}
    for bucket in (*a, *b):
        key = (int(bucket["lo_ns"]), int(bucket["hi_ns"]))
        counts[key] = counts.get(key, 0) + int(bucket["count"])
    return [{"lo_ns": lo, "hi_ns": hi, "count": n} for (lo, hi), n in sorted(counts.items())]


# The percentiles a pooled case keeps, each the two cases' weighed by their calls.
POOLED_PERCENTILES = ("p50", "p90", "p99", "p999")


def pooled_case(a: Case, b: Case) -> Case:
    """Two measurements of one case as one: every call of both.  Its mean, percentiles and CPU
    time are the two's weighed by their calls (a percentile read from the added histograms
    would be coarser than fsbench's own: 16 buckets a power of two against 256), its 95%
    interval spans both of theirs, its histograms are the two added, and a forward stream's
    costs by gap are pooled the same way."""
    hist_a = [h.model_dump() for h in a.histogram]
    hist_b = [h.model_dump() for h in b.histogram]
    histogram = _pooled_buckets(hist_a, hist_b) if hist_a and hist_b else []
    latency = {"mean": _by_ops(a, b, lambda e: e.latency_ns.mean),
               "ci95_low": min(a.latency_ns.low, b.latency_ns.low), "ci95_high": max(a.latency_ns.high, b.latency_ns.high)}
    for name in POOLED_PERCENTILES:
        value = _by_ops(a, b, lambda e: getattr(e.latency_ns, name, None))
        if value is not None:
            latency[name] = value
    update: dict[str, Any] = {"ops": a.ops + b.ops, "latency_ns": Latency.model_validate(latency),
                              "histogram": [LatencyBucket.model_validate(h) for h in histogram]}
    if a.cpu_ns is not None and b.cpu_ns is not None:
        update["cpu_ns"] = CpuTime(mean=_by_ops(a, b, lambda e: e.cpu_ns.mean))
    extra_a, extra_b = a.model_extra or {}, b.model_extra or {}
    if extra_a.get("histogram_log2") and extra_b.get("histogram_log2"):
        update["histogram_log2"] = _pooled_buckets(extra_a["histogram_log2"], extra_b["histogram_log2"])
    for name in ("listed_bytes_per_op", "entries_per_op"):
        update[name] = _by_ops(a, b, lambda e: getattr(e, name))
    if a.gap_costs and b.gap_costs:
        update["gap_costs"] = pooled_gap_costs([*a.gap_costs, *b.gap_costs])
    return a.model_copy(update=update)


@dataclass
class CostTable:
    """Measured costs of one candidate filesystem (e.g. 'ext4[data=journal]', aged, cold)."""

    candidate: str
    environment: dict[str, Any]
    measured_at: str
    entries: list[Case]
    fits: list[ParkLiptonFit] = field(default_factory=list)
    fsbench_run_id: int | None = None
    # What fsprobe found on this candidate (block size, readahead, page cache, ...).
    parameters: dict[str, Any] = field(default_factory=dict)
    # fsbench's seed: its random orders and forward streams (which offsets a stream reads
    # decides what readahead makes of it), None where not recorded.
    seed: int | None = None

    def __post_init__(self) -> None:
        placement = placement_of(self.environment)
        self.entries = [e if isinstance(e, Case) else Case.model_validate({"placement": placement, **e})
                        for e in self.entries]

    @classmethod
    def from_fsbench(cls, doc: dict[str, Any], candidate: str | None = None,
                     run_id: int | None = None) -> "CostTable":
        environment = doc.get("environment", {})
        entries = [
            {
                "bench": r["bench"], "op": r["op"], "size": r.get("size"), "order": r["order"],
                "gap": r.get("gap"), "stream_reads": r.get("stream_reads"), "cache": r["cache"], "ops": r["ops"],
                "latency_ns": r["latency_ns"], **({"cpu_ns": r["cpu_ns"]} if r.get("cpu_ns") else {}),
                "histogram_log2": r["histogram_log2"], "histogram": r.get("histogram", []), "bimodal": r["bimodal"],
                "partial_block": r.get("partial_block"),
                **({"gap_costs": r["gap_costs"]} if r.get("gap_costs") else {}),
                **{key: r[key] for key in ("entries_per_op", "listed_bytes_per_op", "file_sizes", "request_sizes")
                   if r.get(key)},
                **({"files": among} if (among := counted_among(r)) else {}),
                **({"objects": r["objects"]} if r.get("file_sizes") and r.get("objects") else {}),
            }
            for r in doc.get("results", [])
        ]
        return cls(
            candidate=candidate or environment.get("fs_type", "unknown"),
            environment=environment,
            measured_at=doc.get("finished") or doc.get("started", ""),
            entries=entries,
            fits=fit_fsbench_results(doc.get("results", [])),
            fsbench_run_id=run_id,
            seed=(doc.get("config") or {}).get("seed"),
        )

    @property
    def memory_only(self) -> bool:
        return self.environment.get("fs_type") in MEMORY_ONLY_FILESYSTEMS

    def measured_cache(self, cache: str) -> str:
        """The cache state a case of `cache` was measured in: on a memory-only filesystem cold
        and direct are warm (fsbench measures them there as warm)."""
        return "warm" if self.memory_only and cache in ("cold", "direct") else cache

    def entry(self, bench: str, order: str, cache: str, size: int | None = None,
              gap: int | None = None) -> Case | None:
        """The measured case (`gap`: a forward read's), or None; its cache as measured_cache.
        A case measured in a workload's request sizes is not one of these: it is found by
        its request sizes (pricing)."""
        cache = self.measured_cache(cache)
        # Indexed on first use (a prediction looks up thousands of cases); a case measured
        # pinned before one measured unpinned, which only a table measured unpinned throughout
        # prices by (the cases a workload has measured unpinned are found by Pricer).
        def index() -> dict[tuple, Case]:
            keyed: dict[tuple, Case] = {}
            for e in sorted(self.one_request_entries(), key=lambda e: e.placement != PINNED):
                keyed.setdefault((e.bench, e.order, e.cache, e.size, e.gap), e)
            return keyed
        return self._of_entries("_index", index).get((bench, order, cache, size, gap))

    def one_request_entries(self) -> list[Case]:
        """Every case measured in requests of its one size: all but those measured in a
        workload's request sizes (write_new_mix's mix, a sync's bytes written in requests),
        which pricing finds by those sizes and which belong in no curve of one size."""
        return self._of_entries("_one_request", lambda: [e for e in self.entries if not e.request_sizes])

    def gaps(self, bench: str, cache: str) -> list[int]:
        """The gaps `bench` was measured at in forward order, smallest first."""
        kept = self._of_entries("_gaps", dict)
        if (bench, cache) not in kept:
            kept[(bench, cache)] = sorted({e.gap for e in self.entries if e.bench == bench
                                           and e.order == "forward" and e.cache == cache and e.gap})
        return list(kept[(bench, cache)])

    def _of_entries(self, name: str, build: Callable[[], Any]) -> Any:
        """Something worked out from the entries and kept under `name`, worked out again if the
        entries were replaced or grew."""
        kept = self.__dict__.get(name)
        if kept is None or kept[0] is not self.entries or kept[1] != len(self.entries):
            kept = self.__dict__[name] = (self.entries, len(self.entries), build())
        return kept[2]

    def gap_costs(self, bench: str, cache: str) -> dict[int, list[GapCost]]:
        """Per request size, the forward streams' reads by the gap before each (fsbench's
        gap_costs) of every stream measured at that size; empty for a table measured before
        fsbench kept them."""
        out: dict[int, list[GapCost]] = {}
        for e in self.entries:
            if e.bench == bench and e.order == "forward" and e.cache == cache and e.gap and e.gap_costs and e.size:
                out.setdefault(e.size, []).extend(e.gap_costs)
        return out

    def fit_for(self, bench: str, order: str, cache: str) -> ParkLiptonFit | None:
        for f in self.fits:
            if f.bench == bench and f.order == order and f.cache == cache:
                return f
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "cost_table",
            "candidate": self.candidate,
            "measured_at": self.measured_at,
            "fsbench_run_id": self.fsbench_run_id,
            "environment": self.environment,
            "entries": [e.as_result() for e in self.entries],
            "fits": [f.to_json() for f in self.fits],
            "parameters": self.parameters,
            **({"seed": self.seed} if self.seed is not None else {}),
        }

    @classmethod
    def from_json(cls, body: dict[str, Any], source: str = "cost table") -> "CostTable":
        if body.get("kind") != "cost_table":
            raise UsageError(f"{source} is not an fsbm cost table (kind={body.get('kind')!r})")
        if body.get("schema_version") != SCHEMA_VERSION:
            raise UsageError(f"{source} has schema_version {body.get('schema_version')}; this fsbm reads {SCHEMA_VERSION}")
        return cls(
            candidate=body["candidate"], environment=body["environment"], measured_at=body["measured_at"],
            entries=body["entries"], fits=[ParkLiptonFit.from_json(f) for f in body["fits"]],
            fsbench_run_id=body.get("fsbench_run_id"), parameters=body.get("parameters", {}), seed=body.get("seed"),
        )

    @classmethod
    def median_of(cls, tables: list["CostTable"]) -> "CostTable":
        """One table from several measurements of the same candidate: each case is the
        measurement whose mean is the median of the case's means, with its interval widened
        to every repeat's mean.  Of an even number, the middle two pooled (pooled_case): the
        lower of them alone would price every case at the cheaper of two draws, and two
        quick tables' cases differ by about a tenth, so a program priced that way came out
        about 5% below either table.

        Why: this machine's disk speed drifts by up to 2x over minutes, and one quick table
        catches whatever the disk was doing then (the same cold 4 KiB random read measured
        269 us and 126 us twenty minutes apart).  Tables measured at times spread over the
        runs they are to predict, taken case by case at their median, follow the disk the
        runs saw.  `repeats` on each entry says how many measurements it is the median of,
        and their means."""
        if not tables:
            raise ValueError("no cost tables to take the median of")
        if len({t.candidate for t in tables}) > 1:
            raise UsageError("cost tables of different candidates cannot be combined: "
                             + ", ".join(sorted({t.candidate for t in tables})))
        cases: dict[tuple, list[Case]] = {}
        for table in tables:
            for e in table.entries:
                cases.setdefault(e.key, []).append(e)
        entries = []
        for found in cases.values():
            ranked = sorted(found, key=lambda e: e.latency_ns.mean)
            middle = (len(found) - 1) // 2
            chosen = ranked[middle] if len(found) % 2 else pooled_case(ranked[middle], ranked[middle + 1])
            means = [e.latency_ns.mean for e in found]
            latency = chosen.latency_ns.model_copy(update={"ci95_low": min(chosen.latency_ns.low, *means),
                                                           "ci95_high": max(chosen.latency_ns.high, *means)})
            entries.append(chosen.model_copy(update={"latency_ns": latency,
                                                     "repeats": Repeats(count=len(found), means_ns=means)}))
        block_size = int(tables[0].environment.get("fs_block_size") or 4096)
        results = [{**e.as_result(), "latency_ns": e.latency_ns.model_dump(), "repeats": e.repeats.model_dump(),
                    "family": "data", "block_size": block_size, "rep_means_ns": means}
                   for e in entries if e.size is not None and e.repeats and (means := e.repeats.means_ns)]
        times = sorted(t.measured_at for t in tables)
        return cls(tables[0].candidate, tables[0].environment, f"{times[0]} .. {times[-1]} (median of {len(tables)})",
                   entries, fit_fsbench_results(results), None,
                   {**tables[0].parameters, "median_of_runs": [t.fsbench_run_id for t in tables],
                    "median_of_seeds": [t.seed for t in tables]})

    def with_measurements(self, doc: dict[str, Any], run_id: int | None = None) -> "CostTable":
        """This table with the cases of another fsbench run of the same candidate (`fsbm bench
        --for`, which measures the cases a workload's prices reached beyond this table's
        sizes): a case both measured is the new run's, every other case is kept.  The fits
        shown with the table stay; the new run's are added for curves this table had none
        of.  `parameters["added_runs"]` lists the runs added."""
        added = CostTable.from_fsbench(doc, self.candidate, run_id)
        keys = {e.key for e in added.entries}
        entries = [e for e in self.entries if e.key not in keys] + added.entries
        fitted = {(f.bench, f.op, f.order, f.cache) for f in self.fits}
        fits = self.fits + [f for f in added.fits if (f.bench, f.op, f.order, f.cache) not in fitted]
        parameters = {**self.parameters, "added_runs": [*self.parameters.get("added_runs", []), run_id]}
        return CostTable(self.candidate, self.environment, self.measured_at, entries, fits, self.fsbench_run_id,
                         parameters, self.seed)

    def with_parameters(self, probe: dict[str, Any], probe_id: int | None = None) -> "CostTable":
        """This table with the answers of an fsprobe report (each probe's value, not how)."""
        keys = {"block-size": ("block_size_bytes", "transfer_unit_bytes"), "readahead": ("readahead_bytes",),
                "direct-blocks": ("direct_blocks",), "cache-size": ("page_cache_bytes", "binary_search_bytes"),
                "name-cache": ("stat_random_warm_ns", "stat_random_cold_ns")}
        found: dict[str, Any] = {"probe_document_id": probe_id, "memory_limit_bytes": probe.get("memory_limit_bytes")}
        for name, result in probe.get("probes", {}).items():
            found.update({k: result[k] for k in keys.get(name, ()) if result.get(k) is not None})
        return CostTable(self.candidate, self.environment, self.measured_at, self.entries, self.fits,
                         self.fsbench_run_id, {**self.parameters, **found}, self.seed)

    def to_frame(self) -> Any:
        """One row per measured case: the benchmark, its operation, request size, order and
        cache state, and what a call cost (mean with its 95% interval, median, 99th percentile)."""
        import pandas as pd

        return pd.DataFrame([{"bench": e.bench, "op": e.op, "size": e.size, "order": order_label(e.as_result()),
                              "cache": e.cache, "mean_ns": e.latency_ns.mean, "ci95_low_ns": e.latency_ns.ci95_low,
                              "ci95_high_ns": e.latency_ns.ci95_high, "p50_ns": e.latency_ns.p50,
                              "p99_ns": e.latency_ns.p99} for e in self.entries])

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, path: Path) -> "CostTable":
        try:
            body = json.loads(Path(path).read_text())
        except OSError as exc:
            raise UsageError(f"cannot read cost table {path}: {exc.strerror}") from exc
        except ValueError as exc:
            raise UsageError(f"{path} is not JSON: {exc}") from exc
        return cls.from_json(body, str(path))


@dataclass(frozen=True)
class WarmShift:
    """How far a second cost table of one candidate stands from a first over the warm cases
    both measured: calls served from the page cache, which touch no device, so what moves
    them between two tables is the processor (a shared host's speed changes from minute to
    minute).  `ratio`: the median of second over first (their mean latencies); `spread`: the
    median of how far a case moved either way (|ratio - 1| on a log scale); `cases`: how many."""

    ratio: float
    spread: float
    cases: int


def warm_shift(first: CostTable, second: CostTable) -> WarmShift | None:
    """The second table's warm cases against the first's (WarmShift), or None where the two
    share no warm case.  A memory-only filesystem's cases are all warm."""
    def warm(table: CostTable) -> dict[tuple, float]:
        return {e.key: e.latency_ns.mean for e in table.entries
                if table.measured_cache(e.cache) == "warm" and e.latency_ns.mean > 0}
    a, b = warm(first), warm(second)
    logs = sorted(math.log(b[k] / a[k]) for k in a.keys() & b.keys())
    if not logs:
        return None
    return WarmShift(math.exp(statistics.median(logs)), math.exp(statistics.median(map(abs, logs))) - 1, len(logs))

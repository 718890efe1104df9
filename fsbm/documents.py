"""The typed documents every part of fsbm hands to another: a workload profile and a
prediction (DESIGN: one typed model per document, defined once).  The characterizer writes
profiles, the predictor reads them and writes predictions, and the CLI's --json and the HTTP
API serialise both through these models, so no two parts can drift.

A profile's parts the predictor reads are typed strictly (an inline profile missing them is
a clear error naming the field, not a crash in the model); the rest passes through as it is.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from itertools import accumulate
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt, field_validator, model_validator

from fsbm.characterizer.classes import COSTED_OPERATIONS, DATA_CLASSES, MAPPED_CLASS
from fsbm.units import to_figures

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
    """The calls of one data class (op, order, size bucket) and what they moved
    (characterizer/classes.py says what each count means)."""

    count: NonNegativeInt
    bytes: NonNegativeInt
    gap_bytes: NonNegativeInt = 0             # forward reads: the bytes skipped before them
    gap_log2: Optional[dict[str, NonNegativeInt]] = None  # ... by power of two of the gap
    # ... of those, the reads in a stream (the read before them skipped at most 16 KiB), by
    # power of two of the gap: readahead may be riding them (characterizer/sequentiality.py).
    stream_gap_log2: Optional[dict[str, NonNegativeInt]] = None
    interleaved: NonNegativeInt = 0           # sequential reads made after other calls
    resumes: NonNegativeInt = 0               # sequential reads right after a read that skipped
    straddles: NonNegativeInt = 0             # requests crossing a page boundary they need not
    into_created: NonNegativeInt = 0          # writes into files the workload created
    in_place: NonNegativeInt = 0              # sequential writes rewriting their file in place
    timed: NonNegativeInt = 0                 # calls the trace timed (strace -T, an NFS reply)
    dur_ns: NonNegativeInt = 0                # ... and their durations, summed
    # Reads and mapped regions: the share of their block reads an earlier reference to the
    # block preceded (None: the profile does not say, as one made before it was kept).
    reread_fraction: Optional[float] = Field(None, ge=0, le=1)


class SizeBucket(_Open):
    """Files whose bytes fall in one power of two, and those bytes summed."""

    files: NonNegativeInt
    bytes: NonNegativeInt


# A mix of file sizes is told by this many groups of as many files each: eight groups of a
# source tree's files cost a create on btrfs what the tree's own files do (meta.c says more).
MIX_GROUPS = 8


def size_mix(buckets: dict[str, SizeBucket], groups: int = MIX_GROUPS) -> tuple[int, ...]:
    """The files of `buckets` as `groups` groups of as many files each (fewer where there are
    fewer files), smallest first, each at its files' mean bytes, three significant figures:
    the mix fsbench's *_mix benchmarks write.  Within a bucket every file is taken at the
    bucket's mean, so the mix's mean is the files' mean.  Empty where there are no files."""
    ordered = sorted(((int(low), b) for low, b in buckets.items() if b.files), key=lambda kv: kv[0])
    total = sum(b.files for _, b in ordered)
    if not total:
        return ()
    groups = min(groups, total)
    per_group = total / groups
    sizes, room, held = [], per_group, 0.0
    for _, bucket in ordered:
        mean, left = bucket.bytes / bucket.files, float(bucket.files)
        while left > 1e-9:
            taken = min(left, room)
            held += taken * mean
            left -= taken
            room -= taken
            if room <= 1e-9:
                sizes.append(held / per_group)
                room, held = per_group, 0.0
    if len(sizes) < groups:  # rounding left the last group a hair short
        sizes.append(held / per_group)
    return tuple(to_figures(size, 3) for size in sizes[:groups])


class MetadataCount(_Open):
    """The calls of one metadata operation: done, failed, and (listings) empty."""

    done: NonNegativeInt
    failed: NonNegativeInt = 0
    empty: NonNegativeInt = 0
    written: NonNegativeInt = 0         # creates of files then written ...
    written_bytes: NonNegativeInt = 0   # ... and the bytes written into them,
    written_log2: Optional[dict[str, SizeBucket]] = None  # ... by power of two of a file's
    # (a rename's "written": renames into place of files just made and written, as above)
    renamed: NonNegativeInt = 0         # creates of files then written and renamed into place ...
    renamed_bytes: NonNegativeInt = 0   # ... and the bytes written into them,
    renamed_log2: Optional[dict[str, SizeBucket]] = None  # ... by power of two of a file's
    synced: NonNegativeInt = 0          # of the others, creates of files synced once written ...
    synced_bytes: NonNegativeInt = 0    # ... and the bytes written into them,
    synced_log2: Optional[dict[str, SizeBucket]] = None   # ... by power of two of a file's
    with_data: NonNegativeInt = 0       # unlinks of files holding data ...
    data_bytes: NonNegativeInt = 0      # ... and the bytes they held,
    data_log2: Optional[dict[str, SizeBucket]] = None     # ... by power of two of a file's
    # unlinks: how many directories saw how many of them ({unlinks, to two figures: directories})
    directory_unlinks: Optional[dict[str, NonNegativeInt]] = None
    listed_bytes: Optional[NonNegativeInt] = None  # listings: the bytes of entries returned
    listed: NonNegativeInt = 0          # stats of entries a listing returned with attributes ...
    listed_log2: Optional[dict[str, SizeBucket]] = None   # ... by power of two of a file's bytes
    timed: NonNegativeInt = 0           # calls the trace timed (strace -T, an NFS reply) ...
    dur_ns: NonNegativeInt = 0          # ... and their durations, summed


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

    def observed_ns(self) -> dict[str, tuple[int, int]]:
        """Per operation, the calls the trace timed and their summed durations, where any were."""
        out: dict[str, tuple[int, int]] = {}
        counts = [(op, c) for op, orders in self.data.items() for buckets in orders.values() for c in buckets.values()]
        counts += list(self.metadata.items())
        for op, c in counts:
            if c.timed:
                timed, total = out.get(op, (0, 0))
                out[op] = (timed + c.timed, total + c.dur_ns)
        return out

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
    # Of the files' first reads, the share this cache holds (None: a profile made before it was kept).
    first_read_hit_fraction: Optional[float] = Field(None, ge=0, le=1)


class ReuseSampling(_Open):
    """How a reuse curve beyond characterizer.reuse.EXACT_LIMIT block references was sampled
    (SHARDS), and the error of its hit fractions, from a second sample under another hash."""

    method: str
    rate: float = Field(gt=0, le=1)
    block_references: NonNegativeInt
    sampled_references: NonNegativeInt
    files_first_read_sampled: NonNegativeInt
    hit_fraction_error: NonNegativeFloat


class Reuse(_Open):
    """The reuse curve: the share of block reads a cache of each size holds; exact, or
    estimated from a sample (`sampling`)."""

    block_reads: NonNegativeInt = 0
    distinct_blocks: NonNegativeInt = 0
    cold_misses: NonNegativeInt = 0
    first_reads: NonNegativeInt = 0        # files read
    first_reads_cold: NonNegativeInt = 0   # of them, read before anything wrote or read their first block
    block_size: int = Field(4096, gt=0)
    points: list[ReusePoint] = []
    sampling: Optional[ReuseSampling] = None


class Namespace(_Open):
    files_touched: NonNegativeInt
    directories_touched: NonNegativeInt


class SyncCount(_Open):
    """Syncs: how many, the bytes they made durable, the separate runs of writes those bytes
    came in, and the writes (requests) that brought them (each 0 in profiles made before it
    was counted)."""

    count: NonNegativeInt
    bytes: NonNegativeInt
    runs: NonNegativeInt = 0
    requests: NonNegativeInt = 0


class SyncKind(SyncCount):
    """Syncs of one kind, and the same split by the power of two at or below the bytes each
    made durable (bytes_log2; None in profiles made before): a sync's cost is not linear in
    its bytes, and one kind mixes sizes (SQLite's journal header and its pages)."""

    bytes_log2: Optional[dict[str, SyncCount]] = None


class Fsync(_Open):
    """Syncs, by kind (characterizer.syncs: metadata, data, clean, directory)."""

    bytes_written_per_fsync: Optional[NonNegativeFloat] = None
    kinds: Optional[dict[str, SyncKind]] = None


class Runs(_Open):
    read_only: NonNegativeInt = 0
    read_write: NonNegativeInt = 0
    # Files the workload read and never wrote, by power of two of the furthest byte a read
    # reached (a file read to its end: its size); None in profiles made before.
    read_files_log2: Optional[dict[str, SizeBucket]] = None


class Recording(_Open):
    """What `fsbm trace record` measured of the traced run and of its untraced runs: CPU
    times, waits and the calls' CPU by group, each under its name in traces/record.py."""

    user_cpu_ns: NonNegativeInt

    def measured(self) -> dict[str, Any]:
        """Every measurement, by its name (traces/record.py)."""
        return self.model_dump()


# How much longer a gap between two calls takes under strace than its process's median call
# then, where the gap holds no work of the program's own, where no tracing calibration measured
# it here: fitted on the development set's plain validation (docs/model-evidence.md, "A traced
# gap against its process's calls").  A calibration measures a loop of bare calls (9-18 us) and
# the rule takes a share of that instead (predictor/tracing.py).
GAP_OVER_CALL_NS = 6_000.0
# The caps at which the parser sums an untimed gap's distance from its median (timeline.h's
# TIMELINE_UNTIMED_CAPS_US), and the one its own signed sum (user_signed_ns) uses for them.
UNTIMED_CAPS_NS = (70_000, 100_000, 140_000, 200_000, 280_000, 400_000, 560_000, 800_000)
PARSER_UNTIMED_CAP_NS = 140_000
# The bins of Timeline.timed_gaps_over_call (timeline.h's TIMELINE_OVER_*): their lower
# edges, in ns; the first and last hold everything beyond them.
GAP_OVER_CALL_BIN_NS = 500
# The fewest bare calls whose mean lean a trace's own is read from (Timeline.bare_call_lean_ns):
# a few dozen are one process's start, whose scatter is not the trace's.
MIN_BARE_CALLS = 200
# The operation a priced class's calls are counted under by the parser (Timeline.file_calls_by_op):
# an in-kernel copy is its destination's write event.
COPY_OPERATION = {"copy": "write"}
# The bins of Timeline.untimed_bare_gap_us (timeline.h's TIMELINE_BARE_BINS), and the fewest
# gaps whose median tells what tracing cost a gap while a trace was made.
BARE_GAP_BIN_NS = 1_000
MIN_BARE_GAPS = 8
GAP_OVER_CALL_BINS = tuple(-32_000 + GAP_OVER_CALL_BIN_NS * k for k in range(256))


def _median_bin(counts: list[int]) -> tuple[int, int, float]:
    """Of a histogram with at least one count: the first bin whose running count reaches half
    the total (it holds a count), the count of the bins below it, and that half."""
    running = list(accumulate(counts))
    half = running[-1] / 2
    k = bisect_left(running, half)
    return k, running[k - 1] if k else 0, half


def _interpolated(x: float, xs: tuple[int, ...], ys: list[int]) -> float:
    """ys at x, straight between the points either side (xs ascending); the end's beyond them."""
    if x <= xs[0]:
        return float(ys[0])
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return float(ys[-1])


class Timeline(_Open):
    """A traced job's calls and process lifetimes, as the strace parser counted them
    (traces/native/timeline.c; predictor/tracing.py says how they are read), or an NFS
    capture's clients and their time with calls outstanding (traces/nfs_timeline.py)."""

    processes: NonNegativeInt = 0
    # NFS: the clients that called a server at their own address, on the host the capture
    # was taken on (traces/nfs_timeline.py); 0 from older parsers.
    same_host_clients: NonNegativeInt = 0
    calls: NonNegativeInt = 0
    timed_calls: NonNegativeInt = 0
    blocking_calls: NonNegativeInt = 0
    execs: NonNegativeInt = 0
    forks: NonNegativeInt = 0
    blocked_ns: NonNegativeInt = 0
    lifetimes_ns: NonNegativeInt = 0
    span_ns: NonNegativeInt = 0
    user_ns: NonNegativeInt = 0               # the gaps' excess over the local median
    calls_excess_ns: NonNegativeInt = 0       # calls not on files: their excess over the local median
    file_calls_excess_ns: NonNegativeInt = 0  # calls on files: likewise
    untimed_blocked_ns: NonNegativeInt = 0    # of blocked_ns, what calls the log split in two showed without -T
    # The same three excesses as signed distances from the median, summed (timeline.h).
    user_signed_ns: int = 0
    calls_signed_ns: int = 0
    file_calls_signed_ns: int = 0
    # Of file_calls_signed_ns, the calls a millisecond or more above their median (no tracing
    # stop takes that long): the traced filesystem's own time (timeline.h); 0 from older parsers.
    file_calls_long_ns: NonNegativeInt = 0
    # How many calls not on files calls_signed_ns sums (timeline.h); 0 from older parsers.
    other_calls: NonNegativeInt = 0
    # Calls of the kinds that do little and never wait (timeline.c's bare_kind), and their signed
    # distances from their process's median call, summed; 0 from older parsers.
    bare_calls: NonNegativeInt = 0
    bare_calls_signed_ns: int = 0
    # Gaps after a timed call (-T), where the process's recent call durations are known: how
    # many, their sum, and the sum of that median at each; and every other gap's signed
    # distance from its median, as user_signed_ns sums it for all (timeline.h).
    timed_gaps: NonNegativeInt = 0
    timed_gaps_ns: NonNegativeInt = 0
    timed_gaps_call_median_ns: NonNegativeInt = 0
    other_gaps_signed_ns: int = 0
    # Gaps after a call of unknown duration (no -T): their signed distances from their median,
    # capped at each of UNTIMED_CAPS_NS, summed (timeline.h); empty from older parsers.
    untimed_signed_by_cap_ns: list[int] = []
    # The gaps after a timed call, each less its process's median call, counted by size in the
    # bins GAP_OVER_CALL_BINS (timeline.h); empty from older parsers.
    timed_gaps_over_call: list[int] = []
    # Of the gaps after a timed call, those right after a call that mapped a file: how many, and
    # each less its process's median call, summed (timeline.h); 0 from older parsers.
    mapped_gaps: NonNegativeInt = 0
    mapped_gaps_over_call_ns: int = 0
    # Gaps after a call of unknown duration (no -T): how many; of those, the ones from one bare
    # call to the next, and their signed distances from the median of the same pair of calls'
    # gaps, summed (timeline.h); 0 from older parsers.
    untimed_gaps: NonNegativeInt = 0
    untimed_bare_gaps: NonNegativeInt = 0
    untimed_bare_gaps_signed_ns: int = 0
    # Of those gaps, the ones after a call that flushed a file (fsync, fdatasync,
    # sync_file_range): how many, their length, and their signed distance from their median,
    # as user_signed_ns sums it; untimed_signed_by_cap_ns leaves them out (timeline.h); 0 from
    # older parsers.
    untimed_sync_gaps: NonNegativeInt = 0
    untimed_sync_gaps_ns: NonNegativeInt = 0
    untimed_sync_gaps_signed_ns: int = 0
    # Per operation (traces/vocabulary.py's OPERATIONS), its file calls and, of those, the ones
    # whose duration the log did not give (timeline.h); empty from older parsers.
    file_calls_by_op: dict[str, tuple[NonNegativeInt, NonNegativeInt]] = {}
    # Per operation, of a log without -T's gaps after its file calls (not after a flush): how
    # many, then their process's median gap capped at each of UNTIMED_CAPS_NS, summed (timeline.h);
    # empty from older parsers.
    untimed_held_by_op: dict[str, list[NonNegativeInt]] = {}
    # A log without -T's gaps from one bare call to the next, by length: BARE_GAP_BIN_NS bins
    # from 0, the last holding everything beyond (timeline.h); empty from older parsers.
    untimed_bare_gap_us: list[NonNegativeInt] = []
    # A log with -T read a second time as if it had none, its durations left out (timeline.h):
    # the same calls' counts as strace without -T would have given them; None for a log without
    # -T (the parser's second reading of it is the first: _one_reading) and from older parsers.
    untimed: "Timeline | None" = None

    @model_validator(mode="after")
    def _one_reading(self) -> "Timeline":
        """A log without -T keeps no second reading: read without durations, it is itself."""
        if not self.timed_calls:
            self.untimed = None
        return self

    @classmethod
    def of(cls, counts: "Timeline | dict[str, Any] | None") -> "Timeline":
        """The timeline of the parser's counts; an empty one (nothing known) for none."""
        return counts if isinstance(counts, Timeline) else cls.model_validate(counts or {})

    @property
    def known(self) -> bool:
        """Whether the trace had timestamps: without them there is no span to start from."""
        return self.span_ns > 0

    @property
    def timed(self) -> bool:
        """Whether the trace has every call's duration (strace -T)."""
        return self.timed_calls > 0

    @property
    def concurrency(self) -> float:
        """Processes working at once, on average: their lifetimes less the time they were
        blocked waiting for one another, over the span; 1 where no blocked time is known
        (no -T, and no call the log split in two)."""
        if not self.span_ns or not (self.timed_calls or self.blocked_ns):
            return 1.0
        return max((self.lifetimes_ns - self.blocked_ns) / self.span_ns, 1.0)

    @property
    def signed(self) -> bool:
        """Whether the parser summed each gap's and call's signed distance from its median
        (every parser since those counters were added; older profiles have only the excesses)."""
        return bool(self.user_signed_ns or self.calls_signed_ns or self.file_calls_signed_ns) or not self.user_ns

    @property
    def outside_ns(self) -> float:
        """The job's time outside its file calls, untraced, with a bare gap GAP_OVER_CALL_NS
        longer than its process's median call (outside_ns_at)."""
        return self.outside_ns_at(GAP_OVER_CALL_NS)

    def outside_ns_at(self, gap_over_call_ns: float, call_lean_ns: float = 0.0) -> float:
        """The job's time outside its file calls, untraced (predictor/tracing.py), where a
        gap under tracing takes `gap_over_call_ns` longer than its process's median call then,
        and a bare call's traced duration lies `call_lean_ns` above its median on average:
        the gaps' work (after a timed call: each gap less that median and that constant;
        the others: each gap's signed distance from its process's median gap) and the calls'
        not on files signed distances from their median less that lean each, summed (never
        below 0), over the processes working at once.  Without -T a gap runs from one call's
        start to the next's, so this holds the calls' time, file calls' too."""
        if not self.signed:
            return (self.user_ns + self.calls_excess_ns) / self.concurrency
        if not self.timed_gaps:
            return self._told(self.user_signed_ns)
        return self._told(self._gaps_over_calls_ns - gap_over_call_ns * self.timed_gaps, call_lean_ns)

    def mapped_gaps_work_ns(self, gap_over_call_ns: float) -> float:
        """The work in the gaps right after a call that mapped a file, each less
        `gap_over_call_ns` as outside_ns_at takes it (never below 0), over the processes
        working at once: where a program reads what it mapped, through page faults no call
        shows (predictor/predict.py counts that read once)."""
        work = self.mapped_gaps_over_call_ns - gap_over_call_ns * self.mapped_gaps
        return max(work, 0.0) / self.concurrency

    @property
    def bare_call_lean_ns(self) -> float | None:
        """How far a bare call lay above its process's median call in this trace, on average
        (bare_calls_signed_ns over bare_calls): the scatter of tracing's cost in it, which
        leans above its median; None where fewer than MIN_BARE_CALLS say it."""
        if self.bare_calls < MIN_BARE_CALLS:
            return None
        return self.bare_calls_signed_ns / self.bare_calls

    @property
    def bare_call_lean_taken_ns(self) -> float | None:
        """The trace's own bare calls' lean as the rule takes it off its gaps and calls
        (predictor/tracing.py): never below 0, for a scatter that leans below its median is
        none the rule can take; None where too few bare calls tell it (bare_call_lean_ns)."""
        own = self.bare_call_lean_ns
        return None if own is None else max(own, 0.0)

    @property
    def gap_over_call_median_ns(self) -> float | None:
        """The median of how much longer a gap after a timed call took than its process's
        median call (timed_gaps_over_call, straight within its bin): what tracing cost a gap
        in this trace, where most gaps hold little work; None where the parser kept no counts."""
        counts = self.timed_gaps_over_call
        if len(counts) != len(GAP_OVER_CALL_BINS) or not sum(counts):
            return None
        k, below, half = _median_bin(counts)
        return GAP_OVER_CALL_BINS[k] + GAP_OVER_CALL_BIN_NS * (half - below) / counts[k]

    @property
    def _gaps_over_calls_ns(self) -> float:
        """The gaps' signed sum with nothing taken off those after a timed call but their
        calls' medians: what outside_ns_at takes its constant per gap from."""
        return float(self.other_gaps_signed_ns + self.timed_gaps_ns - self.timed_gaps_call_median_ns)

    def _told(self, gaps_ns: float, call_lean_ns: float = 0.0) -> float:
        """The gaps' work `gaps_ns` and the calls' not on files (each less `call_lean_ns`),
        never below 0, over the processes working at once."""
        return max(gaps_ns + self._calls_work_ns(call_lean_ns), 0) / self.concurrency

    def _calls_work_ns(self, call_lean_ns: float) -> float:
        """The calls' not on files signed distances from their medians, less each call's lean."""
        return self.calls_signed_ns - call_lean_ns * self.other_calls

    @property
    def untimed_lean_ns(self) -> float | None:
        """How far a gap of a log without -T lay above its process's median gap, on average,
        beyond its work: the mean signed distance of the gaps from one bare call to the next,
        each from the median of the trace's last gaps between the same two kinds of call, while
        that median is no longer than a bare gap at its slowest (untimed_bare_gaps_signed_ns over
        untimed_bare_gaps), each such gap a bare call and tracing's two stops, never below 0;
        None where fewer than MIN_BARE_CALLS such gaps say it (and from older parsers)."""
        if self.untimed_bare_gaps < MIN_BARE_CALLS:
            return None
        return max(self.untimed_bare_gaps_signed_ns / self.untimed_bare_gaps, 0.0)

    def untimed_outside_ns(self, cap_ns: float) -> float:
        """A log without -T's time outside its calls' bare cost (outside_ns_at, whose gaps'
        medians count for no more than 140 us), where a gap's median counts for no more than
        `cap_ns` instead: the sums the parser kept at the caps either side, taken in
        proportion (at the end of UNTIMED_CAPS_NS beyond it), less the trace's own lean
        (untimed_lean_ns) off each gap: tracing's cost of a gap scatters above its median, so
        each gap's distance from its median holds that lean as well as its work.  The gaps
        after a flush (untimed_sync_gaps) are left out: each holds the flush's wait for the
        device as the traced device did it that moment, where the prediction takes the
        flushes' time from the cost model alone (predict._less_file_calls keeps it).  As
        outside_ns_at where the parser kept no sums."""
        sums = self.untimed_signed_by_cap_ns
        if len(sums) != len(UNTIMED_CAPS_NS) or self.timed_gaps:
            return self.outside_ns_at(GAP_OVER_CALL_NS)
        at_cap = _interpolated(cap_ns, UNTIMED_CAPS_NS, sums)
        lean = (self.untimed_lean_ns or 0.0) * (self.untimed_gaps - self.untimed_sync_gaps)
        other_gaps = self.user_signed_ns - self.untimed_sync_gaps_signed_ns - sums[UNTIMED_CAPS_NS.index(PARSER_UNTIMED_CAP_NS)]
        return self._told(other_gaps + at_cap - lean)

    def share_in_gaps(self, op: str) -> float:
        """The share of a log without -T's `op` calls whose time lies in its gaps: those the log
        did not time (file_calls_by_op).  A call the log split in two, because another process
        wrote a line before it returned, shows its duration, and the gap after it starts at its
        end; so in a job of processes at once, many calls' time is in no gap.  An in-kernel copy
        is counted among the writes (its event's operation); what a program reads through a
        mapping, and any operation the parser kept no counts of, lies in the gaps whole."""
        if op == MAPPED_CLASS:
            return 1.0
        calls, untimed = self.file_calls_by_op.get(COPY_OPERATION.get(op, op), (0, 0))
        return untimed / calls if calls else 1.0

    @property
    def untimed_bare_gap_ns(self) -> float | None:
        """What tracing cost a gap from one call's start to the next's while a log without -T
        was made: the median of its gaps from one bare call to the next (the middle of its
        bin), each a bare call and tracing's two stops.  None where fewer than MIN_BARE_GAPS
        say it, and from older parsers."""
        counts = self.untimed_bare_gap_us
        if sum(counts) < MIN_BARE_GAPS:
            return None
        k, _, _ = _median_bin(counts)
        return (k + 0.5) * BARE_GAP_BIN_NS

    def held_in_medians_ns(self, op: str, cap_ns: float, bare_gap_ns: float) -> float:
        """How much of a log without -T's `op` calls' own time its gaps' medians already took
        off (untimed_outside_ns): at each gap after such a call, its process's median gap
        (counted for no more than `cap_ns`) above `bare_gap_ns`, what tracing costs a gap from
        one bare call to the next; summed over the gaps, never below 0.  A process whose gaps
        are mostly such calls (a database's reads and writes) has a median that holds a typical
        call; one whose calls wait on the device longer than the cap (cold random reads) has a
        median that holds the cap's worth of each.  An in-kernel copy is counted among the
        writes; 0 for an operation the parser kept no sums of, and for a mapping's reads."""
        held = self.untimed_held_by_op.get(COPY_OPERATION.get(op, op))
        if not held or len(held) != len(UNTIMED_CAPS_NS) + 1:
            return 0.0
        gaps, sums = held[0], held[1:]
        return max(_interpolated(cap_ns, UNTIMED_CAPS_NS, sums) - gaps * bare_gap_ns, 0.0)

    @property
    def lean_off_ns(self) -> float:
        """What the rule took off this trace's time outside for tracing's lean, over the
        processes working at once: its own bare calls' lean (never below 0) off each gap after
        a timed call and each call not on a file, or in a log without -T its own untimed lean
        off each gap not after a flush; 0 where the trace tells no lean of its own.  How far a
        trace leans is how unevenly tracing ran while it was made (predictor/tracing.py), and
        what the rule took off for it is uncertain by as much again."""
        if self.timed_gaps:
            lean = self.bare_call_lean_taken_ns or 0.0
            return lean * (self.timed_gaps + self.other_calls) / self.concurrency
        lean = self.untimed_lean_ns or 0.0
        return lean * max(self.untimed_gaps - self.untimed_sync_gaps, 0) / self.concurrency

    def gap_over_call_for(self, outside_ns: float, call_lean_ns: float = 0.0) -> float | None:
        """The constant `gap_over_call_ns` at which outside_ns_at tells `outside_ns`: what a
        bare gap took over its process's calls in this trace, where the job's time outside is
        known (a calibration program's untraced runtime), each call not on a file taking
        `call_lean_ns` off as outside_ns_at does.  None where no gap came after a timed call, so
        that no constant moves the estimate."""
        if not self.signed or not self.timed_gaps:
            return None
        at_zero = self._gaps_over_calls_ns + self._calls_work_ns(call_lean_ns)
        return (at_zero - outside_ns * self.concurrency) / self.timed_gaps


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
    timeline: Optional[Timeline] = None
    protocol: Optional[str] = None
    tang: dict[str, Any] = {}

    @model_validator(mode="before")
    @classmethod
    def _finite(cls, data: Any) -> Any:
        """Fields fsbm passes through unread are checked too: a stored NaN breaks every reader later."""
        where = _non_finite(data, "")
        if where:
            raise ValueError(f"{where} is not a finite number")
        return data

    @classmethod
    def of(cls, value: "Profile | dict[str, Any]") -> "Profile":
        """A profile from its JSON form (a stored or characterized document), or as it is."""
        return value if isinstance(value, Profile) else cls.model_validate(value)

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


class OutsideReading(_Closed):
    """One reading of a plain trace whose time outside the filesystem is told more than one
    way: a log with -T is read with its call durations and without them (as strace without -T
    writes it), and its time outside is the mean of the two (predictor/tracing.py)."""

    reading: Literal["with call durations", "without call durations"]
    seconds: float = Field(description="The time outside this reading tells, before the cold start is added.")
    evidence: str = Field(description="How this reading told it, in words.")


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
    fs_s: float = Field(description="The filesystem's part of the runtime, calibrated: count x cost over the "
                                    "processes working at once (concurrency).")
    fs_modelled_s: float = Field(description="Time inside the filesystem, count x cost before calibration.")
    fs_factor: FsFactor
    outside_s: float = Field(description="Time outside the filesystem (CPU time and calls elsewhere).")
    breakdown_s: dict[str, float] = Field(description="fs_s per operation.")
    lines: list[PriceLine]
    relative_s: Optional[float] = None
    relative_low_s: Optional[float] = None
    relative_high_s: Optional[float] = None

    def modelled_by_op(self) -> dict[str, float]:
        """Seconds per operation, count x cost summed over its lines, before any factor or the
        processes working at once: what a trace's own durations or a replay's are set beside."""
        out: dict[str, float] = {}
        for line in self.lines:
            out[line.op] = out.get(line.op, 0.0) + line.total_ns / 1e9
        return out


class Ranking(_Closed):
    order: list[str] = Field(description="Every candidate, fastest first.")
    by: str
    best: Optional[str] = Field(None, description="The fastest candidate that keeps its data (never a reference).")
    runner_up: Optional[str] = Field(None, description="The next fastest that keeps its data.")
    faster_by: Optional[float] = Field(None, description="Runner-up's runtime / best's - 1.")
    saves: Optional[float] = Field(None, description="The share of the runner-up's runtime the best saves: "
                                   "1 - best's / runner-up's.")
    confidence: Optional[float] = Field(None, description="Probability the best is faster than the runner-up.")
    references: list[str] = Field([], description="Candidates that keep nothing across a reboot (tmpfs): in the "
                                  "order as a yardstick, never the best or the runner-up.")


class Measured(_Closed):
    seconds: float
    on: str


def verdict_field(absolute: bool, ranked: bool, relative_ranked: bool) -> str:
    """The runtime a prediction's verdict ranks the candidates by: the whole runtime where the
    time outside the filesystem is known (`absolute`, with a `ranked` order); else the relative
    form's, where a runtime was measured (`relative_ranked`), which holds the time outside as
    measured; else the filesystem's time alone.  The terminal and the report state the same."""
    if absolute and ranked:
        return "runtime_s"
    return "relative_s" if relative_ranked else "fs_s"


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
    model_id: Optional[int] = Field(None, description="The stored runtime model (a validation's fit) the "
                                                      "prediction used; null: none yet.")
    model_fitted_on: Optional[str] = Field(None, description="What that model was fitted on.")
    model_errors: dict[str, dict[str, float]] = Field({}, description="Per kind of evidence for the time outside "
                                                      "the filesystem (recording, trace, measured), the 5th and 95th "
                                                      "percentiles of the errors (predicted / real - 1) the validation "
                                                      "measured on programs it was not fitted on: the 90% intervals.")
    validated: bool
    calibrated: bool
    outside_features: Optional[dict[str, float]]
    outside_evidence: Optional[str] = Field(None, description="What the time outside the filesystem rests on: a "
                                                              "recording's CPU time, a plain trace's span less what "
                                                              "tracing added, or nothing (then only the filesystem's "
                                                              "time is predicted).")
    outside_readings: list[OutsideReading] = Field([], description="Where the time outside is the mean of a trace's "
                                                    "readings (a log with -T, read with its call durations and "
                                                    "without them), each reading's own: empty otherwise.")
    evidence: Optional[str] = Field(None, description="The kind of evidence the time outside the filesystem rests on "
                                                      "(recording, trace, trace-untimed, capture, none): which "
                                                      "validation's measured errors speak for this prediction.")
    warnings: list[str] = Field([], description="What to know before trusting the numbers, one sentence each: a "
                                                 "trace made while tracing ran unevenly, whose time outside is less "
                                                 "certain than usual, says so here.")
    concurrency: float = Field(1.0, ge=1.0, description="The workload's processes working at once, on average, as "
                                                       "its trace tells (1: one at a time, or not known). Each "
                                                       "candidate's fs_s and breakdown_s are its calls' summed cost "
                                                       "(fs_modelled_s, lines) over this: calls of one process overlap "
                                                       "another's work.")
    observed_s: dict[str, float] = Field({}, description=(
        "Per operation, the trace's own durations of its calls (strace -T, NFS replies), summed: what they "
        "took where the workload was traced, tracing's share included (15-100 us a call under strace on this "
        "machine). Set beside the traced candidate's count x cost by operation (lines), it shows where its cost "
        "table and the trace disagree. Empty: the trace timed nothing."))
    told_s: dict[str, float] = Field({}, description=(
        "Per operation, observed_s less each call's share of tracing (its process's median call and the trace's "
        "lean), never below 0: what the durations tell the operation took where the workload was traced. "
        "Where a measured runtime leaves more outside than the trace told, the relative form gives up to what "
        "these exceed the traced candidate's count x cost by to those operations. Empty: a trace without call "
        "durations, or an NFS capture."))
    traced_on: Optional[str] = None
    absolute: bool = Field(description="Whether runtime_s holds the time outside the filesystem too. False where "
                                       "nothing tells it (a trace without timestamps, a capture without replies): "
                                       "then runtime_s is the filesystem's time alone (outside_evidence says why).")
    candidates: list[CandidatePrediction]
    ranking: Optional[Ranking] = None
    measured: Optional[Measured] = None
    relative_ranking: Optional[Ranking] = None

    @property
    def verdict_ranking(self) -> Optional[Ranking]:
        """The order the verdict states (verdict_field)."""
        field = verdict_field(self.absolute, self.ranking is not None, self.relative_ranking is not None)
        return self.relative_ranking if field == "relative_s" else self.ranking

    def to_frame(self) -> Any:
        """One row per candidate, fastest first: the runtime, its 90% interval, the time in and
        outside the filesystem, the relative form's where there is one, and the filesystem time
        per operation (columns fs_<op>_s)."""
        import pandas as pd

        rows = []
        for c in self.candidates:
            row: dict[str, Any] = {"candidate": c.candidate, "runtime_s": c.runtime_s, "low_s": c.low_s,
                                   "high_s": c.high_s, "fs_s": c.fs_s, "outside_s": c.outside_s,
                                   "relative_s": c.relative_s}
            row.update({f"fs_{op}_s": seconds for op, seconds in sorted(c.breakdown_s.items())})
            rows.append(row)
        return pd.DataFrame(rows).sort_values("runtime_s", kind="stable").set_index("candidate")

"""A workload profile in mergeable parts (issue 4: scale-out and merging).

``summarize`` turns the events of some actors into a ``Partial``: counts, sums, value
counts, per-window arrays, per-file maxima, the open/close changes, and the block
references (a ReferenceLog, reference_log.py).  ``merge`` adds two parts; ``finalize``
makes the profile.  The single-machine path is finalize(summarize(everything)), a run in
buckets (scale.py: on Dask, or one bucket at a time) is finalize(merge(summarize(part) for
part in parts)), and two traces merge the same way, so all agree by construction, not by
tolerance.

Parts must hold whole actors: per-actor statistics (sequentiality, runs, think time, open
files, time inside calls) are computed within a part.  Files may be shared between parts:
per-file state is keyed by name and merged by maximum.  What depends on the order of every
actor's events on a file (what a sync made durable, whether a created file was written) is
not mergeable that way: a run in buckets summarizes it from buckets of files instead
(FileStatistics), and the reuse curve from the parts' reference logs (reference_log.py).
Time is measured from the trace's origin (its first timestamp), passed in, so windows line
up across parts.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fsbm.characterizer.arrays import (OP_INDEX, EventArrays, costed, of_operations, present, pseudo_kinds, subset,
                                      under)
from fsbm.characterizer.classes import (DATA_OPERATIONS, CreatedFiles, created_files_written, data_classes,
                                        mapped_codes, metadata_classes, size_buckets, with_created_writes,
                                        with_directory_unlinks, with_reread_fractions, with_unlinked_data,
                                        with_written_creates)
from fsbm.characterizer.histograms import ValueCounts
from fsbm.characterizer.in_place import in_place_writes, rewrites_in_place, with_rewrites
from fsbm.characterizer.kernels import library
from fsbm.characterizer.mapped import Regions, mapped_regions
from fsbm.characterizer.profile import SCHEMA_VERSION
from fsbm.characterizer.reference_log import ReferenceLog, ReferenceSummary, ReuseOutcome
from fsbm.characterizer.reuse import CLASS_READS, NO_CODE, data_accesses
from fsbm.characterizer.sequentiality import Access, classify, percentages, run_classes
from fsbm.characterizer.syncs import DEFINITION as SYNC_KINDS_DEFINITION
from fsbm.characterizer.syncs import KINDS as SYNC_KINDS
from fsbm.characterizer.syncs import sync_kinds
from fsbm.characterizer.open_levels import WHOLE, LevelLog, OpenLevels, checkpoint_window
from fsbm.characterizer.timing import (TraceTime, Windows, actor_times, inside_outside, open_changes,
                                       open_files_definition)
from fsbm.counts import added_counts
from fsbm.errors import UsageError
from fsbm.traces.record import (CALLS_CPU_FIELDS, OUTSIDE_WAIT_FIELD, UNTRACED_CALLS_CPU_SYNCS_SKIPPED,
                                UNTRACED_NOSYNC_FIELDS, UNTRACED_WARM_FIELDS, UNTRACED_WARM_SYNCS_SKIPPED,
                                WARM_IDLE_FIELD)
from fsbm.traces.record import UNTRACED_FIELDS as UNTRACED_RUN_FIELDS
from fsbm.traces.vocabulary import OPERATIONS, PSEUDO_FILES

# Tang's table 5.3 rows: the percentage of calls that are each of these.
TANG_ROWS = ("read", "write", "create", "delete", "mkdir", "rmdir", "readdir", "getattr", "lookup")
SEQUENTIAL_DEFINITION = ("consecutive: offset equals the end of the previous read (or write) by the same actor "
                         "on the same file; a new open starts at 0")


def _union(a: pa.Array, b: pa.Array) -> pa.Array:
    return pc.unique(pa.concat_arrays([a, b]))


@dataclass
class Core:
    """Tang's statistics for a stretch of events: the whole trace, or one checkpoint."""

    events: int
    clock_min: int
    clock_max: int
    calls: dict[str, int]                # "calls" and each of TANG_ROWS
    directions: dict[str, dict[str, int]]
    open_changes: int  # changes to the number of open files (their times are in a LevelLog)

    def merge(self, other: "Core") -> "Core":
        return Core(self.events + other.events, min(self.clock_min, other.clock_min),
                    max(self.clock_max, other.clock_max), added_counts(self.calls, other.calls),
                    added_counts(self.directions, other.directions), self.open_changes + other.open_changes)

    def finalize(self, nfs: bool, has_time: bool, open_files: dict[str, float]) -> dict[str, object]:
        """Tang's table and the sequentiality; `open_files`: the level's statistics over this
        stretch (open_levels.py)."""
        seq = percentages(self.directions)
        opened = {**open_files, "definition": open_files_definition(nfs, has_time)}
        n = self.calls["calls"]
        tang: dict[str, object] = {f"{row}_pct": 100.0 * self.calls[row] / n if n else 0.0 for row in TANG_ROWS}
        reads, writes = seq["read"], seq["write"]
        tang.update({
            "calls": n,
            "reads_sequential_pct": reads["consecutive_pct"],
            "reads_random_pct": 100.0 - reads["consecutive_pct"] if reads["count"] else 0.0,
            "writes_sequential_pct": writes["consecutive_pct"],
            "writes_random_pct": 100.0 - writes["consecutive_pct"] if writes["count"] else 0.0,
            "open_files_mean": opened["mean"], "open_files_std": opened["std"],
            "sequential_definition": SEQUENTIAL_DEFINITION,
        })
        return {"tang": tang, "sequentiality": seq, "open_files": opened}


@dataclass
class FileState:
    """Per file that saw data: its size (max offset + length), its whole-file runs at that
    size, and whether any part wrote it."""

    names: pa.Array
    size: np.ndarray
    entire: np.ndarray
    written: np.ndarray

    def merge(self, other: "FileState") -> "FileState":
        encoded = pc.dictionary_encode(pa.concat_arrays([self.names, other.names]))
        ids = encoded.indices.to_numpy()
        size = np.concatenate((self.size, other.size))
        entire = np.concatenate((self.entire, other.entire))
        largest = np.full(len(encoded.dictionary), np.iinfo(np.int64).min)
        np.maximum.at(largest, ids, size)
        kept = np.zeros(len(largest), np.int64)
        np.add.at(kept, ids, np.where(size == largest[ids], entire, 0))
        written = np.zeros(len(largest), bool)
        np.logical_or.at(written, ids, np.concatenate((self.written, other.written)))
        return FileState(encoded.dictionary, largest, kept, written)

    def read_only_sizes(self) -> np.ndarray:
        """The sizes of the files only read: for a file read to its end, its bytes."""
        return self.size[~self.written]


@dataclass
class OpStats:
    count: int
    failed: int
    bytes: int
    sizes: ValueCounts
    latency: ValueCounts

    def merge(self, other: "OpStats") -> "OpStats":
        return OpStats(self.count + other.count, self.failed + other.failed, self.bytes + other.bytes,
                       self.sizes.merge(other.sizes), self.latency.merge(other.latency))


@dataclass
class Partial:
    nfs: bool
    has_time: bool
    every: int | None
    actors: int
    core: Core
    checkpoints: dict[int, Core]
    run_counts: dict[str, int]
    files: FileState
    touched: pa.Array
    directories: pa.Array
    ops: dict[str, OpStats]
    origs: dict[str, dict[str, int]]
    fsyncs: int
    written: int
    syncs: dict[str, dict[str, int]]
    inter_arrival: ValueCounts
    think: ValueCounts
    inside: dict[str, int]
    windows: Windows
    references: ReferenceLog | None  # None once detached (a bucketed run keeps it on disk, scale.keep_log)
    levels: LevelLog | None  # the open-file level's changes; None once detached, as references
    classes: dict
    trace_time: TraceTime
    scope: str | None = None
    # CPU and wall time `fsbm trace record` measured (fsrusage), added over recordings.
    recording: dict[str, int] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    # The traced job's calls and process lifetimes (traces/native/timeline.h), added over traces.
    timeline: dict[str, int] = field(default_factory=dict)
    # Calls on pseudo files (traces.vocabulary.PSEUDO_FILES) left out of the workload, by kind.
    left_out: dict[str, int] = field(default_factory=dict)
    # Every event summarized, the workload's and those left out (out of scope, pseudo files).
    seen: int = 0
    # What the profile takes from the references, where the parts' logs were sampled where
    # they lie and the samples joined (reference_log.py); else made from `references` at finalize.
    reuse: ReuseOutcome | None = None
    # The open-file levels, where the parts' LevelLogs were summarized where they lie
    # (open_levels.py); else they are made from `levels` at finalize.
    open_levels: OpenLevels | None = None

    def merge(self, other: "Partial") -> "Partial":
        if not self.core.events or not other.core.events:  # e.g. a bucket no actor was packed into, or none in scope
            return replace(self if self.core.events else other, trace_time=self.trace_time.merge(other.trace_time),
                           recording=added_counts(self.recording, other.recording),
                           sources=self.sources + other.sources, timeline=added_counts(self.timeline, other.timeline),
                           left_out=added_counts(self.left_out, other.left_out), seen=self.seen + other.seen)
        if self.nfs != other.nfs:
            raise UsageError("cannot merge an NFS workload with a system-call workload: their operations differ")
        if self.has_time != other.has_time:
            raise UsageError("cannot merge a trace with timestamps with one without")
        if self.every != other.every:
            raise UsageError("the parts were checkpointed at different intervals")
        if self.scope != other.scope:
            raise UsageError(f"cannot merge workloads scoped to different directories ({self.scope} and {other.scope})")
        checkpoints = dict(self.checkpoints)
        for k, core in other.checkpoints.items():
            checkpoints[k] = checkpoints[k].merge(core) if k in checkpoints else core
        ops = dict(self.ops)
        for name, stats in other.ops.items():
            ops[name] = ops[name].merge(stats) if name in ops else stats
        inside = {k: self.inside[k] + other.inside[k] for k in ("actor_span_ns", "inside_ns", "durations_known")}
        inside["first_ns"] = min(self.inside["first_ns"], other.inside["first_ns"])
        inside["last_ns"] = max(self.inside["last_ns"], other.inside["last_ns"])
        detached = self.references is None or other.references is None  # their logs lie on the workers
        references = None if detached else self.references.merge(other.references)  # type: ignore[union-attr]
        levels = None if self.levels is None or other.levels is None else self.levels.merge(other.levels)
        return Partial(
            self.nfs, self.has_time, self.every, self.actors + other.actors, self.core.merge(other.core),
            checkpoints, added_counts(self.run_counts, other.run_counts), self.files.merge(other.files),
            _union(self.touched, other.touched), _union(self.directories, other.directories), ops,
            added_counts(self.origs, other.origs), self.fsyncs + other.fsyncs, self.written + other.written,
            added_counts(self.syncs, other.syncs), self.inter_arrival.merge(other.inter_arrival),
            self.think.merge(other.think), inside,
            self.windows.merge(other.windows),
            references, levels,
            added_counts(self.classes, other.classes), self.trace_time.merge(other.trace_time), self.scope,
            added_counts(self.recording, other.recording), self.sources + other.sources,
            added_counts(self.timeline, other.timeline), added_counts(self.left_out, other.left_out),
            self.seen + other.seen)


def core_of(ev: EventArrays, clock: np.ndarray, nfs: bool, window: int = WHOLE) -> tuple[Core, Access, LevelLog]:
    """Tang's statistics of a stretch of events, its classified accesses for the rest, and
    the changes its opens and closes make to the number of open files, as `window`'s."""
    acc = classify(ev, nfs)
    plumbing = ev.plumbing.any()  # no calls of their own (arrays.plumbing_origs)
    calls = ~ev.plumbing if plumbing else slice(None)
    lookup_origs = np.array([o.endswith(".LOOKUP") or o.endswith(".LOOKUPP") for o in ev.origs] or [False])
    lookups = int((lookup_origs[ev.orig] & ~ev.plumbing).sum()) if lookup_origs.any() else 0
    op_counts = np.bincount(ev.op[calls], minlength=len(OPERATIONS))
    counts = {"calls": int(op_counts.sum()), "read": op_counts[OP_INDEX["read"]], "write": op_counts[OP_INDEX["write"]],
              "create": op_counts[OP_INDEX["create"]], "delete": op_counts[OP_INDEX["unlink"]],
              "mkdir": op_counts[OP_INDEX["mkdir"]], "rmdir": op_counts[OP_INDEX["rmdir"]],
              "readdir": op_counts[OP_INDEX["readdir"]], "getattr": op_counts[OP_INDEX["stat"]] - lookups,
              "lookup": lookups}
    times, change = open_changes(ev, clock, nfs)
    return (Core(ev.n, int(clock.min()) if ev.n else 0, int(clock.max()) if ev.n else 0,
                 {k: int(v) for k, v in counts.items()}, acc.directions, len(times)), acc,
            LevelLog.of(window, times, change))


def _window(ev: EventArrays, start: int, stop: int) -> EventArrays:
    """The events with positions [start, stop), sharing the dictionaries."""
    cut = slice(start, stop)
    return EventArrays(stop - start, ev.seq[cut], ev.ts[cut], ev.dur[cut], ev.actor[cut], ev.file[cut], ev.op[cut],
                       ev.orig[cut], ev.offset[cut], ev.size[cut], ev.ret[cut], ev.failed[cut], ev.plumbing[cut],
                       ev.actors, ev.files, ev.origs, ev.paths.slice(start, stop - start))


def _by_operation(ev: EventArrays) -> tuple[dict[str, OpStats], dict[str, dict[str, int]]]:
    """Per operation: calls, failures, bytes moved, and the value counts of its request sizes
    and of its durations; per original call: calls and bytes.  An access's size is the bytes
    it moved where the call says (Darshan's rule): an in-kernel copy asks for "as much as
    there is" (cp: 2^62 bytes) and moves a file.  Counted, and each operation's sizes and
    durations put side by side, in C (characterizer/native/ops.c)."""
    ops, origs = len(OPERATIONS), max(len(ev.origs), 1)
    is_data = np.array([name in DATA_OPERATIONS for name in OPERATIONS], np.bool_)
    op_count, op_failed, op_bytes = (np.zeros(ops, np.int64) for _ in range(3))
    orig_count, orig_bytes = np.zeros(origs, np.int64), np.zeros(origs, np.int64)
    size_start, dur_start = np.zeros(ops + 1, np.int64), np.zeros(ops + 1, np.int64)
    sizes, durations = np.empty(ev.n, np.int64), np.empty(ev.n, np.int64)
    op, orig = np.ascontiguousarray(ev.op, np.int8), np.ascontiguousarray(ev.orig, np.int32)
    failed = np.ascontiguousarray(ev.failed, np.bool_)
    size, ret, dur = (np.ascontiguousarray(a, np.int64) for a in (ev.size, ev.ret, ev.dur))
    if library().fsbm_ops(ev.n, op.ctypes.data, ops, is_data.ctypes.data, orig.ctypes.data, failed.ctypes.data,
                          size.ctypes.data, ret.ctypes.data, dur.ctypes.data,
                          *(a.ctypes.data for a in (op_count, op_failed, op_bytes, orig_count, orig_bytes, size_start,
                                                    sizes, dur_start, durations))) != 0:
        raise MemoryError("per-operation statistics: out of memory")
    by_op = {name: OpStats(int(op_count[i]), int(op_failed[i]), int(op_bytes[i]),
                           ValueCounts.of(sizes[size_start[i]:size_start[i + 1]]) if is_data[i] else ValueCounts.empty(),
                           ValueCounts.of(durations[dur_start[i]:dur_start[i + 1]]))
             for i, name in enumerate(OPERATIONS) if op_count[i]}
    by_orig = {name: {"count": int(c), "bytes": int(b)} for name, c, b in zip(ev.origs, orig_count, orig_bytes) if c}
    return by_op, by_orig


def _namespace(ev: EventArrays) -> tuple[pa.Array, pa.Array]:
    """Names of the real files touched (not "?fd" placeholders) and of the directories."""
    seen = present(ev.file, len(ev.files))
    touched = pa.array([f for f, s in zip(ev.files, seen) if s and f and not f.startswith("?")], pa.string())
    paths = pc.unique(ev.paths.drop_null()).to_pylist()
    directories = {posixpath.dirname(p) for p in paths if p}
    dir_ops = of_operations(ev, ("readdir", "mkdir", "rmdir"))
    directories |= {ev.files[f] for f in np.flatnonzero(present(ev.file[dir_ops], len(ev.files)))}
    return touched, pa.array(sorted(directories), pa.string())


def trace_origin(ev: EventArrays) -> int:
    """The first timestamp of a trace held whole; 0 for one without times (its clock counts calls)."""
    return int(ev.ts.min()) if ev.has_time else 0


def trace_clock(ev: EventArrays, origin: int, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
    """The events' places in time (of those at `rows`): nanoseconds since `origin`, the trace's
    first timestamp; in a trace without times, their sequence numbers."""
    return ev.ts[rows] - origin if ev.has_time else ev.seq[rows]


def _references(ev: EventArrays, origin: int, trace: int, mapped: Regions, codes: np.ndarray) -> ReferenceLog:
    """The block references of the reads and writes, and of the mapped regions as reads
    (each at its first mapping's place in the trace); and the successful unlinks.  Each
    reference's clock is found for it alone (trace_clock): the whole trace's is not kept for it.
    `codes`: each event's data class code (classes.data_classes), which each reference keeps."""
    rows, lengths, reads = data_accesses(ev)
    unlinks = np.flatnonzero((ev.op == OP_INDEX["unlink"]) & ~ev.failed)
    none = np.zeros(len(unlinks), np.int64)

    def joined(accesses: np.ndarray, regions: np.ndarray, unlinked: np.ndarray) -> np.ndarray:
        """The accesses' column, then the regions' and the unlinks': as it is where those are none."""
        return accesses if not len(regions) and not len(unlinked) else np.concatenate((accesses, regions, unlinked))

    at = joined(rows, mapped.rows, unlinks)
    return ReferenceLog(trace_clock(ev, origin, at), np.full(len(at), trace, np.int16), ev.seq[at],
                        pa.array(ev.files, pa.string()), ev.file[at].astype(np.int64),
                        joined(ev.offset[rows], mapped.offset, none), joined(lengths, mapped.length, none),
                        joined(reads, np.ones(len(mapped), bool), none.astype(bool)),
                        np.concatenate((np.zeros(len(rows) + len(mapped), bool), np.ones(len(unlinks), bool))),
                        joined(codes[rows], mapped_codes(mapped), np.full(len(unlinks), NO_CODE, np.int16)))


def _workload(ev: EventArrays, nfs: bool, scope: str | None) -> tuple[np.ndarray, dict[str, int]]:
    """Which events are the workload's (beneath `scope`, on no pseudo file), and how many of
    those beneath it were left out as calls on pseudo files, by kind."""
    in_scope = np.ones(ev.n, bool) if scope in (None, "/") else under(ev, scope)
    left_out: dict[str, int] = {}
    if not nfs:
        kinds = pseudo_kinds(ev)
        counts = np.bincount(kinds[(kinds >= 0) & in_scope], minlength=len(PSEUDO_FILES))
        left_out = {name: int(n) for (name, _), n in zip(PSEUDO_FILES, counts) if n}
        in_scope &= kinds < 0
    return in_scope, left_out


@dataclass
class FileStatistics:
    """What depends on every actor's events on a file: what its syncs made durable, by kind
    (syncs.py), the created files then written, the writes into them, and those files then
    renamed or synced (classes.created_files_written), and the sequential writes that
    rewrote their file in place (in_place.py).  They add up over parts that
    each hold every event of some files (scale.py's file buckets)."""

    syncs: dict[str, dict[str, int]]
    created: CreatedFiles = field(default_factory=lambda: CreatedFiles({}, {}, {}, {}))
    rewrites: dict[str, dict[str, int]] = field(default_factory=dict)  # in_place.rewrites_in_place

    @classmethod
    def of(cls, ev: EventArrays, *, nfs: bool, scope: str | None = None) -> "FileStatistics":
        """From events that hold every event of their files and every change to the
        directories among them, whatever the actors."""
        in_scope, _ = _workload(ev, nfs, scope)
        return cls.of_workload(ev if in_scope.all() else subset(ev, in_scope))

    @classmethod
    def of_workload(cls, ev: EventArrays) -> "FileStatistics":
        """From events that are the workload's already (scoped, no pseudo files)."""
        in_place = in_place_writes(ev)
        return cls(sync_kinds(ev), created_files_written(ev, in_place), rewrites_in_place(ev, in_place))

    @classmethod
    def none(cls) -> "FileStatistics":
        return cls({kind: {"count": 0, "bytes": 0} for kind in SYNC_KINDS})

    def merge(self, other: "FileStatistics") -> "FileStatistics":
        created = CreatedFiles(*(added_counts(mine, theirs) for mine, theirs in zip(self.created, other.created)))
        return FileStatistics(added_counts(self.syncs, other.syncs), created, added_counts(self.rewrites, other.rewrites))

    def into(self, part: "Partial") -> "Partial":
        """`part`, whose syncs, creates' "written" and writes' "into_created" and "in_place"
        summarize left out, with these in place."""
        part.syncs = self.syncs
        data = with_created_writes(with_rewrites(part.classes["data"], self.rewrites), self.created.writes)
        part.classes = {**part.classes, "metadata": with_written_creates(part.classes["metadata"], self.created),
                        "data": data}
        return part


def summarize(ev: EventArrays, *, nfs: bool, origin: int, first_seq: int = 0, every: int | None = None,
              trace: int = 0, source: str | None = None, scope: str | None = None,
              recording: dict[str, int] | None = None, file_level: bool = True) -> Partial:
    """The mergeable statistics of the events of some actors (all of each actor's events).
    Some depend on every actor's events on a file (FileStatistics): where the part holds only
    some actors, `file_level` False leaves them out, for FileStatistics.into to put in.
    `origin` is the trace's first timestamp and `first_seq` its first sequence number, so
    time windows and checkpoints line up across parts.  With a `scope` (a directory), the
    workload is the events on files beneath it: the rest (libraries, headers, /tmp) live on
    other filesystems, and only their time is kept (TraceTime)."""
    seen = ev.n
    in_scope, left_out = _workload(ev, nfs, scope)
    trace_time = TraceTime.of(ev, costed(ev) & in_scope)
    if not in_scope.all():
        ev = subset(ev, in_scope)
    clock = trace_clock(ev, origin)
    core, acc, levels = core_of(ev, clock, nfs)
    checkpoints = {}
    if every and ev.n:
        window = (ev.seq - first_seq) // every
        bounds = np.flatnonzero(np.concatenate(([True], window[1:] != window[:-1], [True])))
        for start, stop in zip(bounds[:-1], bounds[1:]):
            part = _window(ev, int(start), int(stop))
            k = int(window[start])
            checkpoints[k], _, theirs = core_of(part, clock[start:stop], nfs, checkpoint_window(k))
            levels = levels.merge(theirs)
    del clock
    # What comes of the classified accesses is taken before the rest, and they are let go:
    # the reference log, made last, is the largest thing a part keeps, and at its making
    # only the events and the open-file changes are held beside it.
    run_counts, sizes, entire = acc.runs.counts, acc.runs.file_size, acc.runs.entire
    accessed = ev.file[acc.index]
    with_data = present(accessed, len(ev.files))
    wrote = present(accessed[ev.op[acc.index] == OP_INDEX["write"]], len(ev.files))
    mapped = mapped_regions(ev)
    codes = np.full(ev.n, NO_CODE, np.int16)
    data = data_classes(ev, acc, mapped, codes)
    del acc
    touched, directories = _namespace(ev)
    inter, think, inside = actor_times(ev)
    ops, origs = _by_operation(ev)
    windows = Windows.of(ev, origin)
    actors = int(present(ev.actor, len(ev.actors)).sum())
    references = _references(ev, origin, trace, mapped, codes)
    del codes
    part = Partial(
        nfs=nfs, has_time=ev.has_time, every=every, actors=actors,
        core=core, checkpoints=checkpoints, run_counts=run_counts,
        files=FileState(pa.array(ev.files, pa.string()).filter(pa.array(with_data)), sizes[with_data],
                        entire[with_data], wrote[with_data]),
        touched=touched, directories=directories, ops=ops, origs=origs,
        fsyncs=ops["fsync"].count if "fsync" in ops else 0, written=ops["write"].bytes if "write" in ops else 0,
        syncs={},
        inter_arrival=inter, think=think, inside=inside, windows=windows,
        references=references, levels=levels,
        classes={"data": data, "metadata": metadata_classes(ev, ops)}, trace_time=trace_time,
        scope=scope, recording=dict(recording or {}), sources=[source] if source else [], left_out=left_out,
        seen=seen)
    return FileStatistics.of_workload(ev).into(part) if file_level else part


def _operations(ops: dict[str, OpStats]) -> dict[str, dict[str, object]]:
    out = {}
    for name in OPERATIONS:
        if name not in ops:
            continue
        stats = ops[name]
        entry: dict[str, object] = {"count": stats.count, "failed": stats.failed}
        if name in ("read", "write"):
            entry["bytes"] = stats.bytes
            entry["request_sizes"] = stats.sizes.darshan()
            entry["request_size_log2"] = stats.sizes.distribution().get("histogram_log2", [])
        if stats.latency.n:
            entry["latency_ns"] = stats.latency.distribution()
        out[name] = entry
    return out


def level_windows(part: Partial) -> tuple[dict[int, tuple[int, int]], dict[int, int]]:
    """The windows of the open-file level (open_levels.py): the whole trace and each
    checkpoint, each with its span and the number of changes it holds."""
    cores = {WHOLE: part.core, **{checkpoint_window(k): core for k, core in part.checkpoints.items()}}
    return ({w: (core.clock_min, core.clock_max) for w, core in cores.items()},
            {w: core.open_changes for w, core in cores.items()})


def with_read_files(runs: dict[str, object], files: FileState) -> dict[str, object]:
    """Ellard's run classes and, where the workload read files it never wrote, those files by
    power of two of their bytes (read_files_log2): whether a first read touches a data extent
    at all depends on the file's size, not the request's (btrfs keeps a file of up to 2 KiB
    inline beside its inode)."""
    sizes = files.read_only_sizes()
    return {**runs, "read_files_log2": size_buckets(sizes)} if len(sizes) else runs


def finalize(part: Partial) -> dict[str, object]:
    """The profile body (JSON) of a whole trace, or of several merged."""
    if part.open_levels is None and part.levels is None:
        raise ValueError("a Partial whose open-file changes were detached needs their levels to finalize")
    levels = part.open_levels or OpenLevels.of(part.levels, *level_windows(part))  # type: ignore[arg-type]
    core = part.core.finalize(part.nfs, part.has_time, levels.stats[WHOLE])
    if part.reuse is None and part.references is None:
        raise ValueError("a Partial whose references were detached needs their summary to finalize")
    reuse = part.reuse or ReferenceSummary.of(part.references).outcome()  # type: ignore[arg-type]
    # The curve's per-class counts go to the classes they describe, not into the curve's document.
    curve = {name: value for name, value in reuse.curve.items() if name != CLASS_READS}
    classes = with_reread_fractions(with_directory_unlinks(with_unlinked_data(part.classes, reuse.unlinked)),
                                    reuse.curve.get(CLASS_READS, {}))  # type: ignore[arg-type]
    sizes = ValueCounts.of(part.files.size)
    inside = inside_outside(part.inside, part.core.events)
    span_s = inside["trace_span_ns"] / 1e9 if inside.get("known") else 0
    body: dict[str, object] = {
        "schema_version": SCHEMA_VERSION,
        "kind": "profile",
        "source": ", ".join(part.sources) if part.sources else None,
        "events": part.core.events,
        "protocol": "nfs" if part.nfs else "syscalls",
        "has_timestamps": part.has_time,
        "tang": core["tang"],
        "sequentiality": core["sequentiality"],
        "runs": with_read_files(run_classes(part.run_counts, int(part.files.entire.sum())), part.files),
        "operations": _operations(part.ops),
        "original_calls": {name: part.origs[name] for name in sorted(part.origs)},
        "namespace": {"files_touched": len(part.touched), "directories_touched": len(part.directories),
                      "file_size_bytes": sizes.distribution(), "file_bytes_total": sizes.total()},
        "open_files": core["open_files"],
        "timing": {"inter_arrival_ns": part.inter_arrival.distribution(), "think_ns": part.think.distribution(),
                   "inside_outside": inside, "concurrency": part.windows.summary(part.actors)},
        "fsync": {"count": part.fsyncs, "per_second": part.fsyncs / span_s if span_s else None,
                  "bytes_written_per_fsync": part.written / part.fsyncs if part.fsyncs else None,
                  "kinds": part.syncs, "kinds_definition": SYNC_KINDS_DEFINITION},
        "reuse": curve,
        "scope": part.scope,
        "classes": classes,
        "trace_time": part.trace_time.summary(),
        "recording": part.recording or None,
        "timeline": part.timeline or None,
        "left_out": {"calls": part.left_out,
                     "definition": "calls on files that are no filesystem's data (devices, /proc, /sys, pipes and "
                                   "sockets): not part of the workload, and their time is counted outside the "
                                   "filesystem"},
    }
    body["working_set_bytes"] = body["reuse"]["distinct_blocks"] * body["reuse"]["block_size"]
    if part.every:
        body["checkpoints"] = []
        for k in sorted(part.checkpoints):
            checkpoint = part.checkpoints[k].finalize(part.nfs, part.has_time, levels.stats[checkpoint_window(k)])
            body["checkpoints"].append({"first_event": k * part.every, "events": part.checkpoints[k].events,
                                        "tang": checkpoint["tang"], "sequentiality": checkpoint["sequentiality"]})
    return body


def is_nfs(ev: EventArrays) -> bool:
    return traced_over_nfs(ev.origs)


def traced_over_nfs(origs: list[str]) -> bool:
    """Whether any of these calls as traced is an NFS procedure (a capture, not a syscall log)."""
    return any(o.startswith("NFS") for o in origs)


def whole_trace(ev: EventArrays, *, every: int | None = None, trace: int = 0, source: str | None = None,
                scope: str | None = None, recording: dict[str, int] | None = None) -> Partial:
    """The Partial of a whole trace held in memory: its own origin and first sequence number."""
    origin = trace_origin(ev)
    first_seq = int(ev.seq.min()) if ev.n else 0
    return summarize(ev, nfs=is_nfs(ev), origin=origin, first_seq=first_seq, every=every, trace=trace, source=source,
                     scope=scope, recording=recording)


RECORDING_FIELDS = ("user_cpu_ns", "system_cpu_ns", "wall_ns", "traced_wall_ns")
UNTRACED_FIELDS = tuple(f"untraced_{name}" for name in UNTRACED_RUN_FIELDS)


def recording_totals(recordings: list[dict]) -> dict[str, int]:
    """The CPU and wall times of a trace's recordings (fsrusage), added; empty when unknown.
    The untraced medians (record's untraced_runs) are added only when every recording has
    them: a total missing one program's would look whole and be wrong."""
    if not recordings:
        return {}
    totals = {name: sum(int(r.get(name) or 0) for r in recordings) for name in RECORDING_FIELDS}
    if all(r.get("untraced_runs") for r in recordings):
        totals.update({name: sum(int(r[name]) for r in recordings) for name in UNTRACED_FIELDS})
    for name in (OUTSIDE_WAIT_FIELD, *CALLS_CPU_FIELDS.values(), *UNTRACED_WARM_FIELDS, *UNTRACED_NOSYNC_FIELDS,
                 WARM_IDLE_FIELD):
        if all(name in r for r in recordings):
            totals[name] = sum(int(r[name]) for r in recordings)
    for flag in (UNTRACED_WARM_SYNCS_SKIPPED, UNTRACED_CALLS_CPU_SYNCS_SKIPPED):
        if all(flag in r for r in recordings):
            totals[flag] = all(r[flag] for r in recordings)
    totals["recordings"] = len(recordings)
    return totals

"""Time: inter-arrival and think time per actor, time inside and outside the filesystem,
actors and calls in flight per window, open files over time (Tang: average open files and
its spread).

Each function returns what can be merged: counts, sums, per-window arrays (windows counted
from the trace's origin), or level changes, so a profile built from parts (Dask partitions
holding whole actors, or two traces) equals the one built in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsbm.characterizer.arrays import (MISSING, OP_INDEX, EventArrays, group_key, group_order, present,
                                      sequence_order)
from fsbm.characterizer.histograms import ValueCounts
from fsbm.characterizer.kernels import library

NFS_IDLE_NS = 30 * 1_000_000_000
WINDOW_NS = 1_000_000_000
# The time in calls, summed over actors (actor_times.c's totals, in its order).
INSIDE_FIELDS = ("actor_span_ns", "inside_ns", "durations_known", "first_ns", "last_ns")
DENSE_PAIRS = 1 << 26  # (window, actor) pairs a table may hold whatever the trace's length (8 MiB of bits)


def _known_durations(ev: EventArrays) -> np.ndarray:
    return np.where(ev.dur != MISSING, ev.dur, 0)


def actor_times(ev: EventArrays) -> tuple[ValueCounts, ValueCounts, dict[str, int]]:
    """Per actor, the gaps between its calls: inter-arrival (start to start) and think time
    (end to next start, at least 0), ns, each rounded to 10 significant bits
    (histograms.significant): nearly every gap of a long trace differs from every other, and
    exact counts of them grew with the trace (118 MiB of a 10 M-event profile's 438 MiB
    gathered from a Dask cluster).  And the time in calls (inside_outside's sums): per actor,
    the span from its first start to its last end and the time in traced calls, summed over
    actors; the first start and last end of all.  Actors never straddle parts.  One pass in
    C over the events in trace order (characterizer/native/actor_times.c)."""
    if not ev.has_time or ev.n == 0:
        return ValueCounts.empty(), ValueCounts.empty(), dict.fromkeys(INSIDE_FIELDS, 0)
    order = sequence_order(ev)
    actor = np.ascontiguousarray(ev.actor, np.int32)
    ts, dur = np.ascontiguousarray(ev.ts, np.int64), np.ascontiguousarray(ev.dur, np.int64)
    inter, think = np.empty(ev.n, np.int64), np.empty(ev.n, np.int64)
    totals = np.zeros(len(INSIDE_FIELDS), np.int64)
    count = library().fsbm_actor_times(ev.n, order.ctypes.data if order is not None else None, actor.ctypes.data,
                                       max(len(ev.actors), 1), ts.ctypes.data, dur.ctypes.data, inter.ctypes.data,
                                       think.ctypes.data, totals.ctypes.data)
    if count < 0:
        raise MemoryError("time between and inside calls: out of memory")
    inside = dict(zip(INSIDE_FIELDS, map(int, totals)))
    return ValueCounts.of_significant(inter[:count]), ValueCounts.of_significant(think[:count]), inside


def inside_outside(sums: dict[str, int], events: int) -> dict[str, object]:
    if not events or sums["last_ns"] == sums["first_ns"] == 0:
        return {"known": False}
    span, inside = sums["actor_span_ns"], sums["inside_ns"]
    return {"known": True, "trace_span_ns": sums["last_ns"] - sums["first_ns"], "actor_span_ns": span,
            "inside_ns": inside, "outside_ns": max(span - inside, 0),
            "inside_fraction": inside / span if span else 0.0,
            "durations_known_fraction": sums["durations_known"] / events}


def _sum_by_id(ids: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ids (ascending) and the sum of values at each: a bincount over the id range
    when it is small, a sort when the ids are spread (a trace spanning months)."""
    if not len(ids):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    low = int(ids.min())
    if int(ids.max()) - low <= 50_000_000:
        # float64 sums of integers: exact below 2**53.
        sums = np.bincount(ids - low, weights=values).astype(np.int64)
        seen = np.flatnonzero(np.bincount(ids - low).astype(bool))
        return seen + low, sums[seen]
    distinct, inverse = np.unique(ids, return_inverse=True)
    return distinct, np.bincount(inverse, weights=values).astype(np.int64)


def _distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct keys, ascending: a bincount over a small range, else a sort."""
    low = int(keys.min())
    if int(keys.max()) - low <= 50_000_000:
        return np.flatnonzero(np.bincount(keys - low).astype(bool)) + low
    return np.unique(keys)


@dataclass
class Windows:
    """Activity per 1 s window since the trace's origin, kept sparse: for the windows where
    calls start or end, the actors that started one and the ns of calls inside the window;
    and the runs of whole windows that longer calls cover.  The mean number of calls in
    flight in a window is its busy ns / WINDOW_NS."""

    ids: np.ndarray
    active: np.ndarray
    busy: np.ndarray
    full_from: np.ndarray
    full_to: np.ndarray

    @classmethod
    def empty(cls) -> "Windows":
        return cls(*(np.zeros(0, np.int64) for _ in range(5)))

    @classmethod
    def of(cls, ev: EventArrays, origin: int) -> "Windows":
        """One pass in C (characterizer/native/windows.c) where the trace's windows and
        actors are few enough for a table of every (window, actor) pair; else with sorts."""
        if not ev.has_time or ev.n == 0:
            return cls.empty()
        actors = max(len(ev.actors), 1)
        known_max = int(ev.dur.max())  # MISSING is the least int64
        windows = (int(ev.ts.max()) - origin + max(known_max, 0)) // WINDOW_NS + 1
        if int(ev.ts.min()) < origin or windows * actors > max(64 * ev.n, DENSE_PAIRS):
            return cls._sorted(ev, origin)
        actor = np.ascontiguousarray(ev.actor, np.int32)
        ts, dur = np.ascontiguousarray(ev.ts, np.int64), np.ascontiguousarray(ev.dur, np.int64)
        seen = np.zeros(-(-windows * actors // 64), np.uint64)
        active, busy = np.zeros(windows, np.int64), np.zeros(windows, np.int64)
        touched = np.zeros(windows, np.uint8)
        full_from, full_to = np.empty(ev.n, np.int64), np.empty(ev.n, np.int64)
        runs = library().fsbm_windows(ev.n, actor.ctypes.data, actors, ts.ctypes.data, dur.ctypes.data, origin,
                                      WINDOW_NS, seen.ctypes.data, active.ctypes.data, busy.ctypes.data,
                                      touched.ctypes.data, full_from.ctypes.data, full_to.ctypes.data)
        ids = np.flatnonzero(touched)
        return cls(ids, active[ids], busy[ids], full_from[:runs].copy(), full_to[:runs].copy())

    @classmethod
    def _sorted(cls, ev: EventArrays, origin: int) -> "Windows":
        """The same as `of`, for a trace whose windows are spread (one spanning months)."""
        start = ev.ts - origin
        end = start + _known_durations(ev)
        first, last = start // WINDOW_NS, end // WINDOW_NS
        actors = max(len(ev.actors), 1)
        pairs = _distinct(first * actors + ev.actor)  # (window, actor) with a call starting
        active_ids, active = _sum_by_id(pairs // actors, np.ones(len(pairs), np.int64))
        spans = last > first
        busy_ids, busy = _sum_by_id(np.concatenate((first, last[spans])),
                                    np.concatenate((np.minimum(end, (first + 1) * WINDOW_NS) - start,
                                                    end[spans] - last[spans] * WINDOW_NS)))
        long = last > first + 1
        return cls(*_join(active_ids, active, busy_ids, busy), first[long] + 1, last[long])

    def merge(self, other: "Windows") -> "Windows":
        ids = np.concatenate((self.ids, other.ids))
        _, active = _sum_by_id(ids, np.concatenate((self.active, other.active)))
        distinct, busy = _sum_by_id(ids, np.concatenate((self.busy, other.busy)))
        return Windows(distinct, active, busy, np.concatenate((self.full_from, other.full_from)),
                       np.concatenate((self.full_to, other.full_to)))

    def _busy_at(self, windows: np.ndarray) -> np.ndarray:
        covered = (np.searchsorted(np.sort(self.full_from), windows, side="right")
                   - np.searchsorted(np.sort(self.full_to), windows, side="right"))
        partial = np.zeros(len(windows), np.int64)
        where = np.searchsorted(self.ids, windows)
        hit = (where < len(self.ids)) & (self.ids[np.minimum(where, len(self.ids) - 1)] == windows)
        partial[hit] = self.busy[where[hit]]
        return partial + covered * WINDOW_NS

    def summary(self, actors: int) -> dict[str, object]:
        if not len(self.ids):
            return {"known": False, "actors": actors}
        used = self.ids[self.active > 0]
        peak_candidates = np.union1d(self.ids, self.full_from)
        first_windows = np.zeros(min(int(self.ids.max()) + 1, 10_000), np.int64)
        shown = self.ids < len(first_windows)
        first_windows[self.ids[shown]] = self.active[shown]
        return {"known": True, "window_ns": WINDOW_NS, "actors": actors,
                "active_actors_mean": float(self.active[self.active > 0].mean()) if len(used) else 0.0,
                "active_actors_max": int(self.active.max()),
                "calls_in_flight_mean": float(self._busy_at(used).mean() / WINDOW_NS) if len(used) else 0.0,
                "calls_in_flight_peak_window": float(self._busy_at(peak_candidates).max() / WINDOW_NS),
                "active_windows": int(len(used)),
                "active_actors_by_window": first_windows.tolist()}


def _join(ids_a: np.ndarray, a: np.ndarray, ids_b: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """Two sparse per-window arrays on one set of ids."""
    ids = np.union1d(ids_a, ids_b)
    out_a, out_b = np.zeros(len(ids), np.int64), np.zeros(len(ids), np.int64)
    out_a[np.searchsorted(ids, ids_a)] = a
    out_b[np.searchsorted(ids, ids_b)] = b
    return ids, out_a, out_b


def open_changes(ev: EventArrays, clock: np.ndarray, nfs: bool) -> tuple[np.ndarray, np.ndarray]:
    """When the number of open files changes, and by how much (Tang's open files).  strace:
    from a successful open/create to its close.  NFS has no open: a file counts as open from
    its first access by a client until 30 s idle (Ellard)."""
    if ev.n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if nfs:
        data = np.flatnonzero(~ev.plumbing)
        order = data[np.lexsort((clock[data], ev.file[data], ev.actor[data]))]
        c, key_a, key_f = clock[order], ev.actor[order], ev.file[order]
        new = np.ones(len(order), bool)
        new[1:] = (key_a[1:] != key_a[:-1]) | (key_f[1:] != key_f[:-1]) | (c[1:] - c[:-1] > NFS_IDLE_NS)
        first = np.flatnonzero(new)
        last = np.concatenate((first[1:], [len(order)])) - 1
        return (np.concatenate((c[first], c[last])),
                np.concatenate((np.ones(len(first), np.int64), -np.ones(len(last), np.int64))))
    opening = ((ev.op == OP_INDEX["open"]) | (ev.op == OP_INDEX["create"])) & ~ev.failed
    closing = (ev.op == OP_INDEX["close"]) & ~ev.failed
    idx = np.flatnonzero(opening | closing)
    delta = np.where(opening[idx], 1, -1).astype(np.int64)
    order = group_order(ev, idx, clock[idx])
    idx, delta = idx[order], delta[order]
    key = group_key(ev, idx)
    group = np.cumsum(np.concatenate(([True], key[1:] != key[:-1]))) - 1 if len(idx) else idx
    # Open descriptors of one file, never below zero: a close of an fd opened before the trace
    # began is not counted.  Clamped running sum = running sum - min(0, its running minimum);
    # the minimum restarts per group because each group is offset below all before it.
    running = np.cumsum(delta)
    starts_at = np.concatenate(([0], running))[np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))]
    local = running - np.repeat(starts_at, np.bincount(group)) if len(idx) else running
    offset = group.astype(np.int64) * (len(idx) + 1)
    floor = np.minimum(np.minimum.accumulate(local - offset) + offset, 0)
    level = local - floor
    previous = np.concatenate(([0], level[:-1]))
    previous[np.concatenate(([True], group[1:] != group[:-1]))] = 0
    return clock[idx], level - previous


def open_files_definition(nfs: bool, has_time: bool) -> str:
    if nfs:
        return "NFS has no open: a file counts as open from its first access until 30 s idle (Ellard)"
    if has_time:
        return "from a successful open/create to its close (time-weighted)"
    return "from a successful open/create to its close (weighted by events: the trace has no times)"


# Names that are not files a filesystem serves: time in calls on them is waiting (a pipe, a
# socket) or not a filesystem's at all (/proc).
_NOT_FILES = ("/proc/", "/sys/", "/dev/")


def _real_files(ev: EventArrays) -> np.ndarray:
    """Per file id: is it a path on a real filesystem (not a pipe, socket, /proc or /dev)?"""
    return np.array([f.startswith("/") and not f.startswith(_NOT_FILES) for f in ev.files] or [False])


@dataclass
class TraceTime:
    """What the predictor needs to find the time a traced program spends outside the
    filesystem under study (predictor/outside.py): the calls the trace holds, how much
    tracing inflated each call's measured duration (the duration of close(), which really
    costs about a microsecond, is almost all inflation), and the calls on other filesystems
    or of operations no cost table prices, whose traced time counts as outside."""

    calls: int
    actors: int   # processes and threads: parts hold whole actors, so this adds
    first_ns: int
    last_ns: int
    close_durations: ValueCounts
    outside_calls: int
    outside_calls_ns: int

    @classmethod
    def of(cls, ev: EventArrays, priced: np.ndarray) -> "TraceTime":
        """`priced`: the events whose cost the predictor models (in scope and of a priced operation)."""
        actors = int(present(ev.actor, len(ev.actors)).sum())
        if not ev.has_time or not ev.n:
            return cls(ev.n, actors, 0, 0, ValueCounts.empty(), 0, 0)
        known = ev.dur != MISSING
        close = (ev.op == OP_INDEX["close"]) & known
        outside = ~priced & known & _real_files(ev)[ev.file]
        return cls(ev.n, actors, int(ev.ts.min()), int((ev.ts + _known_durations(ev)).max()),
                   ValueCounts.of(ev.dur[close]), int(outside.sum()), int(ev.dur[outside].sum()))

    def merge(self, other: "TraceTime") -> "TraceTime":
        spans = [(t.first_ns, t.last_ns) for t in (self, other) if t.last_ns]
        return TraceTime(self.calls + other.calls, self.actors + other.actors, min((s[0] for s in spans), default=0),
                         max((s[1] for s in spans), default=0), self.close_durations.merge(other.close_durations),
                         self.outside_calls + other.outside_calls, self.outside_calls_ns + other.outside_calls_ns)

    def summary(self) -> dict[str, object]:
        if not self.last_ns:
            return {"known": False, "calls": self.calls, "actors": self.actors}
        inflation = self.close_durations.percentile(50) if self.close_durations.n else None
        corrected = self.outside_calls_ns - self.outside_calls * (inflation or 0)
        return {"known": True, "calls": self.calls, "actors": self.actors, "span_ns": self.last_ns - self.first_ns,
                "per_call_inflation_ns": inflation, "inflation_from_calls": self.close_durations.n,
                "outside_calls": self.outside_calls, "outside_calls_ns": self.outside_calls_ns,
                "outside_calls_corrected_ns": max(corrected, 0),
                "definition": "outside calls: calls on other filesystems, or of operations no cost table prices "
                              "(mmap, seek, other); corrected: less the per-call inflation, the median traced "
                              "duration of close()"}

"""Time: inter-arrival and think time per actor, time inside and outside the filesystem,
concurrency of actors, open files over time (Tang: average open files and its spread)."""

from __future__ import annotations

import numpy as np

from fsbm.characterizer.arrays import MISSING, OP_INDEX, EventArrays, group_order, present
from fsbm.characterizer.histograms import distribution

NFS_IDLE_NS = 30 * 1_000_000_000


def _by_actor(ev: EventArrays) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((ev.seq, ev.actor))
    same = np.zeros(len(order), bool)
    same[1:] = ev.actor[order][1:] == ev.actor[order][:-1]
    return order, same


def gaps(ev: EventArrays) -> dict[str, object]:
    """Inter-arrival (start to start) and think time (end to next start) per actor, in ns."""
    if not ev.has_time or ev.n < 2:
        return {"inter_arrival_ns": {"count": 0}, "think_ns": {"count": 0}}
    order, same = _by_actor(ev)
    ts = ev.ts[order]
    dur = np.where(ev.dur[order] != MISSING, ev.dur[order], 0)
    inter = (ts[1:] - ts[:-1])[same[1:]]
    think = (ts[1:] - (ts[:-1] + dur[:-1]))[same[1:]]
    return {"inter_arrival_ns": distribution(inter.astype(np.float64)),
            "think_ns": distribution(np.maximum(think, 0).astype(np.float64))}


def inside_outside(ev: EventArrays) -> dict[str, object]:
    """Per actor: span from first start to last end; inside = time in traced calls."""
    if not ev.has_time or ev.n == 0:
        return {"known": False}
    dur = np.where(ev.dur != MISSING, ev.dur, 0)
    end = ev.ts + dur
    actors = len(ev.actors)
    first = np.full(actors, np.iinfo(np.int64).max)
    last = np.zeros(actors, np.int64)
    inside = np.zeros(actors, np.int64)
    np.minimum.at(first, ev.actor, ev.ts)
    np.maximum.at(last, ev.actor, end)
    np.add.at(inside, ev.actor, dur)
    span = last - first
    total_span = int(end.max() - ev.ts.min())
    return {
        "known": True, "trace_span_ns": total_span, "actor_span_ns": int(span.sum()),
        "inside_ns": int(inside.sum()), "outside_ns": int(max(span.sum() - inside.sum(), 0)),
        "inside_fraction": float(inside.sum() / span.sum()) if span.sum() else 0.0,
        "durations_known_fraction": float((ev.dur != MISSING).mean()),
    }


def concurrency(ev: EventArrays, window_ns: int = 1_000_000_000) -> dict[str, object]:
    """Distinct actors active per window, and the most calls in flight at once."""
    if not ev.has_time or ev.n == 0:
        return {"known": False}
    window = (ev.ts - ev.ts.min()) // window_ns
    windows, actors = int(window.max()) + 1, len(ev.actors)
    key = window * actors + ev.actor
    if windows * actors <= 50_000_000:
        per_window = present(key, windows * actors).reshape(windows, actors).sum(axis=1)
    else:  # a very long trace: the sparse way
        per_window = np.bincount(np.unique(key) // actors, minlength=windows)
    dur = np.where(ev.dur != MISSING, ev.dur, 0)
    times = np.concatenate((ev.ts, ev.ts + dur))
    steps = np.concatenate((np.ones(ev.n, np.int64), -np.ones(ev.n, np.int64)))
    order = np.lexsort((steps, times))  # an end before a start at the same instant
    in_flight = np.cumsum(steps[order])
    return {"known": True, "window_ns": window_ns, "actors": len(ev.actors),
            "active_actors_mean": float(per_window[per_window > 0].mean()),
            "active_actors_max": int(per_window.max()), "max_calls_in_flight": int(in_flight.max()),
            "active_actors_by_window": per_window.tolist()[:10_000]}


def _level_stats(times: np.ndarray, change: np.ndarray, t0: int, t1: int) -> dict[str, float]:
    """Time-weighted mean and spread of a level that changes by `change` at `times`."""
    if len(times) == 0 or t1 <= t0:
        return {"mean": 0.0, "std": 0.0, "max": 0}
    order = np.lexsort((change, times))
    times = np.concatenate(([t0], times[order], [t1]))
    level = np.concatenate(([0], np.cumsum(change[order]), [0]))
    weights = np.diff(times)
    levels = level[:-1]
    total = weights.sum()
    mean = float((levels * weights).sum() / total) if total else float(levels.mean())
    std = float(np.sqrt(((levels - mean) ** 2 * weights).sum() / total)) if total else 0.0
    return {"mean": mean, "std": std, "max": int(level.max())}


def open_files(ev: EventArrays, nfs: bool) -> dict[str, object]:
    """Tang's open files: strace from open to close; NFS (no open) by Ellard's 30 s idle rule."""
    if ev.n == 0:
        return {"mean": 0.0, "std": 0.0, "max": 0}
    clock = ev.ts if ev.has_time else ev.seq
    t0, t1 = int(clock.min()), int(clock.max())
    if nfs:
        data = np.flatnonzero(~ev.plumbing)
        order = data[np.lexsort((clock[data], ev.file[data], ev.actor[data]))]
        c, key_a, key_f = clock[order], ev.actor[order], ev.file[order]
        new = np.ones(len(order), bool)
        new[1:] = (key_a[1:] != key_a[:-1]) | (key_f[1:] != key_f[:-1]) | (c[1:] - c[:-1] > NFS_IDLE_NS)
        first = np.flatnonzero(new)
        last = np.concatenate((first[1:], [len(order)])) - 1
        times = np.concatenate((c[first], c[last]))
        change = np.concatenate((np.ones(len(first), np.int64), -np.ones(len(last), np.int64)))
        result = _level_stats(times, change, t0, t1)
        result["definition"] = "NFS has no open: a file counts as open from its first access until 30 s idle (Ellard)"
        return result
    opening = ((ev.op == OP_INDEX["open"]) | (ev.op == OP_INDEX["create"])) & ~ev.failed
    closing = (ev.op == OP_INDEX["close"]) & ~ev.failed
    idx = np.flatnonzero(opening | closing)
    delta = np.where(opening[idx], 1, -1).astype(np.int64)
    order = group_order(ev, idx, clock[idx])
    idx, delta = idx[order], delta[order]
    key = ev.actor[idx].astype(np.int64) * max(len(ev.files), 1) + ev.file[idx]
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
    change = level - previous
    result = _level_stats(clock[idx], change, t0, t1)

    result["definition"] = "from a successful open/create to its close (time-weighted)" if ev.has_time else \
        "from a successful open/create to its close (weighted by events: the trace has no times)"
    return result

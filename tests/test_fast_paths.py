"""The characterizer's fast paths, each against the plain definition it stands for: value
counts, the rounding to significant bits, the times between and in an actor's calls, the activity
per window, a reference's first read."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fsbm.characterizer.arrays import MISSING, first_of_each, to_arrays
from fsbm.characterizer.histograms import ValueCounts, significant
from fsbm.characterizer.timing import Windows, actor_times
from fsbm.traces.ingest import ingest, read_events
from tests.conftest import SHARED_DATA

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

EDGES = np.array([0, 1, 1023, 1024, 1025, 2047, 2048, 2**40 - 1, 2**40, 2**53 - 1, 2**53, 2**53 + 1,
                  2**60 - 1, 2**62 + 5, 2**63 - 1], np.int64)


def _counts(values: np.ndarray) -> dict[int, int]:
    return dict(Counter(int(v) for v in values))


def _as_dict(counts: ValueCounts) -> dict[int, int]:
    assert (counts.values[1:] > counts.values[:-1]).all(), "values ascending and distinct"
    return {int(v): int(c) for v, c in zip(counts.values, counts.counts)}


def test_significant_keeps_the_top_bits_of_each_value_exactly_even_beyond_float_precision() -> None:
    rounded = significant(EDGES)
    for value, kept in zip(EDGES, rounded):
        shift = max(int(value).bit_length() - 10, 0)
        assert int(kept) == (int(value) >> shift) << shift


def test_counts_of_significant_values_equal_the_counts_of_the_rounded_values() -> None:
    rng = np.random.default_rng(7)
    for values in (rng.integers(0, 10**12, 200_000), rng.integers(-10**9, 10**6, 5_000), EDGES,
                   np.repeat(EDGES, 3), np.zeros(0, np.int64)):
        assert _as_dict(ValueCounts.of_significant(values)) == _counts(significant(values))


def test_value_counts_are_the_same_whether_counted_in_a_table_or_sorted() -> None:
    rng = np.random.default_rng(8)
    for values in (rng.integers(0, 3_000, 100_000), rng.integers(-5, 5, 1_000), rng.integers(0, 2**62, 1_000),
                   np.array([-2**63 + 1, 2**63 - 1]), np.array([7])):
        assert _as_dict(ValueCounts.of(values)) == _counts(values)


def test_gaps_are_each_actors_start_to_start_and_end_to_start_times_and_its_span_is_first_start_to_last_end(
        tmp_path: Path) -> None:
    ingest([SHARED_DATA / "strace" / "davidfoliveira_strace-perl.txt"], tmp_path / "e.parquet")
    ev = to_arrays(read_events(tmp_path / "e.parquet"))
    inter, think = [], []
    last: dict[int, tuple[int, int]] = {}
    span: dict[int, tuple[int, int]] = {}
    for actor, ts, dur in zip(ev.actor.tolist(), ev.ts.tolist(), ev.dur.tolist()):
        end = ts + (dur if dur != MISSING else 0)
        if actor in last:
            start, previous_end = last[actor]
            inter.append(ts - start)
            think.append(max(ts - previous_end, 0))
        last[actor] = (ts, end)
        first_start, last_end = span.get(actor, (ts, end))
        span[actor] = (min(first_start, ts), max(last_end, end))
    assert len(inter) > 1000 and len(span) > 1
    got_inter, got_think, inside = actor_times(ev)
    assert _as_dict(got_inter) == _counts(significant(np.array(inter)))
    assert _as_dict(got_think) == _counts(significant(np.array(think)))
    known = [d for d in ev.dur.tolist() if d != MISSING]
    assert inside == {"actor_span_ns": sum(b - a for a, b in span.values()), "inside_ns": sum(known),
                      "durations_known": len(known), "first_ns": int(ev.ts.min()),
                      "last_ns": max(b for _, b in span.values())}


@pytest.mark.slow(seconds=12)
def test_activity_per_window_in_one_pass_is_what_the_sorts_give_on_a_capture_with_long_calls(tmp_path: Path) -> None:
    capture = SHARED_DATA / "nfs" / "epam-nfstrace" / "eth-ipv4-tcp-nfsv3-4-41-cifs1-2.pcap.bz2"
    ingest([capture], tmp_path / "e.parquet")
    ev = to_arrays(read_events(tmp_path / "e.parquet"))
    origin = int(ev.ts.min())
    fast, sorted_ = Windows.of(ev, origin), Windows._sorted(ev, origin)
    assert len(fast.full_from) > 1000, "calls that cover whole windows"
    for got, want in ((fast.ids, sorted_.ids), (fast.active, sorted_.active), (fast.busy, sorted_.busy),
                      (np.sort(fast.full_from), np.sort(sorted_.full_from)),
                      (np.sort(fast.full_to), np.sort(sorted_.full_to))):
        assert got.tolist() == want.tolist()


def test_first_occurrences_found_in_a_table_are_the_ones_a_sort_finds() -> None:
    rng = np.random.default_rng(9)
    for ids in (rng.integers(0, 20_000, 100_000), rng.integers(0, 10**12, 1_000), np.array([5, 3, 5, 3, 1]),
                rng.integers(-3, 5, 100), np.zeros(0, np.int64)):
        distinct, first = first_of_each(ids)
        want_distinct, want_first = np.unique(ids, return_index=True)
        assert distinct.tolist() == want_distinct.tolist() and first.tolist() == want_first.tolist()


def test_rows_are_left_unsorted_exactly_when_they_are_in_order_by_their_keys() -> None:
    from fsbm.characterizer.reuse import reordering, trace_order

    rng = np.random.default_rng(10)
    for _ in range(2_000):
        n = int(rng.integers(0, 8))
        keys = tuple(rng.integers(0, 3, n) for _ in range(3))
        rows = list(zip(*(k.tolist() for k in keys)))
        assert (reordering(keys) is None) == (rows == sorted(rows))
        assert trace_order(keys).tolist() == np.lexsort(tuple(reversed(keys))).tolist()


def test_the_passes_in_trace_order_walk_events_by_sequence_whatever_their_order_in_the_arrays(tmp_path: Path) -> None:
    from dataclasses import fields, replace

    ingest([SHARED_DATA / "strace" / "davidfoliveira_strace-perl.txt"], tmp_path / "e.parquet")
    ev = to_arrays(read_events(tmp_path / "e.parquet"))
    shuffled = np.random.default_rng(12).permutation(ev.n)
    columns = {f.name: getattr(ev, f.name)[shuffled] for f in fields(ev)
               if isinstance(getattr(ev, f.name), np.ndarray)}
    mixed = replace(ev, **columns)
    assert not mixed.in_sequence
    for got, want in zip(actor_times(mixed), actor_times(ev)):
        assert got == want if isinstance(want, dict) else _as_dict(got) == _as_dict(want)

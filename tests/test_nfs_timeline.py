"""An NFS capture's clients' time outside the server (traces/nfs_timeline.py): counted by
hand on a small stream, and against the union of the calls' intervals in a real capture's
event table, computed independently here."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fsbm.documents import Timeline
from fsbm.predictor.predict import outside_from_trace
from fsbm.traces.ingest import ingest, timeline_of
from fsbm.traces.nfs_timeline import NfsTimeline
from tests.conftest import SHARED_DATA

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared


def test_busy_time_is_the_union_of_outstanding_calls_and_each_wait_pays_one_round_trip() -> None:
    t = NfsTimeline()
    t.call("a", 0), t.reply("a", 0, 10)                         # alone: 10 busy, the floor
    t.call("a", 30), t.call("a", 35)                            # two outstanding at once
    t.reply("a", 35, 45), t.reply("a", 30, 50)                  # busy 30..50
    t.call("b", 100), t.reply("b", 100, 120)
    t.reply("c", 90, 95)                                        # its call came before the capture
    t.call("d", 110)                                            # never answered: busy to its last message
    counts = t.counts()
    assert counts["processes"] == 3 and counts["calls"] == 5 and counts["timed_calls"] == 4
    assert counts["span_ns"] == 120 and counts["lifetimes_ns"] == 50 + 20 + 0
    # a: idle 20 (10..30) plus two waits of one round trip (10) each; b: one wait of 20.
    assert counts["user_signed_ns"] == (20 + 2 * 10) + 20
    assert counts["file_calls_signed_ns"] == (30 - 20) + 0
    timeline = Timeline.of(counts)
    assert timeline.concurrency == 1.0 and timeline.outside_ns == 60


def _union(starts: list[int], ends: list[int]) -> tuple[int, int]:
    """The length of the union of intervals, and how many separate stretches it has."""
    total, stretches, current_start, current_end = 0, 0, 0, None
    for start, end in sorted(zip(starts, ends)):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end, stretches = start, end, stretches + 1
        else:
            current_end = max(current_end, end)
    return total + (current_end - current_start if current_end is not None else 0), stretches


@pytest.mark.parametrize("capture", ["eth-ipv4-tcp-nfsv4.pcap.bz2", "eth-ipv4-udp-nfsv3.pcap.bz2"])
def test_a_captures_time_in_calls_is_the_union_of_its_answered_calls_less_a_round_trip_each(
        capture: str, tmp_path: Path) -> None:
    table = ingest([SHARED_DATA / "nfs" / "epam-nfstrace" / capture], tmp_path / "e.parquet").output
    events = pq.read_table(table, columns=["ts", "dur", "actor", "record"]).to_pandas()
    assert events["dur"].notna().all()  # every call answered: none keeps its client busy to the end
    calls = events.drop_duplicates(["record", "ts", "actor", "dur"])  # a v4 COMPOUND's operations are one call
    inside = 0
    for _, client in calls.groupby("actor"):
        busy, stretches = _union(list(client["ts"]), list(client["ts"] + client["dur"]))
        inside += busy - min(int(client["dur"].min()) * stretches, busy)
    counts = timeline_of(table)
    assert counts["processes"] == events["actor"].nunique() and counts["timed_calls"] == len(calls)
    assert counts["file_calls_signed_ns"] == inside
    assert counts["file_calls_signed_ns"] + counts["user_signed_ns"] == counts["lifetimes_ns"]
    outside = outside_from_trace({"schema_version": 3, "protocol": "nfs", "classes": {"data": {}, "metadata": {}},
                                  "reuse": {}, "namespace": {"files_touched": 0, "directories_touched": 0},
                                  "timeline": counts}, None)
    assert outside.kind == "capture" and outside.seconds > 0 and "outstanding" in outside.evidence
    assert outside.low < outside.seconds < outside.high

"""Buckets of converted columns (characterizer/buckets.py): a table cut into buckets and read
back gives, bucket by bucket, the arrays the whole-table conversion gives for those events."""

from __future__ import annotations

import posixpath
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fsbm.characterizer.arrays import EventArrays, to_arrays
from fsbm.characterizer.buckets import (NO_PATH, actor_counts, arrays_of, by_actor, by_file,
                                       file_and_directory_buckets, of_table, packed, read_parts, read_piece,
                                       stable_bucket, write_parts)
from fsbm.characterizer.scale import pieces, read_arrays
from fsbm.traces.ingest import ingest, read_events
from tests.conftest import SHARED_DATA

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

STRACE_LOG = SHARED_DATA / "strace" / "zicada_asterisk_strace.log"
NFS_CAPTURE = SHARED_DATA / "nfs" / "epam-nfstrace" / "2sessions-tcp-wsize32k-tcp-wsize512k.pcap.bz2"
NUMBERS = ("seq", "ts", "dur", "op", "offset", "size", "ret", "failed", "plumbing")


@pytest.fixture(scope="module", params=["strace", "nfs"])
def table_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = {"strace": STRACE_LOG, "nfs": NFS_CAPTURE}[request.param]
    path = tmp_path_factory.mktemp(request.param) / "events.parquet"
    ingest([source], path, keep_going=True)
    return path


def _named(ev: EventArrays) -> dict[str, list]:
    """Every column of `ev` with its ids replaced by the names they stand for."""
    out: dict[str, list] = {name: getattr(ev, name).tolist() for name in NUMBERS}
    for column, names in (("actor", ev.actors), ("file", ev.files), ("orig", ev.origs)):
        out[column] = [names[i] for i in getattr(ev, column)]
    out["path"] = ev.paths.to_pylist()
    return out


def test_a_table_converted_and_read_back_is_the_whole_tables_arrays(table_path: Path) -> None:
    table = read_events(table_path)
    whole = to_arrays(table)
    part = read_piece(str(table_path), list(range(pq.ParquetFile(table_path).num_row_groups)))
    assert part.rows == table.num_rows > 50
    assert (part.path == NO_PATH).any() and (part.path != NO_PATH).any()  # calls without a path stay without
    back = arrays_of([part])
    assert back.n == whole.n and _named(back) == _named(whole)


def test_a_table_read_a_row_group_at_a_time_is_the_whole_tables_arrays(table_path: Path, tmp_path: Path) -> None:
    # Row groups of 40 events, read two at a time: the names of every piece are joined.
    small_groups = tmp_path / "groups.parquet"
    table = pq.read_table(table_path)
    pq.write_table(table.replace_schema_metadata(pq.read_metadata(table_path).metadata), small_groups,
                   row_group_size=40)
    assert pq.ParquetFile(small_groups).num_row_groups > 3
    back = read_arrays(pieces(small_groups, rows_per_piece=80))
    assert back.n == pq.ParquetFile(small_groups).metadata.num_rows
    assert _named(back) == _named(to_arrays(read_events(table_path)))


def test_parts_that_do_not_hold_the_events_they_were_said_to_are_refused(table_path: Path) -> None:
    part = of_table(read_events(table_path))
    with pytest.raises(ValueError, match="more than the 10 events"):
        arrays_of(iter([part]), rows=10)
    with pytest.raises(ValueError, match=f"hold {part.rows} events, not the {part.rows + 1}"):
        arrays_of(iter([part]), rows=part.rows + 1)


def test_each_bucket_holds_whole_actors_and_reads_back_as_their_events(table_path: Path, tmp_path: Path) -> None:
    table = read_events(table_path)
    part = of_table(table)
    counts = actor_counts(str(table_path), list(range(pq.ParquetFile(table_path).num_row_groups)))
    assert counts == Counter(table["actor"].to_pylist())
    bucket_of = packed(counts, 3)
    buckets = by_actor(part, bucket_of, 3)
    assert sum(b.rows for b in buckets) == table.num_rows
    for k, bucket in enumerate(buckets):
        # Through a file as a run writes it, in two parts: their names are joined.
        halves = [bucket.take(slice(0, bucket.rows // 2)).compacted(), bucket.take(slice(bucket.rows // 2, None))]
        write_parts(str(tmp_path / f"{k}.parts"), halves)
        back = arrays_of(read_parts([str(tmp_path / f"{k}.parts"), str(tmp_path / "none.parts")]))
        mine = table.filter(pa.array([bucket_of[a] == k for a in table["actor"].to_pylist()]))
        assert _named(back) == _named(to_arrays(mine))
        # Only the names its events use.
        assert len(bucket.actors) == len(set(bucket.actors.to_pylist())) == len(set(back.actors))


def test_parts_out_of_sequence_are_read_back_in_sequence(table_path: Path) -> None:
    table = read_events(table_path)
    part = of_table(table)
    middle = part.rows // 2
    back = arrays_of([part.take(slice(middle, None)).compacted(), part.take(slice(0, middle)).compacted()])
    assert _named(back) == _named(to_arrays(table))


def test_file_buckets_hold_every_sync_kinds_event_of_their_files(table_path: Path) -> None:
    table = read_events(table_path)
    part = of_table(table)
    buckets = by_file(part, 4)
    wanted = {"read", "write", "fsync", "create", "unlink", "mkdir", "rmdir", "rename", "link", "symlink"}
    ops = table["op"].to_pylist()
    files = table["file"].to_pylist()
    seqs = table["seq"].to_pylist()
    for k, bucket in enumerate(buckets):
        back = arrays_of([bucket])
        own = {s for s, op, f in zip(seqs, ops, files) if op in wanted and stable_bucket([f or ""], 4)[0] == k}
        assert own <= set(back.seq.tolist())
    assert sum(b.rows for b in buckets) >= sum(op in wanted for op in ops)


def test_no_parts_read_back_as_no_events() -> None:
    empty = arrays_of([])
    assert empty.n == 0 and empty.actors == [] and len(empty.paths) == 0
    assert np.array_equal(empty.seq, np.zeros(0, np.int64))


def test_actors_are_packed_so_that_the_largest_bucket_is_small() -> None:
    # 64 equal actors hash three to a bucket of 100 (crc32 of these names), but pack one to a bucket.
    equal = Counter({f"client-{i}": 1_500_000 for i in range(64)})
    assert max(Counter(stable_bucket(list(equal), 100).tolist()).values()) > 1
    assert max(Counter(packed(equal, 100).values()).values()) == 1
    # Unequal ones: the largest bucket within 4/3 of the least possible (9 here), every actor placed.
    events = Counter(a=5, b=4, c=3, d=3, e=3)
    bucket_of = packed(events, 2)
    sizes: Counter[int] = Counter()
    for name, k in bucket_of.items():
        sizes[k] += events[name]
    assert set(bucket_of) == set(events) and max(sizes.values()) <= 12


def test_the_remembered_file_and_directory_buckets_are_the_stable_hashes() -> None:
    """The buckets kept from one piece to the next are stable_bucket's of each name and of its
    directory, on the first call and on the next, for any count of buckets; none give one 0."""
    names = ["/a/b", "/a", "a", "a//b", "/x/y/z.c", "", "/", "/x/y/"]
    for buckets in (7, 100):
        for _ in range(2):
            own, parent = file_and_directory_buckets(names, buckets)
            assert own.tolist() == stable_bucket(names, buckets).tolist()
            assert parent.tolist() == stable_bucket([posixpath.dirname(n) for n in names], buckets).tolist()
    assert [a.tolist() for a in file_and_directory_buckets([], 5)] == [[0], [0]]

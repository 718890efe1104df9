"""Scale-out and merging: the characterizer on a real 2-worker Dask cluster gives the same
profile as one process, exactly, its reuse curve from the workers' samples; profiles of two
traces merge; distributions merge exactly."""

from __future__ import annotations

import importlib
import json
import tempfile
from collections import Counter
from functools import reduce
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fsbm.characterizer import characterize_file, open_levels, reuse, scale
from fsbm.characterizer.characterize import characterize_files
from fsbm.characterizer.histograms import ValueCounts
from fsbm.characterizer.reference_log import LogPlan, LogSample, ReferenceLog, ReferenceSummary
from fsbm.characterizer.partial import finalize
from fsbm.characterizer.scale import characterize_dask, partial_in_buckets
from fsbm.cluster import dask_client
from fsbm.errors import FsbmError, UsageError
from fsbm.traces.ingest import ingest
from fsbm.traces.schema import EVENT_SCHEMA, metadata
from tests.conftest import SHARED_DATA, run_fsbm

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

STRACE_LOG = SHARED_DATA / "strace" / "zicada_asterisk_strace.log"
THREADED_LOG = SHARED_DATA / "strace" / "arastoob_multithread_strace1.log"
NFS_CAPTURE = SHARED_DATA / "nfs" / "epam-nfstrace" / "2sessions-tcp-wsize32k-tcp-wsize512k.pcap.bz2"
ELLARD = SHARED_DATA / "nfs" / "ellard-text" / "ellard-raw-data.txt"
# The module, which the package's `characterize` (the function) hides.
characterize_module = importlib.import_module("fsbm.characterizer.characterize")


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name, source in (("strace", STRACE_LOG), ("threads", THREADED_LOG), ("nfs", NFS_CAPTURE),
                         ("ellard", ELLARD)):
        path = tmp_path_factory.mktemp(name) / "events.parquet"
        ingest([source], path, keep_going=True)
        out[name] = path
    return out


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    with dask_client(workers=2) as c:
        assert len(c.nthreads()) == 2  # type: ignore[attr-defined]
        yield c


@pytest.mark.parametrize("name", ["strace", "threads", "nfs", "ellard"])
def test_a_two_worker_cluster_gives_the_single_machine_profile_exactly(
        name: str, tables: dict[str, Path], client: object) -> None:
    path = tables[name]
    single = characterize_file(path, every=500).body
    # Small pieces, so every bucket gathers rows from several pieces and actors are split
    # across pieces before the shuffle brings them together.
    distributed = characterize_dask(path, client, every=500, rows_per_piece=200, buckets=3).body
    assert single["events"] > 50
    assert json.dumps(distributed, sort_keys=True) == json.dumps(single, sort_keys=True)


@pytest.mark.parametrize("name", ["strace", "threads", "nfs", "ellard"])
def test_one_process_gives_the_same_profile_a_bucket_at_a_time(name: str, tables: dict[str, Path]) -> None:
    whole = characterize_file(tables[name], every=500).body
    bucketed = finalize(partial_in_buckets(tables[name], every=500, events_per_bucket=300, rows_per_piece=200))
    assert json.dumps(bucketed, sort_keys=True) == json.dumps(whole, sort_keys=True)


def _shared_files(path: Path, n: int = 20_000, row_group_rows: int | None = None) -> Path:
    """Events of 64 actors reading, writing and syncing 300 files they share: a file one
    actor wrote is often synced by another."""
    rng = np.random.default_rng(7)
    ops = rng.choice(np.array(["read", "write", "stat", "fsync", "create", "unlink"]), n,
                     p=[0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    data = np.isin(ops, ["read", "write"])
    size = np.where(data, rng.choice([512, 4096, 65536], n), 0)
    table = pa.table({
        "seq": np.arange(n, dtype=np.int64), "ts": np.cumsum(rng.integers(1_000, 9_000, n)),
        "dur": rng.integers(500, 9_000, n), "actor": pa.array(rng.integers(0, 64, n).astype(str)),
        "op": pa.array(ops), "orig": pa.array(ops),
        "file": pa.array(np.char.add("/w/f", rng.integers(0, 300, n).astype(str))),
        "path": pa.nulls(n, pa.string()), "path2": pa.nulls(n, pa.string()),
        "offset": pa.array(rng.integers(0, 64, n) * 4096, mask=~data), "size": pa.array(size, mask=~data),
        "ret": pa.array(size), "errno": pa.nulls(n, pa.string()), "record": np.arange(n, dtype=np.int64)})
    pq.write_table(table.cast(EVENT_SCHEMA).replace_schema_metadata(metadata(format="synthetic")), path,
                   row_group_size=row_group_rows)
    return path


def test_pieces_of_several_row_groups_give_the_same_profile(
        tmp_path: Path, client: object) -> None:
    path = _shared_files(tmp_path / "groups.parquet", row_group_rows=1_000)
    work = scale.pieces(path, rows_per_piece=4_000)
    assert {len(piece.row_groups) for piece in work} == {4}
    whole = characterize_file(path).body
    bucketed = finalize(partial_in_buckets(path, events_per_bucket=2_000, rows_per_piece=4_000))
    distributed = characterize_dask(path, client, rows_per_piece=4_000, buckets=5).body
    for body in (bucketed, distributed):
        assert json.dumps(body, sort_keys=True) == json.dumps(whole, sort_keys=True)


def test_syncs_of_files_other_actors_wrote_are_told_alike_in_buckets_and_whole(
        tmp_path: Path, client: object) -> None:
    path = _shared_files(tmp_path / "shared.parquet")
    whole = characterize_file(path).body
    assert whole["fsync"]["kinds"]["metadata"]["count"] > 100
    bucketed = finalize(partial_in_buckets(path, events_per_bucket=2_000, rows_per_piece=3_000))
    distributed = characterize_dask(path, client, rows_per_piece=3_000, buckets=5).body
    for body in (bucketed, distributed):
        assert json.dumps(body, sort_keys=True) == json.dumps(whole, sort_keys=True)


def test_a_directory_of_small_tables_is_characterized_without_dask(tmp_path: Path) -> None:
    whole = _shared_files(tmp_path / "shared.parquet")
    table = pq.read_table(whole)
    (tmp_path / "parts").mkdir()
    pq.write_table(table.slice(0, 12_000), tmp_path / "parts" / "a.parquet")
    pq.write_table(table.slice(12_000), tmp_path / "parts" / "b.parquet")
    expected = characterize_file(whole).body
    got = characterize_files([tmp_path / "parts"]).body
    assert {**got, "source": None} == {**expected, "source": None}


def test_a_table_too_large_for_the_memory_available_is_profiled_a_bucket_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _shared_files(tmp_path / "shared.parquet")
    whole = characterize_file(path).body
    bucketed: list[Path] = []

    def in_buckets(table: Path, **options: object) -> object:
        bucketed.append(table)
        return partial_in_buckets(table, **options)

    monkeypatch.setattr(scale, "partial_in_buckets", in_buckets)
    monkeypatch.setattr(characterize_module, "memory_available_bytes", lambda: 1 << 20)
    assert not characterize_module.fits_in_memory(5_000)
    told: list[str] = []
    assert characterize_files([path], progress=told.append).body == whole
    assert bucketed == [path]
    assert len(told) == 1 and "a bucket of processes at a time" in told[0] and told[0].startswith("shared.parquet")


def test_no_room_for_the_buckets_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _shared_files(tmp_path / "shared.parquet")
    not_a_directory = tmp_path / "scratch"
    not_a_directory.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(not_a_directory))
    with pytest.raises(FsbmError, match="a bucket at a time in .*scratch") as raised:
        partial_in_buckets(path, events_per_bucket=2_000)
    assert "TMPDIR" in (raised.value.hint or "")
    assert path.exists()


def test_the_workers_buckets_pass_through_the_temporary_directory_and_leave_nothing(
        tables: dict[str, Path], client: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    held: list[Counter[str]] = []

    class Counted(tempfile.TemporaryDirectory):  # type: ignore[type-arg]
        def __exit__(self, *exc: object) -> None:
            held.append(Counter(name.name.split("-")[0] for name in Path(self.name).iterdir()))
            super().__exit__(*exc)

    monkeypatch.setattr(tempfile, "TemporaryDirectory", Counted)
    characterize_dask(tables["threads"], client, rows_per_piece=200, buckets=3)
    # Every piece's buckets deleted once summarized; each bucket of actors' reference log and
    # open-file changes kept until the end.
    assert held == [Counter(references=3, levels=3)]
    assert list(scratch.iterdir()) == []  # and nothing left
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(not_a_directory))
    with pytest.raises(FsbmError, match="cannot cut .* into buckets in .*file") as raised:
        characterize_dask(tables["threads"], client, rows_per_piece=200, buckets=3)
    assert "every worker sees" in (raised.value.hint or "")


def test_a_sampled_reuse_curve_is_the_same_from_the_workers_samples_as_from_one_process(
        tables: dict[str, Path], client: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reuse, "EXACT_LIMIT", 0)  # every curve sampled; the plan is made here, in the client
    monkeypatch.setattr(reuse, "SAMPLE_BUDGET", 2_000)
    single = characterize_file(tables["threads"]).body["reuse"]
    distributed = characterize_dask(tables["threads"], client, rows_per_piece=200, buckets=3).body["reuse"]
    assert 0 < single["sampling"]["rate"] < 0.5
    assert distributed == single


def test_open_file_levels_are_the_same_from_the_workers_cells_as_from_one_process(
        tables: dict[str, Path], client: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # Cells and batches of a few changes, so the two rounds cut every window many times; the
    # plan is made here, in the client.
    monkeypatch.setattr(open_levels, "CHANGES_PER_CELL", 7)
    monkeypatch.setattr(open_levels, "CHANGES_PER_BATCH", 30)
    single = characterize_file(tables["threads"], every=500).body
    distributed = characterize_dask(tables["threads"], client, every=500, rows_per_piece=200, buckets=3).body
    assert single["open_files"]["max"] > 1
    assert distributed["open_files"] == single["open_files"]
    assert [c["tang"] for c in distributed["checkpoints"]] == [c["tang"] for c in single["checkpoints"]]


def _level_by_walking(times: list[int], changes: list[int], t0: int, t1: int) -> dict[str, float]:
    """The time-weighted mean, spread and maximum of a level, walked change by change."""
    events = sorted(zip(times, changes))
    level, at, area, square, largest = 0, t0, 0, 0, 0
    for time, change in events:
        area += level * (time - at)
        square += level * level * (time - at)
        level, at = level + change, time
        largest = max(largest, level)
    area += level * (t1 - at)
    square += level * level * (t1 - at)
    mean = area / (t1 - t0)
    return {"mean": mean, "std": (square / (t1 - t0) - mean * mean) ** 0.5, "max": largest}


def test_open_file_levels_from_parts_in_cells_are_the_level_walked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(open_levels, "CHANGES_PER_CELL", 50)
    monkeypatch.setattr(open_levels, "CHANGES_PER_BATCH", 120)
    rng = np.random.default_rng(7)
    parts, every_change = [], ([], [], [])
    for _ in range(4):  # four parts, each opening and closing files over two windows
        opened = np.sort(rng.integers(0, 1_000_000, 300))
        closed = opened + rng.integers(0, 50_000, 300)
        times = np.concatenate((opened, closed))
        changes = np.concatenate((np.ones(300, np.int64), -np.ones(300, np.int64)))
        window = np.where(times < 500_000, open_levels.WHOLE, open_levels.checkpoint_window(0))
        parts.append(open_levels.LevelLog(window.astype(np.int64), times, changes))
        for column, values in zip(every_change, (window, times, changes)):
            column.extend(values.tolist())
    spans = {open_levels.WHOLE: (0, 1_100_000), open_levels.checkpoint_window(0): (500_000, 1_100_000)}
    counts = {w: sum(1 for x in every_change[0] if x == w) for w in spans}
    plan = open_levels.LevelPlan.of(spans, counts)
    assert plan.cells > 10
    sums, changes = sum(log.tally(plan) for log in parts)
    starts = plan.starting_levels(sums)
    batches = plan.batches(changes)
    assert len(batches) > 3
    from_parts = open_levels.OpenLevels.of_sums(plan, [open_levels.CellSums.of(plan, batch, starts, *[
        log.cut(plan, batch) for log in parts]) for batch in batches])
    whole = open_levels.OpenLevels.of(reduce(open_levels.LevelLog.merge, parts), spans, counts)
    assert from_parts.stats == whole.stats
    for w, (t0, t1) in spans.items():
        mine = [(t, c) for x, t, c in zip(*every_change) if x == w]
        walked = _level_by_walking([t for t, _ in mine], [c for _, c in mine], t0, t1)
        assert whole.stats[w]["max"] == walked["max"]
        assert whole.stats[w]["mean"] == pytest.approx(walked["mean"], rel=1e-12)
        assert whole.stats[w]["std"] == pytest.approx(walked["std"], rel=1e-9)


def _log(actor: int, rows: list[tuple[int, str, int, int, bool]]) -> ReferenceLog:
    """A part's log: (clock, file, offset, bytes, unlink) rows of one actor."""
    names = sorted({name for _, name, _, _, _ in rows})
    clock, file, offset, length, unlink = (np.array(column) for column in zip(*rows))
    return ReferenceLog(clock.astype(np.int64), np.zeros(len(rows), np.int16), clock * 10 + actor,
                        pa.array(names, pa.string()), np.array([names.index(f) for f in file], np.int64),
                        offset.astype(np.int64), length.astype(np.int64), np.zeros(len(rows), bool),
                        unlink.astype(bool), np.full(len(rows), -1, np.int16))


def test_what_a_file_held_when_unlinked_is_the_same_from_parts_as_from_the_whole_log() -> None:
    # cp writes a, and rm (another actor) removes it; a is made again, smaller, and removed
    # again; b is removed without ever being written.
    writer = _log(1, [(1, "a", 0, 8192, False), (2, "a", 8192, 4096, False), (6, "a", 0, 100, False)])
    remover = _log(2, [(4, "a", 0, 0, True), (7, "a", 0, 0, True), (8, "b", 0, 0, True)])
    whole = ReferenceSummary.of(writer.merge(remover))
    assert sorted(whole.unlinked_sizes().tolist()) == [0, 100, 12288]
    facts = writer.facts().merge(remover.facts())
    plan = LogPlan.of(facts)
    parts = ReferenceSummary(facts, plan, LogSample.concat([writer.sample(plan), remover.sample(plan)]))
    assert sorted(parts.unlinked_sizes().tolist()) == [0, 100, 12288]
    assert parts.reuse_curve() == whole.reuse_curve()


def test_the_command_line_runs_on_a_local_cluster(tables: dict[str, Path], tmp_path: Path, fsbm_home: Path) -> None:
    out = tmp_path / "p.json"
    done = run_fsbm("characterize", str(tables["threads"]), "--dask-workers", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == characterize_file(tables["threads"]).body
    both = run_fsbm("characterize", str(tables["threads"]), "--dask-workers", "2", "--dask", "tcp://127.0.0.1:1")
    assert both.returncode == 2 and "not both" in both.stderr


def test_the_command_line_runs_on_a_scheduler_started_apart(tables: dict[str, Path], tmp_path: Path,
                                                            fsbm_home: Path, scheduler_apart: str) -> None:
    # The address alone: no cluster of fsbm's own, nothing in fsbm's process but the client.
    out = tmp_path / "p.json"
    done = run_fsbm("characterize", str(tables["nfs"]), "--dask", scheduler_apart, "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == characterize_file(tables["nfs"]).body
    from dask.distributed import Client

    with Client(scheduler_apart, timeout="30s") as client:  # the work was the scheduler's workers'
        assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter) > 0


def test_two_traces_merge_into_one_profile_of_both(tables: dict[str, Path]) -> None:
    a = characterize_file(tables["strace"]).body
    b = characterize_file(tables["threads"]).body
    merged = characterize_files([tables["strace"], tables["threads"]]).body
    swapped = characterize_files([tables["threads"], tables["strace"]]).body
    assert merged["events"] == a["events"] + b["events"]
    assert merged["tang"]["calls"] == a["tang"]["calls"] + b["tang"]["calls"]
    for op, entry in merged["operations"].items():
        assert entry["count"] == a["operations"].get(op, {}).get("count", 0) + b["operations"].get(op, {}).get("count", 0)
    reads = a["sequentiality"]["read"]["consecutive"] + b["sequentiality"]["read"]["consecutive"]
    assert merged["sequentiality"]["read"]["consecutive"] == reads
    # A weighted mean of the two, not an average of percentages.
    expected = 100.0 * reads / (a["sequentiality"]["read"]["count"] + b["sequentiality"]["read"]["count"])
    assert merged["tang"]["reads_sequential_pct"] == pytest.approx(expected)
    assert max(a["namespace"]["files_touched"], b["namespace"]["files_touched"]) \
        <= merged["namespace"]["files_touched"] <= a["namespace"]["files_touched"] + b["namespace"]["files_touched"]
    assert merged["timing"]["concurrency"]["actors"] == a["timing"]["concurrency"]["actors"] + \
        b["timing"]["concurrency"]["actors"]
    # The parser's counts add up: sums kept by cap and bin place by place, counts by operation
    # operation by operation.
    timelines = a["timeline"], b["timeline"], merged["timeline"]
    for key in ("untimed_signed_by_cap_ns", "timed_gaps_over_call"):
        assert timelines[2][key] == [x + y for x, y in zip(timelines[0][key], timelines[1][key])]
    for op, (calls, untimed) in timelines[2]["file_calls_by_op"].items():
        assert calls == sum(t["file_calls_by_op"].get(op, [0, 0])[0] for t in timelines[:2]) > 0
    # The order traces are given in changes nothing but the listed sources.
    merged.pop("source"), swapped.pop("source")
    assert json.dumps(merged, sort_keys=True) == json.dumps(swapped, sort_keys=True)


def test_a_system_call_trace_and_an_nfs_trace_do_not_merge(tables: dict[str, Path]) -> None:
    with pytest.raises(UsageError, match="NFS workload with a system-call workload"):
        characterize_files([tables["strace"], tables["nfs"]])


def test_value_counts_give_nearest_rank_percentiles_and_merge_exactly() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 10**12, 100_001) * rng.integers(1, 4, 100_001)
    whole = ValueCounts.of(values).distribution()
    halves = ValueCounts.of(values[:40_000]).merge(ValueCounts.of(values[40_000:])).distribution()
    assert whole == halves
    ordered = np.sort(values)
    for q in (50, 90, 99):  # nearest rank: the ceil(q n / 100)-th smallest
        assert whole[f"p{q}"] == ordered[-(-q * len(values) // 100) - 1]
    assert whole["mean"] == pytest.approx(values.mean(), rel=1e-12)
    assert ValueCounts.of(np.array([5])).distribution()["p50"] == 5
    assert ValueCounts.empty().distribution() == {"count": 0}

"""The predictor's arithmetic: pricing through Park and Lipton, the count x cost model and
the time outside the filesystem.  Pure functions, so small tables built here."""

from __future__ import annotations

import math
import statistics

import pandas as pd
import pytest

from fsbm.documents import Profile, Reuse, SizeBucket, size_mix
from fsbm.errors import UsageError
from fsbm.predictor.cost_table import Case, CostTable, CpuTime, GapCost, Latency
from fsbm.predictor.model import CpuScales, Line, hit_fraction, price_workload
from fsbm.predictor.outside import (CPU_SCALE_BOUNDS, calls_cpu_seconds, cpu_scales, outside_features,
                                   outside_seconds)
from fsbm.traces.record import CALLS_CPU_FIELDS, median_cpu, untraced_medians
from fsbm.traces.vocabulary import GROUPS
from fsbm.predictor.park_lipton import evaluate, nonnegative_fit
from fsbm.predictor.pricing import Price, Pricer, Unmeasured, WrittenFiles, written_files
from fsbm.predictor.tracing import TracingCalibration

# Times nothing and needs no loop device: may share the cores with another such test.
pytestmark = pytest.mark.cores_shared

S, D, C = 2000.0, 300.0, 0.05  # ns, ns per 4 KiB block, ns per byte


def curve(size: int) -> float:
    return S + math.ceil(size / 4096) * D + C * size


def entry(bench: str, order: str, cache: str, size: int | None, mean: float, cpu_share: float | None = None,
          **more: object) -> Case:
    return Case.model_validate({
        "bench": bench, "op": bench, "size": size, "order": order, "cache": cache, "ops": 1000,
        "latency_ns": {"mean": mean, "ci95_low": 0.9 * mean, "ci95_high": 1.1 * mean},
        **({"cpu_ns": {"mean": cpu_share * mean}} if cpu_share is not None else {}),
        "histogram_log2": [], "bimodal": False, "partial_block": None, **more})


def scaled(latency: Latency, factor: float) -> Latency:
    return Latency(mean=latency.mean * factor, ci95_low=latency.low * factor, ci95_high=latency.high * factor)


def table(fs_type: str = "ext4", scale: float = 1.0) -> CostTable:
    sizes = (512, 4096, 65536, 1048576)
    entries = [entry(b, o, c, s, scale * curve(s) * (8 if c == "cold" else 1))
               for b, orders in (("read", ("sequential", "random")), ("write", ("sequential", "random")),
                                 ("overwrite", ("sequential", "random")))
               for o in orders for c in ("cold", "warm", "direct") for s in sizes]
    entries += [entry(b, "creation", c, None, scale * (10_000 if c == "cold" else 2_000))
                for b in ("open", "close", "create", "stat_file", "chmod", "readdir", "mkdir", "rmdir", "unlink",
                          "rename", "link", "symlink") for c in ("cold", "warm")]
    entries.append(entry("fsync", "sequential", "warm", 4096, scale * 500_000))
    return CostTable(fs_type, {"fs_type": fs_type, "fs_block_size": 4096, "aging_state": "fresh"}, "now", entries)


def test_nonnegative_fit_recovers_an_exact_curve_and_never_goes_negative() -> None:
    points = [(s, curve(s)) for s in (512, 4095, 4096, 4097, 65536, 1048576)]
    params = nonnegative_fit(points, 4096)
    assert all(v >= 0 for v in params.values())
    for size in (100, 8192, 300_000, 4 << 20):
        assert evaluate(params, size, 4096) == pytest.approx(curve(size), rel=0.02)


def test_prices_are_measured_where_measured_and_follow_the_curve_between() -> None:
    pricer = Pricer(table())
    measured = pricer.data("read", "random", "warm", 4096)
    assert measured.ns == pytest.approx(curve(4096)) and "4096 B" in measured.source
    between = pricer.data("read", "random", "warm", 10240)
    assert between.ns == pytest.approx(curve(10240), rel=0.02)
    assert "Park-Lipton between 4096 and 65536 B" in between.source
    beyond = pricer.data("read", "random", "warm", 8 << 20)
    assert "beyond the measured sizes" in beyond.source and beyond.ns > pricer.data("read", "random", "warm",
                                                                                    1 << 20).ns
    assert between.low_ns < between.ns < between.high_ns


def test_a_case_fsbench_did_not_measure_is_an_error_naming_it() -> None:
    bare = table()
    bare.entries = [e for e in bare.entries if not (e.bench == "read" and e.cache == "cold")]
    with pytest.raises(UsageError, match="no measurement of read random cold"):
        Pricer(bare).data("read", "random", "cold", 4096)


def test_memory_only_filesystems_price_cold_as_warm() -> None:
    tmpfs = table("tmpfs")
    tmpfs.entries = [e for e in tmpfs.entries if e.cache != "cold"]
    assert Pricer(tmpfs).data("read", "random", "cold", 4096).ns == pytest.approx(curve(4096))


def test_fsync_writes_the_dirty_bytes_through_except_where_there_is_no_device() -> None:
    disk = Pricer(table("ext4")).fsync(1 << 20)
    assert disk.ns == pytest.approx(500_000 + curve(1 << 20) - curve(4096))  # direct writes of the rest
    assert Pricer(table("tmpfs")).fsync(1 << 20).ns == pytest.approx(500_000)  # tmpfs: nothing to write through


def test_each_kind_of_sync_has_its_own_price_and_older_tables_say_what_they_lack() -> None:
    measured = table("ext4")
    measured.entries += [entry("fdatasync_overwrite", "sequential", "warm", 4096, 150_000),
                         entry("fsync_clean", "sequential", "warm", None, 60_000),
                         entry("fsync_dir", "sequential", "warm", None, 400_000)]
    pricer = Pricer(measured)
    assert pricer.fsync(4096, "metadata").ns == pytest.approx(500_000)
    assert pricer.fsync(1 << 20, "data").ns == pytest.approx(150_000 + curve(1 << 20) - curve(4096))
    assert pricer.fsync(0, "clean").ns == pytest.approx(60_000)
    assert pricer.fsync(0, "directory").ns == pytest.approx(400_000)
    synced = profile(fsyncs=7)
    synced["fsync"]["kinds"] = {"metadata": {"count": 1, "bytes": 4096}, "data": {"count": 2, "bytes": 2 << 20},
                                "clean": {"count": 3, "bytes": 0}, "directory": {"count": 1, "bytes": 0}}
    fs = price_workload(synced, pricer, cache_bytes=1 << 30)
    assert fs.by_op()["fsync"] == pytest.approx(500_000 + 2 * (150_000 + curve(1 << 20) - curve(4096)) + 3 * 60_000
                                                + 400_000)
    older = Pricer(table("ext4"))
    assert older.fsync(0, "clean").ns == pytest.approx(500_000) and "no fsync_clean" in older.fsync(0, "clean").source
    assert "no fsync_dir" in older.fsync(0, "directory").source
    assert "no fdatasync_overwrite" in older.fsync(4096, "data").source


def test_a_kind_of_sync_that_mixes_sizes_is_priced_size_by_size() -> None:
    """SQLite's data-only syncs are a journal header's 28 B and a transaction's pages: priced
    by the power of two of each sync's bytes, not all at their mean.  A sync's price rises
    less than in proportion to its bytes, so at the mean the many small ones would be priced
    as half-large ones."""
    measured = table("ext4")
    measured.entries += [entry("fdatasync_overwrite", "sequential", "warm", size, ns)
                         for size, ns in ((4096, 100_000), (65536, 200_000), (262144, 260_000))]
    pricer = Pricer(measured)
    synced = profile(fsyncs=4)
    synced["fsync"]["kinds"] = {"data": {"count": 4, "bytes": 2 * 28 + 2 * 262144, "runs": 4, "bytes_log2": {
        "16": {"count": 2, "bytes": 56, "runs": 2}, "262144": {"count": 2, "bytes": 2 * 262144, "runs": 2}}}}
    fs = price_workload(synced, pricer, cache_bytes=1 << 30)
    assert fs.by_op()["fsync"] == pytest.approx(2 * 100_000 + 2 * 260_000)
    assert sorted(line.count for line in fs.lines if line.op == "fsync") == [2, 2]
    at_the_mean = {"data": {key: value for key, value in synced["fsync"]["kinds"]["data"].items() if key != "bytes_log2"}}
    older = price_workload({**synced, "fsync": {**synced["fsync"], "kinds": at_the_mean}}, pricer, cache_bytes=1 << 30)
    assert older.by_op()["fsync"] == pytest.approx(4 * pricer.fsync((2 * 28 + 2 * 262144) / 4, "data").ns)
    assert older.by_op()["fsync"] > 1.1 * fs.by_op()["fsync"]


def test_a_sync_of_scattered_runs_is_priced_toward_its_blocks_scattered() -> None:
    """A data-only sync whose bytes came in as many runs as blocks costs fsbench's sync after
    that many single blocks scattered over the file; in one run, its sync after one request;
    between, the share of the way.  A table without the scattered case at the size keeps the
    one request's price and names the case for `fsbm bench --for`.  A sync that commits
    metadata too adds the scattering's extra to its own price."""
    from fsbm.documents import SyncKind
    from fsbm.predictor.model import scattered_share

    one_request = {4096: 150_000, 65536: 200_000}
    blocks_apart = {4096: 150_000, 65536: 600_000}
    measured = table("ext4")
    measured.entries += [entry("fdatasync_overwrite", order, "warm", size, ns)
                         for order, by_size in (("sequential", one_request), ("random", blocks_apart))
                         for size, ns in by_size.items()]
    pricer = Pricer(measured)
    assert scattered_share(SyncKind(count=2, bytes=2 * 65536, runs=2)) == 0.0
    assert scattered_share(SyncKind(count=2, bytes=2 * 65536, runs=32)) == 1.0
    assert scattered_share(SyncKind(count=2, bytes=2 * 65536, runs=2 + 15)) == pytest.approx(0.5)
    assert scattered_share(SyncKind(count=2, bytes=2 * 65536)) == 0.0  # a profile from before runs were counted
    assert scattered_share(SyncKind(count=2, bytes=2 * 4096, runs=2)) == 0.0  # a block a sync: nothing to scatter
    assert pricer.fsync(65536, "data", 0.0).ns == pytest.approx(200_000)
    assert pricer.fsync(65536, "data", 1.0).ns == pytest.approx(600_000)
    halfway = pricer.fsync(65536, "data", 0.5)
    assert halfway.ns == pytest.approx(400_000) and "50% of the way to its blocks scattered" in halfway.source
    # A sync that also commits metadata (a database file that grew as well) pays the data-only pair's
    # difference for its scattering, on top of its own price.
    assert pricer.fsync(65536, "metadata", 1.0).ns == pytest.approx(pricer.fsync(65536, "metadata").ns + 400_000)
    assert pricer.fsync(65536, "metadata", 0.5).ns == pytest.approx(pricer.fsync(65536, "metadata").ns + 200_000)
    synced = profile(fsyncs=4)
    synced["fsync"]["kinds"] = {"data": {"count": 4, "bytes": 4 * 65536, "runs": 4 + 30}}
    fs = price_workload(synced, pricer, cache_bytes=1 << 30)
    assert fs.by_op()["fsync"] == pytest.approx(4 * 400_000)
    assert any("in 8.5 runs" in line.detail for line in fs.lines)
    assert not {case for case in pricer.unmeasured if case.bench == "fdatasync_overwrite"}
    # Measured in one run only, at 4 KiB: priced as one request, the case named.
    lacking = table("ext4")
    lacking.entries += [entry("fdatasync_overwrite", "sequential", "warm", size, ns) for size, ns in one_request.items()]
    lacking.entries.append(entry("fdatasync_overwrite", "random", "warm", 4096, 150_000))
    short = Pricer(lacking)
    assert short.fsync(65536, "data", 0.5).ns == pytest.approx(200_000)
    assert short.unmeasured == {Unmeasured("fdatasync_overwrite", "random", "warm", 65536)}
    # Neither measured at the size: both cases named, so one `fsbm bench --for` measures both.
    quick = table("ext4")
    quick.entries += [entry("fdatasync_overwrite", order, "warm", 4096, 150_000) for order in ("sequential", "random")]
    quick_pricer = Pricer(quick)
    quick_pricer.fsync(65536, "data", 0.5)
    assert quick_pricer.unmeasured == {Unmeasured("fdatasync_overwrite", order, "warm", 65536)
                                       for order in ("sequential", "random")}


def profile(reads: int = 1000, fsyncs: int = 0) -> dict:
    return {
        "schema_version": 3,
        "classes": {"data": {"read": {"random": {"4096": {"count": reads, "bytes": reads * 4096}}},
                             "write": {"sequential": {"65536": {"count": 10, "bytes": 10 * 65536}}}},
                    "metadata": {"stat": {"done": 90, "failed": 10, "empty": 0},
                                 "readdir": {"done": 5, "failed": 0, "empty": 5},
                                 **({"fsync": {"done": fsyncs, "failed": 0, "empty": 0}} if fsyncs else {})}},
        "namespace": {"files_touched": 40, "directories_touched": 10},
        "fsync": {"bytes_written_per_fsync": 4096 if fsyncs else None},
        "reuse": {"block_size": 4096, "block_reads": 1000, "distinct_blocks": 500, "cold_misses": 500,
                  "points": [{"cache_blocks": 1, "cache_bytes": 4096, "hit_fraction": 0.1},
                             {"cache_blocks": 500, "cache_bytes": 500 * 4096, "hit_fraction": 0.5}]},
    }


def test_the_model_is_count_times_cost_class_by_class() -> None:
    pricer = Pricer(table())
    fs = price_workload(profile(fsyncs=3), pricer, cache_bytes=1 << 30)
    expected_reads = 1000 * (0.5 * 8 * curve(4096) + 0.5 * curve(4096))
    assert fs.by_op()["read"] == pytest.approx(expected_reads)
    assert fs.by_op()["write"] == pytest.approx(10 * curve(65536))
    assert fs.by_op()["fsync"] == pytest.approx(3 * 500_000)
    # 50 names over 105 lookups and listings: that share is cold.
    cold = 50 / 105
    assert fs.by_op()["stat"] == pytest.approx(100 * (cold * 10_000 + (1 - cold) * 2_000))
    assert sum(fs.by_group().values()) == pytest.approx(fs.total_ns)
    assert fs.low_ns < fs.total_ns < fs.high_ns
    warm = price_workload(profile(), pricer, cache_bytes=1 << 30, start="warm")
    assert warm.by_op()["read"] == pytest.approx(1000 * curve(4096))  # all of it fits and was cached


def test_cache_sizes_that_reach_one_point_of_the_reuse_curve_are_one_price() -> None:
    from fsbm.documents import Profile

    pricer, workload, other = Pricer(table()), Profile.of(profile()), Profile.of(profile(reads=2000))
    kept = price_workload(workload, pricer, cache_bytes=1 << 30)
    assert price_workload(workload, pricer, cache_bytes=(1 << 30) + 4096) is kept  # the same point: kept
    smaller = price_workload(workload, pricer, cache_bytes=4096)  # another point: priced anew
    assert smaller is not kept and smaller.by_op()["read"] > kept.by_op()["read"]
    assert price_workload(other, pricer, cache_bytes=1 << 30).by_op()["read"] == pytest.approx(
        2 * kept.by_op()["read"])  # another profile is priced for itself


def test_a_write_that_straddles_a_page_boundary_pays_for_the_one_page_more() -> None:
    """fsbench's write at d+1 touches one block more than its write at d: what a straddling
    write pays beyond an aligned one of its size.  Measured where fsbench measured d+1
    (btrfs's 8.8 against 3.9 us), from the curve where it did not."""
    journal = {"schema_version": 3, "classes": {"data": {"write": {"sequential": {"4096": {"count": 100, "bytes": 100 * 4096,
                                                                      "straddles": 60}}}},
                           "metadata": {}}, "reuse": profile()["reuse"], "namespace": profile()["namespace"]}
    curved = price_workload(journal, Pricer(table()), cache_bytes=1 << 30)
    assert curved.by_op()["write"] == pytest.approx(100 * curve(4096) + 60 * (curve(4097) - curve(4096)))
    measured = table("btrfs")
    measured.entries.append(entry("write", "sequential", "warm", 4097, 8_800))
    straddling = [line for line in price_workload(journal, Pricer(measured), cache_bytes=1 << 30).lines
                  if "straddling" in line.detail]
    assert len(straddling) == 1 and straddling[0].count == 60
    assert straddling[0].price.ns == pytest.approx(8_800 - curve(4096))
    assert "4097 B" in straddling[0].price.source
    aligned = {**journal, "classes": {"data": {"write": {"sequential": {"4096": {"count": 100, "bytes": 100 * 4096}}}},
                                      "metadata": {}}}
    assert not [line for line in price_workload(aligned, Pricer(measured), cache_bytes=1 << 30).lines
                if "straddling" in line.detail]


def test_writes_into_files_the_workload_made_are_priced_at_its_mixes_of_file_and_request_sizes() -> None:
    """The sequential writes into files the workload created take fsbench's write_new_mix at
    the workload's mix of bytes in each created file and of those writes' sizes, in one line,
    where the table measured it; the class's other writes keep their own prices.  Until then
    every write is priced as before and the case is kept for `fsbm bench --for`."""
    writes = {"2048": {"count": 100, "bytes": 100 * 3000, "into_created": 100},
              "8192": {"count": 300, "bytes": 300 * 10240, "into_created": 200}}
    created = {"4096": {"files": 50, "bytes": 50 * 6000}, "16384": {"files": 50, "bytes": 50 * 20000}}
    untar = {**profile(), "classes": {"data": {"write": {"sequential": writes}},
                                      "metadata": {"create": {"done": 100, "failed": 0, "empty": 0, "written": 100,
                                                              "written_bytes": 50 * 26000, "written_log2": created}}}}
    files = size_mix({k: SizeBucket(**v) for k, v in created.items()})
    requests = size_mix({"2048": SizeBucket(files=100, bytes=300_000), "8192": SizeBucket(files=200, bytes=2_048_000)})
    measured = table("tmpfs")
    before = Pricer(measured)
    as_before = price_workload(untar, before, cache_bytes=1 << 30)
    assert sum(line.count for line in as_before.lines if line.op == "write") == 400
    wanted = Unmeasured("write_new_mix", "sequential", "warm", round(sum(requests) / len(requests)), files, requests)
    assert wanted in before.unmeasured

    measured.entries.append(entry("write_new_mix", "sequential", "warm", wanted.size, 9_000, file_sizes=list(files),
                                  request_sizes=list(requests)))
    after = Pricer(measured)
    lines = [line for line in price_workload(untar, after, cache_bytes=1 << 30).lines if line.op == "write"]
    [new_files] = [line for line in lines if "into files the workload made" in line.detail]
    assert new_files.count == 300 and new_files.price.ns == 9_000 and "write_new_mix" in new_files.price.source
    rest = [line for line in lines if line is not new_files]
    assert [line.count for line in rest] == [100] and "10 KiB" in rest[0].detail
    assert not {case for case in after.unmeasured if case.bench == "write_new_mix"}


def test_sequential_writes_that_rewrite_in_place_are_priced_as_overwrites() -> None:
    """A sequential write that rewrote its file in place (a WAL log written again from its
    start) takes fsbench's overwrite in sequential order, its straddles in proportion one page
    more; the class's other writes keep the allocating write's price."""
    writes = {"4096": {"count": 100, "bytes": 100 * 4096, "straddles": 50, "in_place": 80}}
    wal = {**profile(), "classes": {"data": {"write": {"sequential": writes}}, "metadata": {}}}
    measured = table("ext4")
    measured.entries = [e for e in measured.entries if not (e.bench == "overwrite" and e.order == "sequential")]
    measured.entries += [entry("overwrite", "sequential", "warm", size, ns)
                         for size, ns in ((4095, 1_500), (4096, 1_500), (4097, 2_100), (65536, 20_000))]
    pricer = Pricer(measured)
    lines = [line for line in price_workload(wal, pricer, cache_bytes=1 << 30).lines if line.op == "write"]
    rewrites = [line for line in lines if "rewriting the file in place" in line.detail]
    assert [line.count for line in rewrites] == [80, pytest.approx(40)]
    assert rewrites[0].price.ns == pytest.approx(1_500) and "overwrite" in rewrites[0].price.source
    assert rewrites[1].price.ns == pytest.approx(pricer.straddle("overwrite", "sequential", "warm").ns)
    rest = [line for line in lines if line not in rewrites]
    assert sum(line.count for line in rest if "straddling" not in line.detail) == 20
    assert [line.count for line in rest if "straddling" in line.detail] == [pytest.approx(10)]
    assert all("fsbench write " in line.price.source for line in rest if "straddling" not in line.detail)


def test_writes_of_several_sizes_that_straddle_pages_are_priced_as_appends_at_the_workloads_mix() -> None:
    """SQLite journals a page as 4 bytes, 4,096 bytes and 4 bytes, so its page writes straddle.
    Where the table measured append_mix at the workload's mix of write sizes, every one of its
    sequential writes takes that price, in one line; until then they are priced size by size
    and the mix is kept for `fsbm bench --for`.  Writes that straddle nothing, or all of one
    size, are priced size by size and ask for nothing."""
    writes = {"4": {"count": 60, "bytes": 60 * 4}, "4096": {"count": 60, "bytes": 60 * 4096, "straddles": 60},
              "0": {"count": 2, "bytes": 0}}
    journal = {**profile(), "classes": {"data": {"write": {"sequential": writes}}, "metadata": {}}}
    mix = size_mix({k: SizeBucket(files=v["count"], bytes=v["bytes"]) for k, v in writes.items() if k != "0"})
    assert mix == (4, 4, 4, 4, 4100, 4100, 4100, 4100)
    measured = table("xfs")
    before = Pricer(measured)
    size_by_size = price_workload(journal, before, cache_bytes=1 << 30)
    assert any("straddling" in line.detail for line in size_by_size.lines)
    assert before.unmeasured == {Unmeasured("append_mix", "sequential", "warm", round(sum(mix) / len(mix)), mix)}

    measured.entries.append(entry("append_mix", "sequential", "warm", round(sum(mix) / len(mix)), 3_000,
                                  file_sizes=list(mix)))
    after = Pricer(measured)
    lines = [line for line in price_workload(journal, after, cache_bytes=1 << 30).lines if line.op == "write"]
    [appended] = [line for line in lines if "one after another" in line.detail]
    assert appended.count == 120 and appended.price.ns == 3_000 and "append_mix" in appended.price.source
    assert not any("straddling" in line.detail or "buffered" in line.detail and line is not appended for line in lines)
    assert any("at end of file" in line.detail for line in lines)  # reads of nothing keep their own price
    assert not {u for u in after.unmeasured if u.cache == "warm"}  # (the cold cases are asked for too)

    for plain in ({"4096": {"count": 60, "bytes": 60 * 4096}, "512": {"count": 60, "bytes": 60 * 512}},
                  {"4096": {"count": 60, "bytes": 60 * 4096, "straddles": 60}}):
        aligned = {**journal, "classes": {"data": {"write": {"sequential": plain}}, "metadata": {}}}
        pricer = Pricer(measured)
        assert not any("one after another" in line.detail
                       for line in price_workload(aligned, pricer, cache_bytes=1 << 30).lines)
        assert not pricer.unmeasured


def listing_table() -> CostTable:
    """fsbench's listings of 100 entries (2448 bytes) and 10 (288), each looked up first."""
    listed = table()
    listed.entries = [e for e in listed.entries if e.bench != "readdir"]
    for bench, entries, nbytes, cold, warm in (("readdir", 100, 2448, 200_000, 50_000),
                                               ("readdir_small", 10, 288, 60_000, 14_000)):
        for cache, mean in (("cold", cold), ("warm", warm)):
            listed.entries.append(entry(bench, "creation", cache, None, mean, entries_per_op=entries,
                                        listed_bytes_per_op=nbytes))
    return listed


def test_a_listing_is_priced_by_the_bytes_of_entries_it_returned() -> None:
    pricer = Pricer(listing_table())
    ends = 2_000 + 2_000  # a warm open and close: fsbench looked the directory up first
    small, large = 60_000 - ends, 200_000 - ends
    assert pricer.listing(288, "cold").ns == pytest.approx(small)
    assert pricer.listing(100, "cold").ns == pytest.approx(small)  # below the small listing: its price
    halfway = pricer.listing((288 + 2448) / 2, "cold")
    assert halfway.ns == pytest.approx((small + large) / 2) and "between 288 and 2448 B" in halfway.source
    assert pricer.listing(2448 + 2160, "cold").ns == pytest.approx(large + (large - small))  # on the line beyond
    unknown = pricer.listing(None, "cold")  # an NFS READDIR's size is not in its trace
    assert unknown.ns == pytest.approx(large) and "unknown size" in unknown.source
    assert pricer.metadata("readdir", "warm").ns == pytest.approx(50_000 - ends)
    older = Pricer(table()).listing(1000, "cold")
    assert "no readdir_small" in older.source
    workload = profile()  # five listings that ended
    workload["classes"]["metadata"]["readdir"] = {"done": 5, "failed": 0, "empty": 5, "listed_bytes": 5 * 1368}
    cold = 50 / 105  # 50 names over 105 metadata calls
    fs = price_workload(workload, pricer, cache_bytes=1 << 30)
    assert fs.by_op()["readdir"] == pytest.approx(5 * (cold * (small + large) / 2 + (1 - cold) * (10_000 + 46_000) / 2))
    assert any("a directory of 1.34 KiB listed, cold" == line.detail for line in fs.lines if line.op == "readdir")


def test_a_directory_listed_in_several_calls_is_one_listing_of_all_its_bytes() -> None:
    """fsbench lists a whole directory, in however many calls it takes: six NFS READDIRs of
    456 B each over two directories (the replies show no listing's end) are two listings of
    1368 B, not six of 456, cold and warm in the metadata calls' shares."""
    pricer = Pricer(listing_table())
    small, large = 60_000 - 4_000, 200_000 - 4_000
    workload = profile()
    workload["namespace"]["directories_touched"] = 2
    workload["classes"]["metadata"]["readdir"] = {"done": 6, "failed": 0, "empty": 0, "listed_bytes": 6 * 456}
    cold = 42 / 106  # 40 files and 2 directories over 106 metadata calls
    fs = price_workload(workload, pricer, cache_bytes=1 << 30)
    assert fs.by_op()["readdir"] == pytest.approx(2 * (cold * (small + large) / 2 + (1 - cold) * (10_000 + 46_000) / 2))
    assert any("a directory of 1.34 KiB listed, in 3.0 calls, cold" == line.detail for line in fs.lines)
    workload["classes"]["metadata"]["readdir"] = {"done": 4, "failed": 0, "empty": 4, "listed_bytes": 4 * 1368}
    ended = price_workload(workload, pricer, cache_bytes=1 << 30)  # four listings that ended: four, whatever it touched
    assert sum(line.count for line in ended.lines if line.detail.startswith("a directory")) == pytest.approx(4)


@pytest.mark.parametrize("op, bench, count_key, bytes_key, detail", [
    ("create", "create_written", "written", "written_bytes", "then written"),
    ("unlink", "unlink_written", "with_data", "data_bytes", "of a file holding data"),
])
def test_calls_on_files_holding_data_are_priced_by_the_bytes_each_held(op: str, bench: str, count_key: str,
                                                                         bytes_key: str, detail: str) -> None:
    """fsbench's create_written (a create among files written as they are made) and
    unlink_written (an unlink of a file holding data) at 4 KiB and 64 KiB a file: linear in
    the bytes between, the nearest size beyond; the calls on empty files keep the empty
    call's price; an older table prices them all as on empty files and says so."""
    written = table()
    written.entries += [entry(bench, "creation", c, size, mean)
                        for c in ("cold", "warm") for size, mean in ((4096, 100_000), (65536, 400_000))]
    pricer = Pricer(written)

    def price(bytes_per_file: float, cache: str) -> Price:
        return getattr(pricer, bench)(WrittenFiles(20, bytes_per_file), cache)

    assert price(4096, "warm").ns == pytest.approx(100_000)
    middle = price(34816, "warm")
    assert middle.ns == pytest.approx(250_000) and "between 4096 and 65536 B" in middle.source
    assert middle.low_ns == pytest.approx(225_000) and middle.high_ns == pytest.approx(275_000)
    assert price(1 << 20, "cold").ns == pytest.approx(400_000)
    assert price(100, "cold").ns == pytest.approx(100_000)

    making = profile()
    making["classes"]["metadata"][op] = {"done": 30, "failed": 0, "empty": 0, count_key: 20, bytes_key: 20 * 34816}
    fs = price_workload(making, pricer, cache_bytes=1 << 30)
    cold = 50 / 135  # 50 names over 100 stats, 5 listings and 30 calls
    empty_calls = 10 * (cold * 10_000 + (1 - cold) * 2_000)
    assert fs.by_op()[op] == pytest.approx(empty_calls + 20 * 250_000)
    assert any(f"{detail}, 34 KiB a file" in line.detail for line in fs.lines)
    older = price_workload(making, Pricer(table()), cache_bytes=1 << 30)
    assert older.by_op()[op] == pytest.approx(30 * (cold * 10_000 + (1 - cold) * 2_000))
    assert any(f"no {bench}" in line.price.source for line in older.lines)


def test_creates_among_written_files_are_measured_among_the_workloads_count_of_them() -> None:
    """create_written_mix is asked for among as many files as the workload made and wrote:
    their count to two figures, at least 200 and at most 20,000, however many of their mix
    fsbench makes (the case is known by the count asked for)."""
    mix = (1000, 70_000)
    assert written_files(WrittenFiles(637, 37_000, mix)) == 640
    assert written_files(WrittenFiles(24, 11_000, mix)) == 200
    assert written_files(WrittenFiles(90_000, 500, (100, 900))) == 20_000
    assert written_files(WrittenFiles(5000, 600_000, (200_000, 1_000_000))) == 5000
    assert written_files(WrittenFiles(637, 37_000)) == 640


def test_a_mix_measured_among_another_count_of_files_stands_in_for_the_workloads_count() -> None:
    """Where the table measured create_written_mix at the workload's mix but among another
    count of files, the nearest count's case prices the creates (an unknown count, as in
    tables measured before the count was kept, only where there is no other), says so, and
    the case at the workload's count is still asked for."""
    mix = (1000, 70_000)
    made = WrittenFiles(634, 35_500, mix)
    btrfs = table("btrfs")
    btrfs.entries += [entry("create_written_mix", "creation", "warm", 35_500, 90_000, file_sizes=list(mix)),
                      entry("create_written_mix", "creation", "warm", 35_500, 60_000, file_sizes=list(mix),
                            files=4000),
                      entry("create_written_mix", "creation", "warm", 35_500, 30_000, file_sizes=list(mix),
                            files=1000)]
    pricer = Pricer(btrfs)
    price = pricer.create_written(made, "warm")
    assert price.ns == 30_000 and "among 1000 files (not the workload's 630" in price.source
    assert Unmeasured("create_written_mix", "creation", "warm", 35_500, mix, (), 630) in pricer.unmeasured
    btrfs.entries = btrfs.entries[:-2]
    unknown = Pricer(btrfs).create_written(made, "warm")
    assert unknown.ns == 90_000 and "among fsbench's own count of files" in unknown.source


def test_files_renamed_into_place_move_the_wait_from_their_creates_to_their_renames() -> None:
    """Of the creates then written, those renamed into place once written are priced by
    create_renamed_mix at their own mix, the others by create_written_mix at theirs, and the
    renames of those files by rename_written_mix: on btrfs the wait a create among written
    files pays moves to the rename that puts the file into place.  Until the table has the
    cases they are kept for `fsbm bench --for`, priced meanwhile as an empty file's create
    and rename, said so."""
    renamed = {"4096": {"files": 8, "bytes": 8 * 6000}, "65536": {"files": 4, "bytes": 4 * 90_000}}
    written = {"4096": {"files": 14, "bytes": 14 * 6000}, "65536": {"files": 6, "bytes": 6 * 90_000}}
    mirror = profile()
    mirror["classes"]["metadata"].update(
        create={"done": 20, "failed": 0, "empty": 0, "written": 20, "written_bytes": 14 * 6000 + 6 * 90_000,
                "written_log2": written, "renamed": 12, "renamed_bytes": 8 * 6000 + 4 * 90_000,
                "renamed_log2": renamed},
        rename={"done": 15, "failed": 0, "empty": 0, "written": 12, "written_bytes": 8 * 6000 + 4 * 90_000,
                "written_log2": renamed})
    renamed_mix = size_mix({k: SizeBucket(**v) for k, v in renamed.items()})
    rest_mix = size_mix({"4096": SizeBucket(files=6, bytes=6 * 6000), "65536": SizeBucket(files=2, bytes=2 * 90_000)})
    btrfs = table("btrfs")
    before = Pricer(btrfs)
    lines = price_workload(mirror, before, cache_bytes=1 << 30, start="warm").lines
    assert {(u.bench, u.file_sizes) for u in before.unmeasured} == {
        ("create_written_mix", rest_mix), ("create_renamed_mix", renamed_mix), ("rename_written_mix", renamed_mix)}
    for op in ("create", "rename"):
        [into_place] = [line for line in lines if line.op == op and "into place" in line.detail]
        assert into_place.count == 12 and into_place.price.ns == 2_000
        assert "_mix, not measured" in into_place.price.source

    for bench, mix, mean in (("create_written_mix", rest_mix, 240_000), ("create_renamed_mix", renamed_mix, 30_000),
                             ("rename_written_mix", renamed_mix, 200_000)):
        among = {"files": 200} if bench == "create_written_mix" else {}  # written_files: 8 files, at least 200
        btrfs.entries.append(entry(bench, "creation", "warm", round(sum(mix) / len(mix)), mean, file_sizes=list(mix),
                                   **among))
    after = Pricer(btrfs)
    lines = price_workload(mirror, after, cache_bytes=1 << 30, start="warm").lines
    priced = {(line.op, line.detail.split(",")[0]): (line.count, line.price.ns) for line in lines
              if line.op in ("create", "rename")}
    assert priced == {("create", "then written"): (8, 240_000),
                      ("create", "then written and renamed into place"): (12, 30_000),
                      ("rename", "warm"): (3, 2_000), ("rename", "into place of a file just written"): (12, 200_000)}
    assert not {u for u in after.unmeasured if u.cache == "warm"}  # (the cold cases are asked for too)


def test_files_synced_once_written_are_created_at_an_empty_files_price() -> None:
    """A create whose file was synced once written (SQLite's journal) leaves no dirty data
    for later creates to wait for: it is priced as an empty file's create, and only the
    other written files at create_written_mix, by their own mix."""
    synced = {"131072": {"files": 290, "bytes": 290 * 200_000}}
    rest = {"4096": {"files": 6, "bytes": 6 * 6000}, "65536": {"files": 4, "bytes": 4 * 90_000}}
    journal = profile()
    journal["classes"]["metadata"]["create"] = {
        "done": 301, "failed": 0, "empty": 0, "written": 300, "written_bytes": 6 * 6000 + 4 * 90_000 + 290 * 200_000,
        "written_log2": {**rest, **synced}, "synced": 290, "synced_bytes": 290 * 200_000, "synced_log2": synced}
    btrfs = table("btrfs")
    rest_mix = size_mix({k: SizeBucket(**v) for k, v in rest.items()})
    btrfs.entries += [entry("create_written_mix", "creation", c, round(sum(rest_mix) / len(rest_mix)), 240_000,
                            file_sizes=list(rest_mix), files=200) for c in ("cold", "warm")]
    lines = price_workload(journal, Pricer(btrfs), cache_bytes=1 << 30, start="warm").lines
    priced = {line.detail.split(",")[0]: (line.count, line.price.ns) for line in lines if line.op == "create"}
    assert priced == {"warm": (1, 2_000), "then written": (10, 240_000), "then written and synced": (290, 2_000)}


@pytest.mark.parametrize("op, bench, count_key, bytes_key, sizes_key", [
    ("create", "create_written", "written", "written_bytes", "written_log2"),
    ("unlink", "unlink_written", "with_data", "data_bytes", "data_log2"),
])
def test_calls_on_files_of_a_mix_of_sizes_are_priced_at_that_mix_where_the_table_measured_it(
        op: str, bench: str, count_key: str, bytes_key: str, sizes_key: str) -> None:
    """A mix of file sizes is priced by fsbench's *_mix case measured at exactly that mix
    (on btrfs a mix costs more a create than its mean size does); where the table has no
    such case, at the mean size, and the mix is kept as the case `fsbm bench --for` measures.
    A tmpfs has no cold case: its cold calls take the warm mix's price."""
    buckets = {"512": {"files": 12, "bytes": 12 * 600}, "32768": {"files": 4, "bytes": 4 * 40_000}}
    mix = size_mix({k: SizeBucket(**v) for k, v in buckets.items()})
    making = profile()
    making["classes"]["metadata"][op] = {"done": 16, "failed": 0, "empty": 0, count_key: 16,
                                         bytes_key: 12 * 600 + 4 * 40_000, sizes_key: buckets}
    written = table("btrfs")
    written.entries += [entry(bench, "creation", c, size, mean)
                        for c in ("cold", "warm") for size, mean in ((4096, 100_000), (65536, 400_000))]
    mean_size = (12 * 600 + 4 * 40_000) / 16
    at_mean = 100_000 + 300_000 * (mean_size - 4096) / (65536 - 4096)
    pricer = Pricer(written)
    fs = price_workload(making, pricer, cache_bytes=1 << 30)
    assert sum(line.total_ns for line in fs.lines if line.op == op) == pytest.approx(16 * at_mean)
    among = 200 if op == "create" else None  # create_written_mix among the workload's 16 files, at least 200
    assert pricer.unmeasured == {Unmeasured(f"{bench}_mix", "creation", c, round(sum(mix) / len(mix)), mix,
                                            files=among) for c in ("cold", "warm")}

    written.entries += [entry(f"{bench}_mix", "creation", c, round(sum(mix) / len(mix)), 900_000,
                              file_sizes=list(mix), files=among) for c in ("cold", "warm")]
    measured = Pricer(written)
    fs = price_workload(making, measured, cache_bytes=1 << 30)
    assert sum(line.total_ns for line in fs.lines if line.op == op) == pytest.approx(16 * 900_000)
    assert any(f"{bench}_mix" in line.price.source and "8 file sizes" in line.price.source for line in fs.lines)
    assert not measured.unmeasured
    # Files of a mean above MIX_MEAN_LIMIT are priced at their mean, and no case is asked for.
    large = {"4194304": {"files": 8, "bytes": 8 * 5_000_000}, "65536": {"files": 8, "bytes": 8 * 70_000}}
    making["classes"]["metadata"][op].update({sizes_key: large, bytes_key: 8 * 5_070_000})
    big = Pricer(table("btrfs"))
    price_workload(making, big, cache_bytes=1 << 30)
    assert not big.unmeasured
    making["classes"]["metadata"][op][bytes_key] = 12 * 600 + 4 * 40_000
    # Another mix of the same mean is not this one.
    other = {"4096": {"files": 16, "bytes": 12 * 600 + 4 * 40_000 - 1}}
    making["classes"]["metadata"][op][sizes_key] = other
    assert sum(line.total_ns for line in price_workload(making, Pricer(written), cache_bytes=1 << 30).lines
               if line.op == op) == pytest.approx(16 * at_mean, rel=1e-3)

    memory = table("tmpfs")
    memory.environment["memory_only"] = True
    memory.entries += [entry(bench, "creation", "warm", size, 5_000) for size in (4096, 65536)]
    memory.entries.append(entry(f"{bench}_mix", "creation", "warm", 5000, 7_000, file_sizes=list(mix), files=among))
    making["classes"]["metadata"][op][sizes_key] = buckets
    in_memory = Pricer(memory)
    fs = price_workload(making, in_memory, cache_bytes=1 << 30)
    assert sum(line.total_ns for line in fs.lines if line.op == op) == pytest.approx(16 * 7_000)
    assert not in_memory.unmeasured


def test_a_mix_of_file_sizes_is_groups_of_as_many_files_at_their_mean() -> None:
    """size_mix: eight groups of as many files each, smallest first, each at its files' mean
    bytes (a bucket's files at the bucket's mean), so the mix keeps the files' mean; fewer
    groups where there are fewer files; nothing where there are none."""
    buckets = {"0": SizeBucket(files=4, bytes=0), "1024": SizeBucket(files=8, bytes=8 * 1500),
               "65536": SizeBucket(files=4, bytes=4 * 100_000)}
    mix = size_mix(buckets)
    assert mix == (0, 0, 1500, 1500, 1500, 1500, 100_000, 100_000)
    assert sum(mix) / len(mix) == pytest.approx((8 * 1500 + 4 * 100_000) / 16)
    assert size_mix({"1024": SizeBucket(files=3, bytes=3000)}) == (1000, 1000, 1000)
    # Three groups of 5 1/3 files: 4 empty and 1 1/3 of 1500 B; 5 1/3 of 1500 B; the rest.
    assert size_mix(buckets, groups=3) == (375, 1500, 75_400)
    assert size_mix({}) == () and size_mix({"512": SizeBucket(files=0, bytes=0)}) == ()
    # Unsorted keys, buckets split across groups: still smallest first, the mean kept.
    spread = size_mix({"8192": SizeBucket(files=5, bytes=5 * 9000), "16": SizeBucket(files=11, bytes=11 * 20)})
    assert list(spread) == sorted(spread) and sum(spread) / 8 == pytest.approx((5 * 9000 + 11 * 20) / 16, rel=0.01)


def test_copies_are_priced_by_fsbench_copy_and_without_it_as_a_read_and_a_write() -> None:
    copying = profile()
    copying["classes"]["data"]["copy"] = {"sequential": {"65536": {"count": 20, "bytes": 20 * 65536}}}
    cloning = table("xfs")
    cloning.entries += [entry("copy", "sequential", c, s, 15_000.0) for c in ("cold", "warm") for s in (512, 65536)]
    fs = price_workload(copying, Pricer(cloning), cache_bytes=1 << 30)
    assert fs.by_op()["copy"] == pytest.approx(20 * 15_000)  # a clone: flat in size
    assert {line.group for line in fs.lines if line.op == "copy"} == {"write"}
    older = price_workload(copying, Pricer(table("ext4")), cache_bytes=1 << 30)
    # No copy benchmark: the source read cold (a first reference), the copy written.
    assert older.by_op()["copy"] == pytest.approx(20 * (8 * curve(65536) + curve(65536)))
    assert all("no copy benchmark" in line.price.source for line in older.lines if line.op == "copy")


def test_a_copys_source_is_read_for_the_first_time_whatever_the_reads_hit() -> None:
    """cp -r, then grep of the copies: every read hits (it reads what the copies wrote), yet
    each copy read its source from the device on a cold start.  The reads' share of hits
    does not carry to the copies; on a warm start where the working set fits, the sources
    were cached before the workload began."""
    copying = profile()
    copying["classes"]["data"]["copy"] = {"sequential": {"65536": {"count": 20, "bytes": 20 * 65536}}}
    copying["reuse"] = {"block_size": 4096, "block_reads": 1000, "distinct_blocks": 1000, "cold_misses": 0,
                        "points": [{"cache_blocks": 1000, "cache_bytes": 1000 * 4096, "hit_fraction": 1.0}]}
    copies = table("ext4")
    copies.entries += [entry("copy", "sequential", c, s, (8 if c == "cold" else 1) * 3 * curve(s))
                       for c in ("cold", "warm") for s in (512, 65536)]
    cold = price_workload(copying, Pricer(copies), cache_bytes=1 << 30)
    assert cold.by_op()["copy"] == pytest.approx(20 * 8 * 3 * curve(65536))
    assert {line.detail.rsplit(", ", 1)[1] for line in cold.lines if line.op == "copy"} == {"cache miss"}
    assert cold.by_op()["read"] == pytest.approx(1000 * curve(4096))  # the reads all hit
    warm = price_workload(copying, Pricer(copies), cache_bytes=1 << 30, start="warm")
    assert warm.by_op()["copy"] == pytest.approx(20 * 3 * curve(65536))
    small = price_workload(copying, Pricer(copies), cache_bytes=4096, start="warm")  # it does not fit
    assert small.by_op()["copy"] == pytest.approx(20 * 8 * 3 * curve(65536))


def test_a_mapped_region_costs_its_faults_and_on_a_miss_the_devices_part_of_a_read() -> None:
    """git hashes its larger files through mmap: a region that hits costs fsbench's warm
    mmap_read of its length (the faults), one that misses that plus the cold read's device
    time (cold less warm read); it counts as read time.  A table without mmap_read prices
    the region as a read of its length, said so."""
    hashing = profile(reads=0)
    hashing["classes"]["data"] = {"mmap": {"random": {"65536": {"count": 30, "bytes": 30 * 100_000}}}}
    faulting = table()
    faulting.entries += [entry("mmap_read", o, c, size, 3 * curve(size) * (8 if c == "cold" else 1))
                         for o in ("sequential", "random") for c in ("cold", "warm") for size in (512, 4096, 65536, 1048576)]
    fs = price_workload(hashing, Pricer(faulting), cache_bytes=1 << 30)
    hit, miss = 3 * curve(100_000), (8 - 1) * curve(100_000) + 3 * curve(100_000)
    assert fs.by_op()["mmap"] == pytest.approx(30 * (0.5 * miss + 0.5 * hit), rel=0.02)  # half hit (the reuse curve)
    lines = [line for line in fs.lines if line.op == "mmap"]
    assert {line.group for line in lines} == {"read"} and len(lines) == 2
    assert all("mapped, read through once" in line.detail for line in lines)
    assert any("mmap_read" in line.price.source for line in lines)
    older = price_workload(hashing, Pricer(table()), cache_bytes=1 << 30)
    assert older.by_op()["mmap"] == pytest.approx(30 * (0.5 * 8 * curve(100_000) + 0.5 * curve(100_000)), rel=0.02)
    assert all("no mmap_read" in line.price.source for line in older.lines if line.op == "mmap")


def test_calls_at_end_of_file_move_no_data_and_cost_a_warm_call() -> None:
    """cp's last copy_file_range of every file and a read-to-the-end loop's last read return 0:
    no data moves, whatever the cache holds (priced once as a cold 1 B copy, 637 of them
    were a third of copy-delete's modelled time on ext4)."""
    eof = profile(reads=0)
    eof["classes"]["data"] = {"read": {"random": {"0": {"count": 300, "bytes": 0}}},
                              "copy": {"sequential": {"0": {"count": 600, "bytes": 0}}}}
    fs = price_workload(eof, Pricer(table()), cache_bytes=1 << 30)
    assert fs.by_op()["read"] == pytest.approx(300 * curve(512))  # the smallest warm read measured
    assert fs.by_op()["copy"] == pytest.approx(600 * curve(512))
    assert all("end of file" in line.price.source for line in fs.lines if line.op in ("read", "copy"))
    assert {line.group for line in fs.lines if line.op == "copy"} == {"write"}


def test_the_first_read_of_a_file_is_a_random_read_of_its_size() -> None:
    """grep reads 600 files front to back in 64 KiB reads: each file's first read finds no
    readahead under way, so it costs a random cold 64 KiB read, not a streaming one."""
    seeking = table()
    for e in seeking.entries:
        if e.bench == "read" and e.order == "random" and e.cache == "cold":
            e.latency_ns = scaled(e.latency_ns, 3)
    files = profile(reads=0)
    files["classes"]["data"] = {"read": {"sequential": {"65536": {"count": 1200, "bytes": 1200 * 65536},
                                                        "0": {"count": 600, "bytes": 0}}}}
    files["runs"] = {"read_only": 600, "read_write": 0}
    first = [line for line in price_workload(files, Pricer(seeking), cache_bytes=0).lines
             if line.detail.startswith("first read")]
    assert len(first) == 1 and first[0].count == 600 and "random 64 KiB read" in first[0].detail
    assert first[0].price.ns == pytest.approx((3 - 1) * 8 * curve(65536))  # random less sequential, both cold


def test_first_reads_of_small_files_are_priced_at_read_listed_mix_at_their_mix() -> None:
    """grep reads 900 files of 0.7 and 1.5 KiB and 100 of 100 KB, each once from a cold cache.
    Until the table has read_listed_mix at the small files' mix, every first read is priced
    as a random cold read (and the case is asked for); once it has, the small files' share of
    the first reads (0.9) is priced as that case less a sequential cold read of their mean
    size, and the rest as before."""
    small = {"512": SizeBucket(files=450, bytes=450 * 700), "1024": SizeBucket(files=450, bytes=450 * 1500)}
    files = profile(reads=0)
    files["classes"]["data"] = {"read": {"sequential": {"1024": {"count": 1000, "bytes": 1000 * 1100}}}}
    files["runs"] = {"read_only": 1000, "read_write": 0,
                     "read_files_log2": {**{k: b.model_dump() for k, b in small.items()},
                                         "65536": {"files": 100, "bytes": 100 * 100_000}}}
    mix = size_mix(small)

    def first_reads(t: CostTable) -> tuple[list[Line], Pricer]:
        pricer = Pricer(t)
        return [line for line in price_workload(files, pricer, cache_bytes=0).lines
                if line.detail.startswith("first read")], pricer

    lines, pricer = first_reads(table())
    assert [line.count for line in lines] == [pytest.approx(1000)] and "random" in lines[0].detail
    assert Unmeasured("read_listed_mix", "creation", "cold", round(sum(mix) / len(mix)), mix) in pricer.unmeasured
    measured = table()
    measured.entries.append(entry("read_listed_mix", "creation", "cold", round(sum(mix) / len(mix)), 30_000.0,
                                  file_sizes=list(mix)))
    lines, pricer = first_reads(measured)
    assert [line.count for line in lines] == [pytest.approx(900), pytest.approx(100)]
    assert lines[0].price.ns == pytest.approx(30_000.0 - pricer.data("read", "sequential", "cold", 1100).ns)
    assert "read_listed_mix" in lines[0].price.source and "small file" in lines[0].detail
    assert "random" in lines[1].detail and not {u for u in pricer.unmeasured if u.bench == "read_listed_mix"}


def test_the_first_read_of_a_small_file_brings_in_the_readahead_it_starts() -> None:
    """tar reads 600 files of 40 KiB in 8 KiB reads: each first read starts the kernel's
    initial readahead (8 pages for a 2-page read on a device reading 2,560 KiB ahead), so the
    device moves 32 KiB while the read waits: a random cold 32 KiB read.  A table that does
    not record the device's readahead prices the request alone, as before."""
    from fsbm.predictor.pricing import initial_readahead_bytes

    assert initial_readahead_bytes(10 * 1024, 2560) == 64 * 1024  # 3 pages, rounded to 4, times 4
    assert initial_readahead_bytes(4096, 2560) == 16 * 1024
    assert initial_readahead_bytes(16 * 1024, 128) == 32 * 1024  # at most a quarter of 32 pages: twice
    assert initial_readahead_bytes(128 * 1024, 128) == 128 * 1024  # the whole readahead
    files = profile(reads=0)
    files["classes"]["data"] = {"read": {"sequential": {"8192": {"count": 3000, "bytes": 3000 * 8192}}}}
    files["runs"] = {"read_only": 600, "read_write": 0}
    recorded = table()
    recorded.environment["read_ahead_kb"] = 2560

    def first_line(t: CostTable) -> Line:
        [line] = [line for line in price_workload(files, Pricer(t), cache_bytes=0).lines
                  if line.detail.startswith("first read")]
        return line

    ahead = first_line(recorded)
    assert "a random 32 KiB read (8 KiB asked, the rest read ahead)" in ahead.detail and ahead.count == 600
    assert ahead.price.ns == pytest.approx(Pricer(recorded).data("read", "random", "cold", 32768).ns
                                           - Pricer(recorded).data("read", "sequential", "cold", 8192).ns)
    assert "a random 8 KiB read" in first_line(table()).detail
    assert Pricer(recorded).first_read_bytes(2048, 2048) == 2048  # a 2 KiB file: nothing beyond it is read


def forward_table() -> CostTable:
    """table() with cold reads that cost 1x the curve sequentially, 2x and 6x forward at 4
    and 64 KiB gaps, and 8x at random."""
    with_forward = table()
    for e in with_forward.entries:
        if e.bench == "read" and e.order == "sequential" and e.cache == "cold":
            e.latency_ns = scaled(e.latency_ns, 1 / 8)
    with_forward.entries += [entry("read", "forward", "cold", s, factor * curve(s), gap=gap)
                             for gap, factor in ((4096, 2), (65536, 6)) for s in (512, 4096, 65536, 1048576)]
    return with_forward


def test_forward_reads_are_priced_at_their_mean_gap_between_the_measured_gaps() -> None:
    pricer = Pricer(forward_table())
    at = pricer.forward_read(4096, 65536)
    assert at.ns == pytest.approx(6 * curve(4096)) and "forward+65536 cold 4096 B" in at.source
    between = pricer.forward_read(4096, 16384)  # halfway from 4 to 64 KiB in log(gap)
    assert between.ns == pytest.approx(4 * curve(4096)) and "between gaps 4096 and 65536 B" in between.source
    below = pricer.forward_read(4096, 1024)  # a quarter of the way from sequential (gap 0) to 4 KiB
    assert below.ns == pytest.approx((0.75 * 1 + 0.25 * 2) * curve(4096))
    beyond = pricer.forward_read(4096, 1 << 20)
    assert beyond.ns == pytest.approx(6 * curve(4096)) and "the largest measured" in beyond.source
    older = Pricer(table()).forward_read(4096, 16384)
    assert older.ns == pytest.approx(8 * curve(4096)) and "no forward-order reads" in older.source


def forward_table_by_gap(follows: float = 3.0) -> CostTable:
    """forward_table() whose 4 KiB streams kept their reads by gap (fsbench's gap_costs), with
    a stream 16 KiB apart at `follows` x the curve: by default 5/7 of the way from the random
    read (8x) to the sequential one (1x), where readahead follows gapped streams."""
    gapped = forward_table()
    costs = {4096: [{"gap": 0, "count": 500, "mean_ns": 1_000}, {"gap": 8192, "count": 100, "mean_ns": 10_000},
                    {"gap": 16384, "count": 10, "mean_ns": 999_000}],
             65536: [{"gap": 8192, "count": 300, "mean_ns": 40_000}, {"gap": 32768, "count": 400, "mean_ns": 80_000}]}
    for e in gapped.entries:
        if e.order == "forward" and e.size == 4096:
            e.gap_costs = [GapCost.model_validate(c) for c in costs[e.gap]]
    gapped.entries += [entry("read", "forward", "cold", s, follows * curve(s), gap=16384)
                       for s in (512, 4096, 65536, 1048576)]
    return gapped


def test_forward_reads_are_priced_by_their_mix_of_gaps_from_the_streams_pooled_by_gap() -> None:
    """Two measured streams at 4 KiB: the dense one's reads after an 8 KiB gap cost 10 us
    (100 reads), the sparse one's 40 us (300 reads): pooled, 32.5 us.  A bucket of fewer
    than MIN_GAP_READS reads is left out; between two buckets the price follows log(gap);
    beyond the largest it is the largest's.  Another size scales as its mean-gap price does."""
    pricer = Pricer(forward_table_by_gap())
    at_8k = 32_500.0
    mixed = pricer.forward_read(4096, 20000, {"8192": 3, "16384": 1, "1048576": 2})
    halfway = (at_8k + 80_000) / 2  # 16 KiB: halfway from 8 to 32 KiB in log(gap); the 10-read bucket is left out
    assert mixed.ns == pytest.approx((3 * at_8k + halfway + 2 * 80_000) / 6)
    assert "pooled cost of reads after a like gap" in mixed.source
    by_mean = pricer.forward_read(4096, 20000)
    assert mixed.low_ns / mixed.ns == pytest.approx(by_mean.low_ns / by_mean.ns)
    small = pricer.forward_read(512, 20000, {"8192": 1})
    assert small.ns == pytest.approx(at_8k * pricer.forward_read(512, 20000).ns / by_mean.ns)
    assert "scaled to 512 B" in small.source
    # A cost table from before fsbench kept its reads by gap: the mean gap's price, said so.
    older = Pricer(forward_table())
    by_gap = older.forward_read(4096, 20000, {"8192": 1})
    assert by_gap.ns == pytest.approx(older.forward_read(4096, 20000).ns) and "no forward reads by gap" in by_gap.source


def test_where_readahead_does_not_follow_gapped_streams_a_forward_read_is_priced_by_its_mean_gap() -> None:
    """btrfs's stream 16 KiB apart costs about its random read (28% of the way to a
    sequential one, 2026-11-24), and its sparse streams never ride: pooling their reads by
    gap would price the small gaps at the dense streams' cost."""
    mix = {"8192": 3, "16384": 1, "1048576": 2}
    following = Pricer(forward_table_by_gap(follows=3.0))
    assert following.follows_gapped_streams(4096) == (16384, pytest.approx(5 / 7))
    assert "pooled cost" in following.forward_read(4096, 20000, mix).source
    not_following = Pricer(forward_table_by_gap(follows=7.0))
    assert not_following.follows_gapped_streams(4096) == (16384, pytest.approx(1 / 7))
    priced = not_following.forward_read(4096, 20000, mix)
    assert priced.ns == pytest.approx(not_following.forward_read(4096, 20000).ns)  # the mean gap's price
    assert "does not follow streams 16384 B apart: 14%" in priced.source
    # Its reads in a stream (the read before them skipped little) each as a stream of their own
    # gap by the mean-gap curve; the rest at the mean gap's price, as before.
    streamed = {"8192": 2}
    in_stream = not_following.forward_read(4096, 20000, mix, streamed)
    alone = not_following.forward_read(4096, 8192).ns
    assert in_stream.ns == pytest.approx((2 * alone + 4 * priced.ns) / 6)
    assert in_stream.ns < priced.ns and "in a stream each as fsbench's stream of its own gap" in in_stream.source
    assert following.forward_read(4096, 20000, mix, streamed).ns == pytest.approx(following.forward_read(4096, 20000,
                                                                                                         mix).ns)
    assert Pricer(table()).follows_gapped_streams(4096) is None  # no forward streams measured


def test_forward_reads_in_a_profile_miss_at_the_forward_price_and_hit_at_the_random_warm_one() -> None:
    lookups = profile(reads=0)
    lookups["classes"]["data"] = {"read": {"forward": {"4096": {"count": 1000, "bytes": 1000 * 4096,
                                                                "gap_bytes": 1000 * 65536}}}}
    fs = price_workload(lookups, Pricer(forward_table()), cache_bytes=1 << 30)
    assert fs.by_op()["read"] == pytest.approx(1000 * (0.5 * 6 * curve(4096) + 0.5 * curve(4096)))
    assert any("64 KiB apart" in line.detail for line in fs.lines)
    lookups["classes"]["data"]["read"]["forward"]["4096"]["gap_log2"] = {"8192": 600, "32768": 400}
    by_gap = price_workload(lookups, Pricer(forward_table_by_gap()), cache_bytes=1 << 30)
    assert by_gap.by_op()["read"] == pytest.approx(1000 * 0.5 * (0.6 * 32_500 + 0.4 * 80_000) + 1000 * 0.5 * curve(4096))


def test_a_read_class_that_counted_its_re_reads_hits_in_its_own_share() -> None:
    """The workload's reads hit half the time (its reuse curve), but its random reads were
    never read before and its sequential ones always were (ClassCount.reread_fraction): each
    class hits in its own share of re-reads, scaled by how much of them the cache holds (all
    at 2 MiB, a fifth at one page); a warm start, or a profile that does not say, takes the
    workload's share for every class."""
    mixed = profile()
    mixed["classes"]["data"]["read"]["random"]["4096"]["reread_fraction"] = 0.0
    mixed["classes"]["data"]["read"]["sequential"] = {"4096": {"count": 1000, "bytes": 1000 * 4096,
                                                               "reread_fraction": 1.0}}
    pricer = Pricer(table())

    def misses(workload: dict, cache_bytes: int, start: str = "cold") -> dict[str, float]:
        fs = price_workload(workload, pricer, cache_bytes=cache_bytes, start=start)
        return {line.detail: line.count for line in fs.lines if line.detail.endswith("cache miss")}

    assert misses(mixed, 1 << 30)["4 KiB random, cache miss"] == pytest.approx(1000)
    assert "4 KiB sequential, cache miss" not in misses(mixed, 1 << 30)
    assert misses(mixed, 4096)["4 KiB sequential, cache miss"] == pytest.approx(1000 * (1 - 0.1 / 0.5))
    assert misses(profile(), 1 << 30)["4 KiB random, cache miss"] == pytest.approx(500)  # not said: the workload's
    assert misses(mixed, 1 << 30, "warm") == {}  # all of it fits and was cached


def test_a_read_that_resumes_a_stream_costs_a_read_of_it_where_readahead_does_not_follow_gapped_streams() -> None:
    """SQLite reads the page after a lookup's leaf: at the previous read's end, right after a
    gap (characterizer.classes: resumes).  Where readahead follows gapped streams, it finds
    the window the read before began and costs a sequential read; where it does not (btrfs),
    it is a read of the stream it resumes, at the stream's mean gap's price, or with no
    forward stream of its size a random cold read.  A hit costs what any hit does."""
    lookups = profile(reads=0)
    sequential = {"count": 100, "bytes": 100 * 4096, "interleaved": 0, "resumes": 80}
    lookups["classes"]["data"] = {"read": {"forward": {"4096": {"count": 1000, "bytes": 1000 * 4096,
                                                                "gap_bytes": 1000 * 65536}},
                                           "sequential": {"4096": sequential}}}

    def lines(follows: float, workload: dict) -> dict[str, object]:
        fs = price_workload(workload, Pricer(forward_table_by_gap(follows)), cache_bytes=1 << 30)
        return {line.detail: line for line in fs.lines if line.detail.startswith("4 KiB sequential")}

    following = lines(3.0, lookups)
    assert set(following) == {"4 KiB sequential, cache miss", "4 KiB sequential, cache hit"}
    assert following["4 KiB sequential, cache miss"].count == pytest.approx(50)  # half the reads miss here
    not_following = Pricer(forward_table_by_gap(7.0))
    priced = lines(7.0, lookups)
    resumed = priced["4 KiB sequential resuming a stream after a gap, cache miss"]
    assert resumed.count == pytest.approx(40) and priced["4 KiB sequential, cache miss"].count == pytest.approx(10)
    assert priced["4 KiB sequential, cache hit"].count == pytest.approx(50)
    assert resumed.price.ns == pytest.approx(not_following.forward_read(4096, 65536).ns)
    assert "resumes a stream after a gap" in resumed.price.source
    assert priced["4 KiB sequential, cache miss"].price.ns == pytest.approx(
        not_following.data("read", "sequential", "cold", 4096).ns)
    alone = {**lookups, "classes": {**lookups["classes"], "data": {"read": {"sequential": {"4096": sequential}}}}}
    random_read = lines(7.0, alone)["4 KiB sequential resuming a stream after a gap, cache miss"]
    assert random_read.price.ns == pytest.approx(not_following.data("read", "random", "cold", 4096).ns)


def table_with_cpu(fs_type: str = "ext4", scale: float = 1.0) -> CostTable:
    """table(), with the CPU time fsbench keeps: a quarter of a cold call's latency, all of a
    warm one's."""
    with_cpu = table(fs_type, scale)
    with_cpu.entries = [entry(e.bench, e.order, e.cache, e.size, e.latency_ns.mean, 0.25 if e.cache == "cold" else 1.0)
                        for e in with_cpu.entries]
    return with_cpu


def test_the_cpu_in_the_calls_is_fsbenchs_carried_through_every_price_and_bounded_by_latency_without_it() -> None:
    """A cold call's CPU time is a share of its latency (the rest is a wait for the device),
    a warm one's all of it; prices between sizes and derived prices keep the share, and the
    time outside takes the modelled CPU, not the time, from the system time."""
    pricer = Pricer(table_with_cpu())
    cold = pricer.data("read", "random", "cold", 4096)
    assert cold.cpu_ns == pytest.approx(0.25 * cold.ns)
    between = pricer.data("read", "random", "cold", 10240)
    assert "Park-Lipton" in between.source and between.cpu_ns == pytest.approx(0.25 * between.ns)
    assert pricer.metadata("readdir", "warm").cpu_ns == pytest.approx(pricer.metadata("readdir", "warm").ns)
    workload = profile(reads=1000)
    fs = price_workload(workload, pricer, cache_bytes=1 << 30)
    assert fs.cpu_ns == pytest.approx(sum(line.count * line.price.cpu_ns for line in fs.lines))
    assert fs.by_group()["read"] * 0.25 < fs.cpu_ns < fs.total_ns
    bound = price_workload(workload, Pricer(table()), cache_bytes=1 << 30)
    assert bound.cpu_ns == pytest.approx(bound.total_ns)  # no cpu_ns in the table: the latency bounds it
    workload["recording"] = {"user_cpu_ns": 1, "untraced_user_cpu_ns": 10**8, "untraced_system_cpu_ns": 5 * 10**7}
    workload["trace_time"] = {"known": True}
    spent = calls_cpu_seconds(workload, pricer, cache_bytes=1 << 30)
    assert spent == pytest.approx(fs.cpu_ns / 1e9)
    assert outside_features(workload, spent)["system_cpu_s"] == pytest.approx(max(0.05 - spent, 0.0))
    # Where the recording also has runs with every file read in first, a cold prediction
    # still takes the cold runs' CPU time; a warm one takes theirs, the calls' CPU priced as
    # they ran there (warm), and adds no wait for the files outside the workload.
    workload["recording"].update(untraced_warm_user_cpu_ns=7 * 10**7, untraced_warm_system_cpu_ns=4 * 10**7,
                                 untraced_outside_wait_ns=3 * 10**6)
    assert calls_cpu_seconds(workload, pricer, cache_bytes=1 << 30) == pytest.approx(spent)
    cold = outside_features(workload, spent)
    assert (cold["user_cpu_s"], cold["outside_wait_s"]) == (pytest.approx(0.1), pytest.approx(0.003))
    warm_spent = calls_cpu_seconds(workload, pricer, cache_bytes=1 << 30, start="warm")
    assert warm_spent == pytest.approx(price_workload(workload, pricer, cache_bytes=1 << 62, start="warm").cpu_ns / 1e9)
    assert warm_spent < spent
    features = outside_features(workload, warm_spent, start="warm")
    assert features["user_cpu_s"] == pytest.approx(0.07)
    assert features["system_cpu_s"] == pytest.approx(max(0.04 - warm_spent, 0.0))
    assert features["outside_wait_s"] == 0.0


def test_calls_cpu_measured_where_traced_moves_cpu_from_outside_into_each_groups_calls() -> None:
    """outside.cpu_scales: a cold replay on the traced filesystem measured the syncs' CPU at
    1.6 times fsbench's CPU prices and every other group's as priced.  There, the prediction
    is what it was (the excess moves from outside into the syncs); on a candidate whose CPU
    prices are lower each sync's CPU part is taken 1.6 times, its wait for the device as it
    was, and no other price moves; on one whose prices are three times the traced one's the
    syncs gain the excess they had where traced, not 0.6 times their own CPU
    (model.CpuScales).  Bounded; a warm prediction, and a recording without the replay,
    keep fsbench's prices."""
    traced, other = Pricer(table_with_cpu("ext4")), Pricer(table_with_cpu("xfs", scale=0.5))
    dearer = Pricer(table_with_cpu("btrfs", scale=3.0))
    workload = profile(reads=1000, fsyncs=20)
    workload["trace_time"] = {"known": True}
    workload["recording"] = {"user_cpu_ns": 1, "untraced_user_cpu_ns": 10**8, "untraced_system_cpu_ns": 10**9}
    cache = 1 << 30
    priced = price_workload(workload, traced, cache_bytes=cache)
    priced_by_group = {g: sum(line.cpu_ns for line in priced.lines if line.group == g) for g in GROUPS}
    priced_outside = outside_seconds(outside_features(workload, calls_cpu_seconds(workload, traced, cache_bytes=cache)))
    assert set(cpu_scales(workload, traced, cache_bytes=cache).factors.values()) == {1.0}

    measured = {**priced_by_group, "sync": 1.6 * priced_by_group["sync"]}
    workload["recording"].update({CALLS_CPU_FIELDS[g]: round(ns) for g, ns in measured.items()})
    scales = cpu_scales(workload, traced, cache_bytes=cache)
    assert scales.factors["sync"] == pytest.approx(1.6, rel=1e-6)
    assert all(scales.factors[g] == pytest.approx(1.0, rel=1e-6) for g in ("metadata", "read", "write"))
    spent = calls_cpu_seconds(workload, traced, cache_bytes=cache)
    assert spent == pytest.approx(sum(measured.values()) / 1e9)
    outside = outside_seconds(outside_features(workload, spent))
    assert outside == pytest.approx(priced_outside - 0.6 * priced_by_group["sync"] / 1e9)
    for pricer in (traced, other):
        plain = price_workload(workload, pricer, cache_bytes=cache)
        scaled = price_workload(workload, pricer, cache_bytes=cache, cpu_scales=scales)
        for s_line, p_line in zip(scaled.lines, plain.lines):
            factor = 1.6 if p_line.group == "sync" else 1.0
            assert s_line.price.cpu_ns == pytest.approx(factor * p_line.price.cpu_ns, rel=1e-6)
            wait = p_line.price.ns - p_line.price.cpu_ns
            assert s_line.price.ns - s_line.price.cpu_ns == pytest.approx(wait, abs=1e-3)
    assert outside + price_workload(workload, traced, cache_bytes=cache, cpu_scales=scales).total_ns / 1e9 == \
        pytest.approx(priced_outside + priced.total_ns / 1e9)
    plain = price_workload(workload, dearer, cache_bytes=cache).by_group(cpu=True)
    scaled = price_workload(workload, dearer, cache_bytes=cache, cpu_scales=scales).by_group(cpu=True)
    assert plain["sync"] == pytest.approx(3 * priced_by_group["sync"], rel=1e-6)
    assert scaled["sync"] - plain["sync"] == pytest.approx(0.6 * priced_by_group["sync"], rel=1e-6)
    assert all(scaled[g] == pytest.approx(plain[g], rel=1e-6) for g in ("metadata", "read", "write"))
    assert scales.traced_ns == pytest.approx(priced_by_group)

    workload["recording"][CALLS_CPU_FIELDS["sync"]] = int(10 * priced_by_group["sync"])
    assert cpu_scales(workload, traced, cache_bytes=cache).factors["sync"] == CPU_SCALE_BOUNDS[1]
    workload["recording"][CALLS_CPU_FIELDS["sync"]] = 0
    assert cpu_scales(workload, traced, cache_bytes=cache).factors["sync"] == CPU_SCALE_BOUNDS[0]
    assert set(cpu_scales(workload, traced, cache_bytes=cache, start="warm").factors.values()) == {1.0}


def test_hit_fraction_reads_the_reuse_curve_at_the_cache_size() -> None:
    reuse = profile()["reuse"]
    reuse = Reuse.model_validate(reuse)
    assert hit_fraction(reuse, 1024) == 0.0
    assert hit_fraction(reuse, 100 * 4096) == 0.1
    assert hit_fraction(reuse, 1 << 30) == 0.5
    assert hit_fraction(reuse, 1 << 30, start="warm") == 1.0


def test_median_of_tables_takes_each_case_from_the_middle_measurement_and_spans_all_of_them() -> None:
    slow, fast, middle = table(scale=2.0), table(scale=0.5), table(scale=1.0)
    slow.measured_at, fast.measured_at, middle.measured_at = "t3", "t1", "t2"
    slow.seed, fast.seed, middle.seed = 3, 1, 2  # validation measures the k-th with fsbench seed k
    merged = CostTable.median_of([slow, fast, middle])
    assert merged.parameters["median_of_seeds"] == [3, 1, 2] and merged.seed is None
    assert CostTable.from_json(slow.to_json()).seed == 3 and "seed" not in merged.to_json()
    assert CostTable.from_fsbench({"config": {"seed": 7}, "results": []}).seed == 7
    price = Pricer(merged).data("read", "random", "cold", 4096)
    assert price.ns == pytest.approx(8 * curve(4096))
    assert price.low_ns == pytest.approx(0.5 * 8 * curve(4096)) and price.high_ns == pytest.approx(2 * 8 * curve(4096))
    case = merged.entry("read", "random", "cold", 4096)
    assert case.repeats.count == 3 and sorted(case.repeats.means_ns) == pytest.approx(
        [s * 8 * curve(4096) for s in (0.5, 1.0, 2.0)])
    assert merged.measured_at == "t1 .. t3 (median of 3)"
    assert {f.bench for f in merged.fits} >= {"read", "write"}  # refitted through the repeats' means
    # A case measured in only some of the tables is the median of those.
    fast.entries = [e for e in fast.entries if e.bench != "fsync"]
    assert CostTable.median_of([slow, fast]).entry("fsync", "sequential", "warm", 4096).repeats.count == 1
    with pytest.raises(UsageError, match="different candidates"):
        CostTable.median_of([table("ext4"), table("xfs")])


def test_where_fsbench_ran_is_part_of_a_case_and_a_table_measured_unpinned_still_prices() -> None:
    """A run's placement (pinned to a CPU or not) comes from its environment and reaches every
    case, old documents without the field included; the same case measured both ways is two
    cases, which the median keeps apart; plain lookups take the pinned one where both exist,
    and a table measured unpinned throughout prices from its own."""
    from fsbm.predictor.cost_table import PINNED, UNPINNED, placement_of
    assert placement_of({"pinned_cpu": 1}) == PINNED and placement_of({}) == PINNED
    assert placement_of({"pinned_cpu": None}) == UNPINNED
    base = table()
    free = CostTable.from_json({**base.to_json(), "environment": {"pinned_cpu": None},
                                "entries": [{k: v for k, v in e.as_result().items() if k != "placement"}
                                            for e in base.entries]})
    assert {e.placement for e in free.entries} == {UNPINNED}
    assert Pricer(free).data("read", "random", "cold", 4096).ns == pytest.approx(8 * curve(4096))
    doubled = [e.model_copy(update={"placement": UNPINNED, "latency_ns": scaled(e.latency_ns, 3.0)})
               for e in base.entries]
    both = CostTable(base.candidate, base.environment, base.measured_at, doubled + base.entries)
    assert both.entry("read", "random", "cold", 4096).placement == PINNED
    merged = CostTable.median_of([both, both])
    assert len(merged.entries) == 2 * len(base.entries)
    assert merged.entry("read", "random", "cold", 4096).latency_ns.mean == pytest.approx(8 * curve(4096))


def test_the_median_of_two_tables_pools_both_rather_than_taking_the_cheaper() -> None:
    from fsbm.predictor.cost_table import GapCost, LatencyBucket, pooled_case
    slow, fast = table(scale=1.2), table(scale=0.8)
    merged = CostTable.median_of([slow, fast])
    # Every case weighed by its calls (1000 each here): the two's mean, not the cheaper draw.
    case = merged.entry("read", "random", "cold", 4096)
    assert case.latency_ns.mean == pytest.approx(8 * curve(4096)) and case.ops == 2000
    assert case.latency_ns.low == pytest.approx(0.8 * 0.9 * 8 * curve(4096))
    assert case.repeats.count == 2
    # Histograms add bucket by bucket, percentiles and a stream's costs by gap weigh by calls.
    def one(mean: float, p50: float, ops: int, buckets: list[tuple[int, int, int]], gaps: list[tuple[int, int, float]]) -> Case:
        return entry("read", "forward", "cold", 4096, mean, cpu_share=0.5, ops=ops,
                     latency_ns={"mean": mean, "p50": p50},
                     histogram=[{"lo_ns": lo, "hi_ns": hi, "count": n} for lo, hi, n in buckets],
                     gap_costs=[{"gap": g, "count": n, "mean_ns": m} for g, n, m in gaps])
    a = one(1_000, 900, 100, [(800, 1024, 100)], [(1, 90, 1_000.0), (12, 10, 2_000.0)])
    b = one(4_000, 1_100, 300, [(1024, 2048, 200), (800, 1024, 100)], [(12, 30, 6_000.0)])
    pooled = pooled_case(a, b)
    assert pooled.ops == 400 and pooled.latency_ns.mean == pytest.approx(3_250)
    assert pooled.latency_ns.p50 == pytest.approx(1_050) and pooled.cpu_ns.mean == pytest.approx(1_625)
    assert pooled.histogram == [LatencyBucket(lo_ns=800, hi_ns=1024, count=200),
                                LatencyBucket(lo_ns=1024, hi_ns=2048, count=200)]
    assert pooled.gap_costs == [GapCost(gap=1, count=90, mean_ns=1_000.0), GapCost(gap=12, count=40, mean_ns=5_000.0)]


def test_a_warm_straddle_is_priced_by_its_median_calls_and_a_cold_one_by_its_means() -> None:
    def case(size: int, cache: str, mean: float, p50: float) -> Case:
        return Case.model_validate({"bench": "overwrite", "op": "write", "size": size, "order": "sequential",
                                    "cache": cache, "latency_ns": {"mean": mean, "ci95_low": 0.9 * mean,
                                                                   "ci95_high": 1.1 * mean, "p50": p50}})
    # The one more page's own cost is 1 us a call; one stall among the d+1 calls put its mean 5 us up.
    entries = [case(4096, "warm", 3_000, 2_500), case(4097, "warm", 9_000, 3_500),
               case(4096, "cold", 30_000, 2_500), case(4097, "cold", 45_000, 3_500)]
    pricer = Pricer(CostTable("btrfs", {"fs_type": "btrfs", "fs_block_size": 4096}, "now", entries))
    warm = pricer.straddle("overwrite", "sequential", "warm")
    assert warm.ns == pytest.approx(1_000) and "their median calls" in warm.source
    assert warm.low_ns <= warm.ns <= warm.high_ns
    # A cold call's extra page may wait for the device in only some calls, which a median misses.
    assert pricer.straddle("overwrite", "sequential", "cold").ns == pytest.approx(15_000)
    # Where a median is not known (tables measured before fsbench kept them), the means.
    bare = [e.model_copy(update={"latency_ns": Latency(mean=e.latency_ns.mean)}) for e in entries]
    pricer = Pricer(CostTable("btrfs", {"fs_type": "btrfs", "fs_block_size": 4096}, "now", bare))
    assert pricer.straddle("overwrite", "sequential", "warm").ns == pytest.approx(6_000)


def test_warm_shift_measures_the_cases_served_from_memory_alone() -> None:
    from fsbm.predictor.cost_table import warm_shift
    first, second = table(), table(scale=1.2)
    # The device's cases moved far more than the warm ones: only the warm ones are read.
    for e in second.entries:
        if e.cache != "warm":
            e.latency_ns.mean *= 3
    e = next(e for e in second.entries if e.cache == "warm")
    e.latency_ns.mean /= 1.2 * 1.2  # one warm case moved the other way
    shift = warm_shift(first, second)
    warm = sum(e.cache == "warm" for e in first.entries)
    assert shift.cases == warm and shift.ratio == pytest.approx(1.2) and shift.spread == pytest.approx(0.2)
    assert warm_shift(second, first).ratio == pytest.approx(1 / 1.2)
    second.entries = [e for e in second.entries if e.cache != "warm"]
    assert warm_shift(first, second) is None
    # On a memory-only filesystem every case is warm.
    tmpfs = table("tmpfs")
    tmpfs.environment["fs_type"] = "tmpfs"
    assert warm_shift(tmpfs, tmpfs).cases == len(tmpfs.entries) and warm_shift(tmpfs, tmpfs).ratio == 1.0


def _real(program: str, target: str, seconds: list[float]) -> list[dict]:
    return [{"kind": "real", "program": program, "target": target, "round": r, "seconds": s}
            for r, s in enumerate(seconds)]


def test_the_noise_floor_is_how_far_the_judged_medians_move_when_their_runs_are_drawn_again() -> None:
    from fsbm.predictor.judge import noise_floor

    steady = _real("grep", "ext4", [1.0] * 5) + _real("grep", "xfs", [2.0] * 5)
    floor = noise_floor(steady, "ext4")
    assert floor["runtimes"]["medians"] == 2 and floor["runtimes"]["p90"] == 0.0
    assert floor["ratios"]["medians"] == 1 and floor["ratios"]["worst_p90"] == 0.0  # the traced one has no ratio
    # One target's runs scatter by 2x: its median moves, the other's does not; two rounds
    # are too few to resample.
    scattered = _real("grep", "ext4", [1.0] * 5) + _real("grep", "xfs", [1.0, 2.0, 1.2, 1.9, 1.5])
    floor = noise_floor(scattered + _real("tar", "ext4", [1.0, 9.0]), "ext4")
    assert floor["runtimes"]["medians"] == 2 and floor["runtimes"]["worst_p90"] >= 0.2
    assert floor["ratios"]["worst_p90"] >= 0.2
    wider = _real("grep", "ext4", [1.0] * 5) + _real("grep", "xfs", [1.0, 4.0, 1.2, 3.8, 1.5])
    assert noise_floor(wider, "ext4")["runtimes"]["worst_p90"] > floor["runtimes"]["worst_p90"]


def test_a_ranked_pair_counts_the_rounds_in_which_the_faster_was_faster() -> None:
    from fsbm.predictor.judge import _pairs, real_by_round

    records = _real("grep", "ext4", [1.0, 1.0, 1.0, 1.0, 1.0]) + _real("grep", "xfs", [0.5, 2.0, 3.0, 0.9, 2.5])
    rows = pd.DataFrame([{"program": "grep", "candidate": "ext4", "real_s": 1.0, "predicted_s": 1.1},
                         {"program": "grep", "candidate": "xfs", "real_s": 2.0, "predicted_s": 1.0}])
    (pair,) = _pairs(rows, real_by_round(records)).itertuples()
    assert (pair.faster, pair.slower, pair.right) == ("ext4", "xfs", False)
    assert (pair.rounds_faster, pair.rounds) == (3, 5)


def test_a_pair_is_as_far_apart_whichever_target_is_named_first() -> None:
    """xfs ran 0.86 times ext4's time in every round: ext4 is 16% slower, a pair to rank,
    whether ext4 or xfs comes first (the plain judge once measured it as 1 - 0.86 = 14% when
    the faster came second, and left it out)."""
    from fsbm.predictor.judge import measured_pairs, real_by_round

    by_round = real_by_round(_real("grep", "ext4", [1.0] * 5) + _real("grep", "xfs", [0.86] * 5))
    for medians in ({"ext4": 1.0, "xfs": 0.86}, {"xfs": 0.86, "ext4": 1.0}):
        (pair,) = measured_pairs(by_round, "grep", medians)
        assert (pair.faster, pair.slower, pair.rounds_faster) == ("xfs", "ext4", 5)
        assert pair.gap == pytest.approx(1 / 0.86 - 1)


def test_a_pair_is_as_far_apart_as_its_rounds_ratios_say_not_its_medians() -> None:
    """The disk slows after the first round: each target's median comes from a different
    speed, but in three rounds of five the two ran alike, so they are no pair to rank.  And
    a target 20% slower in four rounds of five is one, although its median is the lower."""
    from fsbm.predictor.judge import _pairs, real_by_round

    def rows(real: dict[str, float], predicted: dict[str, float]) -> pd.DataFrame:
        return pd.DataFrame([{"program": "grep", "candidate": c, "real_s": real[c], "predicted_s": predicted[c]}
                             for c in real])

    alike = real_by_round(_real("grep", "ext4", [1.0, 2.0, 2.0, 2.0, 2.0]) + _real("grep", "xfs", [1.0, 1.0, 1.0, 2.0, 2.0]))
    tie = rows({"ext4": 2.0, "xfs": 1.0}, {"ext4": 1.0, "xfs": 1.1})
    assert _pairs(tie, alike).empty
    (by_medians,) = _pairs(tie, alike, same_round=False).itertuples()
    assert (by_medians.faster, by_medians.right) == ("xfs", False)

    slower = real_by_round(_real("grep", "ext4", [1.0, 1.0, 2.0, 2.0, 2.0]) + _real("grep", "xfs", [1.2, 1.2, 2.4, 2.4, 1.2]))
    apart = rows({"ext4": 2.0, "xfs": 1.2}, {"ext4": 1.0, "xfs": 1.2})
    (pair,) = _pairs(apart, slower).itertuples()
    assert (pair.faster, pair.slower, pair.right, pair.rounds_faster) == ("ext4", "xfs", True, 4)
    assert pair.measured_gap == pytest.approx(0.2) and pair.gap_of_medians < 0


def test_runs_that_skipped_their_syncs_leave_the_syncs_cpu_out_of_the_subtraction() -> None:
    """traces/nosync.py: the all-warm runs skip their syncs where libeatmydata is installed;
    then the CPU time a warm prediction subtracts from theirs is the other calls', and
    without the flag (or for a cold prediction, from the cold runs) the syncs' is subtracted
    as before."""
    pricer = Pricer(table())
    workload = profile(fsyncs=40)
    workload["trace_time"] = {"known": True}
    workload["recording"] = {"user_cpu_ns": 1, "untraced_user_cpu_ns": 10**8, "untraced_system_cpu_ns": 5 * 10**7,
                             "untraced_warm_user_cpu_ns": 7 * 10**7, "untraced_warm_system_cpu_ns": 4 * 10**7}
    warm = price_workload(workload, pricer, cache_bytes=1 << 62, start="warm")
    syncs = sum(line.cpu_ns for line in warm.lines if line.group == "sync")
    assert syncs == pytest.approx(40 * 500_000)
    with_syncs = calls_cpu_seconds(workload, pricer, cache_bytes=1 << 30, start="warm")
    assert with_syncs == pytest.approx(warm.cpu_ns / 1e9)
    workload["recording"]["untraced_warm_syncs_skipped"] = True
    without = calls_cpu_seconds(workload, pricer, cache_bytes=1 << 30, start="warm")
    assert without == pytest.approx((warm.cpu_ns - syncs) / 1e9)
    assert outside_features(workload, without, start="warm")["system_cpu_s"] == pytest.approx(max(0.04 - without, 0.0))
    assert calls_cpu_seconds(workload, pricer, cache_bytes=1 << 30) == pytest.approx(
        price_workload(workload, pricer, cache_bytes=1 << 30).cpu_ns / 1e9)


def test_a_workload_that_flushes_nothing_takes_its_time_outside_from_both_kinds_of_cold_run() -> None:
    """outside.py: skipping the syncs of a workload that makes none changes nothing, so its
    runs with syncs skipped are two more cold runs: the time outside starts from the mean of
    both kinds (one recording's runs once differed by a quarter, and taking the one kind left
    2 ms of a 50 ms time outside), and their difference is no sync's CPU."""
    traced = Pricer(table_with_cpu("ext4"))
    workload = profile(reads=1000)
    workload["trace_time"] = {"known": True}
    cache = 1 << 30
    priced = price_workload(workload, traced, cache_bytes=cache).by_group(cpu=True)
    cold_cpu, nosync_cpu = 9 * 10**8, 6 * 10**8
    workload["recording"] = {"user_cpu_ns": 1, "untraced_user_cpu_ns": 10**8, "untraced_system_cpu_ns": cold_cpu - 10**8,
                             "untraced_nosync_user_cpu_ns": 10**8, "untraced_nosync_system_cpu_ns": nosync_cpu - 10**8,
                             "untraced_calls_cpu_syncs_skipped": True,
                             **{CALLS_CPU_FIELDS[g]: round(ns) for g, ns in priced.items()}}
    spent = calls_cpu_seconds(workload, traced, cache_bytes=cache)
    features = outside_features(workload, spent)
    assert features["user_cpu_s"] + features["system_cpu_s"] == pytest.approx((cold_cpu + nosync_cpu) / 2e9 - spent)


def test_cold_runs_without_their_syncs_give_the_time_outside_and_what_they_saved_is_the_syncs_cpu() -> None:
    """outside.py: where the recording has cold runs made with their syncs skipped and the
    measuring replays skipped them too, the time outside is those runs' CPU time less the
    replays' calls' (no sync in either), and the syncs' CPU is what skipping them saved the
    cold runs: on the traced filesystem the calls' and the outside CPU add up to the cold
    runs' again.  That scale is not bounded; it moves nothing on a candidate whose syncs cost
    no CPU (model.CpuScales), and adds the excess once, or takes off the shortfall once, on one
    whose syncs cost more."""
    traced, memory = Pricer(table_with_cpu("ext4")), Pricer(table_with_cpu("tmpfs", scale=0.01))
    dearer = Pricer(table_with_cpu("btrfs", scale=3.0))
    workload = profile(reads=1000, fsyncs=40)
    workload["trace_time"] = {"known": True}
    cache = 1 << 30
    priced = price_workload(workload, traced, cache_bytes=cache).by_group(cpu=True)
    replayed = {**priced, "write": 1.2 * priced["write"], "sync": 0}  # the replays skipped the syncs
    cold_cpu, nosync_cpu = 9 * 10**8, 9 * 10**8 - int(5 * priced["sync"])  # skipping them saved 5x their price
    workload["recording"] = {"user_cpu_ns": 1, "untraced_user_cpu_ns": 10**8, "untraced_system_cpu_ns": cold_cpu - 10**8,
                             "untraced_nosync_user_cpu_ns": 10**8, "untraced_nosync_system_cpu_ns": nosync_cpu - 10**8,
                             **{CALLS_CPU_FIELDS[g]: round(ns) for g, ns in replayed.items()}}
    kept_syncs = cpu_scales(workload, traced, cache_bytes=cache)  # the flag missing: the replay's syncs, bounded
    assert kept_syncs.factors["sync"] == CPU_SCALE_BOUNDS[0]
    workload["recording"]["untraced_calls_cpu_syncs_skipped"] = True
    scales = cpu_scales(workload, traced, cache_bytes=cache)
    assert scales.factors["sync"] == pytest.approx(5.0, rel=1e-4) and scales.factors["write"] == pytest.approx(1.2, rel=1e-4)
    spent = calls_cpu_seconds(workload, traced, cache_bytes=cache)
    assert spent == pytest.approx((sum(replayed.values())) / 1e9)  # the calls the runs without syncs made
    features = outside_features(workload, spent)
    outside_cpu = features["user_cpu_s"] + features["system_cpu_s"]
    assert outside_cpu == pytest.approx(nosync_cpu / 1e9 - spent)
    modelled = price_workload(workload, traced, cache_bytes=cache, cpu_scales=scales).by_group(cpu=True)
    assert outside_cpu + sum(modelled.values()) / 1e9 == pytest.approx(cold_cpu / 1e9)
    plain = price_workload(workload, memory, cache_bytes=cache).by_group(cpu=True)
    on_memory = price_workload(workload, memory, cache_bytes=cache, cpu_scales=scales).by_group(cpu=True)
    assert on_memory["sync"] == pytest.approx(5 * plain["sync"]) and on_memory["sync"] < 0.05 * priced["sync"] * 5
    plain = price_workload(workload, dearer, cache_bytes=cache).by_group(cpu=True)
    on_dearer = price_workload(workload, dearer, cache_bytes=cache, cpu_scales=scales).by_group(cpu=True)
    assert on_dearer["sync"] - plain["sync"] == pytest.approx(4 * priced["sync"], rel=1e-6)
    # Syncs that saved nothing when skipped (found nothing to write back) cost no CPU where
    # traced, and shrink a dearer candidate's by what they took off there, not in proportion:
    # its own way of syncing (btrfs's log tree) stays.  Writes' factors below 1 go in proportion.
    idle = {**workload, "recording": {**workload["recording"], "untraced_nosync_system_cpu_ns": cold_cpu - 10**8}}
    idle_scales = cpu_scales(idle, traced, cache_bytes=cache)
    assert idle_scales.factors["sync"] == 0.0
    assert price_workload(idle, traced, cache_bytes=cache, cpu_scales=idle_scales).by_group(cpu=True)["sync"] == 0
    on_dearer = price_workload(idle, dearer, cache_bytes=cache, cpu_scales=idle_scales).by_group(cpu=True)
    assert on_dearer["sync"] == pytest.approx(plain["sync"] - priced["sync"], rel=1e-6) and on_dearer["sync"] > 0
    shrunk = CpuScales({"write": 0.5}, {"write": priced["write"]})
    assert shrunk.on({"write": 3 * priced["write"]}) == {"write": 0.5}
    assert set(cpu_scales(workload, traced, cache_bytes=cache, start="warm").factors.values()) == {1.0}
    # Without the replays' measurements (the calls' CPU priced), the cold runs' CPU time and every call's price.
    priced_only = {**workload, "recording": {k: v for k, v in workload["recording"].items()
                                             if k not in CALLS_CPU_FIELDS.values()}}
    assert calls_cpu_seconds(priced_only, traced, cache_bytes=cache) == pytest.approx(sum(priced.values()) / 1e9)
    features = outside_features(priced_only, calls_cpu_seconds(priced_only, traced, cache_bytes=cache))
    assert features["user_cpu_s"] == pytest.approx(0.1)


def test_untraced_runs_keep_the_median_runs_cpu_time_whatever_the_ticks_split() -> None:
    """The kernel splits a run's CPU time into user and system by sampling ticks: a short run's
    parts move against each other from run to run.  The times kept add up to the median
    run's total (the medians of the parts would add up to 33 ms here, no run's time), split
    at the runs' median user share."""
    runs = [{"user_cpu_ns": u * 10**5, "system_cpu_ns": s * 10**5, "wall_ns": w * 10**6}
            for u, s, w in [(82, 287, 170), (206, 206, 163), (81, 243, 146), (83, 249, 171), (39, 354, 187)]]
    kept = untraced_medians(runs)
    assert kept["untraced_user_cpu_ns"] + kept["untraced_system_cpu_ns"] == 369 * 10**5
    assert kept["untraced_user_cpu_ns"] == int(369 * 10**5 * statistics.median(
        r["user_cpu_ns"] / (r["user_cpu_ns"] + r["system_cpu_ns"]) for r in runs))
    assert kept["untraced_wall_ns"] == 170 * 10**6
    assert median_cpu([{"a": 0, "b": 0}, {"a": 0, "b": 0}, {"a": 0, "b": 0}], "a", "b") == (0, 0)


def test_readahead_hides_the_wait_of_interleaved_reads_behind_the_calls_between_them() -> None:
    """A sequential cold read made after other calls since the stream's last read (tar's
    archive) has its wait for the device, never its CPU time, hidden behind those calls, as
    far as the workload's calls outside the reads last; reads back to back pay it all."""
    with_cpu = table()
    for e in with_cpu.entries:
        if e.bench == "read" and e.cache == "cold":
            e.cpu_ns = CpuTime(mean=0.25 * e.latency_ns.mean)
    pricer = Pricer(with_cpu)
    wait_each = 0.75 * 8 * curve(65536)

    def reads(interleaved: int, writes: int) -> tuple[float, float, float]:
        """(read time, read CPU, time outside the reads) of 100 sequential cold 64 KiB reads."""
        workload = profile(reads=0)
        workload["classes"]["data"] = {
            "read": {"sequential": {"65536": {"count": 100, "bytes": 100 * 65536, "interleaved": interleaved}}},
            "write": {"sequential": {"65536": {"count": writes, "bytes": writes * 65536}}}}
        fs = price_workload(workload, pricer, cache_bytes=0)
        groups, cpu = fs.by_group(), fs.by_group(cpu=True)
        return groups["read"], cpu["read"], fs.total_ns - groups["read"]

    back_to_back, cpu, _ = reads(0, 1000)
    assert back_to_back == pytest.approx(100 * 8 * curve(65536))
    plenty, plenty_cpu, _ = reads(60, 1000)  # the writes last longer than every wait
    assert plenty == pytest.approx(back_to_back - 60 * wait_each) and plenty_cpu == pytest.approx(cpu)
    short, _, between = reads(60, 2)  # two writes and the metadata calls: hidden no longer than they last
    assert between < 60 * wait_each and short == pytest.approx(back_to_back - between)


def test_every_run_idles_as_the_run_with_every_file_cached_did_cold_or_warm() -> None:
    """outside.py: a run idles (neither on a processor nor in a call of its workload) while
    its processes start and are reaped; the pairs' all-warm run measures it, and a
    prediction adds it to the time outside, cold or warm; a recording without it adds
    nothing; a negative one (CPU time on two processors at once) adds none, and the CPU time
    counts over the processors it ran on at once: the all-warm run's wall time."""
    workload = profile(reads=100)
    workload["trace_time"] = {"known": True}
    workload["recording"] = {"user_cpu_ns": 1, "untraced_user_cpu_ns": 10**8, "untraced_system_cpu_ns": 10**7,
                             "untraced_warm_user_cpu_ns": 10**8, "untraced_warm_system_cpu_ns": 10**7}
    before = {start: outside_seconds(outside_features(workload, 0.0, start=start)) for start in ("cold", "warm")}
    workload["recording"]["untraced_warm_idle_ns"] = 3 * 10**6
    for start in ("cold", "warm"):
        features = outside_features(workload, 0.0, start=start)
        assert features["outside_idle_s"] == pytest.approx(0.003)
        assert outside_seconds(features) == pytest.approx(before[start] + 0.003)
    workload["recording"]["untraced_warm_idle_ns"] = -10**6
    features = outside_features(workload, 0.0)
    assert features["outside_idle_s"] == 0.0 and features["cpu_parallelism"] == pytest.approx(0.110 / 0.109)
    assert outside_seconds(features) == pytest.approx(0.109)


def test_a_trace_without_call_durations_is_predicted_less_its_file_calls_where_it_was_traced() -> None:
    from fsbm.predictor.predict import Workload

    untimed = {**profile(), "timeline": {"processes": 1, "calls": 2000, "span_ns": 10**9, "lifetimes_ns": 10**9,
                                         "user_ns": 400_000_000}}
    fast, slow = Pricer(table("ext4")), Pricer(table("xfs", scale=3.0))
    traced = Workload.priced(untimed, [fast, slow], cache_bytes=1 << 30, traced_on="ext4")
    on_ext4 = traced.times[0].total_ns / 1e9
    assert traced.outside.kind == "trace-untimed" and "without call durations" in traced.outside.evidence
    assert traced.outside.seconds == pytest.approx(0.4 - on_ext4)
    assert "where it was traced" in traced.outside.evidence
    # Not told where: the median candidate's file calls (of two, the slower), said so.
    unknown = Workload.priced(untimed, [fast, slow], cache_bytes=1 << 30)
    assert unknown.outside.seconds == pytest.approx(max(0.4 - unknown.times[1].total_ns / 1e9, 0.0))
    assert "the median candidate" in unknown.outside.evidence


def test_a_trace_with_call_durations_is_told_from_the_mean_of_its_two_readings() -> None:
    from fsbm.predictor.predict import Workload

    # With its durations, 0.4 s of work outside; read without them, 0.25 s of gaps that hold its
    # file calls too, whose modelled time on ext4 comes off that reading alone.
    untimed = {"processes": 1, "calls": 2000, "span_ns": 10**9, "lifetimes_ns": 10**9, "user_ns": 250_000_000}
    timed = {"processes": 1, "calls": 2000, "timed_calls": 2000, "span_ns": 10**9, "lifetimes_ns": 10**9,
             "user_signed_ns": 400_000_000}
    fast, slow = Pricer(table("ext4")), Pricer(table("xfs", scale=3.0))
    alone = Workload.priced({**profile(), "timeline": timed}, [fast, slow], cache_bytes=1 << 30, traced_on="ext4")
    both = Workload.priced({**profile(), "timeline": {**timed, "untimed": untimed}}, [fast, slow],
                           cache_bytes=1 << 30, traced_on="ext4")
    on_ext4 = both.times[0].total_ns / 1e9
    assert alone.outside.seconds == pytest.approx(0.4)
    assert both.outside.kind == "trace" and both.outside.seconds == pytest.approx((0.4 + 0.25 - on_ext4) / 2)
    assert "read two ways" in both.outside.evidence and "as strace without -T" not in both.outside.evidence
    # Each reading keeps its own figure and how it told it, for the prediction to show.
    timed_reading, untimed_reading = both.outside.readings
    assert (timed_reading.reading, timed_reading.seconds) == ("with call durations", pytest.approx(0.4))
    assert untimed_reading.reading == "without call durations"
    assert untimed_reading.seconds == pytest.approx(0.25 - on_ext4)
    assert "without call durations (as strace without -T" in untimed_reading.evidence
    assert both.outside.evidence_in_full.startswith(both.outside.evidence + "; with call durations: ")
    assert not alone.outside.readings and alone.outside.evidence_in_full == alone.outside.evidence
    assert [row["outside_s"] for row in both.features] == [both.outside.seconds] * 2
    from fsbm.predictor.predict import predict
    done = predict({**profile(), "timeline": {**timed, "untimed": untimed}}, [(None, fast), (None, slow)],
                   cache_bytes=1 << 30, traced_on="ext4")
    assert [r.reading for r in done.outside_readings] == ["with call durations", "without call durations"]
    from fsbm.api.render import outside_note
    from fsbm.api.report import _runtime_section
    note = outside_note(done).splitlines()
    assert len(note) == 3 and note[1].startswith("  with call durations, 0.400 s: ")
    section = _runtime_section(done.model_dump(mode="json"))
    assert "<li>With call durations: " in section and "<li>Without call durations: " in section
    assert not predict({**profile(), "timeline": timed}, [(None, fast)], cache_bytes=1 << 30).outside_readings


def test_the_untimed_reading_takes_off_no_less_than_the_long_file_calls_the_log_timed() -> None:
    """Read as if it had no durations, a log with -T still says what its long file calls
    took where it was traced: where that is more than their modelled time on the candidate
    the reading is told against (a copy the median candidate clones in milliseconds), that
    much comes off, said so; where it is less, the modelled time does, as before."""
    from fsbm.predictor.predict import Workload

    untimed = {"processes": 1, "calls": 2000, "span_ns": 10**9, "lifetimes_ns": 10**9, "user_ns": 900_000_000}
    timed = {"processes": 1, "calls": 2000, "timed_calls": 2000, "span_ns": 10**9, "lifetimes_ns": 10**9,
             "user_signed_ns": 10_000_000}
    fast, slow = Pricer(table("ext4")), Pricer(table("xfs", scale=3.0))

    def untimed_reading(long_ns: int) -> tuple[float, str, float]:
        done = Workload.priced({**profile(), "timeline": {**timed, "file_calls_long_ns": long_ns,
                                                          "untimed": untimed}},
                               [fast, slow], cache_bytes=1 << 30, traced_on="ext4")
        reading = done.outside.readings[1]
        return reading.seconds, reading.evidence, done.times[0].total_ns / 1e9

    seconds, evidence, on_ext4 = untimed_reading(0)
    assert seconds == pytest.approx(0.9 - on_ext4) and "a millisecond or more" not in evidence
    seconds, evidence, on_ext4 = untimed_reading(int(on_ext4 * 1e9 / 2))
    assert seconds == pytest.approx(0.9 - on_ext4)
    seconds, evidence, on_ext4 = untimed_reading(800_000_000)
    assert seconds == pytest.approx(0.1)
    assert "its calls a millisecond or more above their processes' median call took 0.800 s" in evidence


def test_the_filesystems_part_is_count_times_cost_over_the_processes_working_at_once() -> None:
    from fsbm.predictor.predict import predict

    # Two processes, each busy for the whole second of the span: 2 at once.
    timed = {"processes": 2, "calls": 2000, "timed_calls": 2000, "span_ns": 10**9, "lifetimes_ns": 2 * 10**9,
             "user_signed_ns": 400_000_000}
    one = predict({**profile(), "timeline": {**timed, "lifetimes_ns": 10**9}}, [(None, Pricer(table()))],
                  cache_bytes=1 << 30)
    two = predict({**profile(), "timeline": timed}, [(None, Pricer(table()))], cache_bytes=1 << 30)
    assert (one.concurrency, two.concurrency) == (1.0, 2.0)
    a, b = one.candidates[0], two.candidates[0]
    assert a.fs_modelled_s == b.fs_modelled_s  # the calls cost what they cost
    assert b.fs_s == pytest.approx(a.fs_s / 2)  # but overlap the other process's work
    assert sum(b.breakdown_s.values()) == pytest.approx(b.fs_s)
    assert b.outside_s == pytest.approx(0.2) and a.outside_s == pytest.approx(0.4)
    assert b.runtime_s == pytest.approx(b.outside_s + b.fs_s)


def test_the_traces_own_durations_are_set_beside_the_traced_candidates_count_times_cost() -> None:
    from fsbm.api.render import observed_table, plain_cells
    from fsbm.predictor.predict import predict

    timed = profile(fsyncs=3)
    timed["classes"]["data"]["read"]["random"]["4096"].update(timed=1000, dur_ns=40_000_000)
    timed["classes"]["metadata"]["fsync"].update(timed=3, dur_ns=9_000_000)
    done = predict(timed, [(None, Pricer(table("ext4"))), (None, Pricer(table("xfs", 2.0)))], cache_bytes=1 << 30,
                   traced_on="ext4")
    assert done.observed_s == {"read": pytest.approx(0.04), "fsync": pytest.approx(0.009)}
    headers, rows = plain_cells(observed_table(done))
    assert headers[2] == "count x cost on ext4" and [r[0] for r in rows] == ["read", "fsync"]
    assert observed_table(predict(timed, [(None, Pricer(table("ext4")))], cache_bytes=1 << 30)) is None
    assert predict(profile(), [(None, Pricer(table("ext4")))], cache_bytes=1 << 30).observed_s == {}
    # Where the trace says what a call took under tracing (its process's median call, 10 us
    # here), the durations less that much a call are set beside them.
    timed["timeline"] = {"calls": 2000, "timed_calls": 2000, "span_ns": 10**9, "lifetimes_ns": 10**9,
                         "timed_gaps": 100, "timed_gaps_call_median_ns": 100 * 10_000}
    told = predict(timed, [(None, Pricer(table("ext4")))], cache_bytes=1 << 30, traced_on="ext4")
    assert told.told_s == {"read": pytest.approx(0.04 - 1000 * 10e-6), "fsync": pytest.approx(0.009 - 3 * 10e-6)}
    headers, rows = plain_cells(observed_table(told))
    assert headers[1:] == ["as traced", "less tracing", "count x cost on ext4"]


def test_two_traces_of_one_program_are_compared_by_the_runtimes_they_predict() -> None:
    """Both traces are priced as the judge prices the first, with the run's tracing
    calibration: here its cold start (0.1 s), which the second trace's runtime holds too."""
    from fsbm.predictor.cold_start import ColdStart, ColdStartRun
    from fsbm.predictor.plain_judge import CACHE_BYTES, _suite, _trace_reproducibility
    from fsbm.predictor.predict import Workload
    from fsbm.predictor.tracing import TracingCalibration

    def traced(outside_ns: int) -> dict:
        return {**profile(), "timeline": {"processes": 1, "calls": 2000, "timed_calls": 2000, "span_ns": 10**9,
                                          "lifetimes_ns": 10**9, "user_signed_ns": outside_ns}}

    pricers = {"ext4": Pricer(table("ext4")), "xfs": Pricer(table("xfs", scale=2.0))}
    labels = {"ext4": "ext4 fresh", "xfs": "xfs fresh"}
    calibration = TracingCalibration(cold_start=ColdStart([ColdStartRun("start", [200_000_000], [100_000_000])]))
    doc = {"programs": [{"name": "once", "profile": traced(400_000_000)},
                        {"name": "p", "profile": traced(400_000_000), "profile_again": traced(500_000_000)}],
           "tracing_calibration": calibration.to_json()}
    runs = {(p["name"], label): [1.0] for p in doc["programs"] for label in labels.values()}
    each = {name: [pricer] for name, pricer in pricers.items()}
    found = _trace_reproducibility(_suite(doc, pricers, each, runs, labels, "ext4"), labels)
    assert list(found["where"]) == ["p on ext4 fresh", "p on xfs fresh"]
    for candidate, row in zip(pricers, found.itertuples()):
        fs = Workload.priced(traced(0), [pricers[candidate]], cache_bytes=CACHE_BYTES).times[0].total_ns / 1e9
        assert (row.first_s, row.second_s) == (pytest.approx(0.5 + fs), pytest.approx(0.6 + fs))
        assert row.spread == pytest.approx((0.6 + fs) / (0.5 + fs) - 1)


def test_a_programs_second_trace_is_learnt_from_but_not_judged() -> None:
    """The plain model's errors come from every trace of a program (a new trace is another
    draw of tracing's speed); the rows judged are the first trace's alone."""
    from fsbm.predictor.plain_judge import _suite, plain_model

    def traced(outside_ns: int) -> dict:
        return {**profile(), "timeline": {"processes": 1, "calls": 2000, "timed_calls": 2000, "span_ns": 10**9,
                                          "lifetimes_ns": 10**9, "user_signed_ns": outside_ns}}

    pricers = {"ext4": Pricer(table("ext4")), "xfs": Pricer(table("xfs", scale=2.0))}
    labels = {"ext4": "ext4 fresh", "xfs": "xfs fresh"}
    each = {name: [pricer] for name, pricer in pricers.items()}
    programs = [{"name": f"p{i}", "profile": traced(400_000_000 + 10_000_000 * i)} for i in range(4)]
    runs = {(p["name"], label): [0.45] for p in programs for label in labels.values()}
    once = _suite({"programs": programs}, pricers, each, runs, labels, "ext4")
    again = [{**p, "profile_again": traced(900_000_000)} for p in programs]
    twice = _suite({"programs": again}, pricers, each, runs, labels, "ext4")
    assert len(once.again) == 0 and len(twice.again) == 8
    assert list(twice.programs[twice.traced_twice][:2]) == ["p0", "p0"]
    assert twice.forms["absolute"].equals(once.forms["absolute"])  # the judged rows are the first trace's
    assert len(twice.without("p0").again) == 6
    narrow, wide = plain_model(once).errors_["trace"], plain_model(twice).errors_["trace"]
    assert wide["n"] == narrow["n"] + 8 and wide["p95"] > narrow["p95"] + 0.2


def test_a_traces_gaps_after_it_mapped_files_give_up_the_modelled_read_of_what_it_mapped() -> None:
    """A trace's gaps right after its mmaps hold the mapped files' reads (page faults), which
    the cost model prices as the mappings'; the time outside gives up that modelled time
    where the workload was traced, up to those gaps' work, and says so."""
    from fsbm.predictor.predict import Workload

    hashing = profile(reads=0)
    hashing["classes"]["data"] = {"mmap": {"random": {"65536": {"count": 30, "bytes": 30 * 100_000}}}}
    # 1,000 timed gaps, each 20 us over its call, and 30 of them, right after an mmap, 0.3 s over.
    timed = {"processes": 1, "calls": 1001, "timed_calls": 1001, "span_ns": 10**9, "lifetimes_ns": 10**9,
             "user_signed_ns": 1, "timed_gaps": 1000, "timed_gaps_ns": 330_000_000, "timed_gaps_call_median_ns": 10_000_000}
    fast, slow = Pricer(table("ext4")), Pricer(table("xfs", scale=3.0))

    def priced(mapped_over_call_ns: int) -> Workload:
        timeline = {**timed, "mapped_gaps": 30, "mapped_gaps_over_call_ns": mapped_over_call_ns}
        return Workload.priced({**hashing, "timeline": timeline}, [fast, slow], cache_bytes=1 << 30,
                               traced_on="ext4", tracing=TracingCalibration(measured_gap_over_call_ns=20_000 / 0.6))

    mapped_on_ext4 = priced(0).times[0].by_op()["mmap"] / 1e9
    before = priced(0).outside
    assert before.mapped_s == 0 and before.seconds == pytest.approx(0.3, rel=0.01)
    ample = priced(300_000_000).outside
    assert 0 < mapped_on_ext4 < 0.3
    assert ample.seconds == pytest.approx(0.3 - mapped_on_ext4, rel=0.01)
    assert "the gaps after it mapped files" in ample.evidence and "where it was traced" in ample.evidence
    # Gaps after mmaps that held less work than the modelled read give up only what they held.
    little = priced(30 * 20_000 + 1_000_000).outside
    assert little.mapped_s == pytest.approx(0.001) and little.seconds == pytest.approx(0.3 - 0.001, rel=0.01)


def test_a_recorded_validations_verdict_holds_the_relative_form_and_the_intervals_to_their_targets() -> None:
    """Runtimes and ratios within their targets, but the relative form's median 12% (target 10%)
    or an interval that misses too many runs: the targets are not met."""
    from fsbm.predictor.judge import _summary

    def rows(relative_miss: float, low: float) -> pd.DataFrame:
        return pd.DataFrame([{"program": f"p{k}", "candidate": c, "real_s": 1.0, "abs_error": 0.05, "ratio_error": 0.02,
                              "relative_error": 0.0 if c == "ext4" else relative_miss, "low_s": low, "high_s": 1.2,
                              "relative_low_s": 0.8, "relative_high_s": 1.2}
                             for k in range(5) for c in ("ext4", "xfs")])

    no_pairs = pd.DataFrame({"right": pd.Series([], dtype=bool)})
    assert _summary(rows(0.05, 0.8), no_pairs, "ext4")["targets_met"]
    assert not _summary(rows(0.12, 0.8), no_pairs, "ext4")["targets_met"]  # the relative form's median
    assert not _summary(rows(0.05, 1.1), no_pairs, "ext4")["targets_met"]  # every interval above its run


def test_a_listings_entries_are_priced_among_as_many_files_of_their_sizes_where_measured() -> None:
    """The stats of entries a listing returned with their attributes (an NFS READDIRPLUS's)
    are priced by fsbench's stat_listed_mix at their mix of sizes among their count of files
    (to two figures); where the table has no such case, as stat_file, and the case is kept
    for `fsbm bench --for`.  The workload's other stats keep stat_file's price."""
    buckets = {"512": {"files": 3000, "bytes": 3000 * 700}, "2048": {"files": 1040, "bytes": 1040 * 3000}}
    mix = size_mix({k: SizeBucket(**v) for k, v in buckets.items()})
    listing = profile(reads=0)
    listing["classes"]["metadata"]["stat"] = {"done": 4100, "failed": 0, "empty": 0, "listed": 4040,
                                              "listed_log2": buckets}
    listing["namespace"] = {"files_touched": 4100, "directories_touched": 10}  # every call a first look: cold
    plain = Pricer(table("btrfs"))
    fs = price_workload(listing, plain, cache_bytes=1 << 30)
    stats = [line for line in fs.lines if line.op == "stat"]
    assert sum(line.total_ns for line in stats) == pytest.approx(4100 * 10_000)
    assert all("stat_file" in line.price.source for line in stats)
    assert plain.unmeasured == {Unmeasured("stat_listed_mix", "creation", c, round(sum(mix) / len(mix)), mix, (), 4000)
                                for c in ("cold", "warm")}

    measured = table("btrfs")
    measured.entries += [entry("stat_listed_mix", "creation", c, round(sum(mix) / len(mix)), 14_000,
                               file_sizes=list(mix), files=files) for c in ("cold", "warm") for files in (1000, 4000)]
    measured.entries[-1] = entry("stat_listed_mix", "creation", "warm", round(sum(mix) / len(mix)), 900,
                                 file_sizes=list(mix), files=4000)
    pricer = Pricer(measured)
    fs = price_workload(listing, pricer, cache_bytes=1 << 30)
    listed = [line for line in fs.lines if line.op == "stat" and "listed" in line.detail]
    assert sum(line.count for line in listed) == pytest.approx(4040)
    assert sum(line.total_ns for line in listed) == pytest.approx(4040 * 14_000)
    assert all("among 4000 files" in line.price.source for line in listed) and not pricer.unmeasured
    others = [line for line in fs.lines if line.op == "stat" and "listed" not in line.detail]
    assert sum(line.total_ns for line in others) == pytest.approx(60 * 10_000)


def _captures_here_and_elsewhere() -> tuple[dict, dict]:
    """A capture's profile whose one client called a server at its own address (the capturer
    shared its host), and the same capture of a client elsewhere."""
    timeline = {"processes": 1, "same_host_clients": 1, "calls": 1000, "timed_calls": 1000, "span_ns": 10**9,
                "lifetimes_ns": 10**9, "user_ns": 5 * 10**8, "user_signed_ns": 5 * 10**8,
                "file_calls_excess_ns": 4 * 10**8, "file_calls_signed_ns": 4 * 10**8}
    captured = {**profile(), "protocol": "nfs", "timeline": timeline}
    return captured, {**captured, "timeline": {**timeline, "same_host_clients": 0}}


def test_a_captures_band_reaches_lower_by_what_capturing_may_have_cost_where_its_clients_shared_the_host() -> None:
    """Where a capture's clients called a server at their own address, the capturer shared
    their host and may have slowed the job it holds: the band of its time outside reaches
    lower by the calibrated cost per MiB (at the high end of the pairs' spread) times the
    MiB the job's reads and writes moved; the time itself stays the capture's.  A capture of
    clients elsewhere keeps its band; an uncalibrated machine says what is not allowed for."""
    from fsbm.predictor.capture_cost import CaptureCost, moved_bytes
    from fsbm.predictor.predict import predict

    pairs = [{"direction": d, "mib": 64.0, "captured_s": c, "plain_s": 0.1}
             for d, c in (("read", 0.2), ("write", 0.3), ("read", 0.15))]
    cost = CaptureCost(pairs, "now")
    assert cost.seconds_per_mib == pytest.approx(0.1 / 64)
    captured, elsewhere = _captures_here_and_elsewhere()
    tables = [(None, Pricer(table("ext4")))]

    def outside(body: dict, calibration: CaptureCost | None) -> tuple[float, float, float, str]:
        done = predict(body, tables, cache_bytes=1 << 30, traced_on="ext4", capture_cost=calibration)
        entry = done.candidates[0]
        return entry.outside_s, entry.low_s, entry.high_s, done.outside_evidence

    mib = moved_bytes(Profile.of(captured)) / (1 << 20)
    assert mib == pytest.approx((1000 * 4096 + 10 * 65536) / (1 << 20))
    kept, kept_low, kept_high, said = outside(captured, None)
    wider, low, high, told = outside(captured, cost)
    assert wider == pytest.approx(kept) and high == pytest.approx(kept_high)
    assert kept_low - low == pytest.approx(mib * cost.band_per_mib[1], rel=1e-6) and low < kept_low
    assert "may have cost the job" in told and "calibrated here" in told
    assert "is not in its band (`fsbm trace calibrate --capture`" in said
    apart, apart_low, _, why = outside(elsewhere, cost)
    assert apart == pytest.approx(kept) and apart_low == pytest.approx(kept_low) and "capturing" not in why
    # A job that moved next to no bytes (a listing) has nothing to allow for, and says nothing of it.
    listing = {**captured, "classes": {**captured["classes"], "data": {}}}
    assert "capturing" not in outside(listing, cost)[3]


def test_a_cold_prediction_from_a_capture_adds_the_clients_start_no_capture_holds() -> None:
    """A capture runs from a job's first packet to its last; the client program's start and
    end lie outside it.  A cold prediction of a capture whose clients ran on this host adds
    the calibrated start (the median of small jobs' seconds beyond their captures' spans, its
    band their range); a warm one, or one of clients elsewhere, adds nothing, and a machine
    that measured none says so."""
    from fsbm.predictor.capture_cost import CaptureCost
    from fsbm.predictor.predict import predict

    starts = [{"job": job, "seconds": seconds, "span_s": 0.001}
              for job, seconds in (("nfs-ls", 0.008), ("nfs-cat", 0.010), ("nfs-ls", 0.007))]
    cost = CaptureCost([], "now", None, starts)
    assert cost.client_start_s == pytest.approx(0.007) and cost.client_start_band == pytest.approx((0.006, 0.009))
    assert CaptureCost.from_json(cost.to_json()) == cost
    captured, elsewhere = _captures_here_and_elsewhere()
    tables = [(None, Pricer(table("ext4")))]

    def told(body: dict, calibration: CaptureCost | None, start: str = "cold") -> tuple[float, float, float, str]:
        done = predict(body, tables, cache_bytes=1 << 30, start=start, traced_on="ext4", capture_cost=calibration)
        entry = done.candidates[0]
        return entry.outside_s, entry.low_s, entry.high_s, done.outside_evidence

    bare, bare_low, bare_high, said = told(captured, CaptureCost([], "now"))
    started, low, high, evidence = told(captured, cost)
    assert started - bare == pytest.approx(0.007)
    assert low - bare_low == pytest.approx(0.006) and high - bare_high == pytest.approx(0.009)
    assert "the client's own start and end no capture holds, 7.0 ms (6.0-9.0)" in evidence
    assert "are not in it (`fsbm trace calibrate --capture`" in said
    assert told(captured, cost, start="warm")[0] == pytest.approx(told(captured, None, start="warm")[0])
    assert told(elsewhere, cost)[0] == pytest.approx(bare)


def test_a_captured_streams_wait_hides_behind_the_servers_own_handling_of_its_reads() -> None:
    """An NFS server sends each streamed READ's reply while readahead brings the next blocks
    in: a candidate's wait for the device shows only where it outlasts the time the captured
    server spent in those reads beyond its filesystem's CPU; the CPU is never hidden, and a
    capture with no timed reads tells no such time."""
    from fsbm.predictor.predict import _streams_behind_server

    pricers = [Pricer(table_with_cpu("ext4")), Pricer(table_with_cpu("btrfs", 2.0))]
    each = 8 * curve(1 << 20)  # ext4's cold sequential MiB: a quarter CPU; btrfs's twice it

    def reads(observed_ns: float | None) -> list[float]:
        """The modelled read time on each candidate of 100 streamed MiB reads, each outstanding
        `observed_ns` on the captured ext4 server (None: untimed)."""
        workload = profile(reads=0)
        timed = {"timed": 100, "dur_ns": round(100 * observed_ns)} if observed_ns else {}
        workload["classes"]["data"]["read"] = {"sequential": {"1048576": {"count": 100, "bytes": 100 << 20, **timed}}}
        workload = Profile.of(workload)
        times = [price_workload(workload, pricer, cache_bytes=0) for pricer in pricers]
        times = _streams_behind_server(workload, ["ext4", "btrfs"], times, "ext4")
        return [fs.by_group()["read"] for fs in times]

    assert reads(None) == pytest.approx([100 * each, 200 * each])
    # Three times fsbench's read a call: 275 reads' worth outside the filesystem hides all.
    assert reads(3 * each) == pytest.approx([25 * each, 50 * each])
    # As long as fsbench's read: 75 reads' worth, all of ext4's wait and half of btrfs's.
    assert reads(each) == pytest.approx([25 * each, 125 * each])


def test_a_listing_far_beyond_fsbenchs_is_measured_at_its_own_count_of_entries() -> None:
    """A directory listed with 50 times readdir's bytes is kept as unmeasured at its own count
    of entries (fsbench's bytes an entry, two significant figures); once readdir_entries has
    measured such a count, a listing is priced between the measured sizes around it, not on
    the line through the two small ones."""
    from fsbm.predictor.pricing import Unmeasured

    small, large = 60_000 - 4_000, 200_000 - 4_000
    pricer = Pricer(listing_table())
    on_the_line = pricer.listing(50 * 2448, "cold")
    assert on_the_line.ns == pytest.approx(large + 49 * 2448 * (large - small) / (2448 - 288))
    assert pricer.unmeasured == {Unmeasured("readdir_entries", "creation", "cold", 0, files=5000)}
    near = Pricer(listing_table())  # within LISTING_BEYOND of the largest: nothing asked
    near.listing(2 * 2448, "cold")
    assert not near.unmeasured

    sized = listing_table()
    sized.entries.append(entry("readdir_entries", "creation", "cold", None, 3_000_000, entries_per_op=4000,
                               listed_bytes_per_op=120_048, files=4000))
    measured = Pricer(sized)
    between = measured.listing(61_248, "cold")  # halfway between readdir's 2448 B and the 4000 entries'
    assert between.ns == pytest.approx((large + 3_000_000 - 4_000) / 2)
    assert "fsbench readdir and readdir_entries of 4000 entries cold less open and close" in between.source
    assert not measured.unmeasured  # within twice the largest measured

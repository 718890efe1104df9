"""The cases a workload is priced from beyond a cost table's sizes, and measuring them
(`fsbm bench --for`): pricing.Unmeasured, predictor.regime, fsbench.options_measuring,
CostTable.with_measurements, and the command on a real ext4 image."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import QUICK_BENCH_FLAGS, Calibrated, give_calibration, run_fsbm
from fsbm.microbench.fsbench import (QUICK_REPS, REGIME_CASE_SECONDS, REGIME_REPS, WHOLE_STREAM_CAP_NS, TableEffort,
                                     options_measuring)
from fsbm.microbench.scratch import ScratchFs
from fsbm.predictor.cost_table import PINNED, UNPINNED, CostTable
from fsbm.predictor.pricing import MAX_COPY_BYTES, MAX_REQUEST_BYTES, Pricer, Unmeasured, emptied_directory_size
from fsbm.predictor.regime import unmeasured_cases
from fsbm.store import ResultsStore
from fsbm.predictor.model import price_workload
from tests.test_predictor_model import curve, entry, profile, table

pytestmark = pytest.mark.cores_shared  # asserts nothing on a time it measures

MIB = 1 << 20


def test_a_sync_after_more_than_the_table_measured_is_kept_as_the_case_to_measure() -> None:
    pricer = Pricer(table("ext4"))
    pricer.fsync(48 * MIB)
    pricer.fsync(512 * MIB)
    # The direct writes that stand in for the sync are not themselves cases to measure.
    assert pricer.unmeasured == {Unmeasured("fsync", "sequential", "warm", 48 * MIB),
                                 Unmeasured("fsync", "sequential", "warm", MAX_REQUEST_BYTES)}
    pricer.data("read", "random", "cold", 6 * MIB)
    pricer.data("read", "random", "cold", 65536)  # measured: nothing to add
    assert Unmeasured("read", "random", "cold", 6 * MIB) in pricer.unmeasured and len(pricer.unmeasured) == 3


def test_a_copy_beyond_a_requests_largest_size_is_kept_to_measure_whole() -> None:
    """A copy's size is a whole file's: a 1 GiB copy is the case to measure, where a 1 GiB
    read is measured at fsbench's largest request and carried on from there."""
    copying = table("ext4")
    copying.entries += [entry("copy", "sequential", "cold", s, 1000.0 * s / 4096) for s in (4096, MAX_REQUEST_BYTES)]
    pricer = Pricer(copying)
    pricer.data("copy", "sequential", "cold", 1 << 30)
    pricer.data("read", "sequential", "cold", 1 << 30)
    assert pricer.unmeasured == {Unmeasured("copy", "sequential", "cold", 1 << 30),
                                 Unmeasured("read", "sequential", "cold", MAX_REQUEST_BYTES)}
    pricer.data("copy", "sequential", "cold", 4 * MAX_COPY_BYTES)
    assert Unmeasured("copy", "sequential", "cold", MAX_COPY_BYTES) in pricer.unmeasured


def test_a_sync_measured_at_the_workloads_size_is_priced_from_that_curve() -> None:
    measured = table("ext4")
    measured.entries.append(entry("fsync", "sequential", "warm", 48 * MIB, 9_000_000))
    pricer = Pricer(measured)
    assert pricer.fsync(48 * MIB).ns == pytest.approx(9_000_000)
    between = pricer.fsync(8 * MIB)
    assert 500_000 < between.ns < 9_000_000 and "between 4096 and 50331648" in between.source
    assert not pricer.unmeasured
    # Beyond the curve where fsbench could measure nearer: the sync after 4 KiB and direct
    # writes, with the case kept; where it could not, the curve carried on.
    assert "direct write" in pricer.fsync(96 * MIB).source
    assert pricer.unmeasured == {Unmeasured("fsync", "sequential", "warm", MAX_REQUEST_BYTES)}
    measured.entries.append(entry("fsync", "sequential", "warm", MAX_REQUEST_BYTES, 12_000_000))
    beyond = Pricer(measured).fsync(96 * MIB)
    assert beyond.ns > 12_000_000 and "beyond the measured sizes" in beyond.source
    # A sync after no more than the smallest measured size is the sync after 4 KiB.
    assert pricer.fsync(4096).ns == pytest.approx(500_000)


def test_a_sync_of_new_bytes_written_in_small_requests_is_priced_as_they_were_written() -> None:
    """New bytes written a page at a time sync slower than the same bytes in one request
    (their pages are not large folios): a metadata sync of bytes that came in requests below
    LARGE_REQUEST_BYTES is priced from fsbench's fsync after writes in requests of that size
    (the power of two at or below their mean, at least a block); where the table lacks it,
    the case is kept for `fsbm bench --for` and the one request's price stands.  Requests of
    64 KiB or more, a rewrite's sync, and a profile that did not count requests are priced
    as one request."""
    measured = table("ext4")
    measured.entries.append(entry("fsync", "sequential", "warm", 48 * MIB, 9_000_000))
    pricer = Pricer(measured)
    one_request = pricer.fsync(48 * MIB)
    assert pricer.fsync(48 * MIB, request=1 * MIB).ns == one_request.ns  # large requests: large folios
    assert pricer.fsync(48 * MIB, request=None).ns == one_request.ns
    assert not pricer.unmeasured
    kept = pricer.fsync(48 * MIB, request=3000)  # a journal's 4 B, 4096 B, 4 B: a block at a time
    assert kept.ns == one_request.ns
    assert pricer.unmeasured == {Unmeasured("fsync", "sequential", "warm", 48 * MIB, request_sizes=(4096,))}
    assert Pricer(measured).fsync(48 * MIB, "data", request=3000).source == Pricer(measured).fsync(48 * MIB, "data").source
    beyond = Pricer(measured)
    assert beyond.fsync(96 * MIB, request=3000).ns == Pricer(measured).fsync(96 * MIB).ns
    assert all(not case.request_sizes for case in beyond.unmeasured)  # beyond fsbench's largest write
    measured.entries.append(entry("fsync", "sequential", "warm", 48 * MIB, 12_000_000, request_sizes=[4096]))
    measured.entries.append(entry("fsync", "sequential", "warm", 48 * MIB, 10_000_000, request_sizes=[16384]))
    pricer = Pricer(measured)
    paged = pricer.fsync(48 * MIB, request=3000)
    assert paged.ns == pytest.approx(12_000_000) and "in requests of 4 KiB" in paged.source
    assert pricer.fsync(48 * MIB, request=20000).ns == pytest.approx(10_000_000)
    # The cases in requests are not points of the one-request curve, nor of its fit.
    assert pricer.fsync(48 * MIB).ns == pytest.approx(9_000_000)
    assert measured.entry("fsync", "sequential", "warm", 48 * MIB).latency_ns.mean == 9_000_000
    assert not pricer.unmeasured
    # The profile's requests reach the price: a kind's bytes over its requests.
    synced = profile(fsyncs=2)
    synced["fsync"]["kinds"] = {"metadata": {"count": 2, "bytes": 96 * MIB, "requests": 2 * 24 * 1024}}
    assert unmeasured_cases(synced, table("ext4"), 1 << 30) == [
        Unmeasured("fsync", "sequential", "warm", 48 * MIB), Unmeasured("fsync", "sequential", "warm", 48 * MIB,
                                                                          request_sizes=(4096,))]


def test_the_workloads_cases_come_from_pricing_its_profile() -> None:
    synced = profile(fsyncs=2)
    synced["fsync"]["kinds"] = {"metadata": {"count": 2, "bytes": 64 * MIB}}
    assert unmeasured_cases(synced, table("ext4"), 1 << 30) == [Unmeasured("fsync", "sequential", "warm", 32 * MIB)]
    assert unmeasured_cases(profile(), table("ext4"), 1 << 30) == []


def test_fsbench_runs_measure_exactly_the_cases_three_sizes_at_most_a_run() -> None:
    runs = options_measuring([("fsync", "sequential", "warm", 48 * MIB, (), (), None),
                              ("read", "random", "cold", 2 * MIB, (), (), None),
                              ("read", "random", "cold", 6 * MIB, (), (), None),
                              ("mmap_read", "random", "cold", 2 * MIB, (), (), None),
                              *(("write", "sequential", "warm", n * MIB, (), (), None) for n in (2, 3, 4, 5))], seed=3)
    by_cases = {(r.only, r.orders, r.caches, r.sizes) for r in runs}
    assert by_cases == {("fsync", "sequential", "warm", f"{48 * MIB}"),
                        ("mmap_read", "random", "cold", f"{2 * MIB}"),
                        ("read", "random", "cold", f"{2 * MIB},{6 * MIB}"),
                        ("write", "sequential", "warm", f"{2 * MIB},{3 * MIB},{4 * MIB}"),
                        ("write", "sequential", "warm", f"{5 * MIB}")}
    largest = max(runs, key=lambda r: int(r.file_size))
    assert int(largest.file_size) == 4 * 48 * MIB and all(r.seed == 3 and r.quick for r in runs)


def test_a_commands_table_effort_holds_the_workloads_own_cases_to_it() -> None:
    """--table-reps and --table-case-seconds below a workload case's own (ten repetitions of
    5 s, quick's three for a mix) hold it to them; above it, or unset, they leave it alone."""
    cases = [("fsync", "sequential", "warm", 48 * MIB, (), (), None),
             ("append_mix", "sequential", "warm", 1368, (4, 4096, 4), (), None)]

    def efforts(effort: TableEffort) -> set[tuple[str | None, int | None, float | None]]:
        return {(r.only, r.reps, r.case_seconds) for r in options_measuring(cases, effort=effort)}

    assert efforts(TableEffort()) == {("fsync", REGIME_REPS, REGIME_CASE_SECONDS), ("append_mix", None, REGIME_CASE_SECONDS)}
    assert efforts(TableEffort(2, 0.02)) == {("fsync", 2, 0.02), ("append_mix", 2, 0.02)}
    assert efforts(TableEffort(50, 60.0)) == {("fsync", REGIME_REPS, REGIME_CASE_SECONDS),
                                              ("append_mix", QUICK_REPS, REGIME_CASE_SECONDS)}


def test_a_mix_of_file_sizes_is_one_fsbench_run_at_that_mix() -> None:
    """A *_mix case runs at its mix (--file-sizes), write_new_mix at its mix of request
    sizes too (--request-sizes), and stat_listed_mix among its count of files (--files),
    with fsbench's own sizes and quick's repetitions; two mixes are two runs."""
    runs = options_measuring([("create_written_mix", "creation", "cold", 20_000, (500, 9000, 50_500), (), None),
                              ("create_written_mix", "creation", "cold", 20_000, (20_000, 20_000, 20_000, 19_999), (),
                               None),
                              ("unlink_written_mix", "creation", "warm", 20_000, (500, 9000, 50_500), (), None),
                              ("append_mix", "sequential", "warm", 1368, (4, 4096, 4), (), None),
                              ("write_new_mix", "sequential", "warm", 7000, (500, 9000), (4000, 10_000), None),
                              ("stat_listed_mix", "creation", "cold", 1952, (326, 3010), (), 4000)])
    assert {(r.only, r.caches, r.file_sizes, r.request_sizes, r.sizes, r.reps) for r in runs} == {
        ("create_written_mix", "cold", "500,9000,50500", None, None, None),
        ("create_written_mix", "cold", "20000,20000,20000,19999", None, None, None),
        ("unlink_written_mix", "warm", "500,9000,50500", None, None, None),
        ("append_mix", "warm", "4,4096,4", None, None, None),
        ("write_new_mix", "warm", "500,9000", "4000,10000", None, None),
        ("stat_listed_mix", "cold", "326,3010", None, None, None)}
    assert next(r for r in runs if r.only == "append_mix").orders == "sequential"
    assert next(r for r in runs if r.only == "stat_listed_mix").files == 4000
    assert all(r.files is None for r in runs if r.only != "stat_listed_mix")
    assert "--file-sizes" in runs[0].arguments()


def test_a_listing_at_a_workloads_count_is_one_run_of_readdir_entries_without_sizes() -> None:
    """The pricer's readdir_entries case (size 0, the entries of each directory as its count)
    becomes one fsbench run naming it, at that count, with no --sizes; two counts, two runs."""
    runs = options_measuring([("readdir_entries", "creation", "cold", 0, (), (), 3300),
                              ("readdir_entries", "creation", "warm", 0, (), (), 3300),
                              ("readdir_entries", "creation", "cold", 0, (), (), 12000)])
    assert sorted((r.only, r.caches, r.files, r.sizes) for r in runs) == [
        ("readdir_entries", "cold", 3300, None), ("readdir_entries", "cold", 12000, None),
        ("readdir_entries", "warm", 3300, None)]
    assert "--sizes" not in runs[0].arguments() and "--files" in runs[0].arguments()


def _unlinking(done: int, directory_unlinks: dict[str, int] | None = None) -> dict:
    """profile(), with `done` unlinks of files the trace did not show holding data (rm -rf),
    made in directories that saw `directory_unlinks` ({unlinks: directories}) of them."""
    workload = profile()
    workload["classes"]["metadata"]["unlink"] = {"done": done, "failed": 0, "empty": 0,
                                                 **({"directory_unlinks": directory_unlinks} if directory_unlinks else {})}
    return workload


def test_unlinks_in_a_large_directory_are_priced_at_its_size_measured_unpinned() -> None:
    """Of 23,850 unlinks, the 18,000 rm made emptying one directory are priced at fsbench's
    unlink_entries in directories of 20,000 entries (the nearest of its sizes), once measured
    there unpinned; the rest, in directories of a hundred or so, at the stream's own count.
    Until then (or where only a pinned case is stored) the stream's price stands in, said so,
    and the case is asked for."""
    counted = table("ext4")
    counted.entries = [e.model_copy(update={"files": 1000}) if e.bench == "unlink" else e for e in counted.entries]
    workload = _unlinking(23_850, {"18000": 1, "120": 40, "30": 6})

    def unlink_lines(pricer: Pricer) -> list:
        return [l for l in price_workload(workload, pricer, cache_bytes=1 << 30).lines if l.op == "unlink"]
    pricer = Pricer(counted)
    lines = unlink_lines(pricer)
    assert sum(l.count for l in lines) == pytest.approx(23_850)
    assert sum(l.count for l in lines if "18000 entries" in l.detail) == pytest.approx(18_000)
    assert {u for u in pricer.unmeasured if u.bench == "unlink_entries"} == {
        Unmeasured("unlink_entries", "creation", c, 0, files=20_000) for c in ("cold", "warm")}
    assert all("not in directories of 20000 entries" in l.price.source for l in lines if "18000" in l.detail)
    stored = [entry("unlink", "creation", c, None, 40_000.0, files=24_000, placement=UNPINNED) for c in ("cold", "warm")]
    pinned = [entry("unlink_entries", "creation", c, None, 20_000.0, files=20_000) for c in ("cold", "warm")]
    with_pinned = CostTable("ext4", counted.environment, "t", counted.entries + stored + pinned)
    still = Pricer(with_pinned)
    unlink_lines(still)
    assert {u.bench for u in still.unmeasured} == {"unlink_entries"}
    measured = CostTable("ext4", counted.environment, "t", with_pinned.entries + [
        entry("unlink_entries", "creation", c, None, 70_000.0, files=20_000, placement=UNPINNED) for c in ("cold", "warm")])
    again = Pricer(measured)
    lines = unlink_lines(again)
    assert not again.unmeasured
    large = [l for l in lines if "18000 entries" in l.detail]
    assert all(l.price.ns == pytest.approx(70_000.0) and "emptying directories of 20000" in l.price.source
               for l in large)
    rest = [l for l in lines if l not in large]
    assert sum(l.count for l in rest) == pytest.approx(5_850) and all(l.price.ns == pytest.approx(40_000.0)
                                                                       for l in rest)
    assert [emptied_directory_size(n) for n in (401, 590, 760, 2_400, 18_000, 400_000)] == \
        [500, 500, 1_000, 2_000, 20_000, 100_000]
    # Directories of a few hundred unlinks each are fsbench's own shape: the stream's price.
    small = [l for l in price_workload(_unlinking(23_850, {"300": 79}), again, cache_bytes=1 << 30).lines
             if l.op == "unlink"]
    assert all(l.price.ns == pytest.approx(40_000.0) and "entries" not in l.detail for l in small)


def test_unlinks_all_in_large_directories_ask_for_no_stream_of_their_count() -> None:
    """A workload whose 12,000 unlinks all emptied three directories of 4,000 entries asks
    only for unlink_entries at 5,000: the stream's price stands in meanwhile, said so, but the
    stream's case at 12,000 would go unused once that case is measured, so it is not asked for."""
    counted = table("ext4")
    counted.entries = [e.model_copy(update={"files": 1000}) if e.bench == "unlink" else e for e in counted.entries]
    pricer = Pricer(counted)
    lines = [l for l in price_workload(_unlinking(12_000, {"4000": 3}), pricer, cache_bytes=1 << 30).lines
             if l.op == "unlink"]
    assert sum(l.count for l in lines) == pytest.approx(12_000) and all("4000 entries" in l.detail for l in lines)
    assert all("not in directories of 5000 entries" in l.price.source and "12000 unlinks)" in l.price.source
               for l in lines)
    assert {(u.bench, u.files) for u in pricer.unmeasured} == {("unlink_entries", 5_000)}


def test_directories_emptied_are_measured_whole_and_unpinned() -> None:
    for effort in (TableEffort(), TableEffort(2, 0.02)):
        run, = options_measuring([("unlink_entries", "creation", "cold", 0, (), (), 18_000)], effort=effort)
        assert (run.only, run.files, run.warmup, run.sizes, run.cpu) == ("unlink_entries", 18_000, 0, None, "none")
        assert run.case_seconds >= (run.reps or QUICK_REPS) * 4 * 18_000 * WHOLE_STREAM_CAP_NS / 1e9


def test_a_stream_of_unlinks_far_longer_than_fsbenchs_is_priced_at_its_own_count() -> None:
    """A workload's unlinks within UNLINKS_BEYOND times the files fsbench's unlink ran among
    take its price; 23,850 of them, four times and more a thousand, are the case to measure at
    their count (to two figures), and once measured, at that count, take its price."""
    counted = table("ext4")
    counted.entries = [e.model_copy(update={"files": 1000}) if e.bench == "unlink" else e for e in counted.entries]
    pricer = Pricer(counted)
    short = price_workload(_unlinking(3000), pricer, cache_bytes=1 << 30)
    assert not pricer.unmeasured and "among" not in next(l for l in short.lines if l.op == "unlink").price.source
    long = price_workload(_unlinking(23_850), pricer, cache_bytes=1 << 30)
    assert pricer.unmeasured == {Unmeasured("unlink", "creation", c, 0, files=24_000) for c in ("cold", "warm")}
    said = next(l for l in long.lines if l.op == "unlink").price.source
    assert "not the workload's 23850 unlinks" in said
    # Measured at that count pinned to a CPU, the case is not the one asked for: programs make
    # their streams unpinned, and xfs's unlinks cost them more.
    pinned = CostTable(counted.candidate, counted.environment, counted.measured_at,
                       counted.entries + [entry("unlink", "creation", c, None, 30_000.0, files=24_000)
                                          for c in ("cold", "warm")])
    still = Pricer(pinned)
    price_workload(_unlinking(23_850), still, cache_bytes=1 << 30)
    assert still.unmeasured == pricer.unmeasured
    measured = CostTable(counted.candidate, counted.environment, counted.measured_at,
                         pinned.entries + [entry("unlink", "creation", c, None, 40_000.0, files=24_000,
                                                 placement=UNPINNED) for c in ("cold", "warm")])
    again = Pricer(measured)
    line = next(l for l in price_workload(_unlinking(23_850), again, cache_bytes=1 << 30).lines if l.op == "unlink")
    assert line.price.ns == pytest.approx(40_000.0) and "among 24000 files" in line.price.source
    assert "unpinned" in line.price.source and not again.unmeasured
    # Kept and read back, each case keeps its placement, and both stay in the table.
    kept = CostTable.from_json(measured.to_json())
    assert {(e.placement, e.latency_ns.mean) for e in kept.entries if e.bench == "unlink" and e.files == 24_000} == \
        {(PINNED, 30_000.0), (UNPINNED, 40_000.0)}
    assert again.metadata("unlink", "cold").ns == pytest.approx(10_000)  # the table's own stays its own
    # A table measured before unlink said the files it ran among prices every stream alike.
    assert not Pricer(table("ext4")).unlink_among(23_850, "cold").source.endswith("measures it)")


def test_a_stream_of_unlinks_at_a_workloads_count_is_timed_whole() -> None:
    """No unlink of the stream is left out as warm-up or cut by the case's budget, whatever
    effort the command holds the other cases to: each costs more the longer the stream."""
    for effort in (TableEffort(), TableEffort(2, 0.02)):
        run, = options_measuring([("unlink", "creation", "cold", 0, (), (), 24_000)], effort=effort)
        assert (run.only, run.files, run.warmup, run.sizes, run.cpu) == ("unlink", 24_000, 0, None, "none")
        assert run.case_seconds >= (run.reps or QUICK_REPS) * 24_000 * WHOLE_STREAM_CAP_NS / 1e9
        assert "--warmup" in run.arguments()


def test_a_tables_new_measurements_replace_the_same_cases_and_add_the_rest() -> None:
    base = table("ext4")
    doc = {"environment": base.environment, "finished": "later", "results": [
        {**entry("fsync", "sequential", "warm", 4096, 700_000).as_result(), "family": "data", "block_size": 4096},
        {**entry("fsync", "sequential", "warm", 48 * MIB, 9e6).as_result(), "family": "data", "block_size": 4096}]}
    grown = base.with_measurements(doc, run_id=41)
    assert len(grown.entries) == len(base.entries) + 1
    assert grown.entry("fsync", "sequential", "warm", 4096).latency_ns.mean == 700_000
    assert grown.entry("fsync", "sequential", "warm", 48 * MIB).latency_ns.mean == 9e6
    assert grown.parameters["added_runs"] == [41] and grown.candidate == "ext4"
    again = CostTable.from_json(grown.to_json())
    assert again.entry("fsync", "sequential", "warm", 48 * MIB) is not None
    assert Pricer(again).data("read", "random", "warm", 65536).ns == pytest.approx(curve(65536))


def synced_write_log(path: Path, mib: int) -> Path:
    """An strace -f -tt -T -y log of a program writing `mib` MiB in 1 MiB writes, then fsync."""
    lines = ['100 10:00:00.000000 openat(AT_FDCWD, "/w/big.bin", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3</w/big.bin> '
             '<0.000020>']
    for i in range(mib):
        lines.append(f'100 10:00:00.{1000 + i * 400:06d} write(3</w/big.bin>, "x"..., 1048576) = 1048576 <0.000300>')
    lines.append('100 10:00:00.900000 fsync(3</w/big.bin>) = 0 <0.040000>')
    lines.append('100 10:00:00.940100 close(3</w/big.bin>) = 0 <0.000010>')
    path.write_text("\n".join(lines) + "\n")
    return path


def copy_log(path: Path, mib: int) -> Path:
    """An strace -f -tt -T -y log of cp copying a file of `mib` MiB with one copy_file_range."""
    size = mib * MIB
    path.write_text(
        '100 10:00:00.000000 openat(AT_FDCWD, "/w/big.bin", O_RDONLY) = 3</w/big.bin> <0.000010>\n'
        '100 10:00:00.000100 openat(AT_FDCWD, "/w/copy.bin", O_WRONLY|O_CREAT|O_EXCL, 0644) = 4</w/copy.bin> '
        '<0.000020>\n'
        f'100 10:00:00.000200 copy_file_range(3</w/big.bin>, NULL, 4</w/copy.bin>, NULL, 9223372035781033984, 0) '
        f'= {size} <0.500000>\n'
        '100 10:00:00.500300 copy_file_range(3</w/big.bin>, NULL, 4</w/copy.bin>, NULL, 9223372035781033984, 0) '
        '= 0 <0.000010>\n'
        '100 10:00:00.500400 close(4</w/copy.bin>) = 0 <0.000010>\n'
        '100 10:00:00.500500 close(3</w/big.bin>) = 0 <0.000010>\n')
    return path


def unlink_log(path: Path, files: int, per_directory: int = 100) -> Path:
    """An strace -f -tt -T -y log of rm unlinking `files` files it never opened (rm -rf), in
    directories of `per_directory` each."""
    lines = [f'100 10:00:{k // 100_000:02d}.{k % 100_000 * 10:06d} unlinkat(3</w/tree/d{k // per_directory}>, '
             f'"f{k}", 0) = 0 <0.000020>' for k in range(files)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow(seconds=75)
def test_bench_for_measures_the_workloads_sync_on_ext4_and_predict_then_uses_it(ext4_fs: ScratchFs, fsbm_home: Path,
                                                                               calibrated: Calibrated,
                                                                               tmp_path: Path) -> None:
    log = synced_write_log(tmp_path / "synced.strace", 24)
    give_calibration(calibrated, fsbm_home / "fsbm.sqlite")  # the log is a plain trace: its band needs one
    quick = run_fsbm("bench", "--fs", ext4_fs.name, *QUICK_BENCH_FLAGS,
                     "--files", "200", "--file-size", "16M")
    assert quick.returncode == 0, quick.stderr
    planned = run_fsbm("bench", "--fs", ext4_fs.name, "--for", str(log), "--dry-run")
    assert planned.returncode == 0, planned.stderr
    assert f"fsync {24 * MIB} B sequential warm" in planned.stdout
    measured = run_fsbm("bench", "--fs", ext4_fs.name, "--for", str(log), "--json", str(tmp_path / "for.json"))
    assert measured.returncode == 0, measured.stderr
    assert "added to the cost table 'ext4'" in measured.stdout
    runs = json.loads((tmp_path / "for.json").read_text())["runs"]
    assert [r["size"] for doc in runs for r in doc["results"] if r["bench"] == "fsync"] == [24 * MIB]
    predicted = run_fsbm("predict", str(log), "--candidates", "ext4", "--json", str(tmp_path / "p.json"))
    assert predicted.returncode == 0, predicted.stderr
    lines = json.loads((tmp_path / "p.json").read_text())["candidates"][0]["lines"]
    sync = [line for line in lines if line["op"] == "fsync"]
    assert sync and f"fsbench fsync sequential warm {24 * MIB} B" in sync[0]["source"]
    again = run_fsbm("bench", "--fs", ext4_fs.name, "--for", str(log), "--dry-run")
    assert again.returncode == 0 and "covers this workload" in again.stdout
    refused = run_fsbm("bench", "--fs", ext4_fs.name, "--for", str(log), "--quick")
    assert refused.returncode != 0 and "without --quick" in refused.stderr and "Traceback" not in refused.stderr
    # A table kept under the scratch filesystem's own name (as `fsbm demo` keeps its tables)
    # is the one --fs grows: here the quick table, before it had the sync.
    with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
        *_, (_, _, first) = store.documents("cost_table", name="ext4")
        store.save_document("cost_table", first, name=ext4_fs.name)
    named = run_fsbm("bench", "--fs", ext4_fs.name, "--for", str(log), "--dry-run")
    assert named.returncode == 0 and f"fsync {24 * MIB} B sequential warm" in named.stdout, named.stdout
    # A copy the 1 GiB image has no room for twice (its source and the copy) is not measured:
    # said why, and the table is kept as it was.
    copying = copy_log(tmp_path / "copy.strace", 600)
    with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
        before = store.newest_document_id("cost_table", ext4_fs.name)
    unroomy = run_fsbm("bench", "--fs", ext4_fs.name, "--for", str(copying))
    assert unroomy.returncode == 0, unroomy.stderr
    assert f"not measured here: copy {600 * MIB} B sequential cold" in unroomy.stderr
    assert "twice its size free" in unroomy.stderr and "the cost table is as it was" in unroomy.stderr
    with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
        assert store.newest_document_id("cost_table", ext4_fs.name) == before
    # A stream of unlinks five times the 200 files the table's unlink ran among: measured at its
    # own count, timed whole, and priced from that case.
    unlinking = unlink_log(tmp_path / "rm.strace", 1000)
    streamed = run_fsbm("bench", "--fs", ext4_fs.name, "--for", str(unlinking), "--json", str(tmp_path / "rm.json"))
    assert streamed.returncode == 0, streamed.stderr
    results = [r for doc in json.loads((tmp_path / "rm.json").read_text())["runs"] for r in doc["results"]]
    assert {(r["bench"], r["cache"], r["files_asked"]) for r in results} == {("unlink", "cold", 1000),
                                                                             ("unlink", "warm", 1000)}
    assert all(r["ops"] == 1000 * r["reps"] for r in results)  # every unlink of every repetition timed
    assert all(doc["environment"]["pinned_cpu"] is None for doc in json.loads((tmp_path / "rm.json").read_text())["runs"])
    priced = run_fsbm("predict", str(unlinking), "--candidates", ext4_fs.name, "--json", str(tmp_path / "rm-p.json"))
    assert priced.returncode == 0, priced.stderr
    lines = json.loads((tmp_path / "rm-p.json").read_text())["candidates"][0]["lines"]
    assert all("among 1000 files" in line["source"] for line in lines if line["op"] == "unlink")
    # A directory of 500 emptied: unlink_entries in directories of 500 entries, every unlink
    # timed, unpinned, and its price the one predict takes.
    emptying = unlink_log(tmp_path / "rm-dir.strace", 500, per_directory=500)
    emptied = run_fsbm("bench", "--fs", ext4_fs.name, "--for", str(emptying), "--json", str(tmp_path / "dir.json"))
    assert emptied.returncode == 0, emptied.stderr
    runs = json.loads((tmp_path / "dir.json").read_text())["runs"]
    results = [r for doc in runs for r in doc["results"]]
    assert {(r["bench"], r["cache"], r["files_asked"]) for r in results} == {("unlink_entries", "cold", 500),
                                                                             ("unlink_entries", "warm", 500)}
    assert all(r["ops"] == r["objects"] * r["reps"] for r in results)
    assert all(doc["environment"]["pinned_cpu"] is None for doc in runs)
    priced = run_fsbm("predict", str(emptying), "--candidates", ext4_fs.name, "--json", str(tmp_path / "dir-p.json"))
    assert priced.returncode == 0, priced.stderr
    lines = json.loads((tmp_path / "dir-p.json").read_text())["candidates"][0]["lines"]
    assert all("emptying directories of 500 entries" in line["source"] for line in lines if line["op"] == "unlink")

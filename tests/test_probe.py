"""The parameter probes against values set on this machine (issue 6): block sizes chosen at
mkfs, readahead set on the loop device, ext2's twelve direct blocks."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsbm.microbench import scratch
from fsbm.microbench.probe import run_probes
from tests.conftest import require_root, run_fsbm


@pytest.fixture
def make_fs(fsbm_home: Path) -> Iterator:
    made = []

    def make(fstype: str, *mkfs_opts: str, size: int = 256 << 20) -> scratch.ScratchFs:
        require_root()
        fs = scratch.create(fstype, size, mkfs_opts=list(mkfs_opts), root=fsbm_home / "scratch")
        made.append(fs.name)
        return fs

    yield make
    for name in made:
        scratch.destroy(name, fsbm_home / "scratch")


@pytest.mark.parametrize("block", [1024, 2048, 4096])
def test_block_size_is_exact_on_ext4_images_made_with_it(make_fs, block: int) -> None:
    fs = make_fs("ext4", "-b", str(block))
    result = run_probes(fs.mount_point, only=["block-size"], quick=True)["probes"]["block-size"]
    assert result["block_size_bytes"] == block
    assert result["transfer_unit_bytes"] == 4096  # Shenoy's spikes: the page the cache moves


@pytest.mark.parametrize("readahead_kb", [64, 512, 2048])
def test_readahead_depth_is_within_25_percent_of_read_ahead_kb(make_fs, readahead_kb: int) -> None:
    fs = make_fs("ext4")
    knob = Path("/sys/block") / Path(fs.loop_device).name / "queue" / "read_ahead_kb"
    knob.write_text(str(readahead_kb))
    result = run_probes(fs.mount_point, only=["readahead"], quick=True)["probes"]["readahead"]
    assert result["readahead_bytes"] == pytest.approx(readahead_kb * 1024, rel=0.25), result
    print(f"read_ahead_kb {readahead_kb}: resident {result['readahead_bytes']}, timed {result['timed_depth_bytes']}")


def test_ext2_has_twelve_direct_blocks_and_ext4_none(make_fs) -> None:
    ext2 = run_probes(make_fs("ext2").mount_point, only=["direct-blocks"])["probes"]["direct-blocks"]
    assert ext2["direct_blocks"] == 12 and not ext2["extent_mapped"]
    ext4 = run_probes(make_fs("ext4").mount_point, only=["direct-blocks"])["probes"]["direct-blocks"]
    assert ext4["direct_blocks"] is None and ext4["extent_mapped"]


def test_the_command_line_probes_and_stores(make_fs, tmp_path: Path) -> None:
    fs = make_fs("ext2")
    out = tmp_path / "probe.json"
    done = run_fsbm("probe", "--target", str(fs.mount_point), "--quick", "--json", str(out))
    assert done.returncode == 0, done.stderr
    probes = json.loads(out.read_text())["probes"]
    # mke2fs picks 1 KiB blocks for a filesystem this small; the kernel says which.
    assert probes["block-size"]["block_size_bytes"] == os.statvfs(fs.mount_point).f_bsize
    assert probes["direct-blocks"]["direct_blocks"] == 12
    assert "probe 1 stored" in done.stdout
    bad = run_fsbm("probe", "--target", str(fs.mount_point), "--only", "frobnicate")
    assert bad.returncode == 2 and "unknown probe frobnicate" in bad.stderr
    assert not [p for p in fs.mount_point.iterdir() if p.name.startswith("fsbm-probe")]


@pytest.mark.parametrize("limit_mib", [256, 1024])
def test_page_cache_size_is_within_15_percent_of_a_memory_cgroup_limit(make_fs, limit_mib: int) -> None:
    fs = make_fs("ext4", size=(limit_mib * 3 // 2 + 256) << 20)
    result = run_probes(fs.mount_point, only=["cache-size"], memory_limit=limit_mib << 20)["probes"]["cache-size"]
    print(f"memory cgroup {limit_mib} MiB: page cache {result['page_cache_bytes'] / 2**20:.0f} MiB (Shenoy; passes "
          f"{[b >> 20 for b in result['page_cache_passes_bytes']]}), {result['binary_search_bytes'] / 2**20:.0f} MiB (Tang, {result['binary_search_tests']} tests) "
          f"in {result['seconds']:.1f} s")
    assert result["cgroup_limit_bytes"] == limit_mib << 20
    assert result["page_cache_bytes"] == pytest.approx(limit_mib << 20, rel=0.15)
    assert result["binary_search_bytes"] == pytest.approx(limit_mib << 20, rel=0.15)
    assert len(result["page_cache_passes_bytes"]) == 3
    assert max(result["page_cache_passes_bytes"]) == result["page_cache_bytes"]


def test_cache_size_outside_a_cgroup_is_skipped_unless_asked(make_fs, tmp_path: Path) -> None:
    fs = make_fs("ext4")
    result = run_probes(fs.mount_point)["probes"]["cache-size"]
    assert "skipped" in result and result["file_bytes_needed"] > 1 << 30
    asked = run_fsbm("probe", "--target", str(fs.mount_point), "--only", "cache-size")
    assert asked.returncode == 1 and "needs" in asked.stderr and "MiB free" in asked.stderr
    assert not list(fs.mount_point.glob("fsbm-probe*"))


def test_name_cache_hits_cost_less_than_misses_and_hold_a_few_thousand_files(make_fs) -> None:
    result = run_probes(make_fs("ext4").mount_point, only=["name-cache"], quick=True)["probes"]["name-cache"]
    print(f"stat: last {result['stat_last_ns']} ns, random warm {result['stat_random_warm_ns']} ns, "
          f"random cold {result['stat_random_cold_ns']} ns over {result['files']} files")
    assert result["caches_hold_all"]
    assert result["stat_random_cold_ns"] > 2 * result["stat_random_warm_ns"]


def test_probe_results_go_into_the_candidates_cost_table(fsbm_home: Path) -> None:
    from fsbm.predictor.cost_table import CostTable
    from fsbm.store import ResultsStore

    require_root()
    assert run_fsbm("fs", "create", "ext2", "--size", "256M", "--name", "e2").returncode == 0
    try:
        first = run_fsbm("probe", "--fs", "e2", "--only", "block-size,direct-blocks", "--quick")
        assert first.returncode == 0 and "no cost table" in first.stdout, first.stderr
        bench = run_fsbm("bench", "--fs", "e2", "--quick", "--only", "stat_file")
        assert bench.returncode == 0, bench.stderr
        with ResultsStore(fsbm_home / "fsbm.sqlite") as store:
            table = CostTable.from_json(store.documents("cost_table", name="ext2")[0][2])
        assert table.parameters["direct_blocks"] == 12 and table.parameters["block_size_bytes"] in (1024, 4096)
        again = run_fsbm("probe", "--fs", "e2", "--only", "direct-blocks")
        assert again.returncode == 0 and "parameters added to cost table 'ext2'" in again.stdout
    finally:
        run_fsbm("fs", "destroy", "e2")

"""fsage on real filesystems: aging fragments ext4 measurably and splits a sequential read into
more requests; the same seed repeats; Ctrl-C leaves a whole tree; aged images can be snapshotted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fsbm.microbench import scratch
from fsbm.microbench.age import AgingOptions, fsage_binary, read_direct, reads_completed, run_aging, sizes_from_listing
from tests.conftest import require_root, run_fsbm


def test_aging_lowers_ext4_layout_score_and_splits_a_sequential_read_into_more_requests(fsbm_home: Path) -> None:
    require_root()
    root = fsbm_home / "scratch"
    fresh = scratch.create("ext4", 512 << 20, name="fresh", root=root)
    aged = scratch.create("ext4", 512 << 20, name="aged", root=root)
    try:
        same_tree = dict(fill_pct=95, max_file="16M", seed=7)
        before = run_aging(fresh.mount_point, AgingOptions(rounds=0, **same_tree))
        after = run_aging(aged.mount_point, AgingOptions(rounds=10, **same_tree))
        assert before["files"] == after["files"] and before["bytes"] == after["bytes"]
        fresh_layout, aged_layout = before["after"], after["after"]
        assert fresh_layout["layout_score"] > 0.995
        assert aged_layout["layout_score"] < fresh_layout["layout_score"] - 0.005
        assert aged_layout["extents_per_file_mean"] > 1.5 * fresh_layout["extents_per_file_mean"]
        assert aged_layout["free_space"]["extents"] > 5 * fresh_layout["free_space"]["extents"]
        # Why an aged tree reads slower: the same bytes, read sequentially from the disk, take
        # more and smaller requests.  (How much slower is the host's disk's to say, and on this
        # one it can be nothing: bench/aging.py times it against the fresh tree.)
        os.sync()
        names = sorted(p.relative_to(fresh.mount_point) for p in fresh.mount_point.rglob("*") if p.is_file())
        requests = {}
        for key, fs in (("fresh", fresh), ("aged", aged)):
            before_reads = reads_completed(fs.loop_device)
            read_direct([fs.mount_point / name for name in names])
            requests[key] = reads_completed(fs.loop_device) - before_reads
        assert requests["aged"] > 1.5 * requests["fresh"], requests
    finally:
        scratch.destroy("fresh", root)
        scratch.destroy("aged", root)


def test_the_same_seed_ages_the_same_way(tmp_path: Path) -> None:
    reports = []
    for k in range(2):
        target = tmp_path / f"t{k}"
        target.mkdir()
        report = run_aging(target, AgingOptions(rounds=1, files=200, max_file="256K", seed=3))
        reports.append((report["files"], report["bytes"],
                        sorted((p.name, p.stat().st_size) for p in target.rglob("f*"))))
    assert reports[0] == reports[1] and reports[0][0] == 200


def test_ctrl_c_stops_between_files_and_leaves_every_file_whole(tmp_path: Path) -> None:
    sizes = [(i % 7 + 1) * 65536 for i in range(600)]
    (tmp_path / "sizes").write_text("".join(f"{s}\n" for s in sizes))
    target = tmp_path / "tree"
    target.mkdir()
    proc = subprocess.Popen([str(fsage_binary()), "--target", str(target), "--sizes", str(tmp_path / "sizes"),
                             "--rounds", "1000", "--output", str(tmp_path / "out.json")], stderr=subprocess.PIPE)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 1
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["interrupted"] and 0 < report["rounds_completed"] < 1000
    on_disk = {p.name: p.stat().st_size for p in target.rglob("f*")}
    assert len(on_disk) == len(sizes)
    assert all(on_disk[f"f{i:07d}"] == size for i, size in enumerate(sizes))


def test_sizes_come_from_an_ls_listing(tmp_path: Path) -> None:
    listing = tmp_path / "ls.txt"
    listing.write_text("total 12\n-rw-r--r-- 1 u g 4096 Jan  1 00:00 a\ndrwxr-xr-x 2 u g 4096 Jan  1 00:00 d\n"
                       "-rw-r--r-- 1 u g 123 Jan  1 00:00 b\n")
    assert sizes_from_listing(listing) == [4096, 123]
    (tmp_path / "bad.txt").write_text("4096 a\nnot a size\n")
    with pytest.raises(Exception, match="bad.txt:2"):
        sizes_from_listing(tmp_path / "bad.txt")


def test_the_command_line_ages_a_scratch_fs_records_it_and_snapshots_it(fsbm_home: Path, tmp_path: Path) -> None:
    require_root()
    assert run_fsbm("fs", "create", "xfs", "--size", "512M", "--name", "x").returncode == 0
    try:
        out = tmp_path / "aging.json"
        done = run_fsbm("age", "--fs", "x", "--files", "300", "--rounds", "2", "--max-file", "1M", "--snapshot",
                        "x-aged", "--json", str(out))
        assert done.returncode == 0, done.stderr
        assert "layout score" in done.stdout and json.loads(out.read_text())["rounds_completed"] == 2
        listing = {fs.name: fs for fs in scratch.list_all(fsbm_home / "scratch")}
        assert listing["x"].aging_state.startswith("aged: Tang appendix E, 2 rounds")
        assert listing["x-aged"].aging_state == listing["x"].aging_state
        assert listing["x-aged"].status == "mounted"
        copied = sorted(p.relative_to(listing["x-aged"].mount_point) for p in listing["x-aged"].mount_point.rglob("f*"))
        original = sorted(p.relative_to(listing["x"].mount_point) for p in listing["x"].mount_point.rglob("f*"))
        assert copied == original and len(copied) == 300
    finally:
        for name in ("x-aged", "x"):
            run_fsbm("fs", "destroy", name)
    assert not os.listdir(fsbm_home / "scratch")


def test_fill_refuses_a_filesystem_fsbm_does_not_own(tmp_path: Path, fsbm_home: Path) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    done = run_fsbm("age", "--target", str(target), "--fill", "50")
    assert done.returncode == 2 and "not an fsbm scratch filesystem" in done.stderr
    assert not any(target.iterdir())


def test_an_interrupted_age_exits_130_and_labels_the_filesystem_partly_aged(
        fsbm_home: Path, tmpfs_fs: scratch.ScratchFs) -> None:
    # Issue 38: it exited 1, and the filesystem kept its old label ("fresh") over a changed tree.
    proc = subprocess.Popen([str(Path(sys.executable).parent / "fsbm"), "age", "--fs", tmpfs_fs.name,
                             "--rounds", "1000", "--files", "300", "--max-file", "64K"],  # rounds, not a full disk
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not any((tmpfs_fs.mount_point / "aged").rglob("f*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "aging interrupted" in stderr and "Traceback" not in stderr
    state = scratch.get(tmpfs_fs.name, fsbm_home / "scratch").aging_state
    assert state.startswith("partly aged") and "rounds done" in state

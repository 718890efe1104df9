"""What the machine did beside a run: the kernel's counters, read before and after."""

from __future__ import annotations

import os
from pathlib import Path

from fsbm.host_activity import Counters, block_device_of, btrfs_unallocated_mib
from fsbm.microbench.scratch import ScratchFs
from fsbm.predictor.judge import target_images_sentence
from fsbm.predictor.unsteady_runs import unsteady_runs_section
from fsbm.predictor.validate import Target, targets_json
from fsbm.units import readable_bytes

MIB = 1 << 20


def _write_synced(path: Path, mib: int) -> None:
    with path.open("wb") as out:
        for _ in range(mib):
            out.write(os.urandom(MIB))
        out.flush()
        os.fsync(out.fileno())


def test_a_loop_mount_is_watched_through_its_own_device(ext4_fs: ScratchFs) -> None:
    """Synced writes on a loop image show as the target's writes, and as the machine's disks'
    too (the image is a file on them), with the dirty memory at the start read."""
    device = block_device_of(ext4_fs.mount_point)
    assert device is not None and device.startswith("loop"), device
    counters = Counters.now(ext4_fs.mount_point)
    _write_synced(ext4_fs.mount_point / "written.bin", 8)
    host = counters.until_now()
    assert host.target_written_mib is not None and host.target_written_mib >= 8, host
    assert host.target_flushes is not None and host.target_flushes >= 1, host  # the fsync's
    assert host.target_discarded_mib is not None
    assert host.disks_written_mib is not None and host.disks_written_mib >= 8, host
    assert host.disks_read_mib is not None and host.disks_read_s is not None
    assert host.disks_flushes is not None and host.dirty_mib_before is not None
    assert host.iowait_s is not None and host.iowait_s >= 0
    assert host.target_unallocated_mib_before is None  # btrfs's alone


def test_a_btrfs_targets_unallocated_space_is_read_at_the_start_and_shrinks_as_chunks_are_taken(
        btrfs_fs: ScratchFs) -> None:
    """btrfs's unallocated space (what decides whether it commits transactions to reclaim
    metadata space): a fresh 512 MiB image has most of it; 200 MiB written and synced take
    data chunks from it; an ext4 target has none to tell."""
    device = block_device_of(btrfs_fs.mount_point)
    fresh = btrfs_unallocated_mib(device)
    assert fresh is not None and 100 < fresh < 512, fresh
    _write_synced(btrfs_fs.mount_point / "written.bin", 200)
    host = Counters.now(btrfs_fs.mount_point).until_now()
    assert host.target_unallocated_mib_before is not None
    assert host.target_unallocated_mib_before <= fresh - 150, (fresh, host.target_unallocated_mib_before)


def test_a_mount_with_no_device_of_its_own_has_no_target_counters(tmpfs_fs: ScratchFs) -> None:
    assert block_device_of(tmpfs_fs.mount_point) is None
    assert Counters.now(tmpfs_fs.mount_point).until_now().target_written_mib is None


def _run(round_: int, seconds: float, beyond_mib: float, kind: str = "replay", writeback_mib: float = 0.0,
         unallocated_mib: float | None = None) -> dict:
    host = {"steal_s": 0.0, "iowait_s": 0.1, "disks_read_mib": 2.0, "disks_read_s": 0.05,
            "disks_written_mib": 10.0 + beyond_mib, "disks_write_s": 0.2, "disks_flushes": 4,
            "target_written_mib": 10.0, "target_discarded_mib": 0.0, "target_flushes": 3,
            "dirty_mib_before": 0.5, "writeback_mib_before": writeback_mib,
            "target_unallocated_mib_before": unallocated_mib}
    return {"round": round_, "program": "kv-wal", "target": "btrfs fresh", "kind": kind, "seconds": seconds,
            "host": host}


def test_the_runs_that_moved_most_are_shown_fastest_and_slowest_with_the_host_beside() -> None:
    records = [_run(0, 0.15, 0.0), _run(1, 0.38, 120.0, writeback_mib=6.0, unallocated_mib=240.0), _run(2, 0.16, 0.0),
               _run(0, 1.0, 0.0, "real"), _run(1, 1.1, 0.0, "real"), _run(2, 1.05, 0.0, "real")]
    text = "\n".join(unsteady_runs_section(records))
    assert "| kv-wal | btrfs fresh | replay | fastest | 0.150 | 1 |" in text
    assert "| kv-wal | btrfs fresh | replay | slowest (2.53x) | 0.380 | 2 | disks read 2.0 MiB, the reads waiting 0.05 s; disks wrote 130.0 MiB, 120.0 beyond" in text
    assert "0.5 MiB dirty and 6.0 MiB under writeback at the start; btrfs 240 MiB unallocated |" in text
    assert "0.5 MiB dirty at the start |" in text  # the fastest run: nothing under writeback
    assert "| real |" not in text  # 1.1x: steady enough to leave out


def test_records_from_before_the_host_was_watched_show_nothing() -> None:
    records = [{**_run(r, s, 0.0), "host": None} for r, s in enumerate((0.1, 0.5, 0.2))]
    assert unsteady_runs_section(records) == []


def test_a_validation_document_says_how_large_its_images_were_and_how_much_btrfs_had_unallocated(
        ext4_fs: ScratchFs, btrfs_fs: ScratchFs) -> None:
    """The targets keep their devices' sizes (read from the loop devices themselves), and the
    header sentence gives them with the range of btrfs's unallocated space over its runs."""
    targets = targets_json([Target("ext4 fresh", "ext4", ext4_fs.mount_point, "fresh"),
                            Target("btrfs fresh", "btrfs", btrfs_fs.mount_point, "fresh")])
    sizes = [t["device_bytes"] for t in targets]
    assert all(size and size % (1 << 20) == 0 for size in sizes), sizes
    records = [_run(0, 0.2, 0.0, unallocated_mib=300.0), _run(1, 0.2, 0.0, unallocated_mib=280.0),
               {**_run(0, 0.1, 0.0), "target": "ext4 fresh"}]
    said = target_images_sentence({"targets": targets, "records": records})
    size = readable_bytes(sizes[0]) if sizes[0] == sizes[1] else None
    assert said.startswith(f"Targets: fresh direct-I/O loop images of {size} each" if size else
                           "Targets: fresh direct-I/O loop images of "), said
    assert said.endswith("; btrfs fresh had 280 MiB to 300 MiB of its device unallocated as its runs began."), said
    # A document from before the sizes were kept, its runs unwatched, says only what the images were.
    old = [{k: v for k, v in t.items() if k != "device_bytes"} for t in targets]
    assert target_images_sentence({"targets": old, "records": [{**r, "host": None} for r in records]}) == \
        "Targets: fresh direct-I/O loop images."

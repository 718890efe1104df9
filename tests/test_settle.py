"""Settling what a filesystem deferred after a deletion, before a cold run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fsbm.microbench.scratch import ScratchFs
from fsbm.microbench.settle import settle_deferred_frees

MIB = 1 << 20


def _data_allocated(mount: Path) -> int:
    """The bytes btrfs has allocated to data block groups (`btrfs filesystem df -b`)."""
    out = subprocess.run(["btrfs", "filesystem", "df", "-b", str(mount)], capture_output=True, text=True,
                         check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("Data"))
    return int(line.split("total=")[1].split(",")[0])


def test_btrfs_block_groups_a_deletion_emptied_are_removed_at_once(btrfs_fs: ScratchFs) -> None:
    mount = btrfs_fs.mount_point
    big = mount / "big.bin"
    with big.open("wb") as out:
        for _ in range(200):
            out.write(os.urandom(MIB))
    os.sync()
    grown = _data_allocated(mount)
    big.unlink()
    os.sync()
    assert settle_deferred_frees(mount / "anywhere" / "beneath") is True
    assert _data_allocated(mount) < grown - 100 * MIB, (grown, _data_allocated(mount))


def test_other_filesystems_have_nothing_to_settle(ext4_fs: ScratchFs, tmpfs_fs: ScratchFs) -> None:
    assert settle_deferred_frees(ext4_fs.mount_point) is False
    assert settle_deferred_frees(tmpfs_fs.mount_point) is False

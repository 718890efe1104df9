"""Settle what a filesystem deferred after a deletion, so that a cold run starts from it done.

btrfs removes the block groups a deletion emptied only later, in its cleaner after a later
transaction commit (about 30 s on), and until then they stay allocated.  Where that leaves
little of the device unallocated, btrfs reclaims metadata space by committing whole
transactions while a program writes: a sync-bound program that follows a large deletion runs
with many full commits and cache flushes, one that follows none without them
(docs/model-evidence.md measures it on kv-wal).  A validation's runs follow other programs'
deletions on the same image, so unsettled, a run's time would depend on what ran before it.
A balance filtered to empty data block groups (`btrfs balance start -dusage=0`) removes them
at once, in tens of milliseconds, and moves no data.  Chunks a deletion left partly used it
does not give back: room for those is the image's size (api/validation.py, IMAGE_BYTES).

Other filesystems defer nothing of the kind that a sync leaves; settling them is a no-op.
"""

from __future__ import annotations

import os
from pathlib import Path

from fsbm.microbench.mounts import mount_containing
from fsbm.microbench.system import require_program, run


def settle_deferred_frees(path: Path) -> bool:
    """Remove the block groups earlier deletions emptied on the btrfs `path` lies on (root),
    after a sync that commits those deletions; whether that filesystem is one to settle
    (False: not btrfs, and nothing done)."""
    found = mount_containing(path)
    if found is None or found.fstype != "btrfs":
        return False
    os.sync()
    run([require_program("btrfs", "btrfs-progs"), "balance", "start", "-dusage=0", found.mount_point])
    return True

"""The cases a workload needs measured in its own regime (`fsbm bench --for PROFILE`).

A quick cost table measures requests up to 1 MiB and syncs after 4 KiB.  A workload that
writes 256 MiB and then syncs, or copies 40 MiB files, is priced from beyond those sizes:
its sync as the rest written through by direct writes, its copy along a curve fitted to
small files.  The writeback a sync starts runs in large extents, which direct writes of
1 MiB do not show (on btrfs they cost several times as much a byte).  So the profile is
priced once on the candidate's table, every case a price reached beyond the table's
largest measured size is kept (pricing.Unmeasured), and fsbench measures exactly those, at
the workload's size (at most fsbench's largest request; a copy, whole, where the target has
room for it and its source).  The table grows by those cases
and is kept as the candidate's newest, so a second profile in the same regime finds them
measured.
"""

from __future__ import annotations

from fsbm.documents import Profile
from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.model import STARTS, price_workload
from fsbm.predictor.pricing import Pricer, Unmeasured


def unmeasured_cases(profile: Profile, table: CostTable, cache_bytes: int) -> list[Unmeasured]:
    """The cases `profile` is priced from beyond what `table` measured, over every start
    (cold and warm) and with the page cache both at `cache_bytes` and absent (the report's
    cache sweep prices every read cold at its small end)."""
    pricer = Pricer(table)
    for start in STARTS:
        for cache in (cache_bytes, 0):
            price_workload(profile, pricer, cache_bytes=cache, start=start)
    return sorted(pricer.unmeasured)

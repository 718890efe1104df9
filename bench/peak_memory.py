"""A process's peak resident memory, for the scripts the benchmarks run in processes of
their own (each script starts with SOURCE, so a Dask worker can run it too)."""

from __future__ import annotations

import inspect


def peak_rss_mib(pid: int | str = "self") -> float:
    """This process's peak resident memory (VmHWM), MiB, or process `pid`'s.  Not ru_maxrss: a
    process keeps in it the size of the one it was forked from (the benchmark, holding a whole
    table) from before the exec."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


SOURCE = inspect.getsource(peak_rss_mib)

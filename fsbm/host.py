"""What this machine gives the process now: its processors and the memory it may use.
Asked where a choice depends on them (how a table is read, what a page cache can hold)."""

from __future__ import annotations

import os
from pathlib import Path

from fsbm.errors import UsageError


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def memory_available_bytes() -> int:
    """What a page cache can grow to here now: the kernel's MemAvailable, in whole MiB (it moves
    by pages from one moment to the next; a prediction should not)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return (int(line.split()[1]) >> 10) << 20
    raise UsageError("cannot read MemAvailable from /proc/meminfo; give the page-cache size")

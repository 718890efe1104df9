"""Running a command with its syncs made no-ops (libeatmydata, Debian's eatmydata), to
measure the CPU time it spends outside the filesystem.

Why: the time outside the filesystem starts from an untraced run's CPU time less what its
calls take (predictor/outside.py), and a sync's share of that CPU time is the one part
fsbench cannot price.  An fdatasync on a disk filesystem writes the file back in the
caller, and this VM charges the caller the interrupts and exits around it: perf put
sqlite's 903 syncs at 0.26 s of CPU time on ext4, 290 us each, where fsbench's fsync of
4 KiB had measured 70-85 us in the same hour and 410-580 us in another.  Left in, that
error lands outside the filesystem whole: sqlite's outside time came to 0.31 s where tmpfs,
which has nothing to sync, shows 0.12.  With the syncs skipped, its runs took 0.25-0.31 s
of CPU time on ext4 against 0.48-0.60, and nothing of a sync is left to
subtract.  The library makes fsync, fdatasync, sync, syncfs, msync and sync_file_range
return at once and drops O_SYNC and O_DSYNC from opens; a program that makes its calls
without libc (static binaries, raw syscall) keeps its syncs, which the CPU time then holds
as before.
"""

from __future__ import annotations

import glob
import os

LIBRARY_PATTERNS = ("/usr/lib/*/libeatmydata.so", "/usr/lib/libeatmydata.so", "/usr/lib64/libeatmydata.so",
                    "/usr/local/lib/libeatmydata.so")


def sync_skipping_library() -> str | None:
    """The path of libeatmydata on this machine, or None where it is not installed."""
    for pattern in LIBRARY_PATTERNS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def environment_without_syncs() -> dict[str, str] | None:
    """This process's environment with libeatmydata preloaded ahead of any library already
    preloaded, or None where the library is missing (the caller then runs with syncs)."""
    library = sync_skipping_library()
    if library is None:
        return None
    preloaded = os.environ.get("LD_PRELOAD")
    return {**os.environ, "LD_PRELOAD": f"{library}:{preloaded}" if preloaded else library}

#!/usr/bin/env python3
"""What memory handed back to the host costs a cold run, with and without fsbm holding it.

A cold run as `fsbm validate` makes it: the caches dropped, then dd writes --mib MiB to a
file on the filesystem under --target and fsyncs it.  Three ways, in interleaved rounds:

- *right after*: started as soon as the drop freed the last run's pages (the pages are still
  the guest's: the named baseline);
- *after a pause*: started --pause seconds after the drop, time enough for the guest to report
  the freed pages to its host (virtio-balloon free page reporting), as a run that follows a
  program using less memory, or a pause, does;
- *after a pause, held*: the same, inside microbench.freed_memory.held (--hold-freed-memory).

Prints each way's median wall and system time over the rounds, their spread, and each as a
ratio to the baseline.  Where this machine reports no freed memory, says so; where it does,
the pause costs 3-8 us of system time per 4 KiB here, and holding should bring the ratio
back near 1.  Needs root (drop_caches, the kernel's setting).

Usage: .venv/bin/python bench/freed_memory.py --target DIR [--mib 256] [--rounds 5] [--pause 4]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsbm.microbench import cache, freed_memory  # noqa: E402


def cold_write(path: Path, mib: int, pause_s: float) -> tuple[float, float]:
    """One cold run: wall and system seconds of dd writing `mib` MiB with an fsync."""
    path.unlink(missing_ok=True)
    cache.drop_all()
    time.sleep(pause_s)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime
    started = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={mib}", "conv=fsync", "status=none"],
                   check=True)
    wall = time.perf_counter() - started
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime - before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, required=True, help="a directory on the filesystem to write to")
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pause", type=float, default=4.0)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root: it drops the caches and sets a kernel setting", file=sys.stderr)
        return 2
    state = freed_memory.state()
    print(f"freed memory here: {state}")
    if state == freed_memory.NOT_REPORTED:
        print("nothing to measure: this machine hands no freed memory back")
        return 0
    path = args.target / "fsbm-freed-memory.bin"
    ways: dict[str, list[tuple[float, float]]] = {"right after": [], "after a pause": [], "after a pause, held": []}
    try:
        for _ in range(args.rounds):
            cold_write(path, args.mib, 0)  # each round starts from the same memory: the pages just written
            ways["right after"].append(cold_write(path, args.mib, 0))
            ways["after a pause"].append(cold_write(path, args.mib, args.pause))
            with freed_memory.held(warm_bytes=0):
                cold_write(path, args.mib, 0)  # the pages the pause handed back, the guest's again
                ways["after a pause, held"].append(cold_write(path, args.mib, args.pause))
    finally:
        path.unlink(missing_ok=True)
    base = statistics.median(w for w, _ in ways["right after"])
    print(f"dd of {args.mib} MiB with an fsync, cold, {args.rounds} rounds; baseline: right after the drop")
    print(f"{'way':22s} {'wall, median (range)':>26s} {'system s':>9s} {'x baseline':>11s}")
    for way, runs in ways.items():
        walls, systems = [w for w, _ in runs], [s for _, s in runs]
        wall = statistics.median(walls)
        print(f"{way:22s} {wall:8.3f} s ({min(walls):.3f}-{max(walls):.3f}) {statistics.median(systems):9.3f} "
              f"{wall / base:10.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

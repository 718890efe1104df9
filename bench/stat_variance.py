#!/usr/bin/env python3
"""Where the spread of fsbench's warm stat comes from: the timer, the scheduler, or the host.

fsbench reports a case's RSD as the spread of its repetitions' means (10 repetitions of
100,000 warm stats, ~0.1 s each).  Three explanations are measured in one run, in
interleaved rounds, on one scratch ext4:

- **the timer**: its overhead and granularity per timed call (fsbench's own figure); a
  constant per call cannot move a mean of 100,000 calls by percents;
- **the scheduler's placement**: fsbench pinned to the last CPU (its default), pinned to
  the first, and not pinned;
- **the host's CPU speed**: a control with no system call and no filesystem, SHA-256 over
  a buffer in cache, timed in repetitions of the same length as fsbench's.  If its spread
  is as large as the stat's, the spread is the CPU's (frequency, steal);
- **the kernel's entry and exit**: a bare system call (getppid) in the same repetitions;
- **the host's caches and memory**: the same stat over 1,000 files, whose dentries and
  inodes stay in the core's own caches, against 10,000, whose (about 13 MiB) live in the
  last-level cache; and two controls of random reads, of a 12 MiB array (in that cache too)
  and of a 256 MiB one (in memory).  On a shared host the last-level cache is shared with
  other tenants, and a virtual CPU may move between cache domains.
Each run also records the CPU time the hypervisor took (steal, from /proc/stat) and the
involuntary context switches of the run.

Usage (root):  .venv/bin/python bench/stat_variance.py [--rounds 8] [--json OUT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from fsbm.microbench import scratch
from fsbm.microbench.fsbench import fsbench_binary

REPS = 10


def steal_ticks() -> int:
    """The hypervisor's steal time over all CPUs, in clock ticks (/proc/stat, 8th field)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()
    return int(fields[8])


def stat_run(mnt: Path, cpu: str, files: int) -> dict[str, float]:
    """One fsbench warm stat case: its RSD and mean, with the steal and switches it saw."""
    before_steal, before = steal_ticks(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([str(fsbench_binary()), "--target", str(mnt), "--only", "stat_file", "--orders", "random",
                           "--caches", "warm", "--files", str(files), "--reps", str(REPS), "--cpu", cpu],
                          capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    doc = json.loads(done.stdout)
    [result] = doc["results"]
    return {"rsd": result["latency_ns"]["rsd"], "mean_ns": result["latency_ns"]["mean"],
            "timer_overhead_ns": doc["environment"]["timer_overhead_ns"],
            "steal_ticks": steal_ticks() - before_steal, "involuntary_switches": after.ru_nivcsw - before.ru_nivcsw}


def control_run(work: Callable[[], object], seconds_per_rep: float = 0.1) -> dict[str, float]:
    """`work` repeated in REPS repetitions of about `seconds_per_rep` each: their spread."""
    start = time.perf_counter()
    calibration = 0
    while time.perf_counter() - start < 0.05:
        work()
        calibration += 1
    per_rep = max(int(calibration * seconds_per_rep / 0.05), 1)
    before_steal = steal_ticks()
    means = []
    for _ in range(REPS):
        t0 = time.perf_counter_ns()
        for _ in range(per_rep):
            work()
        means.append((time.perf_counter_ns() - t0) / per_rep)
    mean = statistics.fmean(means)
    return {"rsd": statistics.stdev(means) / mean, "mean_ns": mean, "steal_ticks": steal_ticks() - before_steal}


def cpu_work() -> Callable[[], object]:
    """SHA-256 of a 64 KiB buffer: in the CPU's own caches, no system call."""
    buffer = os.urandom(64 << 10)
    return lambda: hashlib.sha256(buffer).digest()


def random_reads(mib: int) -> Callable[[], object]:
    """1,000,000 random 8-byte reads of an array of `mib` MiB: at 12 MiB the array lives in
    the last-level cache, as 10,000 files' dentries and inodes (about 13 MiB) do; at 256 MiB
    most reads miss it and go to memory."""
    rng = np.random.default_rng(38)
    array = rng.integers(0, 1 << 30, size=(mib << 20) // 8)
    index = rng.integers(0, len(array), size=1_000_000)
    return lambda: np.take(array, index).sum()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (a loop device)")
    last = str((os.cpu_count() or 1) - 1)
    conditions = {f"stat 10,000 files, pinned to CPU {last}": (last, 10_000),
                  "stat 10,000 files, pinned to CPU 0": ("0", 10_000),
                  "stat 10,000 files, not pinned": ("none", 10_000),
                  f"stat 1,000 files, pinned to CPU {last}": (last, 1_000)}
    controls = {"control: SHA-256 in cache": cpu_work(), "control: getppid (bare system call)": os.getppid,
                "control: random reads of 12 MiB (LLC)": random_reads(12),
                "control: random reads of 256 MiB (memory)": random_reads(256)}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in [*conditions, *controls]}
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-") as tmp:
        fs = scratch.create("ext4", 1 << 30, root=Path(tmp))
        try:
            for round_number in range(args.rounds):
                order = list(conditions.items())
                if round_number % 2:
                    order.reverse()
                for name, (cpu, files) in order:
                    runs[name].append(stat_run(fs.mount_point, cpu, files))
                for name, work in controls.items():
                    runs[name].append(control_run(work))
        finally:
            scratch.destroy(fs.name, Path(tmp))
    print(f"Spread of {REPS} repetitions' means (RSD), {args.rounds} interleaved rounds each\n")
    print(f"{'condition':40} {'median RSD':>10} {'range':>15} {'mean':>10} {'steal/run':>10} {'inv. switches':>14}")
    for name, values in runs.items():
        rsds = [v["rsd"] * 100 for v in values]
        switches = statistics.median(v.get("involuntary_switches", float("nan")) for v in values)
        print(f"{name:40} {statistics.median(rsds):>9.2f}% {min(rsds):>6.2f}-{max(rsds):.2f}% "
              f"{statistics.median(v['mean_ns'] for v in values):>7.0f} ns "
              f"{statistics.median(v['steal_ticks'] for v in values):>10.0f} {switches:>14.0f}")
    overhead = statistics.median(v["timer_overhead_ns"] for v in runs[next(iter(conditions))])
    print(f"\ntimer overhead: {overhead:.0f} ns a call")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

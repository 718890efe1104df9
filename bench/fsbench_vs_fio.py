#!/usr/bin/env python3
"""fsbench against fio (the baseline), measured side by side in one run.

Same filesystem (a fresh loop image of each type --fs names; ext4 unless told), same file,
size, pattern, cache state, one CPU and the psync engine (for the write, fio appends to an
empty file, extending it as fsbench's allocating write does, rather than writing into a
pre-sized sparse file): the p50 latency fsbench reports over the p50 fio reports should be
within 0.9-1.1, and so should the means where fsbench flags the case's latencies bimodal:
the median of two modes falls in either from one run to the next (btrfs's cold 1 MiB reads,
under fio as under fsbench), and then says nothing of the tools. Both use page-aligned
buffers (fsbench: posix_memalign; fio: iomem_align=4096), as DESIGN.md asks; fio's default
malloc buffer is not cache-line aligned, and on this machine the kernel copies into it about
2x slower, which is Wang et al.'s alignment pitfall, so default fio is printed as a separate
row. Both tools start every run with dirty data written back (`sync`), as fsbench does for
each data repetition. The cases run in interleaved rounds (fsbench, fio, fsbench, fio, ...)
in alternating order (ABBA), so a shared machine's drift hits both tools alike and a trend
across rounds cancels; the ratio is taken of the medians over the rounds. Each case starts
with one discarded warm-up round of each tool (what the previous case left behind otherwise
lands in the first round). Also prints the timer overhead (target < 50 ns) and the RSD of
repeated warm stats (target < 5%), beside the RSD of a control whose working set lives in
the last-level cache as the stats' does (bench/stat_variance.py): on a shared host that
cache is the source of the stats' spread, and the control says how large it is in this run.
A stat RSD over 5% but under the control's is the host's, and is reported so.

Usage (root):  .venv/bin/python bench/fsbench_vs_fio.py [--rounds 11] [--fs ext4,xfs,btrfs] [--json OUT]
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fsbm.microbench import cache, scratch
from fsbm.microbench.fsbench import fsbench_binary
from stat_variance import control_run, random_reads

FILE_SIZE = 512 << 20


@dataclass(frozen=True)
class Case:
    name: str
    fio_rw: str
    block: int
    ops: int
    cache: str          # cold | warm
    reads_shared: bool  # reads the shared file (else writes a new one)
    fsbench_bench: str
    fsbench_order: str


CASES = (
    Case("4 KiB random read, cold", "randread", 4096, 2000, "cold", True, "read", "random"),
    Case("4 KiB random read, warm", "randread", 4096, 20000, "warm", True, "read", "random"),
    Case("1 MiB sequential read, cold", "read", 1 << 20, 400, "cold", True, "read", "sequential"),
    Case("1 MiB sequential write (allocating)", "write", 1 << 20, 400, "warm", False, "write", "sequential"),
)


def run_json(command: list[str]) -> dict:
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"{command[0]} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


@dataclass(frozen=True)
class Latency:
    """One run's latencies: their median and mean, and whether fsbench found two modes."""

    p50_ns: float
    mean_ns: float
    bimodal: bool = False


def fsbench_latency(case: Case, mnt: Path, shared: Path, cpu: int) -> Latency:
    os.sync()
    command = [str(fsbench_binary()), "--target", str(mnt), "--only", case.fsbench_bench,
               "--sizes", str(case.block), "--orders", case.fsbench_order, "--caches", case.cache,
               "--ops", str(case.ops), "--reps", "1", "--warmup", "0", "--case-seconds", "600", "--min-rep-seconds", "0",
               "--file-size", str(FILE_SIZE), "--cpu", str(cpu)]
    if case.reads_shared:
        command += ["--data-file", str(shared)]
    doc = run_json(command)
    [result] = doc["results"]
    return Latency(float(result["latency_ns"]["p50"]), float(result["latency_ns"]["mean"]), bool(result.get("bimodal")))


def fio_latency(case: Case, mnt: Path, shared: Path, cpu: int, aligned: bool = True) -> Latency:
    target = shared if case.reads_shared else mnt / "fio-write.dat"
    if not case.reads_shared:
        target.unlink(missing_ok=True)
    elif case.cache == "warm":
        cache.warm_file(shared)  # fsbench warms its file the same way before timing
    command = ["fio", "--output-format=json", "--name=cmp", f"--filename={target}", f"--rw={case.fio_rw}",
               f"--bs={case.block}", "--ioengine=psync", f"--size={FILE_SIZE}", f"--number_ios={case.ops}",
               f"--cpus_allowed={cpu}", "--randrepeat=0", "--norandommap=0", "--fallocate=none",
               f"--invalidate={1 if case.cache == 'cold' else 0}", "--end_fsync=0", "--fadvise_hint=0"]
    if aligned:
        command.append("--iomem_align=4096")
    if not case.reads_shared:
        command.append("--file_append=1")
    os.sync()
    job = run_json(command)["jobs"][0]
    side = job["write" if case.fio_rw == "write" else "read"]
    if not case.reads_shared:
        target.unlink(missing_ok=True)
    return Latency(float(side["clat_ns"]["percentile"]["50.000000"]), float(side["clat_ns"]["mean"]))


def timer_and_stat_rsd(mnt: Path, cpu: int, runs: int = 3) -> tuple[float, list[float], list[float]]:
    """Timer overhead, the RSD of 10 repetitions of 10,000 warm stats `runs` times, and
    after each the RSD of the last-level-cache control."""
    overhead, rsds, controls = 0.0, [], []
    llc = random_reads(12)
    for _ in range(runs):
        doc = run_json([str(fsbench_binary()), "--target", str(mnt), "--only", "stat_file", "--orders", "random",
                        "--caches", "warm", "--files", "10000", "--reps", "10", "--cpu", str(cpu)])
        [result] = doc["results"]
        overhead = float(doc["environment"]["timer_overhead_ns"])
        rsds.append(float(result["latency_ns"]["rsd"]))
        controls.append(control_run(llc)["rsd"])
    return overhead, rsds, controls


def compare(case: Case, mnt: Path, shared: Path, cpu: int, rounds: int) -> dict:
    """One case, fsbench and fio in `rounds` interleaved rounds (ABBA) after a discarded
    warm-up round of each: both tools' p50s and means, the ratios of their medians over
    the rounds, and which ratio the case is judged by."""
    ours: list[Latency] = []
    theirs: list[Latency] = []
    fsbench_latency(case, mnt, shared, cpu)  # warm-up round, discarded
    fio_latency(case, mnt, shared, cpu)
    for round_number in range(rounds):
        if round_number % 2 == 0:
            ours.append(fsbench_latency(case, mnt, shared, cpu))
            theirs.append(fio_latency(case, mnt, shared, cpu))
        else:
            theirs.append(fio_latency(case, mnt, shared, cpu))
            ours.append(fsbench_latency(case, mnt, shared, cpu))
    bimodal = sum(o.bimodal for o in ours)
    ratio = statistics.median(o.p50_ns for o in ours) / statistics.median(t.p50_ns for t in theirs)
    mean_ratio = statistics.median(o.mean_ns for o in ours) / statistics.median(t.mean_ns for t in theirs)
    return {"fsbench_p50_ns": [o.p50_ns for o in ours], "fio_p50_ns": [t.p50_ns for t in theirs],
            "fsbench_mean_ns": [o.mean_ns for o in ours], "fio_mean_ns": [t.mean_ns for t in theirs],
            "ratio": ratio, "mean_ratio": mean_ratio, "bimodal_rounds": bimodal,
            "judged_by": "mean" if bimodal else "p50", "judged_ratio": mean_ratio if bimodal else ratio,
            "fio_default_buffers_p50_ns": fio_latency(case, mnt, shared, cpu, aligned=False).p50_ns}


def measure_on(fstype: str, rounds: int, cpu: int, stats: bool) -> tuple[dict, tuple | None]:
    """Every case on a fresh 2 GiB scratch filesystem of `fstype`, and, if `stats`, the timer
    overhead and the warm stats' RSD there."""
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-") as tmp:
        fs = scratch.create(fstype, 2 << 30, root=Path(tmp))
        try:
            shared = fs.mount_point / "shared.dat"
            subprocess.run(["fio", "--name=layout", f"--filename={shared}", "--rw=write", "--bs=1M",
                            f"--size={FILE_SIZE}", "--end_fsync=1", "--output=/dev/null"], check=True)
            figures = {case.name: compare(case, fs.mount_point, shared, cpu, rounds) for case in CASES}
            return figures, timer_and_stat_rsd(fs.mount_point, cpu) if stats else None
        finally:
            scratch.destroy(fs.name, Path(tmp))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--fs", default="ext4", help="filesystem types to compare on, e.g. ext4,xfs,btrfs")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    if os.geteuid() != 0 or not shutil.which("fio"):
        sys.exit("needs root (loop devices) and fio (make deps)")
    fstypes = [t for t in args.fs.split(",") if t]
    cpu = os.cpu_count() - 1 if os.cpu_count() else 0
    by_fs, stats = {}, None
    for i, fstype in enumerate(fstypes):
        by_fs[fstype], measured = measure_on(fstype, args.rounds, cpu, stats=i == 0)
        if i == 0:
            stats = measured
    misses = 0
    print(f"fsbench vs fio (baseline), same file, psync, CPU {cpu}, {args.rounds} interleaved rounds, medians; "
          f"target 0.9-1.1 for the p50s' ratio, or for the means' where fsbench found two modes\n")
    for fstype, figures in by_fs.items():
        print(f"{fstype}:")
        print(f"  {'case':38} {'fsbench p50':>12} {'fio p50':>12} {'p50s':>6} {'means':>6}  judged by   "
              f"(fio, default buffers)")
        for name, f in figures.items():
            ok = 0.9 <= f["judged_ratio"] <= 1.1
            misses += not ok
            how = f"the means ({f['bimodal_rounds']} of {args.rounds} bimodal)" if f["judged_by"] == "mean" else "the p50s"
            print(f"  {name:38} {statistics.median(f['fsbench_p50_ns']) / 1e3:>9.2f} us "
                  f"{statistics.median(f['fio_p50_ns']) / 1e3:>9.2f} us {f['ratio']:>6.3f} {f['mean_ratio']:>6.3f}  "
                  f"{how}: {'ok' if ok else 'MISSED'}   ({f['fio_default_buffers_p50_ns'] / 1e3:.2f} us)")
    overhead, rsds, controls = stats
    rsd, floor = statistics.median(rsds), statistics.median(controls)
    verdict = "ok" if rsd < 0.05 else "the host's (at or under the control)" if rsd <= floor else "MISSED"
    print(f"\non {fstypes[0]}: timer overhead: {overhead:.0f} ns (target < 50 ns) {'ok' if overhead < 50 else 'MISSED'}")
    print(f"warm stat RSD over 10 repetitions, 3 runs: {', '.join(f'{r * 100:.2f}%' for r in rsds)}; "
          f"median {rsd * 100:.2f}% (target < 5%) {verdict}")
    print(f"  control, random reads of 12 MiB (in the last-level cache, as the stats' inodes are): "
          f"{', '.join(f'{r * 100:.2f}%' for r in controls)}; median {floor * 100:.2f}%")
    misses += (overhead >= 50) + (verdict == "MISSED")
    if args.json:
        args.json.write_text(json.dumps({"filesystems": by_fs, "timer_overhead_ns": overhead, "warm_stat_rsds": rsds,
                                         "llc_control_rsds": controls}, indent=1))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())

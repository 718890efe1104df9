#!/usr/bin/env python3
"""How far two quick cost tables of one filesystem differ, measured in rounds and not.

A quick table is one fsbench run of every case, a few repetitions each.  On a shared host
a case measured while a neighbour is busy for a few seconds is slow in every repetition,
since they run back to back, and the next table differs by that much; and on btrfs some
cases cost what the case before them left behind.  `fsbench --rounds` takes a share of
every case's repetitions per pass over the suite, each pass in a new order, so a case's
mean is over repetitions minutes apart, after different cases.

This runs quick tables on one scratch filesystem (direct-I/O loop image), in pairs whose
order alternates: the baseline (`--rounds 1`, every case's repetitions together) and the
rounds (`--rounds` = `--reps`, fsbench's default).  Each mode's consecutive tables are
compared case by case.  Printed per mode: the median and 90th percentile of how far a
case's price moved between consecutive tables, the share of cases within 5%, and the wall
time of a table; and the ratios of the rounds' figures to the baseline's, measured in the
same run.  With --profiles (a validation's JSON) the same for the modelled filesystem time
of each of its programs, as the predictor prices them from the tables.

Usage (root):  .venv/bin/python bench/table_rounds.py [--fs ext4] [--pairs 4] [--profiles VALIDATION.json]
               [--keep DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fsbm.documents import Profile
from fsbm.host import memory_available_bytes
from fsbm.microbench import scratch
from fsbm.microbench.fsbench import QUICK_REPS, fsbench_binary
from fsbm.predictor.cost_table import CostTable
from fsbm.predictor.model import price_workload
from fsbm.predictor.pricing import Pricer

MODES = {"baseline (--rounds 1)": 1, f"rounds (--rounds {QUICK_REPS})": QUICK_REPS}


def quick_table(mount: Path, rounds: int, seed: int, keep: Path | None) -> tuple[CostTable, float]:
    """One quick fsbench run in `rounds` rounds, as the predictor prices it, and its wall time;
    its document kept in `keep` where given."""
    started = time.monotonic()
    done = subprocess.run([str(fsbench_binary()), "--target", str(mount), "--quick", "--rounds", str(rounds),
                           "--seed", str(seed)], capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"fsbench failed: {done.stderr.strip()}")
    if keep:
        (keep / f"rounds{rounds}-seed{seed}.json").write_text(done.stdout)
    return CostTable.from_fsbench(json.loads(done.stdout)), time.monotonic() - started


def case_moves(first: CostTable, second: CostTable) -> list[float]:
    """How far each case both tables measured moved between them: |second / first - 1|."""
    prices = {e.key: e.latency_ns.mean for e in first.entries if e.latency_ns.mean > 0}
    return [abs(e.latency_ns.mean / prices[e.key] - 1) for e in second.entries if e.key in prices]


def program_times(table: CostTable, profiles: list[Profile], cache_bytes: int) -> list[float]:
    """Each program's modelled filesystem time (ns) as the predictor prices it from `table`."""
    pricer = Pricer(table)
    return [price_workload(p, pricer, cache_bytes=cache_bytes).total_ns for p in profiles]


def moves_summary(moved: list[float]) -> dict[str, float]:
    """The median, 90th percentile and largest of how far things moved, and the share within 5%."""
    moved = sorted(moved)
    return {"comparisons": len(moved), "median_move": statistics.median(moved),
            "p90_move": moved[int(0.9 * (len(moved) - 1))], "largest_move": moved[-1],
            "within_5pct": sum(m <= 0.05 for m in moved) / len(moved)}


def summary(tables: list[tuple[CostTable, float]], profiles: list[Profile]) -> dict[str, Any]:
    """A mode's consecutive tables compared: case by case, and (with `profiles`) program by
    program, each table priced once."""
    pairs = list(zip(tables, tables[1:]))
    result = {"tables": len(tables), **moves_summary([m for (a, _), (b, _) in pairs for m in case_moves(a, b)]),
              "seconds_per_table": statistics.median(seconds for _, seconds in tables)}
    if profiles:
        cache = memory_available_bytes()
        times = [program_times(table, profiles, cache) for table, _ in tables]
        result["programs"] = moves_summary([abs(b / a - 1) for first, second in zip(times, times[1:])
                                            for a, b in zip(first, second) if a > 0])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fs", default="ext4", choices=("ext4", "xfs", "btrfs"))
    parser.add_argument("--pairs", type=int, default=4, help="tables of each mode (default 4)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="a directory to keep each fsbench document in")
    parser.add_argument("--profiles", type=Path, help="a validation's JSON: price its programs from each table")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (a loop device)")
    tables: dict[str, list[tuple[CostTable, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-") as tmp:
        fs = scratch.create(args.fs, 4 << 30, root=Path(tmp))
        try:
            for pair in range(args.pairs):
                order = list(MODES.items())
                if pair % 2:
                    order.reverse()
                for mode, rounds in order:
                    tables[mode].append(quick_table(fs.mount_point, rounds, seed=pair + 1, keep=args.keep))
        finally:
            scratch.destroy(fs.name, Path(tmp))
    profiles = [Profile.of(p["profile"]) for p in json.loads(args.profiles.read_text())["programs"]] \
        if args.profiles else []
    results = {mode: summary(found, profiles) for mode, found in tables.items()}
    print(f"Quick cost tables of {args.fs}, {args.pairs} of each mode in alternating pairs; a case's move is "
          "|price in table k+1 / price in table k - 1|\n")
    print(f"{'mode':44} {'median move':>12} {'90th pct':>10} {'within 5%':>10} {'s a table':>10}")
    for mode, r in results.items():
        print(f"{mode:44} {100 * r['median_move']:>11.1f}% {100 * r['p90_move']:>9.1f}% "
              f"{100 * r['within_5pct']:>9.0f}% {r['seconds_per_table']:>10.1f}")
    if profiles:
        print(f"\nEach of {len(profiles)} programs' modelled filesystem time, table k+1 against table k:\n")
        print(f"{'mode':44} {'median move':>12} {'largest':>10} {'within 5%':>10}")
        for mode, r in results.items():
            p = r["programs"]
            print(f"{mode:44} {100 * p['median_move']:>11.1f}% {100 * p['largest_move']:>9.1f}% "
                  f"{100 * p['within_5pct']:>9.0f}%")
    base, spread = (results[mode] for mode in MODES)
    ratios = {"median_move": spread["median_move"] / base["median_move"],
              "p90_move": spread["p90_move"] / base["p90_move"],
              "seconds_per_table": spread["seconds_per_table"] / base["seconds_per_table"]}
    if profiles:
        ratios["program_median_move"] = spread["programs"]["median_move"] / base["programs"]["median_move"]
    print(f"\nrounds / baseline: case median move {ratios['median_move']:.2f}x, 90th percentile "
          f"{ratios['p90_move']:.2f}x, time a table {ratios['seconds_per_table']:.2f}x"
          + (f", programs' median move {ratios['program_median_move']:.2f}x" if profiles else ""))
    if args.json:
        args.json.write_text(json.dumps({"fs": args.fs, "pairs": args.pairs, "modes": results, "ratios": ratios},
                                        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

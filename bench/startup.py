#!/usr/bin/env python3
"""How long `fsbm` takes to start: commands that compute nothing, against a bare interpreter.

Target (issue 36): `fsbm --help`, `fsbm --version` and `fsbm fs list` each finish in under
0.3 s.  The baseline, measured in the same rounds, is the same interpreter starting with
nothing to do (`python -c pass`): what no change to fsbm can remove.  The commands run in
interleaved rounds under a private FSBM_HOME; medians and ranges are printed, and each
command's figure over the baseline's.

Usage: .venv/bin/python bench/startup.py [--rounds 15]
Exit status 1 when a command's median is 0.3 s or more.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 0.3


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                   env=env, check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    fsbm = str(Path(sys.executable).parent / "fsbm")
    commands = {"python -c pass (baseline)": [sys.executable, "-c", "pass"],
                "fsbm --help": [fsbm, "--help"], "fsbm --version": [fsbm, "--version"],
                "fsbm fs list": [fsbm, "fs", "list"]}
    with tempfile.TemporaryDirectory(prefix="fsbm-startup-") as home:
        env = {**os.environ, "FSBM_HOME": home}
        for command in commands.values():  # a first run of each fills the OS's caches
            timed(command, env)
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        for round_number in range(args.rounds):
            order = list(commands.items())
            for name, command in order if round_number % 2 == 0 else reversed(order):
                seconds[name].append(timed(command, env))
    baseline = statistics.median(seconds["python -c pass (baseline)"])
    misses = 0
    print(f"start-up, {args.rounds} interleaved rounds, medians (min-max); target < {TARGET_S} s\n")
    for name, values in seconds.items():
        median = statistics.median(values)
        verdict = "" if name.endswith("(baseline)") else "  ok" if median < TARGET_S else "  MISSED"
        misses += verdict == "  MISSED"
        print(f"{name:28} {median:6.3f} s ({min(values):.3f}-{max(values):.3f})  {median / baseline:5.1f}x baseline"
              f"{verdict}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())

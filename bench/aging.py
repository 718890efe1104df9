#!/usr/bin/env python3
"""What aging costs a sequential read of the same tree, against the fresh tree as baseline.

Two 512 MiB ext4 scratch filesystems (direct-I/O loop devices) get the same tree from
fsage (fill 95%, files up to 16 MiB, seed 7): one laid down fresh (0 rounds), one aged
(Tang's appendix E, 10 rounds).  Every file of both is then read front to back in 1 MiB
O_DIRECT reads, file by file in turn (which tree first alternates by file and by round), so
the host's drift falls on both alike.  Printed: the layout scores, the read requests each
device completed, and the median seconds of the rounds with their spread.

The request count is the mechanism (tests/test_aging.py asserts it); the seconds are what it
costs on this host's disk, which can be nothing where the disk under the image does not care
how a file is split.
Target: aged / fresh read seconds > 1.0.

Usage: .venv/bin/python bench/aging.py [--rounds 5]  (as root)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from fsbm.microbench import scratch
from fsbm.microbench.age import AgingOptions, read_direct, reads_completed, run_aging

TREE = dict(fill_pct=95, max_file="16M", seed=7)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-aging-") as tmp:
        root = Path(tmp)
        made: dict[str, scratch.ScratchFs] = {}
        try:
            for key in ("fresh", "aged"):
                made[key] = scratch.create("ext4", 512 << 20, name=key, root=root)
            layout = {key: run_aging(fs.mount_point, AgingOptions(rounds=0 if key == "fresh" else 10, **TREE))["after"]
                      for key, fs in made.items()}
            os.sync()
            names = sorted(p.relative_to(made["fresh"].mount_point) for p in made["fresh"].mount_point.rglob("*")
                           if p.is_file())
            seconds: dict[str, list[float]] = {"fresh": [], "aged": []}
            requests: dict[str, int] = {"fresh": 0, "aged": 0}
            for round_ in range(args.rounds):
                spent = {"fresh": 0.0, "aged": 0.0}
                for i, name in enumerate(names):
                    order = ("fresh", "aged") if (i + round_) % 2 == 0 else ("aged", "fresh")
                    for key in order:
                        before = reads_completed(made[key].loop_device)
                        spent[key] += read_direct([made[key].mount_point / name])
                        requests[key] += reads_completed(made[key].loop_device) - before
                for key in spent:
                    seconds[key].append(spent[key])
        finally:
            for key in made:
                scratch.destroy(key, root)
    median = {key: statistics.median(s) for key, s in seconds.items()}
    ratio = median["aged"] / median["fresh"]
    print(f"{len(names)} files read sequentially with O_DIRECT, {args.rounds} interleaved rounds")
    for key in ("fresh", "aged"):
        print(f"  {key:5}  layout score {layout[key]['layout_score']:.4f}  "
              f"extents a file {layout[key]['extents_per_file_mean']:.2f}  "
              f"read requests a round {requests[key] / args.rounds:8.0f}  "
              f"median {median[key]:.3f} s (rounds {min(seconds[key]):.3f}-{max(seconds[key]):.3f})")
    print(f"  aged / fresh: requests {requests['aged'] / requests['fresh']:.2f}x, "
          f"seconds {ratio:.2f}x (target > 1.00)  {'ok' if ratio > 1.0 else 'MISSED'}")
    return 0 if ratio > 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())

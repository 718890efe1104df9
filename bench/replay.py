#!/usr/bin/env python3
"""fsreplay's overhead and its timed-mode fidelity, each against a named baseline.

1. Overhead.  One million stat/open/close events (a third each) over a tree of 2,000
   files in 20 directories, as an event table, planned by fsbm and replayed by fsreplay in
   serial mode.  Baseline, measured in the same run on the same tree: bench/replay_loop.c,
   a plain C loop making the same stat(2), open(2) and close(2) calls with nothing around
   them.  Rounds alternate (ABAB), warm cache, median of the rounds.
   Target: fsreplay runtime / loop runtime <= 1.1.
2. Fidelity.  A program with think time (writes, stats and 40 ms sleeps) is traced here
   with strace, then replayed in timed mode.  Baseline: the traced runtime (first call to
   last end).  Target: |replayed - traced| / traced <= 5%.

Usage: .venv/bin/python bench/replay.py [--events 1000000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pyarrow as pa

from fsbm.microbench.replay import fsreplay_binary
from fsbm.traces.ingest import ingest, read_events
from fsbm.traces.record import record
from fsbm.traces.replay_plan import write_plan
from fsbm.traces.schema import EVENT_SCHEMA

HERE = Path(__file__).parent


def metadata_events(n: int, directories: int = 20, files: int = 2000) -> pa.Table:
    """stat, open, close of file i (i cycling through the tree), n events."""
    names = [f"/tree/d{i % directories}/f{i}" for i in range(files)]
    ops = ("stat", "open", "close")
    op = [ops[k % 3] for k in range(n)]
    file = [names[(k // 3) % files] for k in range(n)]
    return pa.table({
        "seq": range(n), "ts": [None] * n, "dur": [None] * n, "actor": ["1"] * n, "op": op,
        "orig": ["newfstatat" if o == "stat" else "openat" if o == "open" else "close" for o in op],
        "file": file, "path": [f if o != "close" else None for o, f in zip(op, file)], "path2": [None] * n,
        "offset": [None] * n, "size": [None] * n, "ret": [0] * n, "errno": [None] * n, "record": range(n),
    }).cast(EVENT_SCHEMA)


def overhead(tmp: Path, events: int, rounds: int) -> dict[str, float]:
    plan = tmp / "meta.plan"
    write_plan(metadata_events(events), plan)
    loop = tmp / "replay_loop"
    subprocess.run(["cc", "-O2", "-o", str(loop), str(HERE / "replay_loop.c")], check=True)
    target = tmp / "meta-target"
    target.mkdir()
    # fsreplay builds the tree once; every later run reuses it (--skip-tree), warm.
    first = subprocess.run([str(fsreplay_binary()), "--plan", str(plan), "--target", str(target)],
                           capture_output=True, text=True, check=True)
    assert not json.loads(first.stdout)["mismatches"]
    replay, baseline = [], []
    for _ in range(rounds):
        done = subprocess.run([str(fsreplay_binary()), "--plan", str(plan), "--target", str(target), "--skip-tree"],
                              capture_output=True, text=True, check=True)
        replay.append(json.loads(done.stdout)["runtime_ns"])
        done = subprocess.run([str(loop), str(plan), str(target)], capture_output=True, text=True, check=True)
        baseline.append(int(done.stdout))
    return {"events": events, "replay_ns": statistics.median(replay), "loop_ns": statistics.median(baseline),
            "ratio": statistics.median(replay) / statistics.median(baseline)}


THINKER = """
import os, time
for i in range(25):
    with open(f"f{i}", "w") as f:
        f.write("x" * 65536)
    os.stat(f"f{i}")
    time.sleep(0.04)
for i in range(25):
    os.unlink(f"f{i}")
"""


def fidelity(tmp: Path) -> dict[str, float]:
    work = tmp / "thinker"
    work.mkdir()
    (work / "thinker.py").write_text(textwrap.dedent(THINKER))
    recording = record([sys.executable, "thinker.py"], tmp / "thinker.strace", cwd=work)
    ingest([recording.log], tmp / "thinker.parquet")
    table = read_events(tmp / "thinker.parquet")
    mine = table.filter(pa.array([str(f).startswith(f"{work}/f") for f in table["file"].to_pylist()]))
    ends = [t + (d or 0) for t, d in zip(mine["ts"].to_pylist(), mine["dur"].to_pylist())]
    traced = max(ends) - min(mine["ts"].to_pylist())
    write_plan(mine, tmp / "thinker.plan")
    target = tmp / "thinker-target"
    target.mkdir()
    done = subprocess.run([str(fsreplay_binary()), "--plan", str(tmp / "thinker.plan"), "--target", str(target),
                           "--mode", "timed"], capture_output=True, text=True, check=True)
    replayed = json.loads(done.stdout)["runtime_ns"]
    return {"traced_ns": traced, "replayed_ns": replayed, "error": (replayed - traced) / traced}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-replay-") as tmp:
        o = overhead(Path(tmp), args.events, args.rounds)
        f = fidelity(Path(tmp))
    over_ok, fid_ok = o["ratio"] <= 1.1, abs(f["error"]) <= 0.05
    print(f"serial replay of {o['events']:,} stat/open/close events (median of {args.rounds} ABAB rounds, warm)")
    print(f"  fsreplay {o['replay_ns'] / 1e6:8.1f} ms   plain C loop {o['loop_ns'] / 1e6:8.1f} ms   "
          f"ratio {o['ratio']:.3f} (target <= 1.10)  {'ok' if over_ok else 'MISSED'}")
    print("timed replay of a trace recorded here (25 x write 64 KiB, stat, sleep 40 ms; unlinks)")
    print(f"  traced {f['traced_ns'] / 1e6:8.1f} ms   replayed {f['replayed_ns'] / 1e6:8.1f} ms   "
          f"error {100 * f['error']:+.2f}% (target within 5%)  {'ok' if fid_ok else 'MISSED'}")
    return 0 if over_ok and fid_ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A table larger than one worker: the characterizer on a local Dask cluster with a memory
limit per worker, against one worker and against one process, in the same run.

The table is synthetic (bench/event_tables.py), written as partitioned Parquet, 5 M events
a file.  Measured, each in a process of its own:
- one process: `fsbm characterize`'s path (the table whole where it fits in half the memory
  available, else a bucket of actors at a time; which one is printed), its wall time and
  peak RSS;
- Dask, 1 worker and 2 workers, each worker limited to --memory-limit (Dask spills beyond
  it): wall time, each worker's peak RSS, the client's;
- Dask, 1 and 2 workers with a scheduler started apart (`dask scheduler`, `dask worker`), as
  on a cluster, each right after the local cluster of as many workers: the client's peak RSS
  without the scheduler's in it, and the scheduler's.
Every profile must equal the one-process profile; the two-worker run's wall time is
reported against the one-worker run's, for the local clusters and for the clusters apart
(target: at least 1.7x on two cores), and the
client's peak apart from the scheduler against its memory before the run (target: nothing
gathered in proportion to the events).

Usage: .venv/bin/python bench/characterize_distributed.py [--events 100000000] [--memory-limit 2GiB]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from event_tables import write_partitioned
from peak_memory import SOURCE as PEAK_RSS, peak_rss_mib

from fsbm.cluster import cluster_apart

ONE_PROCESS = PEAK_RSS + '''
import json, sys, time
from pathlib import Path
from fsbm.characterizer.characterize import characterize_files, fits_in_memory
from fsbm.characterizer.scale import events_in
path = "whole" if fits_in_memory(events_in(Path(sys.argv[1]))) else "a bucket at a time"
t = time.perf_counter(); body = characterize_files([Path(sys.argv[1])]).body; seconds = time.perf_counter() - t
Path(sys.argv[2]).write_text(json.dumps(body, sort_keys=True, default=str))
print(json.dumps({"seconds": seconds, "peak_rss_mib": peak_rss_mib(), "path": path}))
'''

ON_DASK = PEAK_RSS + '''
import json, sys, time
from pathlib import Path
from fsbm.characterizer.scale import characterize_dask
from fsbm.cluster import dask_client

if __name__ == "__main__":
    where = sys.argv[3]  # a number of local workers, or a running scheduler's address
    local = {"workers": int(where), "memory_limit": sys.argv[4]} if where.isdigit() else {"scheduler": where}
    with dask_client(**local) as client:
        before = peak_rss_mib()
        t = time.perf_counter(); body = characterize_dask(Path(sys.argv[1]), client).body
        seconds = time.perf_counter() - t
        workers = client.run(peak_rss_mib)
    Path(sys.argv[2]).write_text(json.dumps(body, sort_keys=True, default=str))
    print(json.dumps({"seconds": seconds, "worker_peak_rss_mib": sorted(workers.values()),
                      "client_before_mib": before, "client_peak_rss_mib": peak_rss_mib()}))
'''


def _run(script: Path, *args: str) -> dict:
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{script.name} {' '.join(args[2:])} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000_000)
    parser.add_argument("--memory-limit", default="2GiB", help="Each Dask worker's limit.")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-distributed-") as tmp_name:
        tmp = Path(tmp_name)
        t = time.perf_counter()
        files = write_partitioned(tmp / "events", args.events)
        print(f"{args.events:,} events in {len(files)} Parquet files "
              f"({sum(f.stat().st_size for f in files) / 2**30:.1f} GiB), written in {time.perf_counter() - t:.0f} s")
        one = tmp / "one.py"
        one.write_text(ONE_PROCESS)
        dask = tmp / "dask_run.py"  # a file: worker processes re-import __main__
        dask.write_text(ON_DASK)
        results = {"one process": _run(one, str(tmp / "events"), str(tmp / "one.json"))}
        print(f"  one process ({results['one process']['path']}): {results['one process']['seconds']:7.1f} s, "
              f"peak RSS {results['one process']['peak_rss_mib']:.0f} MiB")
        reference = (tmp / "one.json").read_text()
        for workers in (1, 2):
            name = f"dask x{workers}"
            r = _run(dask, str(tmp / "events"), str(tmp / f"{name}.json"), str(workers), args.memory_limit)
            r["same_profile"] = (tmp / f"{name}.json").read_text() == reference
            results[name] = r
            print(f"  Dask, {workers} worker{'s' if workers > 1 else ' '} ({args.memory_limit} each): {r['seconds']:7.1f} s, "
                  f"worker peak RSS {', '.join(f'{m:.0f}' for m in r['worker_peak_rss_mib'])} MiB, client "
                  f"{r['client_peak_rss_mib']:.0f} MiB; profile {'equal to' if r['same_profile'] else 'DIFFERENT from'}"
                  f" one process's")
            name = f"dask x{workers}, scheduler apart"
            (tmp / name).mkdir()
            with cluster_apart(tmp / name, workers=workers, memory_limit=args.memory_limit) as (address, scheduler):
                r = _run(dask, str(tmp / "events"), str(tmp / f"{name}.json"), address)
                r["scheduler_peak_rss_mib"] = peak_rss_mib(scheduler)
            r["same_profile"] = (tmp / f"{name}.json").read_text() == reference
            results[name] = r
            print(f"  Dask, {workers} worker{'s' if workers > 1 else ' '}, scheduler apart: {r['seconds']:7.1f} s, "
                  f"worker peak RSS {', '.join(f'{m:.0f}' for m in r['worker_peak_rss_mib'])} MiB, scheduler "
                  f"{r['scheduler_peak_rss_mib']:.0f} MiB, client {r['client_peak_rss_mib']:.0f} MiB "
                  f"({r['client_before_mib']:.0f} MiB before the run: "
                  f"{r['client_peak_rss_mib'] / r['client_before_mib']:.2f}x); profile "
                  f"{'equal to' if r['same_profile'] else 'DIFFERENT from'} one process's")
    for how in ("", ", scheduler apart"):
        speedup = results[f"dask x1{how}"]["seconds"] / results[f"dask x2{how}"]["seconds"]
        print(f"  2 workers against 1{how}: {speedup:.2f}x (target >= 1.7)  {'ok' if speedup >= 1.7 else 'MISSED'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if all(r.get("same_profile", True) for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

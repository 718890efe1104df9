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
(target: at least 1.7x on two cores; with --rounds N, the median of N interleaved rounds'
own ratios, the host drifting as it does), and the
client's peak apart from the scheduler against its memory before the run (target: nothing
gathered in proportion to the events).

Usage: .venv/bin/python bench/characterize_distributed.py [--events 100000000] [--memory-limit 2GiB] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
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


def _on_dask(tmp: Path, workers: int, apart: bool, memory_limit: str, reference: str, label: str) -> dict:
    """One characterization on a Dask cluster of `workers` (local, or a scheduler and workers
    started apart), its figures and whether its profile equals `reference`, printed."""
    dask, name = tmp / "dask_run.py", f"dask x{workers}{', scheduler apart' if apart else ''} {label}"
    out = str(tmp / f"{name}.json")
    if apart:
        (tmp / name).mkdir()
        with cluster_apart(tmp / name, workers=workers, memory_limit=memory_limit) as (address, scheduler):
            r = _run(dask, str(tmp / "events"), out, address)
            r["scheduler_peak_rss_mib"] = peak_rss_mib(scheduler)
    else:
        r = _run(dask, str(tmp / "events"), out, str(workers), memory_limit)
    r["same_profile"] = Path(out).read_text() == reference
    where = (f"scheduler {r['scheduler_peak_rss_mib']:.0f} MiB, client {r['client_peak_rss_mib']:.0f} MiB "
             f"({r['client_before_mib']:.0f} MiB before the run: {r['client_peak_rss_mib'] / r['client_before_mib']:.2f}x)"
             if apart else f"client {r['client_peak_rss_mib']:.0f} MiB")
    print(f"  {label}: Dask, {workers} worker{'s' if workers > 1 else ' '}"
          f"{', scheduler apart' if apart else f' ({memory_limit} each)'}: {r['seconds']:7.1f} s, worker peak RSS "
          f"{', '.join(f'{m:.0f}' for m in r['worker_peak_rss_mib'])} MiB, {where}; profile "
          f"{'equal to' if r['same_profile'] else 'DIFFERENT from'} one process's", flush=True)
    return r


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000_000)
    parser.add_argument("--memory-limit", default="2GiB", help="Each Dask worker's limit.")
    parser.add_argument("--rounds", type=int, default=1,
                        help="Rounds of 1 and 2 workers, the order reversed every other round; the ratio judged is "
                             "the median of the rounds' own ratios.")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-distributed-") as tmp_name:
        tmp = Path(tmp_name)
        t = time.perf_counter()
        files = write_partitioned(tmp / "events", args.events)
        print(f"{args.events:,} events in {len(files)} Parquet files "
              f"({sum(f.stat().st_size for f in files) / 2**30:.1f} GiB), written in {time.perf_counter() - t:.0f} s")
        (tmp / "one.py").write_text(ONE_PROCESS)
        (tmp / "dask_run.py").write_text(ON_DASK)  # a file: worker processes re-import __main__
        one = _run(tmp / "one.py", str(tmp / "events"), str(tmp / "one.json"))
        print(f"  one process ({one['path']}): {one['seconds']:7.1f} s, peak RSS {one['peak_rss_mib']:.0f} MiB",
              flush=True)
        reference = (tmp / "one.json").read_text()
        rounds: list[dict[str, dict]] = []
        for k in range(args.rounds):
            order = (1, 2) if k % 2 == 0 else (2, 1)
            runs = {}
            for workers in order:
                for apart in (False, True):  # the cluster apart right after the local one of as many workers
                    runs[f"dask x{workers}{', scheduler apart' if apart else ''}"] = _on_dask(
                        tmp, workers, apart, args.memory_limit, reference, f"round {k + 1}")
            rounds.append(runs)
    for how in ("", ", scheduler apart"):
        ratios = [r[f"dask x1{how}"]["seconds"] / r[f"dask x2{how}"]["seconds"] for r in rounds]
        median = statistics.median(ratios)
        print(f"  2 workers against 1{how}: {median:.2f}x, the median of {len(ratios)} round"
              f"{'s' if len(ratios) > 1 else ''} ({', '.join(f'{x:.2f}x' for x in ratios)}) (target >= 1.7)  "
              f"{'ok' if median >= 1.7 else 'MISSED'}")
    same = all(r["same_profile"] for runs in rounds for r in runs.values())
    if args.json:
        args.json.write_text(json.dumps({"one process": one, "rounds": rounds}, indent=1))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

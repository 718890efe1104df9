#!/usr/bin/env python3
"""Characterizer speed and memory on a 10-million-event table, against a named baseline.

The table is synthetic but shaped like a real mix (per actor: open, reads and writes at
sequential and random offsets, stats, syncs, close), built vectorized and written to Parquet so
the characterizer reads it the way it reads any trace.  Baseline, measured in the same
run: pyarrow's own group-by count of events per (actor, file, op) on the same table, the
least any per-file statistic has to do.

Targets, on one core: the core statistics (Tang's table, sequentiality, open files) and the
full profile of the events' arrays each at >= 2 million events/s, in a process whose peak RSS
is at most 1.5x the table's in-memory size.  That process does what `fsbm characterize` does
with a table that fits in memory: it reads the file into arrays a piece at a time, then
profiles them.  The same table profiled a bucket of actors at a time (what `fsbm
characterize` does with a table too large for the memory available) is timed too, with its
peak RSS, and its profile must equal the first.

The same full profile on a local 2-worker Dask cluster is timed against the one-process
run, with each worker's peak RSS.

Usage: .venv/bin/python bench/characterize.py [--events 10000000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

from event_tables import synthetic
from peak_memory import SOURCE as PEAK_RSS

MEASURE = PEAK_RSS + """
import json, sys, time
from pathlib import Path
from fsbm.characterizer.characterize import core_statistics
from fsbm.characterizer.partial import finalize, whole_trace
from fsbm.characterizer.scale import read_arrays
t = time.perf_counter(); ev = read_arrays(Path(sys.argv[1])); load = time.perf_counter() - t
t = time.perf_counter(); core_statistics(ev); core = time.perf_counter() - t
events = ev.n
t = time.perf_counter(); part = whole_trace(ev); del ev; body = finalize(part); full = time.perf_counter() - t
Path(sys.argv[2]).write_text(json.dumps(body, sort_keys=True, default=str))
print(json.dumps({"events": events, "load_s": load, "core_s": core, "full_s": full, "peak_rss_mib": peak_rss_mib()}))
"""


IN_BUCKETS = PEAK_RSS + """
import json, sys, time
from pathlib import Path
from fsbm.characterizer.partial import finalize
from fsbm.characterizer.scale import partial_in_buckets
t = time.perf_counter(); body = finalize(partial_in_buckets(Path(sys.argv[1]))); full = time.perf_counter() - t
body["source"] = body["timeline"] = None  # the arrays' run names neither
Path(sys.argv[2]).write_text(json.dumps(body, sort_keys=True, default=str))
print(json.dumps({"full_s": full, "peak_rss_mib": peak_rss_mib()}))
"""


FLOOR = """
import json, sys, time
from pathlib import Path
from fsbm.traces.ingest import read_events
table = read_events(Path(sys.argv[1]))
# One thread: pinned to one core, Arrow's threads only take turns (twice as long, measured).
t = time.perf_counter(); table.unify_dictionaries().group_by(["actor", "file", "op"], use_threads=False).aggregate([("seq", "count")])
print(json.dumps({"baseline_groupby_s": time.perf_counter() - t, "table_mib": table.nbytes / 2**20}))
"""


DASK = PEAK_RSS + """
import json, sys, time
from pathlib import Path
from fsbm.characterizer.scale import characterize_dask
from fsbm.cluster import dask_client

if __name__ == "__main__":
    with dask_client(workers=2) as client:
        t = time.perf_counter(); characterize_dask(Path(sys.argv[1]), client); full = time.perf_counter() - t
        workers = client.run(peak_rss_mib)
    print(json.dumps({"full_s": full, "worker_peak_rss_mib": max(workers.values()),
                      "client_peak_rss_mib": peak_rss_mib()}))
"""


def _run(cpu: str, source: str, *args: str) -> dict:
    """A measuring script in a process of its own, pinned to `cpu`: its JSON line."""
    done = subprocess.run(["taskset", "-c", cpu, sys.executable, "-c", source, *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"a measuring process failed:\n{done.stderr}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-char-") as tmp:
        path = Path(tmp) / "events.parquet"
        table = synthetic(args.events)
        pq.write_table(table, path)
        cpu = str((os.cpu_count() or 1) - 1)
        del table
        in_memory, from_buckets = Path(tmp) / "in-memory.json", Path(tmp) / "in-buckets.json"
        f = _run(cpu, MEASURE, str(path), str(in_memory))
        b = _run(cpu, IN_BUCKETS, str(path), str(from_buckets))
        f.update(_run(cpu, FLOOR, str(path)))
        whole, bucketed_body = (json.loads(p.read_text()) for p in (in_memory, from_buckets))
        same = whole == {**bucketed_body, "source": whole.get("source"), "timeline": whole.get("timeline")}
        script = Path(tmp) / "dask_measure.py"  # a file: worker processes re-import __main__
        script.write_text(DASK)
        on_dask = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True)
        if on_dask.returncode != 0:
            sys.exit(f"the Dask run failed:\n{on_dask.stderr}")
    events = f["events"]
    core_rate, full_rate = events / (f["load_s"] + f["core_s"]), events / f["full_s"]
    memory = f["peak_rss_mib"] / f["table_mib"]
    print(f"{events:,} events, pinned to CPU {cpu}; the table is {f['table_mib']:.0f} MiB in memory")
    print(f"  load into arrays, a piece at a time  {f['load_s']:6.2f} s")
    print(f"  core statistics           {f['core_s']:6.2f} s   load + core: {core_rate / 1e6:.2f} M events/s "
          f"(target >= 2.0)  {'ok' if core_rate >= 2e6 else 'MISSED'}")
    print(f"  full profile (+ reuse...) {f['full_s']:6.2f} s   {full_rate / 1e6:.2f} M events/s (target >= 2.0)  "
          f"{'ok' if full_rate >= 2e6 else 'MISSED'}; {f['full_s'] / f['baseline_groupby_s']:.1f}x the floor")
    print(f"  from the file (load + full profile)  {events / (f['load_s'] + f['full_s']) / 1e6:.2f} M events/s")
    print(f"  pyarrow group-by (floor)  {f['baseline_groupby_s']:6.2f} s   core / floor = "
          f"{f['core_s'] / f['baseline_groupby_s']:.1f}x")
    print(f"  peak RSS {f['peak_rss_mib']:.0f} MiB ({memory:.2f}x the table; target <= 1.5x)  "
          f"{'ok' if memory <= 1.5 else 'MISSED'}")
    print(f"  full profile from the file, a bucket of actors at a time: {b['full_s']:6.2f} s   "
          f"{events / b['full_s'] / 1e6:.2f} M events/s; peak RSS {b['peak_rss_mib']:.0f} MiB "
          f"({b['peak_rss_mib'] / f['table_mib']:.2f}x the table); profile "
          f"{'equal to' if same else 'DIFFERENT from'} the arrays' one")
    f["in_buckets"] = {**b, "same_profile": same}
    d = json.loads(on_dask.stdout)
    print(f"  full profile, 2-worker Dask cluster {d['full_s']:6.2f} s   {events / d['full_s'] / 1e6:.2f} M "
          f"events/s ({(f['load_s'] + f['full_s']) / d['full_s']:.2f}x one process from the file); peak RSS "
          f"per worker {d['worker_peak_rss_mib']:.0f} MiB, client {d['client_peak_rss_mib']:.0f} MiB")
    f["dask"] = d
    if args.json:
        args.json.write_text(json.dumps(f, indent=1))
    return 0 if core_rate >= 2e6 and full_rate >= 2e6 and memory <= 1.5 and same else 1


if __name__ == "__main__":
    sys.exit(main())

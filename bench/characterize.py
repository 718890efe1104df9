#!/usr/bin/env python3
"""Characterizer speed and memory on a 10-million-event table, against a named baseline.

The table is synthetic but shaped like a real mix (per actor: open, reads and writes at
sequential and random offsets, stats, syncs, close), built vectorized and written to Parquet so
the characterizer reads it the way it reads any trace.  Baseline, measured in the same
run: pyarrow's own group-by count of events per (actor, file, op) on the same table, the
least any per-file statistic has to do.  Targets: core statistics (Tang's table,
sequentiality, open files) and the full profile of the arrays in memory each at >= 2
million events/s on one core.  Peak RSS is reported against the table's in-memory size:
for the profile of the arrays in memory, and for the profile of the file as `fsbm
characterize` makes it, a bucket of actors at a time (target: at most 1.5x the table),
whose profile must equal the first.

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
from fsbm.characterizer.arrays import to_arrays
from fsbm.characterizer.characterize import characterize, core_statistics
from fsbm.traces.ingest import read_events
table = read_events(Path(sys.argv[1]))
t = time.perf_counter(); ev = to_arrays(table); load = time.perf_counter() - t
t = time.perf_counter(); core_statistics(ev); core = time.perf_counter() - t
t = time.perf_counter(); profile = characterize(ev); full = time.perf_counter() - t
Path(sys.argv[2]).write_text(json.dumps(profile.body, sort_keys=True, default=str))
t = time.perf_counter(); table.unify_dictionaries().group_by(["actor", "file", "op"]).aggregate([("seq", "count")]); baseline = time.perf_counter() - t
print(json.dumps({"events": table.num_rows, "to_arrays_s": load, "core_s": core, "full_s": full,
                  "baseline_groupby_s": baseline, "table_mib": table.nbytes / 2**20,
                  "peak_rss_mib": peak_rss_mib()}))
"""


FROM_FILE = PEAK_RSS + """
import json, sys, time
from pathlib import Path
from fsbm.characterizer.characterize import characterize_file
t = time.perf_counter(); profile = characterize_file(Path(sys.argv[1])); full = time.perf_counter() - t
body = profile.body
body["source"] = None  # the in-memory run names none
Path(sys.argv[2]).write_text(json.dumps(body, sort_keys=True, default=str))
print(json.dumps({"full_s": full, "peak_rss_mib": peak_rss_mib()}))
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
        in_memory, from_file = Path(tmp) / "in-memory.json", Path(tmp) / "from-file.json"
        done = subprocess.run(["taskset", "-c", cpu, sys.executable, "-c", MEASURE, str(path), str(in_memory)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the measuring process failed:\n{done.stderr}")
        bucketed = subprocess.run(["taskset", "-c", cpu, sys.executable, "-c", FROM_FILE, str(path), str(from_file)],
                                  capture_output=True, text=True)
        if bucketed.returncode != 0:
            sys.exit(f"the run from the file failed:\n{bucketed.stderr}")
        whole, bucketed_body = (json.loads(p.read_text()) for p in (in_memory, from_file))
        same = whole == {**bucketed_body, "timeline": whole.get("timeline")}
        script = Path(tmp) / "dask_measure.py"  # a file: worker processes re-import __main__
        script.write_text(DASK)
        on_dask = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True)
        if on_dask.returncode != 0:
            sys.exit(f"the Dask run failed:\n{on_dask.stderr}")
    f = json.loads(done.stdout)
    core_rate = f["events"] / (f["to_arrays_s"] + f["core_s"])
    print(f"{f['events']:,} events, pinned to CPU {cpu}")
    print(f"  load into arrays          {f['to_arrays_s']:6.2f} s")
    print(f"  core statistics           {f['core_s']:6.2f} s   load + core: {core_rate / 1e6:.2f} M events/s "
          f"(target >= 2.0)  {'ok' if core_rate >= 2e6 else 'MISSED'}")
    full_rate = f["events"] / f["full_s"]
    print(f"  full profile (+ reuse...) {f['full_s']:6.2f} s   {full_rate / 1e6:.2f} M events/s (target >= 2.0)  "
          f"{'ok' if full_rate >= 2e6 else 'MISSED'}; {f['full_s'] / f['baseline_groupby_s']:.1f}x the floor")
    print(f"  pyarrow group-by (floor)  {f['baseline_groupby_s']:6.2f} s   core / floor = "
          f"{f['core_s'] / f['baseline_groupby_s']:.1f}x")
    print(f"  peak RSS {f['peak_rss_mib']:.0f} MiB for a {f['table_mib']:.0f} MiB table "
          f"({f['peak_rss_mib'] / f['table_mib']:.1f}x)")
    b = json.loads(bucketed.stdout)
    ratio = b["peak_rss_mib"] / f["table_mib"]
    print(f"  full profile from the file, a bucket of actors at a time: {b['full_s']:6.2f} s   "
          f"{f['events'] / b['full_s'] / 1e6:.2f} M events/s; peak RSS {b['peak_rss_mib']:.0f} MiB "
          f"({ratio:.2f}x the table; target <= 1.5x) {'ok' if ratio <= 1.5 else 'MISSED'}; "
          f"profile {'equal to' if same else 'DIFFERENT from'} the in-memory one")
    f["from_file"] = {**b, "same_profile": same}
    d = json.loads(on_dask.stdout)
    print(f"  full profile, 2-worker Dask cluster {d['full_s']:6.2f} s   {f['events'] / d['full_s'] / 1e6:.2f} M "
          f"events/s ({f['full_s'] / d['full_s']:.2f}x one process); peak RSS per worker "
          f"{d['worker_peak_rss_mib']:.0f} MiB, client {d['client_peak_rss_mib']:.0f} MiB")
    f["dask"] = d
    if args.json:
        args.json.write_text(json.dumps(f, indent=1))
    return 0 if core_rate >= 2e6 and full_rate >= 2e6 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Trace parsing speed and memory, against named baselines measured in the same run.

strace: lines/s of `fsbm trace parse` (strace2events -> pyarrow -> Parquet), pinned to one
core, against `wc -l` on the same file (the floor: reading the bytes and nothing else).
Target: at least 1 million lines/s.
NFS: the time of `fsbm trace parse` against `tshark -T fields` with the same fields on
the same capture (the ceiling of any tshark-based parser).  Target: within 1.3x.
Memory: peak RSS of the whole parse at 1x and 10x the input; flat means the ratio stays
near 1.

NFS in parts: two captures dissected whole, and cut by time and by connection into parts
dissected on 2 threads (traces/nfs_parts.py); the tables must be equal.

strace -ff: the per-process logs of a real job traced here, in copies (bench/ff_logs.py),
parsed in one process (one stream in time order) and a process group at a time on 1 and 2
threads and on a local Dask cluster of 2 workers.  Every table must equal the one-process
table; the figure is the wall time of 2 workers against 1, and against one process.

The strace input is the real Asterisk log from ../shared/data (78 threads, thousands of
unfinished/resumed pairs) repeated to the size wanted; the capture is nfstrace's NFSv4
one (45,059 packets).  Usage: .venv/bin/python bench/parse.py [--copies 100] [--ff-copies 6]
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peak_memory import SOURCE as PEAK_RSS

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
STRACE_LOG = DATA / "strace" / "zicada_asterisk_strace.log"
CAPTURE = DATA / "nfs" / "epam-nfstrace" / "eth-ipv4-tcp-nfsv4.pcap.bz2"
PARSE = """
import resource, sys, time
from pathlib import Path
from fsbm.traces.ingest import ingest
started = time.perf_counter()
result = ingest([Path(sys.argv[1])], Path(sys.argv[2]), force=True)
elapsed = time.perf_counter() - started
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(result.events, elapsed, peak_kib)
"""


PARSE_FF = PEAK_RSS + """
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from fsbm.cluster import dask_client
from fsbm.traces.ingest import ingest

if __name__ == "__main__":
    logs, out, how, n = sorted(Path(sys.argv[1]).glob("log.*")), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    if how == "dask":
        with dask_client(workers=n) as client:
            started = time.perf_counter()
            result = ingest(logs, out, force=True, workers=client)
    else:
        with ThreadPoolExecutor(n) as pool:
            started = time.perf_counter()
            result = ingest(logs, out, force=True, workers=pool if how == "threads" else None)
    print(json.dumps({"seconds": time.perf_counter() - started, "events": result.events,
                      "lines": result.stats.lines, "peak_rss_mib": peak_rss_mib()}))
"""


def per_process_logs(tmp_path: Path, copies: int) -> tuple[dict[str, float], int]:
    """strace -ff logs parsed one process against a process group at a time: figures, misses."""
    import pyarrow.parquet as pq
    from ff_logs import copies as copies_of, trace_job

    logs = copies_of(trace_job(tmp_path / "job"), copies, tmp_path / "ff")
    script = tmp_path / "parse_ff.py"
    script.write_text(PARSE_FF)
    runs = {}
    for label, how, n in (("one process", "one", 1), ("1 thread", "threads", 1), ("2 threads", "threads", 2),
                          ("Dask, 2 workers", "dask", 2)):
        out = tmp_path / f"ff-{how}-{n}.parquet"
        done = subprocess.run([sys.executable, str(script), str(tmp_path / "ff"), str(out), how, str(n)],
                              check=True, capture_output=True, text=True)
        runs[label] = {**json.loads(done.stdout.strip().splitlines()[-1]), "table": out}
    reference = pq.read_table(runs["one process"]["table"])
    equal = all(pq.read_table(run["table"]).equals(reference) for run in runs.values())
    one, two = runs["1 thread"]["seconds"], runs["2 threads"]["seconds"]
    print(f"strace -ff: {len(logs):,} logs ({sum(p.stat().st_size for p in logs) / 1e6:.0f} MB), "
          f"{runs['one process']['lines']:,} lines, {reference.num_rows:,} events")
    for label, run in runs.items():
        print(f"  {label:17} {run['seconds']:6.2f} s  {run['lines'] / run['seconds'] / 1e6:5.2f} M lines/s  "
              f"peak RSS {run['peak_rss_mib']:5.0f} MiB")
    print(f"  2 threads against 1: {one / two:.2f}x; against one process: "
          f"{runs['one process']['seconds'] / two:.2f}x; Dask 2 workers against one process: "
          f"{runs['one process']['seconds'] / runs['Dask, 2 workers']['seconds']:.2f}x")
    print(f"  tables equal to the one-process table: {'yes' if equal else 'NO'}")
    figures = {f"ff_{label.replace(' ', '_').replace(',', '')}_seconds": run["seconds"] for label, run in runs.items()}
    return {**figures, "ff_events": reference.num_rows, "ff_two_against_one": one / two}, int(not equal)


MANY_CONNECTIONS = DATA / "nfs" / "epam-nfstrace" / "eth-ipv4-tcp-nfsv3-4-41-cifs1-2.pcap.bz2"


def captures_in_parts(tmp_path: Path, figures: dict[str, float]) -> int:
    """Captures dissected whole against in parts cut by time and by connection on 2 threads
    (best of 3 each, interleaved): figures, and 1 for each table that differs."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow.parquet as pq
    from fsbm.traces.ingest import ingest
    from fsbm.traces.nfs_parts import CUTS

    misses = 0
    print("NFS in parts on 2 threads, cut by time and by connection, against one tshark (best of 3):")
    for source in (MANY_CONNECTIONS, CAPTURE):
        capture = tmp_path / source.name.removesuffix(".bz2")
        with bz2.open(source, "rb") as src, open(capture, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        runs: dict[str, list[float]] = {way: [] for way in ("whole", *CUTS)}
        with ThreadPoolExecutor(2) as pool:
            for _ in range(3):
                for way in runs:
                    started = time.perf_counter()
                    ingest([capture], tmp_path / f"{way}.parquet", force=True,
                           workers=None if way == "whole" else pool, capture_cut="time" if way == "whole" else way)
                    runs[way].append(time.perf_counter() - started)
        whole = pq.read_table(tmp_path / "whole.parquet")
        line = f"  {capture.name:40} whole {min(runs['whole']):5.2f} s"
        for cut in CUTS:
            equal = pq.read_table(tmp_path / f"{cut}.parquet").equals(whole)
            misses += not equal
            figures[f"nfs_parts_by_{cut}_{capture.stem}_ratio"] = min(runs["whole"]) / min(runs[cut])
            line += (f"; by {cut} {min(runs[cut]):5.2f} s, {min(runs['whole']) / min(runs[cut]):.2f}x, "
                     f"tables equal: {'yes' if equal else 'NO'}")
        print(line)
    return misses


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def parse(path: Path, out: Path, cpu: str | None) -> tuple[int, float, int]:
    command = [sys.executable, "-c", PARSE, str(path), str(out)]
    if cpu is not None:
        command = ["taskset", "-c", cpu, *command]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    events, seconds, peak = done.stdout.split()
    return int(events), float(seconds), int(peak)


def repeated(source: Path, copies: int, target: Path) -> int:
    data = source.read_bytes()
    with open(target, "wb") as out:
        for _ in range(copies):
            out.write(data)
    return data.count(b"\n") * copies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=100, help="copies of the strace log in the large input")
    parser.add_argument("--ff-copies", type=int, default=6, help="copies of the traced -ff job")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not STRACE_LOG.is_file() or not CAPTURE.is_file():
        sys.exit(f"needs ../shared/data ({STRACE_LOG.parent}, {CAPTURE.parent})")
    cpu = str(os.cpu_count() - 1) if shutil.which("taskset") and os.cpu_count() else None
    figures: dict[str, float] = {}
    misses = 0
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-parse-") as tmp:
        tmp_path = Path(tmp)
        small, large = tmp_path / "small.strace", tmp_path / "large.strace"
        small_lines = repeated(STRACE_LOG, max(1, args.copies // 10), small)
        large_lines = repeated(STRACE_LOG, args.copies, large)
        wc = timed(["wc", "-l", str(large)])
        events, seconds, large_peak = parse(large, tmp_path / "large.parquet", cpu)
        _, _, small_peak = parse(small, tmp_path / "small.parquet", cpu)
        rate = large_lines / seconds
        figures.update(strace_lines=large_lines, strace_seconds=seconds, strace_lines_per_s=rate,
                       wc_seconds=wc, wc_lines_per_s=large_lines / wc, strace_events=events,
                       peak_rss_small_mib=small_peak / 1024, peak_rss_large_mib=large_peak / 1024)
        print(f"strace: {large_lines:,} lines ({large.stat().st_size / 1e6:.0f} MB), {events:,} events, "
              f"pinned to CPU {cpu}")
        print(f"  fsbm trace parse  {seconds:7.2f} s  {rate / 1e6:6.2f} M lines/s   (target >= 1.00)"
              f"  {'ok' if rate >= 1e6 else 'MISSED'}")
        print(f"  wc -l (floor)     {wc:7.2f} s  {large_lines / wc / 1e6:6.2f} M lines/s   "
              f"parse / wc = {seconds / wc:.1f}x")
        ratio = large_peak / small_peak
        print(f"  peak RSS: {small_lines:,} lines {small_peak / 1024:.0f} MiB, {large_lines:,} lines "
              f"{large_peak / 1024:.0f} MiB: {ratio:.2f}x for {large_lines / small_lines:.0f}x the input "
              f"(target: flat, < 1.5x)  {'ok' if ratio < 1.5 else 'MISSED'}")
        misses += (rate < 1e6) + (ratio >= 1.5)

        capture = tmp_path / "capture.pcap"
        with bz2.open(CAPTURE, "rb") as src, open(capture, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        from fsbm.traces.nfs import FIELDS, NFS_PROGRAM

        fields_command = ["tshark", "-r", str(capture), "-n", "-d", "tcp.port==2049,rpc", "-d", "udp.port==2049,rpc",
                          "-Y", f"rpc.program == {NFS_PROGRAM} || (rpc.msgtyp == 1 && nfs) || (rpc && !rpc.xid)",
                          "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"]
        for name in FIELDS:
            fields_command += ["-e", name]
        ceiling = min(timed(fields_command) for _ in range(3))
        nfs_runs = [parse(capture, tmp_path / "nfs.parquet", None) for _ in range(3)]
        nfs_events, nfs_seconds = nfs_runs[0][0], min(run[1] for run in nfs_runs)
        nfs_ratio = nfs_seconds / ceiling
        figures.update(nfs_events=nfs_events, nfs_seconds=nfs_seconds, tshark_fields_seconds=ceiling,
                       nfs_ratio=nfs_ratio)
        print(f"NFS: {CAPTURE.name} ({capture.stat().st_size / 1e6:.0f} MB), {nfs_events:,} events, best of 3")
        print(f"  fsbm trace parse          {nfs_seconds:6.2f} s  {nfs_events / nfs_seconds:,.0f} events/s")
        print(f"  tshark -T fields (ceiling) {ceiling:5.2f} s   parse / tshark = {nfs_ratio:.2f}x (target <= 1.3)"
              f"  {'ok' if nfs_ratio <= 1.3 else 'MISSED'}")
        misses += nfs_ratio > 1.3
        misses += captures_in_parts(tmp_path, figures)

        ff_figures, ff_misses = per_process_logs(tmp_path, args.ff_copies)
        figures.update(ff_figures)
        misses += ff_misses
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())

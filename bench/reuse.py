#!/usr/bin/env python3
"""The reuse curve from a sample (SHARDS) against the exact curve, its named baseline,
measured in the same run on the same block references: error, time and peak memory.

- Synthetic traces beyond the exact limit, at fsbm's own settings (a sample of about
  SAMPLE_BUDGET references): files read and re-read in runs of 1-15 blocks; blocks of Zipf
  popularity (a few blocks read very often); and repeated scans of files, some fitting in a
  small cache and some not.
- The shared data's strace logs (../shared/data/strace), one after another as one trace,
  sampled at fixed rates of 0.25 and 0.1.  Together they are some 200,000 block references,
  far below the exact limit, where fsbm computes them exactly; the fixed rates show how a
  sample behaves on real access patterns.

Each pass runs in a child process, so its peak RSS is its own.  Per trace: block
references, the rate, the mean and largest absolute error of the hit fraction over the
exact curve's cache sizes from the smallest the sample resolves (1 / rate blocks), and the
error the profile reports (two samples, hash against hash).  Target (issue 37): mean absolute error at most 0.01.

Usage: .venv/bin/python bench/reuse.py [--references 24000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from peak_memory import SOURCE as PEAK_RSS

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data" / "strace"

PASS = PEAK_RSS + """
import json, sys, time
import numpy as np
from fsbm.characterizer.reuse import References, reuse_curve
data = np.load(sys.argv[1])
refs = References(data["ids"], data["offset"], data["length"], data["is_read"])
kwargs = json.loads(sys.argv[2])
t = time.perf_counter(); curve = reuse_curve(refs, **kwargs); seconds = time.perf_counter() - t
print(json.dumps({"curve": curve, "seconds": seconds, "peak_rss_mib": peak_rss_mib()}))
"""


def synthetic(kind: str, blocks: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """About `blocks` block references of one access pattern."""
    if kind == "files reread":
        n = blocks // 8
        return {"file": rng.integers(0, 200_000, n), "offset": rng.integers(0, 64, n) * 4096,
                "length": rng.integers(1, 16, n) * 4096, "is_read": rng.random(n) < 0.7}
    if kind == "zipf blocks":
        block = (rng.zipf(1.1, blocks) - 1) % 5_000_000
        return {"file": block % 1000, "offset": (block // 1000) * 4096, "length": np.full(blocks, 4096),
                "is_read": rng.random(blocks) < 0.8}
    # Scans: 256 KiB reads of whole files of 4 MiB, files chosen with a skew, over and over.
    n = blocks // 64
    file = (rng.zipf(1.3, n) - 1) % 20_000
    return {"file": file, "offset": rng.integers(0, 16, n) * 65536 * 4, "length": np.full(n, 262144),
            "is_read": rng.random(n) < 0.9}


def strace_references(log: Path, work: Path) -> dict[str, np.ndarray] | None:
    """The block references the characterizer takes from a shared strace log, or None where
    it has no reads."""
    from fsbm.characterizer.arrays import to_arrays
    from fsbm.characterizer.partial import summarize
    from fsbm.traces.ingest import ingest, read_events

    table_path = work / f"{log.stem}.parquet"
    try:
        ingest([log], table_path, keep_going=True, force=True)
    except Exception:  # noqa: BLE001 - a log the parser refuses is left out, and said so
        print(f"  {log.name}: not parsed, left out")
        return None
    ev = to_arrays(read_events(table_path))
    refs = summarize(ev, nfs=False, origin=0).references.in_order()
    if refs.is_read.sum() < 1:
        return None
    return {"file": refs.file, "offset": refs.offset, "length": refs.length, "is_read": refs.is_read}


def run_pass(path: Path, **kwargs: object) -> dict:
    done = subprocess.run([sys.executable, "-c", PASS, str(path), json.dumps(kwargs)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"a pass failed:\n{done.stderr}")
    return json.loads(done.stdout)


def hit_at(curve: dict, sizes: np.ndarray) -> np.ndarray:
    """The hit fraction a curve gives each cache size (in blocks), as the predictor reads it."""
    from fsbm.documents import Reuse
    from fsbm.predictor.model import hit_fraction

    reuse = Reuse.model_validate(curve)
    return np.array([hit_fraction(reuse, int(size) * reuse.block_size) for size in sizes])


def compare(name: str, arrays: dict[str, np.ndarray], work: Path, sampled_kwargs: dict) -> float:
    path = work / "refs.npz"
    with open(path, "wb") as out:
        # "file" is savez's own parameter: the ids go as "ids".
        np.savez(out, **{("ids" if k == "file" else k): np.asarray(v, bool if k == "is_read" else np.int64)
                         for k, v in arrays.items()})
    exact = run_pass(path, exact_limit=1 << 62)
    sampled = run_pass(path, **sampled_kwargs)
    sizes = np.array([p["cache_blocks"] for p in exact["curve"]["points"]])
    sizes = sizes[sizes >= sampled["curve"]["points"][0]["cache_blocks"]]  # what the sample resolves
    error = np.abs(hit_at(sampled["curve"], sizes) - hit_at(exact["curve"], sizes))
    s = sampled["curve"]["sampling"]
    print(f"{name:34s} {s['block_references']:>11,} {s['rate']:6.3f} {error.mean():7.4f} {error.max():7.4f} "
          f"{s['hit_fraction_error']:9.4f} {exact['seconds']:7.2f} {sampled['seconds']:7.2f} "
          f"{exact['peak_rss_mib']:7.0f} {sampled['peak_rss_mib']:7.0f}")
    return float(error.mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--references", type=int, default=24_000_000, help="Block references per synthetic trace.")
    args = parser.parse_args()
    from fsbm.characterizer.reuse import EXACT_LIMIT, SAMPLE_BUDGET

    print(f"exact up to {EXACT_LIMIT:,} block references; beyond, a sample of about {SAMPLE_BUDGET:,}")
    print(f"{'trace':34s} {'block refs':>11s} {'rate':>6s} {'MAE':>7s} {'max':>7s} {'reported':>9s} "
          f"{'exact s':>7s} {'SHARDS s':>7s} {'exact MiB':>7s} {'SHARDS MiB':>7s}")
    errors = []
    rng = np.random.default_rng(37)
    with tempfile.TemporaryDirectory(prefix="fsbm-bench-reuse-") as tmp:
        work = Path(tmp)
        for kind in ("files reread", "zipf blocks", "file scans"):
            errors.append(compare(f"synthetic: {kind}", synthetic(kind, args.references, rng), work,
                                  {"exact_limit": 0}))
        logs = [a for a in (strace_references(log, work) for log in sorted(SHARED.glob("*")) if SHARED.is_dir())
                if a is not None]
        if logs:
            # One trace of every log in turn, each log's files its own: the logs are a few
            # hundred reads each, too few to sample alone.
            shift = np.cumsum([0] + [int(a["file"].max()) + 1 for a in logs[:-1]])
            together = {k: np.concatenate([a[k] + (s if k == "file" else 0) if k != "is_read" else a[k]
                                           for a, s in zip(logs, shift)]) for k in logs[0]}
            blocks = int((((together["offset"] + together["length"] - 1) // 4096)
                          - together["offset"] // 4096 + 1).sum())
            for rate in (0.25, 0.1):
                errors.append(compare(f"shared: {len(logs)} strace logs, rate {rate}", together, work,
                                      {"exact_limit": 0, "budget": max(int(blocks * rate), 1)}))
    worst = max(errors)
    print(f"mean absolute error: median {np.median(errors):.4f}, largest {worst:.4f} over {len(errors)} traces "
          f"(target <= 0.01): {'ok' if worst <= 0.01 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

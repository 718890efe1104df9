"""Synthetic event tables for the characterizer's benchmarks, shaped like a real mix: per
actor, opens, reads and writes at sequential and random offsets, stats, syncs and closes,
built vectorized.  Not a test fixture: the benchmarks time and size what fsbm does with them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from fsbm.traces.schema import EVENT_SCHEMA, metadata

EPOCH_NS = 1_700_000_000 * 10**9


def synthetic(n: int, seed: int = 1, *, first_seq: int = 0, first_ts: int = EPOCH_NS) -> pa.Table:
    """`n` events of 64 actors on 20,000 files, numbered from `first_seq`, stamped from
    `first_ts` on; cast to the event schema, with its metadata."""
    rng = np.random.default_rng(seed)
    actors = rng.integers(0, 64, n)
    files = rng.integers(0, 20_000, n)
    ops = rng.choice(np.array(["read", "write", "stat", "open", "close", "fsync"]), n,
                     p=[0.45, 0.25, 0.19, 0.05, 0.05, 0.01])
    size = np.where(np.isin(ops, ["read", "write"]),
                    rng.choice([512, 4096, 8192, 65536, 1 << 20], n, p=[0.2, 0.5, 0.2, 0.09, 0.01]), 0)
    seq = np.arange(first_seq, first_seq + n, dtype=np.int64)
    offset = np.where(rng.random(n) < 0.6, (seq % 256) * 4096, rng.integers(0, 1 << 16, n) * 4096)
    ts = np.cumsum(rng.integers(1_000, 50_000, n)) + first_ts
    data = np.isin(ops, ["read", "write"])
    table = pa.table({
        "seq": seq, "ts": ts, "dur": rng.integers(500, 100_000, n),
        "actor": pa.array(actors.astype(str)), "op": pa.array(ops), "orig": pa.array(ops),
        "file": pa.array(np.char.add("/data/f", files.astype(str))), "path": pa.nulls(n, pa.string()),
        "path2": pa.nulls(n, pa.string()),
        "offset": pa.array(np.where(data, offset, 0), mask=~data), "size": pa.array(size, mask=~data),
        "ret": pa.array(size), "errno": pa.nulls(n, pa.string()), "record": seq.copy(),
    })
    return table.cast(EVENT_SCHEMA).replace_schema_metadata(metadata(format="synthetic"))


def write_partitioned(directory: Path, events: int, per_file: int = 5_000_000) -> list[Path]:
    """`events` events as Parquet files of `per_file` each, one trace numbered and stamped
    on from file to file; a file at a time is held."""
    directory.mkdir(parents=True, exist_ok=True)
    paths, seq, ts = [], 0, EPOCH_NS
    for i, start in enumerate(range(0, events, per_file)):
        table = synthetic(min(per_file, events - start), seed=i + 1, first_seq=seq, first_ts=ts)
        paths.append(directory / f"part-{i:04d}.parquet")
        pq.write_table(table, paths[-1])
        seq += table.num_rows
        ts = int(table["ts"][-1].as_py()) + 1_000
    return paths

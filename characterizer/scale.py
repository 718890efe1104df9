"""The characterizer on a Dask cluster, over partitioned Parquet (issue 4: scale-out).

Why this shape: every statistic but a few is computed per actor (sequentiality, runs,
think time, open files) and merges by adding (partial.py).  So the events are shuffled
by actor: each input piece (a run of Parquet row groups) is split into buckets by a stable
hash of the actor name; each bucket, holding whole actors, is summarized on a worker; the
summaries merge in a tree; the client finalizes.  The few statistics that need the whole
trace in order (the reuse curve, open files over time) travel as compact arrays, so the
result equals the single-machine profile exactly; the test checks equality, not closeness.

`workers=N` starts a local cluster of N single-threaded processes; `scheduler=ADDRESS`
joins a running one (its workers need fsbm installed and the Parquet files at the same path).
"""

from __future__ import annotations

import zlib
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fsbm.characterizer.arrays import to_arrays
from fsbm.characterizer.partial import Partial, finalize, summarize
from fsbm.characterizer.profile import Profile
from fsbm.characterizer.reference_log import LogFacts, LogPlan, LogSample, ReferenceLog, ReferenceSummary
from fsbm.errors import UsageError
from fsbm.traces.ingest import DICTIONARY_COLUMNS, check_event_table

ROWS_PER_PIECE = 1_000_000


@dataclass(frozen=True)
class Piece:
    """Some row groups of one Parquet file: the unit a worker reads."""

    path: str
    row_groups: tuple[int, ...]


@dataclass
class Facts:
    """What every bucket must agree on before it is summarized."""

    events: int
    origin: int | None      # first timestamp; None when some event has none
    first_seq: int | None
    nfs: bool

    def merge(self, other: "Facts") -> "Facts":
        def least(a: int | None, b: int | None) -> int | None:
            return b if a is None else a if b is None else min(a, b)
        timed = (self.origin is not None or not self.events) and (other.origin is not None or not other.events)
        return Facts(self.events + other.events, least(self.origin, other.origin) if timed else None,
                     least(self.first_seq, other.first_seq), self.nfs or other.nfs)


def pieces(path: Path, rows_per_piece: int = ROWS_PER_PIECE) -> list[Piece]:
    """A Parquet event table (one file, or a directory of them) cut into pieces of whole row
    groups; each file is checked to be an fsbm event table first."""
    path = Path(path)
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise UsageError(f"{path} holds no .parquet files")
    out = []
    for file in files:
        meta = check_event_table(file)
        group, rows = [], 0
        for i in range(meta.num_row_groups):
            group.append(i)
            rows += meta.row_group(i).num_rows
            if rows >= rows_per_piece:
                out.append(Piece(str(file), tuple(group)))
                group, rows = [], 0
        if group:
            out.append(Piece(str(file), tuple(group)))
    return out


def _bucket_of(actors: list[str], buckets: int) -> np.ndarray:
    """A stable hash (crc32, the same in every process, unlike hash()) of each actor name."""
    return np.array([zlib.crc32(a.encode()) % buckets for a in actors] or [0], dtype=np.int64)


def split(piece: Piece, buckets: int) -> tuple[Facts, list[pa.Table]]:
    """Read a piece and cut it into buckets by actor; with the facts the buckets need."""
    table = pq.ParquetFile(piece.path, read_dictionary=DICTIONARY_COLUMNS).read_row_groups(list(piece.row_groups))
    actor = table["actor"].unify_dictionaries().combine_chunks()
    bucket = _bucket_of(actor.dictionary.to_pylist(), buckets)[actor.indices.fill_null(0).to_numpy()]
    origs = table["orig"].unify_dictionaries().combine_chunks().dictionary.to_pylist()
    ts, seq = table["ts"], table["seq"]
    facts = Facts(table.num_rows, pc.min(ts).as_py() if ts.null_count == 0 and table.num_rows else None,
                  pc.min(seq).as_py(), any(o.startswith("NFS") for o in origs))
    return facts, [table.filter(pa.array(bucket == k)) for k in range(buckets)]


def summarize_bucket(parts: list[pa.Table], facts: Facts, every: int | None, trace: int,
                     scope: str | None = None) -> Partial:
    return summarize(to_arrays(pa.concat_tables(parts)), nfs=facts.nfs, origin=facts.origin or 0,
                     first_seq=facts.first_seq or 0, every=every, trace=trace, scope=scope)


def _detached(part: Partial) -> tuple[Partial, ReferenceLog]:
    """A bucket's Partial without its reference log, and the log."""
    assert part.references is not None
    return replace(part, references=None), part.references


def _tree(items: list, combine) -> object:
    """Pairwise reduction, so no one task merges everything at once."""
    while len(items) > 1:
        items = [combine(items[i], items[i + 1]) if i + 1 < len(items) else items[i] for i in range(0, len(items), 2)]
    return items[0]


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[object]:
    """A distributed client: a local cluster of `workers` processes, or the scheduler given."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except OSError as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
        with client:
            yield client
        return
    with LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=40) as cluster, Client(cluster) as client:
        yield client


def partial_dask(path: Path, client: object, *, every: int | None = None, trace: int = 0,
                 buckets: int | None = None, rows_per_piece: int = ROWS_PER_PIECE, scope: str | None = None) -> Partial:
    """The mergeable statistics of a Parquet event table, computed on a Dask cluster."""
    import dask
    from dask import delayed

    work = pieces(path, rows_per_piece)
    n_buckets = buckets or 2 * max(1, len(client.nthreads()))  # type: ignore[attr-defined]
    splits = [delayed(split, nout=2)(piece, n_buckets) for piece in work]
    facts = _tree([s[0] for s in splits], delayed(Facts.merge))
    summaries = [delayed(_detached, nout=2)(delayed(summarize_bucket)([s[1][k] for s in splits], facts, every, trace,
                                                                       scope))
                 for k in range(n_buckets)]
    # The buckets' reference logs stay on their workers: the curve is made in two rounds
    # that send only samples (reference_log.py).
    persisted = client.persist([item for pair in summaries for item in pair])  # type: ignore[attr-defined]
    parts, logs = persisted[0::2], persisted[1::2]
    part, total, log_facts = dask.compute(_tree(parts, delayed(Partial.merge)), facts,
                                          _tree([delayed(ReferenceLog.facts)(log) for log in logs],
                                                delayed(LogFacts.merge)), scheduler=client)
    if part.seen != total.events:
        raise RuntimeError(f"the buckets hold {part.seen} events, the pieces {total.events}")
    plan = LogPlan.of(log_facts)
    sample = dask.compute(_tree([delayed(ReferenceLog.sample)(log, plan) for log in logs],
                                delayed(LogSample.merge)), scheduler=client)[0]
    part.reference_summary = ReferenceSummary(log_facts, plan, sample)
    part.sources = [str(path)]
    if Path(path).is_file():  # the traced job's calls and processes, from the table's footer
        from fsbm.traces.ingest import timeline_of

        part.timeline = timeline_of(Path(path))
    return part


def characterize_dask(path: Path, client: object, *, every: int | None = None, **options: int) -> Profile:
    """The profile of a Parquet event table computed on a Dask cluster: equal to characterize()."""
    return Profile(finalize(partial_dask(path, client, every=every, **options)))

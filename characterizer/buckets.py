"""An event table's pieces cut into buckets of converted columns, and a bucket read back as
EventArrays (scale.py's buckets).

A bucket part holds the events of one piece that fall in one bucket, as the columns the
statistics read (EventArrays'), already converted from Arrow: integers with MISSING for
null, operations as indices into OPERATIONS, and actors, files, calls as traced and paths as
ids into the names of that part.  A piece is converted once, cut by one stable sort of its
events' bucket numbers (a radix sort on 16-bit keys) and one gather per column, and each
part keeps only the names its events use, so a bucket's parts join with one hash of their
names.  Parts go to disk as pickles of their arrays: nothing is encoded or compressed, so
writing and reading them costs little more than copying the memory.

What a part holds of a row is fixed by the columns the statistics read: `path2` and
`record` are never read, so they are never cut.
"""

from __future__ import annotations

import heapq
import os
import pickle
import posixpath
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fsbm.characterizer.arrays import (MISSING, EventArrays, dictionary_ids, ints, one_dictionary, operation_index,
                                      operations_in, plumbing_origs)
from fsbm.characterizer.syncs import NAMESPACE_OPS, SYNC_OPS
from fsbm.errors import UsageError
from fsbm.host import usable_cores
from fsbm.traces.ingest import DICTIONARY_COLUMNS

# The columns a part is made from; "path" is read as a dictionary too, so that its strings are
# never hashed again.
READ_COLUMNS = ["seq", "ts", "dur", "actor", "op", "orig", "file", "path", "offset", "size", "ret", "errno"]
NAMED = ("actor", "file", "orig", "path")  # id columns, each with its names
NO_PATH = -1


@dataclass(frozen=True)
class BucketPart:
    """Some events of one piece, as EventArrays' columns with the names their ids stand for
    (module docstring).  `path` is NO_PATH where the event names no path."""

    seq: np.ndarray     # int64
    ts: np.ndarray      # int64, MISSING where unknown
    dur: np.ndarray
    actor: np.ndarray   # int32 ids into actors
    file: np.ndarray    # int32 ids into files
    orig: np.ndarray    # int32 ids into origs
    path: np.ndarray    # int32 ids into paths, NO_PATH for none
    op: np.ndarray      # int8 index into OPERATIONS
    offset: np.ndarray  # int64, MISSING
    size: np.ndarray
    ret: np.ndarray
    failed: np.ndarray  # bool: errno set
    actors: pa.Array    # strings
    files: pa.Array
    origs: pa.Array
    paths: pa.Array

    @property
    def rows(self) -> int:
        return len(self.seq)

    def take(self, rows: np.ndarray | slice) -> "BucketPart":
        """These events at `rows` (positions, or a slice: then views), with every name kept."""
        return replace(self, **{f.name: getattr(self, f.name)[rows] for f in fields(self) if f.name not in _NAMES})

    def compacted(self) -> "BucketPart":
        """The same events with only the names they use, renumbered in the names' order."""
        changes: dict[str, object] = {}
        for column, names in zip(NAMED, _NAMES):
            ids, kept = _compacted(getattr(self, column), getattr(self, names))
            changes[column], changes[names] = ids, kept
        return replace(self, **changes)


_NAMES = ("actors", "files", "origs", "paths")


def _compacted(ids: np.ndarray, names: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """`ids` renumbered over the names they use, and those names (NO_PATH stays)."""
    known = ids[ids >= 0] if (ids < 0).any() else ids
    used = np.bincount(known, minlength=len(names)).astype(bool) if len(known) else np.zeros(len(names), bool)
    if used.all():
        return ids, names
    renumber = np.cumsum(used, dtype=np.int32) - 1
    return np.where(ids >= 0, renumber[np.maximum(ids, 0)], NO_PATH).astype(np.int32), names.filter(pa.array(used))


def read_piece(path: str, row_groups: list[int]) -> BucketPart:
    """Some row groups of a Parquet event table, converted."""
    return of_table(_read_row_groups(path, row_groups, READ_COLUMNS, [*DICTIONARY_COLUMNS, "path"]))


def _read_row_groups(path: str, row_groups: list[int], columns: list[str], dictionaries: list[str]) -> pa.Table:
    """Some columns of some row groups; a damaged file is a clear error naming the row groups,
    not a decoder's traceback (its footer was checked before: scale.pieces).  Parquet's
    threads decode columns side by side; on one processor they only take turns, and read a
    10 M-event table in twice the time one thread takes, so they are used only where the
    process has more than one."""
    try:
        return (pq.ParquetFile(path, read_dictionary=dictionaries)
                .read_row_groups(row_groups, columns=columns, use_threads=usable_cores() > 1))
    except (OSError, pa.ArrowException) as exc:
        groups = (f"row group {row_groups[0]}" if len(row_groups) == 1
                  else f"row groups {row_groups[0]}-{row_groups[-1]}")
        raise UsageError(f"{path}: {groups} cannot be read ({exc})",
                         hint="the event table is damaged; make it again from the trace (fsbm trace parse)") from exc


def of_table(table: pa.Table) -> BucketPart:
    """An event table's columns (at least READ_COLUMNS), converted, in the table's order."""
    named = {column: dictionary_ids(table[column]) for column in ("actor", "file", "orig")}
    path_ids, paths = _paths(table["path"])
    op_ids, op_names = dictionary_ids(table["op"])
    return BucketPart(
        seq=ints(table["seq"]), ts=ints(table["ts"]), dur=ints(table["dur"]),
        actor=named["actor"][0], file=named["file"][0], orig=named["orig"][0], path=path_ids,
        op=operation_index(op_names.to_pylist())[op_ids],
        offset=ints(table["offset"]), size=ints(table["size"]), ret=ints(table["ret"]),
        failed=table["errno"].is_valid().to_numpy(zero_copy_only=False),
        actors=named["actor"][1], files=named["file"][1], origs=named["orig"][1], paths=paths)


def _paths(column: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """The path column as ids into its strings, NO_PATH where null (a null is no path, not "")."""
    encoded = one_dictionary(column)
    ids = encoded.indices.fill_null(NO_PATH) if encoded.null_count else encoded.indices
    return ids.to_numpy(zero_copy_only=False).astype(np.int32), encoded.dictionary.cast(pa.string())


def cut(part: BucketPart, bucket: np.ndarray, buckets: int) -> list[BucketPart]:
    """`part`'s events cut into `buckets` by `bucket` (one number per event), each bucket's
    in their order in `part`, with only the names it uses."""
    key = bucket.astype(np.int16 if buckets <= np.iinfo(np.int16).max else np.int32)
    order = np.argsort(key, kind="stable")
    bounds = np.searchsorted(key[order], np.arange(buckets + 1))
    moved = part.take(order)
    return [moved.take(slice(lo, hi)).compacted() for lo, hi in zip(bounds[:-1], bounds[1:])]


def stable_bucket(names: list[str], buckets: int) -> np.ndarray:
    """A stable hash (crc32, the same in every process, unlike hash()) of each name, as a
    bucket number."""
    return np.array([_bucket_of(name, buckets) for name in names] or [0], dtype=np.int64)


def _bucket_of(name: str, buckets: int) -> int:
    return zlib.crc32(name.encode()) % buckets


# Each file name's bucket and its directory's, by count of buckets, kept from one piece to the
# next: a trace's pieces name the same files again and again, and finding a name's directory
# and hashing both took a third of cutting a piece by file.  At most this many names are kept.
NAMES_REMEMBERED = 1 << 20
_file_buckets: dict[int, dict[str, tuple[int, int]]] = {}


def file_and_directory_buckets(names: list[str], buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """Each name's bucket (stable_bucket) and its directory's, for `names` as stable_bucket
    takes them (one 0 each where there are none), remembered across calls."""
    if sum(map(len, _file_buckets.values())) + len(names) > NAMES_REMEMBERED:
        _file_buckets.clear()  # the bound holds over every count of buckets a process has cut by
    known = _file_buckets.setdefault(buckets, {})
    pairs = []
    for name in names:
        pair = known.get(name)
        if pair is None:
            pair = known[name] = (_bucket_of(name, buckets), _bucket_of(posixpath.dirname(name), buckets))
        pairs.append(pair)
    both = np.array(pairs or [(0, 0)], dtype=np.int64)
    return both[:, 0], both[:, 1]


def actor_counts(path: str, row_groups: list[int]) -> Counter[str]:
    """How many events each actor has in some row groups of a Parquet event table: its actor
    column alone is read."""
    column = _read_row_groups(path, row_groups, ["actor"], ["actor"])["actor"]
    ids, names = dictionary_ids(column)
    counts = np.bincount(ids, minlength=len(names))
    return Counter({name: int(n) for name, n in zip(names.to_pylist(), counts) if n})


def packed(counts: Mapping[str, int], buckets: int) -> dict[str, int]:
    """Each actor's bucket, so that the largest bucket is about as small as whole actors allow:
    the actors by events, most first, each into the bucket that holds fewest events so far
    (longest processing time first, within 4/3 of the least largest bucket).  A hash of the
    names takes no account of their sizes: 64 actors of 1.6 M events each, hashed into 100
    buckets, put three into one."""
    held = [(0, k) for k in range(buckets)]
    bucket_of = {}
    for name, events in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        total, k = heapq.heappop(held)
        bucket_of[name] = k
        heapq.heappush(held, (total + events, k))
    return bucket_of


def by_actor(part: BucketPart, bucket_of: Mapping[str, int], buckets: int) -> list[BucketPart]:
    """A piece's events cut into buckets of whole actors, each actor's bucket `bucket_of` it
    (packed)."""
    where = np.array([bucket_of[name] for name in part.actors.to_pylist()] or [0], dtype=np.int64)
    return cut(part, where[part.actor], buckets)


def by_file(part: BucketPart, buckets: int) -> list[BucketPart]:
    """The events sync kinds depend on (syncs.py) cut into buckets by a stable hash of their
    file, each bucket with the namespace changes in the directories it holds too: a bucket's
    syncs are then told exactly as the whole trace tells them."""
    own, parent = (of[part.file] for of in file_and_directory_buckets(part.files.to_pylist(), buckets))
    namespace = operations_in(part.op, NAMESPACE_OPS)
    rows = np.flatnonzero(operations_in(part.op, SYNC_OPS) | namespace)
    elsewhere = np.flatnonzero(namespace & (parent != own))  # also where their directory's syncs are
    at = np.concatenate((rows, elsewhere))
    return cut(part.take(at), np.concatenate((own[rows], parent[elsewhere])), buckets)


def arrays_of(parts: Iterable[BucketPart], rows: int | None = None) -> EventArrays:
    """Parts as one EventArrays: their names joined (each name one id, in the order the parts
    first use them), their events in sequence order.  The parts are copied into arrays of
    `rows` events (by default, the parts' own) one after another, so that parts read one at a
    time (read_arrays) are never held together with the arrays they fill: the peak is the
    arrays and one part, not twice the events."""
    if rows is None:
        parts = list(parts)
        rows = sum(part.rows for part in parts)
    columns = {f.name: np.empty(rows, getattr(_EMPTY, f.name).dtype) for f in fields(BucketPart) if f.name not in _NAMES}
    names: dict[str, list[pa.Array]] = {kind: [] for kind in _NAMES}
    bounds = [0]
    in_sequence = True  # whether the events are in sequence order as the parts come
    for part in parts:
        if bounds[-1] + part.rows > rows:
            raise ValueError(f"the parts hold more than the {rows} events they were said to")
        at = slice(bounds[-1], bounds[-1] + part.rows)
        if part.rows:
            seq = part.seq
            in_sequence = in_sequence and not (seq[1:] < seq[:-1]).any() and not (
                at.start and seq[0] < columns["seq"][at.start - 1])
        for name, values in columns.items():
            values[at] = getattr(part, name)
        for kind in _NAMES:
            names[kind].append(getattr(part, kind))
        bounds.append(at.stop)
    if bounds[-1] != rows:
        raise ValueError(f"the parts hold {bounds[-1]} events, not the {rows} they were said to")
    joined = {kind: _renumbered(columns[column], bounds, names[kind]) for column, kind in zip(NAMED, _NAMES)}
    if not in_sequence:
        order = np.argsort(columns["seq"], kind="stable")
        for name in columns:  # a column at a time: one column's copy more, not the events'
            columns[name] = columns[name][order]
        del order
    origs = joined["origs"].to_pylist()
    path = columns.pop("path")
    paths = pa.DictionaryArray.from_arrays(pa.array(path, mask=path == NO_PATH), joined["paths"])
    del path
    return EventArrays(n=rows, **columns, plumbing=plumbing_origs(origs)[columns["orig"]],
                       actors=joined["actors"].to_pylist(), files=joined["files"].to_pylist(), origs=origs,
                       paths=pa.chunked_array([paths]))


def _renumbered(ids: np.ndarray, bounds: list[int], names: list[pa.Array]) -> pa.Array:
    """The union of the parts' names; `ids`, the parts' own ids one after another (the part
    i at bounds[i]:bounds[i + 1]), renumbered over it in place (NO_PATH stays)."""
    if not names:
        return pa.array([], pa.string())
    encoded = pc.dictionary_encode(pa.concat_arrays(names))
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    start = 0
    for lo, hi, part_names in zip(bounds[:-1], bounds[1:], names):
        local = np.append(codes[start:start + len(part_names)], np.int32(NO_PATH))
        ids[lo:hi] = local[ids[lo:hi]]  # NO_PATH (-1) takes the last: NO_PATH
        start += len(part_names)
    return encoded.dictionary


def _empty() -> BucketPart:
    none = np.zeros(0, np.int64)
    ids = np.zeros(0, np.int32)
    strings = pa.array([], pa.string())
    return BucketPart(none, none, none, ids, ids, ids, ids, np.zeros(0, np.int8), none, none, none,
                      np.zeros(0, bool), strings, strings, strings, strings)


_EMPTY = _empty()


def origin_of(part: BucketPart) -> int | None:
    """The part's first timestamp; None where some event has none (or there are none)."""
    return int(part.ts.min()) if part.rows and not (part.ts == MISSING).any() else None


def write_parts(path: str, parts: list[BucketPart]) -> None:
    """Parts to a file of their own, one pickle after another (read_parts)."""
    with open(path, "wb") as out:
        for part in parts:
            pickle.dump(part, out, protocol=pickle.HIGHEST_PROTOCOL)


def read_parts(paths: list[str]) -> list[BucketPart]:
    """Every part written to these files (write_parts), in order; a file not there holds none."""
    parts = []
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, "rb") as f:
            while True:
                try:
                    parts.append(pickle.load(f))
                except EOFError:
                    break
    return parts

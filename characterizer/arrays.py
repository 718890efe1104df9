"""The event table as numpy arrays: ids for actors, files and operations, integers with
a sentinel for missing values.  Every statistic is computed on these, vectorized."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fsbm.traces.vocabulary import LISTED_ENTRY_ORIG, NFS4_PLUMBING, OPERATIONS, PSEUDO_FILES

MISSING = np.iinfo(np.int64).min
OP_INDEX = {name: i for i, name in enumerate(OPERATIONS)}


@dataclass
class EventArrays:
    n: int
    seq: np.ndarray
    ts: np.ndarray          # int64 ns, MISSING when the trace has no times
    dur: np.ndarray         # int64 ns, MISSING when unknown
    actor: np.ndarray       # int32 ids into actors
    file: np.ndarray        # int32 ids into files
    op: np.ndarray          # int8 index into OPERATIONS
    orig: np.ndarray        # int32 ids into origs
    offset: np.ndarray      # int64, MISSING
    size: np.ndarray
    ret: np.ndarray
    failed: np.ndarray      # bool: errno set
    plumbing: np.ndarray    # bool: no call of its own (plumbing_origs)
    actors: list[str]
    files: list[str]
    origs: list[str]
    paths: pa.ChunkedArray  # kept as Arrow: only directory statistics need it

    @cached_property
    def has_time(self) -> bool:
        return self.n > 0 and bool((self.ts != MISSING).all())

    @cached_property
    def in_sequence(self) -> bool:
        """Whether the sequence numbers never go back (to_arrays sorts them so): asked by
        every pass that walks the events in trace order, so found once."""
        return self.n < 2 or not (np.diff(self.seq) < 0).any()


# The operations a filesystem's cost table prices.  The rest (seek, mmap, other) cost the
# same on every filesystem as far as fsbench can tell: their time stays outside.
COSTED_OPERATIONS = ("open", "close", "create", "read", "write", "stat", "setattr", "readdir", "mkdir", "rmdir",
                     "unlink", "rename", "link", "symlink", "readlink", "fsync")


def of_operations(ev: EventArrays, names: tuple[str, ...] | list[str]) -> np.ndarray:
    """Which events are of one of the operations `names` (operations_in)."""
    return operations_in(ev.op, names)


def operations_in(op: np.ndarray, names: tuple[str, ...] | list[str]) -> np.ndarray:
    """Which of the operations `op` (indices into OPERATIONS) are one of `names`: a lookup in
    a table of the operations, one pass (np.isin sorts)."""
    wanted = np.zeros(len(OPERATIONS), bool)
    wanted[[OP_INDEX[name] for name in names]] = True
    return wanted[op]


def costed(ev: EventArrays) -> np.ndarray:
    """Which events are of an operation a cost table prices."""
    return of_operations(ev, COSTED_OPERATIONS)


def ints(column: pa.ChunkedArray) -> np.ndarray:
    """int64 values, MISSING where null: straight from the Arrow buffers, no new Arrow array."""
    parts = []
    for chunk in column.chunks:
        values = chunk.to_numpy(zero_copy_only=False) if chunk.null_count == 0 else None
        if values is None:
            validity, data = chunk.buffers()[:2]
            raw = np.frombuffer(data, dtype=np.int64, count=chunk.offset + len(chunk))[chunk.offset:]
            bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
            valid = bits[chunk.offset:chunk.offset + len(chunk)].astype(bool)
            values = np.where(valid, raw, MISSING)
        parts.append(values.astype(np.int64, copy=False))
    if not parts:
        return np.zeros(0, np.int64)
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def one_dictionary(column: pa.ChunkedArray) -> pa.DictionaryArray:
    """A column as one dictionary array: a dictionary column (read_events) with its chunks'
    dictionaries unified, any other encoded; nulls stay null."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    column = column.unify_dictionaries() if column.num_chunks > 1 else column
    return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)


def dictionary_ids(column: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """A column as dense int32 ids and the strings they stand for (one_dictionary); nulls are
    the string "", added at the end where the names lack it."""
    encoded = one_dictionary(column if pa.types.is_dictionary(column.type) else column.fill_null(""))
    names = encoded.dictionary.cast(pa.string())
    if encoded.null_count:
        ids = encoded.indices.fill_null(len(names))
        return ids.to_numpy().astype(np.int32), pa.concat_arrays([names, pa.array([""], pa.string())])
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32), names


def _ids(column: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Dense ids and their names (dictionary_ids)."""
    ids, names = dictionary_ids(column)
    return ids, names.to_pylist()


def operation_index(op_names: list[str]) -> np.ndarray:
    """Per name of an operation, its index in OPERATIONS (an unknown one is "other")."""
    return np.array([OP_INDEX.get(name, OP_INDEX["other"]) for name in op_names] or [0], dtype=np.int8)


def plumbing_origs(origs: list[str]) -> np.ndarray:
    """Per call as traced, whether its events are no calls of their own, so Tang's table and
    the open files leave them out: an NFSv4 operation that only carries state, or an entry a
    READDIRPLUS returned with its attributes (a stat the server made, priced as one)."""
    return np.array([(o.startswith("NFS4.") and o[5:] in NFS4_PLUMBING) or o == LISTED_ENTRY_ORIG for o in origs]
                    or [False])


def to_arrays(table: pa.Table) -> EventArrays:
    table = table.sort_by("seq") if table.num_rows and not _is_sorted(table["seq"]) else table
    actor, actors = _ids(table["actor"])
    file, files = _ids(table["file"])
    orig, origs = _ids(table["orig"])
    op_ids, op_names = _ids(table["op"])
    return EventArrays(
        n=table.num_rows,
        seq=ints(table["seq"]),
        ts=ints(table["ts"]),
        dur=ints(table["dur"]),
        actor=actor,
        file=file,
        op=operation_index(op_names)[op_ids],
        orig=orig,
        offset=ints(table["offset"]),
        size=ints(table["size"]),
        ret=ints(table["ret"]),
        failed=table["errno"].is_valid().to_numpy(zero_copy_only=False),
        plumbing=plumbing_origs(origs)[orig],
        actors=actors,
        files=files,
        origs=origs,
        paths=table["path"],
    )


def subset(ev: EventArrays, rows: np.ndarray) -> EventArrays:
    """The events where the boolean mask `rows` is set, sharing the dictionaries."""
    picked = [getattr(ev, name)[rows] for name in ("seq", "ts", "dur", "actor", "file", "op", "orig", "offset",
                                                    "size", "ret", "failed", "plumbing")]
    return EventArrays(int(rows.sum()), *picked, ev.actors, ev.files, ev.origs, ev.paths.filter(pa.array(rows)))


def pseudo_kinds(ev: EventArrays) -> np.ndarray:
    """Per event, the index in PSEUDO_FILES of the kind of pseudo file it is on, or -1 for a
    file on a filesystem.  Calls on them are left out of the workload and counted apart (a
    git trace reads /dev/urandom thousands of times)."""
    kinds = np.full(len(ev.files) or 1, -1, np.int64)
    for i, f in enumerate(ev.files):
        for k, (_, prefixes) in enumerate(PSEUDO_FILES):
            if f.startswith(prefixes):
                kinds[i] = k
                break
    return kinds[ev.file] if ev.n else np.zeros(0, np.int64)


def under(ev: EventArrays, directory: str) -> np.ndarray:
    """Which events are on files beneath `directory` (an absolute path), or on it."""
    directory = directory.rstrip("/") or "/"
    prefix = directory if directory == "/" else directory + "/"
    inside = np.array([f == directory or f.startswith(prefix) for f in ev.files] or [False])
    return inside[ev.file]


def _is_sorted(column: pa.ChunkedArray) -> bool:
    values = column.to_numpy()
    return bool((np.diff(values) >= 0).all()) if len(values) > 1 else True


def access_lengths(ev: EventArrays, idx: np.ndarray | slice = slice(None)) -> np.ndarray:
    """Bytes an access really moved: ret when known (0 at end of file), else bytes asked."""
    ret, size = ev.ret[idx], ev.size[idx]
    return np.where(ret >= 0, ret, np.where(size != MISSING, size, 0))


def present(ids: np.ndarray, size: int) -> np.ndarray:
    """Which of the dense ids 0..size-1 occur: a bincount, linear time (np.unique sorts)."""
    return np.bincount(ids, minlength=size).astype(bool) if len(ids) else np.zeros(size, bool)


def first_of_each(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ids, ascending, and the index of each one's first occurrence (np.unique's
    return_index): a minimum over a table of the ids where they are dense, else a sort."""
    if not len(ids):
        return ids.astype(np.int64), np.zeros(0, np.int64)
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high > max(4 * len(ids), 1 << 20):
        distinct, first = np.unique(ids, return_index=True)
        return distinct.astype(np.int64), first.astype(np.int64)
    first = np.full(high + 1, len(ids), np.int64)
    np.minimum.at(first, ids, np.arange(len(ids), dtype=np.int64))
    distinct = np.flatnonzero(first < len(ids))
    return distinct, first[distinct]


def group_key(ev: EventArrays, idx: np.ndarray, sub: np.ndarray | None = None) -> np.ndarray:
    """One int64 per (actor, file[, sub]) so a single sort groups them."""
    key = ev.actor[idx].astype(np.int64) * max(len(ev.files), 1) + ev.file[idx]
    return key if sub is None else key * 2 + sub


def group_order(ev: EventArrays, idx: np.ndarray, clock: np.ndarray, sub: np.ndarray | None = None) -> np.ndarray:
    """An order of idx (ascending positions) by (actor, file[, sub]), then time, then position:
    one stable sort when time never goes backwards in trace order, else a lexsort."""
    key = group_key(ev, idx, sub)
    if len(idx) < 2 or ((np.diff(idx) >= 0).all() and (np.diff(clock) >= 0).all()):
        return np.argsort(key, kind="stable")
    return np.lexsort((idx, clock, key))


def sequence_order(ev: EventArrays) -> np.ndarray | None:
    """The order a pass in C walks the events in, trace order: None where they are in it
    already (to_arrays sorts them so), else their positions by sequence number, stably."""
    return None if ev.in_sequence else np.ascontiguousarray(np.argsort(ev.seq, kind="stable"), np.int64)

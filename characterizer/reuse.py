"""The page-cache reuse curve: for every cache size, the fraction of 4 KiB block reads that
would hit in an LRU cache of that size (Mattson stack distances, one pass; DESIGN.md).

Reads and writes both reference blocks (a write leaves the block cached); only reads are
scored.  The stack-distance pass itself runs in C (characterizer/native/stackdist.c).

Each point also says what share of the files' first reads hit (`first_read_hit_fraction`):
a file read from its start is first a random read (predictor/model.py), and whether that
read misses depends on the file, not on the workload's reads overall.  A program that unpacks
an archive and then reads what it unpacked misses on the archive alone: its overall miss
fraction, spread over every file's first read, would have each of them miss half the time.

Each block reference carries the data class of its access (classes.py), and the curve's
document counts, per class, the sampled block reads and those an earlier reference to the
block preceded (CLASS_READS): the profile gives each read class its own share of re-reads
from them (classes.with_reread_fractions), from the same sample in one process or in parts.

Up to EXACT_LIMIT block references the curve is exact.  Beyond it, it is estimated from a
spatially hashed sample (SHARDS: Waldspurger et al., FAST 2015): a block is in the sample
when a hash of its key falls under a threshold, so every reference to a sampled block is
kept, and a sampled reference's stack distance, over the rate, estimates its distance in
the whole trace, for caches of 1 / rate blocks and more (the smallest a sampled curve
gives).  The rate is chosen so the sample holds about SAMPLE_BUDGET references whatever
the trace's size, and the accesses are walked a chunk of blocks at a time: beyond its
input, the pass holds memory in proportion to the budget, not to the trace.  A second
sample, under another hash, gives the curve's error: the mean absolute difference of the
two curves' hit fractions, over sqrt(2) (each is a draw), is kept beside the curve.

The references may come in parts (a Dask run's buckets, each with its own actors): each
part counts its block references (block_totals), the counts add up to the rate, and each
part samples its own references at that rate (sample), every kept block with its place in
the whole trace (`order`).  Hashing is by key, so the union of the parts' samples is the
sample of the whole trace, and the parts' samples are all that travels: about SAMPLE_BUDGET
references however long the trace.  The files' first reads travel as one per file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from fsbm.characterizer.arrays import OP_INDEX, EventArrays, first_of_each
from fsbm.characterizer.kernels import library

BLOCK = 4096
NO_CODE = -1                # an access no data class counts (an unlink; classes.class_of_code's are >= 0)
EXACT_LIMIT = 16_000_000    # block references up to which the curve is exact
SAMPLE_BUDGET = 4_000_000   # block references a sampled curve keeps, about
CHUNK_BLOCKS = 1_000_000    # block references expanded at a time
FILE_SHIFT = 40             # a block's key: file id above this bit, block number below
SEEDS = (0x5EED_0001, 0x5EED_0002)  # the hashes of the reported sample and of the one that checks it
# In the curve's document: per data class code, [sampled block reads, of them re-references].
CLASS_READS = "class_reads"


@dataclass
class References:
    """The data accesses a cache sees, in trace order: file ids, offsets, bytes, read or not."""

    file: np.ndarray     # int64 ids
    offset: np.ndarray   # int64
    length: np.ndarray   # int64, > 0
    is_read: np.ndarray  # bool
    code: np.ndarray | None = None  # each access's data class (classes.class_of_code); None: not known

    def codes(self) -> np.ndarray:
        """`code`, or NO_CODE for every access where it is not known."""
        return self.code if self.code is not None else np.full(len(self.offset), NO_CODE, np.int16)


def data_accesses(ev: EventArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The events that reference blocks, the bytes each moved and whether it read: reads and
    writes at an offset (not a negative one: such a call fails) that moved bytes (in C:
    characterizer/native/blocks.c)."""
    op = np.ascontiguousarray(ev.op, np.int8)
    offset, size, ret = (np.ascontiguousarray(a, np.int64) for a in (ev.offset, ev.size, ev.ret))
    rows, length = np.empty(ev.n, np.int64), np.empty(ev.n, np.int64)
    is_read = np.empty(ev.n, np.bool_)
    count = library().fsbm_data_accesses(ev.n, op.ctypes.data, OP_INDEX["read"], OP_INDEX["write"], offset.ctypes.data,
                                         size.ctypes.data, ret.ctypes.data, rows.ctypes.data, length.ctypes.data,
                                         is_read.ctypes.data)
    return rows[:count].copy(), length[:count].copy(), is_read[:count].copy()


def previous_reference(keys: np.ndarray) -> np.ndarray:
    """For each reference, the index of the previous one to the same key, or -1 (in C, one
    pass with a hash table: characterizer/native/stackdist.c)."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    prev = np.empty(len(keys), dtype=np.int64)
    if len(keys) and library().fsbm_previous_reference(keys.ctypes.data, len(keys), prev.ctypes.data) != 0:
        raise MemoryError("previous references: out of memory")
    return prev


def member(keys: np.ndarray, of: np.ndarray) -> np.ndarray:
    """Whether each key is one of `of` (np.isin's answer, with a hash table in C rather than
    two sorts)."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    of = np.ascontiguousarray(of, dtype=np.int64)
    inside = np.zeros(len(keys), dtype=np.bool_)
    if len(keys) and len(of) and library().fsbm_member(keys.ctypes.data, len(keys), of.ctypes.data, len(of),
                                                       inside.ctypes.data) != 0:
        raise MemoryError("membership: out of memory")
    return inside


def stack_distances(keys: np.ndarray) -> np.ndarray:
    prev = previous_reference(keys)
    out = np.empty(len(keys), dtype=np.int64)
    if len(keys) and library().fsbm_stack_distances(prev.ctypes.data, len(keys), out.ctypes.data) != 0:
        raise MemoryError("stack distances: out of memory")
    return out


def spatial_hashes(keys: np.ndarray, seeds: tuple[int, ...]) -> list[np.ndarray]:
    """Per seed, a 64-bit hash of each key: the same key always gets the same hash, so a
    block is in a sample at every reference or at none.  The key is mixed (splitmix64's
    finalizer) before a seed enters, so two seeds' samples are unrelated (a seed xored into
    the key itself would give a second sample of the first's neighbouring blocks); in C
    (characterizer/native/shards.c)."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    seeded = np.array(seeds, dtype=np.uint64)
    out = np.empty((len(seeds), len(keys)), dtype=np.uint64)
    if len(keys) and len(seeds):
        library().fsbm_spatial_hashes(keys.ctypes.data, len(keys), seeded.ctypes.data, len(seeds), out.ctypes.data)
    return list(out)


def block_totals(refs: References) -> tuple[int, int]:
    """How many block references the accesses make, and how many of them are reads (in C:
    characterizer/native/blocks.c)."""
    offset, length = _int64(refs.offset), _int64(refs.length)
    is_read = np.ascontiguousarray(refs.is_read, np.bool_)
    totals = np.zeros(2, np.int64)
    library().fsbm_block_totals(len(offset), offset.ctypes.data, length.ctypes.data, is_read.ctypes.data, BLOCK,
                                totals.ctypes.data)
    return int(totals[0]), int(totals[1])


def _int64(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


Blocks = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # keys, is_read, access, place


def _blocks(refs: References, seeds: tuple[int, ...] = (), threshold: int = 0) -> Iterator[list[Blocks]]:
    """Per chunk of the references' blocks, in their order: with no seeds, [(block keys,
    is_read, access, place)] of every block every access touched, `access` being the index
    of the access it belongs to and `place` its rank within that access; with seeds, one such
    tuple per seed, of the blocks whose spatial hash under it is below `threshold` (in C,
    walked and hashed in one pass: characterizer/native/blocks.c).  At most CHUNK_BLOCKS
    blocks a chunk (an access of many blocks is cut across chunks): beside the references,
    what is held at once is bounded by CHUNK_BLOCKS, not by the trace."""
    walk = library().fsbm_blocks
    files, offset, length = _int64(refs.file), _int64(refs.offset), _int64(refs.length)
    seeded = np.array(seeds, dtype=np.uint64)
    samples = max(len(seeds), 1)
    kept = np.zeros(samples, np.int64)
    cursor = np.zeros(2, np.int64)  # the access, and the block within it, the next chunk starts at
    buffers: tuple[np.ndarray, ...] | None = None  # a sample's chunks reuse one set: what they keep is copied out
    while cursor[0] < len(offset):
        if not seeds or buffers is None:  # every block is kept, or the first chunk
            buffers = tuple(np.empty(samples * CHUNK_BLOCKS, dtype=np.int64) for _ in range(3))
        access, place, keys = buffers
        walk(len(offset), files.ctypes.data, offset.ctypes.data, length.ctypes.data, BLOCK, FILE_SHIFT,
             cursor.ctypes.data, CHUNK_BLOCKS, seeded.ctypes.data, len(seeds), threshold, access.ctypes.data,
             place.ctypes.data, keys.ctypes.data, kept.ctypes.data)
        chunk = []
        for s in range(samples):
            cut = slice(s * CHUNK_BLOCKS, s * CHUNK_BLOCKS + int(kept[s]))
            mine = access[cut]
            chunk.append((keys[cut].copy() if seeds else keys[cut], refs.is_read[mine], mine.copy() if seeds else mine,
                          place[cut].copy() if seeds else place[cut]))
        yield chunk


Order = tuple[np.ndarray, ...]  # where each row falls in the whole trace: sort keys, most significant first


def trace_order(order: Order) -> np.ndarray:
    """The indices that put rows in trace order by their sort keys (most significant first)."""
    ranked = reordering(order)
    return np.arange(len(order[0]) if order else 0) if ranked is None else ranked


def reordering(order: Order) -> np.ndarray | None:
    """trace_order's indices, or None where the rows are in trace order already (one
    trace's, as it was read), which is checked, not sorted.  Keys whose spans multiply
    within 62 bits are packed into one first (a row's seq and its block's place in the
    access, say): each key fewer is one sorting pass fewer."""
    if _in_order(order):
        return None
    keys = _packed(order)
    return np.argsort(keys[0], kind="stable") if len(keys) == 1 else np.lexsort(tuple(reversed(keys)))


def _in_order(order: Order) -> bool:
    """Whether rows are in order by their sort keys already: each key checked only where the
    keys before it tie (one pass, where the clock never ties)."""
    if not len(order) or len(order[0]) < 2:
        return True
    at: np.ndarray | None = None  # the pairs (i, i + 1) still tied on every key so far; None: all
    for key in order:
        ahead, here = (key[1:], key[:-1]) if at is None else (key[at + 1], key[at])
        if (ahead < here).any():
            return False
        tied = np.flatnonzero(ahead == here)
        at = tied if at is None else at[tied]
        if not len(at):
            return True
    return True


def _packed(order: Order) -> list[np.ndarray]:
    """The sort keys with neighbours packed together from the least significant up, where the
    product of their spans fits: the same order, in fewer keys."""
    if not len(order) or not len(order[0]):
        return list(order) or [np.empty(0, np.int64)]
    packed: list[np.ndarray] = []
    acc, span = None, 1
    for key in reversed(order):
        low, width = int(key.min()), int(key.max()) - int(key.min()) + 1
        if acc is not None and span * width < 1 << 62:
            acc = acc + (key.astype(np.int64) - low) * span
            span *= width
        else:
            if acc is not None:
                packed.append(acc)
            acc, span = key.astype(np.int64) - low, width
    packed.append(acc)
    return packed[::-1]


@dataclass
class FirstReads:
    """Each read file's first read (where `order` says it falls, or in the order given) and
    the key of its first block; parts merge by keeping the earlier of a file's two."""

    file: np.ndarray
    key: np.ndarray
    order: Order | None = None

    @classmethod
    def of(cls, refs: References, order: Order | None = None) -> "FirstReads":
        reads = np.flatnonzero(refs.is_read)
        if order is not None:
            reads = reads[trace_order(tuple(o[reads] for o in order))]
        files, first = first_of_each(refs.file[reads])
        chosen = reads[first]
        key = (refs.file[chosen].astype(np.int64) << FILE_SHIFT) | (refs.offset[chosen] // BLOCK)
        return cls(files, key, None if order is None else tuple(o[chosen] for o in order))

    def merge(self, other: "FirstReads") -> "FirstReads":
        if self.order is None or other.order is None:
            raise ValueError("first reads merge only with their place in the trace")
        order = tuple(np.concatenate((a, b)) for a, b in zip(self.order, other.order))
        ranked = trace_order((np.concatenate((self.file, other.file)), *order))
        file = np.concatenate((self.file, other.file))[ranked]
        first = np.ones(len(file), bool)
        first[1:] = file[1:] != file[:-1]
        keep = ranked[first]
        return FirstReads(file[first], np.concatenate((self.key, other.key))[keep], tuple(o[keep] for o in order))


@dataclass
class Sample:
    """Per seed, the block references whose block hashes under `rate` of the hash space:
    keys, is_read and the data class code of the access each belongs to, with each block's
    place in the whole trace (`order`: its access's sort keys, then its rank within the
    access), or None where they are in trace order already."""

    rate: float
    keys: list[np.ndarray]
    is_read: list[np.ndarray]
    code: list[np.ndarray]
    order: list[Order] | None = None

    @classmethod
    def of(cls, refs: References, rate: float, order: Order | None = None, seeds: tuple[int, ...] = SEEDS) -> "Sample":
        """One pass over the blocks; every reference, once, where the rate is 1."""
        if rate >= 1.0:
            seeds = seeds[:1]
        threshold = min(int(rate * 2.0 ** 64), 2 ** 64 - 1)
        parts: list[list[tuple[np.ndarray, ...]]] = [[] for _ in seeds]
        codes = refs.codes()
        for chunk in _blocks(refs, seeds if rate < 1.0 else (), threshold):
            for kept, (keys, is_read, access, place) in zip(parts, chunk):
                where = () if order is None else (*(o[access] for o in order), place.astype(np.int32))
                kept.append((keys, is_read, codes[access], *where))
        nothing = [np.empty(0, np.int64), np.empty(0, bool), np.empty(0, np.int16),
                   *(() if order is None else (*(o[:0] for o in order), np.empty(0, np.int32)))]
        columns = [[np.concatenate(c) for c in zip(*p)] if p else nothing for p in parts]
        return cls(rate, [c[0] for c in columns], [c[1] for c in columns], [c[2] for c in columns],
                   None if order is None else [tuple(c[3:]) for c in columns])

    @classmethod
    def concat(cls, samples: list["Sample"]) -> "Sample":
        """The samples of several parts (each with its places in the trace) as one, built a
        column at a time, each part's column let go as it is taken: beside the result, no more
        than one column is held twice.  The parts are emptied."""
        if len(samples) == 1:
            return samples[0]
        if any(s.order is None for s in samples) or len({s.rate for s in samples}) != 1:
            raise ValueError("samples merge only at one rate and with their place in the trace")

        def take(get: Callable[["Sample"], list], seed: int, column: int | None = None) -> np.ndarray:
            pieces = []
            for sample in samples:
                holder = get(sample)
                if column is None:
                    pieces.append(holder[seed])
                    holder[seed] = None
                else:
                    row = list(holder[seed])
                    pieces.append(row[column])
                    row[column] = None
                    holder[seed] = tuple(row)
            return np.concatenate(pieces)

        seeds = range(len(samples[0].keys))
        width = len(samples[0].order[0]) if samples[0].order else 0  # type: ignore[index]
        keys = [take(lambda s: s.keys, k) for k in seeds]
        is_read = [take(lambda s: s.is_read, k) for k in seeds]
        code = [take(lambda s: s.code, k) for k in seeds]
        order = [tuple(take(lambda s: s.order, k, c) for c in range(width)) for k in seeds]
        return cls(samples[0].rate, keys, is_read, code, order)

    def seed(self, k: int) -> "Sample":
        """Seed k's references alone (the same arrays): what one seed's curve needs, so that
        the seeds' curves can be made apart (seed_curve)."""
        return Sample(self.rate, [self.keys[k]], [self.is_read[k]], [self.code[k]],
                      None if self.order is None else [self.order[k]])

    def in_order(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per seed, (keys, is_read, code) in trace order."""
        if self.order is None:
            return list(zip(self.keys, self.is_read, self.code))
        out = []
        for keys, is_read, code, order in zip(self.keys, self.is_read, self.code, self.order):
            ranked = trace_order(order) if len(keys) else np.empty(0, np.int64)
            out.append((keys[ranked], is_read[ranked], code[ranked]))
        return out


@dataclass
class _Distances:
    """A multiset of stack distances (-1: never referenced before), kept as how many are
    below each distance: what a sorted array of them answers, counted rather than sorted."""

    below: np.ndarray  # below[j]: how many distances are < j - 1

    @classmethod
    def of(cls, distances: np.ndarray) -> "_Distances":
        return cls(np.concatenate(([0], np.cumsum(np.bincount(distances + 1)))).astype(np.int64))

    def __len__(self) -> int:
        return int(self.below[-1])

    def less_than(self, bound: float | np.ndarray) -> np.ndarray:
        """How many distances are < each bound (an integer is < x exactly when it is < ceil(x))."""
        at = np.ceil(np.asarray(bound, np.float64)).astype(np.int64) + 1
        return self.below[np.clip(at, 0, len(self.below) - 1)]


@dataclass
class SeedCurve:
    """Stack distances of one seed's sample's reads, and of the files' first reads it holds, in
    blocks of the whole trace (sampled distances over the rate; -1: never referenced before):
    what the curve's document is read from (curve_document)."""

    rate: float
    references: int
    distinct: float
    reads: _Distances
    first_reads: _Distances
    block_reads: int         # in the whole trace
    # Per data class code, its sampled block reads and how many of them an earlier reference
    # to the block preceded (a cache holding everything the workload touched serves those);
    # empty where no codes were given (the second sample, which checks the hit fractions alone).
    class_reads: dict[int, tuple[int, int]]

    @classmethod
    def of(cls, keys: np.ndarray, is_read: np.ndarray, code: np.ndarray | None, first_keys: np.ndarray,
           rate: float, block_reads: int) -> "SeedCurve":
        distances = stack_distances(keys)
        read_keys, read_distances = keys[is_read], distances[is_read]
        chosen = member(read_keys, first_keys)
        first = previous_reference(read_keys[chosen]) < 0  # each chosen block's first read
        return cls(rate, len(keys), float((distances < 0).sum()) / rate, _Distances.of(read_distances),
                   _Distances.of(read_distances[chosen][first]), block_reads,
                   {} if code is None else _by_class(code[is_read], read_distances >= 0))

    def hits(self, distances: _Distances, sizes: np.ndarray) -> np.ndarray:
        """How many of `distances` hit in caches of `sizes` blocks: 0 <= d < size x rate."""
        return np.maximum(distances.less_than(sizes * self.rate) - distances.less_than(0), 0)

    def hit_fractions(self, sizes: np.ndarray) -> np.ndarray:
        """The share of the trace's block reads that hit.  A sample holds more or fewer reads
        than the rate says when a block read very often falls in it or out of it; the
        difference is put on the shortest distances, as SHARDS_adj does (most of a hot
        block's reads are short reuses), over the reads the rate expects."""
        expected = self.block_reads * self.rate
        if expected <= 0:
            return np.zeros(len(sizes))
        return np.clip((self.hits(self.reads, sizes) + expected - len(self.reads)) / expected, 0.0, 1.0)


def _by_class(code: np.ndarray, again: np.ndarray) -> dict[int, tuple[int, int]]:
    """Per data class code (NO_CODE left out), how many block reads, and how many of them
    `again` marks: one count of (code + 1, again) pairs, CHUNK_BLOCKS at a time (a count
    widens what it counts to 64 bits)."""
    pairs = np.zeros(0, np.int64)
    for start in range(0, len(code), CHUNK_BLOCKS):
        piece = (code[start:start + CHUNK_BLOCKS].astype(np.int32) + 1) * 2 + again[start:start + CHUNK_BLOCKS]
        counted = np.bincount(piece)
        size = max(len(pairs), len(counted))
        pairs = np.pad(pairs, (0, size - len(pairs))) + np.pad(counted, (0, size - len(counted)))
    pairs = np.pad(pairs, (0, len(pairs) % 2)).reshape(-1, 2)[1:]  # a row per code + 1: NO_CODE's dropped, row c is code c
    return {int(c): (int(pairs[c].sum()), int(pairs[c, 1])) for c in np.flatnonzero(pairs.sum(axis=1))}


def cache_sizes(distinct: float) -> np.ndarray:
    """The cache sizes a curve gives, in blocks: every half octave (1, 2, 2, 3, 4, 5, 8, ...,
    each once) below the working set, and the working set.  The same grid for every trace,
    so two curves (exact and sampled, or two workloads) are read at the same sizes."""
    top = max(int(round(distinct)), 1)
    grid = np.floor(2.0 ** (np.arange(0, 2 * math.log2(top) + 1) / 2)).astype(np.int64)
    return np.unique(np.append(grid[grid < top], top))


def sampling_rate(total: int, *, exact_limit: int = EXACT_LIMIT, budget: int = SAMPLE_BUDGET) -> float:
    """The share of `total` block references a curve keeps: all up to `exact_limit`, else
    about `budget` of them."""
    return 1.0 if total <= exact_limit else budget / total


def reuse_curve(refs: References, *, exact_limit: int = EXACT_LIMIT,
                budget: int = SAMPLE_BUDGET) -> dict[str, object]:
    """Hit fraction of block reads for cache sizes from 1 block to the whole working set:
    exact up to `exact_limit` block references, else from a sample of about `budget`
    (module docstring).  The references are in trace order."""
    total, reads = block_totals(refs)
    rate = sampling_rate(total, exact_limit=exact_limit, budget=budget)
    return curve_of(Sample.of(refs, rate) if total else None, FirstReads.of(refs), total, reads)


def curve_of(sample: Sample | None, first: FirstReads, total: int, reads: int) -> dict[str, object]:
    """The reuse curve's document from a trace's sampled block references (all of them where
    the rate is 1), its files' first reads and its counts of block references and reads: the
    reported seed's curve, checked against the second seed's where the rate is below 1."""
    if total == 0 or sample is None:
        return curve_document(None, None, first, total)
    check = seed_curve(sample.seed(1), first, reads, classes=False) if sample.rate < 1.0 else None
    return curve_document(seed_curve(sample.seed(0), first, reads), check, first, total)


def seeds_at(rate: float) -> int:
    """How many seeds a sample at `rate` holds: the reported one, and where it is a sample
    (below 1) the one that checks it."""
    return 1 if rate >= 1.0 else len(SEEDS)


def seed_curve(sample: Sample, first: FirstReads, reads: int, *, classes: bool = True) -> "SeedCurve":
    """The curve of one seed's references (`sample` holds that seed alone: Sample.seed), put in
    trace order; `reads`: the trace's block reads; `classes`: count its reads by data class too
    (the reported seed; the one that checks it needs only its hit fractions).  Each seed's
    curve is made apart, so that on a cluster two workers make them at once."""
    keys, is_read, code = sample.in_order()[0]
    return SeedCurve.of(keys, is_read, code if classes else None, first.key, sample.rate, reads)


def curve_document(curve: "SeedCurve | None", check: "SeedCurve | None", first: FirstReads,
                   total: int) -> dict[str, object]:
    """The reuse curve's document from the reported seed's curve (None: the trace has no block
    reference) and the checking seed's (None where every reference was kept), the trace's files'
    first reads and its count of block references."""
    if total == 0 or curve is None:
        return {"block_size": BLOCK, "block_reads": 0, "distinct_blocks": 0, "points": []}
    rate, reads = curve.rate, curve.block_reads
    first_keys = first.key
    sizes = cache_sizes(curve.distinct)
    sizes = sizes[(sizes * rate >= 1) | (sizes == sizes[-1])]  # what a sample resolves
    hit = curve.hit_fractions(sizes)
    sampled_first = len(curve.first_reads)
    first_hit = curve.hits(curve.first_reads, sizes) / sampled_first if sampled_first else [None] * len(sizes)
    first_cold = int(curve.first_reads.less_than(0))
    first_reads = len(first_keys)
    body: dict[str, object] = {
        "block_size": BLOCK, "block_reads": reads, "distinct_blocks": int(round(curve.distinct)),
        "cold_misses": int(round(int(curve.reads.less_than(0)) / rate)),
        "first_reads": first_reads,
        "first_reads_cold": int(round(first_cold * first_reads / sampled_first)) if sampled_first else 0,
        "points": [{"cache_blocks": int(s), "cache_bytes": int(s) * BLOCK, "hit_fraction": float(h),
                    "first_read_hit_fraction": None if f is None else float(f)}
                   for s, h, f in zip(sizes, hit, first_hit)],
        CLASS_READS: {str(c): list(counts) for c, counts in sorted(curve.class_reads.items())}}
    if check is not None:
        error = float(np.mean(np.abs(hit - check.hit_fractions(sizes)))) / math.sqrt(2)
        body["sampling"] = {"method": "SHARDS (spatially hashed sampling)", "rate": rate, "block_references": total,
                            "sampled_references": curve.references, "files_first_read_sampled": sampled_first,
                            "hit_fraction_error": error}
    return body

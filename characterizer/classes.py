"""Event classes: what the predictor multiplies by a cost (DESIGN: Prediction).

A data class is (read or write, request-size bucket, order): the bucket is the power of two
at or below the bytes the call moved (0 for a read at end of file), and the order is
sequential (the characterizer's consecutive, sequentiality.py), random, or for reads
forward: past the previous read's end but not at it, as sorted lookups read.  Readahead
treats a forward stream neither like a sequential one nor like random reads, and how it
does differs by filesystem, so fsbench measures it apart.  Its count and bytes are kept, so
the predictor prices each class at its mean request size.  A forward read also keeps the
bytes skipped (gap_bytes) and how many reads followed a gap of each power of two
(gap_log2): what a forward read costs depends on the gaps around it (a short one lands in
the window a consecutive pair started, a long one misses), not on their mean, so the
predictor prices the mix of gaps.  Of those, it counts apart the reads in a stream
(stream_gap_log2: the read before them skipped at most 16 KiB): SQLite's VACUUM walks its
B-tree in page order, 97% of its forward reads a page past a read a page past another, where
a point lookup's short skip follows a long jump, with no stream for readahead to follow.
A sequential read keeps how many of its class came after other calls by the same actor
since the previous read of its run (interleaved): tar
reads its archive 10 KiB at a time between the files it writes, and readahead brings the
next reads in meanwhile, where grep reads a file's chunks back to back.  It keeps, too, how
many resumed a stream (resumes): came right after a read of the same file that skipped
ahead or back, as SQLite reads the next page after a lookup's leaf.  Those follow no run of
reads readahead could have grown along: on btrfs each is a read from the device (random-
reads' 307 cost 75-88 us each cold, against 16-19 on ext4 and xfs), where a
read in a long sequential stream costs a few.  A read or write class also
keeps how many of its calls straddle a page boundary they need not have (straddles): a
request that touches one page more than an aligned one of its length would.  SQLite's
journal records are a 4-byte page number, the 4 KiB page, a 4-byte checksum, so every
page it journals is written across two pages: on btrfs such a write costs 8.8 us where an
aligned one costs 3.9 (fsbench's write at d+1 and at d), and sqlite's writes
replayed there took 0.30 s where the aligned price made them 0.19.  An in-kernel copy
(copy_file_range) is a write event, but its class is "copy": a filesystem that shares
extents clones it instead of reading and writing the bytes, so it is priced by fsbench's
copy, not its write.  A file mapping read through page faults (mapped.py) is a class of
its own, "mmap": no read call shows those bytes, and each region is read as one random
request of its length.  A metadata class is an
operation with its outcome: done, failed (a failed lookup still walks the path), or, for
readdir, the empty call that ends a listing (a getdents that returned no bytes; an NFS
READDIR is a listing, never its end).  Listings keep the bytes of entries they returned
(listed_bytes; for NFS, what a getdents64 would return for the names the reply lists): a
listing costs by its entries.  Stats keep how many were of entries a listing returned
with their attributes (listed: an NFS READDIRPLUS's, one event each), and those files by
power of two of their bytes (listed_log2): a server reads each entry's inode in the
listing's order, and what that costs depends on what lies beside the inodes (on btrfs a
small file's data does).  Creates also keep how many of the files they
made were then written (not copied into) and the bytes written into them: on btrfs a
create among files holding unwritten data waits for some of it to be written out (fsbench's
create_written), so it costs several times an empty create.  What it waits for depends on
the mix of sizes around it, not on their mean alone, so the files are kept by power of two
of their bytes too (written_log2, with each bucket's bytes), as the unlinks of files holding
data keep the bytes each held (data_log2).  Of those, the files renamed once written (rsync
and git write under a temporary name, then rename into place) are counted again ("renamed",
renamed_log2), and so are their renames (the rename class's "written", written_log2): on
btrfs such a rename starts writing the file's data out, and the wait moves from the creates
to the renames (fsbench's create_renamed_mix and rename_written_mix).  Of the others, the
files synced once written are counted again too ("synced", synced_log2): SQLite makes,
writes, syncs and removes its journal in every transaction, and a later create has none of
that data to wait for.  Each create makes a file of its own: a name made anew is counted
once each time, with the bytes written into it then.

A write class keeps how many of its writes went into files the workload had created
(into_created), other than those that rewrote such a file in place (in_place.py): writing a
file just made sets up its first pages, blocks and size anew, and
on tmpfs tar's writes into the files it unpacked cost twice what appends to one long file
of the same sizes do (fsbench's write_new_mix prices them).

A read or mapped-region class keeps the share of its block reads that an earlier reference
to the block preceded (reread_fraction, from the reuse curve's sample, reuse.py): a program
that reads its libraries again and again and then a large file once at random hits the page
cache on the first and misses on the second, where the workload's hit fraction, spread over
both, would have each hit as often.

Every class, data or metadata, keeps how many of its calls the trace timed ("timed": strace
-T, an NFS reply) and their summed durations ("dur_ns"): what the calls cost where they were
traced, tracing's own share included (under strace 15-100 us a call here), which the prediction
sets beside what the traced candidate's cost table makes of them.

Counts add, so classes merge like every other part of a profile (partial.py).
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from fsbm.characterizer.arrays import COSTED_OPERATIONS, MISSING, OP_INDEX, EventArrays, access_lengths, present
from fsbm.characterizer.histograms import bit_lengths
from fsbm.characterizer.kernels import library
from fsbm.characterizer.mapped import Regions
from fsbm.characterizer.sequentiality import Access
from fsbm.traces.vocabulary import COPY_CALLS, LISTED_ENTRY_ORIG
from fsbm.units import to_figures

if TYPE_CHECKING:
    from fsbm.characterizer.partial import OpStats

DATA_OPERATIONS = ("read", "write")
# The data classes: the data operations, the in-kernel copies among the writes, and the
# regions read through file mappings (mapped.py).
ACCESS_CLASSES = ("read", "write", "copy")
MAPPED_CLASS = "mmap"
DATA_CLASSES = (*ACCESS_CLASSES, MAPPED_CLASS)
# The page cache's unit, which a straddling request crosses once more than it must.  The
# characterizer knows no filesystem; on the ones fsbm measures the block is the page, and
# fsbench's d-1, d and d+1 sizes measure the same boundary (pricing.Pricer.straddle).
PAGE_BYTES = 4096

def size_bucket(length: np.ndarray) -> np.ndarray:
    """The power of two at or below each length; 0 for 0."""
    return _bucket_of(bit_lengths(length))


def _bucket_of(lengths: np.ndarray) -> np.ndarray:
    """The power of two of each bit length (0 for 0): the size bucket of values that long."""
    lengths = np.asarray(lengths, np.int64)
    return np.where(lengths > 0, np.left_shift(1, np.maximum(lengths - 1, 0)), 0)


def _by_power_of_two(by_bit_length: np.ndarray) -> dict[str, int]:
    """Counts kept by bit length as a profile keeps them: {power of two: count}, the nonzero."""
    return {str(int(_bucket_of(g))): int(by_bit_length[g]) for g in np.flatnonzero(by_bit_length)}


def _copies(ev: EventArrays, rows: np.ndarray) -> np.ndarray:
    """Which of the accesses at `rows` are in-kernel copies."""
    return copy_calls(ev)[ev.orig[rows]]


def copy_calls(ev: EventArrays) -> np.ndarray:
    """Per original call, whether it is an in-kernel copy."""
    return np.array([name in COPY_CALLS for name in ev.origs] or [False], np.bool_)


BITS = 65  # bit lengths 0..64: the size buckets a class can have
ORDERS = ("sequential", "forward", "random")


def by_size_bucket(length: np.ndarray, **summed: np.ndarray) -> dict[str, dict[str, int]]:
    """{bucket: {count, bytes, and each of `summed` added up}} of `length`, by the power of
    two at or below each length (size_bucket)."""
    bucket = bit_lengths(length)
    counts = np.bincount(bucket, minlength=BITS)
    sums = {"bytes": np.bincount(bucket, weights=length, minlength=BITS),
            **{name: np.bincount(bucket, weights=values, minlength=BITS) for name, values in summed.items()}}
    return {str(int(_bucket_of(b))): {"count": int(counts[b]), **{name: int(total[b]) for name, total in sums.items()}}
            for b in np.flatnonzero(counts)}


# An access's class code (characterizer/native/classes.c): (class, order, bit length of its
# size); a mapped region's comes after every access's, by the bit length of its length.
ACCESS_CODES = len(ACCESS_CLASSES) * len(ORDERS) * BITS


def class_of_code(code: int) -> tuple[str, str, str]:
    """(class, order, size bucket) of a class code: the keys of its entry in the profile's
    data classes."""
    if code >= ACCESS_CODES:
        return MAPPED_CLASS, "random", str(int(_bucket_of(code - ACCESS_CODES)))
    return (ACCESS_CLASSES[code // BITS // len(ORDERS)], ORDERS[code // BITS % len(ORDERS)],
            str(int(_bucket_of(code % BITS))))


def mapped_codes(mapped: Regions) -> np.ndarray:
    """The class code of each mapped region."""
    return (ACCESS_CODES + bit_lengths(mapped.length)).astype(np.int16)


def data_classes(ev: EventArrays, acc: Access, mapped: Regions,
                 codes: np.ndarray | None = None) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """{class: {"sequential"|"forward"|"random": {bucket: {"count", "bytes"[, "straddles"]
    [, "gap_bytes", "gap_log2"[, "stream_gap_log2"]][, "interleaved", "resumes"]}}}}
    over the classified accesses and the mapped regions; copies are always "sequential" (a
    copy moves a whole file, or the rest of it), only reads are ever "forward" (a write past
    the last one's end allocates or rewrites the same way wherever it lands), and mapped
    regions are "random" (each read around its first fault, mapped.py).  A straddling
    request touches more pages than an aligned request of its length would (a 4096-byte
    write at offset 516 touches two, one at 8192 one).  Every access gets one code, (class,
    order, bit length of its size), and the sums per code are one pass in C
    (characterizer/native/classes.c).  `codes`, where given (one int16 per event, reuse.NO_CODE
    before), gets each classified access's code at its row (class_of_code reads it)."""
    out: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    if len(mapped):
        out[MAPPED_CLASS] = {"random": by_size_bucket(mapped.length)}
    if not len(acc.index):
        return out
    size = len(ACCESS_CLASSES) * len(ORDERS) * BITS
    count, nbytes, timed, timed_ns, straddled, interleaved, resumes, gap_bytes = (np.zeros(size, np.int64)
                                                                                 for _ in range(8))
    gap_log2, stream_gap_log2 = np.zeros(size * BITS, np.int64), np.zeros(size * BITS, np.int64)
    copy_orig = copy_calls(ev)
    flags = np.ascontiguousarray(acc.flags, np.uint8)
    rows, gap = np.ascontiguousarray(acc.index, np.int64), np.ascontiguousarray(acc.gap, np.int64)
    op, orig = np.ascontiguousarray(ev.op, np.int8), np.ascontiguousarray(ev.orig, np.int32)
    offset, length, ret, dur = (np.ascontiguousarray(a, np.int64) for a in (ev.offset, ev.size, ev.ret, ev.dur))
    library().fsbm_data_classes(
        len(rows), rows.ctypes.data, flags.ctypes.data, gap.ctypes.data, op.ctypes.data,
        OP_INDEX["read"], orig.ctypes.data, copy_orig.ctypes.data, offset.ctypes.data, length.ctypes.data,
        ret.ctypes.data, dur.ctypes.data, PAGE_BYTES,
        *(a.ctypes.data for a in (count, nbytes, timed, timed_ns, straddled, interleaved, resumes, gap_bytes,
                                  gap_log2, stream_gap_log2)),
        None if codes is None else _out_codes(codes, ev.n).ctypes.data)
    for c in np.flatnonzero(count):
        cls, rank, bucket = class_of_code(int(c))
        entry = {"count": int(count[c]), "bytes": int(nbytes[c])}
        if timed[c]:
            entry.update(timed=int(timed[c]), dur_ns=int(timed_ns[c]))
        if cls != "copy" and straddled[c]:
            entry["straddles"] = int(straddled[c])
        if cls == "read" and rank == "sequential":
            entry.update(interleaved=int(interleaved[c]), resumes=int(resumes[c]))
        if rank == "forward":
            entry["gap_bytes"] = int(gap_bytes[c])
            entry["gap_log2"] = _by_power_of_two(gap_log2[c * BITS:(c + 1) * BITS])
            in_stream = _by_power_of_two(stream_gap_log2[c * BITS:(c + 1) * BITS])
            if in_stream:
                entry["stream_gap_log2"] = in_stream
        out.setdefault(cls, {}).setdefault(rank, {})[bucket] = entry
    return out


READ_CLASSES = ("read", MAPPED_CLASS)  # the classes a page cache serves: reads and mapped regions


def with_reread_fractions(classes: dict, class_reads: dict[str, list[int]]) -> dict:
    """`classes` whose read and mapped-region entries each say what share of their block
    reads an earlier reference to the block preceded ("reread_fraction", from the reuse
    curve's sample: reuse.CLASS_READS): what a cache holding everything the workload touched
    serves of that class, where the curve's hit fraction tells it of the workload's reads all
    together.  An entry the sample holds no block read of says nothing."""
    data = dict(classes.get("data", {}))
    for cls in READ_CLASSES:  # the classes it writes into are copied; the rest are shared
        if cls in data:
            data[cls] = {order: {bucket: dict(entry) for bucket, entry in buckets.items()}
                         for order, buckets in data[cls].items()}
    for code, (reads, repeated) in class_reads.items():
        cls, order, bucket = class_of_code(int(code))
        entry = data.get(cls, {}).get(order, {}).get(bucket)
        if entry is not None and cls in READ_CLASSES and reads:
            entry["reread_fraction"] = repeated / reads
    return {**classes, "data": data}


def _out_codes(codes: np.ndarray, n: int) -> np.ndarray:
    """`codes`, checked to be what the C pass may write into: one int16 per event, contiguous."""
    if codes.dtype != np.int16 or len(codes) != n or not codes.flags.c_contiguous:
        raise ValueError("codes: one contiguous int16 per event")
    return codes


def size_buckets(sizes: np.ndarray) -> dict[str, dict[str, int]]:
    """Files by power of two of their bytes: {lowest bytes of the bucket (0 for empty files):
    {"files", "bytes"}}.  Counts add, so buckets of parts merge (fsbm/counts.py)."""
    sizes = np.asarray(sizes, np.int64)
    if not len(sizes):
        return {}
    keys, index = np.unique(size_bucket(sizes), return_inverse=True)
    files = np.bincount(index)
    nbytes = np.bincount(index, weights=sizes.astype(np.float64))
    return {str(int(k)): {"files": int(f), "bytes": int(round(b))} for k, f, b in zip(keys, files, nbytes)}


def _done_on_files(ev: EventArrays, op: str) -> np.ndarray:
    """The successful calls of `op` on a known file: their event indices."""
    return np.flatnonzero((ev.op == OP_INDEX[op]) & ~ev.failed & (ev.file >= 0))


class _Made(NamedTuple):
    """The successful creates as _incarnation searches them: each one's key, its file id
    times `span` plus its sequence number, ascending.  `span` is a power of two above every
    sequence number of the events, so one int64 orders the keys by file, then by trace
    order (files up to 2^63 / span)."""

    keys: np.ndarray
    span: np.int64

    @classmethod
    def of(cls, ev: EventArrays) -> "_Made":
        top = int(ev.seq.max()) + 1 if ev.n else 1
        span = np.int64(1) << np.int64(top.bit_length())
        made = _done_on_files(ev, "create")
        return cls(np.sort(ev.file[made].astype(np.int64) * span + ev.seq[made].astype(np.int64)), span)


def _incarnation(ev: EventArrays, rows: np.ndarray, made: _Made) -> np.ndarray:
    """For each event of `rows`, which file a create made it lands in: the index (into
    `made.keys`) of the last successful create of its name before it, -1 where none came
    before.  A name made anew (SQLite makes its journal anew in every transaction, git its
    index.lock at each update) is a new file each time."""
    if not len(rows) or not len(made.keys):
        return np.full(len(rows), -1, np.int64)
    files = ev.file[rows].astype(np.int64)
    at = np.searchsorted(made.keys, files * made.span + ev.seq[rows].astype(np.int64), side="left") - 1
    found = at >= 0
    found[found] = made.keys[at[found]] // made.span == files[found]
    return np.where(found, at, -1)


def _writes_into_created(ev: EventArrays) -> tuple[np.ndarray, np.ndarray, _Made]:
    """The successful writes (not in-kernel copies) into a file a successful create made
    before them: their event indices, the file each landed in (_incarnation), and the
    creates (_Made)."""
    made = _Made.of(ev)
    if not len(made.keys):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), made
    writes = _done_on_files(ev, "write")
    writes = writes[~_copies(ev, writes)]
    made_by = _incarnation(ev, writes, made)
    into = made_by >= 0
    return writes[into], made_by[into], made


class CreatedFiles(NamedTuple):
    """The files a workload created and then wrote (created_files_written), each summed as
    size_buckets sums files, or as by_size_bucket sums writes."""

    written: dict[str, dict[str, int]]  # the files, by the bytes written into each
    writes: dict[str, dict[str, int]]   # the writes into them, by size bucket
    renamed: dict[str, dict[str, int]]  # of the files, those renamed into place once written
    synced: dict[str, dict[str, int]]   # of the others, those synced once written


def created_files_written(ev: EventArrays, in_place: np.ndarray | None = None) -> CreatedFiles:
    """The writes (not in-kernel copies) into files a successful create made, after it, found
    once and summed four ways: the files they wrote (each create's file apart, so a name
    made anew is counted once each time), by the bytes written into each (size_buckets: the
    creates' "written_log2"); the writes themselves, by size bucket as the data classes
    bucket them ({bucket: {"count", "bytes"}}: the writes' "into_created"); those of the
    files then renamed (a successful rename of the file after its last write, as rsync and
    git put a file into place), by the bytes written into each (the creates'
    "renamed_log2", the renames' "written_log2"); and of the others, those synced after
    their last write (SQLite's journal: made, written, synced, removed), by the same (the
    creates' "synced_log2"): such a file holds no dirty data for a later create to wait for.
    The writes `in_place` marks (one flag per event: in_place.in_place_writes) rewrote a file
    already set up, and are left out of "into_created"; the bytes written into each file
    count them."""
    rows, made_by, made = _writes_into_created(ev)
    if not len(rows):
        return CreatedFiles({}, {}, {}, {})
    files = len(made.keys)
    lengths = access_lengths(ev, rows)
    per_file = np.bincount(made_by, weights=lengths.astype(np.float64), minlength=files)
    written = present(made_by, files)
    bytes_written = np.rint(per_file).astype(np.int64)
    last_write = np.full(files, -1, np.int64)
    np.maximum.at(last_write, made_by, ev.seq[rows].astype(np.int64))
    renamed = written & _after_last_write(ev, "rename", last_write, made)
    synced = written & ~renamed & _after_last_write(ev, "fsync", last_write, made)
    setting_up = lengths if in_place is None else lengths[~in_place[rows]]
    return CreatedFiles(size_buckets(bytes_written[written]), by_size_bucket(setting_up),
                        size_buckets(bytes_written[renamed]), size_buckets(bytes_written[synced]))


def _after_last_write(ev: EventArrays, op: str, last_write: np.ndarray, made: _Made) -> np.ndarray:
    """Per file a create made (in the order of `made.keys`), whether a successful call of
    `op` on it (a rename: on its source name; either before the name was made anew) came
    after its `last_write` (a sequence number, -1 where it was not written)."""
    calls = _done_on_files(ev, op)
    of = _incarnation(ev, calls, made)
    calls, of = calls[of >= 0], of[of >= 0]
    after = (ev.seq[calls].astype(np.int64) > last_write[of]) & (last_write[of] >= 0)
    found = np.zeros(len(made.keys), bool)
    found[of[after]] = True
    return found


def with_created_writes(data: dict[str, dict], created: dict[str, dict[str, int]]) -> dict[str, dict]:
    """The data classes with each write bucket's "into_created": how many of its writes went
    into a file the workload created (created_files_written).  Those writes come in order from a
    file's start, so they are counted against the bucket's sequential writes first, those that
    did not rewrite in place ("in_place", in_place.with_rewrites), and only the rest against
    its random ones."""
    writes = data.get("write")
    if not writes or not created:
        return data
    out = {order: dict(buckets) for order, buckets in writes.items()}
    for bucket, counts in created.items():
        left = counts["count"]
        for order in ("sequential", "random"):
            entry = out.get(order, {}).get(bucket)
            if entry is None:
                continue
            taken = min(left, entry["count"] - entry.get("in_place", 0))
            out[order][bucket] = {**entry, "into_created": taken}
            left -= taken
    return {**data, "write": out}


def with_unlinked_data(classes: dict, sizes: np.ndarray) -> dict:
    """The classes with the unlinks of files that held data counted (with_data), their bytes
    (data_bytes) and the files by power of two of their bytes (data_log2): such an unlink
    frees blocks and cached pages too, and costs twice an empty file's or more (fsbench's
    unlink_written)."""
    unlink = classes.get("metadata", {}).get("unlink")
    if not unlink:
        return classes
    held = sizes[sizes > 0]
    done = unlink["done"]
    counted = {**unlink, "with_data": min(int(len(held)), done), "data_bytes": int(held.sum()),
               "data_log2": size_buckets(held)}
    return {**classes, "metadata": {**classes["metadata"], "unlink": counted}}


# The calls whose result is the bytes of directory entries they returned: 0 ends a listing.
LISTING_CALLS = ("getdents", "getdents64")


def _of_calls(ev: EventArrays, op: str, calls: tuple[str, ...]) -> np.ndarray:
    """Which events are of operation `op` and were traced as one of `calls` (their orig)."""
    ids = [i for i, name in enumerate(ev.origs) if name in calls]
    if not ids:
        return np.zeros(ev.n, bool)
    return (ev.op == OP_INDEX[op]) & np.isin(ev.orig, ids)


def _ended_listings(ev: EventArrays) -> np.ndarray:
    """Which events are the empty getdents that ends a listing.  Only a system call's result
    is the bytes listed with nothing more to list: an NFS READDIR's is the bytes its reply's
    names come to (traces/nfs.py; 0 for every one in captures parsed before that), and it is
    a listing, never its end."""
    return _of_calls(ev, "readdir", LISTING_CALLS) & (ev.ret == 0)


def metadata_classes(ev: EventArrays, ops: dict[str, OpStats]) -> dict[str, dict[str, int]]:
    """{op: {"done", "failed", "empty"}} for every priced operation that is not a data access
    (readdir adds "listed_bytes", the bytes of entries its calls returned, which the
    predictor prices a listing by); reads and writes appear here only for their failures.
    `ops`: the events' statistics per operation (partial.OpStats), whose counts and
    durations these are.  The creates' "written" depends on every actor's writes to the
    files, and is added by with_written_creates."""
    out: dict[str, dict[str, int]] = {}
    for name in COSTED_OPERATIONS:
        stats = ops.get(name)
        if stats is None:
            continue
        if name in DATA_OPERATIONS:
            if stats.failed:
                out[name] = {"done": 0, "failed": stats.failed, "empty": 0}
            continue
        empty = int(_ended_listings(ev).sum()) if name == "readdir" else 0
        out[name] = {"done": stats.count - stats.failed - empty, "failed": stats.failed, "empty": empty}
        latency = stats.latency
        if latency.n:  # a damaged capture's reply can come "before" its call: counted as 0
            out[name].update(timed=latency.n, dur_ns=int((np.maximum(latency.values, 0) * latency.counts).sum()))
    if "readdir" in out:
        listed = (ev.op == OP_INDEX["readdir"]) & (ev.ret > 0)
        if listed.any():
            out["readdir"]["listed_bytes"] = int(ev.ret[listed].sum())
    if "unlink" in out and (by_directory := unlinks_by_directory(ev)):
        out["unlink"][IN_DIRECTORY] = by_directory
    entries = _of_calls(ev, "stat", (LISTED_ENTRY_ORIG,))  # sized by the file's bytes, where known
    if "stat" in out and entries.any():
        sizes = ev.size[entries]
        out["stat"].update(listed=int(entries.sum()), listed_log2=size_buckets(sizes[sizes != MISSING]))
    return out


# The unlinks by the directory each was made in, as the parts of a trace count them and add
# them up (metadata_classes); the profile keeps only how many directories saw how many
# (with_directory_unlinks), not their names.
IN_DIRECTORY = "in_directory"


def unlinks_by_directory(ev: EventArrays) -> dict[str, int]:
    """The successful unlinks of named files, by the directory each was made in."""
    done = (ev.op == OP_INDEX["unlink"]) & ~ev.failed & (ev.file >= 0)
    files, counts = np.unique(ev.file[done], return_counts=True)
    out: dict[str, int] = {}
    for file, n in zip(files.tolist(), counts.tolist()):
        name = ev.files[file]
        if name and not name.startswith("?"):
            directory = posixpath.dirname(name)
            out[directory] = out.get(directory, 0) + n
    return out


def directory_size(unlinks: int) -> int:
    """A directory's unlinks as the profile counts directories by them: to two figures (a
    directory emptied of 17,888 files is one of 18,000), so that a tree's directories fall
    into a few sizes, each a case fsbench can measure."""
    return to_figures(unlinks, 2)


def with_directory_unlinks(classes: dict) -> dict:
    """The classes with the unlinks' directories (IN_DIRECTORY, by name) replaced by how many
    directories saw how many unlinks (directory_unlinks: {unlinks, to two figures: directories}).
    An unlink costs xfs more in a large directory (fsbench's unlink_entries), and rm -rf
    empties each directory it lists; the names say nothing more and would make the profile
    as large as the tree."""
    unlink = classes.get("metadata", {}).get("unlink")
    if not unlink or IN_DIRECTORY not in unlink:
        return classes
    sizes: dict[str, int] = {}
    for n in unlink[IN_DIRECTORY].values():
        key = str(directory_size(n))
        sizes[key] = sizes.get(key, 0) + 1
    counted = {k: v for k, v in unlink.items() if k != IN_DIRECTORY}
    return {**classes, "metadata": {**classes["metadata"], "unlink": {**counted, "directory_unlinks": sizes}}}


def with_written_creates(classes: dict[str, dict], created: CreatedFiles) -> dict[str, dict]:
    """The metadata classes with the creates' "written", "written_bytes" and "written_log2",
    of them those renamed into place ("renamed", "renamed_bytes", "renamed_log2") and those
    synced once written ("synced", "synced_bytes", "synced_log2"), and the renames of the
    renamed files counted as the renames' "written", "written_bytes" and "written_log2"
    (created_files_written)."""
    if "create" not in classes:
        return classes

    def counted(entry: dict, key: str, buckets: dict[str, dict[str, int]]) -> dict:
        files = sum(b["files"] for b in buckets.values())
        return {**entry, key: min(files, entry["done"]), f"{key}_bytes": sum(b["bytes"] for b in buckets.values()),
                f"{key}_log2": buckets}

    out = {**classes, "create": counted(classes["create"], "written", created.written)}
    if created.renamed:
        out["create"] = counted(out["create"], "renamed", created.renamed)
        if "rename" in out:
            out["rename"] = counted(out["rename"], "written", created.renamed)
    if created.synced:
        out["create"] = counted(out["create"], "synced", created.synced)
    return out
